"""What every figure shares: the resolution, the ``--size WxH`` text, the file name a title shows."""

from __future__ import annotations

from pathlib import Path

__all__ = ["DPI", "parse_size", "title_name"]

#: Pixels per inch of every PNG (matplotlib's and the raster's): a ``--size`` of W x H pixels is W/DPI x H/DPI inches.
DPI = 100


def parse_size(text: str) -> tuple[int, int]:
    """Parse ``WxH`` in pixels (e.g. ``1200x600``); ParameterError naming ``--size`` for bad text or range."""
    from ..errors import ParameterError

    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ParameterError(f"--size: invalid size {text!r}: use WIDTHxHEIGHT in pixels, e.g. 1200x600") from None
    if not (200 <= width <= 20000 and 150 <= height <= 20000):
        raise ParameterError(f"--size: {text!r} out of range (width 200..20000, height 150..20000 pixels)")
    return width, height


#: Code points below this are drawn by the figures' font (DejaVu Sans: Latin, Greek, Cyrillic, ...); others
#: (CJK, emoji) would come out as empty boxes, so they are written as escapes instead.
_FONT_COVERAGE_END = 0x2000


def title_name(path: str) -> str:
    """The file name as a figure title shows it: ``stdin`` for ``-``; characters the font lacks as ``\\uXXXX``."""
    if path == "-":
        return "stdin"
    name = Path(path).name
    return "".join(c if ord(c) < _FONT_COVERAGE_END else c.encode("ascii", "backslashreplace").decode() for c in name)

"""The PNG of a ``spectrogram``/``mel`` job: dB conversion of the pooled display image, title, axes, ticks."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from ..errors import ParameterError
from ..io import write_bytes_atomic

if TYPE_CHECKING:
    from ..dsp.mel import MelScale
    from ..dsp.scaling import Kind

__all__ = ["check_cmap", "draw_timefreq", "mel_ticks", "panels", "title_name"]

#: Round frequencies (Hz) labelled on a mel image's y axis when they fall inside [fmin, fmax].
MEL_TICK_HZ = (50, 100, 200, 300, 500, 1000, 2000, 3000, 4000, 6000, 8000, 12000, 16000, 20000)


def mel_ticks(n_mels: int, fmin: float, fmax: float, mel_scale: str) -> tuple[list[float], list[str]]:
    """Positions (fractional band index) and labels of :data:`MEL_TICK_HZ` on a mel image's y axis.

    Band ``b`` (0-based) is centred at mel ``m_lo + (b + 1)·(m_hi - m_lo)/(n_mels + 1)``,
    so a frequency ``f`` sits at ``(mel(f) - m_lo)/(m_hi - m_lo)·(n_mels + 1) - 1``.
    """
    from ..dsp.mel import hz_to_mel

    scale = cast("MelScale", mel_scale)
    m_lo, m_hi = hz_to_mel(fmin, scale=scale), hz_to_mel(fmax, scale=scale)
    positions, labels = [], []
    for hz in MEL_TICK_HZ:
        if fmin <= hz <= fmax:
            frac = (hz_to_mel(hz, scale=scale) - m_lo) / (m_hi - m_lo)
            positions.append(float(frac * (n_mels + 1) - 1))
            labels.append(f"{hz // 1000}k" if hz >= 1000 and hz % 1000 == 0 else str(hz))
    return positions, labels


#: Most channels drawn in one PNG (one panel each); a file with more draws its first ones and says so.
MAX_PANELS = 8
#: Pixels of figure height each panel needs for its labels not to overlap; a taller --size is kept.
PANEL_HEIGHT = 150
#: Height (pixels) of the title and time axis around the panels.
FRAME_HEIGHT = 100


def panels(items: list[Any], size: tuple[int, int], name: str) -> tuple[list[Any], tuple[int, int]]:
    """The channels to draw (at most :data:`MAX_PANELS`, with a warning naming them) and the figure size.

    The height grows to ``FRAME_HEIGHT + PANEL_HEIGHT·panels`` when ``size`` is shorter, so labels stay readable
    (128 channels used to take over a minute to squeeze into 600 pixels, unreadably).
    """
    if len(items) > MAX_PANELS:
        warnings.warn(
            f"{name}: drawing channels 0-{MAX_PANELS - 1} of {len(items)} in the PNG (--mix draws their average; the "
            ".npy holds every channel)",
            stacklevel=3,
        )
        items = items[:MAX_PANELS]
    if len(items) > 1:
        size = (size[0], max(size[1], FRAME_HEIGHT + PANEL_HEIGHT * len(items)))
    return items, size


#: Code points below this are drawn by the figures' font (DejaVu Sans: Latin, Greek, Cyrillic, ...); others
#: (CJK, emoji) would come out as empty boxes, so they are written as escapes instead.
_FONT_COVERAGE_END = 0x2000


def title_name(path: str) -> str:
    """The file name as a figure title shows it: ``stdin`` for ``-``; characters the font lacks as ``\\uXXXX``."""
    if path == "-":
        return "stdin"
    name = Path(path).name
    return "".join(c if ord(c) < _FONT_COVERAGE_END else c.encode("ascii", "backslashreplace").decode() for c in name)


def check_cmap(name: str) -> None:
    """Refuse an unknown ``--cmap`` before any work (ParameterError listing matplotlib's names).

    The default ``magma`` needs no matplotlib (the raster is drawn without it); any other name loads it.
    """
    if name == "magma":
        return
    from matplotlib import colormaps

    if name not in colormaps:
        known = ", ".join(sorted(n for n in colormaps if not n.endswith("_r")))
        raise ParameterError(f"--cmap: unknown colormap {name!r}; matplotlib has: {known} (and each name + '_r')")


def draw_timefreq(
    png_path: str,
    options: Any,
    *,
    source_name: str,
    plan: Any,
    poolers: list[Any],
    kind: Kind,
    ref: float | Literal["max"],
    row_freqs: np.ndarray,
    mel_meta: dict[str, Any],
    size: tuple[int, int],
) -> None:
    """Render the pooled image(s) as dB (re ``ref``, clipped at ``options.top_db``) and write the PNG atomically."""
    from .. import rasterplot
    from ..dsp.scaling import to_db

    def render(images: np.ndarray, **kwargs: Any) -> bytes:
        if rasterplot.available():  # numpy + Pillow: no matplotlib import (issue 13)
            try:
                return rasterplot.spectrogram_png(images, **kwargs)
            except rasterplot.LayoutError:  # many channels in a small --size: matplotlib squeezes them
                pass
        from ..plot import png_bytes, spectrogram_figure

        return png_bytes(spectrogram_figure(images, **kwargs))

    total = len(poolers)
    poolers, size = panels(poolers, size, source_name)
    stacked = poolers[0].image[None] if len(poolers) == 1 else np.stack([p.image for p in poolers])
    top = options.top_db if options.top_db > 0 else None
    db = to_db(stacked, kind=kind, ref=ref, top_db=top)
    n_frames = poolers[0].edges[-1]
    centres = plan.times(int(n_frames), where="centre") if n_frames else np.zeros(1)
    half = plan.hop_length / plan.sr / 2
    t0, t1 = float(centres[0] - half), float(centres[-1] + half)
    name = title_name(source_name)
    title = (
        f"{name} — {options.kind}, sr {plan.sr} Hz, win {plan.win_length} ({1000 * plan.win_length / plan.sr:g} ms), "
        f"hop {plan.hop_length} ({1000 * plan.hop_length / plan.sr:g} ms), n_fft {plan.n_fft}, {plan.window_spec}"
        + (", centred" if plan.center else "")
        + (f", channel {options.channel}" if options.channel is not None else "")
        + (f", channels 0-{len(poolers) - 1} of {total}" if len(poolers) < total else "")
    )
    ref_label = "dB re max" if ref == "max" else f"dB re {ref:g}"
    if options.kind == "mel":
        title += f", {mel_meta['n_mels']} mel ({mel_meta['mel_scale']})"
        ticks = mel_ticks(mel_meta["n_mels"], mel_meta["fmin_hz"], mel_meta["fmax_hz"], mel_meta["mel_scale"])
        png = render(
            db,
            t_start=t0,
            t_end=t1,
            f_low=-0.5,
            f_high=mel_meta["n_mels"] - 0.5,
            title=title,
            colorbar_label=ref_label,
            cmap=options.cmap,
            size=size,
            mel_ticks=ticks,
            ylabel="frequency (Hz, mel-spaced)",
        )
    else:
        df = plan.delta_f
        png = render(
            db,
            t_start=t0,
            t_end=t1,
            f_low=float(row_freqs[0] - df / 2),
            f_high=float(row_freqs[-1] + df / 2),
            title=title,
            colorbar_label=ref_label,
            cmap=options.cmap,
            size=size,
        )
    write_bytes_atomic(png_path, png)

"""Time-frequency PNGs drawn with numpy and Pillow: no matplotlib import (start-up cost, issue 13).

``spectrogram``/``mel``/``mfcc`` PNGs are an image plus axes, ticks, labels, a title and a colorbar.  Importing
matplotlib alone costs about 3x ``import numpy`` -- more than a 12 s file's whole job -- so this module
draws the same figure directly: the layout of matplotlib's constrained layout at 100 dpi (DejaVu Sans
10 pt, outward ticks 3.5 pt, "nice" tick steps 1/2/2.5/5 like ``MaxNLocator``, Unicode minus signs), the
colormap's 256-entry table (``magma`` and ``RdBu_r`` are built in; any other name is looked up in matplotlib,
which is then imported), and the image at the axes' exact pixel size: the cells (columns with their time
edges, rows with their frequency or band edges, on a linear or log axis) are max-pooled onto the pixels (a
narrow line or a short click is never dropped) or repeated up to them (:func:`~audiokit.plot.axes.pool_cells`).

:func:`figure_layout` is the layout step: every text with its pixel box, every tick with its pixel, the
panels and the colorbar, for an image exactly ``size`` pixels whatever the channel count (panels share the
height).  Tick labels are thinned until no two boxes overlap and none leaves the canvas; the title wraps at
its commas.  :func:`spectrogram_png` draws that layout and encodes the PNG once, zlib level 1.

:func:`audiokit.plot.figure.spectrogram_figure` still returns a matplotlib Figure of the same picture for
library use; :func:`audiokit.plot.timefreq.render_timefreq` picks between the two.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .axes import Axis, integer_ticks, log_ticks, nice_ticks, pool_cells, tick_label
from .layout import DPI
from .picture import TimeFreqPicture, as_panels

__all__ = ["FigureLayout", "LayoutError", "Text", "available", "colormap_lut", "figure_layout", "nice_ticks", "spectrogram_png"]

PT = DPI / 72  # pixels per point
FONT_PX = 10 * PT  # rcParams font.size 10 pt
TICK_LEN = 3.5 * PT
TICK_PAD = 3.5 * PT
LABEL_PAD = 4 * PT
TITLE_PAD = 6 * PT
EDGE_PAD = 3 * PT  # constrained layout's padding at the figure edge and between panels

#: matplotlib's ``magma`` (``colormaps["magma"](range(256), bytes=True)``), RGB, 256 entries.
_MAGMA = bytes.fromhex(
    "00000300000400000601000701010901010b02020d02020f03031104031304041505041706051907051b08061d09071f"
    "0a07220b08240c09260d0a280e0a2a0f0b2c100c2f110c31120d33140d35150e38160e3a170f3c180f3f1a10411b1044"
    "1c10461e10491f114b20114d2211502311522511552611572811592a115c2b115e2d10602f1062301065321067341068"
    "350f6a370f6c390f6e3b0f6f3c0f713e0f72400f73420f74430f75450f76470f774810784a10794b10794d117a4f117b"
    "50127b52127c53137c55137d57147d58157e5a157e5b167e5d177e5e177f60187f61187f63197f651a80661a80681b80"
    "691c806b1c806c1d806e1e816f1e81711f81731f817420817621817721817922817a22817c23817e24817f2481812581"
    "8225818426818526818727818928818a28818c29808d29808f2a80912a80922b80942b80952c80972c7f992d7f9a2d7f"
    "9c2e7f9e2e7e9f2f7ea12f7ea3307ea4307da6317da7317da9327cab337cac337bae347bb0347bb1357ab3357ab53679"
    "b63679b83778b93778bb3877bd3977be3976c03a75c23a75c33b74c53c74c63c73c83d72ca3e72cb3e71cd3f70ce4070"
    "d0416fd1426ed3426dd4436dd6446cd7456bd9466ada4769dc4869dd4968de4a67e04b66e14c66e24d65e44e64e55063"
    "e65162e75262e85461ea5560eb5660ec585fed595fee5b5eee5d5def5e5df0605df1615cf2635cf3655cf3675bf4685b"
    "f56a5bf56c5bf66e5bf6705bf7715bf7735cf8755cf8775cf9795cf97b5df97d5dfa7f5efa805efa825ffb8460fb8660"
    "fb8861fb8a62fc8c63fc8e63fc9064fc9265fc9366fd9567fd9768fd9969fd9b6afd9d6bfd9f6cfda16efda26ffda470"
    "fea671fea873feaa74feac75feae76feaf78feb179feb37bfeb57cfeb77dfeb97ffebb80febc82febe83fec085fec286"
    "fec488fec689fec78bfec98dfecb8efdcd90fdcf92fdd193fdd295fdd497fdd698fdd89afdda9cfddc9dfddd9ffddfa1"
    "fde1a3fce3a5fce5a6fce6a8fce8aafceaacfcecaefceeb0fcf0b1fcf1b3fcf3b5fcf5b7fbf7b9fbf9bbfbfabdfbfcbf"
)

#: matplotlib's ``RdBu_r`` (blue - white - red), the diverging default of the cepstra pictures, RGB, 256 entries.
_RDBU_R = bytes.fromhex(
    "05306106326307346608366909386c0a3a6f0b3c720c3e750d40780e437b0f457e114781124984134b87144d8a154f8d"
    "1651901754931856951958981a5a9b1c5c9e1d5ea11e60a41f62a72064aa2166ac2368ad246aae256caf276db0286fb0"
    "2971b12b73b22c75b32d76b42f78b5307ab6317cb7337db8347fb93581b93783ba3884bb3986bc3b88bd3c8abe3d8bbf"
    "3f8dc0408fc14191c24393c34694c44996c54c98c64f9ac7529cc8559ec958a0ca5ba2cb5ea4cc61a6cd65a8ce68aacf"
    "6bacd06eaed171b0d274b2d377b4d57ab6d67db8d780bad884bcd987beda8ac0db8dc2dc90c4dd93c5de95c6df98c8df"
    "9ac9e09dcae19fcbe1a2cde2a4cee3a7cfe4a9d0e4abd2e5aed3e6b0d4e6b3d5e7b5d7e8b8d8e8bad9e9bddaeabfdceb"
    "c2ddebc4deecc7dfedc9e1edcce2eecee3efd1e5f0d2e5f0d3e6f0d5e7f0d6e7f1d8e8f1d9e9f1dbe9f1dceaf2deebf2"
    "dfecf2e1ecf3e2edf3e4eef3e5eef3e7eff4e8f0f4eaf1f4ebf1f4edf2f5eef3f5f0f3f5f1f4f6f3f5f6f4f5f6f6f6f6"
    "f7f6f6f7f5f4f7f4f2f7f3f0f8f2eef8f0ecf8efeaf8eee8f9ede7f9ece5f9ebe3f9eae1f9e9dffae8ddfae7dbfae5d9"
    "fae4d7fbe3d6fbe2d4fbe1d2fbe0d0fcdfcefcdeccfcddcafcdcc8fddbc7fcd8c4fcd6c1fbd4befbd2bcfbd0b9faceb6"
    "faccb4facab1f9c7aef9c5abf9c3a9f8c1a6f8bfa3f8bda1f7bb9ef7b99bf7b799f6b496f6b293f5b090f5ae8ef5ac8b"
    "f4aa88f4a886f4a683f3a380f2a07ef19e7cef9b7aee9878ed9676ec9374eb9072ea8e70e88b6ee7886ce6856ae58368"
    "e48065e27d63e17b61e0785fdf755dde725bdd7059db6d57da6a55d96853d86551d7624fd6604dd45d4bd35a4ad15749"
    "d05447ce5146cd4f45cc4c43ca4942c94641c7433fc6403ec53e3cc33b3bc2383ac03538bf3237be3036bc2d34bb2a33"
    "b92732b82431b6212fb51f2eb41c2db2192bb0172aad162aaa1529a71429a41328a112289e11279b1027991027960f26"
    "930e26900d258d0c258a0b24870a248409238108237e07227b06227805217504217203206f02206c011f69001f67001f"
)
_BUILT_IN = {"magma": _MAGMA, "RdBu_r": _RDBU_R}


class LayoutError(ValueError):
    """The figure is too small for its panels and labels (the caller may draw it with matplotlib instead)."""


@lru_cache(maxsize=8)
def colormap_lut(name: str) -> np.ndarray:
    """The 256 RGB entries (uint8, shape (256, 3)) of matplotlib colormap ``name``.

    ``magma`` and ``RdBu_r`` need no matplotlib; other names import it (and an unknown name raises its ValueError).
    """
    if name in _BUILT_IN:
        return np.frombuffer(_BUILT_IN[name], dtype=np.uint8).reshape(256, 3)
    from matplotlib.cm import ScalarMappable

    cmap = ScalarMappable(cmap=name).get_cmap()
    return np.asarray(cmap.resampled(256)(np.arange(256), bytes=True)[:, :3], dtype=np.uint8)


@lru_cache(maxsize=1)
def _font_path() -> str | None:
    spec = importlib.util.find_spec("matplotlib")  # locates matplotlib's fonts without importing it
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = os.path.join(folder, "mpl-data", "fonts", "ttf", "DejaVuSans.ttf")
        if os.path.exists(path):
            return path
    return None


@lru_cache(maxsize=4)
def _font(size: float) -> Any:
    from PIL import ImageFont

    path = _font_path()
    if path is None:
        return ImageFont.load_default(size)
    return ImageFont.truetype(path, size)


def available() -> bool:
    """True when Pillow (with FreeType) and the DejaVu Sans font are there; else the matplotlib renderer is used."""
    try:
        from PIL import features
    except ImportError:
        return False
    return _font_path() is not None and bool(features.check("freetype2"))


Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Text:
    """One label: its text, anchor point and Pillow anchor, whether it reads upwards, and its pixel box
    ``(left, top, right, bottom)`` (right/bottom exclusive)."""

    text: str
    xy: tuple[float, float]
    anchor: str
    box: Box
    vertical: bool = False
    role: str = ""


@dataclass
class FigureLayout:
    """Where everything of a time-frequency figure goes, in pixels (``x`` right, ``y`` down).

    Attributes
    ----------
    size : (int, int)
        The canvas, ``--size``.
    panels : list of (x0, y0, x1, y1)
        The image of each channel: pixel columns ``x0 .. x1-1``, rows ``y0 .. y1-1``.
    colorbar : (x0, y0, x1, y1)
    x_axis, y_axis : Axis
        Values at the panels' left/right (time, s) and bottom/top edges (Hz, band or coefficient index).
    x_ticks : list of (value, x)
    y_ticks : list of list of (value, y)
        Per panel.
    c_ticks : list of (value, y)
        On the colorbar, whose bottom is ``vmin`` and top ``vmax``.
    texts : list of Text
        Every label drawn, with its box.
    """

    size: tuple[int, int]
    panels: list[Box]
    colorbar: Box
    x_axis: Axis
    y_axis: Axis
    vmin: float
    vmax: float
    x_ticks: list[tuple[float, int]] = field(default_factory=list)
    y_ticks: list[list[tuple[float, int]]] = field(default_factory=list)
    c_ticks: list[tuple[float, int]] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)

    def x_pixel(self, value: float) -> int:
        """The pixel column of time ``value`` (the tick's column)."""
        return self.x_axis.pixel(value, self.panels[0][0], self.panels[0][2])


class _Canvas:
    """A white RGB image with text helpers (anchors as in Pillow: ``l/m/r`` + ``t/m/b/s``)."""

    def __init__(self, width: int, height: int) -> None:
        from PIL import Image, ImageDraw

        self.Image = Image
        self.image = Image.new("RGB", (width, height), "white")
        self.draw = ImageDraw.Draw(self.image)
        self.font = _font(FONT_PX)

    def text_size(self, text: str) -> tuple[int, int]:
        left, top, right, bottom = self.draw.textbbox((0, 0), text, font=self.font, anchor="ls")
        return int(right - left), int(bottom - top)

    @property
    def line_height(self) -> int:
        ascent, descent = self.font.getmetrics()
        return ascent + descent

    def box(self, xy: tuple[float, float], text: str, anchor: str) -> Box:
        left, top, right, bottom = self.draw.textbbox(xy, text, font=self.font, anchor=anchor)
        return math.floor(left), math.floor(top), math.ceil(right), math.ceil(bottom)

    def vertical_box(self, centre: tuple[float, float], text: str) -> Box:
        """The box of ``text`` rotated to read upwards, centred on ``centre`` (as :meth:`vertical_text` pastes it)."""
        width, _ = self.text_size(text)
        tile_w, tile_h = self.line_height + 4, width + 4  # the tile after rotation
        x, y = round(centre[0] - tile_w / 2), round(centre[1] - tile_h / 2)
        return x, y, x + tile_w, y + tile_h

    def put(self, text: Text) -> None:
        if text.vertical:
            self.vertical_text(text.xy, text.text)
        else:
            self.draw.text(text.xy, text.text, fill="black", font=self.font, anchor=text.anchor)

    def vertical_text(self, centre: tuple[float, float], text: str) -> None:
        """``text`` rotated 90 degrees counter-clockwise (reading upwards), centred on ``centre``."""
        from PIL import ImageDraw

        width, _ = self.text_size(text)
        tile = self.Image.new("L", (width + 4, self.line_height + 4), 0)
        ImageDraw.Draw(tile).text((tile.width / 2, tile.height / 2), text, fill=255, font=self.font, anchor="mm")
        tile = tile.rotate(90, expand=True)
        x0, y0, x1, y1 = self.vertical_box(centre, text)
        self.image.paste((0, 0, 0), (x0, y0, x1, y1), tile)


def _overlap(a: Box, b: Box, margin: int = 1) -> bool:
    return a[0] < b[2] + margin and b[0] < a[2] + margin and a[1] < b[3] + margin and b[1] < a[3] + margin


def _clear(boxes: Sequence[Box], region: Box) -> bool:
    """No two boxes overlap and each lies inside ``region``."""
    inside = all(region[0] <= b[0] and b[2] <= region[2] and region[1] <= b[1] and b[3] <= region[3] for b in boxes)
    return inside and not any(_overlap(a, b) for a, b in zip(boxes, boxes[1:], strict=False))


def _max_bins(length_px: float, per_label_px: float) -> int:
    return max(1, min(9, int(length_px / per_label_px)))  # MaxNLocator(nbins="auto")


def _wrap(canvas: _Canvas, title: str, width: float, max_lines: int = 3) -> list[str]:
    """``title`` in lines no wider than ``width``, broken after its commas; the last line cut with an ellipsis."""
    if canvas.text_size(title)[0] <= width:
        return [title]
    lines, current = [], ""
    for piece in title.split(", "):
        candidate = piece if not current else f"{current}, {piece}"
        if current and canvas.text_size(candidate)[0] > width:
            lines.append(current + ",")
            current = piece
        else:
            current = candidate
    lines.append(current)
    if len(lines) > max_lines:
        lines = lines[: max_lines - 1] + [", ".join(lines[max_lines - 1 :]).replace(",,", ",")]
    out = []
    for line in lines:
        while canvas.text_size(line)[0] > width and len(line) > 1:
            line = line[:-2] + "\u2026"
        out.append(line)
    return out


def _y_tick_values(
    axis: Axis, max_bins: int, mel_ticks: tuple[Sequence[float], Sequence[str]] | None, integer: bool
) -> list[tuple[float, str]]:
    if mel_ticks is not None:
        # a label at most half a band outside (fmax sits at band n_mels) goes on the edge, as matplotlib's set_yticks
        return [
            (min(max(float(p), axis.low), axis.high), str(s))
            for p, s in zip(mel_ticks[0], mel_ticks[1], strict=True)
            if axis.low - 0.5 <= p <= axis.high + 0.5
        ]
    if integer:
        return [(float(v), str(v)) for v in integer_ticks(axis.low, axis.high, max_bins)]
    if axis.scale == "log":
        return [(v, tick_label(v, 0, kilo=True)) for v in log_ticks(axis.low, axis.high, max_bins + 1)]
    values, decimals = nice_ticks(axis.low, axis.high, max_bins)
    return [(v, tick_label(v, decimals)) for v in values]


def _greedy(ticks: list[tuple[float, str]], box_of: Any, region: Box) -> list[tuple[float, str]]:
    """The ticks (sorted by value) whose label boxes lie in ``region`` and clear the last one kept."""
    kept: list[tuple[float, str]] = []
    last: Box | None = None
    for value, text in sorted(ticks):
        box = box_of(value, text)
        if not _clear([box], region) or (last is not None and _overlap(box, last)):
            continue
        kept.append((value, text))
        last = box
    return kept


def figure_layout(
    canvas: Any,
    *,
    n_panels: int,
    x_axis: Axis,
    y_axis: Axis,
    vmin: float,
    vmax: float,
    title: str,
    colorbar_label: str,
    ylabel: str,
    mel_ticks: tuple[Sequence[float], Sequence[str]] | None = None,
    y_integer: bool = False,
    size: tuple[int, int],
) -> FigureLayout:
    """Place the panels, the colorbar, every tick and label of a time-frequency figure of exactly ``size`` pixels.

    ``canvas`` measures the texts (:class:`_Canvas`).  The panels share the height (a gap of
    ``2·EDGE_PAD + TICK_LEN`` pixels, less when they are short); tick labels are chosen at the largest count
    (``MaxNLocator``'s bins from the length) whose boxes do not overlap and stay inside the canvas and, for
    the y labels, inside their panel's band; a y label that is taller than its panel is shortened to ``ch N``
    or left out; the title wraps at its commas.  Raises :class:`LayoutError` when the axes would be narrower
    than 10 pixels or the panels shorter than 4.
    """
    width, height = size
    line = canvas.line_height
    full: Box = (0, 0, width, height)
    bottom = height - (EDGE_PAD + line + LABEL_PAD + line + TICK_PAD + TICK_LEN)
    for max_lines in (3, 2, 1):  # a wrapped title gives way to the panels in a short figure
        title_lines = _wrap(canvas, title, width - 2 * EDGE_PAD, max_lines)
        top = EDGE_PAD + len(title_lines) * line + TITLE_PAD
        gap = 2 * EDGE_PAD + TICK_LEN
        if n_panels > 1 and (bottom - top - gap * (n_panels - 1)) / n_panels < 3 * gap:
            gap = max(2.0, min(gap, (bottom - top) / n_panels / 8))
        panel_h = (bottom - top - gap * (n_panels - 1)) / n_panels
        if panel_h >= max(4, 2 * line) or max_lines == 1:
            break
    if panel_h < 4:
        raise LayoutError(f"--size {width}x{height}: too small for {n_panels} panels")
    rows = [(round(top + i * (panel_h + gap)), round(top + i * (panel_h + gap) + panel_h)) for i in range(n_panels)]

    def y_of(value: float, y0: int, y1: int) -> int:
        y = y1 - float(y_axis.frac(value)) * (y1 - y0)
        return min(y1 - 1, max(y0, math.floor(y)))

    # y ticks: the most that fit in every panel's band (half the gap above and below)
    def y_boxes(ticks: list[tuple[float, str]], x_right: float) -> tuple[list[list[Box]], list[list[int]]]:
        boxes, pixels = [], []
        for y0, y1 in rows:
            ys = [y_of(v, y0, y1) for v, _ in ticks]
            pixels.append(ys)
            boxes.append(
                sorted((canvas.box((x_right, y), s, "rm") for y, (_, s) in zip(ys, ticks, strict=True)), key=lambda b: b[1])
            )
        return boxes, pixels

    bins = _max_bins(panel_h / PT, 2 * 10)  # matplotlib: tick space = length / (2 x label size) on y
    if panel_h >= 2.5 * line:
        bins = max(bins, 2)  # a short panel still shows two values of its axis
    bands = [(0, round(y0 - gap / 2), 2000, round(y1 + gap / 2)) for y0, y1 in rows] if n_panels > 1 else [(0, 0, 2000, height)]
    candidates = _y_tick_values(y_axis, bins, mel_ticks, y_integer)
    while True:
        y_ticks = candidates
        if mel_ticks is not None:
            y_ticks = _greedy(candidates, lambda v, s: canvas.box((1000.0, y_of(v, *rows[0])), s, "rm"), bands[0])
        boxes, _ = y_boxes(y_ticks, 1000.0)
        if all(_clear(b, band) for b, band in zip(boxes, bands, strict=True)) or not y_ticks:
            break
        if mel_ticks is not None and len(candidates) > 1:
            candidates = candidates[::2]  # the panels differ by a pixel: every other round frequency
        elif mel_ticks is None and bins > 1:
            bins -= 1
            candidates = _y_tick_values(y_axis, bins, None, y_integer)
        else:
            y_ticks = []
            break

    c_bins = _max_bins((rows[-1][1] - rows[0][0]) / PT, 2 * 10)
    while True:
        c_values, c_decimals = nice_ticks(vmin, vmax, c_bins)
        c_ticks = [(v, tick_label(v, c_decimals)) for v in c_values]
        cb_y0, cb_y1 = rows[0][0], rows[-1][1]
        c_boxes = sorted(
            (canvas.box((0, cb_y1 - (v - vmin) / (vmax - vmin) * (cb_y1 - cb_y0)), s, "lm") for v, s in c_ticks),
            key=lambda b: b[1],
        )
        if _clear(c_boxes, (-1, 0, 10000, height)) or c_bins == 1:
            break
        c_bins -= 1

    # horizontal layout: y label, y tick labels, panels, colorbar, its tick labels and label
    y_label_w = max((canvas.text_size(s)[0] for _, s in y_ticks), default=0)
    c_label_w = max((canvas.text_size(s)[0] for _, s in c_ticks), default=0)
    left = EDGE_PAD + line + LABEL_PAD + y_label_w + TICK_PAD + TICK_LEN
    right_extra = TICK_LEN + TICK_PAD + c_label_w + LABEL_PAD + line + EDGE_PAD
    cbar_w = max(8.0, (rows[-1][1] - rows[0][0]) / 20 * 0.8)  # colorbar aspect 20 (of its 80 % -- the shrunk outline)
    ax_right = width - right_extra - cbar_w - 0.015 * width
    x0, x1 = round(left), round(ax_right)
    if x1 - x0 < 10:
        raise LayoutError(f"--size {width}x{height}: too narrow for the axes")
    panels = [(x0, y0, x1, y1) for y0, y1 in rows]
    cb = (round(ax_right + 0.015 * width), rows[0][0], round(ax_right + 0.015 * width + cbar_w), rows[-1][1])
    tick = round(TICK_LEN)
    layout = FigureLayout(size=size, panels=panels, colorbar=cb, x_axis=x_axis, y_axis=y_axis, vmin=vmin, vmax=vmax)
    texts = layout.texts

    # x ticks: the most whose labels do not touch (and stay on the canvas)
    label_y = rows[-1][1] + tick + TICK_PAD
    x_bins = _max_bins((x1 - x0) / PT, 3 * 10)
    while True:
        x_values, x_decimals = nice_ticks(x_axis.low, x_axis.high, x_bins)
        layout.x_ticks = [(v, layout.x_pixel(v)) for v in x_values]
        x_texts = [
            Text(
                tick_label(v, x_decimals), (x, label_y), "mt", canvas.box((x, label_y), tick_label(v, x_decimals), "mt"), role="x"
            )
            for v, x in layout.x_ticks
        ]
        if _clear([t.box for t in x_texts], full) or x_bins == 1:
            break
        x_bins -= 1
    texts += x_texts

    layout.y_ticks = []
    for index, (y0, y1) in enumerate(rows):
        ys = [y_of(v, y0, y1) for v, _ in y_ticks]
        layout.y_ticks.append([(v, y) for (v, _), y in zip(y_ticks, ys, strict=True)])
        anchor_x = x0 - 1 - tick - TICK_PAD
        texts += [
            Text(s, (anchor_x, y), "rm", canvas.box((anchor_x, y), s, "rm"), role="y")
            for (_, s), y in zip(y_ticks, ys, strict=True)
        ]
        label_x = EDGE_PAD + line / 2
        choices = [ylabel] if n_panels == 1 else [f"ch {index}: {ylabel}", f"ch {index}"]
        for label in choices:
            box = canvas.vertical_box((label_x, (y0 + y1) / 2), label)
            if box[1] >= round(y0 - gap / 2) and box[3] <= round(y1 + gap / 2) and box[1] >= 0 and box[3] <= height:
                texts.append(Text(label, (label_x, (y0 + y1) / 2), "mm", box, vertical=True, role="ylabel"))
                break
    layout.c_ticks = []
    for value, text in c_ticks:
        y = min(cb[3] - 1, max(cb[1], math.floor(cb[3] - (value - vmin) / (vmax - vmin) * (cb[3] - cb[1]))))
        layout.c_ticks.append((value, y))
        xy = (cb[2] + tick + TICK_PAD, y)
        texts.append(Text(text, xy, "lm", canvas.box(xy, text, "lm"), role="c"))
    xy = ((x0 + x1) / 2, label_y + line + LABEL_PAD)
    texts.append(Text("time (s)", xy, "mt", canvas.box(xy, "time (s)", "mt"), role="xlabel"))
    for i, text in enumerate(title_lines):
        xy = (width / 2, EDGE_PAD + (i + 1) * line - (line - canvas.font.getmetrics()[0]))
        texts.append(Text(text, xy, "ms", canvas.box(xy, text, "ms"), role="title"))
    label_xy = (width - EDGE_PAD - line / 2, (cb[1] + cb[3]) / 2)
    box = canvas.vertical_box(label_xy, colorbar_label)
    if box[1] >= cb[1] - TICK_LEN and box[3] <= cb[3] + TICK_LEN:  # beside the colorbar, never up to the title
        texts.append(Text(colorbar_label, label_xy, "mm", box, vertical=True, role="clabel"))
    return layout


def _colour_range(images: np.ndarray, vmin: float | None, vmax: float | None) -> tuple[float, float]:
    finite = images[np.isfinite(images)]
    lo = float(finite.min()) if vmin is None and finite.size else (0.0 if vmin is None else float(vmin))
    hi = float(finite.max()) if vmax is None and finite.size else (1.0 if vmax is None else float(vmax))
    if hi <= lo:
        lo, hi = (lo - 1.0, hi + 1.0) if vmin is None and vmax is None else ((hi - 1.0, hi) if vmin is None else (lo, lo + 1.0))
    return lo, hi


def spectrogram_png(images_db: np.ndarray, picture: TimeFreqPicture) -> bytes:
    """The PNG of :func:`audiokit.plot.figure.spectrogram_figure` (same arguments), drawn without matplotlib.

    Parameters
    ----------
    images_db : np.ndarray, shape (rows, columns) or (channels, rows, columns)
        Values (dB, or the colorbar's unit), row 0 at the bottom; one panel per channel, one colour scale.
    picture : TimeFreqPicture
        The axes, labels, colours and size.
    """
    images = as_panels(images_db).astype(np.float32, copy=False)  # display values: pooling in single precision is faster
    lo, hi = _colour_range(images, picture.vmin, picture.vmax)
    lut = colormap_lut(picture.cmap)
    width, height = picture.size
    canvas = _Canvas(width, height)
    layout = figure_layout(
        canvas,
        n_panels=len(images),
        x_axis=Axis(picture.t_start, picture.t_end),
        y_axis=Axis(*picture.y_limits, picture.y_scale),
        vmin=lo,
        vmax=hi,
        title=picture.title,
        colorbar_label=picture.colorbar_label,
        ylabel=picture.ylabel,
        mel_ticks=picture.mel_ticks,
        y_integer=picture.y_integer,
        size=picture.size,
    )
    xe, ye = picture.column_edges(images.shape[2]), picture.row_edges(images.shape[1])
    raster = np.array(np.asarray(canvas.image))
    scale = 255.999 / (hi - lo)
    x0, y0, x1, y1 = layout.panels[0]
    dst_x = layout.x_axis.cell_edges(x1 - x0)
    for image, (x0, y0, x1, y1) in zip(images, layout.panels, strict=True):
        shown = pool_cells(image, ye, layout.y_axis.cell_edges(y1 - y0), axis=0)
        shown = pool_cells(shown, xe, dst_x, axis=1)[::-1]  # row 0 at the bottom
        codes = np.nan_to_num((shown - lo) * scale, nan=0.0, posinf=255.0, neginf=0.0)
        raster[y0:y1, x0:x1] = lut[np.clip(codes, 0, 255).astype(np.uint8)]
    cb_x0, cb_y0, cb_x1, cb_y1 = layout.colorbar
    ramp = np.linspace(255.999, 0, cb_y1 - cb_y0, endpoint=False) - 255.999 / (cb_y1 - cb_y0) / 2
    raster[cb_y0:cb_y1, cb_x0:cb_x1] = lut[np.clip(ramp, 0, 255).astype(np.uint8)][:, None, :]
    canvas.image.paste(canvas.Image.fromarray(raster))
    _draw_frames(canvas, layout)
    for text in layout.texts:
        canvas.put(text)
    buffer = io.BytesIO()
    canvas.image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def _draw_frames(canvas: _Canvas, layout: FigureLayout) -> None:
    """The panels' and the colorbar's outlines and every tick mark."""
    draw, tick = canvas.draw, round(TICK_LEN)

    def frame(box: Box) -> None:
        draw.rectangle((box[0] - 1, box[1] - 1, box[2], box[3]), outline="black", width=1)

    for (x0, y0, x1, y1), y_ticks in zip(layout.panels, layout.y_ticks, strict=True):
        frame((x0, y0, x1, y1))
        for _, y in y_ticks:
            draw.line((x0 - 1 - tick, y, x0 - 1, y), fill="black", width=1)
        for _, x in layout.x_ticks:
            draw.line((x, y1, x, y1 + tick), fill="black", width=1)
    frame(layout.colorbar)
    for _, y in layout.c_ticks:
        draw.line((layout.colorbar[2], y, layout.colorbar[2] + tick, y), fill="black", width=1)

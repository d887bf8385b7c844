"""Time-frequency PNGs drawn with numpy and Pillow: no matplotlib import (start-up cost, issue 13).

``spectrogram``/``mel`` PNGs are an image plus axes, ticks, labels, a title and a colorbar.  Importing
matplotlib alone costs about 3x ``import numpy`` -- more than a 12 s file's whole job -- so this module
draws the same figure directly: the layout of matplotlib's constrained layout at 100 dpi (DejaVu Sans
10 pt, outward ticks 3.5 pt, "nice" tick steps 1/2/2.5/5 like ``MaxNLocator``, Unicode minus signs), the
colormap's 256-entry table (``magma`` is built in; any other name is looked up in matplotlib, which is
then imported), and the image at the axes' exact pixel size: columns and rows are max-pooled down to the
pixels (a narrow line or a short click is never dropped, where resampling by nearest neighbour may skip
it) or repeated up to them.  The PNG is encoded once, zlib level 1.

:func:`audiokit.plot.figure.spectrogram_figure` still returns a matplotlib Figure of the same picture for
library use; :func:`audiokit.plot.timefreq.render_timefreq` picks between the two.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .layout import DPI

__all__ = ["LayoutError", "available", "colormap_lut", "nice_ticks", "spectrogram_png"]

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


class LayoutError(ValueError):
    """The figure is too small for its panels and labels (the caller may draw it with matplotlib instead)."""


@lru_cache(maxsize=8)
def colormap_lut(name: str) -> np.ndarray:
    """The 256 RGB entries (uint8, shape (256, 3)) of matplotlib colormap ``name``.

    ``magma`` needs no matplotlib; other names import it (and an unknown name raises its ValueError).
    """
    if name == "magma":
        return np.frombuffer(_MAGMA, dtype=np.uint8).reshape(256, 3)
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


def nice_ticks(low: float, high: float, max_bins: int) -> tuple[list[float], int]:
    """Ticks inside ``[low, high]`` at a step of 1, 2, 2.5 or 5 x 10^k giving at most ``max_bins`` intervals.

    Returns the tick values and the number of decimals their labels need.
    """
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return [low], 0
    raw = span / max(1, max_bins)
    scale = 10.0 ** math.floor(math.log10(raw))
    for mult in (1.0, 2.0, 2.5, 5.0, 10.0):
        if mult * scale >= raw * (1 - 1e-9):
            break
    step = mult * scale
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    ticks = [k * step for k in range(first, last + 1)]
    decimals = max(0, -math.floor(math.log10(step) + 1e-9) + (1 if mult == 2.5 else 0))
    return ticks, decimals


def _label(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "\u2212")  # matplotlib's minus sign


def _max_bins(length_px: float, per_label_px: float) -> int:
    return max(1, min(9, int(length_px / per_label_px)))  # MaxNLocator(nbins="auto")


def _pool_to(image: np.ndarray, size: int, axis: int) -> np.ndarray:
    """``image`` resized to ``size`` along ``axis``: max over groups when shrinking, nearest when growing."""
    n = image.shape[axis]
    if n == size:
        return image
    if n > size:
        edges = np.linspace(0, n, size + 1).round().astype(np.int64)
        return np.maximum.reduceat(image, edges[:-1], axis=axis)
    index = np.minimum(((np.arange(size) + 0.5) * n / size).astype(np.int64), n - 1)
    return np.take(image, index, axis=axis)


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

    def text(self, xy: tuple[float, float], text: str, anchor: str) -> None:
        self.draw.text(xy, text, fill="black", font=self.font, anchor=anchor)

    def vertical_text(self, centre: tuple[float, float], text: str) -> None:
        """``text`` rotated 90 degrees counter-clockwise (reading upwards), centred on ``centre``."""
        width, _ = self.text_size(text)
        tile = self.Image.new("L", (width + 4, self.line_height + 4), 0)
        from PIL import ImageDraw

        ImageDraw.Draw(tile).text((tile.width / 2, tile.height / 2), text, fill=255, font=self.font, anchor="mm")
        tile = tile.rotate(90, expand=True)
        x = round(centre[0] - tile.width / 2)
        y = round(centre[1] - tile.height / 2)
        self.image.paste((0, 0, 0), (x, y, x + tile.width, y + tile.height), tile)


def spectrogram_png(
    images_db: np.ndarray,
    *,
    t_start: float,
    t_end: float,
    f_low: float,
    f_high: float,
    title: str,
    colorbar_label: str = "dB",
    cmap: str = "magma",
    size: tuple[int, int] = (1200, 600),
    mel_ticks: tuple[Sequence[float], Sequence[str]] | None = None,
    ylabel: str = "frequency (Hz)",
) -> bytes:
    """The PNG of :func:`audiokit.plot.figure.spectrogram_figure` (same arguments), drawn without matplotlib."""
    images = images_db if images_db.ndim == 3 else images_db[None]
    finite = images[np.isfinite(images)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if vmax <= vmin:
        vmin, vmax = vmin - 1.0, vmax + 1.0
    lut = colormap_lut(cmap)
    width, height = size
    canvas = _Canvas(width, height)
    line = canvas.line_height
    n_panels = len(images)

    # vertical layout: title, panels (gap between them), x tick labels, x label
    top = EDGE_PAD + line + TITLE_PAD
    bottom = height - (EDGE_PAD + line + LABEL_PAD + line + TICK_PAD + TICK_LEN)
    gap = 2 * EDGE_PAD + TICK_LEN
    panel_h = (bottom - top - gap * (n_panels - 1)) / n_panels
    if panel_h < 10:
        raise LayoutError(f"--size {width}x{height}: too small for {n_panels} panels")
    y_bins = _max_bins(panel_h / PT, 2 * 10)  # matplotlib: tick space = length / (2 x label size) on y

    if mel_ticks is not None:
        # a label at most half a band outside (fmax sits at band n_mels) goes on the edge, as matplotlib's set_yticks
        y_ticks = [
            (min(max(float(p), f_low), f_high), str(s))
            for p, s in zip(mel_ticks[0], mel_ticks[1], strict=True)
            if f_low - 0.5 <= p <= f_high + 0.5
        ]
    else:
        values, decimals = nice_ticks(f_low, f_high, y_bins)
        y_ticks = [(v, _label(v, decimals)) for v in values]
    c_values, c_decimals = nice_ticks(vmin, vmax, _max_bins((bottom - top) / PT, 2 * 10))
    c_ticks = [(v, _label(v, c_decimals)) for v in c_values]

    # horizontal layout: y label, y tick labels, panels, colorbar, its tick labels and label
    y_label_w = max((canvas.text_size(s)[0] for _, s in y_ticks), default=0)
    c_label_w = max((canvas.text_size(s)[0] for _, s in c_ticks), default=0)
    left = EDGE_PAD + line + LABEL_PAD + y_label_w + TICK_PAD + TICK_LEN
    right_extra = TICK_LEN + TICK_PAD + c_label_w + LABEL_PAD + line + EDGE_PAD
    cbar_w = max(8.0, (bottom - top) / 20 * 0.8)  # colorbar aspect 20 (of its 80 % -- the shrunk outline)
    ax_right = width - right_extra - cbar_w - 0.015 * width
    x0, x1 = round(left), round(ax_right)
    if x1 - x0 < 10:
        raise LayoutError(f"--size {width}x{height}: too narrow for the axes")
    x_values, x_decimals = nice_ticks(t_start, t_end, _max_bins((x1 - x0) / PT, 3 * 10))
    x_ticks = [(v, _label(v, x_decimals)) for v in x_values]

    pixels = np.asarray(canvas.image)  # read-only view; composed below and pasted
    raster = np.array(pixels)
    scale = 255.999 / (vmax - vmin)
    panel_boxes = []
    for index, image in enumerate(images):
        y0 = round(top + index * (panel_h + gap))
        y1 = round(top + index * (panel_h + gap) + panel_h)
        panel_boxes.append((y0, y1))
        shown = _pool_to(_pool_to(image, y1 - y0, axis=0), x1 - x0, axis=1)[::-1]  # row 0 at the bottom
        codes = np.nan_to_num((shown - vmin) * scale, nan=0.0, posinf=255.0, neginf=0.0)
        raster[y0:y1, x0:x1] = lut[np.clip(codes, 0, 255).astype(np.uint8)]
    cb_x0 = round(ax_right + 0.015 * width)
    cb_x1 = round(ax_right + 0.015 * width + cbar_w)
    cb_y0, cb_y1 = panel_boxes[0][0], panel_boxes[-1][1]
    ramp = np.linspace(255.999, 0, cb_y1 - cb_y0, endpoint=False) - 255.999 / (cb_y1 - cb_y0) / 2
    raster[cb_y0:cb_y1, cb_x0:cb_x1] = lut[np.clip(ramp, 0, 255).astype(np.uint8)][:, None, :]
    canvas.image.paste(canvas.Image.fromarray(raster))
    draw = canvas.draw

    def frame(xa: int, ya: int, xb: int, yb: int) -> None:
        draw.rectangle((xa - 1, ya - 1, xb, yb), outline="black", width=1)

    tick = round(TICK_LEN)
    for index, (y0, y1) in enumerate(panel_boxes):
        frame(x0, y0, x1, y1)
        for value, text in y_ticks:
            y = y1 - (value - f_low) / (f_high - f_low) * (y1 - y0)
            yi = min(y1 - 1, max(y0, math.floor(y)))
            draw.line((x0 - 1 - tick, yi, x0 - 1, yi), fill="black", width=1)
            canvas.text((x0 - 1 - tick - TICK_PAD, yi), text, anchor="rm")
        for value, text in x_ticks:
            x = x0 + (value - t_start) / (t_end - t_start) * (x1 - x0)
            xi = min(x1 - 1, max(x0, math.floor(x)))
            draw.line((xi, y1, xi, y1 + tick), fill="black", width=1)
            if index == n_panels - 1:
                canvas.text((xi, y1 + tick + TICK_PAD), text, anchor="mt")
        label = ylabel if n_panels == 1 else f"ch {index}: {ylabel}"
        canvas.vertical_text((EDGE_PAD + line / 2, (y0 + y1) / 2), label)
    canvas.text(((x0 + x1) / 2, panel_boxes[-1][1] + tick + TICK_PAD + line + LABEL_PAD), "time (s)", anchor="mt")
    canvas.text(((x0 + x1) / 2, panel_boxes[0][0] - TITLE_PAD), title, anchor="md")

    frame(cb_x0, cb_y0, cb_x1, cb_y1)
    for value, text in c_ticks:
        y = cb_y1 - (value - vmin) / (vmax - vmin) * (cb_y1 - cb_y0)
        yi = min(cb_y1 - 1, max(cb_y0, math.floor(y)))
        draw.line((cb_x1, yi, cb_x1 + tick, yi), fill="black", width=1)
        canvas.text((cb_x1 + tick + TICK_PAD, yi), text, anchor="lm")
    canvas.vertical_text((width - EDGE_PAD - line / 2, (cb_y0 + cb_y1) / 2), colorbar_label)

    buffer = io.BytesIO()
    canvas.image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()

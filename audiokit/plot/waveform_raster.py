"""The ``waveform`` PNG drawn with numpy + Pillow: no matplotlib import (~0.45 CPU-s of a 12 s job).

The picture of :func:`audiokit.plot.waveform.waveform_figure`, laid out in pixels the same way (a title band wrapped
to the width, the panels stacked between it and the time axis, margins :data:`~.waveform._LEFT` ... of that module),
with the text, tick and frame drawing of :mod:`.raster` (DejaVu Sans, outward ticks, "nice" time ticks thinned
until their labels clear each other):

* each pixel column of a panel shows the minimum to the maximum of the envelope columns it overlaps (the envelope's
  columns max-pooled onto the pixels by :func:`~.axes.pool_cells`, so a click one column wide is never dropped),
  at least one pixel tall, so a silent stretch is a line on the centre, and reaching its left neighbour's band,
  so the trace is unbroken;
* a pixel column holding a sample at full scale is red (one pixel either side too, so a single column shows) and
  has red strips in the panel's margins beyond full scale, above and below;
* dashed grey lines at full scale, a grey centre line, light vertical grid lines at the time ticks;
* the amplitude ticks of :func:`~.waveform.amplitude_ticks`, a ``chN`` label per panel of a multi-channel input,
  the unit of the amplitude axis at the left, ``time (s)`` under the last panel.

:func:`waveform_layout` is the layout step (every panel, tick and text with its pixel box), :func:`waveform_png`
draws it and encodes the PNG once (zlib level 1), :func:`draw_waveform` writes it (the CLI's and ``batch waveform
--png``'s path).
"""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .axes import Axis, nice_ticks, pool_cells, tick_label
from .raster import PT, TICK_LEN, TICK_PAD, Box, Text, _Canvas, _clear, _font, _max_bins
from .waveform import (
    _BELOW_TITLE,
    _GAP,
    _LEFT,
    _RIGHT,
    DB_RANGE,
    WaveformPicture,
    amplitude_ticks,
    db_position,
    panel_rows,
    waveform_title,
)

__all__ = ["ENVELOPE_RGB", "CLIP_RGB", "WaveformLayout", "draw_waveform", "waveform_layout", "waveform_png"]

#: matplotlib's ``tab:blue`` and ``tab:red`` (the colours of the matplotlib picture).
ENVELOPE_RGB, CLIP_RGB = (0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28)
_FULL_SCALE_RGB, _CENTRE_RGB, _GRID_RGB = (140, 140, 140), (179, 179, 179), (232, 232, 232)
#: The panel's amplitude range is ``±MARGIN·reach`` (``reach`` = max(1, the largest |value| drawn)); the red strips
#: of a clipped column fill ``STRIP·reach .. MARGIN·reach``.
MARGIN, STRIP = 1.06, 1.01


@dataclass
class WaveformLayout:
    """Where everything of a waveform PNG goes, in pixels (``x`` right, ``y`` down).

    Attributes
    ----------
    size : (int, int)
        The canvas, ``--size``.
    panels : list of (x0, y0, x1, y1)
        One per drawn channel, top to bottom: pixel columns ``x0 .. x1-1``, rows ``y0 .. y1-1``.
    x_axis : Axis
        Time (s) at the panels' left and right edges: ``start_s .. start_s + duration_s``.
    reach : list of float
        Per panel, the amplitude at its top edge (``-reach`` at the bottom), ``MARGIN·max(1, max |value|)``.
    x_ticks : list of (value, x)
    y_ticks : list of list of (value, y)
        Per panel (amplitude positions: linear values, or :func:`~.waveform.db_position` of the dB levels).
    texts : list of Text
        Every label, with its box (roles ``title``, ``x``, ``xlabel``, ``y``, ``ylabel``, ``unit``).
    """

    size: tuple[int, int]
    panels: list[Box]
    x_axis: Axis
    reach: list[float] = field(default_factory=list)
    x_ticks: list[tuple[float, int]] = field(default_factory=list)
    y_ticks: list[list[tuple[float, int]]] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)

    def x_pixel(self, value: float) -> int:
        """The pixel column of time ``value``."""
        return self.x_axis.pixel(value, self.panels[0][0], self.panels[0][2])

    def y_pixel(self, row: int, value: float | np.ndarray) -> np.ndarray:
        """The pixel row of amplitude position ``value`` in panel ``row`` (clamped to the panel)."""
        _, y0, _, y1 = self.panels[row]
        reach = self.reach[row]
        y = np.floor(y0 + (reach - np.asarray(value, dtype=np.float64)) / (2 * reach) * (y1 - y0))
        return np.clip(y, y0, y1 - 1).astype(np.int64)


def _positions(picture: WaveformPicture, row: int) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.asarray(picture.low[row], dtype=np.float64), np.asarray(picture.high[row], dtype=np.float64)
    if picture.scale == "dbfs":
        return db_position(low), db_position(high)
    return low, high


def waveform_layout(canvas: Any, picture: WaveformPicture, size: tuple[int, int]) -> WaveformLayout:
    """Place the title, the panels (as many as fit, with a warning), every tick and label, exactly ``size`` pixels."""
    width, height = size
    line = canvas.line_height
    small = copy.copy(canvas)  # the same image, 8-point text (7 in panels under 60 px), as the matplotlib picture's
    title_lines = _word_wrap(canvas, waveform_title(picture), width - 12)
    top = 4 + len(title_lines) * line + _BELOW_TITLE
    rows, panel = panel_rows(picture, size, top, stacklevel=5)
    small.font = _font((7 if panel < 60 else 8) * PT)
    x0, x1 = round(_LEFT), round(width - _RIGHT)
    panels = [(x0, round(top + r * (panel + _GAP)), x1, round(top + r * (panel + _GAP) + panel)) for r in range(rows)]
    layout = WaveformLayout(size=size, panels=panels, x_axis=Axis(picture.start_s, picture.start_s + picture.duration_s))
    tick = round(TICK_LEN)
    for r in range(rows):
        low, high = _positions(picture, r)
        layout.reach.append(MARGIN * max(1.0, float(np.max(np.abs(np.concatenate([low, high])), initial=0.0))))
        ticks = amplitude_ticks(picture.scale, panel)
        ys = [int(y) for y in layout.y_pixel(r, np.array([p for p, _ in ticks]))] if ticks else []
        layout.y_ticks.append([(p, y) for (p, _), y in zip(ticks, ys, strict=True)])
        anchor_x = x0 - 1 - tick - TICK_PAD
        labels = [
            Text(s, (anchor_x, y), "rm", small.box((anchor_x, y), s, "rm"), role="y") for (_, s), y in zip(ticks, ys, strict=True)
        ]
        layout.texts += labels
        if rows > 1 or picture.channels > 1:
            label = f"ch{picture.channel_labels[r]}"
            left = min((t.box[0] for t in labels), default=anchor_x)
            centre = (left - 3 - small.line_height / 2, (panels[r][1] + panels[r][3]) / 2)
            layout.texts.append(Text(label, centre, "mm", small.vertical_box(centre, label), vertical=True, role="ylabel"))
    # time ticks under the last panel: the most whose labels clear each other and stay on the canvas
    label_y = panels[-1][3] + tick + TICK_PAD
    bins = _max_bins((x1 - x0) / PT, 3 * 10)
    while True:
        values, decimals = nice_ticks(layout.x_axis.low, layout.x_axis.high, bins)
        layout.x_ticks = [(v, layout.x_pixel(v)) for v in values]
        x_texts = [
            Text(tick_label(v, decimals), (x, label_y), "mt", canvas.box((x, label_y), tick_label(v, decimals), "mt"), role="x")
            for v, x in layout.x_ticks
        ]
        if _clear([t.box for t in x_texts], (0, 0, width, height)) or bins == 1:
            break
        bins -= 1
    layout.texts += x_texts
    xy = ((x0 + x1) / 2, height - 4)
    layout.texts.append(Text("time (s)", xy, "mb", canvas.box(xy, "time (s)", "mb"), role="xlabel"))
    unit_font = copy.copy(canvas)
    unit_font.font = _font(9 * PT)
    centre = (4 + unit_font.line_height / 2, (panels[0][1] + panels[-1][3]) / 2)
    long_unit = "amplitude (1 = full scale)" if picture.scale == "linear" else f"level (dBFS, {DB_RANGE:g} dB shown)"
    for unit in (long_unit, "amplitude" if picture.scale == "linear" else "dBFS"):  # beside the panels, never the title
        box = unit_font.vertical_box(centre, unit)
        if box[1] >= top - _BELOW_TITLE and box[3] <= panels[-1][3] + tick:
            layout.texts.append(Text(unit, centre, "mm", box, vertical=True, role="unit"))
            break
    for i, text in enumerate(title_lines):
        xy = (width / 2, 4 + (i + 1) * line - (line - canvas.font.getmetrics()[0]))
        layout.texts.append(Text(text, xy, "ms", canvas.box(xy, text, "ms"), role="title"))
    return layout


def waveform_png(picture: WaveformPicture, size: tuple[int, int] = (1200, 500)) -> bytes:
    """The PNG bytes of ``picture``, exactly ``size`` pixels, drawn without matplotlib."""
    width, height = size
    canvas = _Canvas(width, height)
    layout = waveform_layout(canvas, picture, size)
    draw, tick = canvas.draw, round(TICK_LEN)
    for r, (x0, y0, x1, y1) in enumerate(layout.panels):
        for _, x in layout.x_ticks:  # the grid under everything
            draw.line((x, y0, x, y1 - 1), fill=_GRID_RGB)
        _envelope(canvas, layout, picture, r)
        for level in (-1.0, 1.0):
            _dashed(draw, int(layout.y_pixel(r, level)), x0, x1, _FULL_SCALE_RGB)
        draw.line((x0, int(layout.y_pixel(r, 0.0)), x1 - 1, int(layout.y_pixel(r, 0.0))), fill=_CENTRE_RGB)
        draw.rectangle((x0 - 1, y0 - 1, x1, y1), outline="black", width=1)
        for _, y in layout.y_ticks[r]:
            draw.line((x0 - 1 - tick, y, x0 - 1, y), fill="black")
        for _, x in layout.x_ticks:
            draw.line((x, y1, x, y1 + tick), fill="black")
    small, unit = copy.copy(canvas), copy.copy(canvas)
    small.font = _font((7 if layout.panels[0][3] - layout.panels[0][1] < 60 else 8) * PT)
    unit.font = _font(9 * PT)
    for text in layout.texts:
        (small if text.role in ("y", "ylabel") else unit if text.role == "unit" else canvas).put(text)
    buffer = io.BytesIO()
    canvas.image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def _word_wrap(canvas: Any, text: str, width: float) -> list[str]:
    """``text`` in lines no wider than ``width`` pixels, broken between words (a word wider than that, cut with an
    ellipsis)."""
    lines: list[str] = []
    for word in text.split(" "):
        candidate = f"{lines[-1]} {word}" if lines else word
        if lines and canvas.text_size(candidate)[0] <= width:
            lines[-1] = candidate
        else:
            lines.append(word)
    out = []
    for line in lines:
        while canvas.text_size(line)[0] > width and len(line) > 1:
            line = line[:-2] + "\u2026"
        out.append(line)
    return out


def _column_edges(picture: WaveformPicture) -> np.ndarray:
    """Time edges (s) of the envelope's columns: midpoints between their centres, the segment's ends outside."""
    times = np.asarray(picture.times, dtype=np.float64)
    edges = np.concatenate([[picture.start_s], (times[:-1] + times[1:]) / 2, [picture.start_s + picture.duration_s]])
    return np.maximum.accumulate(edges)


def _envelope(canvas: Any, layout: WaveformLayout, picture: WaveformPicture, row: int) -> None:
    """Panel ``row``'s min/max band, one pixel column at a time, clipped columns in red with their margin strips."""
    x0, y0, x1, y1 = layout.panels[row]
    low, high = _positions(picture, row)
    src, dst = _column_edges(picture), layout.x_axis.cell_edges(x1 - x0)
    shown_high = pool_cells(high, src, dst, axis=0)
    shown_low = -pool_cells(-low, src, dst, axis=0)
    # each column reaches its left neighbour's band, so the trace is unbroken where the signal's sign changes from
    # one column to the next (as the outline of the matplotlib picture's stepped band)
    reach_low, reach_high = shown_low.copy(), shown_high.copy()
    reach_low[1:] = np.minimum(shown_low[1:], shown_high[:-1])
    reach_high[1:] = np.maximum(shown_high[1:], shown_low[:-1])
    shown_low, shown_high = reach_low, reach_high
    hit = pool_cells(np.asarray(picture.clipped[row], dtype=np.int64), src, dst, axis=0) > 0
    top, bottom = layout.y_pixel(row, shown_high), layout.y_pixel(row, shown_low)
    hit = hit | np.concatenate([hit[1:], [False]]) | np.concatenate([[False], hit[:-1]])  # a single column shows
    strip = STRIP / MARGIN * layout.reach[row]  # the margin beyond the largest value drawn
    strip_top, strip_bottom = int(layout.y_pixel(row, strip)), int(layout.y_pixel(row, -strip))
    draw = canvas.draw
    for x, (a, b, red) in enumerate(zip(top.tolist(), bottom.tolist(), hit.tolist(), strict=True), start=x0):
        draw.line((x, a, x, b), fill=CLIP_RGB if red else ENVELOPE_RGB)
        if red:
            draw.line((x, y0, x, strip_top), fill=CLIP_RGB)
            draw.line((x, strip_bottom, x, y1 - 1), fill=CLIP_RGB)


def _dashed(draw: Any, y: int, x0: int, x1: int, colour: tuple[int, int, int], on: int = 4, off: int = 2) -> None:
    for x in range(x0, x1, on + off):
        draw.line((x, y, min(x + on, x1) - 1, y), fill=colour)


def draw_waveform(png: str, picture: WaveformPicture, *, size: str = "1200x500") -> None:
    """Draw ``picture`` into the PNG ``png`` (atomically; ``-`` is stdout).

    With numpy + Pillow (:func:`waveform_png`, no matplotlib import); with
    :func:`~audiokit.plot.waveform.waveform_figure` when Pillow lacks FreeType or the DejaVu Sans font is missing.
    """
    from ..io import write_bytes_atomic
    from . import raster
    from .layout import parse_size

    if raster.available():
        data = waveform_png(picture, parse_size(size))
    else:
        from .figure import png_bytes
        from .waveform import waveform_figure

        data = png_bytes(waveform_figure(picture, size=parse_size(size)))
    write_bytes_atomic(png, data)

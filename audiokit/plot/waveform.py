"""The PNG of a ``waveform`` job: the min/max envelope of each channel per pixel column, one panel per channel.

Laid out by hand, in pixels, so the canvas is exactly ``--size`` for any channel count: a title band (file, rate,
channels, subtype, duration; wrapped to the width), the panels stacked between it and the time axis, the unit of
the amplitude axis at the left.  Columns holding a sample at full scale (``|x| >= clip level`` of the subtype) are
drawn in red, with red strips in the panel's margins above and below them; the title counts the samples.  ``scale="dbfs"`` draws each value ``v`` at ``sign(v) * (dBFS(|v|) + R) / R``
(:data:`DB_RANGE` ``R`` = 60 dB, as Audacity's dB view): 0 dBFS at the panel's edges, -60 dBFS and below on the
centre line.

`audiokit.plot.waveform_raster.draw_waveform` (the CLI's and ``batch waveform --png``'s path) draws with numpy + Pillow
(:mod:`.waveform_raster`, no matplotlib import); :func:`waveform_figure` is the same picture as a matplotlib Figure,
for library use and when Pillow lacks FreeType or the font.  Both take the title (:func:`waveform_title`) and the
amplitude ticks (:func:`amplitude_ticks`) from here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .labels import wrap_to_width
from .layout import DPI, title_name

__all__ = [
    "DB_RANGE",
    "WaveformPicture",
    "amplitude_ticks",
    "db_position",
    "panel_rows",
    "waveform_figure",
    "waveform_title",
]

#: dB shown by the dBFS scale, from full scale down to the centre line.
DB_RANGE = 60.0
#: Canvas margins in pixels: left (tick labels, channel and unit labels), right, bottom (time ticks and label),
#: between the title band and the panels, between panels.
_LEFT, _RIGHT, _BOTTOM, _BELOW_TITLE, _GAP = 78.0, 14.0, 44.0, 6.0, 5.0
#: The smallest panel height drawn (pixels): more channels than fit are left out, with a warning.
MIN_PANEL_PX = 14.0
ENVELOPE_COLOUR, CLIP_COLOUR = "tab:blue", "tab:red"
_DB_TICKS = (0.0, -6.0, -12.0, -20.0, -30.0, -40.0)


@dataclass(frozen=True)
class WaveformPicture:
    """What :func:`~audiokit.plot.waveform_raster.draw_waveform` draws (computed by the pipeline).

    Attributes
    ----------
    path : str
        The input, as the title names it.
    sr, channels, subtype
        The input's rate (Hz), channel count and subtype.
    start_s, duration_s : float
        The time (s) of the first sample shown and the length shown.
    times : np.ndarray, shape (n_columns,)
        The centre (s) of each column.
    low, high : np.ndarray, shape (rows, n_columns)
        Minimum and maximum of each column, full-scale units, one row per drawn channel.
    clipped : np.ndarray, shape (rows, n_columns)
        Samples at full scale in each column.
    channel_labels : sequence of int
        The channel of each row.
    scale : {"linear", "dbfs"}
        The amplitude axis.
    """

    path: str
    sr: int
    channels: int
    subtype: str
    start_s: float
    duration_s: float
    times: np.ndarray
    low: np.ndarray
    high: np.ndarray
    clipped: np.ndarray
    channel_labels: Sequence[int]
    scale: str = "linear"


def db_position(values: np.ndarray, db_range: float = DB_RANGE) -> np.ndarray:
    """Where the dBFS scale draws ``values``: ``sign(v) * max(0, (20·log10|v| + R) / R)``; 0 for ``v = 0``."""
    magnitude = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(divide="ignore"):
        level = 20.0 * np.log10(magnitude)
    return np.sign(values) * np.maximum(0.0, (level + db_range) / db_range)


def waveform_figure(picture: WaveformPicture, *, size: tuple[int, int] = (1200, 500)):
    """The waveform Figure, exactly ``size`` pixels, one panel per row of ``picture`` (as many as fit).

    Returns
    -------
    matplotlib.figure.Figure
        No layout engine: the panels sit where this function put them.  Panels have the gid ``"waveform-panel"``,
        the envelope collections ``"envelope"`` and ``"clipped"``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width, height = size
    fig = Figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    renderer = FigureCanvasAgg(fig).get_renderer()
    title = fig.text(0.5, 1 - 4 / height, waveform_title(picture), ha="center", va="top", fontsize=10)
    wrap_to_width(title, renderer, width - 12)
    top = 4 + title.get_window_extent(renderer).height + _BELOW_TITLE
    rows, panel = panel_rows(picture, size, top, stacklevel=4)
    room = height - top - _BOTTOM
    plot_width = width - _LEFT - _RIGHT
    axes = []
    for row in range(rows):
        y0 = height - top - (row + 1) * panel - row * _GAP
        ax = fig.add_axes((_LEFT / width, y0 / height, plot_width / width, panel / height), gid="waveform-panel")
        _panel(ax, picture, row, panel)
        if row < rows - 1:
            ax.tick_params(labelbottom=False)
        axes.append(ax)
    axes[-1].set_xlabel("time (s)")
    unit = "amplitude (1 = full scale)" if picture.scale == "linear" else f"level (dBFS, {DB_RANGE:g} dB shown)"
    fig.text(4 / width, (_BOTTOM + room / 2) / height, unit, rotation=90, ha="left", va="center", fontsize=9)
    return fig


def panel_rows(picture: WaveformPicture, size: tuple[int, int], top: float, *, stacklevel: int) -> tuple[int, float]:
    """The panels drawn below a title band ending at ``top`` (pixels) and their height: every row of ``picture``,
    each at least :data:`MIN_PANEL_PX` tall with :data:`_GAP` between them, or as many as fit (with a warning)."""
    width, height = size
    rows = picture.low.shape[0]
    room = height - top - _BOTTOM
    fit = max(1, int((room + _GAP) // (MIN_PANEL_PX + _GAP)))
    if rows > fit:
        warnings.warn(
            f"{picture.path}: drawing {fit} of {rows} channels in the {width}x{height} PNG "
            "(a taller --size, or --channel N for another)",
            stacklevel=stacklevel,
        )
        rows = fit
    return rows, (room - _GAP * (rows - 1)) / rows


def waveform_title(picture: WaveformPicture) -> str:
    """The title: file, rate, channels, subtype, duration and segment; the clipped samples per channel, if any."""
    segment = f" from {picture.start_s:g} s" if picture.start_s else ""
    text = (
        f"{title_name(picture.path)} — {picture.sr} Hz, {picture.channels} ch, {picture.subtype}, "
        f"{picture.duration_s:.6g} s{segment}, min/max per pixel column"
    )
    total = picture.clipped.sum(axis=1)
    if total.any():
        counts = ", ".join(f"ch{c} {int(n)}" for c, n in zip(picture.channel_labels, total))
        text += f" — red: samples at full scale ({counts})"
    return text


def _panel(ax, picture: WaveformPicture, row: int, panel_px: float) -> None:
    low, high = picture.low[row], picture.high[row]
    if picture.scale == "dbfs":
        low, high = db_position(low), db_position(high)
    # a filled band between the minima and maxima, each column a step its own width wide; the edge keeps a silent
    # (flat) stretch visible as a line
    style = {"step": "mid", "linewidth": 0.6}
    ax.fill_between(picture.times, low, high, color=ENVELOPE_COLOUR, edgecolor=ENVELOPE_COLOUR, gid="envelope", **style)
    hit = picture.clipped[row] > 0
    reach = max(1.0, float(np.max(np.abs(np.concatenate([low, high])), initial=0.0)))
    if hit.any():  # the column's band in red, and red strips in the margins beyond full scale above and below it
        red = {"where": hit, "color": CLIP_COLOUR, "step": "mid", "gid": "clipped"}
        ax.fill_between(picture.times, low, high, edgecolor=CLIP_COLOUR, linewidth=1.2, **red)
        ax.fill_between(picture.times, 1.01 * reach, 1.06 * reach, linewidth=0, **red)
        ax.fill_between(picture.times, -1.06 * reach, -1.01 * reach, linewidth=0, **red)
    ax.set_ylim(-1.06 * reach, 1.06 * reach)
    ax.set_xlim(picture.start_s, picture.start_s + picture.duration_s)
    for level in (-1.0, 1.0):
        ax.axhline(level, color="0.55", linewidth=0.5, linestyle="--")
    ax.axhline(0.0, color="0.7", linewidth=0.4)
    _ticks(ax, picture.scale, panel_px)
    if picture.low.shape[0] > 1 or picture.channels > 1:
        ax.set_ylabel(f"ch{picture.channel_labels[row]}", fontsize=8, labelpad=2)
    ax.grid(True, axis="x", linewidth=0.3, alpha=0.6)


def _ticks(ax, scale: str, panel_px: float) -> None:
    """The amplitude ticks of :func:`amplitude_ticks`, 7- or 8-point labels."""
    ax.tick_params(axis="y", labelsize=7 if panel_px < 60 else 8)
    ticks = amplitude_ticks(scale, panel_px)
    ax.set_yticks([p for p, _ in ticks], [s for _, s in ticks])


def amplitude_ticks(scale: str, panel_px: float) -> list[tuple[float, str]]:
    """The amplitude axis' ticks of a panel ``panel_px`` pixels tall: (position, label), bottom to top.

    As many as the height holds; none in a panel under 26 px.  A panel under 110 px keeps its labels off the
    edges, where the next panel's are.  ``linear``: values in full-scale units; ``dbfs``: the levels of
    ``_DB_TICKS`` at :func:`db_position`, ``-60`` on the centre line.
    """
    if panel_px < 26:
        return []
    if scale == "linear":
        values = [-0.5, 0.0, 0.5] if panel_px < 110 else [-1.0, -0.5, 0.0, 0.5, 1.0]
        return [(t, f"{t:g}") for t in values]
    keep = max(1, min(len(_DB_TICKS), int(panel_px // 56)))
    levels = _DB_TICKS[:: math.ceil(len(_DB_TICKS) / keep)]
    if panel_px < 110:
        levels = tuple(db for db in levels if db <= -12.0) or (-20.0,)
    positions = [float(db_position(np.array(10 ** (db / 20)))) for db in levels]
    ticks = [-p for p in positions] + [0.0] + positions[::-1]
    names = [f"{db:g}" for db in levels] + [f"-{DB_RANGE:g}"] + [f"{db:g}" for db in levels[::-1]]
    return list(zip(ticks, names, strict=True))

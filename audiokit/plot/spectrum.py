"""The PNG of a ``spectrum`` job: one line per channel (linear or dBFS), its fitted peaks marked and labelled, the title.

The peak labels go through a layout step (:mod:`audiokit.plot.labels`) that knows their sizes as the renderer draws
them: each sits near its marker, above the lines, clear of the other labels, the legend, the title and the canvas
edges, with a leader line when it had to move away; the top of the y axis leaves the headroom the labels need
(the least of :data:`HEADROOM_STEPS` that fits them all).  A label with no room at all is left out, and the
legend says how many were.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..io import write_bytes_atomic
from .figure import _figure, png_bytes
from .labels import Box, LabelArea, Placement, column_skyline, layout_labels, text_box_size, wrap_to_width
from .layout import parse_size, title_name

__all__ = [
    "DB_RANGE",
    "ENVELOPE_POINTS_PER_PIXEL",
    "HEADROOM_STEPS",
    "MAX_LABELS",
    "MAX_LINES",
    "PeakMark",
    "SpectrumFigureOptions",
    "draw_spectrum",
    "spectrum_figure",
    "spectrum_line",
]

#: Dynamic range shown by the dB plot, below its highest value (dB).
DB_RANGE = 140.0
#: Most channels drawn as lines (with their peak labels) in one spectrum PNG.
MAX_LINES = 8


class SpectrumFigureOptions(Protocol):
    """What :func:`draw_spectrum` reads of the job's options (``pipelines.spectrum.SpectrumOptions``)."""

    @property
    def linear(self) -> bool: ...  # amplitude in full-scale units, not dBFS

    @property
    def two_sided(self) -> bool: ...  # 0 .. sr, the mirror half drawn

    @property
    def size(self) -> str: ...  # WxH pixels


#: A line longer than this many points per pixel column is reduced to its envelope (:func:`spectrum_line`).
ENVELOPE_POINTS_PER_PIXEL = 4


def spectrum_line(
    spec: Any, options: SpectrumFigureOptions, xlim: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray, float]:
    """One channel's line as :func:`draw_spectrum` draws it: ``(freqs_hz, values, top)``, dBFS or linear.

    The values are :attr:`Spectrum.db` / :attr:`Spectrum.amplitude` (or their
    two-sided forms); ``top`` is their maximum over every bin (the dB plot's
    range is counted from it).  A line of more than
    :data:`ENVELOPE_POINTS_PER_PIXEL` points per pixel column of
    ``options.size`` is cut to the bins shown (``xlim``, one bin beyond each
    end) and becomes its envelope: the minimum and the maximum of each of
    ``2·width`` equal runs of bins, a vertical stroke at the run's centre
    frequency -- what the full line paints at that resolution, every peak
    included, in memory independent of the DFT length.
    """
    if options.linear:
        freqs, values = spec.two_sided() if options.two_sided else (spec.freqs, spec.amplitude)
    else:  # Spectrum.db / two_sided_db: amplitude_to_db of the same amplitudes
        freqs, values = spec.two_sided_db() if options.two_sided else (spec.freqs, spec.db)
    top = float(np.max(values))
    width = parse_size(options.size)[0]
    if freqs.size <= ENVELOPE_POINTS_PER_PIXEL * width:
        return freqs, values, top
    if xlim is not None:
        lo = max(int(np.searchsorted(freqs, xlim[0], side="left")) - 1, 0)
        hi = min(int(np.searchsorted(freqs, xlim[1], side="right")) + 1, freqs.size)
        freqs, values = freqs[lo:hi], values[lo:hi]
        if freqs.size <= ENVELOPE_POINTS_PER_PIXEL * width:
            return freqs, values, top
    edges = np.linspace(0, freqs.size, 2 * width + 1).round().astype(np.int64)
    starts, stops = edges[:-1], edges[1:]
    centres = 0.5 * (freqs[starts] + freqs[stops - 1])
    low, high = np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)
    return np.repeat(centres, 2), np.stack([low, high], axis=1).ravel(), top


#: Fractions of the axes' height kept free above the highest value, tried in turn until every label fits.
HEADROOM_STEPS = (0.08, 0.12, 0.16, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
#: Most peaks labelled in one PNG (taken in the order of :func:`draw_spectrum`: rank by rank, channel by channel);
#: the others keep their marker.
MAX_LABELS = 48
#: Peak labels: font size (points), and the white box behind the text (fraction of the font size on each side).
LABEL_FONT_PT = 8.0
LABEL_PAD = 0.2
#: Peak marker: a downward triangle of this size (points) whose centre is at the peak's value.
MARKER_PT = 6.0
#: Pixels kept free around the title and the axis labels at the canvas edge.
EDGE_PX = 6.0
#: Legend locations tried (the first one whose box covers no data wins at a given headroom).
_LEGEND_LOCATIONS = ("upper right", "upper left", "upper center")


@dataclass(frozen=True)
class PeakMark:
    """One marked peak as drawn: where (``freq_hz``, ``value`` in the plot's unit), its ``label`` and ``channel``
    (the line whose colour it takes)."""

    freq_hz: float
    value: float
    label: str
    channel: int = 0


def draw_spectrum(
    path: str,
    lines: Sequence[tuple[np.ndarray, np.ndarray, float]],
    found: Sequence[Sequence[Any]],
    report: dict[str, Any],
    options: SpectrumFigureOptions,
    xlim: tuple[float, float] | None,
    *,
    n_channels: int | None = None,
) -> None:
    """Draw the channels' lines and their peaks; write the PNG atomically.

    Parameters
    ----------
    path : str
        The PNG to write (``-``: standard output).
    lines : sequence of (freqs_hz, values, top)
        One per drawn channel, from :func:`spectrum_line` (all with the same frequencies); at most
        :data:`MAX_LINES` are drawn.
    found : sequence of sequences of peaks
        Each channel's fitted peaks (``freq_hz``, ``amplitude``, ``dbfs``), strongest first: marked and labelled,
        the strongest of every channel first, then the second of every channel, ...; with ``two_sided`` the
        mirror images after all of them.
    report : dict
        The job's ``--json`` report: ``path``, ``n``, ``n_fft``, ``sr``, ``df``, ``window``, ``nyquist`` name the title.
    options : SpectrumFigureOptions
        ``linear``, ``two_sided`` and ``size``.
    xlim : (float, float) or None
        Frequency range shown (Hz), from ``--fmin``/``--fmax``; None: 0 to past Nyquist.
    n_channels : int, optional
        Channels analysed (default ``len(lines)``): beyond :data:`MAX_LINES` a warning names those drawn.
    """
    n_channels = len(lines) if n_channels is None else n_channels
    if n_channels > MAX_LINES:
        warnings.warn(
            f"{report['path']}: drawing channels 0-{MAX_LINES - 1} of {n_channels} in the PNG "
            "(--channel N or --mix for another; the report and the .npy hold every channel)",
            stacklevel=3,
        )
    lines, found = lines[:MAX_LINES], found[:MAX_LINES]
    freqs = lines[0][0]
    values = lines[0][1] if len(lines) == 1 else np.stack([v for _, v, _ in lines])
    name = title_name(report["path"])
    title = (
        f"{name} — N {report['n']}, n_fft {report['n_fft']}, sr {report['sr']} Hz, Δf {report['df']:.4g} Hz, "
        f"window {report['window']}" + (" — two-sided" if options.two_sided else "")
    )
    fig = spectrum_figure(
        freqs,
        values,
        title=title,
        nyquist=report["nyquist"],
        peaks=peak_marks(found, sr=report["sr"], linear=options.linear, two_sided=options.two_sided),
        two_sided=options.two_sided,
        size=parse_size(options.size),
        ylabel="amplitude (linear, 1 = full scale)" if options.linear else "amplitude (dBFS)",
        floor=None if options.linear else max(top for _, _, top in lines) - DB_RANGE,
        xlim=xlim,
    )
    write_bytes_atomic(path, png_bytes(fig))


def peak_marks(found: Sequence[Sequence[Any]], *, sr: float, linear: bool, two_sided: bool) -> list[PeakMark]:
    """The marks of every channel's peaks, in labelling order (rank by rank across the channels; mirrors last).

    A two-sided spectrum shares a tone's amplitude between its image and its mirror, so both are drawn at half the
    one-sided amplitude (-6.02 dB), except at DC and Nyquist, which have no mirror.
    """
    several = len(found) > 1
    marks: list[PeakMark] = []
    mirrors: list[PeakMark] = []
    for rank in range(max((len(p) for p in found), default=0)):
        for channel, channel_peaks in enumerate(found):
            if rank >= len(channel_peaks):
                continue
            peak = channel_peaks[rank]
            value = peak.amplitude if linear else peak.dbfs
            shared = two_sided and 0 < peak.freq_hz < sr / 2
            if shared:
                value = value / 2 if linear else value - 20 * math.log10(2)
            prefix = f"ch{channel} " if several else ""
            text = f"{prefix}{peak.freq_hz:.2f} Hz, {round(peak.dbfs, 1) + 0.0:.1f} dBFS"
            marks.append(PeakMark(peak.freq_hz, value, text, channel))
            if shared:
                mirrors.append(PeakMark(sr - peak.freq_hz, value, f"{prefix}mirror of {peak.freq_hz:.2f} Hz", channel))
    return marks + mirrors


def spectrum_figure(
    freqs: np.ndarray,
    values: np.ndarray,
    *,
    title: str,
    nyquist: float,
    ylabel: str,
    peaks: Sequence[PeakMark] = (),
    two_sided: bool = False,
    size: tuple[int, int] = (1200, 500),
    floor: float | None = None,
    xlim: tuple[float, float] | None = None,
):
    """Draw a magnitude spectrum against frequency, its peaks marked and labelled without overlaps.

    Parameters
    ----------
    freqs : np.ndarray, shape (n,)
        Frequency of each value in Hz (non-decreasing).
    values : np.ndarray, shape (n,) or (channels, n)
        dB or linear values, one line per channel.
    nyquist : float
        sr/2 in Hz, marked with a dashed line.
    peaks : sequence of PeakMark
        Marked with a triangle in the colour of their channel's line (orange for one line) and labelled, in
        this order of priority (:mod:`audiokit.plot.labels`).
    two_sided : bool
        When True the axis spans 0..sr and the mirror half is drawn.
    size : (int, int)
        The PNG's width and height in pixels, exactly.
    floor : float, optional
        Lower limit of the y axis (e.g. the top minus the dB range shown); default just below the lowest value.
    xlim : (float, float), optional
        Frequency range shown in Hz (default: everything, 0 and Nyquist included, 1 % of margin each side).

    Returns
    -------
    matplotlib.figure.Figure
        Laid out and frozen (no layout engine): what is drawn now is what the PNG holds.  The label texts have the
        gid ``"peak-label"``, their leader lines ``"peak-leader"``, the markers ``"peak-marks"``.
    """
    fig = _figure(size)
    ax = fig.add_subplot(1, 1, 1)
    lines = np.atleast_2d(values)
    several = len(lines) > 1
    colours = [f"C{index}" for index in range(len(lines))]
    for index, line in enumerate(lines):
        ax.plot(freqs, line, linewidth=0.8, color=colours[index], label=f"channel {index}" if several else None)
    ax.axvline(nyquist, color="tab:red", linestyle="--", linewidth=0.9, label=f"Nyquist {nyquist:g} Hz")
    right = max(float(freqs[-1]), nyquist)
    left = min(float(freqs[0]), 0.0)
    x_range = xlim if xlim is not None else (left - 0.01 * (right - left), right + 0.01 * (right - left))
    ax.set_xlim(*x_range)
    shown = [p for p in peaks if x_range[0] <= p.freq_hz <= x_range[1]]
    for channel in sorted({p.channel for p in shown}):
        mine = [p for p in shown if p.channel == channel]
        ax.plot(
            [p.freq_hz for p in mine],
            [p.value for p in mine],
            linestyle="none",
            marker="v",
            markersize=MARKER_PT,
            color=colours[channel] if several else "tab:orange",
            markeredgecolor="black" if several else "tab:orange",
            markeredgewidth=0.5,
            gid="peak-marks",
        )
    in_view = (freqs >= x_range[0]) & (freqs <= x_range[1])
    visible = lines[:, in_view] if in_view.any() else lines
    data_top = max([float(np.max(visible))] + [p.value for p in shown])
    bottom = floor if floor is not None else min(float(np.min(visible)), 0.0)
    if floor is None:
        bottom -= 0.02 * max(data_top - bottom, 1e-12)
    if not data_top > bottom:
        data_top = bottom + 1.0
    ax.set_ylim(bottom, _top(data_top, bottom, HEADROOM_STEPS[0]))
    ax.set_xlabel("frequency (Hz)" + ("  [0 … fs: the half above Nyquist mirrors the half below]" if two_sided else ""))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, linewidth=0.3, alpha=0.6)
    renderer = fig.canvas.get_renderer()
    for text in (ax.title, ax.xaxis.label):
        wrap_to_width(text, renderer, size[0] - 2 * EDGE_PX)
    labelled = shown[:MAX_LABELS]
    n_shown = len(shown)
    # Lay out with the provisional y range, find the headroom the labels need, lay out again with it (the tick
    # labels of the final range may move the axes), freeze, place.  The legend gets a note when labels are left
    # out; it is sized for the widest note, n of n, so the final text never outgrows the box the labels avoided.
    noted = n_shown > len(labelled)
    legend = _legend(ax, n_shown if noted else 0)
    fig.draw_without_rendering()
    centre = (ax.bbox.x0 + ax.bbox.x1) / 2  # the title is centred on the axes: it must fit on both sides
    wrap_to_width(ax.title, renderer, 2 * min(centre, size[0] - centre) - 2 * EDGE_PX)
    scene = _Scene(ax, freqs, lines, shown, data_top, bottom, fig.dpi)
    groups = scene.groups(labelled)
    texts = [_label_text(fig, [labelled[i] for i in group], colours if several else None) for group in groups]
    pad_px = LABEL_PAD * LABEL_FONT_PT * fig.dpi / 72
    sizes = [text_box_size(text, renderer, pad_px) for text in texts]
    leads = [max((labelled[i] for i in group), key=lambda m: m.value) for group in groups]
    headroom, loc, placed = scene.search(leads, sizes, legend, renderer)
    if placed < len(groups) and not noted:
        noted, legend = True, _legend(ax, n_shown)
        fig.draw_without_rendering()
        scene = _Scene(ax, freqs, lines, shown, data_top, bottom, fig.dpi)
        headroom, loc, placed = scene.search(leads, sizes, legend, renderer)
    ax.set_ylim(bottom, _top(data_top, bottom, headroom))
    legend.set_loc(loc)
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    scene = _Scene(ax, freqs, lines, shown, data_top, bottom, fig.dpi)
    placements = scene.place(leads, sizes, headroom, legend.get_window_extent(renderer))
    if any(p is None for p in placements) and not noted:  # the frozen axes differ from the searched ones: rare
        noted, legend = True, _legend(ax, n_shown)
        legend.set_loc(loc)
        placements = scene.place(leads, sizes, headroom, legend.get_window_extent(renderer))
    if noted:
        drawn = sum(len(group) for group, p in zip(groups, placements) if p is not None)
        _note_left_out(legend, n_shown - drawn, n_shown)
    for text, placement in zip(texts, placements, strict=True):
        if placement is None:
            text.remove()
            continue
        text.set_position(((placement.box.x0 + pad_px) / size[0], (placement.box.y0 + pad_px) / size[1]))
        if placement.leader is not None:
            (x0, y0), (x1, y1) = placement.leader
            fig.add_artist(_leader_line(fig, (x0, x1), (y0, y1)))
    return fig


def _label_text(fig, marks: Sequence[PeakMark], colours: Sequence[str] | None):
    """The Text of one label: a line per mark (marks whose markers touch share a label), white box behind."""
    return fig.text(
        0,
        0,
        "\n".join(mark.label for mark in marks),
        fontsize=LABEL_FONT_PT,
        color="black" if colours is None or len({m.channel for m in marks}) > 1 else colours[marks[0].channel],
        ha="left",
        va="bottom",
        zorder=5,
        gid="peak-label",
        bbox={"boxstyle": f"square,pad={LABEL_PAD}", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
    )


def _top(data_top: float, bottom: float, headroom: float) -> float:
    """The y limit that leaves ``headroom`` (a fraction of the height) free above ``data_top``."""
    return data_top + headroom / (1.0 - headroom) * (data_top - bottom)


def _legend(ax, n_peaks: int):
    """The legend at its first location; with ``n_peaks``, a note of left-out labels sized for the widest text."""
    from matplotlib.lines import Line2D

    handles, names = ax.get_legend_handles_labels()
    if n_peaks:  # the widest text the note can have (n of n): the final one is no wider, the layout stays valid
        handles.append(Line2D([], [], linestyle="none", gid="left-out"))
        names.append(_left_out_text(n_peaks, n_peaks))
    columns = 1 if len(handles) <= 3 else math.ceil(len(handles) / 3)
    return ax.legend(handles, names, loc=_LEGEND_LOCATIONS[0], fontsize=8, ncol=columns)


def _left_out_text(left_out: int, n_peaks: int) -> str:
    return f"{left_out} of {n_peaks} peak labels left out (no room)"


def _note_left_out(legend, left_out: int, n_peaks: int) -> None:
    """Write the final count into the legend's note."""
    for text in legend.get_texts():
        if text.get_text().endswith("peak labels left out (no room)"):
            text.set_text(_left_out_text(left_out, n_peaks))


def _leader_line(fig, xs: tuple[float, float], ys: tuple[float, float]):
    from matplotlib.lines import Line2D

    width, height = fig.bbox.width, fig.bbox.height
    return Line2D(
        [x / width for x in xs],
        [y / height for y in ys],
        transform=fig.transFigure,
        color="0.35",
        linewidth=0.6,
        zorder=4,
        gid="peak-leader",
    )


class _Scene:
    """The axes in display pixels, for a given headroom: where lines, markers and the legend would be."""

    def __init__(self, ax, freqs: np.ndarray, lines: np.ndarray, marks: Sequence[PeakMark], top: float, bottom: float, dpi):
        bbox = ax.bbox
        self.bounds = Box(bbox.x0, bbox.y0, bbox.x1, bbox.y1)
        self.ax = ax
        self.x_range = ax.get_xlim()
        self.freqs, self.lines, self.marks = freqs, lines, marks
        self.data_top, self.bottom = top, bottom
        self.marker_half = MARKER_PT * dpi / 72 / 2 + 0.5  # half the triangle, and its edge
        self.line_half = 0.8 * dpi / 72 / 2 + 0.5

    def _x(self, f: Sequence[float] | np.ndarray) -> np.ndarray:
        lo, hi = self.x_range
        return self.bounds.x0 + (np.asarray(f, dtype=np.float64) - lo) / (hi - lo) * self.bounds.width

    def _y(self, v: Sequence[float] | np.ndarray, headroom: float) -> np.ndarray:
        top = _top(self.data_top, self.bottom, headroom)
        return self.bounds.y0 + (np.asarray(v, dtype=np.float64) - self.bottom) / (top - self.bottom) * self.bounds.height

    def skyline(self, headroom: float) -> np.ndarray:
        """Highest drawn pixel per column: the lines (with their width) and the markers."""
        xs = self._x(self.freqs)
        sky = np.full(max(1, math.ceil(self.bounds.width)), self.bounds.y0)
        for line in self.lines:
            sky = np.maximum(sky, column_skyline(self.bounds, xs, self._y(line, headroom) + self.line_half))
        if self.marks:
            mx = self._x([m.freq_hz for m in self.marks])
            my = self._y([m.value for m in self.marks], headroom)
            for x, y in zip(mx, my):
                first = max(0, int(math.floor(x - self.marker_half - self.bounds.x0)))
                last = min(sky.size, int(math.ceil(x + self.marker_half - self.bounds.x0)))
                sky[first:last] = np.maximum(sky[first:last], min(y + self.marker_half, self.bounds.y1))
        return sky

    def groups(self, marks: Sequence[PeakMark]) -> list[list[int]]:
        """Indices of ``marks`` grouped where markers touch (centres closer than a marker's width), in the order of
        each group's first mark; a group shares one label, its lines in frequency order."""
        xs = self._x([m.freq_hz for m in marks])
        by_x = sorted(range(len(marks)), key=lambda i: (xs[i], i))
        clusters: list[list[int]] = []
        for i in by_x:
            if clusters and xs[i] - xs[clusters[-1][-1]] < 2 * self.marker_half:
                clusters[-1].append(i)
            else:
                clusters.append([i])
        return sorted(clusters, key=min)

    def anchors(self, leads: Sequence[PeakMark], headroom: float) -> list[tuple[float, float]]:
        """The top centre of each lead marker, in pixels."""
        mx = self._x([m.freq_hz for m in leads])
        my = self._y([m.value for m in leads], headroom) + self.marker_half
        return [(float(x), float(y)) for x, y in zip(mx, my)]

    def place(
        self, leads: Sequence[PeakMark], sizes: Sequence[tuple[float, float]], headroom: float, legend_extent
    ) -> list[Placement | None]:
        legend = Box(legend_extent.x0, legend_extent.y0, legend_extent.x1, legend_extent.y1)
        return layout_labels(self.anchors(leads, headroom), sizes, LabelArea(self.bounds, self.skyline(headroom), [legend]))

    def search(self, leads: Sequence[PeakMark], sizes: Sequence[tuple[float, float]], legend, renderer) -> tuple[float, str, int]:
        """The least headroom (and a legend location) at which every label has room and the legend covers no data;
        else the one that places the most labels.  Returns ``(headroom, location, labels placed)``."""
        extent = legend.get_window_extent(renderer)
        pad_x, pad_y = self.bounds.x1 - extent.x1, self.bounds.y1 - extent.y1
        w, h = extent.width, extent.height
        x_of = {
            "upper right": extent.x0,
            "upper left": self.bounds.x0 + pad_x,
            "upper center": self.bounds.x0 + (self.bounds.width - w) / 2,
        }
        least = (self.marker_half + 4.0) / self.bounds.height
        steps = sorted({max(step, least) for step in HEADROOM_STEPS})
        best: tuple[tuple[bool, int], float, str] | None = None
        for headroom in steps:
            sky = self.skyline(headroom)
            for loc in _LEGEND_LOCATIONS:
                box = Box(x_of[loc], self.bounds.y1 - pad_y - h, x_of[loc] + w, self.bounds.y1 - pad_y)
                first = max(0, int(box.x0 - self.bounds.x0))
                clear = bool(sky[first : max(first + 1, int(math.ceil(box.x1 - self.bounds.x0)))].max() < box.y0)
                placed = layout_labels(self.anchors(leads, headroom), sizes, LabelArea(self.bounds, sky, [box]))
                score = (clear, sum(p is not None for p in placed))
                if best is None or score > best[0]:
                    best = (score, headroom, loc)
                if clear and score[1] == len(sizes):
                    return headroom, loc, score[1]
        assert best is not None
        return best[1], best[2], best[0][1]

"""The spectrum PNG's peak labels and y range (issue 23): the layout step (audiokit.plot.labels) and the figure read back.

The figure tests draw with the real Agg renderer and read every artist's extent from it, as drawn: the label
boxes (the white patch behind each text) overlap neither each other nor the title, the legend or the axis labels,
stay inside the axes and the canvas, and every peak marker is below the top of the axes.  Pixel comparisons are
exact up to 0.5 px (matplotlib snaps text to whole pixels; the layout works in float pixels).
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from PIL import Image

from audiokit.plot.figure import png_bytes
from audiokit.plot.labels import Box, LabelArea, column_skyline, layout_labels, place_labels, wrap_to_width
from audiokit.plot.spectrum import MARKER_PT, PeakMark, spectrum_figure

SNAP = 0.5  # px: text positions are snapped to whole pixels when drawn


# --------------------------------------------------------------------------- the layout step, in pixels


def _disjoint(boxes: list[Box]) -> bool:
    return not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def test_column_skyline_against_a_naive_per_column_maximum(rng):
    bounds = Box(10.0, 5.0, 110.0, 200.0)
    xs = np.sort(rng.uniform(0, 120, 400))
    ys = rng.uniform(0, 250, 400)
    sky = column_skyline(bounds, xs, ys)
    for column in range(100):
        lo, hi = bounds.x0 + column, bounds.x0 + column + 1
        inside = ys[(xs >= lo) & (xs < hi)]
        edges = np.interp([lo, hi], xs, ys)  # the polyline where it crosses the column's edges
        naive = np.clip(max([bounds.y0, *inside, *edges]), bounds.y0, bounds.y1)
        assert sky[column] == pytest.approx(naive, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_place_labels_never_overlaps_and_stays_in_bounds_above_the_data(seed):
    rng = np.random.default_rng(seed)
    bounds = Box(50.0, 40.0, 1150.0, 460.0)
    sky = np.full(1100, 40.0)
    n = 12
    # spread, or a cluster; markers apart by at least their width (touching ones share a label in the figure)
    xs = 60 + np.cumsum(rng.uniform(9, 90, n) if seed % 2 else rng.uniform(9, 15, n))
    ys = rng.uniform(100, 200, n)  # leaves the 12 rows a cluster's staircase needs
    for x, y in zip(xs, ys):
        sky[int(x - 50) - 4 : int(x - 50) + 4] = np.maximum(sky[int(x - 50) - 4 : int(x - 50) + 4], y)
    anchors = [(float(x), float(y)) for x, y in zip(xs, ys)]
    sizes = [(float(rng.uniform(60, 140)), 14.0) for _ in range(n)]
    legend = Box(1000.0, 420.0, 1145.0, 455.0)
    placements = layout_labels(anchors, sizes, LabelArea(bounds, sky, [legend]))
    boxes = [p.box for p in placements if p is not None]
    # a cluster has room for all (a staircase); random spread heights can defeat the greedy layout for one or two
    assert len(boxes) == n if seed % 2 == 0 else len(boxes) >= n - 2
    assert _disjoint(boxes + [legend])
    for (ax, ay), (w, h), p in zip(anchors, sizes, placements):
        if p is None:
            continue
        assert p.box.inside(bounds)
        assert p.box.width == pytest.approx(w) and p.box.height == pytest.approx(h)
        first, last = int(p.box.x0 - bounds.x0), int(np.ceil(p.box.x1 - bounds.x0))
        assert p.box.y0 >= sky[first:last].max()  # above the data it spans
        assert p.box.y0 >= ay  # above its own marker
        if p.leader is None:  # touching its marker
            assert p.box.x0 - 5 <= ax <= p.box.x1 + 5 and p.box.y0 - ay <= 5 + 1e-9
        else:
            assert p.leader[0] == (ax, ay)


def test_place_labels_stacks_a_cluster_as_a_staircase_with_vertical_leaders():
    bounds = Box(0.0, 0.0, 1000.0, 500.0)
    xs = [20.0, 30.0, 45.0, 60.0, 75.0, 90.0, 100.0, 120.0]
    sky = np.zeros(1000)
    sky[10:130] = 300.0
    placements = layout_labels([(x, 300.0) for x in xs], [(130.0, 14.0)] * 8, LabelArea(bounds, sky))
    assert all(p is not None for p in placements)
    boxes = [p.box for p in placements if p is not None]
    assert _disjoint(boxes)
    leaders = [p.leader for p in placements if p is not None and p.leader is not None]
    assert leaders and all(a[0] == b[0] for a, b in leaders)  # vertical
    assert [b.y0 for b in boxes] == sorted((b.y0 for b in boxes), reverse=True)  # rising to the left


def test_place_labels_leaves_out_what_has_no_room_and_takes_the_priority_first():
    bounds = Box(0.0, 0.0, 300.0, 60.0)
    sky = np.zeros(300)
    placements = place_labels([(150.0, 10.0)] * 5, [(250.0, 20.0)] * 5, LabelArea(bounds, sky))
    # the first sits on the anchor; a second would need a leader through the first: none has room
    assert placements[0] is not None and placements[0].leader is None and placements[1:] == [None] * 4
    assert place_labels([(10.0, 10.0)], [(400.0, 10.0)], LabelArea(bounds, sky)) == [None]  # wider than the axes


def test_wrap_to_width_breaks_a_long_title_with_the_renderer_measuring():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), dpi=100)
    FigureCanvasAgg(fig)
    text = fig.text(0, 0, "a-long-file-name.wav — N 22050, n_fft 32768, sr 44100 Hz, Δf 1.346 Hz, window hann", fontsize=10)
    renderer = fig.canvas.get_renderer()
    wrap_to_width(text, renderer, 290)
    assert "\n" in text.get_text() and text.get_window_extent(renderer).width <= 290
    assert text.get_text().replace("\n", " ").replace("  ", " ").split() == (
        "a-long-file-name.wav — N 22050, n_fft 32768, sr 44100 Hz, Δf 1.346 Hz, window hann".split()
    )


# --------------------------------------------------------------------------- the figure, read back


def _harmonic_spectrum(sr: float, f0: float, n_harm: int, n_bins: int = 4097, channels: int = 1):
    """A dB line with Gaussian peaks at the harmonics of f0 over a -120 dB floor, and the peaks as PeakMarks."""
    freqs = np.linspace(0, sr / 2, n_bins)
    lines, marks = [], []
    for channel in range(channels):
        line = np.full(n_bins, -120.0)
        for k in range(1, n_harm + 1):
            level = -20.0 - 3.0 * k - 6.0 * channel
            line = np.maximum(line, level - ((freqs - k * f0) / 3.0) ** 2)
            marks.append(
                PeakMark(k * f0, level, f"{f'ch{channel} ' if channels > 1 else ''}{k * f0:.2f} Hz, {level:.1f} dBFS", channel)
            )
        lines.append(line)
    marks.sort(key=lambda m: -m.value)
    return freqs, np.array(lines) if channels > 1 else lines[0], marks


def _two_sided(freqs, values, marks, sr):
    full = np.concatenate([freqs, sr - freqs[-2:0:-1]])
    line = np.concatenate([values, values[-2:0:-1]]) - 6.02
    shifted = [PeakMark(m.freq_hz, m.value - 6.02, m.label, m.channel) for m in marks]
    mirrors = [PeakMark(sr - m.freq_hz, m.value - 6.02, f"mirror of {m.freq_hz:.2f} Hz", m.channel) for m in marks]
    return full, line, shifted + mirrors


def _read_back(fig):
    """Draw like savefig does and read the extents (pixels) of what a reader sees."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in fig.texts if t.get_gid() == "peak-label"]
    boxes = []
    for text in labels:
        e = text.get_bbox_patch().get_window_extent(renderer)
        boxes.append(Box(e.x0, e.y0, e.x1, e.y1))
    ax = fig.axes[0]

    def box(artist) -> Box:
        e = artist.get_window_extent(renderer)
        return Box(e.x0, e.y0, e.x1, e.y1)

    legend = ax.get_legend()
    marks = [line for line in ax.get_lines() if line.get_gid() == "peak-marks"]
    points = np.concatenate([ax.transData.transform(line.get_xydata()) for line in marks]) if marks else np.empty((0, 2))
    return {
        "labels": boxes,
        "texts": [t.get_text() for t in labels],
        "title": box(ax.title),
        "legend": box(legend),
        "legend_texts": [t.get_text() for t in legend.get_texts()],
        "xlabel": box(ax.xaxis.label),
        "ylabel": box(ax.yaxis.label),
        "axes": Box(ax.bbox.x0, ax.bbox.y0, ax.bbox.x1, ax.bbox.y1),
        "canvas": Box(0.0, 0.0, fig.bbox.width, fig.bbox.height),
        "markers": points,
        "marker_half": MARKER_PT * fig.dpi / 72 / 2,
    }


def _shrunk(b: Box) -> Box:
    return Box(b.x0 + SNAP, b.y0 + SNAP, b.x1 - SNAP, b.y1 - SNAP)


def _assert_readable(seen, n_marks: int, *, all_labelled: bool = True):
    labels = [_shrunk(b) for b in seen["labels"]]
    assert _disjoint(labels), "peak labels overlap"
    for label in labels:
        for other in ("title", "legend", "xlabel", "ylabel"):
            assert not label.overlaps(seen[other]), f"a peak label covers the {other}"
        assert label.inside(seen["axes"]) and label.inside(seen["canvas"])
    for other in ("title", "legend", "xlabel", "ylabel"):
        assert seen[other].inside(Box(-SNAP, -SNAP, seen["canvas"].x1 + SNAP, seen["canvas"].y1 + SNAP)), other
    assert len(seen["markers"]) == n_marks
    tops = seen["markers"][:, 1] + seen["marker_half"]
    assert (tops < seen["axes"].y1).all(), "a peak marker is cut off by the top of the axes"
    lines = sum(text.count("\n") + 1 for text in seen["texts"])
    if all_labelled:
        assert lines == n_marks and not any("left out" in t for t in seen["legend_texts"])
    else:
        note = next(t for t in seen["legend_texts"] if "left out" in t)
        assert note == f"{n_marks - lines} of {n_marks} peak labels left out (no room)"


@pytest.mark.parametrize(
    "f0, n_harm, size",
    [(466.16, 8, (1200, 500)), (100.0, 8, (1200, 500)), (466.16, 5, (800, 400)), (1000.0, 6, (1200, 500))],
    ids=["trumpet-8", "speech-like-cluster-8", "trumpet-5-small", "spread-6"],
)
def test_labels_of_a_harmonic_series_are_all_drawn_and_readable(f0, n_harm, size):
    freqs, values, marks = _harmonic_spectrum(44100, f0, n_harm)
    fig = spectrum_figure(
        freqs, values, title="rec.wav — N 22050, n_fft 32768, sr 44100 Hz", nyquist=22050, ylabel="amplitude (dBFS)",
        peaks=marks, size=size, floor=-160.0,
    )  # fmt: skip
    seen = _read_back(fig)
    _assert_readable(seen, len(marks))
    assert Image.open(io.BytesIO(png_bytes(fig))).size == size


def test_two_sided_mirror_labels_stay_inside_and_clear_of_the_legend():
    freqs, values, marks = _harmonic_spectrum(16000, 440.0, 6)
    full, line, both = _two_sided(freqs, values, marks, 16000)
    fig = spectrum_figure(
        full, line, title="tones.wav — two-sided", nyquist=8000, ylabel="amplitude (dBFS)", peaks=both,
        two_sided=True, size=(1200, 500), floor=-160.0,
    )  # fmt: skip
    seen = _read_back(fig)
    _assert_readable(seen, len(both))
    assert sum("mirror of" in t for t in seen["texts"]) >= 1


def test_multichannel_labels_are_readable_and_name_their_channel():
    freqs, values, marks = _harmonic_spectrum(44100, 466.16, 5, channels=3)
    fig = spectrum_figure(
        freqs, values, title="trumpet_3ch.wav", nyquist=22050, ylabel="amplitude (dBFS)", peaks=marks,
        size=(1200, 500), floor=-160.0,
    )  # fmt: skip
    seen = _read_back(fig)
    _assert_readable(seen, len(marks))
    assert all(line.startswith("ch") for text in seen["texts"] for line in text.split("\n"))


def test_too_many_labels_for_a_small_canvas_are_left_out_and_counted():
    freqs, values, marks = _harmonic_spectrum(44100, 200.0, 30)
    fig = spectrum_figure(
        freqs, values, title="dense.wav — N 22050, n_fft 32768, sr 44100 Hz, Δf 1.346 Hz, window hann",
        nyquist=22050, ylabel="amplitude (dBFS)", peaks=marks, size=(400, 200), floor=-160.0,
    )  # fmt: skip
    seen = _read_back(fig)
    _assert_readable(seen, len(marks), all_labelled=False)
    assert "\n" in fig.axes[0].title.get_text()  # the long title wrapped to fit 400 px
    assert Image.open(io.BytesIO(png_bytes(fig))).size == (400, 200)


def test_linear_amplitude_headroom_above_the_highest_peak():
    freqs = np.linspace(0, 4000, 2049)
    values = np.zeros_like(freqs)
    marks = []
    for k, amp in enumerate([0.5, 0.25, 0.125], 1):
        values = np.maximum(values, amp * np.exp(-(((freqs - 50 * k) / 4) ** 2)))
        marks.append(PeakMark(50.0 * k, amp, f"{50.0 * k:.2f} Hz, {20 * np.log10(amp):.1f} dBFS"))
    fig = spectrum_figure(
        freqs, values, title="three.wav", nyquist=4000, ylabel="amplitude (linear)", peaks=marks, size=(640, 300)
    )
    seen = _read_back(fig)
    _assert_readable(seen, 3)
    assert fig.axes[0].get_ylim()[1] > 0.5

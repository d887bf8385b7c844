"""The time-frequency figures read as a person reads them (issue 23): the layout step and the axes' arithmetic.

References: closed-form frame spans (frame ``m``'s window centre ``t_0 + m·H/sr``, boundaries at the midpoints),
a naive max over the overlapping cells for :func:`pool_cells`, and the label boxes Pillow measures (no two overlap,
none leaves the canvas).  Pixel positions are integers: tolerances are one pixel where a value is rounded to one.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from audiokit.plot import axes, raster

pytestmark = pytest.mark.skipif(not raster.available(), reason="Pillow without FreeType or no DejaVu Sans")


def _canvas(size):
    return raster._Canvas(*size)


def _layout(size=(1200, 600), n_panels=1, **kw):
    args = dict(
        n_panels=n_panels,
        x_axis=axes.Axis(0.0, 2.0),
        y_axis=axes.Axis(0.0, 8000.0),
        vmin=-80.0,
        vmax=0.0,
        title="chirp.wav — spectrogram, sr 16000 Hz, win 4096 (256 ms), hop 512 (32 ms), n_fft 4096, hann",
        colorbar_label="dB re max",
        ylabel="frequency (Hz)",
        size=size,
    )
    args.update(kw)
    return raster.figure_layout(_canvas(size), **args)


def _assert_readable(layout):
    width, height = layout.size
    boxes = [t.box for t in layout.texts]
    for text in layout.texts:
        left, top, right, bottom = text.box
        assert 0 <= left and 0 <= top and right <= width and bottom <= height, f"{text.text!r} leaves the canvas"
    for a, b in itertools.combinations(layout.texts, 2):
        assert not raster._overlap(a.box, b.box, margin=0), f"{a.text!r} overlaps {b.text!r}"
    for x0, y0, x1, y1 in layout.panels:  # no label over an image
        assert all(not raster._overlap(box, (x0, y0, x1, y1), margin=0) for box in boxes)


# ------------------------------------------------------------------------------------------------ the time rule
def test_frame_spans_cover_the_file_from_zero_to_its_duration():
    # 2 s at 16 kHz, 256 ms windows (4096), hop 512, uncentred: 57 frames, centres 0.128 + m*0.032 s
    n_frames = 1 + (32000 - 4096) // 512
    edges = axes.frame_time_edges(np.arange(n_frames + 1), first_centre=0.128, hop=0.032, duration=2.0)
    assert edges[0] == 0.0 and edges[-1] == 2.0  # the whole file, not 0.128 .. 1.872
    # inner boundaries: midpoints of neighbouring centres, t_0 + (m - 1/2) H
    np.testing.assert_allclose(edges[1:-1], 0.128 + (np.arange(1, n_frames) - 0.5) * 0.032, rtol=0, atol=1e-12)
    # pooled columns: the edges of the frames they start with
    pooled = axes.frame_time_edges(np.array([0, 10, 20, n_frames]), first_centre=0.128, hop=0.032, duration=2.0)
    np.testing.assert_allclose(pooled, [0.0, 0.128 + 9.5 * 0.032, 0.128 + 19.5 * 0.032, 2.0], rtol=0, atol=1e-12)


def test_centred_frames_and_no_frames_keep_the_axis_on_the_file():
    edges = axes.frame_time_edges(np.arange(5), first_centre=0.0, hop=0.01, duration=0.035)  # centres 0, .01, .02, .03
    np.testing.assert_allclose(edges, [0.0, 0.005, 0.015, 0.025, 0.035], rtol=0, atol=1e-15)
    assert list(axes.frame_time_edges(np.array([0, 0]), first_centre=0.2, hop=0.01, duration=0.1)) == [0.0, 0.1]


def test_time_axis_has_a_zero_tick_on_the_left_edge_and_ends_at_the_duration():
    layout = _layout(size=(800, 400))
    x0, _, x1, _ = layout.panels[0]
    values = [v for v, _ in layout.x_ticks]
    assert values[0] == 0.0 and layout.x_ticks[0][1] == x0
    assert layout.x_axis.low == 0.0 and layout.x_axis.high == 2.0 and values[-1] == pytest.approx(2.0)
    assert layout.x_ticks[-1][1] == x1 - 1  # 2.00 s drawn on the last pixel column
    labels = [t.text for t in layout.texts if t.role == "x"]
    assert labels[0] in ("0", "0.0", "0.00") and labels[-1] in ("2", "2.0", "2.00")


# ------------------------------------------------------------------------------------------- pooling the cells
def _naive_pool(image, src, dst):
    out = np.empty((image.shape[0], len(dst) - 1))
    for i in range(len(dst) - 1):
        met = [j for j in range(len(src) - 1) if src[j] < dst[i + 1] and src[j + 1] > dst[i]]  # overlap > 0
        out[:, i] = image[:, met].max(axis=1)
    return out


@pytest.mark.parametrize("n_src, n_dst", [(50, 7), (7, 50), (13, 13), (400, 333)])
def test_pool_cells_is_the_max_of_the_cells_each_pixel_meets(rng, n_src, n_dst):
    src = np.concatenate([[0.0], np.cumsum(rng.uniform(0.2, 1.0, n_src))])
    dst = np.linspace(0.0, src[-1], n_dst + 1)
    image = rng.standard_normal((3, n_src))
    np.testing.assert_array_equal(axes.pool_cells(image, src, dst, axis=1), _naive_pool(image, src, dst))


def test_a_one_frame_click_survives_the_pooling(rng):
    image = np.full((4, 5000), -80.0)
    image[:, 1234] = 0.0
    src = np.linspace(0, 10, 5001)
    out = axes.pool_cells(image, src, np.linspace(0, 10, 701), axis=1)
    assert np.count_nonzero(out[0] == 0.0) == 1


# ----------------------------------------------------------------------------------------------------- ticks
@pytest.mark.parametrize("low, high, bins", [(-0.5, 19.5, 9), (-0.5, 12.5, 4), (-0.5, 2.5, 9), (-0.5, 119.5, 6)])
def test_integer_ticks_are_integers_at_a_round_step(low, high, bins):
    ticks = axes.integer_ticks(low, high, bins)
    assert ticks and all(isinstance(t, int) for t in ticks) and low <= ticks[0] and ticks[-1] <= high
    steps = set(np.diff(ticks).tolist()) or {1}
    assert len(steps) == 1 and steps.pop() in (1, 2, 5, 10, 20, 50) and len(ticks) - 1 <= bins


def test_log_ticks_are_round_and_inside():
    assert axes.log_ticks(10.77, 8000.0, 20) == [20, 50, 100, 200, 500, 1000, 2000, 5000]
    assert axes.log_ticks(10.77, 22050.0, 4) == [100, 1000, 10000]
    assert [axes.tick_label(v, kilo=True) for v in (50.0, 1000.0, 2000.0, 12000.0, 1500.0)] == ["50", "1k", "2k", "12k", "1.5k"]


def test_log_axis_places_a_frequency_at_its_log_fraction():
    axis = axes.Axis(20.0, 20000.0, "log")
    assert axis.frac(200.0) == pytest.approx(1 / 3, abs=1e-12) and axis.frac(2000.0) == pytest.approx(2 / 3, abs=1e-12)
    edges = axis.cell_edges(3)
    np.testing.assert_allclose(edges, [20, 200, 2000, 20000], rtol=1e-12)
    with pytest.raises(ValueError, match="log axis"):
        axes.Axis(0.0, 100.0, "log")


# --------------------------------------------------------------------------------- labels never overlap
MEL = (
    [-0.1, 2.1, 5.3, 8.0, 12.9, 19.2, 27.0, 36.6, 43.4, 54.8, 63.7, 79.5],
    ["50", "100", "200", "300", "500", "1k", "2k", "3k", "4k", "6k", "8k", "12k"],
)


@pytest.mark.parametrize("size", [(1200, 600), (800, 400), (400, 300), (200, 150), (3000, 200)])
@pytest.mark.parametrize("n_panels", [1, 2, 6, 8])
@pytest.mark.parametrize(
    "kind",
    [
        {},
        {"y_axis": axes.Axis(10.77, 22050.0, "log")},
        {"y_axis": axes.Axis(-0.5, 79.5), "mel_ticks": MEL},
        {"y_axis": axes.Axis(-0.5, 38.5), "y_integer": True, "ylabel": "coefficient (c, Δ, ΔΔ)"},
        {"x_axis": axes.Axis(0.0, 6.35), "vmin": -612.4, "vmax": 151.0},
        {"x_axis": axes.Axis(0.0, 36000.0), "title": "a very long file name " * 8},
    ],
    ids=["linear", "log", "mel", "integer", "odd-ranges", "long-title"],
)
def test_no_label_overlaps_another_or_leaves_the_canvas(size, n_panels, kind):
    layout = _layout(size=size, n_panels=n_panels, **kind)
    _assert_readable(layout)
    assert len(layout.panels) == n_panels and [v for v, _ in layout.x_ticks]  # the time axis keeps its ticks
    assert any(t.role == "title" for t in layout.texts)
    line = _canvas(size).line_height
    if all(y1 - y0 >= 3 * line for _, y0, _, y1 in layout.panels):
        assert all(len(ticks) >= 2 for ticks in layout.y_ticks), "each panel keeps two values of its axis"


def test_panels_share_the_height_and_keep_their_channel_labels():
    layout = _layout(size=(800, 400), n_panels=6)
    heights = {y1 - y0 for _, y0, _, y1 in layout.panels}
    assert max(heights) - min(heights) <= 1 and layout.panels[-1][3] < 400
    labels = [t.text for t in layout.texts if t.role == "ylabel"]
    assert labels == [f"ch {i}" for i in range(6)]  # "ch i: frequency (Hz)" is taller than a panel


def test_title_wraps_at_its_commas_and_stays_whole_when_it_fits():
    title = _layout().texts  # 1200 px: one line, the whole title
    whole = [t.text for t in title if t.role == "title"]
    assert whole == ["chirp.wav — spectrogram, sr 16000 Hz, win 4096 (256 ms), hop 512 (32 ms), n_fft 4096, hann"]
    lines = [t.text for t in _layout(size=(400, 300)).texts if t.role == "title"]
    assert len(lines) >= 2 and all(line.endswith(",") for line in lines[:-1]) and " ".join(lines) == whole[0]


def test_integer_axis_ticks_are_the_coefficient_indices():
    layout = _layout(y_axis=axes.Axis(-0.5, 19.5), y_integer=True, ylabel="coefficient")
    values = [v for v, _ in layout.y_ticks[0]]
    labels = [t.text for t in layout.texts if t.role == "y"]
    assert values == [float(int(v)) for v in values] and labels == [str(int(v)) for v in values] and 0.0 in values
    # each tick at the centre of its row: row k spans [k - 1/2, k + 1/2) of the 20 rows
    _, y0, _, y1 = layout.panels[0]
    for value, y in layout.y_ticks[0]:
        assert abs(y - (y1 - (value + 0.5) / 20 * (y1 - y0))) <= 1


def test_colorbar_ticks_span_the_given_range():
    layout = _layout(vmin=-40.0, vmax=60.0)
    values = [v for v, _ in layout.c_ticks]
    assert values[0] == -40.0 and values[-1] == 60.0
    _, cb_y0, _, cb_y1 = layout.colorbar
    assert layout.c_ticks[0][1] == cb_y1 - 1 and layout.c_ticks[-1][1] == cb_y0
    assert all(math.isfinite(v) for v in values)

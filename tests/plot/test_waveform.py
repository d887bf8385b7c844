"""The waveform view's numbers and picture: the streamed min/max envelope against a naive per-column reference,
the dBFS mapping in closed form, and the PNG read back -- the Pillow one ``audiokit waveform`` draws and the
matplotlib figure of the library (exact --size for any channel count, panels inside the canvas, time axis covering
the segment, the band's pixels where the amplitude axis puts the envelope, clipped columns in red and only there).

The envelope is compared for exact equality: a minimum or maximum picks one of the input values, whatever the
block boundaries, so float64 results are bit-identical to the naive ones.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from PIL import Image

from audiokit.dsp.envelope import ColumnEnvelope, column_edges
from audiokit.plot import raster
from audiokit.plot.figure import png_bytes
from audiokit.plot.raster import _Canvas
from audiokit.plot.waveform import CLIP_COLOUR, DB_RANGE, WaveformPicture, db_position, waveform_figure
from audiokit.plot.waveform_raster import CLIP_RGB, ENVELOPE_RGB, MARGIN, STRIP, draw_waveform, waveform_layout, waveform_png


def naive_envelope(x: np.ndarray, n_columns: int, clip_level: float):
    """Per column c, samples floor(c*n/W) .. floor((c+1)*n/W) - 1: min, max and the count of |x| >= clip_level."""
    n = x.shape[1]
    low, high, clipped = [], [], []
    for c in range(n_columns):
        part = x[:, (c * n) // n_columns : ((c + 1) * n) // n_columns]
        low.append(part.min(axis=1))
        high.append(part.max(axis=1))
        clipped.append((np.abs(part) >= clip_level).sum(axis=1))
    return np.array(low).T, np.array(high).T, np.array(clipped).T


@pytest.mark.parametrize(
    "channels, n, columns, block",
    [(1, 1000, 37, 64), (2, 48_000, 1200, 4096), (3, 500, 500, 7), (1, 10, 1, 3), (2, 123_457, 800, 100_000)],
)
def test_envelope_equals_a_naive_per_column_min_max(rng, channels, n, columns, block):
    x = rng.uniform(-1.05, 1.05, (channels, n)).astype(np.float32)
    level = 1.0 - 2.0**-15
    env = ColumnEnvelope(channels, n, columns, level)
    for start in range(0, n, block):
        env.push(x[:, start : start + block])
    low, high, clipped = naive_envelope(x.astype(np.float64), columns, level)
    np.testing.assert_array_equal(env.low, low)
    np.testing.assert_array_equal(env.high, high)
    np.testing.assert_array_equal(env.clipped, clipped)
    np.testing.assert_array_equal(env.peak, np.abs(x).max(axis=1))
    assert env.position == n


def test_envelope_does_not_depend_on_the_block_sizes(rng):
    x = rng.standard_normal((2, 30_001))
    results = []
    for sizes in ([30_001], [1] * 50 + [29_951], list(rng.integers(1, 3000, 40))):
        env = ColumnEnvelope(2, x.shape[1], 640, 1.0)
        start = 0
        for size in sizes:
            env.push(x[:, start : start + size])
            start += size
        env.push(x[:, start:])
        results.append((env.low.copy(), env.high.copy(), env.clipped.copy()))
    for a, b in itertools.pairwise(results):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)


def test_column_edges_cover_every_sample_once_and_refuse_empty_columns():
    edges = column_edges(1003, 10)
    assert edges[0] == 0 and edges[-1] == 1003 and (np.diff(edges) >= 100).all()
    with pytest.raises(ValueError):
        column_edges(5, 6)
    env = ColumnEnvelope(1, 4, 2, 1.0)
    with pytest.raises(ValueError, match="more than the 4 declared"):
        env.push(np.zeros((1, 5)))


def test_db_position_in_closed_form():
    values = np.array([1.0, -1.0, 0.5, 10 ** (-60 / 20), 1e-9, 0.0, 2.0])
    expected = np.array([1.0, -1.0, (20 * np.log10(0.5) + DB_RANGE) / DB_RANGE, 0.0, 0.0, 0.0, 1 + 20 * np.log10(2) / DB_RANGE])
    np.testing.assert_allclose(db_position(values), expected, rtol=0, atol=1e-15)


def _picture(
    channels: int, n: int = 40_000, sr: int = 8000, clip_from: float | None = None, scale: str = "linear", start_s: float = 0.0
):
    t = np.arange(n) / sr
    x = np.stack([0.5 * np.sin(2 * np.pi * (c + 1) * t) for c in range(channels)])
    level = 1.0 - 2.0**-15
    if clip_from is not None:
        x[0, int(clip_from * sr) :] = np.clip(4 * x[0, int(clip_from * sr) :], -1, 1)
    env = ColumnEnvelope(channels, n, 800, level)
    env.push(x)
    e = env.edges
    return WaveformPicture(
        path="w.wav", sr=sr, channels=channels, subtype="PCM_16", start_s=start_s, duration_s=n / sr,
        times=start_s + (e[:-1] + e[1:]) / 2 / sr, low=env.low, high=env.high, clipped=env.clipped,
        channel_labels=list(range(channels)), scale=scale,
    )  # fmt: skip


def _rgb(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)


def _is(image: np.ndarray, rgb: tuple[int, int, int]) -> np.ndarray:
    return (image == np.array(rgb)).all(axis=-1)


@pytest.mark.parametrize("channels", [1, 2, 6, 12])
@pytest.mark.parametrize("size", [(1200, 500), (800, 400), (300, 400), (3000, 1200)])
def test_the_png_is_exactly_size_with_every_panel_and_label_inside(channels, size):
    picture = _picture(channels)
    image = Image.open(io.BytesIO(waveform_png(picture, size)))
    assert image.size == size and image.mode == "RGB"
    layout = waveform_layout(_Canvas(*size), picture, size)
    assert len(layout.panels) == channels
    for a, b in itertools.pairwise(layout.panels):
        assert a[3] < b[1]  # stacked, top to bottom, not overlapping
    for x0, y0, x1, y1 in layout.panels:
        assert 0 < x0 < x1 <= size[0] and 0 < y0 < y1 <= size[1]
    assert (layout.x_axis.low, layout.x_axis.high) == (0.0, 5.0)  # the time axis covers the file
    assert all(0.0 <= v <= 5.0 for v, _ in layout.x_ticks) and len(layout.x_ticks) >= 2
    for text in layout.texts:
        left, top, right, bottom = text.box
        assert left >= 0 and top >= 0 and right <= size[0] and bottom <= size[1], text
    roles = {t.role for t in layout.texts}
    assert {"title", "x", "xlabel", "unit"} <= roles and ("ylabel" in roles) == (channels > 1)
    x_boxes = sorted(t.box for t in layout.texts if t.role == "x")
    assert all(a[2] < b[0] for a, b in itertools.pairwise(x_boxes))  # time labels do not touch


def test_the_time_axis_is_the_files_time_for_a_segment():
    layout = waveform_layout(_Canvas(800, 300), _picture(1, start_s=300.0), (800, 300))
    assert (layout.x_axis.low, layout.x_axis.high) == (300.0, 305.0)
    labels = [t.text for t in layout.texts if t.role == "x"]
    assert labels[0] == "300" and labels[-1] == "305"
    assert layout.x_pixel(300.0) == layout.panels[0][0] and layout.x_pixel(305.0) == layout.panels[0][2] - 1


@pytest.mark.parametrize("scale", ["linear", "dbfs"])
def test_the_band_spans_the_envelope_on_the_amplitude_axis(scale):
    """A 1 Hz sine at 0.5: a column at the crest spans 0 .. 0.5 (0 dBFS - 6 dB); the axis reaches MARGIN x 1."""
    picture = _picture(1, scale=scale)
    size = (800, 400)
    layout = waveform_layout(_Canvas(*size), picture, size)
    image = _rgb(waveform_png(picture, size))
    assert layout.reach == [MARGIN]
    x = layout.x_pixel(0.25)  # the crest of the 1 Hz sine
    column = np.flatnonzero(_is(image[:, x], ENVELOPE_RGB))
    level = 0.5 if scale == "linear" else float(db_position(np.array(0.5)))
    crest = int(layout.y_pixel(0, level))
    assert abs(int(column.min()) - crest) <= 1  # the band's top is the column's maximum (one pixel of pooling)
    assert column.max() < layout.y_pixel(0, 0.0)  # and the column holds no negative values
    assert not _is(image, CLIP_RGB).any()
    assert "red:" not in next(t.text for t in layout.texts if t.role == "title")


def test_more_channels_than_the_height_holds_are_left_out_with_a_warning():
    with pytest.warns(UserWarning, match=r"drawing \d+ of 40 channels"):
        data = waveform_png(_picture(40, n=2000), (400, 200))
    assert Image.open(io.BytesIO(data)).size == (400, 200)
    with pytest.warns(UserWarning, match=r"drawing \d+ of 40 channels"):
        fig = waveform_figure(_picture(40, n=2000), size=(400, 200))
    assert Image.open(io.BytesIO(png_bytes(fig))).size == (400, 200)


@pytest.mark.parametrize("scale", ["linear", "dbfs"])
def test_clipped_columns_are_red_and_only_they(scale):
    picture = _picture(2, clip_from=3.0, scale=scale)
    size = (800, 400)
    layout = waveform_layout(_Canvas(*size), picture, size)
    image = _rgb(waveform_png(picture, size))
    red = _is(image, CLIP_RGB)
    x0, y0, x1, y1 = layout.panels[0]
    columns = np.flatnonzero(red.any(axis=0))
    x_clip = layout.x_pixel(3.0)
    assert columns.size > 100 and columns.min() >= x_clip - 2 and columns.max() <= x1 - 1  # red from 3 s on only
    assert not red[layout.panels[1][1] :].any()  # channel 1 is not clipped
    strip = STRIP / MARGIN * layout.reach[0]  # the strips: beyond 1.01 x the largest value (here full scale)
    top, bottom = int(layout.y_pixel(0, strip)), int(layout.y_pixel(0, -strip))
    assert top - y0 >= 2 and y1 - bottom >= 2
    red_columns = red[y0:y1, x0:x1].any(axis=0)  # a red column has both strips whole
    assert (red[y0:top, x0:x1].all(axis=0) == red_columns).all() and (red[bottom:y1, x0:x1].all(axis=0) == red_columns).all()
    assert not red[y0:y1, : x_clip - 2].any()
    title = " ".join(t.text for t in layout.texts if t.role == "title")
    assert f"red: samples at full scale (ch0 {int(picture.clipped[0].sum())}, ch1 0)" in title


def test_the_png_is_deterministic_and_drawn_without_matplotlib_when_pillow_can(tmp_path, monkeypatch):
    picture = _picture(2, clip_from=3.0, scale="dbfs")
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    draw_waveform(str(first), picture, size="640x360")
    draw_waveform(str(second), picture, size="640x360")
    assert first.read_bytes() == second.read_bytes() == waveform_png(picture, (640, 360))
    monkeypatch.setattr(raster, "available", lambda: False)  # no FreeType or font: the matplotlib figure
    fallback = tmp_path / "m.png"
    draw_waveform(str(fallback), picture, size="640x360")
    data = fallback.read_bytes()
    assert data != first.read_bytes() and Image.open(io.BytesIO(data)).size == (640, 360)


@pytest.mark.parametrize("channels", [1, 6])
def test_the_matplotlib_figure_is_exactly_size_with_every_panel_inside(channels):
    size = (800, 400)
    fig = waveform_figure(_picture(channels), size=size)
    assert Image.open(io.BytesIO(png_bytes(fig))).size == size
    panels = [ax for ax in fig.axes if ax.get_gid() == "waveform-panel"]
    assert len(panels) == channels
    for a, b in itertools.pairwise([ax.bbox for ax in panels]):
        assert a.y0 > b.y1
    for ax in panels:
        assert ax.get_xlim() == (0.0, 5.0)


CLIP_COLOUR_HEX = "#d62728"  # matplotlib's tab:red


def test_clip_colours_are_tab_red_and_blue():
    from matplotlib.colors import to_hex, to_rgb

    assert to_hex(CLIP_COLOUR) == CLIP_COLOUR_HEX == "#{:02x}{:02x}{:02x}".format(*CLIP_RGB)
    assert tuple(round(255 * c) for c in to_rgb("tab:blue")) == ENVELOPE_RGB

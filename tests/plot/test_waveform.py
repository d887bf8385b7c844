"""The waveform view's numbers and picture: the streamed min/max envelope against a naive per-column reference,
the dBFS mapping in closed form, and the figure read back (exact --size for any channel count, panels inside the
canvas, time axis covering the segment, clipped columns in red and only there).

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
from audiokit.plot.figure import png_bytes
from audiokit.plot.waveform import CLIP_COLOUR, DB_RANGE, WaveformPicture, db_position, waveform_figure


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


def _picture(channels: int, n: int = 40_000, sr: int = 8000, clip_from: float | None = None, scale: str = "linear"):
    t = np.arange(n) / sr
    x = np.stack([0.5 * np.sin(2 * np.pi * (c + 1) * t) for c in range(channels)])
    level = 1.0 - 2.0**-15
    if clip_from is not None:
        x[0, int(clip_from * sr) :] = np.clip(4 * x[0, int(clip_from * sr) :], -1, 1)
    env = ColumnEnvelope(channels, n, 800, level)
    env.push(x)
    e = env.edges
    return WaveformPicture(
        path="w.wav", sr=sr, channels=channels, subtype="PCM_16", start_s=0.0, duration_s=n / sr,
        times=(e[:-1] + e[1:]) / 2 / sr, low=env.low, high=env.high, clipped=env.clipped,
        channel_labels=list(range(channels)), scale=scale,
    )  # fmt: skip


@pytest.mark.parametrize("channels", [1, 2, 6, 12])
@pytest.mark.parametrize("size", [(1200, 500), (800, 400), (300, 400)])
def test_the_figure_is_exactly_size_with_every_panel_inside(channels, size):
    fig = waveform_figure(_picture(channels), size=size)
    data = png_bytes(fig)
    assert Image.open(io.BytesIO(data)).size == size
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_gid() == "waveform-panel"]
    assert len(panels) == channels
    boxes = [ax.bbox for ax in panels]
    for a, b in itertools.pairwise(boxes):
        assert a.y0 > b.y1  # stacked, top to bottom, not overlapping
    for ax in panels:
        assert 0 <= ax.bbox.x0 and ax.bbox.x1 <= size[0] and 0 <= ax.bbox.y0 and ax.bbox.y1 <= size[1]
        assert ax.get_xlim() == (0.0, 5.0)  # the time axis covers the file
    for text in fig.texts + [panels[-1].xaxis.label]:
        extent = text.get_window_extent(renderer)
        assert extent.x0 >= -0.5 and extent.x1 <= size[0] + 0.5 and extent.y1 <= size[1] + 0.5, text.get_text()


def test_more_channels_than_the_height_holds_are_left_out_with_a_warning():
    with pytest.warns(UserWarning, match=r"drawing \d+ of 40 channels"):
        fig = waveform_figure(_picture(40, n=2000), size=(400, 200))
    assert Image.open(io.BytesIO(png_bytes(fig))).size == (400, 200)


@pytest.mark.parametrize("scale", ["linear", "dbfs"])
def test_clipped_columns_are_red_and_only_they(scale):
    fig = waveform_figure(_picture(1, clip_from=3.0, scale=scale), size=(800, 300))
    image = np.asarray(Image.open(io.BytesIO(png_bytes(fig))).convert("RGB")).astype(int)
    ax = fig.axes[0]
    red = np.array([int(CLIP_COLOUR_HEX[i : i + 2], 16) for i in (1, 3, 5)])
    is_red = (np.abs(image - red).sum(axis=2) < 30).any(axis=0)  # columns with a red pixel
    x_clip = ax.transData.transform((3.0, 0))[0]
    columns = np.flatnonzero(is_red)
    assert columns.size > 100 and columns.min() >= x_clip - 2  # red from 3 s on, none before
    assert "red: samples at full scale (ch0 " in fig.texts[0].get_text()


CLIP_COLOUR_HEX = "#d62728"  # matplotlib's tab:red


def test_clip_colour_is_tab_red():
    from matplotlib.colors import to_hex

    assert to_hex(CLIP_COLOUR) == CLIP_COLOUR_HEX

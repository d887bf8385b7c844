"""Tests of audiokit.plot.raster: the matplotlib-free time-frequency PNG."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from audiokit.plot import raster
from audiokit.plot.picture import TimeFreqPicture

PIL = pytest.importorskip("PIL.Image")
pytestmark = pytest.mark.skipif(not raster.available(), reason="Pillow without FreeType or no DejaVu Sans")


def test_magma_table_is_matplotlibs():
    matplotlib = pytest.importorskip("matplotlib")
    expected = matplotlib.colormaps["magma"](np.arange(256), bytes=True)[:, :3]
    assert np.array_equal(raster.colormap_lut("magma"), expected)
    assert np.array_equal(raster.colormap_lut("viridis"), matplotlib.colormaps["viridis"](np.arange(256), bytes=True)[:, :3])
    with pytest.raises(ValueError, match="nope"):
        raster.colormap_lut("nope")


@pytest.mark.parametrize(
    "low, high, bins, ticks",
    [
        (0.0, 22050.0, 9, [0, 2500, 5000, 7500, 10000, 12500, 15000, 17500, 20000]),
        (0.023, 599.99, 9, [100, 200, 300, 400, 500]),
        (-41.6, 0.0, 9, [-40, -35, -30, -25, -20, -15, -10, -5, 0]),
        (0.0125, 11.99, 9, [2, 4, 6, 8, 10]),
        (0.0, 1.0, 4, [0, 0.25, 0.5, 0.75, 1.0]),
    ],
)
def test_nice_ticks(low, high, bins, ticks):
    values, _ = raster.nice_ticks(low, high, bins)
    assert np.allclose(values, ticks)


def _png(images, **kw):
    args = dict(t_start=0.0, t_end=10.0, f_low=0.0, f_high=8000.0, title="t", size=(1200, 600))
    args.update(kw)
    data = raster.spectrogram_png(images, TimeFreqPicture(**args))
    return np.asarray(PIL.open(io.BytesIO(data)).convert("RGB"))


@pytest.mark.parametrize("rows, cols", [(1025, 5000), (201, 1200), (80, 300), (3, 7)])
def test_a_one_row_line_is_never_lost_whatever_the_sizes(rows, cols):
    image = np.full((rows, cols), -80.0)
    image[rows // 3, :] = 0.0  # one loud row
    pixels = _png(image, size=(900, 500))
    assert pixels.shape == (500, 900, 3)
    top = raster.colormap_lut("magma")[255]
    loud_rows = np.flatnonzero((pixels == top).all(axis=2).sum(axis=1) > 600)
    assert loud_rows.size >= 1  # drawn across the whole width


def test_two_channels_share_one_colorbar_and_time_axis():
    images = np.stack([np.linspace(-60, 0, 40 * 50).reshape(40, 50), np.full((40, 50), -30.0)])
    pixels = _png(images, ylabel="frequency (Hz)")
    assert pixels.shape == (600, 1200, 3)


@pytest.mark.slow
def test_png_job_imports_no_matplotlib(tmp_path):
    import soundfile as sf

    t = np.arange(16000) / 16000
    sf.write(tmp_path / "a.wav", 0.5 * np.sin(2 * np.pi * 440 * t), 16000, subtype="PCM_16")
    code = (
        "import sys; from audiokit.cli.app import main; code = main(['mel', 'a.wav', '-o', 'a.png', '-q']); "
        "print(code, 'matplotlib' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.stdout.split() == ["a.png", "0", "False"], proc.stderr[-2000:]
    with PIL.open(tmp_path / "a.png") as image:
        assert image.size == (1200, 600)


@pytest.mark.parametrize("rows, n_columns, width, step", [(1025, 5000, 120, 125), (80, 1200, 1200, 300), (7, 1000, 33, 97)])
def test_column_pooler_on_frame_major_chunks_equals_the_naive_max(rng, rows, n_columns, width, step):
    from audiokit.plot import ColumnPooler

    image = np.asfortranarray(rng.standard_normal((rows, n_columns)).astype(np.float32))
    edges = np.round(np.linspace(0, n_columns, min(n_columns, width) + 1)).astype(int)
    naive = np.stack([image[:, a:b].max(axis=1) for a, b in zip(edges[:-1], edges[1:], strict=True)], axis=1)
    pooler = ColumnPooler(rows, n_columns, width)
    for start in range(0, n_columns, step):  # F-ordered (rows, frames) chunks, as the STFT stream yields them
        pooler.add(image[:, start : start + step])
    assert np.array_equal(pooler.image, naive)

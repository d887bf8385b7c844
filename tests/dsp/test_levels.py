"""audiokit.dsp.levels: streaming peak, RMS, DC offset and clip count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiokit.dsp.levels import LevelMeter, dbfs


@pytest.mark.parametrize(("value", "expected"), [(1.0, 0.0), (0.5, 20 * math.log10(0.5)), (10.0, 20.0), (1e-5, -100.0)])
def test_dbfs(value, expected):
    assert dbfs(value) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("value", [0.0, -0.0, -1.0])
def test_dbfs_of_zero_is_minus_infinity(value):
    assert dbfs(value) == -math.inf


def meter_over(blocks, channels, clip_level=1.0) -> LevelMeter:
    meter = LevelMeter(channels, clip_level)
    for block in blocks:
        meter.update(block)
    return meter


@pytest.mark.parametrize("block", [1, 7, 1000, 4096])
def test_streamed_levels_match_the_whole_signal(rng, block):
    x = rng.normal(0.1, 0.3, size=(3, 4096))
    meter = meter_over((x[:, i : i + block] for i in range(0, x.shape[1], block)), 3)
    n = x.shape[1]
    tol = 4 * n * np.finfo(np.float64).eps
    assert meter.count == n
    np.testing.assert_array_equal(meter.peak, np.abs(x).max(axis=1))
    np.testing.assert_allclose(meter.rms, np.sqrt(np.mean(x**2, axis=1)), rtol=tol)
    np.testing.assert_allclose(meter.dc_offset, x.mean(axis=1), rtol=tol)
    np.testing.assert_array_equal(meter.clipped, np.count_nonzero(np.abs(x) >= 1.0, axis=1))


def test_float32_blocks_are_summed_in_float64():
    x = np.full((1, 100_000), 0.1, dtype=np.float32)
    meter = meter_over([x[:, :50_000], x[:, 50_000:]], 1)
    exact = float(np.float32(0.1))
    assert meter.dc_offset[0] == pytest.approx(exact, rel=1e-12)
    assert meter.rms[0] == pytest.approx(exact, rel=1e-12)


def test_dc_only_is_exact():
    meter = meter_over([np.full((2, 1000), 0.25), np.full((2, 24), 0.25)], 2)
    assert meter.dc_offset.tolist() == [0.25, 0.25]
    assert meter.rms.tolist() == [0.25, 0.25]
    assert meter.peak.tolist() == [0.25, 0.25]


def test_pcm16_clip_level_counts_extreme_codes_only():
    # |x| >= 1 - 2**-15: 32767 and -32768, and (symmetric threshold) -32767; not 32766
    codes = np.array([[32767, -32768, 32766, -32767, -32766, 0, 32767]])
    meter = meter_over([codes / 32768], 1, clip_level=1 - 2.0**-15)
    assert meter.clipped.tolist() == [4]


def test_float_clip_level_is_full_scale():
    meter = meter_over([np.array([[1.0, -1.0, 0.9999999, 1.5, -3.0]])], 1)
    assert meter.clipped.tolist() == [4]
    assert meter.peak.tolist() == [3.0]


def test_empty_meter_and_empty_blocks():
    meter = meter_over([np.zeros((2, 0))], 2)
    assert meter.count == 0
    assert meter.rms.tolist() == [0.0, 0.0] and meter.dc_offset.tolist() == [0.0, 0.0]
    assert meter.peak.tolist() == [0.0, 0.0] and meter.clipped.tolist() == [0, 0]


def test_silence_levels():
    meter = meter_over([np.zeros((1, 48000))], 1)
    assert dbfs(meter.peak[0]) == -math.inf and dbfs(meter.rms[0]) == -math.inf


def test_channels_are_independent():
    x = np.vstack([np.full(10, 0.5), np.full(10, -0.25), np.zeros(10)])
    meter = meter_over([x], 3)
    assert meter.peak.tolist() == [0.5, 0.25, 0.0]
    assert meter.dc_offset.tolist() == [0.5, -0.25, 0.0]

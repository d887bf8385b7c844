"""audiokit.dsp.levels: streaming peak, RMS, DC offset and clip count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiokit.dsp.levels import LevelMeter, ScaledSums, dbfs


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


@pytest.mark.parametrize("power", [390, 600, 1000])
def test_power_of_two_scaled_blocks_give_exactly_scaled_levels(rng, power):
    # below UNSCALED_PEAK the plain sums, beyond it sums of x·2**-k: either way exact power-of-two scaling
    x = rng.normal(0.0, 0.3, size=(2, 5000))
    unit, big = meter_over([x], 2), meter_over([x * 2.0**power], 2)
    np.testing.assert_array_equal(big.rms, unit.rms * 2.0**power)
    np.testing.assert_array_equal(big.dc_offset, unit.dc_offset * 2.0**power)
    np.testing.assert_array_equal(big.peak, unit.peak * 2.0**power)


def test_a_1e307_sample_among_unit_blocks_gives_its_true_rms_and_mean(rng):
    x = rng.uniform(-1, 1, size=(2, 3000))
    x[1, 1500] = 1e307  # its square overflows float64
    meter = meter_over([x[:, :1000], x[:, 1000:2000], x[:, 2000:]], 2)
    scale = np.array([[1.0], [2.0**-1020]])  # row 1 scaled (exact), so that the reference sums cannot overflow
    rms = np.sqrt(np.mean((x * scale) ** 2, axis=1)) / scale[:, 0]
    assert np.isfinite(meter.rms).all() and np.isfinite(meter.dc_offset).all()
    np.testing.assert_allclose(meter.rms, rms, rtol=1e-12)
    assert meter.rms[1] == pytest.approx(1e307 / math.sqrt(3000), rel=1e-12)
    np.testing.assert_allclose(meter.dc_offset, np.mean(x * scale, axis=1) / scale[:, 0], rtol=1e-12)
    assert dbfs(meter.rms[1]) == pytest.approx(6140.0 - 10 * math.log10(3000), abs=1e-9)


def test_scaled_sums_energy_db_beyond_the_float64_range():
    sums = ScaledSums(1)
    sums.add(np.array([[1e307, -1e307, 3.0]]))
    sums.add(np.zeros((1, 0)))  # an empty block changes nothing
    assert sums.energy_db()[0] == pytest.approx(10 * math.log10(2) + 6140.0, abs=1e-9)
    assert ScaledSums(1).energy_db()[0] == -math.inf

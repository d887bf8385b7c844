"""Tests of audiokit.dsp.quantize: the grid, SQNR, dither, noise shaping, streaming, measures."""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.quantize import (
    DITHERS,
    NOISE_SHAPES,
    ClippingWarning,
    Quantizer,
    expected_noise_power,
    grid_step,
    noise_rms_dbfs,
    quantize,
    sqnr_db,
    theoretical_sqnr_db,
)
from audiokit.errors import InputError, ParameterError

SR = 48000
# Non-commensurate with SR, so the rounding error of a sine does not repeat (uniform-like).
BUSY_HZ = 997 * math.sqrt(2)


def sine(amplitude, freq, n, *, offset=0.0, phase=0.3):
    return (offset + amplitude * np.sin(2 * np.pi * freq * np.arange(n) / SR + phase))[None]


def codes(y, bits):
    return y.astype(np.float64) * 2.0 ** (bits - 1)


def reference_quantize(x, bits, d, shaped):
    """Sample-by-sample loop of the documented recursion (no closed form), in units of q."""
    scale = 2.0 ** (bits - 1)
    out = np.empty_like(x, dtype=np.float64)
    e = np.zeros(x.shape[0])
    for n in range(x.shape[1]):
        v = x[:, n] * scale - (e if shaped else 0.0)
        w = np.floor(v + d[:, n] + 0.5)
        e = w - v
        out[:, n] = np.clip(w, -scale, scale - 1)
    return out / scale


# --------------------------------------------------------------------------- the grid


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bits", [2, 3, 8, 12, 16, 17, 20, 23, 24])
@pytest.mark.parametrize("dither", DITHERS)
@pytest.mark.parametrize("noise_shape", NOISE_SHAPES)
def test_output_is_exactly_on_the_b_bit_grid(bits, dtype, dither, noise_shape, rng):
    x = rng.uniform(-0.95, 0.95, (2, 3000)).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)  # 2-3 bits with dither can step past the ends
        y = quantize(x, bits=bits, dither=dither, noise_shape=noise_shape, seed=1)
    assert y.dtype == dtype and y.shape == x.shape
    k = codes(y, bits)
    np.testing.assert_array_equal(k, np.round(k))
    assert k.min() >= -(2 ** (bits - 1)) and k.max() <= 2 ** (bits - 1) - 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "bits,subtype,container", [(16, "PCM_16", 16), (12, "PCM_16", 16), (8, "PCM_16", 16), (24, "PCM_24", 24), (20, "PCM_24", 24)]
)
def test_pcm_files_keep_the_codes(bits, subtype, container, dtype, rng):
    x = rng.uniform(-1.0, 1.0, (2, 4000)).astype(dtype)
    x[0, :3] = [-1.0, 1.0, 0.0]  # both ends of the grid and zero
    with pytest.warns(ClippingWarning):
        y = quantize(x, bits=bits, seed=3)
    buffer = io.BytesIO()
    sf.write(buffer, y.T, SR, subtype=subtype, format="WAV")
    buffer.seek(0)
    stored, _ = sf.read(buffer, dtype="int32")
    pcm = stored.T >> (32 - container)
    np.testing.assert_array_equal(pcm, codes(y, bits) * 2 ** (container - bits))
    # FLOAT keeps the values themselves.
    buffer = io.BytesIO()
    sf.write(buffer, y.T, SR, subtype="FLOAT", format="WAV")
    buffer.seek(0)
    np.testing.assert_array_equal(sf.read(buffer, dtype="float32")[0].T, y.astype(np.float32))


def test_rounding_is_to_nearest_level_ties_up_and_clipping_is_counted():
    q = grid_step(3)  # 0.25: levels -1, -0.75, ..., 0.75
    x = np.array([[0.125, -0.125, 0.1, 0.2, -1.1, 0.874, 0.875, 0.9, -1.2, 1.0]])
    expected = np.array([[0.25, 0.0, 0.0, 0.25, -1.0, 0.75, 0.75, 0.75, -1.0, 0.75]])
    with pytest.warns(ClippingWarning, match=r"4 of 10 samples fell outside the 3-bit range \[-1, 1 - 2\*\*-2\]"):
        y = quantize(x, bits=3, dither="none")
    np.testing.assert_array_equal(y, expected)
    quantizer = Quantizer(bits=3, channels=1, dither="none")
    quantizer.process(x)
    assert quantizer.n_clipped == 4  # 0.875, 0.9, -1.2 and 1.0 lie outside [-1 - q/2, 1 - q/2)
    assert q == 0.25 and quantizer.step == q


def test_in_range_input_does_not_warn(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quantize(rng.uniform(-0.5, 0.5, (1, 1000)), bits=8, seed=0)


# --------------------------------------------------------------------------- SQNR of a full-scale sine


@pytest.mark.parametrize("bits", range(4, 17))
def test_undithered_sqnr_of_full_scale_sine_is_6_02b_plus_1_76(bits):
    # 6.02 B + 1.76 assumes a sine whose peak-to-peak spans all 2**B steps and a
    # uniform rounding error.  The mid-tread grid runs from -1 to 1 - q, so that
    # sine is centred on -q/2 with its peaks on the two end levels (no clipping).
    q = grid_step(bits)
    x = sine(1 - q / 2, BUSY_HZ, 1 << 17, offset=-q / 2)
    y = quantize(x, bits=bits, dither="none")
    assert abs(sqnr_db(x, y) - (6.02 * bits + 1.76)) <= 0.5
    assert theoretical_sqnr_db(bits) == pytest.approx(20 * bits * math.log10(2) + 10 * math.log10(1.5))


@pytest.mark.parametrize("bits", range(4, 17))
def test_undithered_sqnr_of_zero_centred_sine_at_top_level(bits):
    # A zero-centred sine can reach only the top level 1 - q: 20*log10(1 - q) dB less signal.
    q = grid_step(bits)
    x = sine(1 - q, BUSY_HZ, 1 << 17)
    y = quantize(x, bits=bits, dither="none")
    assert abs(sqnr_db(x, y) - (6.02 * bits + 1.76 + 20 * math.log10(1 - q))) <= 0.5


@pytest.mark.parametrize("bits", [8, 12, 16])
@pytest.mark.parametrize("dither", DITHERS)
@pytest.mark.parametrize("noise_shape", NOISE_SHAPES)
def test_total_error_power_matches_theory(bits, dither, noise_shape):
    # Busy signal (half-scale sine through many levels): the error power is
    # q**2/12, q**2/6, q**2/4 (none, rpdf, tpdf), doubled by first-order shaping.
    x = sine(0.5, BUSY_HZ, 1 << 17)
    y = quantize(x, bits=bits, dither=dither, noise_shape=noise_shape, seed=11)
    expected = expected_noise_power(bits, dither=dither, noise_shape=noise_shape)
    measured_db = noise_rms_dbfs(x, y)
    # TPDF makes the error independent of the signal: only the statistics of 2**17
    # samples remain (~0.5 % relative spread, ~0.03 dB; 0.15 dB is 5 spreads).  RPDF
    # and plain rounding depend on where the signal sits between levels: measured
    # up to 0.25 dB off at 8 bits, hence 0.3 dB.
    tolerance = 0.15 if dither == "tpdf" else 0.3
    assert measured_db == pytest.approx(10 * math.log10(expected), abs=tolerance)
    signal_db = 10 * math.log10(np.mean(x * x))
    assert sqnr_db(x, y) == pytest.approx(signal_db - measured_db, abs=1e-6)
    assert theoretical_sqnr_db(bits, dither=dither, noise_shape=noise_shape) == pytest.approx(10 * math.log10(0.5 / expected))


# --------------------------------------------------------------------------- dither


def spectrum_power(y):
    return np.abs(np.fft.rfft(np.asarray(y, dtype=np.float64)[0])) ** 2


@pytest.mark.parametrize("dither", ["tpdf", "rpdf"])
def test_dither_removes_harmonic_distortion_of_a_low_level_tone(dither):
    # -40 dBFS 997 Hz at 8 bits is a sine of 1.28 steps.  Exactly 997 cycles in
    # 48000 samples: each harmonic falls on one bin (k * 997) of the rectangular DFT.
    n, f = SR, 997
    x = sine(10 ** (-40 / 20), f, n, phase=0.0)
    harmonics = [k * f for k in range(2, 10)]
    others = np.ones(n // 2 + 1, dtype=bool)
    others[[0, f] + harmonics] = False

    plain = spectrum_power(quantize(x, bits=8, dither="none"))
    assert plain[harmonics].max() > 1000 * plain[others].mean()  # harmonics stand 30+ dB out

    dithered = spectrum_power(quantize(x, bits=8, dither=dither, seed=5))
    floor = dithered[others].mean()
    # The floor is the white error power n * E[e**2] per bin ...
    expected = n * expected_noise_power(8, dither=dither)
    assert floor == pytest.approx(expected, rel=0.1 if dither == "tpdf" else 0.25)
    # ... and each bin of white noise is exponential: P(bin > 20 * mean) = e**-20
    # = 2e-9, so no harmonic may exceed the floor by 13 dB.
    assert dithered[harmonics].max() < 20 * floor


def test_tpdf_error_power_does_not_depend_on_the_signal():
    # DC inputs on a level, a quarter step and half a step above it: TPDF gives
    # q**2/4 for all (no noise modulation); RPDF gives 0 ... q**2/4.
    bits, n = 8, 1 << 15
    q = grid_step(bits)
    powers = {}
    for dither in ("tpdf", "rpdf"):
        powers[dither] = []
        for fraction in (0.0, 0.25, 0.5):
            x = np.full((1, n), 10 * q + fraction * q)
            e = quantize(x, bits=bits, dither=dither, seed=9) - x
            powers[dither].append(np.mean(e * e) / q**2)
    np.testing.assert_allclose(powers["tpdf"], 0.25, rtol=0.05)
    assert powers["rpdf"][0] == 0.0 and powers["rpdf"][2] == pytest.approx(0.25, rel=0.05)


# --------------------------------------------------------------------------- noise shaping


def test_first_order_shaping_moves_noise_to_high_frequencies():
    bits, n = 8, 1 << 16
    q = grid_step(bits)
    x = sine(0.5, BUSY_HZ, n)
    omega = np.pi * np.arange(n // 2 + 1) / (n // 2)  # rad/sample of each rfft bin
    low = (omega > 0) & (omega <= np.pi / 8)
    high = omega >= 7 * np.pi / 8
    white = n * q**2 / 4  # TPDF total error power per bin
    for shape, gain in (("none", np.ones_like(omega)), ("first", 4 * np.sin(omega / 2) ** 2)):
        y = quantize(x, bits=bits, dither="tpdf", noise_shape=shape, seed=21)
        error = spectrum_power(y - x)
        for band in (low, high):
            # 4096 bins per band: the band mean is within a few % of its expectation.
            measured_db = 10 * np.log10(error[band].mean())
            assert measured_db == pytest.approx(10 * np.log10(white * gain[band].mean()), abs=0.3)
    # In numbers: shaping takes ~13 dB from the lowest eighth and adds ~6 dB to the top eighth.
    assert 10 * np.log10((4 * np.sin(omega[low] / 2) ** 2).mean()) == pytest.approx(-12.9, abs=0.1)
    assert 10 * np.log10((4 * np.sin(omega[high] / 2) ** 2).mean()) == pytest.approx(5.96, abs=0.1)


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("dither", DITHERS)
def test_closed_form_recursion_equals_the_sample_loop(bits, dither, rng):
    x = rng.uniform(-0.7, 0.7, (2, 5000))
    quantizer = Quantizer(bits=bits, channels=2, dither=dither, noise_shape="first", seed=4)
    d = Quantizer(bits=bits, channels=2, dither=dither, seed=4)._dither(5000)  # same draws
    np.testing.assert_array_equal(quantizer.process(x), reference_quantize(x, bits, d, shaped=True))
    plain = Quantizer(bits=bits, channels=2, dither=dither, seed=4).process(x)
    np.testing.assert_array_equal(plain, reference_quantize(x, bits, d, shaped=False))


def test_shaping_loop_does_not_run_away_after_clipping():
    # A stretch far beyond full scale, then a quiet tone: the error fed back
    # excludes clipping, so the tone comes out with its normal shaped noise.
    bits, q = 8, grid_step(8)
    x = np.concatenate([np.full((1, 3000), 1.5), sine(0.1, BUSY_HZ, 1 << 14)], axis=1)
    quantizer = Quantizer(bits=bits, channels=1, dither="tpdf", noise_shape="first", seed=2)
    y = quantizer.process(x)
    assert quantizer.n_clipped >= 3000
    e = (y - x)[0, 3000:]
    assert np.max(np.abs(e)) <= 3 * q  # |e[n] - e[n-1]| < 2 * 1.5 q
    assert np.mean(e * e) == pytest.approx(expected_noise_power(bits, dither="tpdf", noise_shape="first"), rel=0.1)


# --------------------------------------------------------------------------- seeds and streaming


@pytest.mark.parametrize("dither", ["tpdf", "rpdf"])
def test_seed_reproduces_output(dither, rng):
    x = rng.uniform(-0.5, 0.5, (2, 2000))
    a = quantize(x, bits=8, dither=dither, seed=123)
    np.testing.assert_array_equal(a, quantize(x, bits=8, dither=dither, seed=123))
    np.testing.assert_array_equal(a, quantize(x, bits=8, dither=dither, seed=np.random.default_rng(123)))
    assert not np.array_equal(a, quantize(x, bits=8, dither=dither, seed=124))
    assert not np.array_equal(quantize(x, bits=8, dither=dither), quantize(x, bits=8, dither=dither))


@pytest.mark.parametrize("dither", DITHERS)
@pytest.mark.parametrize("noise_shape", NOISE_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocks_give_the_one_shot_result(dither, noise_shape, dtype, rng):
    n = 70_001  # longer than the 65536-sample slices process() works in
    x = rng.uniform(-1.05, 1.05, (2, n)).astype(dtype)  # some clipping too
    one = Quantizer(bits=12, channels=2, dither=dither, noise_shape=noise_shape, seed=99)
    whole = one.process(x)
    blocks = Quantizer(bits=12, channels=2, dither=dither, noise_shape=noise_shape, seed=99)
    cuts = np.sort(np.concatenate([rng.integers(0, n, 15), [1024, 1024, 2047, 2048, 2049]]))
    pieces = [blocks.process(block) for block in np.split(x, cuts, axis=1)]
    np.testing.assert_array_equal(np.concatenate(pieces, axis=1), whole)
    assert blocks.n_clipped == one.n_clipped > 0 and blocks.n_samples == n


# --------------------------------------------------------------------------- measures


def test_measures_on_known_values():
    reference = np.array([[1.0, -1.0, 0.5, 0.0]])
    quantized = np.array([[1.0, -0.9, 0.5, 0.0]])
    assert sqnr_db(reference, quantized) == pytest.approx(10 * math.log10(2.25 / 0.01))
    assert noise_rms_dbfs(reference, quantized) == pytest.approx(20 * math.log10(math.sqrt(0.01 / 4)))
    assert sqnr_db(reference, reference) == math.inf
    assert noise_rms_dbfs(reference, reference) == -math.inf
    assert sqnr_db(np.zeros((1, 4)), quantized) == -math.inf
    # Undithered 16-bit rounding of a busy signal: q / sqrt(12) = -101.1 dBFS.
    x = sine(0.5, BUSY_HZ, 1 << 16)
    assert noise_rms_dbfs(x, quantize(x, bits=16, dither="none")) == pytest.approx(-101.1, abs=0.1)
    with pytest.raises(ParameterError, match=r"same shape, got \(1, 4\) and \(1, 3\)"):
        sqnr_db(reference, quantized[:, :3])
    with pytest.raises(ParameterError, match="empty"):
        noise_rms_dbfs(np.zeros((1, 0)), np.zeros((1, 0)))


# --------------------------------------------------------------------------- bad parameters


@pytest.mark.parametrize("bits", [1, 25, 0, -8, 8.0, True, "16"])
def test_bits_outside_2_to_24_are_rejected(bits):
    with pytest.raises(ParameterError, match=rf"bits must be a whole number from 2 to 24, got {bits!r}"):
        quantize(np.zeros((1, 10)), bits=bits)


def test_unknown_dither_and_noise_shape_are_rejected():
    x = np.zeros((1, 10))
    with pytest.raises(ParameterError, match=r"unknown dither 'triangular'; allowed: tpdf, rpdf, none"):
        quantize(x, bits=8, dither="triangular")
    with pytest.raises(ParameterError, match=r"unknown noise shaping 'second'; allowed: none, first"):
        quantize(x, bits=8, noise_shape="second")
    with pytest.raises(ParameterError, match=r"unknown noise shaping False"):
        quantize(x, bits=8, noise_shape=False)


def test_bad_samples_are_rejected():
    with pytest.raises(ParameterError, match=r"shaped \(channels, n\) with channels >= 1, got shape \(10,\)"):
        quantize(np.zeros(10), bits=8)
    with pytest.raises(ParameterError, match="float32 or float64, got int16"):
        quantize(np.zeros((1, 10), np.int16), bits=8)
    with pytest.raises(ParameterError, match=r"shaped \(2, n\), got shape \(1, 10\)"):
        Quantizer(bits=8, channels=2).process(np.zeros((1, 10)))
    with pytest.raises(ParameterError, match="channels must be a whole number > 0, got 0"):
        Quantizer(bits=8, channels=0)
    x = np.zeros((1, 10))
    x[0, 3] = np.nan
    x[0, 5] = np.inf
    with pytest.raises(InputError, match="2 samples are NaN or infinite"):
        quantize(x, bits=8)


def test_shaping_recursion_stays_accurate_over_long_inputs():
    # Without dither the loop keeps e[n] = sum(w) - sum(u) in [-1/2, 1/2] in exact
    # arithmetic.  The float64 partial sums (restarted every 1024 samples) may each be
    # rounded by half an ulp, which adds up in the running sum: allow n of those.  A DC
    # near full scale at 24 bits is the hardest case (u ~ 2**23 with ~30 fractional
    # bits); without the restarts the running sum drifts by ~140 steps here.
    from fractions import Fraction

    bits, n = 24, 1 << 20
    levels = (0.9, -0.7)
    x = np.repeat(np.array(levels)[:, None], n, axis=1)
    y = Quantizer(bits=bits, channels=2, dither="none", noise_shape="first").process(x)
    summed = np.cumsum(codes(y, bits).astype(np.int64), axis=1)
    checkpoints = np.unique(np.geomspace(1, n, 200).astype(int)) - 1
    worst = 0.0
    for c, level in enumerate(levels):
        u = Fraction(level) * 2 ** (bits - 1)
        worst = max(worst, max(abs(Fraction(int(summed[c, i])) - (i + 1) * u) for i in checkpoints))
    # Partial sums stay below 1024 * 2**(B-1) = 2**33, where an ulp is 2**-20.
    half_ulp = Fraction(1, 2 ** (45 - bits))
    assert worst <= Fraction(1, 2) + n * half_ulp

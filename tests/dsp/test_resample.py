"""Tests of audiokit.dsp.resample: quality (stopband, passband), lengths, alignment, streaming."""

from __future__ import annotations

from fractions import Fraction
from math import floor

import numpy as np
import pytest

from audiokit.dsp.resample import (
    METHODS,
    QUALITIES,
    Resampler,
    measure_overshoot,
    output_length,
    resample,
)
from audiokit.errors import AudiokitError, ParameterError

# Targets of the default quality, from the issue: aliases >= 120 dB down,
# passband gain within 0.01 dB up to 0.9 x the lower Nyquist.
STOPBAND_DB = -120.0
RIPPLE_DB = 0.01
PASSBAND_EDGE = 0.9


def fit_amplitudes(y, freqs, sr, *, trim):
    """Amplitudes of sinusoids at known ``freqs`` (Hz) in ``y``, by one joint least-squares fit.

    ``trim`` samples are skipped at each end (the filter's edge transients).  Fitting
    every component at once removes the leakage between them that a single-tone fit
    (or a DFT bin) would see, so a -150 dB alias next to a 0 dB tone is measurable.
    """
    y = np.asarray(y, dtype=np.float64)[trim : len(y) - trim]
    n = np.arange(trim, trim + len(y))
    columns = []
    for f in freqs:
        w = 2 * np.pi * f / sr
        columns += [np.cos(w * n), np.sin(w * n)]
    coef, *_ = np.linalg.lstsq(np.stack(columns, axis=1), y, rcond=None)
    return np.hypot(coef[0::2], coef[1::2])


def alias_of(f, sr):
    """Frequency (Hz) at which a tone at ``f`` appears after sampling at ``sr``."""
    f = f % sr
    return sr - f if f > sr / 2 else f


def tones(freqs, amps, sr, n, phases):
    t = np.arange(n) / sr
    return sum(a * np.sin(2 * np.pi * f * t + p) for f, a, p in zip(freqs, amps, phases, strict=True))


DOWN_PAIRS = [(44100, 16000), (48000, 44100), (44100, 37993), (48000, 16000), (22050, 8000)]
UP_PAIRS = [(16000, 48000), (8000, 22050), (16000, 44100)]


# --------------------------------------------------------------------------- quality


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sr_in,sr_out", DOWN_PAIRS)
def test_default_quality_suppresses_tones_above_new_nyquist(sr_in, sr_out, dtype, rng):
    # Tones from just above the new Nyquist to near the input Nyquist; each would
    # fold back to alias_of(f, sr_out).  Their residue must be >= 120 dB down.
    ratios = [1.002, 1.02, 1.08, 1.3, 1.7]
    freqs = [r * sr_out / 2 for r in ratios if r * sr_out / 2 < 0.98 * sr_in / 2]
    amp = 1.0 / len(freqs)
    x = tones(freqs, [amp] * len(freqs), sr_in, sr_in, rng.uniform(0, 2 * np.pi, len(freqs)))
    y = resample(x[None].astype(dtype), sr_in=sr_in, sr_out=sr_out)
    residue = fit_amplitudes(y[0], [alias_of(f, sr_out) for f in freqs], sr_out, trim=sr_out // 20)
    level_db = 20 * np.log10(residue / amp)
    assert np.all(level_db < STOPBAND_DB), dict(zip(ratios, level_db.round(1), strict=True))


@pytest.mark.parametrize("sr_in,sr_out", UP_PAIRS)
def test_default_quality_suppresses_images_when_upsampling(sr_in, sr_out, rng):
    # Upsampling: a tone at f < sr_in/2 must not leave an image at sr_in - f.
    freqs = [r * sr_in / 2 for r in (0.3, 0.7, 0.9, 0.99)]
    amp = 0.25
    x = tones(freqs, [amp] * 4, sr_in, sr_in, rng.uniform(0, 2 * np.pi, 4))
    y = resample(x[None], sr_in=sr_in, sr_out=sr_out)
    images = [sr_in - f for f in freqs]
    fitted = fit_amplitudes(y[0], freqs + images, sr_out, trim=sr_out // 20)
    image_db = 20 * np.log10(fitted[4:] / amp)
    assert np.all(image_db < STOPBAND_DB), image_db.round(1)


@pytest.mark.slow
@pytest.mark.parametrize("quality,method", [("high", "soxr"), ("very-high", "soxr"), ("high", "poly")])
@pytest.mark.parametrize("sr_in,sr_out", [(44100, 16000), (48000, 44100), (8000, 22050), (44100, 37993)])
def test_passband_gain_within_ripple_up_to_0_9_nyquist(sr_in, sr_out, quality, method, rng):
    if method == "poly" and sr_out == 37993:
        pytest.skip("poly filter for 44100->37993 has 7 million taps; covered by the other pairs")
    nyquist = min(sr_in, sr_out) / 2
    freqs = list(np.linspace(0.005, PASSBAND_EDGE, 10) * nyquist)
    amp = 0.1
    x = tones(freqs, [amp] * len(freqs), sr_in, sr_in, rng.uniform(0, 2 * np.pi, len(freqs)))
    y = resample(x[None], sr_in=sr_in, sr_out=sr_out, quality=quality, method=method)
    gain_db = 20 * np.log10(fit_amplitudes(y[0], freqs, sr_out, trim=sr_out // 20) / amp)
    assert np.max(np.abs(gain_db)) <= RIPPLE_DB, gain_db.round(5)


@pytest.mark.parametrize("method,quality", [("soxr", "high"), ("soxr", "very-high"), ("poly", "high")])
@pytest.mark.parametrize("sr_in,sr_out", [(44100, 16000), (16000, 48000), (48000, 44100)])
def test_output_is_the_band_limited_signal_at_the_new_instants(sr_in, sr_out, method, quality, rng):
    # Output sample m stands for time m / sr_out (delay compensated, same phase).
    nyquist = min(sr_in, sr_out) / 2
    freqs, amps = [0.05 * nyquist, 0.4 * nyquist, 0.85 * nyquist], [0.3, 0.3, 0.3]
    phases = rng.uniform(0, 2 * np.pi, 3)
    x = tones(freqs, amps, sr_in, sr_in, phases)
    y = resample(x[None], sr_in=sr_in, sr_out=sr_out, method=method, quality=quality)[0]
    expected = tones(freqs, amps, sr_out, y.shape[0], phases)
    inner = slice(sr_out // 20, -sr_out // 20)
    # Amplitude error allowed by the ripple bound, summed over the tones.
    tolerance = sum(amps) * (10 ** (RIPPLE_DB / 20) - 1)
    assert np.max(np.abs(y[inner] - expected[inner])) <= tolerance


# --------------------------------------------------------------------------- naive path


def test_naive_picking_aliases_9khz_to_7khz_at_16khz():
    sr_in, sr_out = 48000, 16000
    x = np.sin(2 * np.pi * 9000 * np.arange(sr_in) / sr_in)[None]
    for method in ("nearest", "linear"):
        y = resample(x, sr_in=sr_in, sr_out=sr_out, method=method)
        # 48k -> 16k without a filter is exactly every third sample ...
        np.testing.assert_array_equal(y, x[:, ::3])
        # ... and the 9 kHz tone sits at 16 - 9 = 7 kHz with its full amplitude.
        amp_7k, amp_9k_mirror = fit_amplitudes(y[0], [7000.0, 3000.0], sr_out, trim=0)
        assert amp_7k == pytest.approx(1.0, abs=1e-9)
        assert amp_9k_mirror < 1e-9
    # The band-limited default removes it instead.
    y = resample(x, sr_in=sr_in, sr_out=sr_out)
    assert 20 * np.log10(fit_amplitudes(y[0], [7000.0], sr_out, trim=800)[0]) < STOPBAND_DB


def test_naive_linear_interpolates_between_samples():
    # A ramp is reproduced exactly by linear interpolation at any position.
    sr_in, sr_out = 44100, 37993
    x = np.arange(1000, dtype=np.float64)[None]
    y = resample(x, sr_in=sr_in, sr_out=sr_out, method="linear")
    positions = np.arange(y.shape[1]) * sr_in / sr_out
    np.testing.assert_allclose(y[0], np.minimum(positions, 999), rtol=0, atol=1e-9)
    # Nearest picks sample floor(p + 1/2).
    z = resample(x, sr_in=sr_in, sr_out=sr_out, method="nearest")
    expected = [min(floor(Fraction(m * sr_in, sr_out) + Fraction(1, 2)), 999) for m in range(y.shape[1])]
    np.testing.assert_array_equal(z[0], expected)


# --------------------------------------------------------------------------- shapes


def exact_length(n, sr_in, sr_out):
    return floor(Fraction(n * sr_out, sr_in) + Fraction(1, 2))


LENGTH_PAIRS = [(44100, 16000), (48000, 44100), (8000, 22050), (16000, 48000), (44100, 37993), (2, 1)]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sr_in,sr_out", LENGTH_PAIRS)
def test_output_length_is_round_half_up_of_n_times_ratio(sr_in, sr_out, method, rng):
    if method == "poly" and sr_out == 37993:
        pytest.skip("7-million-tap filter; the length rule is the same trim for every pair")
    for n in (0, 1, 2, 3, 7, 1000, 44101):
        assert output_length(n, sr_in=sr_in, sr_out=sr_out) == exact_length(n, sr_in, sr_out)
        x = rng.standard_normal((2, n)).astype(np.float32)
        y = resample(x, sr_in=sr_in, sr_out=sr_out, method=method)
        assert y.shape == (2, exact_length(n, sr_in, sr_out))
        assert y.dtype == np.float32 and y.flags.c_contiguous


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channels_are_resampled_independently(method, dtype, rng):
    x = rng.standard_normal((3, 5000)).astype(dtype)
    y = resample(x, sr_in=48000, sr_out=44100, method=method)
    assert y.dtype == dtype
    for c in range(3):
        np.testing.assert_array_equal(y[c], resample(x[c : c + 1], sr_in=48000, sr_out=44100, method=method)[0])


def test_non_contiguous_input_gives_the_same_result(rng):
    x = rng.standard_normal((2, 20000))
    strided = np.asfortranarray(x)
    np.testing.assert_array_equal(resample(strided, sr_in=44100, sr_out=16000), resample(x, sr_in=44100, sr_out=16000))
    np.testing.assert_array_equal(
        resample(x[:, ::2], sr_in=22050, sr_out=16000), resample(x[:, ::2].copy(), sr_in=22050, sr_out=16000)
    )


@pytest.mark.parametrize("method", METHODS)
def test_equal_rates_return_a_copy_of_the_input(method, rng):
    x = rng.standard_normal((2, 999))
    y = resample(x, sr_in=16000, sr_out=16000, method=method)
    np.testing.assert_array_equal(y, x)
    assert y is not x and not np.shares_memory(x, y)


# --------------------------------------------------------------------------- streaming


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("quality", ["high", "very-high", "quick"])
@pytest.mark.parametrize("sr_in,sr_out", [(44100, 16000), (8000, 22050), (44100, 37993), (16000, 16000)])
def test_streaming_concatenation_equals_one_shot(sr_in, sr_out, quality, dtype, rng):
    n = 30011
    x = rng.standard_normal((2, n)).astype(dtype)
    one_shot = resample(x, sr_in=sr_in, sr_out=sr_out, quality=quality)
    stream = Resampler(sr_in=sr_in, sr_out=sr_out, channels=2, dtype=dtype, quality=quality)
    cuts = np.sort(rng.integers(0, n, 12))
    pieces = [stream.process(block) for block in np.split(x, cuts, axis=1)]  # includes empty blocks
    pieces.append(stream.flush())
    streamed = np.concatenate(pieces, axis=1)
    assert all(p.dtype == dtype and p.shape[0] == 2 for p in pieces)
    np.testing.assert_array_equal(streamed, one_shot)
    assert stream.n_in == n and stream.n_out == output_length(n, sr_in=sr_in, sr_out=sr_out)


def test_streaming_converts_block_dtype_and_ends_after_flush(rng):
    stream = Resampler(sr_in=48000, sr_out=16000, channels=1, dtype=np.float32)
    out = stream.process(rng.standard_normal((1, 5000)))  # float64 block, float32 stream
    assert out.dtype == np.float32
    stream.flush()
    with pytest.raises(AudiokitError, match="already flushed"):
        stream.process(np.zeros((1, 10), np.float32))
    with pytest.raises(AudiokitError, match="already flushed"):
        stream.flush()


# --------------------------------------------------------------------------- overshoot


def test_overshoot_is_reported_not_clipped():
    # A full-scale square wave has Gibbs overshoot once band-limited.
    sr_in, sr_out = 48000, 16000
    square = np.where(np.arange(sr_in) % 48 < 24, 1.0, -1.0)[None]
    assert measure_overshoot(square).n_over == 0
    y = resample(square, sr_in=sr_in, sr_out=sr_out)
    report = measure_overshoot(y)
    assert report.peak == np.max(np.abs(y)) > 1.0
    assert report.n_over == np.count_nonzero(np.abs(y) > 1.0) > 0
    assert report.gain_to_fit == pytest.approx(1.0 / report.peak)
    assert report.peak_dbfs == pytest.approx(20 * np.log10(report.peak))
    quiet = measure_overshoot(0.5 * y / report.peak)
    assert quiet.n_over == 0 and quiet.gain_to_fit == 1.0
    assert measure_overshoot(np.zeros((1, 0))).peak == 0.0
    assert measure_overshoot(y, limit=2.0).n_over == 0


# --------------------------------------------------------------------------- bad parameters


@pytest.mark.parametrize("bad", [0, -16000, 44100.5, True, "16000"])
def test_bad_rates_are_rejected(bad):
    x = np.zeros((1, 100))
    with pytest.raises(ParameterError, match=rf"sr_in must be a whole number of Hz > 0, got {bad!r}"):
        resample(x, sr_in=bad, sr_out=16000)
    with pytest.raises(ParameterError, match=rf"sr_out must be a whole number of Hz > 0, got {bad!r}"):
        resample(x, sr_in=16000, sr_out=bad)
    with pytest.raises(ParameterError, match="sr_out must be"):
        Resampler(sr_in=16000, sr_out=bad, channels=1)


def test_unknown_quality_and_method_are_rejected():
    x = np.zeros((1, 100))
    allowed = ", ".join(QUALITIES)
    with pytest.raises(ParameterError, match=f"unknown resampling quality 'ultra'; allowed: {allowed}"):
        resample(x, sr_in=48000, sr_out=16000, quality="ultra")
    with pytest.raises(ParameterError, match="unknown resampling quality 'HQ'"):
        Resampler(sr_in=48000, sr_out=16000, channels=1, quality="HQ")
    with pytest.raises(ParameterError, match=f"unknown resampling method 'sinc'; allowed: {', '.join(METHODS)}"):
        resample(x, sr_in=48000, sr_out=16000, method="sinc")


def test_bad_samples_are_rejected():
    with pytest.raises(ParameterError, match=r"shaped \(channels, n\), got shape \(100,\)"):
        resample(np.zeros(100), sr_in=48000, sr_out=16000)
    with pytest.raises(ParameterError, match="float32 or float64, got int16"):
        resample(np.zeros((1, 100), np.int16), sr_in=48000, sr_out=16000)
    with pytest.raises(ParameterError, match="at least one channel"):
        resample(np.zeros((0, 100)), sr_in=48000, sr_out=16000)
    with pytest.raises(ParameterError, match="n must be a whole number of samples >= 0, got -1"):
        output_length(-1, sr_in=48000, sr_out=16000)


def test_bad_stream_parameters_are_rejected():
    with pytest.raises(ParameterError, match="channels must be a whole number > 0, got 0"):
        Resampler(sr_in=48000, sr_out=16000, channels=0)
    with pytest.raises(ParameterError, match="dtype must be float32 or float64, got int32"):
        Resampler(sr_in=48000, sr_out=16000, channels=1, dtype=np.int32)
    stream = Resampler(sr_in=48000, sr_out=16000, channels=2)
    with pytest.raises(ParameterError, match=r"block must be shaped \(2, m\), got shape \(1, 10\)"):
        stream.process(np.zeros((1, 10), np.float32))
    with pytest.raises(ParameterError, match="block must be float32 or float64, got int16"):
        stream.process(np.zeros((2, 10), np.int16))

"""Tests of audiokit.dsp.generate: grammar, closed forms, seeds, channels, blocks, noise spectra."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.signal as ss
from hypothesis import given, settings
from hypothesis import strategies as st

from audiokit.dsp.generate import (
    CHUNK,
    COMPONENT_USAGE,
    PINK_POLES,
    PINK_ZEROS,
    generate,
    generate_blocks,
    parse_spec,
)
from audiokit.errors import ParameterError

EPS = np.finfo(np.float64).eps
LOG10_DB = 10.0 / math.log(10.0)  # d(10·log10 P) = LOG10_DB · dP/P


#: Sums whose peak passes full scale (Gaussian noise has no peak bound; an impulse is 1.0) in tests of statistics or
#: block-wise equality: generate()'s warning for them (``generated signal reaches …``, tested on its own) is expected.
NOISE_PEAKS = pytest.mark.filterwarnings("ignore:generated signal reaches .*, above full scale:UserWarning")


def gen(spec, n=1000, sr=16000, **kw):
    return generate(spec, n_samples=n, sr=sr, **kw)


def ref_sine(n_samples, freq: Fraction, sr, amp, phase):
    """Reference sine with the cycle count reduced exactly in Python integers."""
    ratio = Fraction(freq) / sr
    cycles = np.array([float((n * ratio) % 1) for n in range(n_samples)])
    return amp * np.sin(2 * np.pi * cycles + phase)


# --------------------------------------------------------------------------- grammar


def test_parse_defaults_and_units():
    comps = parse_spec(" Sine:1kHz + square:440 + noise + pink + hum:50 + silence + impulse + dc:-0.25 ")
    names = [c.name for c in comps]
    assert names == ["sine", "square", "noise", "pink", "hum", "silence", "impulse", "dc"]
    sine, square, noise, pink, hum, _, impulse, dc = comps
    assert sine.freqs == (Fraction(1000),) and sine.amp == 0.5 and sine.phase == 0.0
    assert square.amp == 0.5
    assert noise.amp == 0.1 and pink.amp == 0.1
    assert hum.amp == 0.1 and hum.harmonics == 5
    assert impulse.at.to_samples(16000) == 0
    assert dc.amp == -0.25


def test_parse_levels_phases_and_fractions():
    sine, chirp, hum, imp = parse_spec("sine:440.5:-6dB:90deg + chirp:20:8k:0.25 + hum:60:0.2:7 + impulse:0.5s")
    assert sine.freqs == (Fraction(881, 2),)
    assert sine.amp == pytest.approx(10 ** (-6 / 20), rel=4 * EPS)
    assert sine.phase == pytest.approx(math.pi / 2, rel=4 * EPS)
    assert chirp.freqs == (Fraction(20), Fraction(8000)) and chirp.amp == 0.25
    assert hum.harmonics == 7 and hum.amp == 0.2
    assert imp.at.to_samples(16000) == 8000
    assert parse_spec("impulse:100")[0].at.to_samples(16000) == 100


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("sin:440", r"unknown component 'sin:440' in 'sin:440': valid names are sine, square, chirp"),
        ("sine:440 + bogus", r"unknown component 'bogus' .*valid names are .*logchirp.*dc"),
        ("sine", r"component 'sine' takes 1 to 3 arguments \(sine:FREQ\[:AMP\[:PHASE\]\]\), got 0"),
        ("sine:1:2:3:4", r"takes 1 to 3 arguments .*got 4"),
        ("silence:1", r"component 'silence:1' takes 0 arguments \(silence\), got 1"),
        ("dc", r"component 'dc' takes 1 argument \(dc:AMP\), got 0"),
        ("chirp:20", r"takes 2 to 3 arguments \(chirp:F0:F1\[:AMP\]\)"),
        ("sine:440:", r"takes 1 to 3 arguments"),
        ("sine:abc", r"invalid frequency 'abc'.*\(in 'sine:abc'\)"),
        ("sine:-5", r"invalid frequency '-5'"),
        ("sine:440:-0.5", r"invalid amplitude '-0.5' in 'sine:440:-0.5': must be >= 0"),
        ("noise:loud", r"invalid amplitude 'loud' in 'noise:loud'"),
        ("sine:440:0.5:east", r"invalid phase 'east'"),
        ("logchirp:0:1000", r"invalid frequency '0': must be > 0"),
        ("hum:50:0.1:0", r"invalid number of harmonics '0' in 'hum:50:0.1:0'"),
        ("hum:50:0.1:2.5", r"invalid number of harmonics '2.5'"),
        ("impulse:0.5", r"invalid duration '0.5'.*\(in 'impulse:0.5'\)"),
        ("sine:440 +", r"empty component in 'sine:440 \+'"),
        ("sine:440 ++ noise", r"empty component"),
        ("   ", r"empty signal specification"),
    ],
)
def test_parse_errors(spec, match):
    with pytest.raises(ParameterError, match=match):
        parse_spec(spec)


def test_usage_lists_every_component():
    for name, usage in COMPONENT_USAGE.items():
        assert usage.split(":")[0].split("[")[0] == name


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"spec": "sine:8001"}, r"frequency 8001 Hz in 'sine:8001' is above the Nyquist frequency 8000 Hz"),
        ({"spec": "chirp:20:9k"}, r"frequency 9000 Hz in 'chirp:20:9k' is above the Nyquist"),
        ({"spec": "impulse:2000"}, r"impulse position '2000' \(2000 samples\) .*must be in \[0, 1000\) samples"),
        ({"spec": "impulse:1s"}, r"impulse position '1s' \(16000 samples\)"),
        ({"n": -1}, r"invalid n_samples -1"),
        ({"sr": 0}, r"invalid sample rate 0"),
        ({"channels": 0}, r"invalid channel count 0"),
        ({"seed": -3}, r"invalid seed -3"),
        ({"dtype": np.int16}, r"invalid dtype int16: allowed are float32, float64"),
    ],
)
def test_generate_errors(kwargs, match):
    spec = kwargs.pop("spec", "sine:440")
    with pytest.raises(ParameterError, match=match):
        gen(spec, **kwargs)


def test_generate_blocks_validates_eagerly():
    with pytest.raises(ParameterError, match="above the Nyquist"):
        generate_blocks("sine:9k", n_samples=10, sr=16000)  # no iteration needed
    with pytest.raises(ParameterError, match=r"invalid block_size 0"):
        generate_blocks("sine:1k", n_samples=10, sr=16000, block_size=0)


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize(
    ("text", "freq", "amp", "phase"),
    [
        ("sine:440", Fraction(440), 0.5, 0.0),
        ("sine:1.5k:0.25:1.25", Fraction(1500), 0.25, 1.25),
        ("sine:440.3:1:-2", Fraction(4403, 10), 1.0, -2.0),
        ("sine:0:0.3:0.5", Fraction(0), 0.3, 0.5),
    ],
)
def test_sine_closed_form(text, freq, amp, phase):
    x = gen(text, n=3000, sr=16000)
    assert x.shape == (1, 3000) and x.dtype == np.float64
    np.testing.assert_allclose(x[0], ref_sine(3000, freq, 16000, amp, phase), rtol=0, atol=8 * EPS)


def test_sine_phase_is_exact_far_into_the_signal():
    # 441 Hz at 44.1 kHz repeats every 100 samples; with the cycle count reduced
    # exactly, sample n + 100·m is bit-identical to sample n however large n is.
    x = gen("sine:441:0.9:0.3", n=3 * CHUNK + 17, sr=44100)[0]
    assert np.array_equal(x[100:], x[:-100])
    # 1000.3 Hz at 16 kHz: exact period 160000 samples.
    long = gen("sine:1000.3", n=160000 + 500, sr=16000)[0]
    assert np.array_equal(long[160000:], long[:500])


def test_square_is_exactly_plus_minus_amp():
    x = gen("square:1000:0.7", n=64, sr=16000)[0]
    period = np.r_[np.full(8, 0.7), np.full(8, -0.7)]
    assert np.array_equal(x, np.tile(period, 4))
    # Non-integer period: equals AMP·sign(sin) wherever the sine is not zero.
    y = gen("square:440:1", n=5000, sr=16000)[0]
    s = ref_sine(5000, Fraction(440), 16000, 1.0, 0.0)
    nz = np.abs(s) > 1e-9
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.array_equal(y[nz], np.sign(s[nz]))


def test_full_scale_square_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gen("square:1000:1", n=500)


@pytest.mark.parametrize(("kind", "method"), [("chirp", "linear"), ("logchirp", "logarithmic")])
def test_chirps_match_scipy(kind, method):
    sr, n = 16000, 16000
    x = gen(f"{kind}:50:6k:0.8", n=n, sr=sr)[0]
    t = np.arange(n) / sr
    # scipy's chirp is a cosine reaching f1 at t1; sin = cos(· - 90°).
    ref = 0.8 * ss.chirp(t, f0=50, t1=n / sr, f1=6000, method=method, phi=-90)
    # scipy forms the phase without reducing it: its own rounding is ~eps·cycles.
    cycles = 6000 * n / sr
    np.testing.assert_allclose(x, ref, rtol=0, atol=16 * EPS * cycles)


def test_chirp_instantaneous_frequency_ends_at_f1():
    sr, n = 8000, 8000
    x = gen("chirp:10:400:1", n=n, sr=sr)[0]
    up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    # Upward zero crossings, linearly interpolated, one period apart: f(t) = 10 + 390·t/T.
    tc = (up + x[up] / (x[up] - x[up + 1])) / sr
    f_local = 1 / np.diff(tc)
    f_model = 10 + 390 * (tc[1:] + tc[:-1]) / 2 / (n / sr)
    np.testing.assert_allclose(f_local[-20:], f_model[-20:], rtol=2e-3)
    flat = gen("logchirp:440:440:0.5", n=500, sr=sr)[0]
    np.testing.assert_allclose(flat, ref_sine(500, Fraction(440), sr, 0.5, 0.0), atol=64 * EPS)


def test_hum_sums_harmonics_and_drops_those_above_nyquist():
    x = gen("hum:50:0.2:3", n=2000, sr=8000)[0]
    ref = sum(ref_sine(2000, Fraction(50 * k), 8000, 0.2 / k, 0.0) for k in (1, 2, 3))
    np.testing.assert_allclose(x, ref, atol=16 * EPS)
    with pytest.warns(UserWarning, match=r"harmonics above 2 exceed the Nyquist frequency 8000 Hz"):
        y = gen("hum:3000:0.1:5", n=1000, sr=16000)[0]
    ref = ref_sine(1000, Fraction(3000), 16000, 0.1, 0.0) + ref_sine(1000, Fraction(6000), 16000, 0.05, 0.0)
    np.testing.assert_allclose(y, ref, atol=16 * EPS)


def test_silence_dc_impulse():
    assert np.array_equal(gen("silence", n=100), np.zeros((1, 100)))
    assert np.array_equal(gen("dc:-0.25", n=100), np.full((1, 100), -0.25))
    x = gen("impulse:0.5s", n=20000, sr=16000)[0]
    assert x[8000] == 1.0 and np.count_nonzero(x) == 1
    y = gen("impulse", n=10)[0]
    assert y[0] == 1.0 and np.count_nonzero(y) == 1


def test_mixing_adds_components():
    a = gen("sine:440:0.3", n=4000)
    b = gen("square:100:0.2", n=4000)
    c = gen("dc:0.1", n=4000)
    np.testing.assert_allclose(gen("sine:440:0.3 + square:100:0.2+dc:0.1", n=4000), a + b + c, atol=4 * EPS)


def test_nyquist_tone_warns():
    with pytest.warns(UserWarning, match=r"exactly the Nyquist frequency 8000 Hz"):
        x = gen("sine:8k:0.5:1", n=100, sr=16000)[0]
    np.testing.assert_allclose(x, 0.5 * math.sin(1) * (-1.0) ** np.arange(100), atol=1e3 * EPS)


def test_clipping_warns():
    with pytest.warns(UserWarning, match=r"reaches 1\.4, above full scale 1\.0"):
        gen("sine:4k:0.7 + sine:4k:0.7", n=100, sr=16000)


# --------------------------------------------------------------------------- channels, seeds, dtype


@NOISE_PEAKS
def test_channels_tones_identical_noise_independent():
    x = gen("sine:300:0.2 + noise:0.5", n=20000, channels=3, seed=7)
    assert x.shape == (3, 20000)
    tone = gen("sine:300:0.2", n=20000)[0]
    noise = x - tone
    corr = np.corrcoef(noise)
    # Independent channels: sample correlations ~ N(0, 1/n); 6 sigma.
    assert np.all(np.abs(corr[np.triu_indices(3, 1)]) < 6 / math.sqrt(20000))
    assert not np.array_equal(noise[0], noise[1])


def test_seeds_reproduce_and_differ():
    a = gen("noise + pink", n=5000, channels=2, seed=1)
    assert np.array_equal(a, gen("noise + pink", n=5000, channels=2, seed=1))
    assert not np.array_equal(a, gen("noise + pink", n=5000, channels=2, seed=2))
    unseeded = gen("noise", n=10)
    assert unseeded.shape == (1, 10)


@NOISE_PEAKS
def test_noise_streams_are_stable():
    full = gen("noise:0.2", n=3 * CHUNK, channels=2, seed=5)
    # A shorter signal is a prefix, channel 0 ignores the channel count,
    # and adding a tone leaves the noise unchanged.
    assert np.array_equal(gen("noise:0.2", n=1000, channels=2, seed=5), full[:, :1000])
    assert np.array_equal(gen("noise:0.2", n=3 * CHUNK, channels=1, seed=5)[0], full[0])
    with_tone = gen("sine:1k:0.3 + noise:0.2", n=3 * CHUNK, channels=2, seed=5)
    np.testing.assert_allclose(with_tone - gen("sine:1k:0.3", n=3 * CHUNK), full, atol=4 * EPS)
    # Two noise terms are independent streams.
    two = gen("noise:0.2 + noise:0.2", n=CHUNK, seed=5)[0]
    assert not np.allclose(two, 2 * full[0, :CHUNK])


def test_float32_is_float64_rounded_once():
    x64 = gen("sine:440 + pink:0.05", n=3000, seed=3)
    x32 = gen("sine:440 + pink:0.05", n=3000, seed=3, dtype=np.float32)
    assert x32.dtype == np.float32
    assert np.array_equal(x32, x64.astype(np.float32))


@NOISE_PEAKS
def test_white_noise_rms_is_amp(rng):
    n = 200_000
    x = gen("noise:0.25", n=n, seed=int(rng.integers(2**31)))[0]
    # Var of the sample variance of Gaussian noise: 2σ⁴/n.
    assert np.var(x) == pytest.approx(0.25**2, abs=6 * math.sqrt(2 / n) * 0.25**2)
    assert abs(np.mean(x)) < 6 * 0.25 / math.sqrt(n)


def test_pink_noise_rms_is_amp(rng):
    n = 1 << 20
    x = gen("pink:0.2", n=n, seed=int(rng.integers(2**31)))[0]
    # Sample variance of a Gaussian process: var ≈ (2σ⁴/n)·Σ_m ρ(m)²; Σρ² from the
    # filter's power response, Σ_m ρ(m)² = L·Σ|H|⁴ / (Σ|H|²)² on an L-point grid.
    L = 1 << 20
    _, h = ss.freqz_zpk(PINK_ZEROS, PINK_POLES, 1.0, worN=L, whole=True)
    p = np.abs(h) ** 2
    sum_rho2 = L * np.sum(p * p) / np.sum(p) ** 2
    sd = 0.2**2 * math.sqrt(2 * sum_rho2 / n)
    assert np.var(x) == pytest.approx(0.2**2, abs=6 * sd)


# --------------------------------------------------------------------------- blocks


@pytest.mark.slow
@NOISE_PEAKS
@settings(max_examples=25)
@given(
    block=st.integers(1, 3 * CHUNK),
    n=st.integers(1, 2 * CHUNK + 300),
    channels=st.integers(1, 2),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_blocks_concatenate_to_generate(block, n, channels, dtype):
    spec = "chirp:20:7k:0.2 + pink:0.1 + noise:0.05 + sine:997.5:0.3:1 + impulse:0 + hum:50"
    kw = dict(n_samples=n, sr=16000, channels=channels, seed=11, dtype=dtype)
    one = generate(spec, **kw)
    blocks = list(generate_blocks(spec, block_size=block, **kw))
    assert all(b.shape[0] == channels and b.shape[1] <= block and b.dtype == dtype for b in blocks)
    assert all(b.shape[1] == block for b in blocks[:-1])
    joined = np.concatenate(blocks, axis=1) if blocks else np.empty((channels, 0), dtype)
    assert np.array_equal(joined, one)


def test_blocks_warn_once_on_clipping():
    with pytest.warns(UserWarning, match="above full scale") as record:
        list(generate_blocks("sine:1k:1 + dc:0.5", n_samples=5000, sr=16000, block_size=1000))
    assert len(record) == 1


# --------------------------------------------------------------------------- noise spectra


def _welch_slope(x, nperseg):
    """Slope of 10·log10(PSD) vs log10(f) and its standard error from Welch statistics."""
    f, p = ss.welch(x, fs=1.0, window="hann", nperseg=nperseg)
    k = np.arange(24, int(0.4 * nperseg))  # inside the pinking band, away from DC leakage
    xs = np.log10(f[k])
    ys = 10 * np.log10(p[k])
    slope, intercept = np.polyfit(xs, ys, 1)
    # Variance of a Welch estimate (Hann, 50 % overlap, K segments):
    # var(P̂)/P² = (1/K)·(1 + 2·Σ_j (1 - j/K)·ρ(j·D)²), ρ the window overlap correlation.
    w = ss.get_window("hann", nperseg)
    hop = nperseg // 2
    segs = (x.size - nperseg) // hop + 1
    rho = [np.dot(w[j * hop :], w[: nperseg - j * hop]) / np.dot(w, w) for j in range(1, 2)]
    rel_var = (1 + 2 * sum((1 - (j + 1) / segs) * r**2 for j, r in enumerate(rho))) / segs
    sigma_db = LOG10_DB * math.sqrt(rel_var)
    # Neighbouring bins of one periodogram are correlated through the window:
    # corr(|X_k|², |X_k+m|²) = |Σ w² e^{-2πimn/N}|² / (Σ w²)²; it inflates the slope variance.
    w2 = np.fft.fft(w * w)
    rho_bins = np.abs(w2[1:3]) ** 2 / np.abs(w2[0]) ** 2
    inflation = 1 + 2 * rho_bins.sum()
    se = sigma_db * math.sqrt(inflation / np.sum((xs - xs.mean()) ** 2))
    return slope, se, xs, ys - (slope * xs + intercept)


def test_pink_noise_slope_is_minus_10_db_per_decade(rng):
    x = gen("pink:0.1", n=1 << 20, seed=int(rng.integers(2**31)))[0]
    slope, se, xs, _ = _welch_slope(x, 2048)
    # The filter follows 1/f within ±0.012 dB; the worst slope bias such a ripple
    # can cause in a least-squares fit is 0.012·Σ|x - x̄| / Σ(x - x̄)².
    d = xs - xs.mean()
    ripple_bias = 0.012 * np.sum(np.abs(d)) / np.sum(d * d)
    assert abs(slope - (-10.0)) <= 5 * se + ripple_bias, (slope, se, ripple_bias)
    assert 5 * se + ripple_bias < 0.3  # the test can tell -10 from -9.7 dB/decade
    # -3.01 dB per octave, the same statement per octave.
    assert slope * math.log10(2) == pytest.approx(-3.0103, abs=(5 * se + ripple_bias) * math.log10(2))


def test_pink_filter_response_is_one_over_f():
    f = np.logspace(-4, math.log10(0.45), 400)
    _, h = ss.freqz_zpk(PINK_ZEROS, PINK_POLES, 1.0, worN=2 * np.pi * f)
    dev = 20 * np.log10(np.abs(h)) + 10 * np.log10(f)
    assert np.ptp(dev) < 0.024


def test_white_noise_is_flat(rng):
    amp = 0.1
    x = gen(f"noise:{amp}", n=1 << 20, seed=int(rng.integers(2**31)))[0]
    slope, se, _, _ = _welch_slope(x, 2048)
    assert abs(slope) <= 5 * se
    f, p = ss.welch(x, fs=16000.0, nperseg=2048)
    # One-sided density of white noise of variance amp²: 2·amp²/sr per Hz.
    inner = p[5:-5]
    segs = (x.size - 2048) // 1024 + 1
    sd_mean = math.sqrt(1.06 / segs / inner.size * 3)  # ~1.06/K per bin, neighbours correlated
    assert np.mean(inner) / (2 * amp**2 / 16000) == pytest.approx(1.0, abs=6 * sd_mean)

"""Tests of audiokit.dsp.dft: axes, scaling, symmetry, Parseval, two-sided amplitude and decibels.

The peak fitting is tested in tests/dsp/test_peaks.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiokit.dsp.dft import (
    DEFAULT_AMIN,
    amplitude_to_db,
    bin_to_hz,
    fft_frequencies,
    hz_to_bin,
    one_sided_weights,
    spectrum,
)
from audiokit.dsp.generate import generate
from audiokit.dsp.windows import get_window
from audiokit.engine import get_backend
from audiokit.errors import ParameterError

EPS = np.finfo(np.float64).eps
EPS32 = np.finfo(np.float32).eps


def naive_dft(x: np.ndarray, n_fft: int) -> np.ndarray:
    """One-sided DFT by the defining sum (reference implementation)."""
    n = np.arange(x.size)
    k = np.arange(n_fft // 2 + 1)
    return np.exp(-2j * np.pi * np.outer(k, n) / n_fft) @ x


def tone(freq, *, n, sr, amp=1.0, phase=0.0):
    """amp·cos(2π f t + phase) (the same helper as in tests/dsp/test_peaks.py)."""
    t = np.arange(n) / sr
    return amp * np.cos(2 * np.pi * freq * t + phase)


# --------------------------------------------------------------------------- axes and weights


@pytest.mark.parametrize("n_fft", [1, 2, 7, 8, 1000, 1001])
def test_fft_frequencies(n_fft):
    f = fft_frequencies(sr=8000, n_fft=n_fft)
    np.testing.assert_allclose(f, np.fft.rfftfreq(n_fft, 1 / 8000), rtol=4 * EPS, atol=0)
    assert f.size == n_fft // 2 + 1
    if n_fft % 2 == 0:
        assert f[-1] == 4000.0  # the Nyquist bin exists only for even n_fft
    else:
        assert f[-1] < 4000.0


def test_bin_hz_conversions():
    assert bin_to_hz(3, sr=8000, n_fft=1000) == 24.0
    assert hz_to_bin(24.0, sr=8000, n_fft=1000) == 3.0
    np.testing.assert_allclose(bin_to_hz(np.array([0.5, 500]), sr=8000, n_fft=1000), [4.0, 4000.0])
    with pytest.raises(ParameterError, match=r"invalid n_fft 0"):
        bin_to_hz(1, sr=8000, n_fft=0)
    with pytest.raises(ParameterError, match=r"invalid sample rate -1"):
        fft_frequencies(sr=-1, n_fft=8)


def test_one_sided_weights():
    assert one_sided_weights(8).tolist() == [1, 2, 2, 2, 1]
    assert one_sided_weights(7).tolist() == [1, 2, 2, 2]
    assert one_sided_weights(1).tolist() == [1]
    assert one_sided_weights(2).tolist() == [1, 1]


# --------------------------------------------------------------------------- the spectrum


@pytest.mark.parametrize("window", ["hann", "rectangular", "blackmanharris"])
@pytest.mark.parametrize(("n", "n_fft"), [(64, 64), (63, 63), (50, 128), (37, 75)])
def test_spectrum_matches_naive_dft(rng, window, n, n_fft):
    x = rng.standard_normal(n)
    spec = spectrum(x, sr=1000, window=window, n_fft=n_fft)
    w = get_window(window, n)
    assert spec.window.shape == (n,)  # window over the signal, then zero padding
    np.testing.assert_array_equal(spec.window, w)
    ref = naive_dft(x * w, n_fft)
    np.testing.assert_allclose(spec.X, ref, rtol=0, atol=64 * n * EPS * np.abs(x).max())
    assert spec.n == n and spec.n_fft == n_fft and spec.n_bins == n_fft // 2 + 1
    assert spec.delta_f == 1000 / n_fft and spec.nyquist == 500.0
    assert spec.has_nyquist_bin == (n_fft % 2 == 0)
    np.testing.assert_array_equal(spec.freqs, fft_frequencies(sr=1000, n_fft=n_fft))


@pytest.mark.parametrize("n", [64, 65])
def test_real_input_has_conjugate_symmetric_dft(rng, n):
    x = rng.standard_normal(n)
    full = get_backend().fft(x)
    k = np.arange(1, n)
    np.testing.assert_allclose(full[n - k], np.conj(full[k]), rtol=0, atol=64 * n * EPS)
    assert abs(full[0].imag) <= 64 * n * EPS
    if n % 2 == 0:
        assert abs(full[n // 2].imag) <= 64 * n * EPS  # the Nyquist bin is real
    spec = spectrum(x, sr=1, window="rectangular")
    np.testing.assert_allclose(spec.X, full[: n // 2 + 1], rtol=0, atol=64 * n * EPS)


@pytest.mark.parametrize("n", [64, 65, 1000, 1001])
def test_parseval_full_and_one_sided(rng, n):
    x = rng.standard_normal(n)
    energy = np.sum(x**2)
    full = get_backend().fft(x)
    assert np.sum(np.abs(full) ** 2) / n == pytest.approx(energy, rel=64 * EPS * math.log2(n))
    spec = spectrum(x, sr=1, window="rectangular")
    X = spec.X
    doubled = np.abs(X[0]) ** 2 + 2 * np.sum(np.abs(X[1 : (n + 1) // 2]) ** 2)
    if n % 2 == 0:
        doubled += np.abs(X[n // 2]) ** 2  # the Nyquist bin has no twin
    assert doubled / n == pytest.approx(energy, rel=64 * EPS * math.log2(n))
    assert spec.energy == pytest.approx(energy, rel=64 * EPS * math.log2(n))


def test_energy_with_window_and_padding(rng):
    x = rng.standard_normal(300)
    spec = spectrum(x, sr=1, window="hann", n_fft=777)
    assert spec.energy == pytest.approx(np.sum((x * spec.window) ** 2), rel=1e3 * EPS)


@pytest.mark.parametrize("window", ["hann", "rectangular", "flattop", "kaiser:8.6"])
@pytest.mark.parametrize("n", [1000, 999])
def test_amplitude_of_on_bin_tone_dc_and_nyquist(window, n):
    sr = n  # bins are 1 Hz apart
    x = tone(100, n=n, sr=sr, amp=0.3, phase=0.4) + 0.2
    spec = spectrum(x, sr=sr, window=window)
    amp = spec.amplitude
    # Rectangular and periodic cosine-sum windows put an on-bin tone in a few bins
    # only; Kaiser's sidelobes (about -100 dB 100 bins away) leak DC and the mirror in.
    exact = window in ("hann", "rectangular", "flattop")
    tol = 1e3 * EPS if exact else 1e-5
    assert amp[100] == pytest.approx(0.3, rel=tol)
    assert amp[0] == pytest.approx(0.2, rel=tol)
    assert spec.phase[100] == pytest.approx(0.4, abs=tol)
    assert spec.coherent_gain == pytest.approx(np.mean(spec.window), rel=4 * EPS)
    if n % 2 == 0:
        # A tone at Nyquist is the sequence A·cos(φ)·(-1)^n: it reads A·|cos φ|.
        y = 0.5 * np.cos(np.pi * np.arange(n) + 1.0)
        ny = spectrum(y, sr=sr, window=window)
        assert ny.amplitude[-1] == pytest.approx(0.5 * abs(math.cos(1.0)), rel=tol)


def test_db_scale_and_floor():
    x = tone(50, n=1000, sr=1000, amp=1.0)
    spec = spectrum(x, sr=1000)
    assert spec.db[50] == pytest.approx(0.0, abs=1e3 * EPS)
    assert spec.to_db(ref=0.5)[50] == pytest.approx(20 * math.log10(2), abs=1e3 * EPS)
    assert spec.db[200] == -200.0  # below the floor (exact zero off the lobe)
    with pytest.warns(UserWarning, match="signal is silent"):
        silent = spectrum(np.zeros(100), sr=1000)
    assert np.all(silent.db == -200.0) and np.all(np.isfinite(silent.db))
    with pytest.raises(ParameterError, match="ref and amin must be > 0"):
        spec.to_db(amin=0)


def test_float32_and_channels():
    x = generate("sine:100:0.5", n_samples=1000, sr=1000, channels=2, dtype=np.float32)
    spec = spectrum(x, sr=1000)
    assert spec.X.shape == (2, 501) and spec.X.dtype == np.complex64
    assert spec.amplitude.dtype == np.float32
    np.testing.assert_allclose(spec.amplitude[:, 100], 0.5, rtol=64 * EPS32)
    one = spec.channel(1)
    assert one.X.shape == (501,) and one.n == 1000
    with pytest.raises(ParameterError, match=r"channel 2 out of range: the spectrum has 2 channels"):
        spec.channel(2)
    with pytest.raises(ParameterError, match="single channel"):
        one.channel(0)


def test_window_as_array_and_symmetric(rng):
    x = rng.standard_normal(128)
    w = np.bartlett(128)
    spec = spectrum(x, sr=1, window=w)
    assert spec.window_name == "custom"
    np.testing.assert_allclose(spec.X, naive_dft(x * w, 128), atol=1e4 * EPS)
    sym = spectrum(x, sr=1, window="Hann", periodic=False)
    np.testing.assert_array_equal(sym.window, get_window("hann", 128, periodic=False))
    assert sym.window_name == "hann" and not sym.periodic


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (np.ones(10) + 1j, {}, r"takes a real signal; got complex"),
        (np.ones(0), {}, r"empty signal"),
        (np.array([1.0, np.nan]), {}, r"NaN or infinity"),
        (np.ones(10), {"n_fft": 8}, r"n_fft 8 is shorter than the signal \(10 samples\)"),
        (np.ones(10), {"n_fft": 0}, r"invalid n_fft 0"),
        (np.ones(10), {"sr": 0}, r"invalid sample rate 0"),
        (np.ones(10), {"window": "hannn"}, r"unknown window 'hannn'; allowed: rectangular, hann"),
        (np.ones(10), {"window": np.ones(9)}, r"window array has shape \(9,\).*\(10,\)"),
        (np.array(["a"]), {}, r"real numeric samples"),
    ],
)
def test_spectrum_errors(args, kwargs, match):
    kwargs = {"sr": 1000, **kwargs}
    with pytest.raises(ParameterError, match=match):
        spectrum(args, **kwargs)


# --------------------------------------------------------------------------- two-sided amplitude and decibels


def naive_two_sided_amplitude(x: np.ndarray, w: np.ndarray, n_fft: int) -> np.ndarray:
    """|X[k]| / sum(w) for k = 0 .. n_fft-1, by the defining sum over the whole circle."""
    n = np.arange(x.size)
    k = np.arange(n_fft)
    return np.abs(np.exp(-2j * np.pi * np.outer(k, n) / n_fft) @ (x * w)) / np.sum(w)


@pytest.mark.parametrize(("n", "n_fft"), [(64, 64), (63, 63), (50, 128), (37, 75), (1, 1), (2, 2)])
def test_two_sided_matches_the_full_dft(rng, n, n_fft):
    x = rng.standard_normal(n)
    spec = spectrum(x, sr=1000, n_fft=n_fft, window="hann" if n > 2 else "rectangular")
    freqs, amplitude = spec.two_sided()
    np.testing.assert_array_equal(freqs, np.arange(n_fft) * (1000 / n_fft))
    assert freqs.shape == amplitude.shape == (n_fft,)
    ref = naive_two_sided_amplitude(x, spec.window, n_fft)
    np.testing.assert_allclose(amplitude, ref, rtol=0, atol=64 * n * EPS * np.abs(x).max() / spec.window_sum)


@pytest.mark.parametrize("n_fft", [1000, 1001])
def test_two_sided_equals_the_mirrored_magnitude_bit_for_bit(n_fft):
    """The definition the spectrum PNG used before the method existed, on float32 stereo input."""
    x = generate("sine:100:0.5 + noise:0.01", n_samples=1000, sr=1000, channels=2, seed=3, dtype=np.float32)
    spec = spectrum(x, sr=1000, n_fft=n_fft)
    mirror = spec.magnitude[..., 1 : spec.n_fft - spec.n_bins + 1][..., ::-1]
    expected = np.concatenate([spec.magnitude, mirror], axis=-1) / spec.window_sum
    freqs, amplitude = spec.two_sided()
    assert amplitude.dtype == np.float32 and amplitude.shape == (2, n_fft)
    np.testing.assert_array_equal(amplitude, expected)
    np.testing.assert_array_equal(freqs, np.arange(spec.n_fft) * spec.delta_f)
    # Half the one-sided amplitude away from DC and Nyquist, at k and at n_fft - k.
    assert amplitude[0, 100] == amplitude[0, n_fft - 100] == pytest.approx(0.25, rel=1e-2)


def test_two_sided_db_is_the_floored_log_of_the_two_sided_amplitude():
    x = tone(100, n=1000, sr=1000, amp=0.5)
    spec = spectrum(x, sr=1000)
    freqs, db = spec.two_sided_db()
    ref_freqs, amplitude = spec.two_sided()
    np.testing.assert_array_equal(freqs, ref_freqs)
    np.testing.assert_array_equal(db, 20 * np.log10(np.maximum(amplitude, 1e-10)))
    assert db[100] == pytest.approx(20 * math.log10(0.25), abs=1e3 * EPS)
    _, db_ref = spec.two_sided_db(ref=0.25, amin=1e-6)
    np.testing.assert_array_equal(db_ref, 20 * np.log10(np.maximum(amplitude, 1e-6) / 0.25))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_amplitude_to_db_against_the_naive_definition(rng, dtype):
    amplitude = np.abs(rng.standard_normal(1000)).astype(dtype) * 10.0 ** rng.uniform(-12, 0, 1000).astype(dtype)
    amplitude[:3] = 0.0
    db = amplitude_to_db(amplitude)
    assert db.dtype == dtype
    np.testing.assert_array_equal(db, 20 * np.log10(np.maximum(amplitude, 1e-10)))
    assert db[0] == pytest.approx(-200.0) and np.all(np.isfinite(db))
    expected = 20 * np.log10(np.maximum(amplitude, 1e-3) / 2.0)
    np.testing.assert_array_equal(amplitude_to_db(amplitude, ref=2.0, amin=1e-3), expected)
    assert amplitude_to_db(1.0) == 0.0
    spec = spectrum(tone(50, n=1000, sr=1000, amp=0.3), sr=1000)
    np.testing.assert_array_equal(spec.to_db(), amplitude_to_db(spec.amplitude))


def test_default_amin_is_an_amplitude_floor_of_minus_200_dbfs():
    assert DEFAULT_AMIN == 1e-10
    assert amplitude_to_db(0.0) == pytest.approx(-200.0, abs=1e-12)


@pytest.mark.parametrize(("ref", "amin"), [(0.0, 1e-10), (1.0, 0.0), (-1.0, 1e-10)])
def test_amplitude_to_db_rejects_a_bad_ref_or_floor(ref, amin):
    with pytest.raises(ParameterError, match=r"ref and amin must be > 0, got ref="):
        amplitude_to_db(np.ones(3), ref=ref, amin=amin)
    spec = spectrum(np.ones(8), sr=8)
    with pytest.raises(ParameterError, match=r"ref and amin must be > 0"):
        spec.two_sided_db(ref=ref, amin=amin)

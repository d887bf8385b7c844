"""Tests of audiokit.dsp.dft: axes, scaling, symmetry, Parseval, and interpolated peaks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiokit.dsp.dft import (
    Peak,
    Spectrum,
    bin_to_hz,
    fft_frequencies,
    find_peaks,
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
COSINE_SUM = ["rectangular", "hann", "hamming", "blackman", "blackmanharris", "nuttall", "flattop"]
# The peak fit is a least-squares problem solved to rounding; its answers carry
# errors of ~1e4·eps (frequency in bins, relative amplitude, phase in rad).
FIT_TOL = 1e5 * EPS


def naive_dft(x: np.ndarray, n_fft: int) -> np.ndarray:
    """One-sided DFT by the defining sum (reference implementation)."""
    n = np.arange(x.size)
    k = np.arange(n_fft // 2 + 1)
    return np.exp(-2j * np.pi * np.outer(k, n) / n_fft) @ x


def tone(freq, *, n, sr, amp=1.0, phase=0.0):
    """amp·cos(2π f t + phase), the model find_peaks reports."""
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


# --------------------------------------------------------------------------- peaks


def test_three_tone_mix_is_exactly_three_peaks():
    sr = 8000
    x = generate("sine:50:1 + sine:120:0.5 + sine:300:0.25", n_samples=sr, sr=sr)[0]
    peaks = find_peaks(spectrum(x, sr=sr), k=5)
    assert [round(p.freq_hz, 9) for p in peaks] == [50.0, 120.0, 300.0]
    for p, amp in zip(peaks, (1.0, 0.5, 0.25)):
        assert isinstance(p, Peak)
        assert p.amplitude == pytest.approx(amp, rel=1e-6)
        assert p.dbfs == pytest.approx(20 * math.log10(amp), abs=1e-5)
        # sin(2πft) = cos(2πft - π/2): cosine phase -π/2 at the first sample.
        assert p.phase == pytest.approx(-math.pi / 2, abs=1e-6)
        assert p.bin == pytest.approx(p.freq_hz)  # 1 Hz bins


@pytest.mark.parametrize("window", ["hann", "rectangular", "blackmanharris"])
def test_off_bin_mix_reports_no_sidelobes(window):
    sr = 8000
    x = sum(tone(f, n=sr, sr=sr, amp=a) for f, a in ((50.3, 1.0), (120.7, 0.5), (300.45, 0.25)))
    spec = spectrum(x, sr=sr, window=window, n_fft=4 * sr)
    # Zero padding makes sidelobes visible: many local maxima above -60 dB are not tones ...
    mag, amp = np.abs(spec.X), spec.amplitude
    local = (mag[1:-1] > mag[:-2]) & (mag[1:-1] > mag[2:]) & (amp[1:-1] >= 1e-3 * amp.max())
    assert np.count_nonzero(local) >= {"hann": 20, "rectangular": 500, "blackmanharris": 3}[window]
    # ... which the model subtraction removes.
    peaks = find_peaks(spec, k=10)
    assert [p.freq_hz for p in peaks] == pytest.approx([50.3, 120.7, 300.45], abs=1e-6)
    assert [p.amplitude for p in peaks] == pytest.approx([1.0, 0.5, 0.25], rel=1e-6)


@pytest.mark.parametrize("window", ["hann", "rectangular"])
def test_on_bin_tone_is_exact(window):
    sr, n = 16000, 16000
    peaks = find_peaks(spectrum(tone(1000, n=n, sr=sr, amp=0.7, phase=1.1), sr=sr, window=window), k=1)
    assert peaks[0].bin == pytest.approx(1000, abs=FIT_TOL)
    assert peaks[0].freq_hz == pytest.approx(1000, abs=FIT_TOL)
    assert peaks[0].amplitude == pytest.approx(0.7, rel=FIT_TOL)
    assert peaks[0].phase == pytest.approx(1.1, abs=FIT_TOL)


@pytest.mark.parametrize("window", ["hann", "rectangular", "blackmanharris", "flattop", "kaiser:8.6"])
@pytest.mark.parametrize("pad", [1, 2])
def test_off_bin_accuracy_over_offsets(window, pad):
    n, sr = 1000, 1000.0
    worst_f = worst_a = worst_p = 0.0
    for offset in np.linspace(0.0, 0.5, 11):
        f = 123 + offset
        spec = spectrum(tone(f, n=n, sr=sr, amp=0.6, phase=-0.8), sr=sr, window=window, n_fft=pad * n)
        p = find_peaks(spec, k=1)[0]
        worst_f = max(worst_f, abs(p.freq_hz - f) / (sr / n))
        worst_a = max(worst_a, abs(20 * math.log10(p.amplitude / 0.6)))
        worst_p = max(worst_p, abs(math.remainder(p.phase + 0.8, 2 * math.pi)))
    # Targets were 0.02 bin and 0.5 dB; the kernel fit is exact to rounding.
    assert worst_f <= FIT_TOL and worst_a <= FIT_TOL and worst_p <= FIT_TOL


def test_quadratic_log_interpolation_meets_targets_with_hann():
    n, sr = 1000, 1000.0
    for offset in np.linspace(0.0, 0.5, 21):
        f = 200 + offset
        spec = spectrum(tone(f, n=n, sr=sr, amp=0.5, phase=0.3), sr=sr)
        p = find_peaks(spec, k=1, interpolation="quadratic-log")[0]
        assert abs(p.freq_hz - f) <= 0.02
        assert abs(20 * math.log10(p.amplitude / 0.5)) <= 0.01  # target was 0.5 dB
        plain = find_peaks(spec, k=1, interpolation="none")[0]
        k0 = round(f)
        assert plain.freq_hz == k0 and plain.amplitude == pytest.approx(spec.amplitude[k0], rel=4 * EPS)
    # Half a bin off, the plain reading shows Hann's scalloping loss, 20·log10(8/(3π)) dB.
    assert plain.dbfs - 20 * math.log10(0.5) == pytest.approx(20 * math.log10(8 / (3 * math.pi)), abs=0.01)


@settings(max_examples=40, deadline=None)
@given(
    freq=st.floats(0.0, 499.0),
    amp=st.floats(1e-3, 1.0),
    phase=st.floats(-3.0, 3.0),
    window=st.sampled_from(COSINE_SUM + ["kaiser:6", "bartlett"]),
    n=st.integers(200, 401),
    pad=st.sampled_from([1.0, 1.5, 3.0]),
    periodic=st.booleans(),
)
def test_single_tone_fit_is_exact(freq, amp, phase, window, n, pad, periodic):
    sr = 1000.0
    n_fft = int(n * pad)
    kappa = freq * n_fft / sr
    if kappa > n_fft / 2:
        return
    spec = spectrum(tone(freq, n=n, sr=sr, amp=amp, phase=phase), sr=sr, window=window, n_fft=n_fft, periodic=periodic)
    p = find_peaks(spec, k=1)[0]
    # Within a thousandth of a bin of DC or Nyquist the two model terms merge:
    # only A·cos φ is observable there, and a tone may be reported on the edge.
    at_edge = kappa < 1e-3 or n_fft / 2 - kappa < 1e-3
    assert p.bin == pytest.approx(kappa, abs=1e-3 if at_edge else 1e-7)
    if not at_edge:
        assert p.amplitude == pytest.approx(amp, rel=1e-7)
        assert math.remainder(p.phase - phase, 2 * math.pi) == pytest.approx(0, abs=1e-6)


@pytest.mark.parametrize("n", [8000, 7999])
@pytest.mark.parametrize("window", ["hann", "rectangular"])
def test_dc_and_nyquist_peaks(n, window):
    sr = 8000
    x = generate("dc:-0.3 + sine:1000:0.2", n_samples=n, sr=sr)[0]
    peaks = find_peaks(spectrum(x, sr=sr, window=window))
    assert [p.freq_hz for p in peaks] == pytest.approx([0.0, 1000.0], abs=1e-9)
    assert [p.amplitude for p in peaks] == pytest.approx([0.3, 0.2], rel=1e-9)
    assert peaks[0].phase == pytest.approx(math.pi)  # a negative constant: cosine phase π
    # A tone at exactly sr/2 is found even when n_fft is odd (no Nyquist bin).
    y = generate("sine:4000:0.5:1", n_samples=n, sr=sr)[0]
    (p,) = find_peaks(spectrum(y, sr=sr, window=window))
    assert p.freq_hz == 4000.0
    assert p.amplitude == pytest.approx(0.5 * math.sin(1.0), rel=1e-9)


@pytest.mark.parametrize("interpolation", ["kernel", "quadratic-log", "none"])
def test_dc_and_nyquist_amplitudes_in_every_mode(interpolation):
    x = generate("dc:0.3 + sine:1000:0.2 + sine:4000:0.5:1", n_samples=8000, sr=8000)[0]
    peaks = find_peaks(spectrum(x, sr=8000), interpolation=interpolation)
    got = sorted((p.freq_hz, p.amplitude) for p in peaks)
    assert [f for f, _ in got] == pytest.approx([0.0, 1000.0, 4000.0], abs=1e-9)
    assert [a for _, a in got] == pytest.approx([0.3, 0.2, 0.5 * math.sin(1.0)], rel=1e-9)


def test_close_tones_are_measured_separately():
    sr = 1000.0
    x = tone(100.2, n=1000, sr=sr, amp=1.0) + tone(104.7, n=1000, sr=sr, amp=0.3, phase=1.0)
    peaks = find_peaks(spectrum(x, sr=sr), k=5)
    assert len(peaks) == 2
    assert (peaks[0].freq_hz, peaks[1].freq_hz) == pytest.approx((100.2, 104.7), abs=1e-6)
    assert (peaks[0].amplitude, peaks[1].amplitude) == pytest.approx((1.0, 0.3), rel=1e-6)
    assert peaks[1].phase == pytest.approx(1.0, abs=1e-6)


def test_threshold_min_separation_and_order():
    sr = 1000.0
    weak = tone(300.4, n=1000, sr=sr, amp=10 ** (-70 / 20))
    x = tone(100.3, n=1000, sr=sr, amp=1.0) + tone(130.6, n=1000, sr=sr, amp=0.1) + weak
    spec = spectrum(x, sr=sr, window="blackmanharris")
    assert [round(p.freq_hz, 6) for p in find_peaks(spec)] == [100.3, 130.6]
    deep = find_peaks(spec, threshold_db=-90)
    assert [round(p.freq_hz, 6) for p in deep] == [100.3, 130.6, 300.4]
    assert deep[2].dbfs == pytest.approx(-70, abs=1e-4)
    assert [round(p.freq_hz, 6) for p in find_peaks(spec, min_separation_hz=40)] == [100.3]
    assert len(find_peaks(spec, k=1)) == 1


def test_noisy_tone(rng):
    sr, n = 8000, 8000
    x = tone(1234.56, n=n, sr=sr, amp=0.5, phase=0.2) + 0.01 * rng.standard_normal(n)
    p = find_peaks(spectrum(x, sr=sr), k=1)[0]
    # Noise of σ in a bin of a Hann window: amplitude error ~ σ·sqrt(2·ENBW/N)·...; 1e-3 is > 10 sigma.
    assert p.freq_hz == pytest.approx(1234.56, abs=1e-2)
    assert p.amplitude == pytest.approx(0.5, rel=2e-3)


def test_silent_spectrum_has_no_peaks():
    with pytest.warns(UserWarning):
        spec = spectrum(np.zeros(64), sr=8000)
    with pytest.warns(UserWarning, match="spectrum is silent"):
        assert find_peaks(spec) == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 0}, r"invalid k 0"),
        ({"threshold_db": 3}, r"invalid threshold_db 3: must be a number <= 0"),
        ({"min_separation_hz": -1}, r"invalid min_separation_hz -1"),
        ({"interpolation": "cubic"}, r"invalid interpolation 'cubic': allowed are kernel, quadratic-log, none"),
    ],
)
def test_find_peaks_errors(kwargs, match):
    spec = spectrum(tone(10, n=100, sr=100), sr=100)
    with pytest.raises(ParameterError, match=match):
        find_peaks(spec, **kwargs)


def test_find_peaks_needs_one_channel():
    spec = spectrum(np.ones((2, 16)), sr=100)
    assert isinstance(spec, Spectrum)
    with pytest.raises(ParameterError, match=r"single-channel spectrum, got X shaped \(2, 9\); use spec.channel\(i\)"):
        find_peaks(spec)
    assert [p.freq_hz for p in find_peaks(spec.channel(0))] == [0.0]

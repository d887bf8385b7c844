"""Tests of audiokit.dsp.peaks: interpolated peaks (kernel fit, quadratic-log, plain bins), the
model subtraction of stronger tones, thresholds, and the steps of find_peaks; on recorded speech
and synthetic music, the properties that hold whatever the spectrum: k peaks are the first k of
k + 1, the minimum separation, and the scalloping bound on amplitudes."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from audiokit.dsp.dft import spectrum
from audiokit.dsp.generate import generate
from audiokit.dsp.peaks import INTERPOLATIONS, Peak, _Kernel, _local_maxima, _strongest_first, find_peaks
from audiokit.dsp.windows import WINDOWS, enbw, get_window
from audiokit.errors import ParameterError
from tests.helpers.paths import SPEECH

EPS = np.finfo(np.float64).eps
COSINE_SUM = ["rectangular", "hann", "hamming", "blackman", "blackmanharris", "nuttall", "flattop"]
# The peak fit is a least-squares problem solved to rounding; its answers carry
# errors of ~1e4·eps (frequency in bins, relative amplitude, phase in rad).
FIT_TOL = 1e5 * EPS


def tone(freq, *, n, sr, amp=1.0, phase=0.0):
    """amp·cos(2π f t + phase), the model find_peaks reports."""
    t = np.arange(n) / sr
    return amp * np.cos(2 * np.pi * freq * t + phase)


#: generate()'s warnings these inputs are made to trigger: tones of amplitude 1 + 0.5 + 0.25 pass full scale, and a
#: tone at exactly sr/2 (the Nyquist peak under test) is sampled at two points of its cycle.
OVER_FULL_SCALE = pytest.mark.filterwarnings("ignore:generated signal reaches .*, above full scale:UserWarning")
NYQUIST_TONE = pytest.mark.filterwarnings("ignore:.*a tone at exactly the Nyquist frequency:UserWarning")


# --------------------------------------------------------------------------- peaks


@OVER_FULL_SCALE
def test_three_tone_mix_is_exactly_three_peaks():
    sr = 8000
    x = generate("sine:50:1 + sine:120:0.5 + sine:300:0.25", n_samples=sr, sr=sr)[0]
    peaks = find_peaks(spectrum(x, sr=sr), k=5)
    assert [round(p.freq_hz, 9) for p in peaks] == [50.0, 120.0, 300.0]
    for p, amp in zip(peaks, (1.0, 0.5, 0.25), strict=True):
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


@pytest.mark.slow
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


@settings(max_examples=40)
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


@NYQUIST_TONE
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


@NYQUIST_TONE
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
    with pytest.raises(ParameterError, match=r"single-channel spectrum, got X shaped \(2, 9\); use spec.channel\(i\)"):
        find_peaks(spec)
    assert [p.freq_hz for p in find_peaks(spec.channel(0))] == [0.0]


def test_find_peaks_needs_a_spectrum():
    with pytest.raises(ParameterError, match=r"find_peaks\(\) needs a Spectrum, got ndarray"):
        find_peaks(np.ones(9))


# --------------------------------------------------------------------------- steps


@pytest.mark.parametrize("n_fft", [16, 17, 1000, 1001])
def test_local_maxima_against_a_mirror_extended_naive_scan(rng, n_fft):
    mag = np.abs(rng.standard_normal(n_fft // 2 + 1))
    mag[3] = mag[4] = mag.max() + 1  # a plateau: its left end counts (>= left, > right)
    full = np.concatenate([mag, mag[1 : n_fft - mag.size + 1][::-1]])  # |X| on the whole circle
    naive = [k for k in range(mag.size) if full[k] >= full[k - 1] and full[k] > full[(k + 1) % n_fft]]
    if n_fft % 2 == 1:
        # the last bin and its mirror twin are equal neighbours: strictly above the left one is a maximum
        last = mag.size - 1
        naive = [k for k in naive if k != last] + ([last] if mag[last] > mag[last - 1] else [])
    assert _local_maxima(mag, n_fft).tolist() == sorted(naive)


@pytest.mark.parametrize("k", [1, 2, 7, 40])
def test_strongest_first_is_a_stable_descending_sort(rng, k):
    # More candidates than the first partial sort holds (32·k + 64), with ties straddling its cut:
    # the order, ties in bin order, must not depend on k (the size of the first batch).
    amplitude = np.round(rng.random(5000), 2)
    candidates = np.flatnonzero(amplitude > 0.1)
    order = list(_strongest_first(candidates, amplitude, k))
    expected = candidates[np.argsort(-amplitude[candidates], kind="stable")]
    assert order == expected.tolist()


# --------------------------------------------------------------------------- recorded and dense spectra


def scalloping_bound(window: np.ndarray, n_fft: int) -> float:
    """Naive reference: max over 0 <= δ <= 1/2 bin of |W(0)| / |W(δ)|, W the window's DTFT summed directly."""
    delta = np.linspace(0.0, 0.5, 501)
    dtft = np.abs(np.exp(-2j * np.pi * np.outer(delta, np.arange(window.size)) / n_fft) @ window)
    return float(dtft[0] / dtft.min())


def half_width(spec) -> int:
    """The searched half width (bins of n_fft) of find_peaks' docstring: about one main-lobe half width."""
    lobe = max(1, round(enbw(spec.window) - 0.5))
    return max(1, round(lobe * spec.n_fft / spec.n))


def check_peak_properties(spec, peaks: list[Peak], min_sep: float | None) -> None:
    """Pairwise separation and the scalloping bound (per peak: the largest bin within the half width)."""
    sep = enbw(spec.window) * spec.sr / spec.n if min_sep is None else min_sep
    for p, q in itertools.combinations(peaks, 2):
        assert abs(p.freq_hz - q.freq_hz) >= sep, (p, q)
    bound = scalloping_bound(spec.window, spec.n_fft) * (1 + 1e-8)
    amp, h = spec.amplitude, half_width(spec)
    mirrored = np.concatenate([amp[1 : h + 1][::-1], amp, amp[-h - 1 : -1][::-1]])  # |X| is even around DC/Nyquist
    for p in peaks:
        k = round(p.bin)
        assert p.amplitude <= bound * mirrored[k : k + 2 * h + 1].max(), p
        assert p.amplitude <= bound * amp.max(), p
        assert p.method in INTERPOLATIONS


def music(sr: int = 48000, dur: float = 1.0, seed: int = 7) -> np.ndarray:
    """A 'recording' of a chord: four harmonic notes with vibrato and decay, and noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(sr * dur)) / sr
    x = 0.003 * rng.standard_normal(t.size)
    for f0, a in ((220.0, 0.3), (277.18, 0.2), (329.63, 0.2), (440.0, 0.1)):
        phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.006 * np.sin(2 * np.pi * 5.5 * t + rng.uniform(0, 6)))) / sr
        for h in range(1, 9):
            x += a / h**1.2 * np.sin(h * phase + rng.uniform(0, 6)) * np.exp(-t * rng.uniform(0.5, 2))
    return x


@cache
def recording(name: str) -> tuple[np.ndarray, int]:
    if name == "speech":
        x, sr = sf.read(SPEECH, dtype="float64")  # real speech, 16 kHz
        return x, sr
    return music(), 48000


@pytest.mark.slow
@settings(max_examples=25)
@given(
    name=st.sampled_from(["speech", "music"]),
    start=st.floats(0.0, 0.9),
    dur=st.floats(0.05, 0.5),
    window=st.sampled_from([*WINDOWS, "kaiser:4"]),
    periodic=st.booleans(),
    pad=st.sampled_from([1, 2]),
    min_sep=st.sampled_from([None, 0.0, 5.0, 20.0]),
    k=st.integers(1, 8),
)
def test_peaks_on_recorded_segments(name, start, dur, window, periodic, pad, min_sep, k):
    # The three properties on dense, real spectra: k peaks are the first k of k + 1 (values and
    # order), reported frequencies are min_sep apart, no amplitude beyond the scalloping bound.
    x, sr = recording(name)
    first = int(start * (x.size - 0.5 * sr))
    seg = x[first : first + int(dur * sr)]
    spec = spectrum(seg, sr=sr, window=window, periodic=periodic, n_fft=pad * seg.size)
    fewer, more = (find_peaks(spec, k=n, min_separation_hz=min_sep) for n in (k, k + 1))
    assert fewer == more[:k]
    check_peak_properties(spec, more, min_sep)


@pytest.mark.slow
@pytest.mark.parametrize("window", ["hann", "flattop", "rectangular"])
def test_speech_peaks_do_not_move_with_k(window):
    # The report of issue 17 on a recorded voice: --peaks 1 / 2 / 5 gave different strongest peaks,
    # pairs 0.8 Hz apart under --min-sep 5 and amplitudes 3 dB above any bin.
    x, sr = recording("speech")
    spec = spectrum(x[sr : 3 * sr], sr=sr, window=window)
    runs = {k: find_peaks(spec, k=k, min_separation_hz=5.0) for k in (1, 2, 5, 6)}
    for k in (1, 2, 5):
        assert runs[k] == runs[6][:k]
    check_peak_properties(spec, runs[6], 5.0)


def test_an_implausible_kernel_fit_falls_back():
    # A tone with vibrato (±6 Hz at 2 Hz) is no single sinusoid: the kernel fit of its strongest
    # lobe reads 1.7 dB above the largest bin, beyond Hann's 1.42 dB scalloping bound.
    sr = n = 1000
    t = np.arange(n) / sr
    spec = spectrum(np.cos(2 * np.pi * 100 * t + 3 * np.sin(2 * np.pi * 2 * t)), sr=sr)
    peaks = find_peaks(spec, k=3)
    assert peaks[0].method == "quadratic-log"
    assert abs(peaks[0].freq_hz - np.argmax(spec.amplitude)) <= 0.5
    check_peak_properties(spec, peaks, None)
    # a plain tone keeps the exact fit
    (p,) = find_peaks(spectrum(np.cos(2 * np.pi * 100.3 * t), sr=sr), k=3)
    assert p.method == "kernel" and p.amplitude == pytest.approx(1.0, rel=FIT_TOL)


@pytest.mark.parametrize("window", [*WINDOWS, "kaiser:8.6"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("pad", [1, 3])
def test_scalloping_gain_from_the_window(window, periodic, pad):
    name, _, beta = window.partition(":")
    w = get_window(name, 400, periodic=periodic, beta=float(beta) if beta else None)
    gain = _Kernel(w, pad * 400).scalloping_gain()
    assert 1 / gain == pytest.approx(scalloping_bound(w, pad * 400), rel=1e-9)


def test_scalloping_losses_of_known_windows():
    loss = {
        name: -20 * math.log10(_Kernel(get_window(name, 4096), 4096).scalloping_gain()) for name in WINDOWS if name != "kaiser"
    }
    assert loss["hann"] == pytest.approx(1.42, abs=0.005)
    assert loss["rectangular"] == pytest.approx(3.92, abs=0.005)
    assert loss["flattop"] < 0.02

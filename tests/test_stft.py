"""Tests of audiokit.dsp.stft: plan, forward vs references, streaming, inverse."""

from __future__ import annotations

import warnings

import librosa
import numpy as np
import pytest
import scipy.signal as ss
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audiokit.dsp.stft import IstftStream, StftPlan, StftStream, spectrogram, stft
from audiokit.dsp.windows import WINDOWS, get_window
from audiokit.engine import get_backend
from audiokit.errors import InputError, ParameterError

HYP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


def naive_stft(x, *, n_fft, hop, win_length, window="hann", center=False, pad_mode="constant", periodic=True):
    """Loop over frames, window (centred in n_fft) and np.fft.rfft each one, in float64."""
    w = np.zeros(n_fft)
    off = (n_fft - win_length) // 2
    w[off : off + win_length] = get_window(window, win_length, periodic=periodic)
    x = np.asarray(x, dtype=np.float64)
    if center:
        x = np.pad(x, (n_fft // 2, n_fft // 2), mode=pad_mode)
    if len(x) < n_fft:
        x = np.pad(x, (0, n_fft - len(x)))
    cols = [np.fft.rfft(x[m * hop : m * hop + n_fft] * w) for m in range(1 + (len(x) - n_fft) // hop)]
    return np.stack(cols, axis=-1)


def assert_close_spectra(X, ref, dtype=np.float64, k=64):
    """|X - ref| <= k * eps * max|ref| (FFT rounding grows like eps * |frame| * log N)."""
    assert X.shape == ref.shape
    tol = k * np.finfo(dtype).eps * max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(X - ref))) if X.size else 0.0
    assert err <= tol, (err, tol)


# ---------------------------------------------------------------------------- plan


def test_article_numbers():
    plan = StftPlan(sr=22050, win_length=512, hop_length=128)
    assert plan.n_fft == 512 and plan.n_freqs == 257
    assert plan.n_frames(52225) == 405
    x = np.zeros(52225, np.float32)
    assert spectrogram(x, plan).shape == (257, 405)


def test_plan_derived_quantities():
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)
    assert plan.delta_f == 16000 / 512
    assert plan.delta_t == 160 / 16000
    np.testing.assert_array_equal(plan.freqs, np.fft.rfftfreq(512, 1 / 16000))
    assert plan.win_offset == 56 and plan.pad == 0
    assert plan.padded_window[:56].sum() == 0 and plan.padded_window[456:].sum() == 0
    np.testing.assert_array_equal(plan.padded_window[56:456], get_window("hann", 400))
    assert plan.n_frames(16000) == 1 + (16000 - 512) // 160
    centred = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True)
    assert centred.pad == 256 and centred.n_frames(16000) == 1 + 16000 // 160
    assert StftPlan(sr=8000, win_length=5, hop_length=2, center=True).n_frames(10) == 1 + (10 + 4 - 5) // 2
    assert plan.window_spec == "hann" and StftPlan(sr=1, win_length=8, hop_length=2, window="Kaiser:4").window_spec == "kaiser:4"
    with pytest.raises(Exception):
        plan.hop_length = 3  # frozen


def test_times():
    plan = StftPlan(sr=16000, win_length=512, hop_length=128)
    np.testing.assert_allclose(plan.times(4), np.arange(4) * 128 / 16000)
    np.testing.assert_allclose(plan.times(4, where="centre"), (np.arange(4) * 128 + 256) / 16000)
    c = StftPlan(sr=16000, win_length=512, hop_length=128, center=True)
    np.testing.assert_allclose(c.times(5, where="center"), librosa.frames_to_time(np.arange(5), sr=16000, hop_length=128))
    np.testing.assert_allclose(c.times(2), (np.arange(2) * 128 - 256) / 16000)
    with pytest.raises(ParameterError, match="where must be 'start' or 'centre', got 'end'"):
        plan.times(3, where="end")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"win_length": 0}, r"win_length must be an integer > 0 \(samples\), got 0"),
        ({"hop_length": -1}, r"hop_length must be an integer > 0 \(samples\), got -1"),
        ({"hop_length": 2.5}, r"hop_length must be an integer > 0 \(samples\), got 2.5"),
        ({"n_fft": 100}, r"n_fft must be an integer >= win_length \(256\), got 100"),
        ({"sr": 0}, r"sr must be a number > 0 \(Hz\), got 0"),
        ({"window": "gauss"}, r"unknown window 'gauss'; allowed: rectangular, hann"),
        ({"window": "hann", "beta": 3.0}, r"beta applies to the kaiser window only"),
        ({"pad_mode": "edge"}, r"pad_mode must be one of constant, reflect; got 'edge'"),
        ({"dtype": "int16"}, r"dtype must be one of float32, float64 or None; got 'int16'"),
    ],
)
def test_plan_errors(kwargs, match):
    base = {"sr": 16000, "win_length": 256, "hop_length": 64}
    with pytest.raises(ParameterError, match=match):
        StftPlan(**{**base, **kwargs})


def test_empty_and_scalar_input():
    plan = StftPlan(sr=8000, win_length=64, hop_length=16)
    with pytest.raises(InputError, match="the signal has no samples"):
        plan.stft(np.zeros(0))
    with pytest.raises(ParameterError, match="x must have a time axis"):
        plan.stft(np.float64(1.0))
    with pytest.raises(ParameterError, match="x must be real, got dtype complex128"):
        plan.stft(np.zeros(100, complex))
    with pytest.raises(ParameterError, match="n_samples must be >= 1, got 0"):
        plan.n_frames(0)


def test_short_input_uncentred_is_zero_padded_with_warning(rng):
    plan = StftPlan(sr=8000, win_length=64, hop_length=16)
    x = rng.standard_normal(40)
    with pytest.warns(UserWarning, match="input has 40 samples, fewer than n_fft=64: zero-padded to one frame"):
        X = plan.stft(x)
    assert X.shape == (33, 1)
    assert_close_spectra(X[:, 0], np.fft.rfft(np.pad(x, (0, 24)) * plan.win))


# ---------------------------------------------------------------------------- forward vs references


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("pad_mode", ["constant", "reflect"])
@pytest.mark.parametrize(("win_length", "n_fft", "hop"), [(512, 512, 128), (400, 512, 160), (101, 128, 33), (64, 64, 64)])
def test_stft_equals_naive(rng, center, pad_mode, win_length, n_fft, hop):
    x = rng.standard_normal(5003)
    plan = StftPlan(sr=16000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center, pad_mode=pad_mode)
    X = plan.stft(x)
    np.testing.assert_array_equal(stft(x, plan), X)
    ref = naive_stft(x, n_fft=n_fft, hop=hop, win_length=win_length, center=center, pad_mode=pad_mode)
    assert X.shape == (n_fft // 2 + 1, plan.n_frames(len(x))) and X.dtype == np.complex128
    assert_close_spectra(X, ref)


def test_stft_equals_direct_dft(rng):
    """O(N^2) DFT from the definition, no FFT library at all."""
    n_fft, hop = 16, 5
    x = rng.standard_normal(60)
    plan = StftPlan(sr=1000, win_length=12, hop_length=hop, n_fft=n_fft, window="hamming")
    X = plan.stft(x)
    v = plan.padded_window
    k = np.arange(n_fft // 2 + 1)[:, None]
    n = np.arange(n_fft)[None, :]
    E = np.exp(-2j * np.pi * k * n / n_fft)
    ref = np.stack([E @ (x[m * hop : m * hop + n_fft] * v) for m in range(1 + (60 - n_fft) // hop)], axis=-1)
    assert_close_spectra(X, ref, k=16)


def test_parseval_one_frame(rng):
    n_fft = 256
    x = rng.standard_normal(n_fft)
    plan = StftPlan(sr=1000, win_length=n_fft, hop_length=64, window="blackman")
    X = plan.stft(x)[:, 0]
    frame = x * plan.win
    energy = (abs(X[0]) ** 2 + 2 * np.sum(abs(X[1:-1]) ** 2) + abs(X[-1]) ** 2) / n_fft
    assert energy == pytest.approx(np.sum(frame**2), rel=64 * np.finfo(float).eps)


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize(("win_length", "hop"), [(256, 64), (255, 100)])
def test_stft_equals_scipy_shorttimefft(rng, center, win_length, hop):
    x = rng.standard_normal(3000)
    plan = StftPlan(sr=1000, win_length=win_length, hop_length=hop, center=center)
    X = plan.stft(x)
    sft = ss.ShortTimeFFT(plan.win, hop, 1000, phase_shift=None)
    # scipy centres slice p on sample p*hop (zero padding); uncentred = t=0 at x[W//2]
    ref = sft.stft(x, p0=0, p1=X.shape[-1], k_offset=0 if center else win_length // 2)
    assert_close_spectra(X, ref)
    np.testing.assert_allclose(plan.freqs, sft.f)
    assert plan.delta_t == sft.delta_t and plan.delta_f == sft.delta_f


def test_stft_magnitude_equals_scipy_with_padding(rng):
    """n_fft > W: scipy puts the window at the start of the FFT buffer, we centre it: same magnitude."""
    x = rng.standard_normal(4000)
    plan = StftPlan(sr=1000, win_length=200, hop_length=50, n_fft=256, center=True)
    X = plan.stft(x)
    sft = ss.ShortTimeFFT(plan.win, 50, 1000, mfft=256, phase_shift=None)
    # our frame m starts at m*H - 128 + 28 (window offset) = scipy's slice centred at m*H
    ref = sft.stft(x, p0=0, p1=X.shape[-1], k_offset=0)
    ref_shift = ref * np.exp(-2j * np.pi * np.arange(129)[:, None] * plan.win_offset / 256)
    assert_close_spectra(np.abs(X), np.abs(ref))
    assert_close_spectra(X, ref_shift)


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("pad_mode", ["constant", "reflect"])
@pytest.mark.parametrize(("win_length", "n_fft", "hop"), [(512, 512, 128), (400, 512, 160), (300, 301, 77)])
@pytest.mark.parametrize("n", [52225, 700, 100])
def test_stft_equals_librosa(rng, center, pad_mode, win_length, n_fft, hop, n):
    if not center and n < n_fft:
        pytest.skip("librosa refuses input shorter than n_fft with center=False")
    x = rng.uniform(-1, 1, n)
    plan = StftPlan(sr=16000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center, pad_mode=pad_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X = plan.stft(x)
        ref = librosa.stft(x, n_fft=n_fft, hop_length=hop, win_length=win_length, window="hann",
                           center=center, pad_mode=pad_mode)
    assert_close_spectra(X, ref)


def test_multichannel_and_dtypes(rng):
    x = rng.uniform(-1, 1, (2, 3, 2000)).astype(np.float32)
    plan = StftPlan(sr=8000, win_length=256, hop_length=64, center=True)
    X = plan.stft(x)
    assert X.shape == (2, 3, 129, plan.n_frames(2000)) and X.dtype == np.complex64
    for i in range(2):
        for j in range(3):
            assert_close_spectra(X[i, j], plan.stft(x[i, j]), np.float32)
    ref = naive_stft(x[1, 2], n_fft=256, hop=64, win_length=256, center=True)
    assert_close_spectra(X[1, 2], ref, np.float32)
    X64 = StftPlan(sr=8000, win_length=256, hop_length=64, dtype="float64").stft(x[0, 0])
    assert X64.dtype == np.complex128
    X32 = StftPlan(sr=8000, win_length=256, hop_length=64, dtype="float32").stft(x[0, 0].astype(np.float64))
    assert X32.dtype == np.complex64
    # integer PCM is computed in float64
    assert plan.stft((x[0, 0] * 32767).astype(np.int16)).dtype == np.complex128


def test_frames_consistent_with_stft(rng):
    x = rng.standard_normal(1500)
    plan = StftPlan(sr=1000, win_length=100, hop_length=30, n_fft=128, center=True, pad_mode="reflect")
    F = plan.frames(x)
    assert F.shape == (plan.n_frames(1500), 128)
    assert_close_spectra(plan.stft(x), np.fft.rfft(F, axis=-1).T)


def test_spectrogram_power_and_magnitude(rng):
    x = rng.standard_normal(4000).astype(np.float32)
    plan = StftPlan(sr=8000, win_length=256, hop_length=64)
    X = plan.stft(x)
    P = spectrogram(x, plan)
    M = spectrogram(x, plan, power=1.0)
    assert P.dtype == np.float32 and M.dtype == np.float32
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(P, np.abs(X.astype(np.complex128)) ** 2, rtol=8 * eps, atol=8 * eps * P.max())
    np.testing.assert_allclose(M, np.abs(X), rtol=8 * eps, atol=8 * eps * M.max())
    D = spectrogram(x, plan, log="db")
    np.testing.assert_allclose(D, 10 * np.log10(np.maximum(1e-10, P.astype(np.float64))), atol=1e-4)
    with pytest.raises(ParameterError, match=r"power must be 2.0 \(power\) or 1.0 \(magnitude\), got 3"):
        spectrogram(x, plan, power=3)


# ---------------------------------------------------------------------------- streaming


@st.composite
def stream_case(draw):
    win_length = draw(st.integers(1, 96))
    n_fft = win_length + draw(st.integers(0, 20))
    hop = draw(st.integers(1, 2 * n_fft))
    center = draw(st.booleans())
    pad_mode = draw(st.sampled_from(["constant", "reflect"]))
    n = draw(st.integers(1, 900))
    sizes = draw(st.lists(st.integers(0, 150), max_size=40))
    channels = draw(st.sampled_from([(), (2,)]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    output = draw(st.sampled_from(["complex", "power", "magnitude"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return win_length, n_fft, hop, center, pad_mode, n, sizes, channels, dtype, output, seed


def feed(stream, x, sizes):
    parts, i = [], 0
    for s in sizes:
        parts.append(stream.push(x[..., i : i + s]))
        i += s
    parts.append(stream.push(x[..., i:]))
    parts.append(stream.finish())
    return np.concatenate(parts, axis=-1)


@HYP
@given(stream_case())
def test_stream_equals_one_shot(case):
    win_length, n_fft, hop, center, pad_mode, n, sizes, channels, dtype, output, seed = case
    x = np.random.default_rng(seed).uniform(-1, 1, channels + (n,)).astype(dtype)
    plan = StftPlan(sr=8000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center, pad_mode=pad_mode)
    numpy_fft = get_backend("numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # framing logic: bit-exact when every frame is transformed alone
        whole = feed(StftStream(plan, output=output, backend=numpy_fft, chunk_frames=1), x, [])
        blocks = feed(StftStream(plan, output=output, backend=numpy_fft, chunk_frames=1), x, sizes)
        # default batching and backend vs the public one-shot call: equal to rounding
        batched = feed(StftStream(plan, output=output), x, sizes)
        one_shot = plan.stft(x) if output == "complex" else spectrogram(x, plan, power=2.0 if output == "power" else 1.0)
    assert blocks.shape == whole.shape == one_shot.shape == channels + (plan.n_freqs, plan.n_frames(n))
    np.testing.assert_array_equal(blocks, whole)
    assert_close_spectra(batched, one_shot, dtype, k=64)


def test_stream_holds_bounded_state(rng):
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True, pad_mode="reflect")
    s = StftStream(plan, output="power")
    x = rng.standard_normal(50_000)
    got = 0
    for i in range(0, len(x), 1000):
        got += s.push(x[i : i + 1000]).shape[-1]
        assert s._buf.shape[-1] <= plan.n_fft + plan.hop_length + plan.pad
    got += s.finish().shape[-1]
    assert got == plan.n_frames(len(x)) and s.n_frames_out == got and s.n_samples_in == len(x)


def test_stream_reflect_waits_for_left_mirror(rng):
    plan = StftPlan(sr=8000, win_length=64, hop_length=16, center=True, pad_mode="reflect")
    s = StftStream(plan)
    assert s.push(rng.standard_normal(32)).shape == (33, 0)  # pad + 1 = 33 samples needed
    assert s.push(rng.standard_normal(1)).shape[-1] == 1 + (32 + 33 - 64) // 16


def test_stream_errors(rng):
    plan = StftPlan(sr=8000, win_length=64, hop_length=16)
    s = StftStream(plan)
    with pytest.raises(InputError, match="the signal has no samples"):
        s.finish()
    s = StftStream(plan)
    s.push(rng.standard_normal((2, 100)))
    with pytest.raises(ParameterError, match=r"block leading shape \(3,\) differs from the first block's \(2,\)"):
        s.push(rng.standard_normal((3, 100)))
    s.finish()
    with pytest.raises(ParameterError, match=r"push\(\) after finish\(\)"):
        s.push(rng.standard_normal((2, 10)))
    with pytest.raises(ParameterError, match="output must be one of complex, power, magnitude; got 'db'"):
        StftStream(plan, output="db")
    with pytest.raises(ParameterError, match="output='complex' takes no filterbank and no log"):
        StftStream(plan, log="db")
    with pytest.raises(ParameterError, match=r"filterbank must be shaped \(n_bands, n_freqs=33\), got \(4, 10\)"):
        StftStream(plan, output="power", filterbank=np.ones((4, 10)))


# ---------------------------------------------------------------------------- inverse


def abs_window_sum(plan, n_frames):
    v = np.abs(plan.padded_window)
    out = np.zeros(plan.n_fft + plan.hop_length * (n_frames - 1))
    for m in range(n_frames):
        out[m * plan.hop_length : m * plan.hop_length + plan.n_fft] += v
    return out


def check_reconstruction(plan, x, y):
    """Exact to rounding where the window sum-square is numerically nonzero, 0 elsewhere.

    Per-sample bound: |y - x| <= 8 * eps * max|x| * ||v||_2 * sum|v| / sum v^2
    (one FFT round trip per frame, error eps * |frame|, weighted by the OLA).
    """
    n = x.shape[-1]
    m = plan.n_frames(n)
    eps = np.finfo(x.dtype).eps
    wss = np.pad(plan.window_sumsquare(m), (0, n + 2 * plan.n_fft))[plan.pad : plan.pad + n]
    was = np.pad(abs_window_sum(plan, m), (0, n + 2 * plan.n_fft))[plan.pad : plan.pad + n]
    floor = eps * plan.window_sumsquare(plan.n_fft // plan.hop_length + 2).max()
    covered = wss > floor
    assert np.all(y[..., ~covered] == 0)
    bound = 8 * eps * np.max(np.abs(x)) * np.linalg.norm(plan.padded_window) * was[covered] / wss[covered]
    err = np.abs(y[..., covered].astype(np.float64) - x[..., covered])
    assert np.all(err <= bound), float(np.max(err / bound))
    return covered


@st.composite
def inverse_case(draw):
    window = draw(st.sampled_from(WINDOWS))
    win_length = draw(st.integers(2, 160))
    n_fft = win_length + draw(st.integers(0, 24))
    hop = draw(st.integers(1, win_length))
    return (window, win_length, n_fft, hop, draw(st.booleans()), draw(st.booleans()),
            draw(st.sampled_from(["constant", "reflect"])), draw(st.integers(1, 1500)),
            draw(st.sampled_from([np.float32, np.float64])), draw(st.integers(0, 2**32 - 1)))


@HYP
@given(inverse_case())
def test_istft_round_trip(case):
    window, win_length, n_fft, hop, periodic, center, pad_mode, n, dtype, seed = case
    plan = StftPlan(sr=8000, win_length=win_length, hop_length=hop, n_fft=n_fft, window=window,
                    periodic=periodic, center=center, pad_mode=pad_mode)
    if not plan.invertible:
        with pytest.raises(ParameterError, match="violates NOLA"):
            plan.istft(np.zeros((plan.n_freqs, 3), complex))
        return
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X = plan.stft(x)
    y = plan.istft(X, length=n)
    assert y.shape == (n,) and y.dtype == dtype
    check_reconstruction(plan, x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("hop", [128, 256])
@pytest.mark.parametrize("center", [True, False])
def test_istft_hann_absolute_tolerance(rng, dtype, hop, center):
    """Targets: max error <= 1e-6 (float32), <= 1e-12 (float64) on full-scale audio."""
    n = 20_000
    x = rng.uniform(-1, 1, (2, n)).astype(dtype)
    plan = StftPlan(sr=16000, win_length=512, hop_length=hop, center=center, pad_mode="reflect")
    y = plan.istft(plan.stft(x), length=n)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    if center:
        region = slice(0, n)  # every sample is reconstructed
    else:
        # uncentred: samples seen by the full number of frames (w[0] = 0 makes sample 0 unrecoverable)
        last = plan.n_frames(n) - 1
        region = slice(plan.n_fft - hop, last * hop + hop)
        assert y[:, 0].tolist() == [0.0, 0.0]
        assert np.all(y[:, last * hop + plan.n_fft :] == 0)  # tail after the last frame
    assert np.max(np.abs(y[:, region] - x[:, region])) <= tol


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize(("win_length", "n_fft", "hop"), [(512, 512, 128), (400, 512, 160)])
@pytest.mark.parametrize("length", [None, 9000, 9500])
def test_istft_equals_librosa(rng, center, win_length, n_fft, hop, length):
    x = rng.uniform(-1, 1, 9000)
    plan = StftPlan(sr=16000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center)
    X = plan.stft(x)
    y = plan.istft(X, length=length)
    ref = librosa.istft(X, n_fft=n_fft, hop_length=hop, win_length=win_length, center=center, length=length)
    assert y.shape == ref.shape
    # identical formula; librosa divides even where the window sum-square is ~0
    wss = np.pad(plan.window_sumsquare(X.shape[-1]), (0, 2 * n_fft))[plan.pad : plan.pad + len(y)]
    good = wss > 1e-6
    np.testing.assert_allclose(y[good], ref[good], rtol=0, atol=1e-12)


def test_istft_nola_violation_refused():
    X = np.zeros((257, 10), complex)
    with pytest.raises(ParameterError, match=r"window 'hann' \(win_length=512, n_fft=512, periodic=True\) "
                                             r"with hop_length=512 violates NOLA"):
        StftPlan(sr=16000, win_length=512, hop_length=512).istft(X)
    with pytest.raises(ParameterError, match=r"window 'rectangular' .* hop_length=600 violates NOLA"):
        StftPlan(sr=16000, win_length=512, hop_length=600, window="rect").istft(X)
    assert StftPlan(sr=16000, win_length=512, hop_length=512, window="rect").invertible
    with pytest.raises(ParameterError, match=r"violates NOLA"):
        IstftStream(StftPlan(sr=16000, win_length=512, hop_length=512))


def test_istft_errors_and_length(rng):
    plan = StftPlan(sr=8000, win_length=64, hop_length=16, center=True)
    X = plan.stft(rng.standard_normal(1000))
    with pytest.raises(ParameterError, match=r"STFT must be shaped \(\.\.\., n_freqs=33, n_frames\) for n_fft=64, got \(32, 63\)"):
        plan.istft(X[:32])
    with pytest.raises(ParameterError, match="length must be an integer >= 0 \\(samples\\), got -1"):
        plan.istft(X, length=-1)
    # default length: n_fft + H*(M-1) - 2*pad = H*(M-1) for centred frames (librosa's)
    assert plan.istft(X).shape == (plan.n_samples(X.shape[-1]),) == (16 * 62,)
    assert plan.istft(X, length=0).shape == (0,)
    y = plan.istft(X, length=1200)
    assert np.all(y[1000 + plan.pad :] == 0)


@st.composite
def istream_case(draw):
    win_length = draw(st.integers(4, 128))
    n_fft = win_length + draw(st.integers(0, 16))
    hop = draw(st.integers(1, win_length // 2))
    return (win_length, n_fft, hop, draw(st.booleans()), draw(st.integers(1, 1200)),
            draw(st.one_of(st.none(), st.integers(0, 1500))),
            draw(st.lists(st.integers(0, 30), max_size=30)), draw(st.integers(0, 2**32 - 1)))


@HYP
@given(istream_case())
def test_istft_stream_equals_one_shot(case):
    win_length, n_fft, hop, center, n, length, sizes, seed = case
    plan = StftPlan(sr=8000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center)
    x = np.random.default_rng(seed).uniform(-1, 1, (2, n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X = plan.stft(x)
    ref = plan.istft(X, length=length)
    s = IstftStream(plan, length=length)
    parts, i = [], 0
    for k in sizes:
        parts.append(s.push(X[..., i : i + k]))
        i += k
    parts.append(s.push(X[..., i:]))
    parts.append(s.finish())
    y = np.concatenate(parts, axis=-1)
    assert y.shape == ref.shape
    # same formula, additions in another order: rounding, amplified where the window sum is small
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------- batching paths
# Whole batches of frames go through the polyphase layout (one long windowing
# product per phase, FFTW reading frames straight from it); the rest of a call
# goes row by row through the backend's shared RealPlan.  Both must agree.

import threading  # noqa: E402

import audiokit.dsp.stft as stft_mod  # noqa: E402

GEOMETRIES = [  # (win_length, n_fft, hop, center): phases P forward / inverse in the comments
    (400, 512, 160, True),  # 3 / 4, the benchmark's
    (256, 256, 64, False),  # 4 / 4
    (301, 320, 100, False),  # odd padding (lo = 9): 4 / 4
    (512, 512, 200, True),  # hop > W/3: 3 / 3
    (128, 128, 128, False),  # no overlap: 1 / 1
    (64, 64, 3, True),  # 22 / 22
    (32, 32, 1, False),  # 32 / 32: 8 frames per phase
]


@pytest.fixture
def row_by_row(monkeypatch):
    """A context switch: inside ``with row_by_row():`` the polyphase layout is never used."""

    class Switch:
        def __enter__(self):
            monkeypatch.setattr(stft_mod, "_POLY_MIN_PER_PHASE", 10**9)

        def __exit__(self, *exc):
            monkeypatch.setattr(stft_mod, "_POLY_MIN_PER_PHASE", 2)

    return Switch


def frames_for(plan, batches=2.5):
    """A signal length giving about ``batches`` default batches of frames plus a remainder."""
    return int(batches * stft_mod.DEFAULT_CHUNK_FRAMES * plan.hop_length) + plan.n_fft + 7


@pytest.mark.parametrize("backend_name", ["fftw", "numpy"])
@pytest.mark.parametrize(("win_length", "n_fft", "hop", "center"), GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_polyphase_batches_equal_row_by_row_and_reference(rng, row_by_row, backend_name, win_length, n_fft, hop,
                                                          center, dtype):
    backend = get_backend(backend_name)
    plan = StftPlan(sr=8000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center)
    x = rng.uniform(-1, 1, (2, frames_for(plan))).astype(dtype)
    X = stft(x, plan, backend=backend)
    P = spectrogram(x, plan, backend=backend)
    M = spectrogram(x, plan, power=1.0, backend=backend, log="db")
    with row_by_row():
        X1 = stft(x, plan, backend=backend)
        P1 = spectrogram(x, plan, backend=backend)
        M1 = spectrogram(x, plan, power=1.0, backend=backend, log="db")
    assert X.dtype == X1.dtype and P.dtype == P1.dtype == dtype
    assert_close_spectra(X, X1, dtype)
    assert_close_spectra(P, P1, dtype)
    np.testing.assert_allclose(M, M1, rtol=0, atol=1e-3 if dtype == np.float32 else 1e-9)
    ref = naive_stft(x[1], n_fft=n_fft, hop=hop, win_length=win_length, center=center)
    assert_close_spectra(X[1], ref, dtype)


@pytest.mark.parametrize("where", ["margin", "window", "nan"])
def test_polyphase_non_finite_input_is_handled_like_row_by_row(rng, row_by_row, where):
    """The polyphase product also multiplies the zero padding (0 * inf = NaN): such batches go row by row."""
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)
    x = rng.uniform(-1, 1, frames_for(plan)).astype(np.float32)
    # sample 160*300 + 20 is in the zero padding of frame 300 (offset 20 < 56) and in the window of frame 299
    x[160 * 300 + 20] = np.nan if where == "nan" else np.inf
    if where == "window":
        x[160 * 300 + 20] = 0
        x[160 * 300 + 100] = -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = spectrogram(x, plan)
        with row_by_row():
            P1 = spectrogram(x, plan)
    np.testing.assert_array_equal(np.isnan(P), np.isnan(P1))
    np.testing.assert_array_equal(np.isinf(P), np.isinf(P1))
    ok = np.isfinite(P1)
    assert not ok.all() and ok[:, 0].all()
    assert_close_spectra(P[ok], P1[ok], np.float32)


@pytest.mark.parametrize(("win_length", "n_fft", "hop", "center"), [g for g in GEOMETRIES if g[2] < g[0]])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_istft_polyphase_batches_equal_row_by_row(rng, row_by_row, win_length, n_fft, hop, center, dtype):
    plan = StftPlan(sr=8000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center)
    n = frames_for(plan)
    x = rng.uniform(-1, 1, (2, n)).astype(dtype)
    X = plan.stft(x)
    y = plan.istft(X, length=n)
    with row_by_row():
        y1 = plan.istft(X, length=n)
    assert y.dtype == y1.dtype == dtype
    atol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, y1, rtol=0, atol=atol)
    if center:
        np.testing.assert_allclose(y, x, rtol=0, atol=atol)
    # a stream fed in uneven blocks (batches and remainders mixed) agrees too
    s = IstftStream(plan, length=n)
    parts, i = [], 0
    for k in (3, 700, 1, 255, 256, 511, 40):
        parts.append(s.push(X[..., i : i + k]))
        i += k
    parts.append(s.push(X[..., i:]))
    parts.append(s.finish())
    np.testing.assert_allclose(np.concatenate(parts, axis=-1), y1, rtol=0, atol=atol)


def test_streams_sharing_cached_buffers_interleaved(rng):
    """Streams of different windows in one n_fft share the backend's RealPlan: each still gets its own padding."""
    plans = [StftPlan(sr=8000, win_length=w, hop_length=32, n_fft=128) for w in (128, 100, 64)]
    x = rng.uniform(-1, 1, 6000)
    streams = [StftStream(p, output="power") for p in plans]
    parts: list[list[np.ndarray]] = [[] for _ in plans]
    for i in range(0, len(x), 700):
        for s, out in zip(streams, parts):
            out.append(s.push(x[i : i + 700]))
    for p, s, out in zip(plans, streams, parts):
        out.append(s.finish())
        got = np.concatenate(out, axis=-1)
        ref = np.abs(naive_stft(x, n_fft=128, hop=32, win_length=p.win_length)) ** 2
        assert_close_spectra(got, ref)


def test_threads_share_plans_and_batches(rng):
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True)
    xs = [rng.uniform(-1, 1, frames_for(plan, 1.7 + i / 3)).astype(np.float32) for i in range(4)]
    serial = [(spectrogram(x, plan), plan.istft(plan.stft(x), length=len(x))) for x in xs]
    results: dict[int, tuple] = {}

    def work(i):
        for _ in range(3):
            results[i] = (spectrogram(xs[i], plan), plan.istft(plan.stft(xs[i]), length=len(xs[i])))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (P, y) in enumerate(serial):
        np.testing.assert_array_equal(results[i][0], P)
        np.testing.assert_array_equal(results[i][1], y)


def test_polyphase_cache_is_bounded(rng, monkeypatch):
    monkeypatch.setattr(stft_mod, "_POLY_CACHE_BYTES", 1)  # nothing fits: used once, then dropped
    plan = StftPlan(sr=8000, win_length=256, hop_length=64)
    x = rng.uniform(-1, 1, frames_for(plan))
    P = spectrogram(x, plan)
    assert len(stft_mod._POLY_CACHE) == 0
    monkeypatch.setattr(stft_mod, "_POLY_CACHE_BYTES", 64 * 1024 * 1024)
    monkeypatch.setattr(stft_mod, "_POLY_CACHE_SIZE", 2)
    for hop in (64, 50, 40, 64):
        p = StftPlan(sr=8000, win_length=256, hop_length=hop)
        got = spectrogram(x, p)
        assert_close_spectra(got, np.abs(naive_stft(x, n_fft=256, hop=hop, win_length=256)) ** 2)
        assert len(stft_mod._POLY_CACHE) <= 2
    assert_close_spectra(spectrogram(x, plan), P)


def test_polyphase_forward_spectra_rows_are_32_byte_aligned():
    """The forward batch's spectra rows are padded to 32 bytes (FFTW's SIMD codelets need aligned rows)."""
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)
    win = plan.win.astype(np.float32)
    poly = stft_mod._PolyForward(get_backend("fftw"), 512, 160, plan.win_offset, win, np.dtype(np.float32), 256)
    assert poly.spec.shape == (poly.K, 257)
    assert poly.spec.strides[0] % 32 == 0 and poly.spec.ctypes.data % 32 == 0

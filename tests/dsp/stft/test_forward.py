"""Tests of audiokit.dsp.stft.forward: one-shot and streaming forward STFT against references."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal as ss
from hypothesis import given, settings
from hypothesis import strategies as st

from audiokit.dsp.stft import StftPlan, StftStream, compute, spectrogram, stft
from audiokit.engine import get_backend
from audiokit.errors import InputError, ParameterError
from tests.helpers.stft_reference import assert_close_spectra, naive_stft

HYP = settings(max_examples=60)  # the rest from the profile in tests/conftest.py


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


# ---------------------------------------------------------------------------- input checks


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


@pytest.mark.slow
@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("pad_mode", ["constant", "reflect"])
@pytest.mark.parametrize(("win_length", "n_fft", "hop"), [(512, 512, 128), (400, 512, 160), (300, 301, 77)])
@pytest.mark.parametrize("n", [52225, 700, 100])
def test_stft_equals_librosa(rng, center, pad_mode, win_length, n_fft, hop, n):
    librosa = pytest.importorskip("librosa")
    if not center and n < n_fft:
        pytest.skip("librosa refuses input shorter than n_fft with center=False")
    x = rng.uniform(-1, 1, n)
    plan = StftPlan(sr=16000, win_length=win_length, hop_length=hop, n_fft=n_fft, center=center, pad_mode=pad_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X = plan.stft(x)
        ref = librosa.stft(x, n_fft=n_fft, hop_length=hop, win_length=win_length, window="hann", center=center, pad_mode=pad_mode)
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


# ---------------------------------------------------------------------------- one-shot entry point


def test_compute_is_the_one_shot_stream(rng):
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True)
    x = rng.uniform(-1, 1, (2, 5000)).astype(np.float32)
    np.testing.assert_array_equal(compute(plan, x), stft(x, plan))
    np.testing.assert_array_equal(compute(plan, x, output="power", log="db"), spectrogram(x, plan, log="db"))
    # push_last == push + finish, in one array
    s = StftStream(plan, output="magnitude")
    head = s.push(x[:, :3001])
    got = np.concatenate([head, s.push_last(x[:, 3001:])], axis=-1)
    np.testing.assert_array_equal(got, compute(plan, x, output="magnitude"))
    assert s.n_frames_out == plan.n_frames(5000) and s.n_samples_in == 5000
    with pytest.raises(ParameterError, match=r"push\(\) after finish\(\)"):
        s.push_last(x)
    with pytest.raises(InputError, match="the signal has no samples"):
        StftStream(plan).push_last(np.zeros((2, 0)))
    with pytest.raises(ParameterError, match="plan must be an StftPlan, got dict"):
        compute({}, x)


def test_amin_and_chunk_checks():
    plan = StftPlan(sr=8000, win_length=64, hop_length=16)
    for bad in (0.0, -1.0, float("nan"), True, "1e-5"):
        with pytest.raises(ParameterError, match="amin must be a number > 0, got"):
            StftStream(plan, output="power", log="db", amin=bad)
    for bad in (0, 2.0, True):
        with pytest.raises(ParameterError, match=f"chunk_frames must be an integer > 0, got {bad!r}"):
            StftStream(plan, chunk_frames=bad)
    np.testing.assert_array_equal(spectrogram(np.zeros(100), plan, log="db"), np.full((33, plan.n_frames(100)), -100.0))
    np.testing.assert_array_equal(
        spectrogram(np.zeros(100), plan, power=1.0, log="db"), np.full((33, plan.n_frames(100)), -100.0)
    )

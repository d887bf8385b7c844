"""Tests of audiokit.dsp.stft.inverse: istft and IstftStream (weighted overlap-add)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiokit.dsp.stft import IstftStream, StftPlan, istft
from audiokit.dsp.windows import WINDOWS
from audiokit.errors import InputError, ParameterError

HYP = settings(max_examples=60)  # the rest from the profile in tests/conftest.py


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


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
    return (
        window,
        win_length,
        n_fft,
        hop,
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.sampled_from(["constant", "reflect"])),
        draw(st.integers(1, 1500)),
        draw(st.sampled_from([np.float32, np.float64])),
        draw(st.integers(0, 2**32 - 1)),
    )


@HYP
@given(inverse_case())
def test_istft_round_trip(case):
    window, win_length, n_fft, hop, periodic, center, pad_mode, n, dtype, seed = case
    plan = StftPlan(
        sr=8000,
        win_length=win_length,
        hop_length=hop,
        n_fft=n_fft,
        window=window,
        periodic=periodic,
        center=center,
        pad_mode=pad_mode,
    )
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


@pytest.mark.slow
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize(("win_length", "n_fft", "hop"), [(512, 512, 128), (400, 512, 160)])
@pytest.mark.parametrize("length", [None, 9000, 9500])
def test_istft_equals_librosa(rng, center, win_length, n_fft, hop, length):
    librosa = pytest.importorskip("librosa")
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
    with pytest.raises(
        ParameterError,
        match=r"window 'hann' \(win_length=512, n_fft=512, periodic=True\) "
        r"with hop_length=512 violates NOLA",
    ):
        StftPlan(sr=16000, win_length=512, hop_length=512).istft(X)
    with pytest.raises(ParameterError, match=r"window 'rectangular' .* hop_length=600 violates NOLA"):
        StftPlan(sr=16000, win_length=512, hop_length=600, window="rect").istft(X)
    assert StftPlan(sr=16000, win_length=512, hop_length=512, window="rect").invertible
    with pytest.raises(ParameterError, match=r"violates NOLA"):
        IstftStream(StftPlan(sr=16000, win_length=512, hop_length=512))


def test_istft_errors_and_length(rng):
    plan = StftPlan(sr=8000, win_length=64, hop_length=16, center=True)
    X = plan.stft(rng.standard_normal(1000))
    with pytest.raises(
        ParameterError, match=r"STFT must be shaped \(\.\.\., n_freqs=33, n_frames\) for n_fft=64, got \(32, 63\)"
    ):
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
    return (
        win_length,
        n_fft,
        hop,
        draw(st.booleans()),
        draw(st.integers(1, 1200)),
        draw(st.one_of(st.none(), st.integers(0, 1500))),
        draw(st.lists(st.integers(0, 30), max_size=30)),
        draw(st.integers(0, 2**32 - 1)),
    )


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


def test_istft_function_and_stream_errors(rng):
    plan = StftPlan(sr=8000, win_length=64, hop_length=16, center=True)
    x = rng.standard_normal((2, 1000))
    X = plan.stft(x)
    np.testing.assert_array_equal(istft(X, plan, length=1000), plan.istft(X, length=1000))
    for bad in (-1, 2.5, True):
        with pytest.raises(ParameterError, match=rf"length must be an integer >= 0 \(samples\), got {bad!r}"):
            IstftStream(plan, length=bad)
    s = IstftStream(plan)
    with pytest.raises(InputError, match="no STFT frames were given"):
        s.finish()
    s = IstftStream(plan, length=7)
    s.push(X[..., :0])
    assert s.finish().shape == (2, 7)
    with pytest.raises(ParameterError, match="finish\\(\\) was already called on this stream"):
        s.finish()

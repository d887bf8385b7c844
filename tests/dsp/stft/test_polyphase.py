"""Tests of audiokit.dsp.stft.polyphase: batched windowing / overlap-add equal the row-by-row path."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from audiokit.dsp.stft import (
    DEFAULT_CHUNK_FRAMES,
    IstftStream,
    StftPlan,
    StftStream,
    polyphase,
    spectrogram,
    stft,
)
from audiokit.engine import get_backend
from tests.helpers.stft_reference import assert_close_spectra, naive_stft


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


# ---------------------------------------------------------------------------- batching paths
# Whole batches of frames go through the polyphase layout (one long windowing
# product per phase, FFTW reading frames straight from it); the rest of a call
# goes row by row through the backend's shared RealPlan.  Both must agree.

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
            monkeypatch.setattr(polyphase, "MIN_PER_PHASE", 10**9)

        def __exit__(self, *exc):
            monkeypatch.setattr(polyphase, "MIN_PER_PHASE", 2)

    return Switch


def frames_for(plan, batches=2.5):
    """A signal length giving about ``batches`` default batches of frames plus a remainder."""
    return int(batches * DEFAULT_CHUNK_FRAMES * plan.hop_length) + plan.n_fft + 7


@pytest.mark.parametrize("backend_name", ["fftw", "numpy"])
@pytest.mark.parametrize(("win_length", "n_fft", "hop", "center"), GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_polyphase_batches_equal_row_by_row_and_reference(rng, row_by_row, backend_name, win_length, n_fft, hop, center, dtype):
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
        for s, out in zip(streams, parts, strict=True):
            out.append(s.push(x[i : i + 700]))
    for p, s, out in zip(plans, streams, parts, strict=True):
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
    monkeypatch.setattr(polyphase, "CACHE_BYTES", 1)  # nothing fits: used once, then dropped
    plan = StftPlan(sr=8000, win_length=256, hop_length=64)
    x = rng.uniform(-1, 1, frames_for(plan))
    P = spectrogram(x, plan)
    assert polyphase.cache_info() == (0, 0)
    monkeypatch.setattr(polyphase, "CACHE_BYTES", 64 * 1024 * 1024)
    monkeypatch.setattr(polyphase, "CACHE_SIZE", 2)
    for hop in (64, 50, 40, 64):
        p = StftPlan(sr=8000, win_length=256, hop_length=hop)
        got = spectrogram(x, p)
        assert_close_spectra(got, np.abs(naive_stft(x, n_fft=256, hop=hop, win_length=256)) ** 2)
        assert polyphase.cache_info()[0] <= 2
    assert_close_spectra(spectrogram(x, plan), P)


def test_polyphase_forward_spectra_rows_are_32_byte_aligned():
    """The forward batch's spectra rows are padded to 32 bytes (FFTW's SIMD codelets need aligned rows)."""
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)
    win = plan.win.astype(np.float32)
    poly = polyphase.PolyForward(get_backend("fftw"), 512, 160, plan.win_offset, win, np.dtype(np.float32), 256)
    assert poly.spec.shape == (poly.K, 257)
    assert poly.spec.strides[0] % 32 == 0 and poly.spec.ctypes.data % 32 == 0

"""Peak searches finished together (audiokit.dsp.peaks._PeakSearch, _find_peaks_together) give, bit for bit, what
find_peaks gives for each spectrum alone; the batched least-squares steps equal the one-problem-at-a-time
formulation they replaced (written out here as the reference: a kernel call, ``np.linalg.lstsq``, the residual).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from audiokit.dsp.dft import spectrum
from audiokit.dsp.peaks import (
    _LSQ_RCOND,
    _find_peaks_together,
    _Grid,
    _Kernel,
    _lsq_stack,
    _lstsq_stack,
    _Model,
    _PeakSearch,
    _Solve,
    _solve_all,
    _Tone,
    find_peaks,
)
from audiokit.dsp.windows import get_window

SR = 48000


def _channels(n: int, count: int, seed: int) -> list[np.ndarray]:
    """Tones plus a little noise, one channel in four pure noise (many candidate peaks), as the 128-channel case."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / SR
    out = []
    for c in range(count):
        x = 0.5 * np.sin(2 * np.pi * (100.0 + 37.3 * c) * t) + 0.01 * rng.standard_normal(n)
        out.append(0.1 * rng.standard_normal(n) if c % 4 == 1 else x)
    return out


def _mixed_spectra() -> list[tuple[object, dict]]:
    """Spectra of several lengths, windows (closed form and directly summed), paddings and search options."""
    cases: list[tuple[object, dict]] = []
    for x in _channels(535, 12, 3):
        cases.append((spectrum(x, sr=SR, window="hann"), {"k": 5}))
    rng = np.random.default_rng(9)
    options = [
        ("flattop", 1, {"k": 3}),
        ("kaiser", 1, {"k": 4}),  # a directly summed kernel: its problems are solved one by one
        ("bartlett", 2, {"k": 6, "threshold_db": -90.0}),
        ("blackmanharris", 3, {"k": 2, "interpolation": "quadratic-log"}),
        ("hamming", 1, {"k": 5, "interpolation": "none"}),
        ("hann", 2, {"k": 7, "min_separation_hz": 0.0}),
    ]
    for window, pad, kw in options:
        n = int(rng.integers(200, 900))
        x = _channels(n, 2, int(rng.integers(1000)))[int(rng.integers(2))]
        cases.append((spectrum(x, sr=SR, window=window, n_fft=pad * n), kw))
    return cases


def test_together_equals_each_alone():
    cases = _mixed_spectra()
    alone = [find_peaks(spec, **kw) for spec, kw in cases]
    together = _find_peaks_together([_PeakSearch(spec, **kw) for spec, kw in cases])
    assert together == alone  # Peak is a frozen dataclass of floats: exact equality
    assert sum(map(len, alone)) > 40
    # the company a search keeps does not matter: reversed, and in pairs
    reverse = _find_peaks_together([_PeakSearch(spec, **kw) for spec, kw in reversed(cases)])
    assert reverse[::-1] == alone
    for i in range(0, len(cases) - 1, 2):
        pair = _find_peaks_together([_PeakSearch(spec, **kw) for spec, kw in cases[i : i + 2]])
        assert pair == alone[i : i + 2]


def test_a_silent_spectrum_warns_when_its_search_starts():
    with warnings.catch_warnings():  # the DFT's own warning about a silent signal
        warnings.simplefilter("ignore")
        spec = spectrum(np.zeros(64), sr=SR)
    with pytest.warns(UserWarning, match="spectrum is silent"):
        search = _PeakSearch(spec, k=3)
    assert search.result == [] and search.request is None
    loud = spectrum(_channels(64, 1, 1)[0], sr=SR)
    results = _find_peaks_together([search, _PeakSearch(loud, k=3)])
    assert results == [[], find_peaks(loud, k=3)]


def test_bad_arguments_fail_when_the_search_starts():
    spec = spectrum(_channels(64, 1, 1)[0], sr=SR)
    with pytest.raises(Exception, match="invalid k"):
        _PeakSearch(spec, k=0)


# --------------------------------------------------------------------------- the batched steps against one at a time


def _lsq_one(y, bins, kappa, kernel):
    """The single-problem least squares the fit used before the batching (kernel call, lstsq, residual)."""
    nb = bins.size
    w = kernel(np.concatenate([bins - kappa, bins + kappa]))
    wp, wm = w[:nb], w[nb:]
    s, d = wp + wm, wp - wm
    A = np.empty((2 * nb, 2))
    A[:nb, 0], A[nb:, 0] = s.real, s.imag
    A[:nb, 1], A[nb:, 1] = -d.imag, d.real
    rhs = np.concatenate([y.real, y.imag])
    sol, *_ = np.linalg.lstsq(A, rhs, rcond=_LSQ_RCOND)
    r = rhs - A @ sol
    return float(r @ r), complex(sol[0], sol[1])


def _grid_one(deltas, y, bins, k0, kernel):
    """The single-problem grid costs of the fit before the batching."""
    kappa = (k0 + deltas)[:, None]
    wp, wm = kernel(np.stack([bins[None, :] - kappa, bins[None, :] + kappa]))
    s, d = wp + wm, wp - wm
    nb = bins.size
    A = np.empty((deltas.size, 2 * nb, 2))
    A[:, :nb, 0], A[:, nb:, 0] = s.real, s.imag
    A[:, :nb, 1], A[:, nb:, 1] = -d.imag, d.real
    rhs = np.concatenate([y.real, y.imag])
    sol = np.linalg.pinv(A, rcond=_LSQ_RCOND) @ rhs
    r = rhs - np.einsum("gij,gj->gi", A, sol)
    return np.einsum("gi,gi->g", r, r)


@pytest.mark.parametrize("window", ["hann", "flattop", "kaiser"])
@pytest.mark.parametrize("half", [1, 3])
def test_batched_requests_equal_one_at_a_time(window, half):
    rng = np.random.default_rng(half)
    n = 535
    kernel = _Kernel(get_window(window, n), half * n)  # kaiser: no closed form (direct sums)
    assert (kernel.key is None) == (window == "kaiser")
    offsets = np.arange(-half, half + 1)
    solves, grids, expected_solves, expected_grids = [], [], [], []
    for _ in range(40):
        k0 = int(rng.integers(0, half * n // 2 + 1))
        bins = k0 + offsets
        y = rng.standard_normal(bins.size) + 1j * rng.standard_normal(bins.size)
        rhs = np.concatenate([y.real, y.imag])
        kappa = k0 + float(rng.uniform(-half, half))
        if rng.uniform() < 0.1:
            kappa = float(round(kappa))  # on a bin (the Dirichlet kernel's 0/0 guard)
        solves.append(_Solve(y, bins, kappa, kernel, rhs))
        expected_solves.append(_lsq_one(y, bins, kappa, kernel))
        deltas = np.linspace(-half, half, 2 * 8 * half + 1)
        grids.append(_Grid(deltas, bins, k0, kernel, rhs))
        expected_grids.append(_grid_one(deltas, y, bins, k0, kernel))
    mixed: list = [r for pair in zip(solves, grids) for r in pair]
    _solve_all(mixed)
    assert [r.answer for r in solves] == expected_solves
    for request, costs in zip(grids, expected_grids):
        assert np.array_equal(request.costs, costs)


def test_lstsq_stack_is_lstsq_per_matrix():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((64, 6, 2))
    A[3, :, 1] = 1e-12 * A[3, :, 0]  # rank-deficient: rcond drops the second column
    rhs = rng.standard_normal((64, 6))
    stacked = _lstsq_stack(A, rhs)
    for a, b, x in zip(A, rhs, stacked):
        assert np.array_equal(x, np.linalg.lstsq(a, b, rcond=_LSQ_RCOND)[0])
    A[7, 0, 0] = np.nan
    with pytest.raises(np.linalg.LinAlgError):
        _lstsq_stack(A, rhs)
    # _lsq_stack of one request is that problem alone
    kernel = _Kernel(get_window("hann", 100), 100)
    bins = np.arange(9, 12)
    y = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    request = _Solve(y, bins, 10.3, kernel, np.concatenate([y.real, y.imag]))
    _lsq_stack([request])
    assert request.answer == _lsq_one(y, bins, 10.3, kernel)


def test_batched_models_equal_each_tone_alone():
    """_Model requests of many tones (two searches' worth) fill each cache with _Tone.model's own values."""
    rng = np.random.default_rng(8)
    kernel = _Kernel(get_window("hann", 535), 535)
    tones = [_Tone(float(rng.uniform(0, 267)), complex(rng.standard_normal(), rng.standard_normal())) for _ in range(30)]
    wanted = [np.arange(int(t.kappa) - 2, int(t.kappa) + 3) for t in tones]
    requests = [_Model([(t, b.tolist()) for t, b in zip(tones[:15], wanted[:15])], kernel)]
    requests.append(_Model([(t, b.tolist()) for t, b in zip(tones[15:], wanted[15:])], kernel))
    _solve_all(requests)
    for tone, bins in zip(tones, wanted):
        assert [tone.cache[b] for b in bins.tolist()] == tone.model(kernel, bins).tolist()

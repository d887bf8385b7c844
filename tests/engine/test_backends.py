"""Tests of audiokit.engine: every backend against a naive O(N^2) DFT.

References are computed as explicit DFT-matrix products in long double
(80-bit on x86: unit roundoff 5.4e-20), with the phase index ``k*t mod N``
reduced exactly in integers, so their own error is far below the float64
tolerance.  Tolerances follow the norm-wise error bound of a radix-2 FFT
(Higham, *Accuracy and Stability of Numerical Algorithms*, thm 24.2):

    ||X_hat - X|| / ||X|| <= L * eta / (1 - L * eta),
    eta = mu + gamma_4 * (sqrt(2) + mu),   gamma_4 = 4u / (1 - 4u),

with ``u`` the unit roundoff of the dtype, twiddle error ``mu = u`` and ``L``
the number of radix-2 stages.  Lengths that are not powers of two may go
through Bluestein's algorithm: three FFTs of length ``>= 2N - 1`` plus chirp
products, hence ``3 * eta * ceil(log2(2N))`` plus a few ``u`` for the chirps
and the ``1/N`` scaling.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import audiokit.engine as engine
from audiokit.engine import available_backends, get_backend
from audiokit.engine.base import ALIGNMENT, SIMD_ROW_ALIGNMENT, RealPlan, aligned_length, aligned_zeros
from audiokit.engine.fallback import NumpyBackend, ScipyBackend
from audiokit.errors import ParameterError

pyfftw = pytest.importorskip("pyfftw")
from audiokit.engine.fftw import FftwBackend  # noqa: E402

SIZES = [1, 2, 7, 64, 400, 401, 512, 1000, 2048]
DTYPES = [np.float32, np.float64]
LD = np.longdouble
CLD = np.clongdouble
EXTENDED = np.finfo(LD).eps < np.finfo(np.float64).eps / 100


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    """No backend/threads choice leaking in from the environment; a fresh cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AUDIOKIT_FFT", raising=False)
    monkeypatch.delenv("AUDIOKIT_FFT_THREADS", raising=False)


_BACKENDS = {"fftw": FftwBackend(), "scipy": ScipyBackend(), "numpy": NumpyBackend()}


@pytest.fixture(params=sorted(_BACKENDS))
def backend(request):
    return _BACKENDS[request.param]


def rtol(dtype, n: int) -> float:
    """Norm-wise relative error bound for one transform of length n (module docstring)."""
    u = np.finfo(dtype).eps / 2
    gamma4 = 4 * u / (1 - 4 * u)
    eta = u + gamma4 * (math.sqrt(2) + u)
    stages = 3 * max(1, math.ceil(math.log2(2 * n)))
    return stages * eta / (1 - stages * eta) + 4 * u


def rel_err(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-row ||got - ref|| / ||ref|| along the last axis, computed in long double."""
    diff = np.asarray(got).astype(CLD) - ref.astype(CLD)
    num = np.sqrt(np.sum(np.abs(diff) ** 2, axis=-1))
    den = np.sqrt(np.sum(np.abs(ref.astype(CLD)) ** 2, axis=-1))
    return np.atleast_1d(num / den)


def hermitian_full(half: np.ndarray, n: int) -> np.ndarray:
    """Full n-point spectrum from n//2+1 one-sided bins, as numpy.fft.irfft reads them."""
    full = np.zeros(half.shape[:-1] + (n,), dtype=half.dtype)
    full[..., 0] = half[..., 0].real
    for k in range(1, (n + 1) // 2):
        full[..., k] = half[..., k]
        full[..., n - k] = np.conj(half[..., k])
    if n % 2 == 0 and n > 1:
        full[..., n // 2] = half[..., n // 2].real
    return full


@functools.cache
def naive_case(n: int):
    """Fixed inputs of length n and their naive DFT-matrix references.

    Returns ``{dtype: {"x": real (3,n), "z": complex (3,n), "y": half
    spectrum (3, n//2+1), "rfft", "fft", "fft_of_x", "ifft", "irfft":
    references}}``.  Twiddles come from long double cos/sin of the exactly
    reduced phase ``2*pi*(k*t mod n)/n``.  Products are summed in long double
    for the float64 inputs and in float64 for the float32 inputs (float64's
    own error, about 1e-16*sqrt(n), is far below the float32 tolerance).
    """
    rng = np.random.default_rng(1000 + n)
    xr = rng.standard_normal((3, n))
    z = rng.standard_normal((3, n)) + 1j * rng.standard_normal((3, n))
    y = rng.standard_normal((3, n // 2 + 1)) + 1j * rng.standard_normal((3, n // 2 + 1))
    pi = 4 * np.arctan(LD(1))
    t = np.arange(n)
    phase = 2 * pi * t.astype(LD) / n
    idx = np.outer(t, t) % n  # exact k*t mod n; the matrices are symmetric
    cos_m, sin_m = np.cos(phase)[idx], np.sin(phase)[idx]
    refs = {}
    for dt, work in ((np.float64, LD), (np.float32, np.float64)):
        cdt = np.result_type(dt, np.complex64)
        d = {"x": xr.astype(dt), "z": z.astype(cdt), "y": y.astype(cdt)}
        yfull = hermitian_full(d["y"], n)
        rows = np.concatenate([d["x"], d["z"].real, d["z"].imag, yfull.real, yfull.imag])
        rows = rows.astype(work)
        p = np.einsum("rk,jk->rj", rows, cos_m.astype(work))  # sum a*cos
        q = np.einsum("rk,jk->rj", rows, sin_m.astype(work))  # sum a*sin
        x_, zr, zi, yr, yi = (slice(3 * i, 3 * i + 3) for i in range(5))
        # (a + ib) * (cos + sign*i*sin), sign = -1 forward, +1 inverse
        d["fft_of_x"] = p[x_] - 1j * q[x_]
        d["rfft"] = d["fft_of_x"][:, : n // 2 + 1]
        d["fft"] = (p[zr] + q[zi]) + 1j * (p[zi] - q[zr])
        d["ifft"] = ((p[zr] - q[zi]) + 1j * (p[zi] + q[zr])) / n
        d["irfft"] = (p[yr] - q[yi]) / n
        refs[dt] = d
    return refs


def _needs_reference_precision(dtype):
    if dtype == np.float64 and not EXTENDED:
        pytest.skip("long double is not wider than float64 here: no exact enough reference")


# --------------------------------------------------------------------------- accuracy
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("batched", [True, False], ids=["batch", "1d"])
def test_matches_naive_dft(backend, n, dtype, batched):
    _needs_reference_precision(dtype)
    case = naive_case(n)[dtype]
    cdt = np.result_type(dtype, np.complex64)
    pick = (lambda a: a) if batched else (lambda a: a[1])
    tol = rtol(dtype, n)
    calls = {
        "rfft": (backend.rfft(pick(case["x"])), cdt, (n // 2 + 1,)),
        "fft": (backend.fft(pick(case["z"])), cdt, (n,)),
        "ifft": (backend.ifft(pick(case["z"])), cdt, (n,)),
        "irfft": (backend.irfft(pick(case["y"]), n), np.dtype(dtype), (n,)),
        "fft_of_x": (backend.fft(pick(case["x"])), cdt, (n,)),
    }
    for name, (got, want_dtype, tail) in calls.items():
        assert got.dtype == want_dtype, name
        assert got.shape == ((3,) if batched else ()) + tail, name
        err = rel_err(got, pick(case[name]))
        assert np.all(err <= tol), f"{name}: relative error {err.max():.3g} > {tol:.3g}"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_round_trips(backend, n, dtype, rng):
    x = rng.standard_normal((4, n)).astype(dtype)
    z = (rng.standard_normal((4, n)) + 1j * rng.standard_normal((4, n))).astype(np.result_type(dtype, np.complex64))
    tol = 2 * rtol(dtype, n)
    back = backend.irfft(backend.rfft(x), n)
    assert back.dtype == dtype
    assert np.all(rel_err(back, x) <= tol)
    assert np.all(rel_err(backend.ifft(backend.fft(z)), z) <= tol)
    assert np.all(rel_err(backend.fft(backend.ifft(z)), z) <= tol)


@pytest.mark.parametrize("n", [7, 401, 512, 1000])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_backends_agree(n, dtype, rng):
    x = rng.standard_normal((3, n)).astype(dtype)
    tol = 2 * rtol(dtype, n)
    results = {name: (b.rfft(x), b.irfft(b.rfft(x), n), b.fft(x)) for name, b in _BACKENDS.items()}
    names = sorted(results)
    for other in names[1:]:
        for got, ref in zip(results[other], results[names[0]], strict=True):
            assert got.dtype == ref.dtype
            assert np.all(rel_err(got, ref) <= tol), (other, names[0])


def test_default_fftw_backend_is_exact_and_leaves_caller_data():
    """The default FFTW configuration (FFTW_ESTIMATE plans) matches the reference."""
    fftw = FftwBackend()
    for n in (64, 400):
        case = naive_case(n)[np.float64 if EXTENDED else np.float32]
        dt = case["x"].dtype
        x = case["x"].copy()
        got = fftw.rfft(x)
        np.testing.assert_array_equal(x, case["x"])  # planning never touched caller data
        assert np.all(rel_err(got, case["rfft"]) <= rtol(dt, n))
        y = case["y"].copy()
        assert np.all(rel_err(fftw.irfft(y, n), case["irfft"]) <= rtol(dt, n))
        np.testing.assert_array_equal(y, case["y"])  # c2r destroys only scratch input


# --------------------------------------------------------------------------- n semantics
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("m,n", [(10, 7), (10, 10), (10, 13), (7, 16), (1, 5)])
def test_n_pads_and_truncates_like_numpy(backend, dtype, m, n, rng):
    x = rng.standard_normal((2, m)).astype(dtype)
    z = (rng.standard_normal((2, m)) + 1j * rng.standard_normal((2, m))).astype(np.result_type(dtype, np.complex64))
    tol = 2 * rtol(dtype, max(m, n))
    # full-length calls first, so that padding must really write zeros (a
    # backend reusing buffers would otherwise see stale samples in the tail)
    full = rng.standard_normal((2, n)) * (1 + 1j)
    backend.rfft(full.real.astype(dtype))
    backend.fft(full.astype(z.dtype))
    backend.ifft(full.astype(z.dtype))
    backend.irfft(full.astype(z.dtype), n)
    pairs = [
        (backend.rfft(x, n=n), np.fft.rfft(x.astype(np.float64), n=n)),
        (backend.fft(z, n=n), np.fft.fft(z.astype(np.complex128), n=n)),
        (backend.ifft(z, n=n), np.fft.ifft(z.astype(np.complex128), n=n)),
        (backend.irfft(z, n), np.fft.irfft(z.astype(np.complex128), n)),
    ]
    for got, ref in pairs:
        assert got.shape == ref.shape
        assert np.all(rel_err(got, ref) <= tol)


@pytest.mark.parametrize("n", [1, 2, 4, 7, 64, 401, 1000])
def test_irfft_ignores_imaginary_dc_and_nyquist(backend, n, rng):
    bins = n // 2 + 1
    spec = rng.standard_normal((2, bins)) + 1j * rng.standard_normal((2, bins))
    plain = spec.copy()
    plain[:, 0] = plain[:, 0].real
    if n % 2 == 0:
        plain[:, -1] = plain[:, -1].real
    want = np.fft.irfft(plain, n)
    assert np.all(rel_err(backend.irfft(spec, n), want) <= 2 * rtol(np.float64, n))
    if n % 2 == 0:  # n + 1 samples: the last bin is an ordinary one, its imaginary part counts
        assert not np.allclose(backend.irfft(spec, n + 1), backend.irfft(plain, n + 1))


def test_empty_inputs(backend):
    out = backend.rfft(np.zeros((0, 8), np.float32))
    assert out.shape == (0, 5) and out.dtype == np.complex64
    assert backend.irfft(np.zeros((2, 0), np.complex128), 6).tolist() == [[0.0] * 6] * 2
    assert backend.fft(np.zeros((2, 0)), n=3).shape == (2, 3)


# --------------------------------------------------------------------------- dtypes & shapes
@pytest.mark.parametrize(
    "in_dtype,rfft_dtype,fft_dtype,irfft_dtype",
    [
        (np.float32, np.complex64, np.complex64, np.float32),
        (np.float64, np.complex128, np.complex128, np.float64),
        (np.float16, np.complex64, np.complex64, np.float32),
        (np.int16, np.complex128, np.complex128, np.float64),
        (np.uint8, np.complex128, np.complex128, np.float64),
        (np.bool_, np.complex128, np.complex128, np.float64),
        (">f4", np.complex64, np.complex64, np.float32),
    ],
)
def test_precision_policy(backend, in_dtype, rfft_dtype, fft_dtype, irfft_dtype):
    x = (np.arange(12).reshape(2, 6) % 3).astype(in_dtype)
    ref = np.fft.rfft(x.astype(np.float64))
    got = backend.rfft(x)
    assert got.dtype == rfft_dtype
    tol = 2 * rtol(np.dtype(rfft_dtype).type(0).real.dtype, 6)
    assert np.all(rel_err(got, ref) <= tol)
    assert backend.fft(x).dtype == fft_dtype
    assert backend.ifft(x).dtype == fft_dtype
    assert backend.irfft(x, 10).dtype == irfft_dtype


def test_complex_inputs_keep_precision(backend):
    z = np.ones((2, 4), np.complex64)
    assert backend.fft(z).dtype == np.complex64
    assert backend.irfft(z, 6).dtype == np.float32
    assert backend.fft(z.astype(np.complex128)).dtype == np.complex128


def test_layouts_and_batch_shapes(backend, rng):
    x = rng.standard_normal((2, 3, 40))
    ref = np.fft.rfft(x)
    tol = 2 * rtol(np.float64, 40)
    assert backend.rfft(x).shape == (2, 3, 21)
    assert np.all(rel_err(backend.rfft(x), ref) <= tol)
    f = np.asfortranarray(x)
    assert np.all(rel_err(backend.rfft(f), ref) <= tol)
    strided = rng.standard_normal((3, 80))[:, ::2]
    assert np.all(rel_err(backend.rfft(strided), np.fft.rfft(strided)) <= tol)
    assert np.all(rel_err(backend.rfft(x.tolist()), ref) <= tol)  # array_like


@pytest.mark.parametrize("method", ["rfft", "fft", "ifft", "irfft"])
def test_outputs_are_fresh_and_inputs_untouched(backend, method, rng):
    real = method in ("rfft", "fft")
    data = rng.standard_normal((5, 16)) if real else (rng.standard_normal((5, 9)) + 1j * rng.standard_normal((5, 9)))
    keep = data.copy()
    call = (lambda: getattr(backend, method)(data, 16)) if method == "irfft" else (lambda: getattr(backend, method)(data))
    first = call()
    first_copy = first.copy()
    second = call()
    np.testing.assert_array_equal(data, keep)
    assert not np.shares_memory(first, second)
    assert not np.shares_memory(first, data)
    second[...] = 0
    np.testing.assert_array_equal(first, first_copy)
    assert first.flags.writeable


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("bad_n", [0, -3, 2.5, True, "8", None])
def test_bad_n_is_a_parameter_error(backend, bad_n):
    x = np.ones(8)
    if bad_n is None:  # irfft has no default length
        with pytest.raises(TypeError):
            backend.irfft(x)
        return
    for method in ("rfft", "fft", "ifft", "irfft"):
        with pytest.raises(ParameterError, match=rf"{method}: n must be a positive integer.*{bad_n!r}"):
            getattr(backend, method)(x, bad_n)


def test_n_accepts_numpy_integers(backend):
    assert backend.rfft(np.ones(8), np.int64(4)).shape == (3,)


def test_bad_inputs_are_parameter_errors(backend):
    with pytest.raises(ParameterError, match=r"rfft needs real input, got dtype complex128.*use fft"):
        backend.rfft(np.ones(4, complex))
    with pytest.raises(ParameterError, match=r"ifft: unsupported input dtype <U1; allowed: .*complex128"):
        backend.ifft(np.array(["a", "b"]))
    with pytest.raises(ParameterError, match=r"fft: input must have at least one axis.*scalar"):
        backend.fft(3.0)
    with pytest.raises(ParameterError, match=r"rfft: the last axis of the input is empty \(shape \(2, 0\)\)"):
        backend.rfft(np.zeros((2, 0)))


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize == 8, reason="long double is float64 here")
def test_long_double_is_refused_not_truncated(backend):
    real, cplx = np.dtype(np.longdouble).name, np.dtype(np.clongdouble).name
    with pytest.raises(ParameterError, match=rf"fft: unsupported input dtype {real}; allowed"):
        backend.fft(np.ones(4, np.longdouble))
    with pytest.raises(ParameterError, match=rf"irfft: unsupported input dtype {cplx}; allowed"):
        backend.irfft(np.ones(4, np.clongdouble), 6)


# --------------------------------------------------------------------------- FFTW cache
def test_fftw_blocks_overlap_and_split(rng):
    """Batches around the block size: overlap tail (B > R) and power-of-two split (B < R)."""
    n = 16  # float64 rows of 128 bytes -> 4 rows per block of 512 bytes
    fftw = FftwBackend(block_bytes=4 * 16 * 8)
    inverse = FftwBackend(block_bytes=4 * 16 * 8)
    for rows in range(0, 12):
        x = rng.standard_normal((rows, n))
        got = fftw.rfft(x)
        assert got.shape == (rows, n // 2 + 1)
        if rows:
            assert np.all(rel_err(got, np.fft.rfft(x)) <= rtol(np.float64, n))
            assert np.all(rel_err(inverse.irfft(got, n), x) <= 2 * rtol(np.float64, n))
    assert fftw.cache_info()["kernels"] == 1
    assert fftw.cache_info()["plans"] == 3  # 1, 2 and 4 rows
    # batches larger than a block need the full-block plan only (overlapping tail)
    fresh = FftwBackend(block_bytes=4 * 16 * 8)
    for rows in range(5, 12):
        x = rng.standard_normal((rows, n))
        assert np.all(rel_err(fresh.rfft(x), np.fft.rfft(x)) <= rtol(np.float64, n))
    assert fresh.cache_info()["plans"] == 1


def test_fftw_sequence_of_shapes_with_eviction(rng):
    fftw = FftwBackend(max_kernels=2)
    for n in (64, 100, 64, 7, 100, 2048, 7):
        for dt in DTYPES:
            x = rng.standard_normal((3, n)).astype(dt)
            assert np.all(rel_err(fftw.rfft(x), np.fft.rfft(x.astype(float))) <= 2 * rtol(dt, n))
            assert fftw.cache_info()["kernels"] <= 2
    fftw.clear_cache()
    assert fftw.cache_info() == {"kernels": 0, "plans": 0, "bytes": 0}


def test_fftw_byte_bound_drops_huge_kernels(rng):
    fftw = FftwBackend(max_cache_bytes=10_000)
    x = rng.standard_normal(4096)
    assert np.all(rel_err(fftw.rfft(x), np.fft.rfft(x)) <= 2 * rtol(np.float64, 4096))
    assert fftw.cache_info()["bytes"] <= 10_000


def test_fftw_shared_between_threads(rng):
    fftw = FftwBackend()
    inputs = [rng.standard_normal((20, n)) for n in (64, 65, 400, 64, 65, 400)]
    errors: list[float] = []

    def work(x):
        for _ in range(20):
            errors.append(float(rel_err(fftw.rfft(x), np.fft.rfft(x)).max()))

    threads = [threading.Thread(target=work, args=(x,)) for x in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 20 * len(inputs)
    assert max(errors) <= 2 * rtol(np.float64, 400)


def test_fftw_threads_setting(rng):
    fftw = FftwBackend(threads=2)
    x = rng.standard_normal((50, 512))
    assert np.all(rel_err(fftw.rfft(x), np.fft.rfft(x)) <= 2 * rtol(np.float64, 512))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"threads": 0}, r"threads must be an integer >= 1, got 0"),
        ({"threads": 1.5}, r"threads must be an integer >= 1, got 1\.5"),
    ],
)
def test_fftw_bad_settings(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        FftwBackend(**kwargs)


# --------------------------------------------------------------------------- zero-copy plans
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_real_plans_match_naive_dft(backend, n, dtype):
    """Forward and (unnormalised) inverse plans, full and partial batches, against the naive DFT."""
    _needs_reference_precision(dtype)
    case = naive_case(n)[dtype]
    cdt = np.result_type(dtype, np.complex64)
    tol = rtol(dtype, n)
    fwd, inv = backend.real_plan(n, 4, dtype), backend.inverse_plan(n, 4, dtype)
    assert isinstance(fwd, RealPlan) and isinstance(inv, RealPlan)
    assert (fwd.direction, fwd.n, fwd.rows, fwd.dtype, fwd.scale) == ("forward", n, 4, np.dtype(dtype), 1.0)
    assert (inv.direction, inv.n, inv.rows, inv.dtype, inv.scale) == ("inverse", n, 4, np.dtype(dtype), 1.0 / n)
    assert fwd.input.shape == (4, n) and fwd.input.dtype == dtype
    assert fwd.output.shape == (4, n // 2 + 1) and fwd.output.dtype == cdt
    assert inv.input.shape == (4, n // 2 + 1) and inv.input.dtype == cdt
    assert inv.output.shape == (4, n) and inv.output.dtype == dtype
    for k in (3, 1, 2, 4, None):  # partial plans first, as a stream meets them
        rows = 3 if k is None else min(k, 3)  # 3 reference rows; row 3 is NaN then
        fwd.input[:rows] = case["x"][:rows]
        fwd.input[rows:] = np.nan  # rows beyond k must not leak into rows < k
        got = fwd.execute(k)
        assert got.shape == (4 if k is None else k, n // 2 + 1) and np.shares_memory(got, fwd.output)
        err = rel_err(got[:rows], case["rfft"][:rows])
        assert np.all(err <= tol), f"rfft k={k}: {err.max():.3g} > {tol:.3g}"
        np.testing.assert_array_equal(fwd.input[:rows], case["x"][:rows])  # forward input preserved
        inv.input[:rows] = case["y"][:rows]
        inv.input[rows:] = np.nan
        got = inv.execute(k)
        assert got.shape == (4 if k is None else k, n) and np.shares_memory(got, inv.output)
        err = rel_err(got[:rows] * inv.scale, case["irfft"][:rows])
        assert np.all(err <= tol), f"irfft k={k}: {err.max():.3g} > {tol:.3g}"
    assert fwd.execute(0).shape == (0, n // 2 + 1)


@pytest.mark.parametrize("n", [16, 17])
def test_inverse_plan_ignores_imaginary_dc_and_nyquist(backend, n, rng):
    spec = rng.standard_normal((3, n // 2 + 1)) + 1j * rng.standard_normal((3, n // 2 + 1))
    plain = spec.copy()
    plain[:, 0] = plain[:, 0].real
    if n % 2 == 0:
        plain[:, -1] = plain[:, -1].real
    plan = backend.inverse_plan(n, 3, np.float64)
    for k in (None, 2):
        plan.input[...] = spec
        got = plan.execute(k) * plan.scale
        want = np.fft.irfft(plain[: got.shape[0]], n)
        assert np.all(rel_err(got, want) <= 2 * rtol(np.float64, n))


def test_plans_on_caller_arrays(backend, rng):
    """plan_on: overlapping input frames of one buffer, interleaved / gapped outputs."""
    n, hop, rows = 64, 24, 5
    for dt in DTYPES:
        cdt = np.result_type(dt, np.complex64)
        isz, csz = np.dtype(dt).itemsize, np.dtype(cdt).itemsize
        # forward: 2 phases of 5 frames hop apart (overlapping), spectra interleaved in frame order
        flat = aligned_zeros((2, (rows - 1) * hop + n), dt)
        frames = as_strided(flat, (2, rows, n), (flat.strides[0], hop * isz, isz))
        spec = aligned_zeros((2 * rows, n // 2 + 1), cdt)
        nf = n // 2 + 1
        spec_view = as_strided(spec, (2, rows, nf), (nf * csz, 2 * nf * csz, csz))
        plan = backend.plan_on(frames, spec_view)
        assert (plan.n, plan.rows, plan.direction) == (n, 2 * rows, "forward")
        assert plan.input is frames and plan.output is spec_view
        flat[...] = rng.standard_normal(flat.shape)
        assert plan.execute() is spec_view
        want = np.fft.rfft(frames.astype(np.float64), axis=-1)  # (phase, i)
        assert np.all(rel_err(spec.reshape(rows, 2, -1).swapaxes(0, 1), want) <= 2 * rtol(dt, n))
        # inverse: frames written 80 samples apart, the 16-sample gaps are never touched
        inp = aligned_zeros((rows, n // 2 + 1), cdt)
        out = np.full(rows * 80, 7.0, dt)
        out_view = as_strided(out, (rows, n), (80 * isz, isz))
        plan = backend.plan_on(inp, out_view, inverse=True)
        assert plan.scale == 1.0 / n
        out[...] = 7.0  # FFTW may have planned on it
        x = rng.standard_normal((rows, n))
        inp[...] = np.fft.rfft(x)
        plan.execute()
        assert np.all(rel_err(out_view * plan.scale, x) <= 2 * rtol(dt, n))
        assert np.all(out.reshape(rows, 80)[:, n:] == 7.0)


def test_plan_errors(backend):
    with pytest.raises(ParameterError, match=r"real_plan: n must be a positive integer.*0"):
        backend.real_plan(0, 4)
    with pytest.raises(ParameterError, match=r"inverse_plan: rows must be a positive integer, got True"):
        backend.inverse_plan(8, True)
    with pytest.raises(ParameterError, match=r"real_plan: rows must be a positive integer, got -1"):
        backend.real_plan(8, -1)
    with pytest.raises(ParameterError, match=r"real_plan: unsupported plan dtype 'int16'; allowed: float32, float64"):
        backend.real_plan(8, 2, "int16")
    assert backend.real_plan(8, 2, np.complex64).dtype == np.float32
    plan = backend.real_plan(8, 2, "float64")
    with pytest.raises(ParameterError, match=r"execute: rows must be 0 \.\. 2, got 3"):
        plan.execute(3)
    with pytest.raises(ParameterError, match=r"execute: rows must be 0 \.\. 2, got -1"):
        plan.execute(-1)
    a, z = np.zeros((3, 8)), np.zeros((3, 5), complex)
    with pytest.raises(ParameterError, match=r"plan_on: need a float32/complex64 or float64/complex128 pair"):
        backend.plan_on(a.astype(np.float32), z)
    with pytest.raises(ParameterError, match=r"plan_on: 8 real samples need 5 complex bins, got 4"):
        backend.plan_on(a, z[:, :4])
    with pytest.raises(ParameterError, match=r"plan_on: input and output need the same leading"):
        backend.plan_on(a, z[:2])
    with pytest.raises(ParameterError, match=r"plan_on: need a float32/complex64 .*complex input, real output"):
        backend.plan_on(a, z, inverse=True)
    bound = backend.plan_on(a, z)
    with pytest.raises(ParameterError, match=r"execute: a plan on caller arrays runs all 3 rows, got rows=2"):
        bound.execute(2)


def test_aligned_zeros():
    for shape, dt in (((3, 5), np.float32), (7, np.complex128), ((2, 3, 4), np.float64)):
        a = aligned_zeros(shape, dt)
        assert a.ctypes.data % ALIGNMENT == 0 and a.flags.c_contiguous and a.dtype == dt
        assert a.shape == (shape if isinstance(shape, tuple) else (shape,)) and not a.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("alignment", [ALIGNMENT, SIMD_ROW_ALIGNMENT])
def test_aligned_length(dtype, alignment):
    isz = np.dtype(dtype).itemsize
    for length in (0, 1, 2, 3, 255, 256, 257, 400, 1001):
        got = aligned_length(length, isz, alignment)
        assert got >= length and got * isz % alignment == 0 and (got - length) * isz < alignment
        # every row of an aligned (rows, got) buffer starts on an aligned boundary
        a = aligned_zeros((3, max(got, 1)), dtype)
        assert all(a[i].ctypes.data % alignment == 0 for i in range(3)) or got == 0
    assert aligned_length(257, 8, SIMD_ROW_ALIGNMENT) == 260  # 257 complex64 spectra -> 2080-byte rows
    assert aligned_length(400, 4) == 400 and aligned_length(401, 4) == 416


def test_fftw_real_plans_are_cached_and_shared(rng):
    fftw = FftwBackend()
    p = fftw.real_plan(32, 8, np.float32)
    assert fftw.real_plan(32, 8, "float32") is p
    assert fftw.real_plan(32, 8, np.float64) is not p
    assert fftw.real_plan(32, 4, np.float32) is not p
    assert fftw.inverse_plan(32, 8, np.float32) is not p
    assert p.input.ctypes.data % pyfftw.simd_alignment == 0
    info = fftw.cache_info()
    assert info["kernels"] == 4 and info["bytes"] > 0
    p.input[:3] = rng.standard_normal((3, 32))
    p.execute(3)  # new sub-plan (4 rows), planned without touching the input
    assert fftw.cache_info()["plans"] == info["plans"] + 1
    fftw.clear_cache()
    assert fftw.real_plan(32, 8, np.float32) is not p


def test_fftw_real_plan_shared_between_threads(rng):
    fftw = FftwBackend()
    errors: list[float] = []

    def work(seed):
        r = np.random.default_rng(seed)
        plan = fftw.real_plan(64, 8, np.float64)
        for i in range(50):
            x = r.standard_normal((1 + i % 8, 64))
            with plan:
                plan.input[: len(x)] = x
                got = plan.execute(len(x)).copy()
            errors.append(float(rel_err(got, np.fft.rfft(x)).max()))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 200 and max(errors) <= 2 * rtol(np.float64, 64)


# --------------------------------------------------------------------------- determinism
# The digest of many transforms (every kind of plan the engine makes), computed in fresh processes.
_DIGEST = """
import hashlib, sys
import numpy as np
from audiokit.engine import get_backend
if sys.argv[1] == "measured":  # another library in the process measured plans: FFTW now holds their wisdom
    import pyfftw
    for n in (512, 1024):
        p = get_backend("fftw").real_plan(n, 128, np.float32)
        pyfftw.FFTW(p.input, p.output, flags=("FFTW_MEASURE",), planning_timelimit=1.0)
b = get_backend("fftw")
rng = np.random.default_rng(7)
h = hashlib.sha256()
for n in (400, 512, 1024, 2048):
    for dt in (np.float32, np.float64):
        for rows in (1, 3, 64, 300):
            x = rng.standard_normal((rows, n)).astype(dt)
            h.update(b.rfft(x).tobytes())
            h.update(b.irfft(b.rfft(x), n).tobytes())
            p = b.real_plan(n, 128, dt)
            with p:
                p.input[: min(rows, 128)] = x[:128]
                h.update(p.execute(min(rows, 128)).tobytes())
print(h.hexdigest())
"""


@pytest.mark.slow
def test_fftw_bytes_identical_in_fresh_processes(tmp_path):
    """Six processes at once (load), each with a fresh cache, two with FFTW wisdom measured by other code: one digest.

    Under FFTW_MEASURE (before 0.2.0) plans were chosen by timing: on a loaded machine six fresh processes gave
    four different digests of these transforms.
    """
    import subprocess

    procs = []
    for i in range(6):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIOKIT_")}
        env["XDG_CACHE_HOME"] = str(tmp_path / f"cache{i}")
        mode = "measured" if i % 3 == 2 else "clean"
        procs.append(
            subprocess.Popen([sys.executable, "-c", _DIGEST, mode], env=env, stdout=subprocess.PIPE, text=True, cwd=tmp_path)
        )
    digests = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(digests)) == 1, digests
    assert not any((tmp_path / f"cache{i}").exists() for i in range(6))  # nothing is cached on disk


@pytest.mark.slow
def test_fftw_result_independent_of_wisdom_in_the_process(rng):
    """Wisdom measured by other code (FFTW_PATIENT on the very buffer layout audiokit plans) is forgotten first.

    FFTW uses wisdom of greater rigour for an FFTW_ESTIMATE plan; for 512/640/1024/2048-point float32 batches of
    64 rows the PATIENT plan rounds differently, so without ``forget_wisdom`` the second result differs.
    """
    x = rng.standard_normal((64, 640)).astype(np.float32)

    def run(backend):
        plan = backend.real_plan(640, 64, np.float32)
        plan.input[:] = x
        return plan.execute().copy()

    before = run(FftwBackend())
    layout = FftwBackend().real_plan(640, 64, np.float32)
    pyfftw.FFTW(layout.input, layout.output, flags=("FFTW_PATIENT",))
    assert "fftw" in pyfftw.export_wisdom()[1].decode()
    np.testing.assert_array_equal(run(FftwBackend()), before)


def test_provenance_names_backend_and_library():
    assert engine.provenance("fftw") == {
        "fft_backend": "fftw",
        "fft_library": f"FFTW {engine.get_backend('fftw')._pyfftw.fftw_version}",
    }
    assert engine.provenance("scipy")["fft_library"].startswith("scipy.fft ")
    assert engine.provenance("numpy") == {"fft_backend": "numpy", "fft_library": f"numpy.fft {np.__version__}"}


# --------------------------------------------------------------------------- selection
def test_available_and_default(monkeypatch):
    assert available_backends() == ("fftw", "scipy", "numpy")
    assert get_backend().name == "fftw"
    assert get_backend() is get_backend("FFTW")  # shared instance keeps its plans
    assert get_backend("auto").name == "fftw"


def test_fallback_when_pyfftw_cannot_be_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyfftw", None)  # makes `import pyfftw` raise ImportError
    assert available_backends() == ("scipy", "numpy")
    assert get_backend().name == "scipy"
    with pytest.raises(
        ParameterError,
        match=r"FFT backend 'fftw' is not available: "
        r"pyfftw cannot be imported.*available: scipy, numpy",
    ):
        get_backend("fftw")
    monkeypatch.setenv("AUDIOKIT_FFT", "fftw")
    with pytest.raises(ParameterError, match=r"AUDIOKIT_FFT 'fftw' is not available"):
        get_backend()
    monkeypatch.setitem(sys.modules, "scipy.fft", None)
    assert available_backends() == ("numpy",)
    assert get_backend("auto").name == "numpy"


def test_env_selects_backend(monkeypatch):
    monkeypatch.setenv("AUDIOKIT_FFT", " SciPy ")
    assert get_backend().name == "scipy"
    assert get_backend("numpy").name == "numpy"  # an explicit name wins over the env
    monkeypatch.setenv("AUDIOKIT_FFT", "")
    assert get_backend().name == "fftw"
    monkeypatch.setenv("AUDIOKIT_FFT", "mkl")
    with pytest.raises(ParameterError, match=r"unknown AUDIOKIT_FFT 'mkl'; allowed: fftw, scipy, numpy, auto"):
        get_backend()


def test_unknown_name_lists_allowed():
    with pytest.raises(ParameterError, match=r"unknown FFT backend 'cufft'; allowed: fftw, scipy, numpy, auto"):
        get_backend("cufft")
    with pytest.raises(ParameterError, match=r"FFT backend must be a string, got 3"):
        get_backend(3)


def test_threads_argument_and_env(monkeypatch):
    assert get_backend("scipy", threads=2).threads == 2
    assert get_backend("fftw", threads=2) is not get_backend("fftw", threads=1)
    monkeypatch.setenv("AUDIOKIT_FFT_THREADS", "2")
    assert get_backend("fftw").threads == 2
    monkeypatch.setenv("AUDIOKIT_FFT_THREADS", "two")
    with pytest.raises(ParameterError, match=r"AUDIOKIT_FFT_THREADS must be an integer >= 1, got 'two'"):
        get_backend()
    with pytest.raises(ParameterError, match=r"threads must be an integer >= 1, got 0"):
        get_backend("numpy", threads=0)


def test_engine_module_surface():
    assert set(engine.BACKEND_NAMES) == {"fftw", "scipy", "numpy"}
    for name in engine.BACKEND_NAMES:
        b = get_backend(name)
        for method in ("rfft", "irfft", "fft", "ifft", "real_plan", "inverse_plan", "plan_on"):
            assert callable(getattr(b, method))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("n", [512, 400, 9])
def test_fftw_forward_plan_rows_are_32_byte_aligned(n, dtype):
    """FFTW's SIMD codelets need every spectrum row aligned: forward output rows are padded to 32 bytes."""
    fwd = FftwBackend().real_plan(n, 8, dtype)
    assert fwd.output.shape == (8, n // 2 + 1)
    assert fwd.output.strides[0] % 32 == 0 and fwd.output.strides[-1] == fwd.output.itemsize
    assert fwd.output.ctypes.data % 32 == 0
    x = np.random.default_rng(n).uniform(-1, 1, (8, n)).astype(dtype)
    fwd.input[:] = x
    for k in (8, 3):
        got = fwd.execute(k)
        np.testing.assert_allclose(got, np.fft.rfft(x[:k].astype(np.float64)), rtol=0, atol=64 * np.finfo(dtype).eps * n)

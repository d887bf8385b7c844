"""scipy's pocketfft extension loaded alone (:mod:`audiokit.engine.pocketfft_core`) gives ``scipy.fft``'s bits.

The reference is the public ``scipy.fft`` on the same arrays: the core must be byte-identical (``np.array_equal`` on
the values and equal dtypes), since pYIN's equality with librosa rests on it.  Cases: float16/32/64 and
complex64/128, 1-D and 2-D, cropped, zero-padded and exact lengths (primes, odd, powers of two), non-contiguous and
byte-swapped inputs, several workers, the scipy backend's plans.  The process checks (a subprocess) show what the
core spares: ``scipy.fft`` and ``scipy`` itself stay unimported, and a later ``import scipy.fft`` reuses the one
extension.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

scipy_fft = pytest.importorskip("scipy.fft")

from audiokit.engine import get_backend, pocketfft_core  # noqa: E402
from audiokit.engine.fallback import ScipyBackend  # noqa: E402

LENGTHS = [1, 2, 7, 64, 400, 401, 512, 1023]


def _inputs(dtype: str, m: int) -> list[np.ndarray]:
    rng = np.random.default_rng(m)
    base = rng.standard_normal((3, 2 * m + 1))
    if np.dtype(dtype).kind == "c":
        base = base + 1j * rng.standard_normal(base.shape)
    a = base.astype(dtype)
    return [a[0, :m].copy(), a[:, :m].copy(), a[:, : 2 * m : 2], a[:, :m].astype(a.dtype.newbyteorder(">"))]


def _outcome(func, *args, **kwargs):
    """The array ``func`` returns, or the type and message of the error it raises."""
    try:
        return func(*args, **kwargs)
    except (ValueError, TypeError, RuntimeError) as exc:
        return (type(exc), str(exc))


def _same(ours, theirs) -> None:
    """Equal dtypes, shapes and values (or the same error)."""
    if isinstance(ours, tuple) or isinstance(theirs, tuple):
        assert ours == theirs
        return
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int16"])
@pytest.mark.parametrize("m", LENGTHS)
def test_rfft_and_irfft_are_scipys_bit_for_bit(dtype, m):
    for x in _inputs(dtype, m):
        for n in {1, m, m + 1, 2 * m - 1, 2 * m + 3}:
            _same(_outcome(pocketfft_core.rfft, x, n, 1), _outcome(scipy_fft.rfft, x, n=n, axis=-1, workers=1))
            _same(_outcome(pocketfft_core.irfft, x, n, 1), _outcome(scipy_fft.irfft, x, n=n, axis=-1))  # real: complex
            if x.dtype.byteorder == ">" and x.dtype.itemsize == 2:
                continue  # a big-endian float16 is refused by both (above)
            half = scipy_fft.rfft(x, n=n, axis=-1)
            for k in {n, max(1, n - 1), n + 2}:
                _same(pocketfft_core.irfft(half, k, 1), scipy_fft.irfft(half, n=k, axis=-1, workers=1))
                _same(pocketfft_core.irfft(half, k, 2, forward_norm=True), scipy_fft.irfft(half, n=k, norm="forward", workers=2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("m", LENGTHS)
def test_fft_and_ifft_are_scipys_bit_for_bit(dtype, m):
    for x in _inputs(dtype, m):
        before = x.copy()
        for n in {1, m, m + 1, 2 * m + 3}:
            ours = _outcome(pocketfft_core.c2c, x, n, 1, inverse=False)
            _same(ours, _outcome(scipy_fft.fft, x, n=n, axis=-1, workers=1))
            _same(_outcome(pocketfft_core.c2c, x, n, 2, inverse=True), _outcome(scipy_fft.ifft, x, n=n, workers=2))
        assert np.array_equal(x, before)  # the input is never overwritten


def test_scipy_backend_and_its_plans_equal_scipy_fft():
    backend = get_backend("scipy")
    assert isinstance(backend, ScipyBackend) and backend._core is pocketfft_core
    rng = np.random.default_rng(0)
    frames = rng.standard_normal((5, 600)).astype(np.float32)
    _same(backend.rfft(frames, 1024), scipy_fft.rfft(frames, n=1024).astype(np.complex64))
    spectra = scipy_fft.rfft(frames.astype(np.float64), n=1024)
    _same(backend.irfft(spectra, 1024), scipy_fft.irfft(spectra, n=1024))
    _same(backend.fft(spectra, 600), scipy_fft.fft(spectra, n=600))
    _same(backend.ifft(spectra, 600), scipy_fft.ifft(spectra, n=600))
    plan = backend.real_plan(512, 5, np.float64)
    plan.input[:5] = frames[:, :512]
    plan.execute(5)
    _same(plan.output[:5].copy(), scipy_fft.rfft(frames[:, :512].astype(np.float64)))
    inverse = backend.inverse_plan(512, 5, np.float64)
    inverse.input[:5] = plan.output[:5]
    inverse.execute(5)
    _same(inverse.output[:5].copy(), scipy_fft.irfft(plan.output[:5], n=512, norm="forward"))


def test_a_bad_length_is_scipys_error():
    with pytest.raises(ValueError, match=r"invalid number of data points \(0\)"):
        pocketfft_core.rfft(np.ones(4), 0, 1)
    with pytest.raises(TypeError, match="real sequence"):
        pocketfft_core.rfft(np.ones(4, complex), 4, 1)


@pytest.mark.slow
def test_the_core_imports_neither_scipy_nor_scipy_fft_and_scipy_fft_reuses_it():
    code = (
        "import sys, numpy as np; from audiokit.engine import get_backend; b = get_backend('scipy'); "
        "x = b.rfft(np.arange(8.0)); print(sorted(m for m in ('scipy', 'scipy.fft') if m in sys.modules)); "
        "ext = sys.modules['scipy.fft._pocketfft.pypocketfft']; import scipy.fft; "
        "from scipy.fft._pocketfft import basic; print(basic.pfft is ext, np.array_equal(scipy.fft.rfft(np.arange(8.0)), x))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["[]", "True True"]


@pytest.mark.slow
def test_scipy_fft_imported_first_is_used():
    code = (
        "import scipy.fft, sys; from audiokit.engine import pocketfft_core; "
        "print(pocketfft_core.load() is sys.modules['scipy.fft._pocketfft'].basic.pfft)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True"


@pytest.mark.slow
def test_an_extension_that_fails_its_check_leaves_scipy_fft():
    code = (
        "import numpy as np; from audiokit.engine import get_backend, pocketfft_core; "
        "pocketfft_core._works = lambda extension: False; import scipy.fft; b = get_backend('scipy'); "
        "print(type(b._core).__name__, np.array_equal(b.rfft(np.arange(8.0)), scipy.fft.rfft(np.arange(8.0))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "_PublicScipy True"

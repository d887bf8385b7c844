"""FFT engine: one small interface over interchangeable backends.

All transforms act on the last axis of an array (a batch of frames).
Forward transforms are unnormalised, inverse transforms are scaled by 1/N:

    X[k] = sum_{n=0}^{N-1} x[n] exp(-2 pi i k n / N)
    x[n] = (1/N) sum_{k=0}^{N-1} X[k] exp(+2 pi i k n / N)

float32 input gives complex64 output, float64 gives complex128 (full policy
in :mod:`audiokit.engine.base`).  Any length works, primes included.

Backends
--------
========  ==================================================================
``fftw``  pyFFTW: cached ``FFTW_ESTIMATE`` plans (chosen without timing: the same
          bytes in every process), aligned scratch buffers (:mod:`audiokit.engine.fftw`)
``scipy`` ``scipy.fft`` (pocketfft; ``threads`` -> ``workers``)
``numpy`` ``numpy.fft`` (pocketfft, always available)
========  ==================================================================

Zero-copy plans
---------------
``rfft``/``irfft``/``fft``/``ifft`` take any array and return a new one.  Hot
loops use plans instead (:class:`RealPlan`, see :mod:`audiokit.engine.base`):
``backend.real_plan(n, rows, dtype)`` and ``backend.inverse_plan(n, rows,
dtype)`` give cached, shared plans on their own SIMD-aligned buffers (write
``plan.input[:k]``, call ``plan.execute(k)``, read ``plan.output[:k]``; hold
``with plan:`` when threads share the backend), and ``backend.plan_on(input,
output)`` binds a plan to arrays the caller lays out (any strides, e.g.
overlapping frames of one buffer).  Inverse plans are unnormalised
(``plan.scale == 1/n``).

Choosing one: ``get_backend(name)`` with ``name`` in ``fftw``, ``scipy``,
``numpy`` or ``auto``; ``name=None`` reads the environment variable
``AUDIOKIT_FFT`` (same values) and falls back to ``auto``: the first of
fftw, scipy, numpy that can be imported.  FFTW threads come from the
``threads`` argument or ``AUDIOKIT_FFT_THREADS`` (default 1).

Example
-------
>>> import numpy as np
>>> from audiokit.engine import get_backend
>>> fft = get_backend()
>>> frames = np.ones((3, 8), dtype=np.float32)
>>> fft.rfft(frames).shape, fft.rfft(frames).dtype
((3, 5), dtype('complex64'))
"""

from __future__ import annotations

import importlib
import os
import threading

from audiokit.engine.base import (
    ALIGNMENT,
    SIMD_ROW_ALIGNMENT,
    FftBackend,
    RealPlan,
    aligned_length,
    aligned_zeros,
)
from audiokit.engine.fallback import NumpyBackend, ScipyBackend
from audiokit.errors import ParameterError
from audiokit.validate import is_int

__all__ = [
    "ALIGNMENT",
    "BACKEND_NAMES",
    "ENV_BACKEND",
    "ENV_THREADS",
    "SIMD_ROW_ALIGNMENT",
    "FftBackend",
    "NumpyBackend",
    "RealPlan",
    "ScipyBackend",
    "aligned_length",
    "aligned_zeros",
    "available_backends",
    "get_backend",
    "provenance",
]

#: Backend names, in the order ``auto`` tries them.
BACKEND_NAMES = ("fftw", "scipy", "numpy")
ENV_BACKEND = "AUDIOKIT_FFT"
ENV_THREADS = "AUDIOKIT_FFT_THREADS"

_MODULE_OF = {"fftw": "pyfftw", "scipy": "scipy.fft", "numpy": "numpy.fft"}
_instances: dict[tuple[str, int], FftBackend] = {}
_instances_lock = threading.Lock()


def _import_error(name: str) -> str | None:
    """None if the backend's module imports, else the reason it does not."""
    try:
        if name == "fftw":  # the compiled core only: ``import pyfftw`` would import scipy.fft, fftpack, dask
            from audiokit.engine import pyfftw_core

            pyfftw_core.load()
        elif name == "scipy":  # the pocketfft extension alone, else scipy.fft (audiokit.engine.fallback)
            from audiokit.engine.fallback import _scipy_core

            _scipy_core()
        else:
            importlib.import_module(_MODULE_OF[name])
    except ImportError as exc:  # includes a module set to None in sys.modules
        return str(exc) or type(exc).__name__
    return None


def available_backends() -> tuple[str, ...]:
    """Names of the backends usable in this process, in preference order.

    Returns
    -------
    tuple of str
        A subsequence of ``("fftw", "scipy", "numpy")``; ``numpy`` is always
        present.
    """
    return tuple(name for name in BACKEND_NAMES if _import_error(name) is None)


def _resolve_threads(threads: object) -> int:
    source = "threads"
    if threads is None:
        raw = os.environ.get(ENV_THREADS, "").strip()
        if not raw:
            return 1
        source, threads = ENV_THREADS, raw
        try:
            threads = int(raw)
        except ValueError:
            pass
    if not is_int(threads) or threads < 1:
        raise ParameterError(f"{source} must be an integer >= 1, got {threads!r}")
    return threads


def provenance(name: str | None = None) -> dict[str, str]:
    """What a result's bytes depend on in the engine: ``{"fft_backend": "fftw", "fft_library": "FFTW 3.3.10"}``.

    Written into every sidecar and the batch fingerprint: one backend gives the
    same bytes in every process; two backends agree to float rounding only.
    ``name`` as for :func:`get_backend` (None: ``AUDIOKIT_FFT`` / auto).
    """
    backend = get_backend(name)
    return {"fft_backend": backend.name, "fft_library": backend.library}


def get_backend(name: str | None = None, *, threads: int | None = None) -> FftBackend:
    """Return the FFT backend ``name`` (shared instance, so its plans persist).

    Parameters
    ----------
    name : {"fftw", "scipy", "numpy", "auto"} or None
        Case-insensitive.  None reads ``AUDIOKIT_FFT``; unset or empty means
        ``auto`` (fftw if pyfftw imports, else scipy, else numpy).
    threads : int >= 1 or None
        Worker threads per transform (FFTW threads, scipy ``workers``;
        numpy ignores it).  None reads ``AUDIOKIT_FFT_THREADS``, default 1.

    Returns
    -------
    FftBackend
        An object with ``name``, ``rfft(x, n=None)``, ``irfft(X, n)``,
        ``fft(x, n=None)``, ``ifft(X, n=None)`` and the zero-copy plans
        ``real_plan``, ``inverse_plan``, ``plan_on``.  The same object is
        returned for the same (backend, threads).

    Raises
    ------
    ParameterError
        Unknown name (the message lists the allowed ones), a backend that
        cannot be imported (the message gives the import error), or a bad
        thread count.
    """
    source = "FFT backend"
    if name is None:
        env = os.environ.get(ENV_BACKEND, "").strip()
        if env:
            source, name = ENV_BACKEND, env
        else:
            name = "auto"
    if not isinstance(name, str):
        raise ParameterError(f"{source} must be a string, got {name!r}")
    key = name.strip().lower()
    allowed = ", ".join(BACKEND_NAMES + ("auto",))
    if key not in BACKEND_NAMES and key != "auto":
        raise ParameterError(f"unknown {source} {name!r}; allowed: {allowed}")
    n_threads = _resolve_threads(threads)
    if key == "auto":  # first importable one; numpy always is
        key = next(k for k in BACKEND_NAMES if _import_error(k) is None)
    else:
        reason = _import_error(key)
        if reason is not None:
            raise ParameterError(
                f"{source} {name!r} is not available: {_MODULE_OF[key].split('.')[0]} "
                f"cannot be imported ({reason}); available: {', '.join(available_backends())}"
            )
    with _instances_lock:
        backend = _instances.get((key, n_threads))
        if backend is None:
            if key == "fftw":
                from audiokit.engine.fftw import FftwBackend

                backend = FftwBackend(threads=n_threads)
            elif key == "scipy":
                backend = ScipyBackend(threads=n_threads)
            else:
                backend = NumpyBackend()
            _instances[(key, n_threads)] = backend
        return backend

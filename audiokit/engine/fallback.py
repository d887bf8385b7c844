"""Fallback backends: ``numpy.fft`` and ``scipy.fft`` (both pocketfft).

They need no planning and hold no state.  ``scipy.fft`` keeps float32 in
single precision and can use several worker threads; ``numpy.fft`` (numpy >= 2)
also keeps float32.  Older numpy computes in double; the result is then cast
to the dtype promised by the precision policy of :mod:`audiokit.engine.base`.

The scipy backend calls scipy's pocketfft extension itself, loaded without the ``scipy.fft`` package
(:mod:`audiokit.engine.pocketfft_core`: the same calls, the same bits, ~0.25 CPU-s less start-up).

Their zero-copy plans (:meth:`~audiokit.engine.base.FftBackend.real_plan` and
co.) run the same transforms on the plan buffers: numpy >= 2 writes into them
(``out=``), scipy's result is copied in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from audiokit.engine.base import FftBackend, complex_of

_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


class NumpyBackend(FftBackend):
    """``numpy.fft`` backend (always available, single-threaded).

    Parameters
    ----------
    threads : int, default 1
        Accepted for a uniform constructor; numpy.fft always uses one thread.
    """

    name = "numpy"

    @property
    def library(self) -> str:
        return f"numpy.fft {np.__version__}"

    def __init__(self, threads: int = 1):
        self.threads = 1

    def _rfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        out = np.fft.rfft(a.astype(prec, copy=False), n=n, axis=-1)
        return out.astype(complex_of(prec), copy=False)

    def _irfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        out = np.fft.irfft(a.astype(complex_of(prec), copy=False), n=n, axis=-1)
        return out.astype(prec, copy=False)

    def _c2c(self, a: np.ndarray, n: int, prec: np.dtype, *, inverse: bool) -> np.ndarray:
        cdt = complex_of(prec)
        func = np.fft.ifft if inverse else np.fft.fft
        return func(a.astype(cdt, copy=False), n=n, axis=-1).astype(cdt, copy=False)

    # plan buffers: numpy >= 2 writes straight into them and keeps float32
    if _NUMPY2:

        def _rfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
            np.fft.rfft(src, n=n, axis=-1, out=dst)

        def _irfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
            np.fft.irfft(src, n=n, axis=-1, norm="forward", out=dst)


class ScipyBackend(FftBackend):
    """``scipy.fft`` backend.

    Parameters
    ----------
    threads : int >= 1, default 1
        Passed to scipy as ``workers``; parallelism is over the batch axis.
    """

    name = "scipy"

    @property
    def library(self) -> str:
        import scipy

        return f"scipy.fft {scipy.__version__}"

    def __init__(self, threads: int = 1):
        self._core = _scipy_core()  # fail at construction, not at first use
        self.threads = int(threads)

    def _rfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        out = self._core.rfft(a.astype(prec, copy=False), n, self.threads)
        return out.astype(complex_of(prec), copy=False)

    def _irfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        out = self._core.irfft(a.astype(complex_of(prec), copy=False), n, self.threads)
        return out.astype(prec, copy=False)

    def _c2c(self, a: np.ndarray, n: int, prec: np.dtype, *, inverse: bool) -> np.ndarray:
        cdt = complex_of(prec)
        return self._core.c2c(a.astype(cdt, copy=False), n, self.threads, inverse=inverse).astype(cdt, copy=False)

    def _rfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
        np.copyto(dst, self._core.rfft(src, n, self.threads))

    def _irfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
        np.copyto(dst, self._core.irfft(src, n, self.threads, forward_norm=True))


class _PublicScipy:
    """The transforms of :mod:`audiokit.engine.pocketfft_core` through the public ``scipy.fft`` (the same extension
    and arguments, only the import is dearer): used when the extension cannot be loaded alone."""

    def __init__(self) -> None:
        import scipy.fft

        self._fft = scipy.fft

    def rfft(self, x: np.ndarray, n: int, workers: int) -> np.ndarray:
        out: np.ndarray = self._fft.rfft(x, n=n, axis=-1, workers=workers)
        return out

    def irfft(self, x: np.ndarray, n: int, workers: int, *, forward_norm: bool = False) -> np.ndarray:
        out: np.ndarray = self._fft.irfft(x, n=n, axis=-1, norm="forward" if forward_norm else None, workers=workers)
        return out

    def c2c(self, x: np.ndarray, n: int, workers: int, *, inverse: bool) -> np.ndarray:
        out: np.ndarray = (self._fft.ifft if inverse else self._fft.fft)(x, n=n, axis=-1, workers=workers)
        return out


def _scipy_core() -> Any:
    """:mod:`audiokit.engine.pocketfft_core` (scipy's pocketfft extension alone), else the public ``scipy.fft``.

    Raises
    ------
    ImportError
        Neither imports.
    """
    from audiokit.engine import pocketfft_core

    try:
        pocketfft_core.load()
    except ImportError:
        return _PublicScipy()
    return pocketfft_core

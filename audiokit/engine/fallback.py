"""Fallback backends: ``numpy.fft`` and ``scipy.fft`` (both pocketfft).

They need no planning and hold no state.  ``scipy.fft`` keeps float32 in
single precision and can use several worker threads; ``numpy.fft`` (numpy >= 2)
also keeps float32.  Older numpy computes in double; the result is then cast
to the dtype promised by the precision policy of :mod:`audiokit.engine.base`.

Their zero-copy plans (:meth:`~audiokit.engine.base.FftBackend.real_plan` and
co.) run the same transforms on the plan buffers: numpy >= 2 writes into them
(``out=``), scipy's result is copied in.
"""

from __future__ import annotations

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
        import scipy.fft  # noqa: F401  (fail at construction, not at first use)

        self.threads = int(threads)

    def _rfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        import scipy.fft

        out = scipy.fft.rfft(a.astype(prec, copy=False), n=n, axis=-1, workers=self.threads)
        return out.astype(complex_of(prec), copy=False)

    def _irfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        import scipy.fft

        out = scipy.fft.irfft(a.astype(complex_of(prec), copy=False), n=n, axis=-1, workers=self.threads)
        return out.astype(prec, copy=False)

    def _c2c(self, a: np.ndarray, n: int, prec: np.dtype, *, inverse: bool) -> np.ndarray:
        import scipy.fft

        cdt = complex_of(prec)
        func = scipy.fft.ifft if inverse else scipy.fft.fft
        return func(a.astype(cdt, copy=False), n=n, axis=-1, workers=self.threads).astype(cdt, copy=False)

    def _rfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
        import scipy.fft

        np.copyto(dst, scipy.fft.rfft(src, n=n, axis=-1, workers=self.threads))

    def _irfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
        import scipy.fft

        np.copyto(dst, scipy.fft.irfft(src, n=n, axis=-1, norm="forward", workers=self.threads))

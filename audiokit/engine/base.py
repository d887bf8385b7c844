"""The FFT protocol shared by every backend: argument checks and dtype policy.

A backend computes four transforms over the **last axis** of an array; every
leading axis is a batch axis (a stack of frames).  With ``N`` the transform
length:

* forward, unnormalised::

      X[k] = sum_{t=0}^{N-1} x[t] * exp(-2j*pi*k*t/N),   k = 0 .. N-1

* inverse, scaled by ``1/N``::

      x[t] = (1/N) * sum_{k=0}^{N-1} X[k] * exp(+2j*pi*k*t/N)

so ``ifft(fft(x)) == x`` and ``irfft(rfft(x), N) == x`` up to rounding.

Precision policy (the same for every backend):

=====================================  ============================
input dtype                            computed in / returned as
=====================================  ============================
float16, float32, complex64            single: float32 / complex64
float64, complex128, bool, integers    double: float64 / complex128
long double, objects, strings, ...     rejected (ParameterError)
=====================================  ============================

``n`` follows numpy: the input is truncated to, or zero-padded at the end to,
``n`` points (``n // 2 + 1`` bins for ``irfft``) before the transform.
"""

from __future__ import annotations

import operator
from abc import ABC, abstractmethod
from typing import Literal

import numpy as np

from audiokit.errors import ParameterError

Kind = Literal["rfft", "irfft", "fft", "ifft"]

_SINGLE = np.dtype(np.float32)
_DOUBLE = np.dtype(np.float64)


def precision_of(dtype: np.dtype, *, func: str, real_only: bool) -> np.dtype:
    """Return the real working precision (float32 or float64) for an input dtype.

    Parameters
    ----------
    dtype : np.dtype
        dtype of the caller's array.
    func : str
        Name of the transform, used in error messages.
    real_only : bool
        True for ``rfft``: complex input is refused rather than silently
        dropping its imaginary part.

    Returns
    -------
    np.dtype
        ``float32`` for float16/float32/complex64, ``float64`` for
        float64/complex128/bool/integers.

    Raises
    ------
    ParameterError
        For complex input to a real transform, long double, or non-numeric
        dtypes.
    """
    kind = dtype.kind
    if kind in "biu":
        return _DOUBLE
    if kind == "f":
        if dtype.itemsize <= 4:
            return _SINGLE
        if dtype.itemsize == 8:
            return _DOUBLE
    elif kind == "c":
        if real_only:
            raise ParameterError(
                f"{func} needs real input, got dtype {dtype}; "
                "use fft for complex input (allowed: bool, integers, float16, float32, float64)"
            )
        if dtype.itemsize == 8:
            return _SINGLE
        if dtype.itemsize == 16:
            return _DOUBLE
    allowed = "bool, integers, float16, float32, float64" + (
        "" if real_only else ", complex64, complex128"
    )
    raise ParameterError(f"{func}: unsupported input dtype {dtype}; allowed: {allowed}")


def complex_of(precision: np.dtype) -> np.dtype:
    """complex64 for float32, complex128 for float64."""
    return np.dtype(np.complex64) if precision == _SINGLE else np.dtype(np.complex128)


def check_n(n: object, *, func: str) -> int:
    """Validate a transform length: a positive integer (bool refused).

    Raises
    ------
    ParameterError
        If ``n`` is not an integer or is < 1.
    """
    if isinstance(n, (bool, np.bool_)):
        raise ParameterError(f"{func}: n must be a positive integer number of points, got {n!r}")
    try:
        value = operator.index(n)
    except TypeError:
        raise ParameterError(
            f"{func}: n must be a positive integer number of points, got {n!r}"
        ) from None
    if value < 1:
        raise ParameterError(f"{func}: n must be a positive integer number of points, got {value}")
    return value


def as_batch(x: object, *, func: str) -> np.ndarray:
    """Return ``x`` as an ndarray with at least one axis (no copy if possible)."""
    a = np.asarray(x)
    if a.ndim == 0:
        raise ParameterError(
            f"{func}: input must have at least one axis (the transform axis), got a scalar"
        )
    return a


def resolve_n(a: np.ndarray, n: object, *, func: str) -> int:
    """``n`` if given (validated), else the length of the last axis (which must be > 0)."""
    if n is not None:
        return check_n(n, func=func)
    m = a.shape[-1]
    if m < 1:
        raise ParameterError(
            f"{func}: the last axis of the input is empty (shape {a.shape}); "
            "pass n >= 1 to zero-pad it"
        )
    return m


class FftBackend(ABC):
    """Base class of the FFT backends (see the module docstring for the maths).

    Subclasses implement ``_rfft``, ``_irfft`` and ``_c2c``; this class checks
    arguments, applies the precision policy and fixes the output dtype.
    Every method returns a freshly allocated array that the caller owns.

    Attributes
    ----------
    name : str
        Backend name as accepted by :func:`audiokit.engine.get_backend`.
    threads : int
        Worker threads per transform (1 = single-threaded).
    """

    name: str = "base"
    threads: int = 1

    def rfft(self, x: np.ndarray, n: int | None = None) -> np.ndarray:
        """One-sided forward DFT of real frames, unnormalised.

        ``X[..., k] = sum_{t=0}^{n-1} x[..., t] * exp(-2j*pi*k*t/n)`` for
        ``k = 0 .. n//2``.

        Parameters
        ----------
        x : array_like, shape (..., m), real
            Frames along the last axis; leading axes are a batch.
        n : int > 0, optional
            Transform length; ``x`` is truncated or zero-padded to ``n``
            samples.  Default ``m``.

        Returns
        -------
        np.ndarray, shape (..., n // 2 + 1), complex64 or complex128
            complex64 for float16/float32 input, else complex128.

        Raises
        ------
        ParameterError
            Complex or unsupported dtype, scalar input, bad ``n``.
        """
        a = as_batch(x, func="rfft")
        prec = precision_of(a.dtype, func="rfft", real_only=True)
        n = resolve_n(a, n, func="rfft")
        if a.shape[-1] == 0:  # input is all zero padding
            return np.zeros(a.shape[:-1] + (n // 2 + 1,), dtype=complex_of(prec))
        return self._rfft(a, n, prec)

    def irfft(self, X: np.ndarray, n: int) -> np.ndarray:
        """Inverse of :meth:`rfft`: real frames from one-sided spectra, scaled by 1/n.

        ``x[..., t] = (1/n) * sum_{k=0}^{n-1} Xh[..., k] * exp(+2j*pi*k*t/n)``
        where ``Xh`` is the Hermitian extension of the first ``n // 2 + 1``
        bins of ``X`` (``Xh[n-k] = conj(X[k])``); as in numpy, the imaginary
        parts of the DC bin and, for even ``n``, the Nyquist bin are ignored.

        Parameters
        ----------
        X : array_like, shape (..., m), complex (or real)
            One-sided spectra along the last axis.
        n : int > 0
            Output length in samples.  Required: ``m`` bins come from both
            ``2*m - 2`` and ``2*m - 1`` samples, so the length cannot be
            guessed.  ``X`` is truncated or zero-padded to ``n // 2 + 1`` bins.

        Returns
        -------
        np.ndarray, shape (..., n), float32 or float64
            float32 for complex64/float32/float16 input, else float64.
        """
        a = as_batch(X, func="irfft")
        prec = precision_of(a.dtype, func="irfft", real_only=False)
        n = check_n(n, func="irfft")
        if a.shape[-1] == 0:  # all bins are zero padding (numpy.fft returns garbage here)
            return np.zeros(a.shape[:-1] + (n,), dtype=prec)
        return self._irfft(a, n, prec)

    def fft(self, x: np.ndarray, n: int | None = None) -> np.ndarray:
        """Forward complex DFT, unnormalised.

        ``X[..., k] = sum_{t=0}^{n-1} x[..., t] * exp(-2j*pi*k*t/n)``, ``k = 0 .. n-1``.

        Parameters
        ----------
        x : array_like, shape (..., m), real or complex
            Frames along the last axis; real input is treated as complex.
        n : int > 0, optional
            Transform length (truncate / zero-pad); default ``m``.

        Returns
        -------
        np.ndarray, shape (..., n), complex64 or complex128
        """
        a = as_batch(x, func="fft")
        prec = precision_of(a.dtype, func="fft", real_only=False)
        n = resolve_n(a, n, func="fft")
        if a.shape[-1] == 0:  # input is all zero padding
            return np.zeros(a.shape[:-1] + (n,), dtype=complex_of(prec))
        return self._c2c(a, n, prec, inverse=False)

    def ifft(self, X: np.ndarray, n: int | None = None) -> np.ndarray:
        """Inverse complex DFT, scaled by 1/n.

        ``x[..., t] = (1/n) * sum_{k=0}^{n-1} X[..., k] * exp(+2j*pi*k*t/n)``.

        Parameters
        ----------
        X : array_like, shape (..., m), real or complex
            Spectra along the last axis.
        n : int > 0, optional
            Transform length (truncate / zero-pad); default ``m``.

        Returns
        -------
        np.ndarray, shape (..., n), complex64 or complex128
        """
        a = as_batch(X, func="ifft")
        prec = precision_of(a.dtype, func="ifft", real_only=False)
        n = resolve_n(a, n, func="ifft")
        if a.shape[-1] == 0:  # input is all zero padding
            return np.zeros(a.shape[:-1] + (n,), dtype=complex_of(prec))
        return self._c2c(a, n, prec, inverse=True)

    # -- implemented by each backend ----------------------------------------
    # ``a`` is the caller's array (>= 1 axis, any accepted dtype), ``n`` the
    # validated length and ``prec`` the working precision (float32/float64).
    @abstractmethod
    def _rfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        """Real-to-complex forward transform of the last axis."""

    @abstractmethod
    def _irfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        """Complex-to-real inverse transform of the last axis, scaled by 1/n."""

    @abstractmethod
    def _c2c(self, a: np.ndarray, n: int, prec: np.dtype, *, inverse: bool) -> np.ndarray:
        """Complex transform of the last axis; the inverse is scaled by 1/n."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(threads={self.threads})"

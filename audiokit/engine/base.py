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

Zero-copy plans
---------------
The four methods above copy: they accept any array and return a fresh one.
For a hot loop over blocks of frames, :meth:`FftBackend.real_plan` and
:meth:`FftBackend.inverse_plan` return a :class:`RealPlan`: a batched real
transform of fixed shape ``(rows, n)`` on buffers the caller writes
(``plan.input``) and reads (``plan.output``) directly, run by
``plan.execute(k)`` on the first ``k`` rows.  The forward plan computes the
same unnormalised one-sided DFT as ``rfft``; the inverse plan is
**unnormalised** (``output == n * irfft(input, n)``, ``plan.scale == 1/n``) so
that the ``1/n`` can be folded into a later multiplication (a synthesis
window) instead of costing a pass.
"""

from __future__ import annotations

import operator
import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from audiokit.errors import ParameterError

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "ALIGNMENT",
    "SIMD_ROW_ALIGNMENT",
    "Direction",
    "FftBackend",
    "Kind",
    "RealPlan",
    "aligned_length",
    "aligned_zeros",
    "as_batch",
    "check_bound_arrays",
    "check_n",
    "check_rows",
    "complex_of",
    "plan_precision",
    "precision_of",
    "resolve_n",
]

Kind = Literal["rfft", "irfft", "fft", "ifft"]
Direction = Literal["forward", "inverse"]

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
    allowed = "bool, integers, float16, float32, float64" + ("" if real_only else ", complex64, complex128")
    raise ParameterError(f"{func}: unsupported input dtype {dtype}; allowed: {allowed}")


def complex_of(precision: np.dtype) -> np.dtype:
    """complex64 for float32, complex128 for float64."""
    return np.dtype(np.complex64) if precision == _SINGLE else np.dtype(np.complex128)


#: Byte alignment of :func:`aligned_zeros` (a cache line; AVX-512 needs 64, AVX 32).
ALIGNMENT = 64


def aligned_zeros(shape: int | tuple[int, ...], dtype: npt.DTypeLike) -> np.ndarray:
    """A zero-filled C-contiguous array whose data starts on an :data:`ALIGNMENT`-byte boundary."""
    dt = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    return raw[start : start + nbytes].view(dt).reshape(shape)


#: Row alignment, in bytes, that FFTW's SIMD codelets need for *every* row of a
#: batched transform (32 bytes: one AVX register).  A batch whose rows are not all
#: aligned (e.g. 257 complex64 = 2056-byte rows) is planned without them, about
#: 20% slower; :func:`aligned_length` pads such rows.
SIMD_ROW_ALIGNMENT = 32


def aligned_length(length: int, itemsize: int, alignment: int = ALIGNMENT) -> int:
    """Smallest item count ``>= length`` whose size in bytes is a multiple of ``alignment``.

    Pads the rows of a batch buffer so that, in an :func:`aligned_zeros`
    array, every row starts on an ``alignment``-byte boundary (FFTW uses its
    SIMD codelets for a batch only when all rows are aligned).

    Parameters
    ----------
    length : int >= 0
        Items per row.
    itemsize : int > 0
        Bytes per item (4, 8 or 16 for float32, float64/complex64, complex128).
    alignment : int > 0
        Bytes, a multiple of ``itemsize``; default :data:`ALIGNMENT` (64), or
        :data:`SIMD_ROW_ALIGNMENT` (32) for the spectra rows of a batch.

    Returns
    -------
    int
        ``ceil(length / step) * step`` items, ``step = max(1, alignment // itemsize)``;
        e.g. 257 complex64 (8 bytes) -> 260 for 32-byte rows.
    """
    step = max(1, alignment // itemsize)
    return -(-length // step) * step


def check_n(n: Any, *, func: str) -> int:
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
        raise ParameterError(f"{func}: n must be a positive integer number of points, got {n!r}") from None
    if value < 1:
        raise ParameterError(f"{func}: n must be a positive integer number of points, got {value}")
    return value


def as_batch(x: object, *, func: str) -> np.ndarray:
    """Return ``x`` as an ndarray with at least one axis (no copy if possible)."""
    a = np.asarray(x)
    if a.ndim == 0:
        raise ParameterError(f"{func}: input must have at least one axis (the transform axis), got a scalar")
    return a


def resolve_n(a: np.ndarray, n: object, *, func: str) -> int:
    """``n`` if given (validated), else the length of the last axis (which must be > 0)."""
    if n is not None:
        return check_n(n, func=func)
    m = a.shape[-1]
    if m < 1:
        raise ParameterError(f"{func}: the last axis of the input is empty (shape {a.shape}); pass n >= 1 to zero-pad it")
    return m


def check_rows(rows: Any, *, func: str) -> int:
    """Validate a plan's row count: a positive integer (bool refused)."""
    if isinstance(rows, (bool, np.bool_)):
        raise ParameterError(f"{func}: rows must be a positive integer, got {rows!r}")
    try:
        value = operator.index(rows)
    except TypeError:
        raise ParameterError(f"{func}: rows must be a positive integer, got {rows!r}") from None
    if value < 1:
        raise ParameterError(f"{func}: rows must be a positive integer, got {value}")
    return value


def plan_precision(dtype: Any, *, func: str) -> np.dtype:
    """Real working precision of a plan: float32 (also for complex64) or float64 (also complex128)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is not None:
        if dt in (np.float32, np.complex64):
            return _SINGLE
        if dt in (np.float64, np.complex128):
            return _DOUBLE
    raise ParameterError(
        f"{func}: unsupported plan dtype {dtype!r}; allowed: float32, float64 (complex64, complex128 name the same precisions)"
    )


class RealPlan:
    """A batched one-sided real DFT of fixed shape on buffers the caller uses in place.

    Obtained from :meth:`FftBackend.real_plan` (forward) or
    :meth:`FftBackend.inverse_plan` (inverse); not constructed directly.
    With ``N = n`` and ``F = n // 2 + 1``:

    * forward: ``input`` is ``(rows, N)`` real, ``output`` is ``(rows, F)``
      complex, ``output[r, k] = sum_t input[r, t] * exp(-2j*pi*k*t/N)``
      (unnormalised, as :meth:`FftBackend.rfft`); ``input`` is preserved.
    * inverse: ``input`` is ``(rows, F)`` complex, ``output`` is ``(rows, N)``
      real, ``output[r, t] = sum_{k=0}^{N-1} Xh[r, k] * exp(+2j*pi*k*t/N)``
      with ``Xh`` the Hermitian extension of ``input`` -- **not** scaled by
      ``1/N``: ``output == N * irfft(input, N)``.  Multiply by :attr:`scale`
      (``1/N``) somewhere downstream.  As for ``irfft``, the imaginary parts
      of the DC bin and (even ``N``) the Nyquist bin are ignored, and
      ``execute`` may overwrite ``input``.

    Usage: write rows into ``input[:k]``, call ``execute(k)``, read the
    returned ``output[:k]`` before the next ``execute``.  Rows ``>= k`` of
    ``output`` are unspecified after ``execute(k)`` (FFTW may transform a few
    more rows than asked, whatever they hold).

    Sharing: the FFTW backend caches plans per (direction, n, rows, dtype) and
    hands the same object to every caller, so the buffers are shared scratch.
    Hold :attr:`lock` (``with plan: ...``) from writing ``input`` to reading
    ``output`` when other threads may use the same backend.  :attr:`owner` is
    a free slot for the lock holder: set it to a token of yours after
    preparing parts of ``input`` you rely on later (e.g. zero padding
    columns); if it still holds your token the next time, nobody else has
    used the buffers meanwhile.  The plan never reads or sets it.

    Attributes
    ----------
    n : int
        Transform length.
    rows : int
        Rows of the buffers (the largest batch of one ``execute``).
    dtype : np.dtype
        Real precision, float32 or float64 (complex64 / complex128 buffers).
    direction : {'forward', 'inverse'}
    input, output : np.ndarray
        C-contiguous buffers shaped as above (SIMD-aligned for FFTW).
    scale : float
        Factor that normalises ``output``: 1.0 (forward), ``1/n`` (inverse).
    lock : threading.Lock
    owner : object
        Free slot, see above (initially None).
    """

    __slots__ = ("direction", "dtype", "input", "lock", "n", "output", "owner", "rows", "scale")

    def __init__(self, n: int, rows: int, dtype: np.dtype, direction: Direction, inbuf: np.ndarray, outbuf: np.ndarray):
        self.n, self.rows, self.dtype, self.direction = n, rows, dtype, direction
        self.input, self.output = inbuf, outbuf
        self.scale = 1.0 if direction == "forward" else 1.0 / n
        self.lock = threading.Lock()
        self.owner: object = None

    @staticmethod
    def buffer_shapes(direction: Direction, n: int, rows: int, dtype: np.dtype):
        """``((in_shape, in_dtype), (out_shape, out_dtype))`` of a plan."""
        real, cplx = ((rows, n), dtype), ((rows, n // 2 + 1), complex_of(dtype))
        return (real, cplx) if direction == "forward" else (cplx, real)

    def execute(self, rows: int | None = None) -> np.ndarray:
        """Transform ``input[:rows]`` (default: all rows) into ``output[:rows]`` and return that view."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(direction={self.direction!r}, n={self.n}, rows={self.rows}, dtype={self.dtype.name})"


class _GenericRealPlan(RealPlan):
    """Plan of the fallback backends: ``execute`` calls the backend's ``_rfft_into`` / ``_irfft_into``."""

    __slots__ = ("_run",)

    def __init__(self, backend: FftBackend, direction: Direction, n: int, rows: int, dtype: np.dtype):
        (ishape, idt), (oshape, odt) = self.buffer_shapes(direction, n, rows, dtype)
        super().__init__(n, rows, dtype, direction, np.zeros(ishape, idt), np.zeros(oshape, odt))
        self._run = backend._rfft_into if direction == "forward" else backend._irfft_into

    def execute(self, rows: int | None = None) -> np.ndarray:
        if rows is None or rows == self.rows:
            self._run(self.input, self.output, self.n)
            return self.output
        if not 0 <= rows < self.rows:
            raise ParameterError(f"execute: rows must be 0 .. {self.rows}, got {rows!r}")
        out = self.output[:rows]
        if rows == 0:
            return out
        self._run(self.input[:rows], out, self.n)
        return out


class _GenericBoundPlan(RealPlan):
    """Fallback plan on caller arrays: ``execute`` calls ``_rfft_into`` / ``_irfft_into`` on them."""

    __slots__ = ("_run",)

    def __init__(
        self, backend: FftBackend, direction: Direction, n: int, rows: int, dtype: np.dtype, inbuf: np.ndarray, outbuf: np.ndarray
    ):
        super().__init__(n, rows, dtype, direction, inbuf, outbuf)
        self._run = backend._rfft_into if direction == "forward" else backend._irfft_into

    def execute(self, rows: int | None = None) -> np.ndarray:
        if rows is not None and rows != self.rows:
            raise ParameterError(f"execute: a plan on caller arrays runs all {self.rows} rows, got rows={rows!r}")
        self._run(self.input, self.output, self.n)
        return self.output


def check_bound_arrays(inbuf: object, outbuf: object, *, inverse: bool, func: str) -> tuple[int, np.dtype, int]:
    """Validate the arrays of :meth:`FftBackend.plan_on`; return ``(n, precision, rows)``."""
    if not isinstance(inbuf, np.ndarray) or not isinstance(outbuf, np.ndarray):
        raise ParameterError(f"{func}: input and output must be numpy arrays")
    if inbuf.ndim == 0 or inbuf.shape[:-1] != outbuf.shape[:-1] or outbuf.ndim != inbuf.ndim:
        raise ParameterError(
            f"{func}: input and output need the same leading (batch) shape, got {inbuf.shape} and {outbuf.shape}"
        )
    real, cplx = (outbuf, inbuf) if inverse else (inbuf, outbuf)
    if real.dtype not in (_SINGLE, _DOUBLE) or cplx.dtype != complex_of(real.dtype):
        raise ParameterError(
            f"{func}: need a float32/complex64 or float64/complex128 pair "
            f"({'complex input, real output' if inverse else 'real input, complex output'}), "
            f"got {inbuf.dtype} -> {outbuf.dtype}"
        )
    n = real.shape[-1]
    if n < 1 or cplx.shape[-1] != n // 2 + 1:
        raise ParameterError(f"{func}: {n} real samples need {n // 2 + 1} complex bins, got {cplx.shape[-1]}")
    if not outbuf.flags.writeable or (inverse and not inbuf.flags.writeable):
        raise ParameterError(f"{func}: the output (and an inverse plan's input) must be writeable")
    return n, real.dtype, int(np.prod(inbuf.shape[:-1], dtype=np.int64))


class FftBackend(ABC):
    """Base class of the FFT backends (see the module docstring for the maths).

    Subclasses implement ``_rfft``, ``_irfft`` and ``_c2c``; this class checks
    arguments, applies the precision policy and fixes the output dtype.
    The four transforms return a freshly allocated array that the caller
    owns; the plans (:meth:`real_plan`, :meth:`inverse_plan`,
    :meth:`plan_on`) work in place on buffers instead (a backend may
    override ``_make_plan`` / ``_bind_plan``; the generic ones call
    ``_rfft_into`` / ``_irfft_into``).

    Attributes
    ----------
    name : str
        Backend name as accepted by :func:`audiokit.engine.get_backend`.
    threads : int
        Worker threads per transform (1 = single-threaded).
    """

    name: str = "base"
    threads: int = 1

    @property
    def library(self) -> str:
        """The FFT library and its version (``"FFTW 3.3.10"``, ``"scipy.fft 1.17.1"``): results are reproducible per library."""
        return self.name

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

    # -- zero-copy plans -------------------------------------------------------
    def real_plan(self, n: int, rows: int, dtype: object = np.float32) -> RealPlan:
        """A forward :class:`RealPlan`: ``rows`` frames of ``n`` real samples -> ``n//2+1`` bins.

        Parameters
        ----------
        n : int > 0
            Transform length.
        rows : int > 0
            Frames per batch (buffer rows).
        dtype : {float32, float64}
            Real precision (complex64 / complex128 name the same ones).

        Returns
        -------
        RealPlan
            ``input (rows, n)`` real, ``output (rows, n//2+1)`` complex,
            ``execute(k)``.  FFTW: cached and shared (see :class:`RealPlan`);
            fallbacks: a new plan on plain numpy buffers.
        """
        n = check_n(n, func="real_plan")
        rows = check_rows(rows, func="real_plan")
        return self._make_plan("forward", n, rows, plan_precision(dtype, func="real_plan"))

    def inverse_plan(self, n: int, rows: int, dtype: object = np.float32) -> RealPlan:
        """An inverse :class:`RealPlan`: ``rows`` spectra of ``n//2+1`` bins -> ``n`` real samples, **unscaled**.

        ``output == n * irfft(input, n)`` (multiply by ``plan.scale = 1/n``
        downstream); the imaginary parts of the DC and (even ``n``) Nyquist
        bins are ignored; ``execute`` may overwrite ``input``.  Parameters as
        :meth:`real_plan`.
        """
        n = check_n(n, func="inverse_plan")
        rows = check_rows(rows, func="inverse_plan")
        return self._make_plan("inverse", n, rows, plan_precision(dtype, func="inverse_plan"))

    def plan_on(self, input: np.ndarray, output: np.ndarray, *, inverse: bool = False) -> RealPlan:
        """A :class:`RealPlan` bound to arrays the caller owns, of any strides.

        The transform runs over the last axis; every leading axis is a batch
        axis (the same leading shape for both arrays).  Forward
        (``inverse=False``): ``input (..., n)`` float32/float64 ->
        ``output (..., n//2+1)`` complex64/complex128, as :meth:`real_plan`.
        Inverse: ``input (..., n//2+1)`` complex -> ``output (..., n)`` real,
        unnormalised, as :meth:`inverse_plan`.

        Layouts are free: rows of a forward input may overlap (e.g. frames
        of one buffer made with ``as_strided``: the forward transform only
        reads its input); output rows must not overlap each other or the
        input, and samples of ``output`` outside its rows are never written.
        FFTW plans on the arrays themselves (``FFTW_ESTIMATE``: planning
        does not write to them).  SIMD-aligned arrays
        (:func:`aligned_zeros`) let FFTW use its aligned kernels.

        Not cached: the plan refers to these arrays; keep it as long as
        them.  ``execute()`` runs the whole batch.

        Raises
        ------
        ParameterError
            Mismatched shapes or dtypes, or a read-only output.
        """
        n, prec, rows = check_bound_arrays(input, output, inverse=inverse, func="plan_on")
        return self._bind_plan("inverse" if inverse else "forward", n, rows, prec, input, output)

    def _make_plan(self, direction: Direction, n: int, rows: int, prec: np.dtype) -> RealPlan:
        return _GenericRealPlan(self, direction, n, rows, prec)

    def _bind_plan(
        self, direction: Direction, n: int, rows: int, prec: np.dtype, inbuf: np.ndarray, outbuf: np.ndarray
    ) -> RealPlan:
        return _GenericBoundPlan(self, direction, n, rows, prec, inbuf, outbuf)

    def _rfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
        """``dst[...] = rfft(src)`` for plan buffers (generic: through ``_rfft``)."""
        np.copyto(dst, self._rfft(src, n, src.dtype))

    def _irfft_into(self, src: np.ndarray, dst: np.ndarray, n: int) -> None:
        """``dst[...] = n * irfft(src, n)`` for plan buffers (generic: through ``_irfft``)."""
        np.multiply(self._irfft(src, n, dst.dtype), n, out=dst, casting="same_kind")

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

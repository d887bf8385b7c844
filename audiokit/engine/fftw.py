"""pyFFTW backend: cached FFTW plans run block by block on aligned scratch buffers.

How a call runs
---------------
A batch ``a`` of shape ``(..., m)`` is viewed as ``B`` rows.  For each
(transform kind, length ``n``, precision) the backend keeps one *kernel*:

* two SIMD-aligned scratch buffers holding ``R`` rows (input and output),
  where ``R`` is the largest power of two with ``R * row_bytes <=
  block_bytes`` (at least 1).  Blocks of about 256 KiB stay in the L2 cache,
  which measured 1.2-2.3x faster than one FFTW call over a whole batch of
  4000 frames (8-64 MB);
* FFTW plans over the first ``r`` rows of those buffers, built on first use
  and reused.  Planning only ever touches the scratch buffers, never caller
  data.

Rows are processed ``R`` at a time: copy in (this also casts, pads with
zeros or truncates to ``n``), execute, copy out into a freshly allocated
result (scaled by ``1/n`` for inverse transforms).  When ``B > R`` the last
block is the final ``R`` rows, overlapping the previous one (same plan, rows
recomputed identically); when ``B < R`` it is split into powers of two.  So
a kernel holds at most ``log2(R) + 1`` plans and typically one or two.

Kernels live in a least-recently-used cache bounded by count and bytes.
Results are always new arrays owned by the caller; the input is never
modified.  One lock per backend serialises calls, so sharing a backend
between threads is safe (but not concurrent).

Zero-copy plans (:class:`~audiokit.engine.base.RealPlan`) skip the copies:
``real_plan`` / ``inverse_plan`` hand out a cached plan (same LRU and byte
bound as the kernels, keyed on direction, n, rows, precision) whose aligned
buffers the caller fills and reads in place, with power-of-two sub-plans for
partial batches; ``plan_on`` makes a ``pyfftw.FFTW`` on the caller's own
arrays (uncached).  Per 512-point float32 frame the copy in, copy out and
fresh result of ``rfft`` cost about 216 ns on top of FFTW's 300 ns.

Measured and rejected (benchmarks/bench_fft.py, 4000 frames): running FFTW
directly on caller arrays with ``update_arrays`` (they are rarely SIMD
aligned, and the per-block call cost more than the copy); an ``out=``
argument reusing the result array (no gain below glibc's 32 MB mmap
threshold, 16% only for 2048-point float64 batches of 64 MB).

Deterministic plans
-------------------
Every plan is made with ``FFTW_ESTIMATE`` and nothing else.  FFTW's other
planner efforts (``FFTW_MEASURE`` and up) *time* candidate algorithms and keep
the fastest; different algorithms round differently, so the same frames gave
different last bits from one process to the next (six fresh processes on a
loaded machine: four different results), and a wisdom file remembering the
winners made a warm machine differ from a fresh one.  ``FFTW_ESTIMATE``
chooses from operation counts only: the same problem (length, batch, strides,
alignment, precision, threads) gives the same plan, hence the same bytes, in
every process on one machine.  FFTW uses wisdom of greater rigour when it
has some, so the process-wide wisdom is forgotten before each new plan: wisdom
imported or measured by other code in the process cannot change a result.
Measured cost against the timed plans (1 h at 16 kHz, win 400 / hop 160,
centred, float32, CPU time, medians of 15, both in one process): n_fft 400
(the CLI's default) STFT power 1.00-1.01x, log-mel 1.00x; n_fft 512 (the
benchmarks' librosa framing) 1.17-1.26x and 1.17-1.22x: FFTW's estimate for
that polyphase batch runs ~700 ns per frame against ~500 ns for the timed
plan.  No planning time (a fresh 512-point ``FFTW_MEASURE`` plan took ~160
ms).  Tried and dropped: a canonical wisdom file chosen once by
``FFTW_PATIENT`` and imported before each plan -- deterministic and as fast
as the timed plans, but the plans it held for some batch sizes and
``FFTW_ESTIMATE``'s for the others compute a frame differently, so the
one-shot API and the streamed CLI (other batch sizes) no longer gave the same
bytes.
Across machines, FFTW's choice depends on the SIMD instructions the CPU
offers, so results agree to float rounding there, not bit for bit.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from audiokit.engine.base import (
    ALIGNMENT,
    SIMD_ROW_ALIGNMENT,
    Direction,
    FftBackend,
    RealPlan,
    aligned_length,
    complex_of,
)
from audiokit.errors import ParameterError
from audiokit.validate import is_int

__all__ = ["PLANNER_FLAG", "FftwBackend"]

#: The only planner rigour used: chosen without timing, so every process gets the same plan (module docstring).
PLANNER_FLAG = "FFTW_ESTIMATE"

#: (FFTW direction, input is complex, output is complex, scale output by 1/n)
_KINDS = {
    "rfft": ("FFTW_FORWARD", False, True, False),
    "irfft": ("FFTW_BACKWARD", True, False, True),
    "fft": ("FFTW_FORWARD", True, True, False),
    "ifft": ("FFTW_BACKWARD", True, True, True),
}


def new_fftw(pyfftw, inbuf: np.ndarray, outbuf: np.ndarray, *, direction: str, destroy_input: bool, threads: int):
    """A ``pyfftw.FFTW`` from ``inbuf`` to ``outbuf`` over the last axis, planned deterministically.

    ``FFTW_ESTIMATE`` (:data:`PLANNER_FLAG`) after forgetting the process's
    wisdom: no timing and no remembered plan can change which algorithm runs
    (module docstring).  ``direction`` is ``"FFTW_FORWARD"`` or
    ``"FFTW_BACKWARD"``; ``destroy_input`` lets FFTW overwrite the input
    (c2r's default; the input is scratch).  The one place where the engine plans.
    """
    pyfftw.forget_wisdom()
    flags = (PLANNER_FLAG, "FFTW_DESTROY_INPUT") if destroy_input else (PLANNER_FLAG,)
    return pyfftw.FFTW(inbuf, outbuf, axes=(-1,), direction=direction, flags=flags, threads=threads)


def _row_lengths(kind: str, n: int) -> tuple[int, int]:
    """(input, output) row lengths of an FFTW transform of length ``n``."""
    if kind == "rfft":
        return n, n // 2 + 1
    if kind == "irfft":
        return n // 2 + 1, n
    return n, n


class _Kernel:
    """Scratch buffers and the plans of one (kind, n, precision)."""

    __slots__ = (
        "_direction",
        "_pyfftw",
        "_threads",
        "inbuf",
        "kind",
        "n",
        "nbytes",
        "outbuf",
        "plans",
        "rows_max",
    )

    def __init__(self, pyfftw, kind: str, n: int, prec: np.dtype, *, block_bytes: int, threads: int):
        direction, cin, cout, _ = _KINDS[kind]
        n_in, n_out = _row_lengths(kind, n)
        in_dtype = complex_of(prec) if cin else prec
        out_dtype = complex_of(prec) if cout else prec
        fit = max(1, block_bytes // (n_in * in_dtype.itemsize))
        self.rows_max = 1 << (fit.bit_length() - 1)
        self.kind, self.n = kind, n
        # Single precision rows are padded to 32 bytes (unaligned rows keep FFTW off its SIMD
        # codelets: 512-point f32 rfft 1.52-1.55x -> 1.59-1.61x scipy); double precision
        # measured slower padded (2.04x -> 1.74x), so it keeps packed rows.
        pad = prec == np.float32
        self.inbuf = _row_aligned_zeros(pyfftw, self.rows_max, n_in, in_dtype, pad)
        self.outbuf = _row_aligned_zeros(pyfftw, self.rows_max, n_out, out_dtype, pad)
        self.nbytes = _allocated_bytes(self.inbuf) + _allocated_bytes(self.outbuf)
        self.plans: dict[int, Any] = {}  # rows -> bound execute of a pyfftw.FFTW
        self._pyfftw = pyfftw
        self._direction = direction
        self._threads = threads

    def execute_for(self, rows: int):
        """Bound ``execute`` of the plan over the first ``rows`` rows (made on first use)."""
        plan = self.plans.get(rows)
        if plan is not None:
            return plan
        fftw = new_fftw(
            self._pyfftw,
            self.inbuf[:rows],
            self.outbuf[:rows],
            direction=self._direction,
            destroy_input=self.kind == "irfft",
            threads=self._threads,
        )
        plan = fftw.execute
        self.plans[rows] = plan
        return plan


def _allocated_bytes(a: np.ndarray) -> int:
    """Bytes of the buffer behind the view ``a`` (padding included)."""
    return a.nbytes if a.base is None else a.base.nbytes


def _row_aligned_zeros(pyfftw, rows: int, width: int, dtype: np.dtype, pad: bool = True) -> np.ndarray:
    """Zeroed ``(rows, width)`` view of an aligned buffer; with ``pad`` its rows start on 32-byte boundaries."""
    padded = aligned_length(width, np.dtype(dtype).itemsize, SIMD_ROW_ALIGNMENT) if pad else width
    return pyfftw.zeros_aligned((rows, padded), dtype=dtype, n=ALIGNMENT)[:, :width]


class _FftwRealPlan(RealPlan):
    """FFTW :class:`RealPlan`: ``pyfftw.FFTW`` objects bound to the plan's own aligned buffers.

    The plan for all ``rows`` is made on the buffers when the plan is
    created.  ``execute(k)`` for ``k < rows`` runs a plan over the first
    ``p`` rows, ``p`` the smallest power of two ``>= k`` (at most twice the
    work asked for; at most ``log2(rows) + 1`` plans), made on first use on
    the same buffers (``FFTW_ESTIMATE`` planning never writes to its arrays,
    so data the caller has written stays).
    """

    __slots__ = ("_backend", "_edges", "_fftw_dir", "_full", "_padded_out", "_runners", "nbytes", "plans")

    def __init__(self, backend: FftwBackend, direction: Direction, n: int, rows: int, prec: np.dtype):
        pyfftw = backend._pyfftw
        (ishape, idt), (oshape, odt) = self.buffer_shapes(direction, n, rows, prec)
        self._padded_out = direction == "forward"
        super().__init__(n, rows, prec, direction, pyfftw.zeros_aligned(ishape, dtype=idt), self._out_buffer(pyfftw, oshape, odt))
        self.nbytes = self.input.nbytes + self.output.shape[0] * self.output.strides[0]  # padded rows
        self._backend = backend
        self._fftw_dir = "FFTW_FORWARD" if direction == "forward" else "FFTW_BACKWARD"
        self.plans: dict[int, Any] = {}  # rows -> pyfftw.FFTW
        self._runners: dict[int, Callable[[], Any]] = {}  # k rows -> execute of the plan covering them
        fftw = self._new_fftw(rows)
        self.plans[rows] = fftw
        self._full = fftw.execute
        self._edges: tuple[np.ndarray, ...] = ()
        if direction == "inverse":
            # c2r ignores the imaginary parts of DC and (even n) Nyquist; zeroing
            # them makes that explicit for every FFTW algorithm (as irfft does)
            pairs = self.input.view(prec)  # (rows, 2F): re, im, re, im, ...
            cols = (1, pairs.shape[1] - 1) if n % 2 == 0 and n > 1 else (1,)
            self._edges = tuple(pairs[:, c] for c in cols)

    def _out_buffer(self, pyfftw, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A zeroed output buffer; forward spectra rows padded to a multiple of 32 bytes.

        With ``n // 2 + 1`` complex64 per row (2056 bytes for n = 512) every
        other row is misaligned, and FFTW then plans batches without its SIMD
        codelets (about 20% slower).  ``output`` stays ``(rows, F)``, a view
        of the padded rows.
        """
        if not self._padded_out:
            return pyfftw.zeros_aligned(shape, dtype=dtype)
        width = aligned_length(shape[-1], np.dtype(dtype).itemsize, SIMD_ROW_ALIGNMENT)
        return pyfftw.zeros_aligned(shape[:-1] + (width,), dtype=dtype, n=ALIGNMENT)[..., : shape[-1]]

    def _new_fftw(self, rows: int):
        """A plan over the first ``rows`` rows of the buffers; c2r may destroy its input (FFTW's default)."""
        b = self._backend
        return new_fftw(
            b._pyfftw,
            self.input[:rows],
            self.output[:rows],
            direction=self._fftw_dir,
            destroy_input=self._fftw_dir == "FFTW_BACKWARD",
            threads=b.threads,
        )

    def _runner(self, k: int):
        p = 1 << (k - 1).bit_length()
        if p >= self.rows:
            run = self._full
        else:
            fftw = self.plans.get(p)
            if fftw is None:
                with self._backend._lock:  # one planner at a time (FFTW's planner is not thread-safe)
                    fftw = self.plans[p] = self._new_fftw(p)
            run = fftw.execute
        self._runners[k] = run
        return run

    def execute(self, rows: int | None = None) -> np.ndarray:
        if rows is None or rows == self.rows:
            for e in self._edges:
                e.fill(0)
            self._full()
            return self.output
        if not 0 <= rows < self.rows:
            raise ParameterError(f"execute: rows must be 0 .. {self.rows}, got {rows!r}")
        if rows == 0:
            return self.output[:0]
        run = self._runners.get(rows)
        if run is None:
            run = self._runner(rows)
        for e in self._edges:
            e[:rows] = 0
        run()
        return self.output[:rows]


class _FftwBoundPlan(RealPlan):
    """FFTW plan on caller arrays (:meth:`FftBackend.plan_on`): one ``pyfftw.FFTW`` on them."""

    __slots__ = ("_edges", "_exec")

    def __init__(
        self,
        backend: FftwBackend,
        direction: Direction,
        n: int,
        rows: int,
        prec: np.dtype,
        inbuf: np.ndarray,
        outbuf: np.ndarray,
    ):
        super().__init__(n, rows, prec, direction, inbuf, outbuf)
        inverse = direction == "inverse"
        fftw = new_fftw(
            backend._pyfftw,
            inbuf,
            outbuf,
            direction="FFTW_BACKWARD" if inverse else "FFTW_FORWARD",
            destroy_input=inverse,
            threads=backend.threads,
        )
        self._exec = fftw.execute
        self._edges: tuple[np.ndarray, ...] = ()
        if direction == "inverse":  # see _FftwRealPlan
            cols = (0, inbuf.shape[-1] - 1) if n % 2 == 0 and n > 1 else (0,)
            self._edges = tuple(inbuf[..., c].imag for c in cols)

    def execute(self, rows: int | None = None) -> np.ndarray:
        if rows is not None and rows != self.rows:
            raise ParameterError(f"execute: a plan on caller arrays runs all {self.rows} rows, got rows={rows!r}")
        for e in self._edges:
            e.fill(0)
        self._exec()
        return self.output


class FftwBackend(FftBackend):
    """FFTW through pyFFTW, with a plan cache; plans chosen deterministically (``FFTW_ESTIMATE``).

    Parameters
    ----------
    threads : int >= 1, default 1
        FFTW threads per plan.  One thread is the default: on the shared
        2-core machine of the benchmarks, 2 threads ran at 1.2-1.5x the speed
        of 1 thread for 400/512-point frames when the machine was nearly
        idle, but at 0.3-0.6x for 2048 points and down to 0.02x when other
        processes kept the cores busy (every block is an OpenMP fork/join).
    block_bytes : int, default 262144
        Target size of one block of input rows (see module docstring).
    max_kernels : int, default 32
        Cached (kind, n, precision) kernels, least recently used evicted first.
    max_cache_bytes : int, default 64 MiB
        Bound on the scratch memory of cached kernels; a kernel bigger than
        this (a huge ``n``) is dropped right after its call.

    Raises
    ------
    ParameterError
        Bad ``threads``.
    ImportError
        pyfftw cannot be imported.

    Notes
    -----
    There is no planner-effort option and no wisdom file: timed planning
    (``FFTW_MEASURE`` and up) made the bytes of a result depend on the
    machine's load and on the cache (module docstring, "Deterministic plans").
    """

    name = "fftw"

    @property
    def library(self) -> str:
        return f"FFTW {getattr(self._pyfftw, 'fftw_version', '')}".rstrip()

    def __init__(
        self,
        threads: int = 1,
        *,
        block_bytes: int = 256 * 1024,
        max_kernels: int = 32,
        max_cache_bytes: int = 64 * 1024 * 1024,
    ):
        from audiokit.engine import pyfftw_core

        pyfftw = pyfftw_core.load()  # not ``import pyfftw``: that imports pyfftw.interfaces (scipy.fft, dask)

        if not is_int(threads) or threads < 1:
            raise ParameterError(f"FFT threads must be an integer >= 1, got {threads!r}")
        self._pyfftw = pyfftw
        self.threads = int(threads)
        self.block_bytes = int(block_bytes)
        self.max_kernels = int(max_kernels)
        self.max_cache_bytes = int(max_cache_bytes)
        # one LRU for the copying kernels and the zero-copy plans (keys start with 'plan')
        self._kernels: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._cache_bytes = 0
        self._lock = threading.Lock()

    # -- cache ---------------------------------------------------------------
    def cache_info(self) -> dict[str, int]:
        """Sizes of the plan cache: ``kernels`` (including cached :class:`RealPlan` objects), FFTW ``plans`` and ``bytes``."""
        with self._lock:
            return {
                "kernels": len(self._kernels),
                "plans": sum(len(k.plans) for k in self._kernels.values()),
                "bytes": self._cache_bytes,
            }

    def clear_cache(self) -> None:
        """Drop every cached plan and scratch buffer."""
        with self._lock:
            self._kernels.clear()
            self._cache_bytes = 0

    def _kernel(self, kind: str, n: int, prec: np.dtype) -> _Kernel:
        key = (kind, n, prec.char)
        kernel = self._kernels.get(key)
        if kernel is not None:
            self._kernels.move_to_end(key)
            return kernel
        kernel = _Kernel(self._pyfftw, kind, n, prec, block_bytes=self.block_bytes, threads=self.threads)
        self._kernels[key] = kernel
        self._cache_bytes += kernel.nbytes
        return kernel

    def _trim_cache(self) -> None:
        while self._kernels and (len(self._kernels) > self.max_kernels or self._cache_bytes > self.max_cache_bytes):
            _, old = self._kernels.popitem(last=False)
            self._cache_bytes -= old.nbytes

    # -- zero-copy plans -----------------------------------------------------
    def _make_plan(self, direction: Direction, n: int, rows: int, prec: np.dtype) -> RealPlan:
        key = ("plan", direction, n, rows, prec.char)
        with self._lock:
            plan = self._kernels.get(key)
            if plan is not None:
                self._kernels.move_to_end(key)
                return plan
            plan = _FftwRealPlan(self, direction, n, rows, prec)
            self._kernels[key] = plan
            self._cache_bytes += plan.nbytes
            self._trim_cache()  # may drop this very plan if it alone exceeds the bound: still usable
            return plan

    def _bind_plan(
        self, direction: Direction, n: int, rows: int, prec: np.dtype, inbuf: np.ndarray, outbuf: np.ndarray
    ) -> RealPlan:
        with self._lock:
            return _FftwBoundPlan(self, direction, n, rows, prec, inbuf, outbuf)

    # -- transforms ----------------------------------------------------------
    def _run(self, kind: str, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        _, _, cout, scaled = _KINDS[kind]
        n_in, n_out = _row_lengths(kind, n)
        out_dtype = complex_of(prec) if cout else prec
        lead = a.shape[:-1]
        m = a.shape[-1]
        rows = a.reshape(-1, m)
        n_rows = rows.shape[0]
        out = np.empty((n_rows, n_out), dtype=out_dtype)
        if n_rows == 0:
            return out.reshape(lead + (n_out,))
        k = min(m, n_in)  # input columns used; the rest of a row is zero padding
        # c2r reads only the real part of the DC and (even n) Nyquist bins;
        # zeroing their imaginary parts makes that explicit for every algorithm.
        hermitian_edges = (0, n_in - 1) if (kind == "irfft" and n % 2 == 0) else (0,)
        scale = 1.0 / n
        with self._lock:
            kernel = self._kernel(kind, n, prec)
            try:
                block = kernel.rows_max
                i = 0
                while i < n_rows:
                    left = n_rows - i
                    if left >= block:
                        r = block
                    elif n_rows > block:
                        r, i = block, n_rows - block  # overlap: reuse the big plan
                    else:
                        r = 1 << (left.bit_length() - 1)
                    execute = kernel.execute_for(r)
                    ib = kernel.inbuf[:r]
                    if k == n_in:
                        np.copyto(ib, rows[i : i + r, :k] if m != k else rows[i : i + r])
                    else:
                        np.copyto(ib[:, :k], rows[i : i + r, :k])
                        ib[:, k:] = 0
                    if kind == "irfft":
                        for col in hermitian_edges:
                            if col < k:
                                ib[:, col].imag = 0
                    execute()
                    if scaled:
                        np.multiply(kernel.outbuf[:r], scale, out=out[i : i + r])
                    else:
                        np.copyto(out[i : i + r], kernel.outbuf[:r])
                    i += r
            finally:
                self._trim_cache()
        return out.reshape(lead + (n_out,))

    def _rfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        return self._run("rfft", a, n, prec)

    def _irfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        return self._run("irfft", a, n, prec)

    def _c2c(self, a: np.ndarray, n: int, prec: np.dtype, *, inverse: bool) -> np.ndarray:
        return self._run("ifft" if inverse else "fft", a, n, prec)

    def __repr__(self) -> str:
        return f"FftwBackend(threads={self.threads}, block_bytes={self.block_bytes})"

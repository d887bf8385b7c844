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
  (``FFTW_MEASURE`` by default) and reused.  Planning only ever touches the
  scratch buffers, never caller data.

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
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from audiokit.engine import wisdom as _wisdom
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

__all__ = ["PLANNER_EFFORTS", "FftwBackend"]

PLANNER_EFFORTS = ("FFTW_ESTIMATE", "FFTW_MEASURE", "FFTW_PATIENT", "FFTW_EXHAUSTIVE")

#: (FFTW direction, input is complex, output is complex, scale output by 1/n)
_KINDS = {
    "rfft": ("FFTW_FORWARD", False, True, False),
    "irfft": ("FFTW_BACKWARD", True, False, True),
    "fft": ("FFTW_FORWARD", True, True, False),
    "ifft": ("FFTW_BACKWARD", True, True, True),
}


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
        "_flags",
        "_pyfftw",
        "_threads",
        "_timelimit",
        "inbuf",
        "kind",
        "n",
        "nbytes",
        "outbuf",
        "plans",
        "rows_max",
    )

    def __init__(
        self, pyfftw, kind: str, n: int, prec: np.dtype, *, block_bytes: int, effort: str, threads: int, timelimit: float | None
    ):
        direction, cin, cout, _ = _KINDS[kind]
        n_in, n_out = _row_lengths(kind, n)
        in_dtype = complex_of(prec) if cin else prec
        out_dtype = complex_of(prec) if cout else prec
        fit = max(1, block_bytes // (n_in * in_dtype.itemsize))
        self.rows_max = 1 << (fit.bit_length() - 1)
        self.kind, self.n = kind, n
        # zero-filled: FFTW_MEASURE runs transforms on these while planning.  Single
        # precision rows are padded to 32 bytes (unaligned rows keep FFTW off its SIMD
        # codelets: 512-point f32 rfft 1.52-1.55x -> 1.59-1.61x scipy); double precision
        # measured slower padded (2.04x -> 1.74x), so it keeps packed rows.
        pad = prec == np.float32
        self.inbuf = _row_aligned_zeros(pyfftw, self.rows_max, n_in, in_dtype, pad)
        self.outbuf = _row_aligned_zeros(pyfftw, self.rows_max, n_out, out_dtype, pad)
        self.nbytes = _allocated_bytes(self.inbuf) + _allocated_bytes(self.outbuf)
        self.plans: dict[int, Any] = {}  # rows -> bound execute of a pyfftw.FFTW
        self._pyfftw = pyfftw
        self._direction = direction
        flags = [effort]
        if kind == "irfft":
            flags.append("FFTW_DESTROY_INPUT")  # FFTW's c2r default; input is scratch
        self._flags = tuple(flags)
        self._threads = threads
        self._timelimit = timelimit

    def execute_for(self, rows: int):
        """Bound ``execute`` of the plan over the first ``rows`` rows, and whether it is new."""
        plan = self.plans.get(rows)
        if plan is not None:
            return plan, False
        fftw = self._pyfftw.FFTW(
            self.inbuf[:rows],
            self.outbuf[:rows],
            axes=(-1,),
            direction=self._direction,
            flags=self._flags,
            threads=self._threads,
            planning_timelimit=self._timelimit,
        )
        plan = fftw.execute
        self.plans[rows] = plan
        return plan, True


def _allocated_bytes(a: np.ndarray) -> int:
    """Bytes of the buffer behind the view ``a`` (padding included)."""
    return a.nbytes if a.base is None else a.base.nbytes


def _row_aligned_zeros(pyfftw, rows: int, width: int, dtype: np.dtype, pad: bool = True) -> np.ndarray:
    """Zeroed ``(rows, width)`` view of an aligned buffer; with ``pad`` its rows start on 32-byte boundaries."""
    padded = aligned_length(width, np.dtype(dtype).itemsize, SIMD_ROW_ALIGNMENT) if pad else width
    return pyfftw.zeros_aligned((rows, padded), dtype=dtype, n=ALIGNMENT)[:, :width]


class _FftwRealPlan(RealPlan):
    """FFTW :class:`RealPlan`: ``pyfftw.FFTW`` objects bound to the plan's own aligned buffers.

    The plan for all ``rows`` is made on the buffers themselves when the plan
    is created (planning overwrites them; they are zeroed afterwards).
    ``execute(k)`` for ``k < rows`` runs a plan over the first ``p`` rows,
    ``p`` the smallest power of two ``>= k`` (at most twice the work asked
    for; at most ``log2(rows) + 1`` plans).  Those are made on first use on
    temporary arrays, then bound to the buffers with ``update_arrays``, so
    planning never touches data the caller has written.
    """

    __slots__ = ("_backend", "_edges", "_fftw_dir", "_flags", "_full", "_padded_out", "_runners", "nbytes", "plans")

    def __init__(self, backend: FftwBackend, direction: Direction, n: int, rows: int, prec: np.dtype, effort: str):
        pyfftw = backend._pyfftw
        (ishape, idt), (oshape, odt) = self.buffer_shapes(direction, n, rows, prec)
        self._padded_out = direction == "forward"
        super().__init__(n, rows, prec, direction, pyfftw.zeros_aligned(ishape, dtype=idt), self._out_buffer(pyfftw, oshape, odt))
        self.nbytes = self.input.nbytes + self.output.shape[0] * self.output.strides[0]  # padded rows
        self._backend = backend
        self._fftw_dir = "FFTW_FORWARD" if direction == "forward" else "FFTW_BACKWARD"
        # c2r destroys its input anyway (FFTW's default); r2c preserves it
        self._flags = (effort,) if direction == "forward" else (effort, "FFTW_DESTROY_INPUT")
        self.plans: dict[int, Any] = {}  # rows -> pyfftw.FFTW
        self._runners: dict[int, Callable[[], Any]] = {}  # k rows -> execute of the plan covering them
        fftw = self._new_fftw(self.input, self.output)
        self.input.fill(0)  # FFTW_MEASURE ran transforms on them
        self.output.fill(0)
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

    def _new_fftw(self, inbuf: np.ndarray, outbuf: np.ndarray):
        b = self._backend
        return b._pyfftw.FFTW(
            inbuf,
            outbuf,
            axes=(-1,),
            direction=self._fftw_dir,
            flags=self._flags,
            threads=b.threads,
            planning_timelimit=b.planning_timelimit,
        )

    def _runner(self, k: int):
        p = 1 << (k - 1).bit_length()
        if p >= self.rows:
            run = self._full
        else:
            fftw = self.plans.get(p)
            if fftw is None:
                b = self._backend
                with b._lock:  # one planner at a time; wisdom bookkeeping
                    if b._use_wisdom():
                        _wisdom.load_wisdom(b._pyfftw)
                    pyfftw = b._pyfftw
                    fftw = self._new_fftw(
                        pyfftw.zeros_aligned((p,) + self.input.shape[1:], self.input.dtype),
                        self._out_buffer(pyfftw, (p,) + self.output.shape[1:], self.output.dtype),
                    )
                    fftw.update_arrays(self.input[:p], self.output[:p])
                    self.plans[p] = fftw
                    if b._use_wisdom():
                        _wisdom.note_new_plans(pyfftw)
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
        effort: str,
    ):
        super().__init__(n, rows, prec, direction, inbuf, outbuf)
        flags = (effort,) if direction == "forward" else (effort, "FFTW_DESTROY_INPUT")
        fftw = backend._pyfftw.FFTW(
            inbuf,
            outbuf,
            axes=(-1,),
            direction="FFTW_FORWARD" if direction == "forward" else "FFTW_BACKWARD",
            flags=flags,
            threads=backend.threads,
            planning_timelimit=backend.planning_timelimit,
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
    """FFTW through pyFFTW, with a plan cache and an optional wisdom file.

    Parameters
    ----------
    threads : int >= 1, default 1
        FFTW threads per plan.  One thread is the default: on the shared
        2-core machine of the benchmarks, 2 threads ran at 1.2-1.5x the speed
        of 1 thread for 400/512-point frames when the machine was nearly
        idle, but at 0.3-0.6x for 2048 points and down to 0.02x when other
        processes kept the cores busy (every block is an OpenMP fork/join).
    planner_effort : {"FFTW_MEASURE", "FFTW_ESTIMATE", "FFTW_PATIENT", "FFTW_EXHAUSTIVE"}
        FFTW planner rigour for lengths ``n <= measure_max_n``.
    measure_max_n : int, default 16384
        Longer transforms (whole-signal DFTs, rarely repeated) are planned
        with ``FFTW_ESTIMATE``: measuring a 2**20-point plan takes seconds.
        FFTW still uses wisdom for them if the file has some.
    planning_timelimit : float or None, default 2.0
        Seconds FFTW may spend on one plan before settling for the best so far.
    block_bytes : int, default 262144
        Target size of one block of input rows (see module docstring).
    max_kernels : int, default 32
        Cached (kind, n, precision) kernels, least recently used evicted first.
    max_cache_bytes : int, default 64 MiB
        Bound on the scratch memory of cached kernels; a kernel bigger than
        this (a huge ``n``) is dropped right after its call.
    wisdom : bool or None, default None
        Load the wisdom file before the first plan and save it at exit after
        new plans (:mod:`audiokit.engine.wisdom`).  None and True use it
        unless ``AUDIOKIT_FFTW_WISDOM=0`` disables it; False never does.

    Raises
    ------
    ParameterError
        Bad ``threads`` or ``planner_effort``.
    ImportError
        pyfftw cannot be imported.
    """

    name = "fftw"

    def __init__(
        self,
        threads: int = 1,
        *,
        planner_effort: str = "FFTW_MEASURE",
        measure_max_n: int = 16384,
        planning_timelimit: float | None = 2.0,
        block_bytes: int = 256 * 1024,
        max_kernels: int = 32,
        max_cache_bytes: int = 64 * 1024 * 1024,
        wisdom: bool | None = None,
    ):
        from audiokit.engine import pyfftw_core

        pyfftw = pyfftw_core.load()  # not ``import pyfftw``: that imports pyfftw.interfaces (scipy.fft, dask)

        if planner_effort not in PLANNER_EFFORTS:
            raise ParameterError(f"unknown FFTW planner effort {planner_effort!r}; allowed: {', '.join(PLANNER_EFFORTS)}")
        if not is_int(threads) or threads < 1:
            raise ParameterError(f"FFT threads must be an integer >= 1, got {threads!r}")
        self._pyfftw = pyfftw
        self.threads = int(threads)
        self.planner_effort = planner_effort
        self.measure_max_n = int(measure_max_n)
        self.planning_timelimit = planning_timelimit
        self.block_bytes = int(block_bytes)
        self.max_kernels = int(max_kernels)
        self.max_cache_bytes = int(max_cache_bytes)
        self.wisdom = wisdom
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
        """Drop every cached plan and scratch buffer (FFTW wisdom is kept)."""
        with self._lock:
            self._kernels.clear()
            self._cache_bytes = 0

    def _use_wisdom(self) -> bool:
        return _wisdom.wisdom_enabled() if self.wisdom is None else bool(self.wisdom)

    def _kernel(self, kind: str, n: int, prec: np.dtype) -> _Kernel:
        key = (kind, n, prec.char)
        kernel = self._kernels.get(key)
        if kernel is not None:
            self._kernels.move_to_end(key)
            return kernel
        if self._use_wisdom():
            _wisdom.load_wisdom(self._pyfftw)
        effort = self.planner_effort if n <= self.measure_max_n else "FFTW_ESTIMATE"
        kernel = _Kernel(
            self._pyfftw,
            kind,
            n,
            prec,
            block_bytes=self.block_bytes,
            effort=effort,
            threads=self.threads,
            timelimit=self.planning_timelimit,
        )
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
            if self._use_wisdom():
                _wisdom.load_wisdom(self._pyfftw)
            effort = self.planner_effort if n <= self.measure_max_n else "FFTW_ESTIMATE"
            plan = _FftwRealPlan(self, direction, n, rows, prec, effort)
            self._kernels[key] = plan
            self._cache_bytes += plan.nbytes
            self._trim_cache()  # may drop this very plan if it alone exceeds the bound: still usable
            if self._use_wisdom():
                _wisdom.note_new_plans(self._pyfftw)
            return plan

    def _bind_plan(
        self, direction: Direction, n: int, rows: int, prec: np.dtype, inbuf: np.ndarray, outbuf: np.ndarray
    ) -> RealPlan:
        with self._lock:
            if self._use_wisdom():
                _wisdom.load_wisdom(self._pyfftw)
            effort = self.planner_effort if n <= self.measure_max_n else "FFTW_ESTIMATE"
            plan = _FftwBoundPlan(self, direction, n, rows, prec, inbuf, outbuf, effort)
            if self._use_wisdom():
                _wisdom.note_new_plans(self._pyfftw)
        return plan

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
        planned = False
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
                    execute, new = kernel.execute_for(r)
                    planned |= new
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
                if planned and self._use_wisdom():
                    _wisdom.note_new_plans(self._pyfftw)  # saved at interpreter exit
        return out.reshape(lead + (n_out,))

    def _rfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        return self._run("rfft", a, n, prec)

    def _irfft(self, a: np.ndarray, n: int, prec: np.dtype) -> np.ndarray:
        return self._run("irfft", a, n, prec)

    def _c2c(self, a: np.ndarray, n: int, prec: np.dtype, *, inverse: bool) -> np.ndarray:
        return self._run("ifft" if inverse else "fft", a, n, prec)

    def __repr__(self) -> str:
        return f"FftwBackend(threads={self.threads}, planner_effort={self.planner_effort!r}, block_bytes={self.block_bytes})"

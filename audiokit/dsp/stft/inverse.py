"""Inverse STFT: weighted overlap-add, one-shot (:func:`istft`) and block-wise (:class:`IstftStream`).

The formula and its conditioning are in :mod:`audiokit.dsp.stft`.  Frames go
through the backend's unnormalised inverse plans (their ``1/n_fft`` is folded
into the synthesis window), whole batches through the polyphase layout of
:mod:`audiokit.dsp.stft.polyphase`, and every block of ``H`` output samples is
divided by the window sum-square as soon as its last frame is in.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...engine import FftBackend, get_backend
from ...errors import InputError, ParameterError
from ...validate import check_int
from . import polyphase
from .plan import DEFAULT_CHUNK_FRAMES, StftPlan, wss_blocks

__all__ = ["IstftStream", "istft"]

_LENGTH_MESSAGE = "length must be an integer >= 0 (samples), got {value!r}"


def _as_spectra(plan: StftPlan, X: np.ndarray) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim < 2 or X.shape[-2] != plan.n_freqs:
        raise ParameterError(f"STFT must be shaped (..., n_freqs={plan.n_freqs}, n_frames) for n_fft={plan.n_fft}, got {X.shape}")
    if X.dtype not in (np.complex64, np.complex128):
        X = X.astype(np.complex128)
    if plan.dtype is not None:
        X = X.astype(np.result_type(np.dtype(plan.dtype), np.complex64), copy=False)
    return X


def _real_dtype(X: np.ndarray) -> np.dtype:
    """float32 for complex64 spectra, else float64."""
    return np.dtype(np.float32) if X.dtype == np.complex64 else np.dtype(np.float64)


class _Ola:
    """Shared overlap-add machinery: windowed inverse frames added block-wise (blocks of H samples).

    Frames are inverse-transformed ``chunk`` at a time in the backend's
    inverse :class:`~audiokit.engine.base.RealPlan` (spectra copied into its
    input, output read in place), multiplied by the synthesis window (with the
    plan's ``1/n_fft`` folded in) and added into the accumulator; the blocks a
    chunk completes are normalised right away, while they are in cache.
    """

    #: Rows grouped into one long row for the elementwise products (fewer, longer inner loops).
    GROUP = 16

    def __init__(self, plan: StftPlan, rdt: np.dtype, backend: FftBackend | None, chunk: int):
        self.plan = plan
        self.rdt = rdt
        self.backend = get_backend() if backend is None else backend
        self.chunk = chunk
        self.tables = plan.wss_tables()
        self.r = self.tables.r
        self.vwin = plan.padded_window.astype(rdt)
        # below this the sum is numerically zero (e.g. blackman's w[0] ~ 1e-17):
        # dividing would turn rounding noise into output, so such samples give 0
        self.floor = max(float(np.finfo(rdt).tiny), float(np.finfo(rdt).eps) * float(self.tables.prefix[-1].max()))
        # interior blocks (all r frames present) share one row of the window
        # sum-square: multiply by its reciprocal (0 where it is numerically 0)
        row = self.tables.prefix[self.r - 1]
        self._interior_nz = row > self.floor
        self._interior_all = bool(self._interior_nz.all())
        recip = np.where(self._interior_nz, 1.0 / np.where(self._interior_nz, row, 1.0), 0.0)
        self._recip = recip.astype(rdt)
        self._recip_tile = np.tile(self._recip, self.GROUP)
        self._iplan: Any = None  # the backend's inverse RealPlan (chunk rows), at the first frame
        # inverse plans are unnormalised (RealPlan.scale = 1/n_fft): the 1/n_fft
        # goes into the synthesis window instead of costing a pass
        self._swin = (plan.padded_window * (1.0 / plan.n_fft)).astype(rdt)
        self._swin_tile = np.tile(self._swin, self.GROUP)
        self._poly: Any = None  # PolyInverse, or False when the layout does not pay (at the first frame)

    def _poly_for(self, count: int) -> polyphase.PolyInverse | None:
        """The polyphase batcher if ``count`` frames fill at least one of its batches, else None."""
        poly = self._poly
        if poly is None:
            poly = polyphase.inverse_batcher(
                self.backend, self.plan.n_fft, self.plan.hop_length, self._swin, self.rdt, self.chunk
            )
            self._poly = poly = False if poly is None else poly
        if poly is False or count < poly.K:
            return None
        return poly

    def add(self, X: np.ndarray, acc: np.ndarray, m0: int, m_total: int | None) -> None:
        """Add frames ``X (C, n_freqs, k)`` into ``acc (C, nb, H)`` and normalise ``acc[:, :k]``.

        Frame ``j`` of ``X`` starts at block ``j`` of ``acc``; block ``i`` of
        ``acc`` is block ``m0 + i`` of the whole output, and every frame before
        ``X`` has already been added into ``acc``, so once frames ``<= i`` are
        in, block ``i`` is final and is divided by the window sum-square
        (``m_total`` as in :meth:`normalise`).  Blocks ``k ..`` stay partial sums.
        """
        r, hop, n_fft = self.r, self.plan.hop_length, self.plan.n_fft
        c, _, k = X.shape
        if k == 0:
            return
        # whole polyphase batches first, the rest frame by frame
        poly = self._poly_for(k) if acc.flags.c_contiguous else None
        k_end = 0
        if poly is not None:
            K = poly.K
            k_end = k - k % K
            with poly.lock:  # shared (cached) buffers
                for ch in range(c):
                    spectra, dst = X[ch], acc[ch]
                    flat = dst.reshape(-1)  # a view: acc is C-contiguous
                    for a in range(0, k_end, K):
                        poly.batch(spectra, a, flat, hop)
                        self._normalise_rows(dst[a : a + K], m0 + a, m_total)
        if k_end == k:
            return
        ip = self._iplan
        if ip is None:
            ip = self._iplan = self.backend.inverse_plan(n_fft, self.chunk, self.rdt)
        swin, tile, g = self._swin, self._swin_tile, self.GROUP
        rows, inp, execute = ip.rows, ip.input, ip.execute
        # hop-sized pieces of a frame: piece j (width w_j) adds into block m + j
        pieces = [(j, j * hop, min(hop, n_fft - j * hop)) for j in range(r)]
        with ip:  # shared scratch: hold it from filling to the overlap-add
            for ch in range(c):
                spectra, dst = X[ch], acc[ch]
                for a in range(k_end, k, rows):
                    b = min(k, a + rows)
                    kk = b - a
                    np.copyto(inp[:kk], spectra[:, a:b].T, casting="same_kind")
                    fr = execute(kk)  # (kk, n_fft), C-contiguous, ours to overwrite
                    k1 = kk - kk % g
                    if k1:
                        v = fr[:k1].reshape(-1, g * n_fft)
                        np.multiply(v, tile, out=v)
                    if k1 < kk:
                        np.multiply(fr[k1:], swin, out=fr[k1:])
                    for j, s0, w in pieces:
                        dst[a + j : b + j, :w] += fr[:, s0 : s0 + w]
                    self._normalise_rows(dst[a:b], m0 + a, m_total)

    def normalise(self, acc: np.ndarray, b0: int, m_total: int | None) -> None:
        """Divide blocks ``b0 ..`` of ``acc (C, nb, H)`` (already final) by the window sum-square.

        ``m_total`` is the total number of frames, or None if more frames follow
        (blocks then count as having all their frames to the right).
        """
        for ch in range(acc.shape[0]):
            self._normalise_rows(acc[ch], b0, m_total)

    def _normalise_rows(self, a: np.ndarray, b0: int, m_total: int | None) -> None:
        """:meth:`normalise` for one channel, ``a (nb, H)``.

        Interior blocks (all ``r`` overlapping frames present) share one row of
        the sum; only the first ``r - 1`` and the last ``r - 1`` blocks differ.
        """
        nb = a.shape[0]
        t = self.tables
        i0 = min(nb, max(0, t.r - 1 - b0))  # blocks before: fewer frames to their left
        i1 = nb if m_total is None else max(i0, min(nb, m_total - b0))  # from here: fewer to the right
        if i1 > i0:
            self._scale_interior(a[i0:i1])
        for lo, hi in ((0, i0), (i1, nb)):
            if hi > lo:
                self._divide(a[lo:hi], wss_blocks(t, b0 + lo, b0 + hi, m_total))

    def _scale_interior(self, a: np.ndarray) -> None:
        k = a.shape[0]
        g = self.GROUP
        k1 = k - k % g if a.flags.c_contiguous else 0
        if k1:
            v = a[:k1].reshape(-1, g * a.shape[1])
            np.multiply(v, self._recip_tile, out=v)
        if k1 < k:
            np.multiply(a[k1:], self._recip, out=a[k1:])
        if not self._interior_all:
            a[:, ~self._interior_nz] = 0

    def _divide(self, a: np.ndarray, wss: np.ndarray) -> None:
        nz = wss > self.floor
        np.divide(a, np.where(nz, wss, 1.0).astype(self.rdt), out=a)
        if not np.all(nz):
            a[..., ~nz] = 0


def istft(X: np.ndarray, plan: StftPlan, *, length: int | None = None, backend: FftBackend | None = None) -> np.ndarray:
    """Inverse STFT of ``X`` under ``plan`` by weighted overlap-add; same as :meth:`StftPlan.istft`.

    Parameters
    ----------
    X : np.ndarray, shape (..., n_freqs, n_frames), complex
    plan : StftPlan
        Must satisfy NOLA.
    length : int >= 0, optional
        Output length in samples (trim or zero-pad at the end).  Default
        ``plan.n_samples(n_frames)``.
    backend : FFT backend, optional

    Returns
    -------
    y : np.ndarray, shape (..., length), float32 (complex64 input) or float64
    """
    plan.require_invertible()
    X = _as_spectra(plan, X)
    lead = X.shape[:-2]
    m = X.shape[-1]
    if length is not None:
        length = check_int(length, "length", minimum=0, message=_LENGTH_MESSAGE)
    rdt = _real_dtype(X)
    if m == 0:
        return np.zeros(lead + (0 if length is None else length,), rdt)
    hop, pad = plan.hop_length, plan.pad
    if length is None:
        length = plan.n_samples(m)
        m_use = m
    else:
        # frames starting at or after pad + length cannot touch the output
        m_use = max(1, min(m, -(-(pad + length) // hop)))
    X2 = X.reshape((-1,) + X.shape[-2:])[:, :, :m_use]
    ola = _Ola(plan, rdt, backend, DEFAULT_CHUNK_FRAMES)
    nb = m_use - 1 + ola.r
    acc = np.zeros((X2.shape[0], nb, hop), rdt)
    m_total = m_use if m_use == m else None
    ola.add(X2, acc, 0, m_total)  # normalises blocks 0 .. m_use-1 on the way
    ola.normalise(acc[:, m_use:], m_use, m_total)
    # (frames >= m_use were skipped: they start at or after the output's end, and
    # the blocks before it are normalised as interior blocks, m_total=None)
    y = acc.reshape(X2.shape[0], nb * hop)
    y = y[:, pad : pad + length]
    if y.shape[1] < length:
        y = np.concatenate([y, np.zeros((y.shape[0], length - y.shape[1]), rdt)], axis=1)
    return y.reshape(lead + (length,))


class IstftStream:
    """Block-wise inverse STFT (weighted overlap-add).

    Parameters
    ----------
    plan : StftPlan
        Must satisfy NOLA.
    length : int >= 0, optional
        Total output length in samples (trim or zero-pad at the end).  Default
        ``plan.n_samples(total frames)``, as :meth:`StftPlan.istft`.
    backend : FFT backend, optional
    chunk_frames : int > 0
        Frames per inverse FFT batch.

    Notes
    -----
    ``push(X)`` takes spectra ``(..., n_freqs, k)`` and returns the output
    samples that no later frame can change, ``(..., n_samples)``; ``finish()``
    returns the rest.  The concatenation equals :meth:`StftPlan.istft` of all
    frames (to rounding).  State between calls: ``ceil(n_fft / H) - 1`` blocks
    of ``H`` samples per channel.
    """

    def __init__(
        self,
        plan: StftPlan,
        *,
        length: int | None = None,
        backend: FftBackend | None = None,
        chunk_frames: int = DEFAULT_CHUNK_FRAMES,
    ):
        plan.require_invertible()
        self.plan = plan
        self._length = None if length is None else check_int(length, "length", minimum=0, message=_LENGTH_MESSAGE)
        self._backend = backend
        self._chunk = chunk_frames
        self._lead: tuple[int, ...] = ()  # leading shape of the spectra, set by the first push
        self._rdt = np.dtype(np.float64)  # working dtype, set by the first push
        self._ola: _Ola | None = None
        self._pending = np.zeros((0, 0, 0))  # (C, r-1, H): blocks m .. m+r-2, partial sums
        self._m = 0  # frames added
        self._ready = np.zeros((0, 0))  # final, normalised, not yet emitted (C, L) from padded index _ready_start
        self._ready_start = 0
        self._emitted = 0  # output samples emitted
        self._finished = False

    def _setup(self, X: np.ndarray) -> tuple[np.ndarray, _Ola]:
        X = _as_spectra(self.plan, X)
        if self._ola is None:
            self._lead = X.shape[:-2]
            self._rdt = _real_dtype(X)
            self._ola = _Ola(self.plan, self._rdt, self._backend, self._chunk)
            c = math.prod(self._lead)
            self._pending = np.zeros((c, self._ola.r - 1, self.plan.hop_length), self._rdt)
            self._ready = np.zeros((c, 0), self._rdt)
        elif X.shape[:-2] != self._lead:
            raise ParameterError(f"spectra leading shape {X.shape[:-2]} differs from the first block's {self._lead}")
        return X.reshape((math.prod(self._lead),) + X.shape[-2:]), self._ola

    def push(self, X: np.ndarray) -> np.ndarray:
        """Add frames ``X`` shaped ``(..., n_freqs, k)``; return the finished samples ``(..., n_samples)``."""
        if self._finished:
            raise ParameterError("push() after finish()")
        X2, ola = self._setup(X)
        k = X2.shape[-1]
        hop = self.plan.hop_length
        if k == 0:
            return self._emit(self._ready[:, :0])
        pending = self._pending
        acc = np.zeros((X2.shape[0], pending.shape[1] + k, hop), self._rdt)
        acc[:, : pending.shape[1]] = pending
        ola.add(X2, acc, self._m, None)
        final = acc[:, :k]  # normalised by add()
        self._pending = acc[:, k:].copy()
        self._m += k
        # with the default length the last pad samples are dropped; hold back
        # anything that might fall there if this were the last frame
        return self._emit(final.reshape(final.shape[0], -1))

    def finish(self) -> np.ndarray:
        """No more frames: return the remaining samples ``(..., n_samples)``."""
        if self._finished:
            raise ParameterError("finish() was already called on this stream")
        if self._ola is None:
            raise InputError("no STFT frames were given")
        self._finished = True
        if self._m == 0:
            return np.zeros(self._lead + (self._length or 0,), self._rdt)
        tail = self._pending
        self._ola.normalise(tail, self._m, self._m)
        out = self._emit(tail.reshape(tail.shape[0], -1), final=True)
        return out

    def _emit(self, new: np.ndarray, *, final: bool = False) -> np.ndarray:
        """Emit the finished samples that fall inside the output (padded index ``pad .. limit``)."""
        plan = self.plan
        if not self._ready.shape[1]:
            ready = new  # nothing held back: no copy
        elif new.shape[1]:
            ready = np.concatenate([self._ready, new], axis=1)
        else:
            ready = self._ready
        start = self._ready_start  # padded index of ready[:, 0]
        stop = start + ready.shape[1]
        if self._length is not None:
            limit = plan.pad + self._length
        elif self._m > 0:
            # the end if the last frame added were the last one; it only grows
            limit = plan.hop_length * (self._m - 1) + plan.n_fft - plan.pad
        else:
            limit = plan.pad
        lo = max(start, plan.pad)
        hi = max(lo, min(stop, limit))
        piece = ready[:, min(lo, stop) - start : min(hi, stop) - start]
        if self._length is not None:
            keep_from = stop  # nothing past the requested length is ever emitted
        else:
            keep_from = min(hi, stop)
        self._ready = ready[:, keep_from - start :].copy()
        self._ready_start = keep_from
        if final:
            total = limit - plan.pad
            missing = total - (self._emitted + piece.shape[1])
            if missing > 0:
                piece = np.concatenate([piece, np.zeros((piece.shape[0], missing), self._rdt)], axis=1)
        self._emitted += piece.shape[1]
        return piece.reshape(self._lead + (piece.shape[1],))

"""Polyphase batches: window many STFT frames with one long product, and overlap-add them the same way.

Windowing frame by frame (one numpy call per frame row) costs more than the
arithmetic: ~90-140 ns per 400-sample frame, against ~300 ns for the FFT.
Frames ``m, m+P, m+2P, ...`` of one *phase* do not overlap once ``P*H`` is at
least the frame's extent, so each phase can be windowed as one long 1-D
product of the signal with a periodic pattern (the window every ``P*H``
samples), and FFTW reads the frames straight out of that buffer (rows ``P*H``
apart) and writes the spectra in frame order.  The inverse does the same
backwards: FFTW writes the frames of a phase side by side (``P*H`` apart, zero
gaps), one 1-D product applies the synthesis window to all of them and one
1-D add overlap-adds them.

Measured at 16 kHz, win 400 / hop 160 / n_fft 512 (P = 3 forward, 4
inverse), 10 min of audio: windowing 137 -> 67 ns per frame (spectrogram
582 -> 536 ns per frame), istft 611 -> 585 ns per frame.  The forward batch's
spectra rows are padded to :data:`~audiokit.engine.base.SIMD_ROW_ALIGNMENT`
bytes (FFTW's SIMD codelets need every row aligned): FFT 327 -> 250 ns per
frame, spectrogram 536 -> ~495.

Used for whole batches of ``K = P * (chunk // P)`` frames; the rest of a call
(and ``chunk_frames < MIN_PER_PHASE * P``) takes the row-by-row path.  The
batch buffers and their FFTW plans are cached (LRU, bounded in count and
bytes: :data:`CACHE_SIZE`, :data:`CACHE_BYTES`) and shared by streams of the
same geometry, one at a time (hold the batcher's ``lock``).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...engine import FftBackend
from ...engine.base import SIMD_ROW_ALIGNMENT, aligned_length, aligned_zeros

__all__ = [
    "CACHE_BYTES",
    "CACHE_SIZE",
    "MIN_PER_PHASE",
    "PolyForward",
    "PolyInverse",
    "cache_info",
    "forward_batcher",
    "forward_phases",
    "inverse_batcher",
]

#: Most batchers kept in the cache (entries).
CACHE_SIZE = 8
#: Most bytes of batch buffers kept in the cache (64 MiB).
CACHE_BYTES = 64 * 1024 * 1024
#: Use the polyphase layout only if a batch holds at least this many frames per phase.
MIN_PER_PHASE = 2

_CACHE: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_LOCK = threading.Lock()


def cache_info() -> tuple[int, int]:
    """``(entries, bytes)`` of the shared batcher cache."""
    with _LOCK:
        return len(_CACHE), sum(o.nbytes for o in _CACHE.values())


def _cached(key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """The cached batcher for ``key`` (an LRU shared by streams: use its ``lock``)."""
    with _LOCK:
        obj = _CACHE.get(key)
        if obj is not None:
            _CACHE.move_to_end(key)
            return obj
    obj = make()
    with _LOCK:
        obj = _CACHE.setdefault(key, obj)
        _CACHE.move_to_end(key)
        total = sum(o.nbytes for o in _CACHE.values())
        while _CACHE and (len(_CACHE) > CACHE_SIZE or total > CACHE_BYTES):
            total -= _CACHE.popitem(last=False)[1].nbytes  # may be obj itself: still usable
    return obj


def forward_phases(n_fft: int, hop: int, lo: int, win_length: int) -> int:
    """Phases ``P`` of the forward layout: ``ceil(max(lo + W, n_fft - lo) / H)``.

    The smallest ``P`` for which frames ``P*H`` samples apart never overlap
    within the window (``lo`` = the window's offset inside the frame).
    """
    return -(-max(lo + win_length, n_fft - lo) // hop)


def forward_batcher(
    backend: FftBackend, n_fft: int, hop: int, lo: int, win: np.ndarray, rdt: np.dtype, chunk: int
) -> PolyForward | None:
    """The shared :class:`PolyForward` for this geometry, or None if a batch would hold < :data:`MIN_PER_PHASE` frames per phase.

    ``win`` is the window (``win_length`` samples, in ``rdt``), ``lo`` its offset in the frame.
    """
    if chunk // forward_phases(n_fft, hop, lo, win.shape[0]) < MIN_PER_PHASE:
        return None
    key = ("forward", backend, rdt.char, n_fft, hop, lo, chunk, win.tobytes())
    return _cached(key, lambda: PolyForward(backend, n_fft, hop, lo, win, rdt, chunk))


def inverse_batcher(backend: FftBackend, n_fft: int, hop: int, swin: np.ndarray, rdt: np.dtype, chunk: int) -> PolyInverse | None:
    """The shared :class:`PolyInverse` for this geometry, or None if a batch would hold < :data:`MIN_PER_PHASE` frames per phase.

    ``swin`` is the synthesis window (``n_fft`` samples, in ``rdt``, the plan's ``1/n_fft`` folded in).
    """
    if chunk // -(-n_fft // hop) < MIN_PER_PHASE:
        return None
    key = ("inverse", backend, rdt.char, n_fft, hop, chunk, swin.tobytes())
    return _cached(key, lambda: PolyInverse(backend, n_fft, hop, swin, rdt, chunk))


class PolyForward:
    """Forward polyphase batch of ``K = P * Kc`` frames (see the module docstring).

    Phase ``c`` of a batch starting at frame ``a`` holds frames ``a + c + i*P``
    (``i < Kc``): ``flat[c, :L] = x[(a+c)*H : (a+c)*H + L] * pattern`` with
    ``pattern[i*D + lo + t] = w[t]`` (``D = P*H``) and zeros elsewhere, so
    ``flat[c, i*D : i*D + n_fft]`` is the windowed frame, zero padding
    included, provided ``D >= max(lo + W, n_fft - lo)`` (the next frame of
    the phase starts after this frame's window ends, and its window starts
    after this frame ends).

    Parameters
    ----------
    backend : FftBackend
    n : int
        FFT size ``n_fft`` in samples.
    hop : int
        Hop ``H`` in samples.
    lo : int
        Offset of the window inside the frame, in samples.
    win : np.ndarray, shape (W,)
        The analysis window in the working dtype.
    rdt : np.dtype
        Working dtype, float32 or float64.
    chunk : int
        Frames per batch before rounding down to a multiple of ``P``.
    """

    def __init__(self, backend: FftBackend, n: int, hop: int, lo: int, win: np.ndarray, rdt: np.dtype, chunk: int):
        w_len = win.shape[0]
        self.P = P = forward_phases(n, hop, lo, w_len)
        self.D = D = P * hop
        self.Kc = Kc = chunk // P
        self.K = P * Kc
        self.L = L = (Kc - 1) * D + n
        isz = rdt.itemsize
        lp = aligned_length(L, isz)
        nf = n // 2 + 1
        cdt = np.result_type(rdt, np.complex64)
        csz = cdt.itemsize
        # Output rows padded to a multiple of 32 bytes (257 -> 260 complex64):
        # with 2056-byte rows every other spectrum is misaligned and FFTW plans
        # without its SIMD codelets for the batch (342 -> 272 ns per frame).
        nfp = aligned_length(nf, csz, SIMD_ROW_ALIGNMENT)
        self.flat = aligned_zeros((P, lp), rdt)
        self._spec = aligned_zeros((self.K, nfp), cdt)
        frames = as_strided(self.flat, shape=(P, Kc, n), strides=(lp * isz, D * isz, isz))
        out = as_strided(self._spec, shape=(P, Kc, nf), strides=(nfp * csz, P * nfp * csz, csz))
        self.fft = backend.plan_on(frames, out)
        self.flat.fill(0)  # planning wrote into both
        self._spec.fill(0)
        self.spec = self._spec[:, :nf]  # the spectra (rows nfp apart)
        pattern = np.zeros(max(L, Kc * D), rdt)
        pattern[: Kc * D].reshape(Kc, D)[:, lo : lo + w_len] = win
        self.pattern = pattern[:L]
        self.phases = [self.flat[c, :L] for c in range(P)]
        # DC bins (real part) of the batch: the sum of each windowed frame, padding included
        self.dc = self._spec.view(rdt)[:, 0]
        self.nbytes = self.flat.nbytes + self._spec.nbytes + self.pattern.nbytes
        self.lock = threading.Lock()

    def batch(self, x: np.ndarray, a: int, hop: int) -> np.ndarray | None:
        """Spectra ``(K, n_freqs)`` of frames ``a .. a+K-1`` of the 1-D ``x``; None if a frame is not finite.

        The row-by-row path never multiplies the zero padding of a frame; here
        the padding is ``x * 0``, which is NaN where ``x`` is inf or NaN.  A
        non-finite sample anywhere in a frame makes its DC bin non-finite, so
        such batches are detected (a huge finite batch whose DC overflows is
        too, harmlessly) and left to the row-by-row path.
        """
        L, pattern = self.L, self.pattern
        with np.errstate(invalid="ignore", over="ignore"):
            for c, dst in enumerate(self.phases):
                s = (a + c) * hop
                np.multiply(x[s : s + L], pattern, out=dst, casting="same_kind")
            self.fft.execute()
            finite = math.isfinite(np.add.reduce(self.dc))  # NaN/inf in any DC bin propagate into the sum
        return self.spec if finite else None


class PolyInverse:
    """Inverse polyphase batch of ``K = P * Kc`` frames, ``P = ceil(n_fft / H) = r``.

    FFTW writes frame ``a + c + i*P`` of the batch to ``flat[c, i*D : i*D + n_fft]``
    (``D = P*H >= n_fft``: frames of a phase never overlap; the gaps stay 0).
    ``flat[c] * pattern`` (the synthesis window every ``D`` samples) is then
    added to the output at sample ``(a + c) * H`` in one call.

    Parameters
    ----------
    backend : FftBackend
    n : int
        FFT size ``n_fft`` in samples.
    hop : int
        Hop ``H`` in samples.
    swin : np.ndarray, shape (n,)
        Synthesis window in the working dtype, the inverse plan's ``1/n`` folded in.
    rdt : np.dtype
        Working dtype, float32 or float64.
    chunk : int
        Frames per batch before rounding down to a multiple of ``P``.
    """

    def __init__(self, backend: FftBackend, n: int, hop: int, swin: np.ndarray, rdt: np.dtype, chunk: int):
        self.P = P = -(-n // hop)
        self.D = D = P * hop
        self.Kc = Kc = chunk // P
        self.K = P * Kc
        self.L = L = Kc * D
        isz = rdt.itemsize
        lp = aligned_length(L, isz)
        nf = n // 2 + 1
        cdt = np.result_type(rdt, np.complex64)
        csz = cdt.itemsize
        self.spec = aligned_zeros((self.K, nf), cdt)
        self.flat = aligned_zeros((P, lp), rdt)
        spectra = as_strided(self.spec, shape=(P, Kc, nf), strides=(nf * csz, P * nf * csz, csz))
        frames = as_strided(self.flat, shape=(P, Kc, n), strides=(lp * isz, D * isz, isz))
        self.fft = backend.plan_on(spectra, frames, inverse=True)
        self.flat.fill(0)  # FFTW never writes the gaps between frames: they stay 0
        pattern = np.zeros((Kc, D), rdt)
        pattern[:, :n] = swin
        self.pattern = pattern.reshape(-1)
        self.phases = [self.flat[c, :L] for c in range(P)]
        self.nbytes = self.flat.nbytes + self.spec.nbytes + self.pattern.nbytes
        self.lock = threading.Lock()

    def batch(self, spectra: np.ndarray, a: int, acc: np.ndarray, hop: int) -> None:
        """Overlap-add frames ``a .. a+K-1`` of ``spectra (n_freqs, k)`` into the 1-D ``acc`` (frame j at sample j*H)."""
        np.copyto(self.spec, spectra[:, a : a + self.K].T, casting="same_kind")
        self.fft.execute()
        L, pattern = self.L, self.pattern
        for c, z in enumerate(self.phases):
            np.multiply(z, pattern, out=z)
            s = (a + c) * hop
            acc[s : s + L] += z

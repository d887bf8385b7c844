r"""True peak (dBTP): the largest magnitude of the signal oversampled by a polyphase FIR interpolator.

The interpolator is the one libebur128 uses (``interp_create(49, L)``): a 49-tap windowed sinc,
``h[j] = sinc((j - 24)/L) * 0.5 (1 - cos(2 pi j / 48))``, ``j = 0..48``, applied to the zero-stuffed signal, i.e.
in polyphase form ``y_p[n] = sum_t h[p + L t] x[n - t]`` for the phases ``p = 0..L-1`` (output ``n L + p``).  The
factor ``L`` is 4 below 96 kHz, 2 below 192 kHz and 1 (the sample peak) from 192 kHz on, as in libebur128; EBU
Tech 3341 asks for at least 4x at 48 kHz.  The sinc vanishes at the multiples of ``L`` other than the centre, so
phase 0 is the input delayed by ``24/L`` samples and the true peak is never below the sample peak.  The
interpolator is causal with zeros before the first sample, and no output is formed past the last input sample
(libebur128's convention too).

Computation: the outputs are computed in chunks of 16 input samples (32 at 2x), and only where they can matter.
``|y_p[n]| <= S_p * max|x[n - t]|`` with ``S_p = sum_t |h[p + L t]|`` (at most 1.86 at 4x), so a chunk whose input
maximum times ``max_p S_p`` does not exceed the peak found so far cannot raise it and is skipped; the others are
float32 matrix products with the banded interpolation matrix, in pieces of :data:`ROWS` chunks (small enough
that OpenBLAS runs each on one thread: its threads cost more CPU time than they save on products this thin).  The result is the same as evaluating every
output (to float32 rounding of the sums, ~1e-7 relative): skipping is exact, not an approximation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ROWS", "TAPS", "TruePeakMeter", "interpolation_filter", "oversampling_factor"]

#: Taps of the windowed-sinc interpolation filter.
TAPS = 49
#: Chunks per matrix product (128 x 29 x 48 multiply-adds at 4x: below OpenBLAS's threading threshold).
ROWS = 128
#: Chunks evaluated first in each block (the largest inputs), to raise the running peak before the skip test.
_FIRST = 4


def oversampling_factor(sr: float) -> int:
    """Oversampling of the true-peak meter at sample rate ``sr`` (Hz): 4 below 96 kHz, 2 below 192 kHz, else 1."""
    return 4 if sr < 96000 else 2 if sr < 192000 else 1


def interpolation_filter(factor: int) -> np.ndarray:
    """The ``TAPS``-tap Hann-windowed sinc for interpolation by ``factor`` (float64, shape ``(TAPS,)``).

    ``h[j] = sinc((j - (TAPS-1)/2) / factor) * 0.5 * (1 - cos(2 pi j / (TAPS-1)))``; its phases ``h[p::factor]`` each
    sum to ~1 (unit gain at DC).
    """
    j = np.arange(TAPS, dtype=np.float64)
    return np.sinc((j - (TAPS - 1) / 2) / factor) * 0.5 * (1.0 - np.cos(2.0 * np.pi * j / (TAPS - 1)))


class TruePeakMeter:
    """Streaming true peak per channel.

    Parameters
    ----------
    sr : float
        Sample rate in Hz (chooses :func:`oversampling_factor`).
    n_channels : int >= 1
    factor : int, optional
        The oversampling factor instead of the rate's (1: the sample peak alone).

    Attributes
    ----------
    factor : int
        The oversampling factor ``L``.
    peak : np.ndarray, shape (n_channels,)
        Largest ``|y|`` so far, linear (full scale 1.0); ``20 log10(peak)`` is dBTP.
    sample_peak : np.ndarray, shape (n_channels,)
        Largest ``|x|`` so far (the sample peak, linear).
    peak_position, sample_peak_position : np.ndarray, shape (n_channels,)
        Where they are, in samples from the first one pushed (float: an interpolated peak lies between samples;
        the interpolator's delay of ``(TAPS - 1) / (2 L)`` samples taken off).  The first, if several are equal.
    """

    def __init__(self, sr: float, n_channels: int, *, factor: int | None = None):
        self.factor = oversampling_factor(sr) if factor is None else int(factor)
        self.peak = np.zeros(n_channels, dtype=np.float64)
        self.sample_peak = np.zeros(n_channels, dtype=np.float64)
        self.peak_position = np.zeros(n_channels, dtype=np.float64)
        self.sample_peak_position = np.zeros(n_channels, dtype=np.int64)
        self._pushed = 0
        self._delay = (TAPS - 1) / (2 * self.factor)
        h = interpolation_filter(self.factor)
        phases = [h[p :: self.factor] for p in range(1, self.factor)]
        self._history_len = -(-TAPS // self.factor)  # taps of the longest phase
        self._chunk = 16 if self._history_len <= 16 else 32  # a chunk's inputs lie within it and the next one
        self._bound = max((float(np.abs(g).sum()) for g in phases), default=1.0)
        chunk = self._chunk
        band = np.zeros((chunk + self._history_len, max(len(phases), 1) * chunk), dtype=np.float64)
        rows = np.arange(chunk)
        for q, taps in enumerate(phases):
            for t, coeff in enumerate(taps):  # y_p[i] = sum_t g[t] * window[i + H - t]
                band[rows + self._history_len - t, q * chunk + rows] = coeff
        self._band = band.astype(np.float32)
        self._n_phases = len(phases)
        self._history = np.zeros((n_channels, self._history_len), dtype=np.float32)

    def push(self, block: np.ndarray) -> None:
        """Add samples shaped ``(n_channels, n)`` (any float dtype; the interpolation is computed in float32)."""
        n = block.shape[1]
        if n == 0:
            return
        magnitude = np.abs(block)
        where = magnitude.argmax(axis=1)
        largest = magnitude[np.arange(block.shape[0]), where]
        louder = largest > self.sample_peak
        self.sample_peak[louder] = largest[louder]
        self.sample_peak_position[louder] = self._pushed + where[louder]
        louder = self.sample_peak > self.peak  # phase 0 is the input itself
        self.peak[louder] = self.sample_peak[louder]
        self.peak_position[louder] = self.sample_peak_position[louder]
        if self.factor > 1:
            ext = np.concatenate([self._history, block.astype(np.float32, copy=False)], axis=1)
            for c in range(block.shape[0]):
                value, at = self._channel_peak(ext[c], n, float(self.peak[c]))
                if value > self.peak[c]:
                    self.peak[c] = value
                    self.peak_position[c] = self._pushed + at - self._delay
            self._history = ext[:, -self._history_len :].copy()
        self._pushed += n

    def _channel_peak(self, ext: np.ndarray, n: int, peak: float) -> tuple[float, float]:
        """The largest interpolated ``|y|`` of one channel's outputs ``0..n-1`` (``ext``: history then block) if it
        exceeds ``peak``, and where it is (in input samples from the block's start, before the delay); else
        ``(peak, 0)``."""
        chunk = self._chunk
        n_chunks = -(-n // chunk)
        padded = np.zeros((n_chunks + 1) * chunk, dtype=np.float32)
        padded[: ext.size] = ext
        chunk_max = np.abs(padded).reshape(-1, chunk).max(axis=1)
        reach = np.maximum(chunk_max[:-1], chunk_max[1:]) * self._bound  # |y| bound of each chunk's outputs
        order = np.argpartition(reach, -_FIRST)[-_FIRST:] if reach.size > _FIRST else np.arange(reach.size)
        best = max((peak, 0.0), self._evaluate(padded, order[reach[order] > peak], n))
        rest = np.flatnonzero(reach > best[0])
        return max(best, self._evaluate(padded, rest, n))

    def _evaluate(self, padded: np.ndarray, chunks: np.ndarray, n: int) -> tuple[float, float]:
        """Largest ``|y|`` over the outputs of ``chunks`` (indices) that lie before output ``n``, and its position."""
        chunk = self._chunk
        chunks = np.sort(chunks)
        if chunks.size and (int(chunks[-1]) + 1) * chunk > n:  # the block's last chunk: outputs from n on are not formed
            last = int(chunks[-1])
            valid = n - last * chunk
            window = padded[last * chunk : last * chunk + valid + self._history_len]
            band = self._band.reshape(self._band.shape[0], self._n_phases, chunk)[: valid + self._history_len, :, :valid]
            tail = np.abs(np.einsum("i,ipj->pj", window, band))
            q, j = (int(v) for v in np.unravel_index(int(tail.argmax()), tail.shape))
            found = (float(tail[q, j]), last * chunk + j + (q + 1) / self.factor)
            return max(self._evaluate(padded, chunks[:-1], n), found)
        if chunks.size == 0:
            return (0.0, 0.0)
        windows = padded[(chunks * chunk)[:, None] + np.arange(chunk + self._history_len)]
        out = np.empty((chunks.size, self._band.shape[1]), dtype=np.float32)
        for first in range(0, chunks.size, ROWS):
            np.matmul(windows[first : first + ROWS], self._band, out=out[first : first + ROWS])
        np.abs(out, out=out)
        row, column = (int(v) for v in np.unravel_index(int(out.argmax()), out.shape))
        q, j = divmod(column, chunk)
        return (float(out[row, column]), int(chunks[row]) * chunk + j + (q + 1) / self.factor)

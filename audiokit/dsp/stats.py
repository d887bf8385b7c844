"""Time-domain statistics of a signal, streamed block by block: SoX's ``stats`` fields and ffmpeg ``astats`` extras.

The definitions follow SoX 14.4.2's ``stats`` effect (``src/stats.c``) sample for sample, so every field equals
``sox FILE -n stats`` (levels to 0.01 dB, factors to 0.01, counts exactly); what ffmpeg's ``astats`` adds (zero
crossings, noise floor, dynamic range, non-finite and subnormal counts) follows ``libavfilter/af_astats.c``.
Samples are in full-scale units (1.0 = 0 dBFS; PCM code ``k`` of B bits is ``k / 2**(B-1)``).  Per channel:

* **DC offset** ``Σx / n``; **min/max level**; **peak level** ``20·log10(max(-min, max))`` dBFS; **RMS level**
  ``10·log10(Σx² / n)`` dBFS.
* **RMS peak / trough**: extremes of SoX's running mean square, the one-pole average
  ``a[i] = m·a[i-1] + (1 - m)·x[i]²`` with ``m = exp(-1 / (T·sr))`` (``T`` = ``window_s``, 50 ms), ``a[-1] = 0``,
  taken at every sample ``i >= round(5·T·sr)`` (5 time constants, so that the start-up from 0 is not a
  trough).  It is not a stepped window: the average moves on every sample.  A channel shorter than
  ``round(5·T·sr)`` samples reads its RMS level for both.
* **Crest factor** ``max(-min, max) / rms`` (1 for silence).
* **Flat factor** ``20·log10(Σ r² / c)`` over the maximal runs ``r`` of consecutive samples equal to the minimum
  or to the maximum, ``c = Σ r`` (the peak count): 0 when every extreme sample stands alone, ~``20·log10(L)`` for
  clipping in runs of L samples.
* **Peak count** ``c``: samples equal to the minimum plus samples equal to the maximum.
* **Bit depth** ``a/b``: ``b`` = 32 minus the trailing zero bits of the OR of every sample as a 32-bit code
  (``round(x·2**31)``, SoX's sample type); ``a`` = ``b`` minus the leading zero bits of
  ``code(max) | ~(code(min) << 1)``: the bits the range ``[min, max]`` needs at that precision (:func:`bit_depth`).
* **Zero crossings**: sign changes between consecutive nonzero samples (zeros are skipped), and their rate per
  sample.  ffmpeg counts one more when the first nonzero sample is positive (its sign memory starts negative).
* **Noise floor**: the smallest, over every window of ``round(T·sr)`` consecutive samples, of the window's
  ``max |x|``, with the number of windows at it; None when the signal is shorter than one window.
* **Dynamic range** ``20·log10(2·peak / min|x≠0|)`` dB (None for silence).
* **NaN, Inf, subnormal counts** (a non-finite sample then counts as 0 in every other field).

The overall column is SoX's: min/max/peak over channels, RMS over all samples, RMS peak the largest and RMS
trough the smallest channel value, DC offset the channel value largest in magnitude, peak count the mean over
channels, flat factor and bit depth of the pooled runs and codes, crest factor only for one channel (SoX prints
``-``); zero crossings summed, noise floor the largest channel value (ffmpeg's rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .levels import ScaledSums, dbfs

__all__ = ["SOX_WINDOW_S", "LevelStats", "StatsMeter", "bit_depth", "sox_codes", "window_max_floor"]

#: SoX's and ffmpeg's default averaging time (seconds) of the RMS peak/trough and the noise floor window.
SOX_WINDOW_S = 0.05
_CODE_SCALE = 2.0**31
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def sox_codes(block: np.ndarray, *, exact: bool = False) -> np.ndarray:
    """Samples as SoX's 32-bit codes: ``round(x·2**31)`` (halves away from 0), clipped to int32.

    ``exact=True`` says every ``x·2**31`` is an integer already (PCM of up to 32 bits), which skips the rounding.
    """
    if exact:
        scaled = block * _CODE_SCALE
    else:
        scaled = np.clip(block, -2.0, 2.0) * _CODE_SCALE  # beyond ±2 the code is clipped anyway (no overflow)
        scaled = np.trunc(scaled + np.copysign(0.5, scaled))
        np.clip(scaled, _INT32_MIN, _INT32_MAX, out=scaled)
    return scaled.astype(np.int32)


def bit_depth(mask: int, low: float, high: float) -> tuple[int, int]:
    """SoX's ``Bit-depth a/b`` from the OR ``mask`` of the 32-bit codes and the extremes ``low <= high``.

    ``b`` is 32 minus the trailing zero bits of ``mask`` (0 for 0).  ``a`` is ``b`` minus the leading zero bits
    of ``code(high) | ~(code(low) << 1)`` (32-bit; the second term only for ``low < 0``), the codes rounded as
    :func:`sox_codes` does: the bits that the range ``[low, high]`` needs at that precision.
    """
    mask &= 0xFFFFFFFF
    precision = 0 if mask == 0 else 32 - ((mask & -mask).bit_length() - 1)
    code_low, code_high = (int(c) for c in sox_codes(np.array([low, high])))
    span = code_high & 0xFFFFFFFF
    if low < 0:
        span |= ~(code_low << 1) & 0xFFFFFFFF
    used = precision
    while used and not span & 0x80000000:
        used -= 1
        span = (span << 1) & 0xFFFFFFFF
    return used, precision


def _sliding_max(a: np.ndarray, width: int) -> np.ndarray:
    """``max(a[j : j + width])`` for ``j = 0 … len(a) - width`` (van Herk / Gil-Werman: prefix and suffix maxima of
    chunks of ``width``, vectorised across chunks; shifted maxima for a short window; for at most ``width``
    windows, the part they share and the running maxima of the parts on either side)."""
    n = a.shape[0]
    windows = n - width + 1
    if width <= 32:
        out = a[:windows].copy()
        for shift in range(1, width):
            np.maximum(out, a[shift : shift + windows], out=out)
        return out
    if windows <= width:  # window j = a[j : m-1] + a[m-1 : width] + a[width : width + j], m = windows
        out = np.full(windows, a[windows - 1 : width].max())
        np.maximum(out[:-1], np.maximum.accumulate(a[: windows - 1][::-1])[::-1], out=out[:-1])
        np.maximum(out[1:], np.maximum.accumulate(a[width:]), out=out[1:])
        return out
    chunks = -(-n // width)
    grid = np.zeros((chunks, width), a.dtype)
    grid.ravel()[:n] = a
    prefix = np.maximum.accumulate(grid.T, axis=0).T.ravel()
    suffix = np.maximum.accumulate(grid.T[::-1], axis=0)[::-1].T.ravel()
    return np.maximum(suffix[: n - width + 1], prefix[width - 1 : n])


_CHUNK = 64  # samples per chunk of window_max_floor's bounds (a reshape-max over 64 is one fast pass)


def window_max_floor(magnitude: np.ndarray, width: int) -> tuple[float, int]:
    """The smallest ``max(magnitude[j : j + width])`` over ``j = 0 … n - width``, and how many windows reach it.

    Parameters
    ----------
    magnitude : np.ndarray, shape (n,), n >= width, values >= 0
    width : int >= 1

    Notes
    -----
    Exact, with bounds: ``C`` the maxima of chunks of 64 samples; every window starting in chunk ``k`` covers the
    whole chunks ``k+1 … k+q-1`` (``q = width // 64``) and touches no chunk outside ``k … k+u-1``, so its maximum
    lies in ``[L_k, U_k]``, sliding maxima of ``C``.  Chunks with ``L_k = U_k`` are exact as they are; chunks with
    ``L_k > min U`` cannot hold the smallest window; the few others are computed directly (:func:`_open_windows`).  A signal with many
    of those (or a window under 128 samples) takes the direct sliding maximum (van Herk / Gil-Werman) throughout.
    """
    n = magnitude.shape[0]
    windows = n - width + 1
    g = _CHUNK
    if width < 2 * g:
        return _floor_of(_sliding_max(magnitude, width))
    q = width // g
    u = (width + g - 2) // g + 1
    k = -(-windows // g)  # chunks holding a window start
    chunk_max = np.zeros(k + u, magnitude.dtype)  # chunks past the end read 0 (magnitudes are >= 0)
    whole = n // g
    chunk_max[:whole] = magnitude[: whole * g].reshape(whole, g).max(axis=1)
    if n > whole * g:
        chunk_max[whole] = magnitude[whole * g :].max()
    upper = _sliding_max(chunk_max[: k + u - 1], u)[:k]
    lower = _sliding_max(chunk_max[1 : k + q - 1], q - 1)[:k]
    bound = upper.min()
    open_ = np.flatnonzero((lower <= bound) & (lower < upper))
    if open_.size > max(8, k // 8):
        return _floor_of(_sliding_max(magnitude, width))
    starts = np.minimum(g, windows - np.arange(k) * g)  # windows starting in each chunk
    sure = (lower <= bound) & (lower == upper)
    floor, count = (float(lower[sure].min()), 0) if sure.any() else (math.inf, 0)
    exact = _open_windows(magnitude, open_, starts[open_], width)
    if exact.size:
        floor = min(floor, float(exact.min()))
    return floor, int(starts[sure & (lower == floor)].sum()) + int(np.count_nonzero(exact == floor))


def _open_windows(magnitude: np.ndarray, chunks: np.ndarray, counts: np.ndarray, width: int) -> np.ndarray:
    """The maxima of the windows starting in ``chunks`` (of :data:`_CHUNK` samples; ``counts`` windows each), all
    at once: window ``s`` of a chunk's segment ``seg = magnitude[64j : 64j + 63 + width]`` is
    ``max(seg[s : 63], seg[63 : width], seg[width : width + s])``, two running maxima and one shared part."""
    g = _CHUNK
    segments = np.take(magnitude, chunks[:, None] * g + np.arange(g - 1 + width), mode="clip")  # (c, 63 + width)
    values = np.repeat(segments[:, g - 1 : width].max(axis=1, keepdims=True), g, axis=1)
    np.maximum(values[:, : g - 1], np.maximum.accumulate(segments[:, g - 2 :: -1], axis=1)[:, ::-1], out=values[:, : g - 1])
    np.maximum(values[:, 1:], np.maximum.accumulate(segments[:, width:], axis=1), out=values[:, 1:])
    return values[np.arange(g) < counts[:, None]]  # windows past the end of the signal are not windows


def _floor_of(values: np.ndarray) -> tuple[float, int]:
    """The smallest value and how often it occurs."""
    floor = values.min()
    return float(floor), int(np.count_nonzero(values == floor))


@dataclass(frozen=True)
class LevelStats:
    """The statistics of one channel (or of all: ``LevelStats`` of the overall column); see the module docstring.

    Levels are linear full-scale values; the ``*_db`` properties convert (``-inf`` for 0).  ``crest_factor`` is
    None for the overall column of several channels, ``noise_floor`` for a signal shorter than one window,
    ``dynamic_range_db`` for silence.
    """

    dc_offset: float
    min_level: float
    max_level: float
    rms: float
    rms_peak: float
    rms_trough: float
    crest_factor: float | None
    flat_factor: float
    peak_count: float
    bit_depth: tuple[int, int]
    zero_crossings: int
    zero_crossing_rate: float
    noise_floor: float | None
    noise_floor_count: float
    dynamic_range_db: float | None
    nan_count: int
    inf_count: int
    subnormal_count: int

    @property
    def peak(self) -> float:
        """``max(-min_level, max_level)``."""
        return max(-self.min_level, self.max_level)


class _Buffers:
    """Work arrays reused from block to block (a fresh 512 KiB array per step and block costs a page fault per
    4 KiB: an hour of 16 kHz audio took 106 000 faults, 0.4 s of kernel time; 7 800 and 0.09 s with these)."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: type | np.dtype) -> np.ndarray:
        """An array of ``shape`` and ``dtype`` (its contents undefined), the same one while they stay the same."""
        held = self._arrays.get(name)
        if held is None or held.shape != shape or held.dtype != dtype:
            held = self._arrays[name] = np.empty(shape, dtype)
        return held


class _Extreme:
    """Running minimum (or maximum, ``largest=True``) of each row, with its count and the sum of squared run lengths (SoX's ``min_runs``).

    A new smaller value resets the count and runs; a run of samples equal to it may continue across blocks.
    """

    def __init__(self, rows: int, *, largest: bool = False):
        self.largest = largest
        self.value = np.full(rows, -np.inf if largest else np.inf)
        self.count = np.zeros(rows, dtype=np.int64)
        self.runs = np.zeros(rows)  # squared lengths of finished runs
        self.run = np.zeros(rows, dtype=np.int64)  # length of the run at the end of the last block

    def update(self, block: np.ndarray, extreme: np.ndarray) -> None:
        """Add a block ``(rows, n)`` whose per-row minimum (maximum) is ``extreme``."""
        n = block.shape[1]
        for row in range(block.shape[0]):
            new, old = (extreme[row], self.value[row]) if not self.largest else (-extreme[row], -self.value[row])
            if new < old:
                self.value[row], self.count[row], self.runs[row], self.run[row] = extreme[row], 0, 0.0, 0
            elif new > old:
                self.runs[row] += float(self.run[row]) ** 2
                self.run[row] = 0
                continue
            at = np.flatnonzero(block[row] == self.value[row])
            self.count[row] += at.size
            breaks = np.flatnonzero(np.diff(at) != 1)
            starts = np.concatenate(([0], breaks + 1))
            lengths = np.diff(np.concatenate((starts, [at.size]))).astype(np.float64)
            if at[0] == 0:
                lengths[0] += self.run[row]
            else:
                self.runs[row] += float(self.run[row]) ** 2
            if at[-1] == n - 1:
                self.run[row] = int(lengths[-1])
                lengths = lengths[:-1]
            else:
                self.run[row] = 0
            self.runs[row] += float(np.dot(lengths, lengths))

    def total_runs(self) -> np.ndarray:
        """``Σ r²`` including the run still open at the end."""
        return self.runs + self.run.astype(np.float64) ** 2


class _RunningMeanSquare:
    """SoX's one-pole mean square ``a[i] = m·a[i-1] + (1 - m)·x[i]²`` per row, and its extremes from sample ``skip``.

    Numpy only (importing ``scipy.signal`` for ``lfilter`` costs more than an hour of 16 kHz audio), in segments
    of ``G <= T·sr`` samples:

    * the value at each segment's end, ``P_{j+1} = m**G·P_j + Σ_i (1 - m)·m**(G-1-i)·x_i²`` (a product with a
      weight vector), chained in closed form ``P_j = m**(G·j)·(P_0 + Σ_{i<j} m**-(G·(i+1))·f_i)`` over as many segments at a
      time as keep ``m**-(G·j) <= e**256``;
    * inside segment ``j``, ``m**G·P_j <= a[t] <= m·P_j + (1 - m)·Σ x²`` (every term is positive), so only the
      segments whose bounds pass the extremes of the segment ends are evaluated sample by sample,
      ``a[t] = m**t·(m·P_j + Σ_{i<=t} (1 - m)·m**-i·x_i²)`` (all of them when more than a quarter qualify).

    No term cancels (``m**-i <= e`` within a segment), so the extremes equal the sequential loop's to ~1e-13.
    """

    def __init__(self, rows: int, mult: float, skip: int, segment: int):
        self.mult, self.skip, self.segment = mult, skip, segment
        # segments chained in closed form at once: m**-(G·group) <= e**256, far from overflow
        self.group = max(1, int(256 / (segment * -math.log(mult))))
        # the long segments of a steady level, evaluated sample by sample: a multiple of G, at most T·sr (m**-i <= e)
        self.long = segment * max(1, min(512, int(-1 / math.log(mult))) // segment)
        steps = np.arange(segment, dtype=np.float64)
        # columns: (1 - m)·m**(G-1-i), the weights of a segment's own end value, and 1 (its sum of squares)
        self.weights = np.stack([(1.0 - mult) * mult ** (segment - 1 - steps), np.ones(segment)], axis=1)
        self.state = np.zeros(rows)
        self.high = np.full(rows, -np.inf)
        self.low = np.full(rows, np.inf)
        self.seen = 0
        self._buffers = _Buffers()
        self._powers: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _chain(self, ends: np.ndarray) -> np.ndarray:
        """``P`` shaped ``(rows, k + 1)`` from the state and each segment's own end value ``f`` ``(rows, k)``."""
        rows, k = ends.shape
        g = self.segment
        chained = np.empty((rows, k + 1))
        chained[:, 0] = self.state
        for first in range(0, k, self.group):
            last = min(first + self.group, k)
            j = np.arange(1, last - first + 1, dtype=np.float64)
            sums = np.cumsum(ends[:, first:last] * self.mult ** (-g * j), axis=1)
            chained[:, first + 1 : last + 1] = self.mult ** (g * j) * (chained[:, first : first + 1] + sums)
        return chained

    def _factors(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``(1 - m)·m**-i`` and ``m**i`` for ``i < t`` (kept for the segment lengths in use)."""
        held = self._powers.get(t)
        if held is None:
            steps = np.arange(t, dtype=np.float64)
            held = self._powers[t] = ((1.0 - self.mult) * self.mult**-steps, self.mult**steps)
        return held

    def _inside(self, squares: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """``a[t]`` of segments ``(c, t)`` of squares (``t <= T·sr``), each from its start value ``starts`` ``(c,)``."""
        grow, decay = self._factors(squares.shape[1])
        values = squares * grow
        np.cumsum(values, axis=1, out=values)
        values += (self.mult * starts)[:, None]
        values *= decay
        return values

    def _every(self, row: int, squares: np.ndarray, chained: np.ndarray, first: int) -> None:
        """The extremes of ``a[t]`` over one row's samples ``first … k·G - 1`` (``k`` segments), in long segments."""
        g, long = self.segment, self.long
        k = chained.shape[0] - 1
        start = first // g  # the segment holding the first sample that counts
        skip = first - start * g
        per = long // g
        whole = (k - start) // per
        if whole:
            at = np.arange(whole) * per + start
            values = self._inside(squares[start * g : (start + whole * per) * g].reshape(whole, long), chained[at])
            self._extremes(row, values[0, skip:])
            self._extremes(row, values[1:])
            skip = 0
        done = start + whole * per
        if done < k:
            values = self._inside(squares[done * g : k * g].reshape(1, -1), chained[done : done + 1])
            self._extremes(row, values[0, skip:])

    def _extremes(self, row: int, values: np.ndarray) -> None:
        if values.size:
            self.high[row] = max(self.high[row], float(values.max()))
            self.low[row] = min(self.low[row], float(values.min()))

    def update(self, x: np.ndarray, exponent: np.ndarray | None = None) -> None:
        """Add the samples of a block ``(rows, n)``, scaled by ``2**-exponent`` per row if given (exact)."""
        rows, n = x.shape
        g = self.segment
        scaled = x if exponent is None else np.ldexp(x, -exponent[:, None])
        squares = np.multiply(scaled, scaled, out=self._buffers.get("squares", x.shape, np.float64))
        k = n // g
        segments = squares[:, : k * g].reshape(rows, k, g)
        products = segments @ self.weights  # (rows, k, 2): one matrix product for both
        chained = self._chain(products[:, :, 0])
        first = max(self.skip - self.seen, 0)  # the first sample of this block that counts
        counted = -(-first // g)  # the first segment whose samples all count
        upper = self.mult * chained[:, :k] + (1.0 - self.mult) * products[:, :, 1]
        lower = self.mult**g * chained[:, :k]
        for row in range(rows):
            ends = chained[row, counted + 1 : k + 1]
            self._extremes(row, ends)
            high, low = self.high[row], self.low[row]
            maybe = (upper[row] > high * (1 - 1e-12)) | (lower[row] < low * (1 + 1e-12))
            maybe[: max(counted - 1, 0)] = False  # no sample of these counts
            if np.count_nonzero(maybe) > k // 8 + 1:  # a steady level: every sample, in long segments
                self._every(row, squares[row], chained[row], min(first, k * g))
                continue
            if counted > 0 and counted - 1 < k:
                maybe[counted - 1] = True  # the segment holding the first sample that counts
            picked = np.flatnonzero(maybe)
            values = self._inside(segments[row, picked], chained[row, picked])
            index = picked[:, None] * g + np.arange(g)  # the samples' places in the block
            self._extremes(row, values[index >= first])
        rest = squares[:, k * g :]
        if rest.shape[1]:
            values = self._inside(rest, chained[:, k])
            for row in range(rows):
                self._extremes(row, values[row, max(first - k * g, 0) :])
            self.state = values[:, -1].copy()
        else:
            self.state = chained[:, k].copy()
        self.seen += n

    def rescale(self, shift: np.ndarray) -> None:
        """Multiply the state and extremes by ``2**shift`` per row (the caller's scale grew)."""
        self.state = np.ldexp(self.state, shift)
        self.high, self.low = np.ldexp(self.high, shift), np.ldexp(self.low, shift)


class _NoiseFloor:
    """ffmpeg's noise floor per row: the smallest window maximum of ``|x|`` over windows of ``width`` samples."""

    def __init__(self, rows: int, width: int, dtype: type):
        self.width, self.dtype = width, dtype
        self.tail: np.ndarray = np.zeros((rows, 0), dtype)
        self.floor = np.full(rows, np.inf)
        self.count = np.zeros(rows, dtype=np.int64)
        self._buffers = _Buffers()

    def update(self, x: np.ndarray) -> np.ndarray:
        """Add a block ``(rows, n)``; its ``|x|`` (in ``dtype``: a view valid until the next call)."""
        rows, n = x.shape
        held = self.tail.shape[1]
        joined = self._buffers.get("joined", (rows, held + n), self.dtype)
        joined[:, :held] = self.tail
        magnitude = joined[:, held:]
        np.abs(x, out=magnitude)
        if joined.shape[1] >= self.width:
            for row in range(rows):
                floor, count = window_max_floor(joined[row], self.width)
                if floor < self.floor[row]:
                    self.floor[row], self.count[row] = floor, count
                elif floor == self.floor[row]:
                    self.count[row] += count
        self.tail = joined[:, max(joined.shape[1] - (self.width - 1), 0) :].copy()
        return magnitude


def _pooled_rms(rms: np.ndarray) -> float:
    """The RMS of channels of equal length pooled, ``sqrt(mean(rms²))``, without overflowing for huge values."""
    top = float(rms.max())
    return top * float(np.sqrt(np.mean((rms / top) ** 2))) if top > 0 else 0.0


class StatsMeter:
    """Accumulate :class:`LevelStats` over blocks shaped ``(channels, n)`` (float64, full scale 1.0).

    Parameters
    ----------
    channels : int
        Channel count.
    sr : int
        Sample rate (Hz): sets ``m = exp(-1 / (window_s·sr))``, the 5-time-constant start ``round(5·window_s·sr)``
        and the noise floor window ``round(window_s·sr)`` samples (each at least 1).
    window_s : float
        SoX's ``-w`` (seconds), 0.05 by default.
    pcm : bool
        The samples are PCM codes (``x·2**31`` integers): their 32-bit codes need no rounding.
    exact32 : bool
        Every sample is a float32 value (PCM of up to 24 bits, FLOAT data): magnitudes (noise floor, zero
        crossings, smallest nonzero value) are then taken in float32, exactly, at half the memory traffic.
    subnormal_below : float
        Nonzero ``|x|`` below this count as subnormal: ``2**-126`` for float32 data (the default), ``2**-1022``
        for float64; 0 for PCM (nothing counts).
    """

    def __init__(
        self,
        channels: int,
        sr: int,
        *,
        window_s: float = SOX_WINDOW_S,
        pcm: bool = False,
        exact32: bool = False,
        subnormal_below: float = 2.0**-126,
    ):
        self.channels, self.sr, self.window_s, self.pcm, self.exact32 = channels, sr, window_s, pcm, exact32
        self.subnormal_below = subnormal_below
        self.count = 0
        tc = window_s * sr
        self.settle = int(5 * tc + 0.5)
        self._sums = ScaledSums(channels)
        self._low, self._high = _Extreme(channels), _Extreme(channels, largest=True)
        segment = 1 << (min(16, max(1, int(tc))).bit_length() - 1)  # a power of two <= T·sr, at most 16
        self._ms = _RunningMeanSquare(channels, math.exp(-1 / window_s / sr), self.settle, segment)
        self._ms_exponent = np.zeros(channels, dtype=np.int64)
        self._floor = _NoiseFloor(channels, max(int(tc + 0.5), 1), np.float32 if exact32 else np.float64)
        self._buffers = _Buffers()
        self.mask = np.zeros(channels, dtype=np.int64)
        self.crossings = np.zeros(channels, dtype=np.int64)
        self._last_sign = np.zeros(channels, dtype=bool)  # sign bit of the last nonzero sample
        self._any_nonzero = np.zeros(channels, dtype=bool)
        self.min_nonzero = np.full(channels, np.inf)
        self.nan = np.zeros(channels, dtype=np.int64)
        self.inf = np.zeros(channels, dtype=np.int64)
        self.subnormal = np.zeros(channels, dtype=np.int64)

    def update(self, block: np.ndarray) -> None:
        """Add a block ``(channels, n)`` (any float dtype; non-finite samples are counted and then read as 0)."""
        if block.shape[1] == 0:
            return
        x = np.asarray(block, dtype=np.float64)
        if not self.pcm:
            finite = np.isfinite(x)
            if not finite.all():
                self.nan += np.count_nonzero(np.isnan(x), axis=1)
                self.inf += np.count_nonzero(np.isinf(x), axis=1)
                x = np.where(finite, x, 0.0)
        lowest, highest = x.min(axis=1), x.max(axis=1)
        peak = np.maximum(-lowest, highest)
        self._sums.add(x, peak)
        self._low.update(x, lowest)
        self._high.update(x, highest)
        self._mean_square(x, peak)
        magnitude = self._floor.update(x)
        if self.pcm:  # x·2**31 are integers: the codes without rounding, in reused arrays
            scaled = np.multiply(x, _CODE_SCALE, out=self._buffers.get("scaled", x.shape, np.float64))
            codes = self._buffers.get("codes", x.shape, np.int32)
            np.copyto(codes, scaled, casting="unsafe")
        else:
            codes = sox_codes(x)
        self.mask |= np.bitwise_or.reduce(codes, axis=1).astype(np.int64) & 0xFFFFFFFF
        for row in range(self.channels):
            self._row_signs(x[row], magnitude[row], row)
        self.count += x.shape[1]

    def _mean_square(self, x: np.ndarray, peak: np.ndarray) -> None:
        """Feed ``x²`` to the running mean square, scaled by ``4**-e`` per row where ``peak > 2**400`` (exact)."""
        exponent = np.maximum(self._ms_exponent, np.where(peak > 2.0**400, np.frexp(peak)[1], 0))
        if (exponent != self._ms_exponent).any():
            self._ms.rescale(2 * (self._ms_exponent - exponent))
            self._ms_exponent = exponent
        self._ms.update(x, exponent if exponent.any() else None)

    def _row_signs(self, row: np.ndarray, magnitude: np.ndarray, index: int) -> None:
        """Zero crossings, the smallest nonzero ``|x|`` and subnormals of one row of a block."""
        negative = np.signbit(row)
        smallest = float(magnitude.min())
        if smallest > 0:  # no zero sample: the signs of the row itself
            first, last = bool(negative[0]), bool(negative[-1])
            crossings = np.count_nonzero(negative[1:] != negative[:-1])
        else:
            present = magnitude > 0
            where = np.flatnonzero(present[1:] != present[:-1]) + 1  # where runs of zeros start and end
            if not present[0]:
                where = np.concatenate(([0], where))
            if not present[-1]:
                where = np.concatenate((where, [row.size]))
            if where.size == 2 and where[0] == 0 and where[1] == row.size:
                return  # all zero
            # adjacent nonzero samples of different signs, then each run of zeros between two nonzero samples
            changed = negative[1:] != negative[:-1]
            changed &= present[1:]
            changed &= present[:-1]
            crossings = np.count_nonzero(changed)
            starts, ends = where[0::2], where[1::2]  # zero runs [start, end)
            inner = (starts > 0) & (ends < row.size)
            crossings += np.count_nonzero(negative[starts[inner] - 1] != negative[ends[inner]])
            first_at = 0 if present[0] else int(ends[0])
            last_at = row.size - 1 if present[-1] else int(starts[-1]) - 1
            first, last = bool(negative[first_at]), bool(negative[last_at])
            smallest = float(magnitude[present].min())
        self.crossings[index] += crossings
        if self._any_nonzero[index] and first != self._last_sign[index]:
            self.crossings[index] += 1
        self._last_sign[index], self._any_nonzero[index] = last, True
        self.min_nonzero[index] = min(self.min_nonzero[index], smallest)
        if smallest < self.subnormal_below:
            self.subnormal[index] += np.count_nonzero((magnitude > 0) & (magnitude < self.subnormal_below))

    def _mean_squares(self) -> tuple[np.ndarray, np.ndarray]:
        """RMS peak and trough per channel (linear); a channel no longer than the start-up reads its RMS (SoX's rule
        for a shorter one; at exactly ``settle`` samples SoX prints its initial values, ``-inf`` and +3.01 dB)."""
        if self.count <= self.settle:
            rms = self._sums.rms(self.count)
            return rms, rms
        scale = np.ldexp(1.0, self._ms_exponent)
        return np.sqrt(self._ms.high) * scale, np.sqrt(self._ms.low) * scale

    def channel(self, c: int) -> LevelStats:
        """The statistics of channel ``c``."""
        return self._stats([c], overall=False)

    def overall(self) -> LevelStats:
        """SoX's overall column (the channel itself for one channel)."""
        return self._stats(list(range(self.channels)), overall=True)

    def _stats(self, rows: list[int], *, overall: bool) -> LevelStats:
        n = max(self.count, 1)
        lows, highs = self._low.value[rows], self._high.value[rows]
        low = float(lows.min()) if self.count else 0.0
        high = float(highs.max()) if self.count else 0.0
        peak = max(-low, high)
        means = self._sums.mean(self.count)[rows]
        rms = _pooled_rms(self._sums.rms(self.count)[rows])
        rms_peak, rms_trough = self._mean_squares()
        counts = self._low.count[rows] + self._high.count[rows]
        runs = self._low.total_runs()[rows] + self._high.total_runs()[rows]
        mask = int(np.bitwise_or.reduce(self.mask[rows]))
        crossings = int(self.crossings[rows].sum())
        floors = self._floor.floor[rows].astype(np.float64)
        nonzero = float(self.min_nonzero[rows].min())
        several = overall and len(rows) > 1
        return LevelStats(
            dc_offset=float(means[int(np.argmax(np.abs(means)))]),
            min_level=low,
            max_level=high,
            rms=rms,
            rms_peak=float(rms_peak[rows].max()),
            rms_trough=float(rms_trough[rows].min()),
            crest_factor=None if several else (peak / rms if rms > 0 else 1.0),
            flat_factor=20.0 * math.log10(float(runs.sum()) / int(counts.sum())) if counts.sum() else 0.0,
            peak_count=float(counts.sum()) / len(rows),
            bit_depth=bit_depth(mask, low, high),
            zero_crossings=crossings,
            zero_crossing_rate=crossings / (n * len(rows)),
            noise_floor=float(floors.max()) if np.isfinite(floors).all() else None,
            noise_floor_count=float(self._floor.count[rows].sum()) / len(rows),
            dynamic_range_db=dbfs(2 * peak / nonzero) if math.isfinite(nonzero) and peak > 0 else None,
            nan_count=int(self.nan[rows].sum()),
            inf_count=int(self.inf[rows].sum()),
            subnormal_count=int(self.subnormal[rows].sum()),
        )

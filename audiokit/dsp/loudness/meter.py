r"""The streaming EBU R128 / ITU-R BS.1770-4 meter: push blocks, read integrated, momentary, short-term, LRA, peaks.

Model
-----
Each channel is K-weighted (:func:`~audiokit.dsp.loudness.kweighting.k_weighting_sos`, the filter state carried
from block to block by :func:`~audiokit.dsp.loudness.biquads.sos_filter`), squared and summed over **100 ms
sub-blocks**: sub-block ``k`` holds samples ``[b(k), b(k+1))`` with ``b(k) = floor(k sr / 10 + 1/2)`` (exactly
100 ms on average at any rate).  From them:

* **momentary** loudness: 400 ms windows (4 sub-blocks) every 100 ms, the first ending at 0.4 s;
* **short-term** loudness: 3 s windows (30 sub-blocks) every 100 ms, the first ending at 3 s;
* their **maxima** over windows every 10 ms (ticks ``floor(k sr / 100 + 1/2)``; ten ticks make a sub-block), so
  that a short burst is caught wherever it starts;
* **integrated** loudness: the momentary windows (BS.1770's 400 ms blocks with 75 % overlap) gated at -70 LUFS and
  -10 LU (:func:`~audiokit.dsp.loudness.gating.gated_integral`);
* **loudness range**: the short-term windows by EBU Tech 3342 (:func:`~audiokit.dsp.loudness.gating.loudness_range`);
* **sample peak** and **true peak** per channel (:class:`~audiokit.dsp.loudness.truepeak.TruePeakMeter`).

A window's energy is ``z = sum_i G_i * S_i / N`` (``S_i`` the sum of ``y_i^2`` over its ``N`` samples, ``G_i`` the
channel weights) and its loudness ``-0.691 + 10 log10(z)`` LUFS.  Only whole windows count: a trailing partial
window is not measured (BS.1770), a signal shorter than 400 ms has no momentary value and no integrated loudness,
one shorter than 3 s no short-term value and no LRA.

Memory: the filter state, the open sub-block and one energy per channel and sub-block (8 bytes x channels x 10
per second: 2.3 MB for 4 h of stereo) -- never the samples.

Undefined results are not NaN: integrated loudness and the maxima are ``-inf`` (no block, or every block at or
below the absolute gate), the loudness range ``None``; :attr:`LoudnessResult.integrated_reason` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .biquads import sos_filter
from .channels import channel_weights
from .gating import energy_to_lufs, gated_integral, loudness_range
from .kweighting import k_weighting_sos
from .truepeak import TruePeakMeter

__all__ = ["MOMENTARY_SUBBLOCKS", "SHORT_TERM_SUBBLOCKS", "STEP_S", "LoudnessMeter", "LoudnessResult"]

#: Seconds between consecutive momentary/short-term values (one sub-block).
STEP_S = 0.1
#: Sub-blocks in a momentary (400 ms) and a short-term (3 s) window.
MOMENTARY_SUBBLOCKS, SHORT_TERM_SUBBLOCKS = 4, 30


@dataclass(frozen=True)
class LoudnessResult:
    """What :meth:`LoudnessMeter.result` measured.

    Attributes
    ----------
    sr : int
        Sample rate (Hz).
    n_samples : int
        Samples per channel pushed.
    weights : np.ndarray, shape (n_channels,)
        The channel weights used.
    integrated : float
        Integrated loudness (LUFS); -inf when undefined (see ``integrated_reason``).
    integrated_reason : str or None
        Why ``integrated`` is undefined: ``"shorter than one 400 ms block"`` or ``"every block at or below the
        -70 LUFS absolute gate"``; None when it is defined.
    relative_gate : float
        The relative gate of the integrated loudness (LUFS), -inf when undefined.
    momentary, short_term : np.ndarray, shape (n_m,), (n_s,)
        Loudness of each window (LUFS, -inf for digital silence); value ``k`` ends at ``(k + 4) * 0.1`` s
        (momentary) or ``(k + 30) * 0.1`` s (short-term) -- exactly at sample ``b(k + 4)`` or ``b(k + 30)``.
    momentary_max, short_term_max : float
        Largest loudness of a 400 ms / 3 s window at **10 ms** steps (LUFS; -inf without a whole window or for
        silence): a burst is caught whatever its alignment to the 100 ms grid (EBU Tech 3341 cases 10 and 13),
        so these can exceed the maxima of the 100 ms series.
    lra : float or None
        Loudness range (LU, Tech 3342); None when no short-term window passes its gates.
    lra_low, lra_high : float or None
        Its 10th and 95th percentiles (LUFS).
    sample_peak : np.ndarray, shape (n_channels,)
        Largest ``|x|`` per channel (linear).
    sample_peak_position : np.ndarray of int64, shape (n_channels,)
        The sample where it is (the first, if several).
    true_peak : np.ndarray or None, shape (n_channels,)
        Largest ``|x|`` of the oversampled signal per channel (linear); None when not measured.
    true_peak_position : np.ndarray or None, shape (n_channels,)
        Where it is, in samples (fractional: between samples; see :class:`TruePeakMeter`).
    oversampling : int
        The true-peak oversampling factor (1 when true peak was not measured).
    """

    sr: int
    n_samples: int
    weights: np.ndarray
    integrated: float
    integrated_reason: str | None
    relative_gate: float
    momentary: np.ndarray
    short_term: np.ndarray
    momentary_max: float
    short_term_max: float
    lra: float | None
    lra_low: float | None
    lra_high: float | None
    sample_peak: np.ndarray
    sample_peak_position: np.ndarray
    true_peak: np.ndarray | None
    true_peak_position: np.ndarray | None
    oversampling: int

    @property
    def momentary_times(self) -> np.ndarray:
        """End of each momentary window (s): ``(k + 4) * 0.1``."""
        return (np.arange(self.momentary.size) + MOMENTARY_SUBBLOCKS) * STEP_S

    @property
    def short_term_times(self) -> np.ndarray:
        """End of each short-term window (s): ``(k + 30) * 0.1``."""
        return (np.arange(self.short_term.size) + SHORT_TERM_SUBBLOCKS) * STEP_S


class _Growing:
    """A float64 array of rows ``(n_channels,)`` appended in batches, its capacity doubled as needed."""

    def __init__(self, width: int):
        self._data = np.zeros((1024, width))
        self.size = 0

    def extend(self, rows: np.ndarray) -> None:
        need = self.size + rows.shape[0]
        if need > self._data.shape[0]:
            grown = np.zeros((max(need, 2 * self._data.shape[0]), self._data.shape[1]))
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = rows
        self.size = need

    @property
    def values(self) -> np.ndarray:
        return self._data[: self.size]


class LoudnessMeter:
    """Streaming loudness meter (model: the module docstring).

    Parameters
    ----------
    sr : int
        Sample rate in Hz; the K-weighting is designed for it.
    n_channels : int >= 1
    weights : array_like, shape (n_channels,), optional
        Channel weights ``G_i`` (default :func:`~audiokit.dsp.loudness.channels.channel_weights` of ``n_channels``).
    true_peak : bool
        Also measure the true peak (costs more than the rest when the signal stays near its peak).

    Examples
    --------
    >>> meter = LoudnessMeter(48000, 2)
    >>> for block in blocks:          # each (2, n) float
    ...     meter.push(block)
    >>> meter.result().integrated     # LUFS
    """

    def __init__(self, sr: int, n_channels: int, *, weights: np.ndarray | None = None, true_peak: bool = True):
        if n_channels < 1:
            raise ValueError(f"n_channels ({n_channels}) must be >= 1")
        self.sr = int(sr)
        self.n_channels = int(n_channels)
        self.weights = channel_weights(n_channels) if weights is None else np.asarray(weights, dtype=np.float64)
        if self.weights.shape != (n_channels,):
            raise ValueError(f"weights must have shape ({n_channels},), not {self.weights.shape}")
        self._sos = k_weighting_sos(self.sr)
        self._zi = np.zeros((n_channels, self._sos.shape[0], 2))
        self._n_samples = 0
        self._tick = 0  # index of the open 10 ms tick
        self._open = np.zeros(n_channels)  # its sum of squares so far, per channel
        self._tail: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))  # last 299 closed ticks: weighted sums, lengths
        self._pending = np.zeros((n_channels, 0))  # closed ticks of the open sub-block
        self._sums = _Growing(n_channels)  # closed sub-blocks: sums of squares per channel
        self._momentary_max = 0.0  # largest energy of a 400 ms / 3 s window at 10 ms steps
        self._short_term_max = 0.0
        self._peaks = TruePeakMeter(self.sr, n_channels, factor=None if true_peak else 1)
        self._with_true_peak = true_peak

    def _tick_bounds(self, first: int, last: int) -> np.ndarray:
        """First samples of ticks ``first..last`` (10 ms: ``floor(k sr / 100 + 1/2)``; tick ``10 k`` starts sub-block ``k``)."""
        return (np.arange(first, last + 1, dtype=np.int64) * self.sr + 50) // 100

    def push(self, block: np.ndarray) -> None:
        """Add the next samples, shaped ``(n_channels, n)`` (float, full scale 1.0)."""
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[0] != self.n_channels:
            raise ValueError(f"block must have shape ({self.n_channels}, n), not {block.shape}")
        n = block.shape[1]
        if n == 0:
            return
        self._peaks.push(block)
        y = sos_filter(self._sos, block, self._zi)
        np.square(y, out=y)
        start, end = self._n_samples, self._n_samples + n
        bounds = self._tick_bounds(self._tick + 1, (end * 100) // self.sr + 1)
        cuts = bounds[bounds <= end] - start  # block-relative ends of the ticks that close inside this block
        segments = np.concatenate([[0], cuts[cuts < n]]).astype(np.intp)
        sums = np.add.reduceat(y, segments, axis=1)
        sums[:, 0] += self._open
        if cuts.size:
            self._close_ticks(sums[:, : cuts.size])
            self._open = sums[:, cuts.size] if segments.size > cuts.size else np.zeros(self.n_channels)
        else:
            self._open = sums[:, 0]
        self._n_samples = end

    def _close_ticks(self, ticks: np.ndarray) -> None:
        """Take the sums of squares of closed ticks (``(n_channels, m)``): the running maxima of the 400 ms and 3 s
        windows at 10 ms steps, and the 100 ms sub-blocks (ten ticks each)."""
        first = self._tick  # index of the first of these ticks
        m = ticks.shape[1]
        bounds = self._tick_bounds(first, first + m).astype(np.float64)
        weighted = np.concatenate([self._tail[0], self.weights @ ticks])
        lengths = np.concatenate([self._tail[1], np.diff(bounds)])
        csum = np.concatenate([[0.0], np.cumsum(weighted)])
        clen = np.concatenate([[0.0], np.cumsum(lengths)])
        held = self._tail[0].size
        for width, attr in ((MOMENTARY_SUBBLOCKS * 10, "_momentary_max"), (SHORT_TERM_SUBBLOCKS * 10, "_short_term_max")):
            ends = np.arange(max(width, held + 1), weighted.size + 1)  # whole windows that end at a new tick
            if ends.size:
                z = np.maximum(csum[ends] - csum[ends - width], 0.0) / (clen[ends] - clen[ends - width])
                setattr(self, attr, max(getattr(self, attr), float(z.max())))
        keep = SHORT_TERM_SUBBLOCKS * 10 - 1
        self._tail = (weighted[-keep:], lengths[-keep:])
        pending = np.concatenate([self._pending, ticks], axis=1)
        whole = pending.shape[1] // 10
        if whole:
            self._sums.extend(pending[:, : whole * 10].reshape(self.n_channels, whole, 10).sum(axis=2).T)
        self._pending = pending[:, whole * 10 :]
        self._tick += m

    def _window_energies(self, width: int) -> np.ndarray:
        """Energy ``z`` of every window of ``width`` whole sub-blocks, one per step (see the module docstring)."""
        sums = self._sums.values
        if sums.shape[0] < width:
            return np.zeros(0)
        weighted = np.concatenate([[0.0], np.cumsum(sums @ self.weights)])
        bounds = ((np.arange(sums.shape[0] + 1, dtype=np.int64) * self.sr + 5) // 10).astype(np.float64)
        total = weighted[width:] - weighted[:-width]
        samples = bounds[width:] - bounds[:-width]
        return np.maximum(total, 0.0) / samples

    def result(self) -> LoudnessResult:
        """Everything measured from the samples pushed so far (the meter can go on after)."""
        blocks = self._window_energies(MOMENTARY_SUBBLOCKS)
        short = self._window_energies(SHORT_TERM_SUBBLOCKS)
        integrated, gate = gated_integral(blocks)
        reason = None
        if blocks.size == 0:
            reason = "shorter than one 400 ms block"
        elif not math.isfinite(integrated):
            reason = "every block at or below the -70 LUFS absolute gate"
        lra = loudness_range(short)
        tp = self._peaks
        return LoudnessResult(
            sr=self.sr,
            n_samples=self._n_samples,
            weights=self.weights.copy(),
            integrated=integrated,
            integrated_reason=reason,
            relative_gate=gate,
            momentary=energy_to_lufs(blocks),
            short_term=energy_to_lufs(short),
            momentary_max=float(energy_to_lufs(np.array(self._momentary_max))),
            short_term_max=float(energy_to_lufs(np.array(self._short_term_max))),
            lra=None if lra is None else lra[0],
            lra_low=None if lra is None else lra[1],
            lra_high=None if lra is None else lra[2],
            sample_peak=tp.sample_peak.copy(),
            sample_peak_position=tp.sample_peak_position.copy(),
            true_peak=tp.peak.copy() if self._with_true_peak else None,
            true_peak_position=tp.peak_position.copy() if self._with_true_peak else None,
            oversampling=tp.factor if self._with_true_peak else 1,
        )

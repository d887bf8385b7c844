"""Exact Viterbi decoding of pYIN's HMM in ``O(states x band)`` per frame, whole or online, in bounded memory.

librosa 0.11 (``sequence._viterbi``) computes, for every frame ``t`` and state ``j`` of ``2n``,
``ptr[t, j] = argmax_i (V[t-1, i] + A[i, j])`` (first maximum) and ``V[t, j] = log_prob[t, j] + V[t-1, ptr] + A[ptr,
j]`` over all ``2n`` sources, with ``A = log(T + tiny)`` (a dense ``2n x 2n`` sum per frame); the path ends at
``argmax_j V[T-1, j]`` and is traced back through ``ptr``.  Here the same maximum is found with the same floats
and the same ties from far fewer sums:

* **band** -- sources with ``|i mod n - j mod n| <= h`` carry the band's log-probabilities
  (:class:`~.transitions.TransitionBand`): ``2 (2h + 1)`` sums per target, ordered by source index, so the first
  ``argmax`` over them is librosa's first ``argmax`` among them;
* **outside the band** -- every other source scores ``V[i] + LOG_TINY``; their maximum is ``Z = max_i (V[i] +
  LOG_TINY)`` unless one of the sources reaching ``Z`` lies inside ``j``'s band (that source then scores more inside
  the band, its band entry exceeding ``LOG_TINY`` by hundreds).  So for each ``j`` with none of them in its band,
  the far candidate is ``Z`` at the first source reaching it, taken when it beats the band's best or ties it with a
  smaller index (librosa's first ``argmax``).

(Bounding the far part of the band from a near search does not pay: the winning source is typically many bins
away, at one of the few states with a pitch candidate, 1-10 per frame.)

A backpointer is stored as its **code**: the index ``k < 2 (2h + 1)`` of the band source (source ``offset[k] + j mod
n``) or ``FAR = 2 (2h + 1)`` for the frame's one far source; uint8 while ``2 (2h + 1) < 256`` (``h <= 63``: hops up
to ~29 ms at librosa's 35.92 octaves/s), else uint16 -- 1 byte per state and frame instead of librosa's 8.

:class:`OnlineViterbi` decodes a stream: after each block it traces the survivors of the newest frame back.

* **Convergence point** -- where they all meet at one state, every frame up to it is final and equal to the
  whole-utterance path (every path through the latest frame passes through that state).
* **Output convergence** (``unvoiced_bins=False``) -- a frame whose survivors are all unvoiced is final too when
  only the voicing and voiced f0 are wanted (pYIN with a ``fill_na``): the whole-utterance path is unvoiced there,
  whichever unvoiced bin it holds.  Digital silence and DC never reach a convergence point (two survivors, the
  grid's lowest and highest unvoiced bins, tie exactly for ever) but converge so at once.
* **Fixed lag** -- when more than ``max_lag`` frames are still undecided, the oldest are decided along the path of
  the newest frame's best state, until ``max_lag`` remain.  This is the only case where the result can differ from
  the whole-utterance decoding: exactly the frames so decided whose survivors still disagreed (``n_guessed``; every
  other frame, before and after them, is the whole decoding's, since the backpointers are never altered; the path
  may then jump between the last decided frame and the next).  Memory is bounded by ``max_lag + max_lag // 8``
  rows of ``2n`` codes (the default ``max_lag``: :data:`PENDING_BYTES` of them, 23 933 frames = 6.4 min at a
  16 ms hop with 1202 states).  Measured natural gaps between convergence points at 16 kHz, 16 ms hop: speech
  (espeak-ng, clean or with noise) <= 2.4 s, chords and melodies <= 2.0 s, steady or clipped tones and square
  waves <= 0.4 s, white noise <= 19 s; silence and DC: none (output convergence: 0.1 s).
"""

from __future__ import annotations

import warnings

import numpy as np

from ...validate import check_int
from .transitions import LOG_TINY, TINY, TransitionBand

__all__ = ["PENDING_BYTES", "BandedViterbi", "OnlineViterbi", "default_max_lag", "viterbi"]

#: Memory the default ``max_lag`` allows the undecided frames' backpointers (bytes): 32 MiB.
PENDING_BYTES = 32 * 2**20
#: Bytes a pending row costs besides its codes (the array object, list slots, its far source and trace record).
ROW_OVERHEAD = 200


class BandedViterbi:
    """The forward step of the exact banded decoder (its buffers are reused: one instance per stream).

    Parameters
    ----------
    band : TransitionBand
        The HMM's transitions.
    """

    def __init__(self, band: TransitionBand):
        self.band = band
        n, h = band.n_bins, band.half
        self.n, self.h = n, h
        span = 2 * h + 1
        self.kernel = band.kernel  # (2, n, 2, span)
        self.values = np.full((2, n + 2 * h), -np.inf)
        windows = np.lib.stride_tricks.sliding_window_view(self.values, span, axis=1)  # (2, n, span), a view
        self.windows = windows.transpose(1, 0, 2)[None]  # (1, n, 2, span): [j, sv, h + d] = V[sv * n + j + d]
        self.cand = np.empty(self.kernel.shape)
        self.flat = self.cand.reshape(2 * n, 2 * span)
        self.base = np.arange(2 * n) * (2 * span)
        k = np.arange(2 * span)
        self.offset = (k // span) * n + (k % span) - h  # source index = offset[k] + j
        self.target = np.tile(np.arange(n), 2)
        self.log_p_init = np.log(np.ones(2 * n) / (2 * n) + TINY)
        #: The code of "the frame's far source".
        self.far_code = 2 * span
        self.code_dtype = np.dtype(np.uint8 if self.far_code < 256 else np.uint16)
        self.source_offset = np.r_[self.offset, 0]  # indexed by code; FAR's entry is replaced by the far source

    def step(self, v: np.ndarray, log_prob: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """One frame: ``(V[t], codes[t], far[t])`` from ``V[t-1]`` ``(2n,)`` and ``log_prob[t]`` ``(2n,)``; ``ptr[t, j]
        = offset[codes[t, j]] + j mod n``, or ``far[t]`` where ``codes[t, j] == far_code`` (``far[t] = -1``: none)."""
        n, h = self.n, self.h
        self.values[:, h : h + n] = v.reshape(2, n)
        np.add(self.kernel, self.windows, out=self.cand)
        idx = self.flat.argmax(axis=1)
        best = self.flat.ravel()[self.base + idx]
        codes = idx.astype(self.code_dtype)
        far = v + LOG_TINY
        top = far.max()
        take = best <= top
        first = -1
        if take.any():
            ptr = self.offset[idx] + self.target
            reach = np.flatnonzero(far == top)
            first = int(reach[0])
            take &= (top > best) | (first < ptr)
            for m in np.unique(reach % n):  # targets with a top source inside their band keep the band's best
                lo, hi = max(0, m - h), min(n, m + h + 1)
                take[lo:hi] = False
                take[n + lo : n + hi] = False
            best[take] = top
            codes[take] = self.far_code
        return log_prob + best, codes, first

    def sources(self, codes: np.ndarray, far: int, states: np.ndarray) -> np.ndarray:
        """``ptr[t, states]`` from frame ``t``'s ``codes`` and ``far``."""
        c = codes[states]
        out = self.source_offset[c] + self.target[states]
        if far >= 0:
            out[c == self.far_code] = far
        return out

    def source(self, codes: np.ndarray, far: int, state: int) -> int:
        """``ptr[t, state]`` (one state, Python ints: the trace back of one path)."""
        c = int(codes[state])
        return far if c == self.far_code else int(self.source_offset[c]) + state % self.n

    def initial(self, log_prob: np.ndarray) -> np.ndarray:
        """``V[0] = log_prob[0] + log(1 / 2n + tiny)`` (librosa's uniform initial distribution)."""
        return log_prob + self.log_p_init


def log_observations(obs: np.ndarray) -> np.ndarray:
    """``log(obs + tiny)``, frame-major ``(n_frames, 2n)``, from librosa's ``(2n, n_frames)`` layout."""
    return np.ascontiguousarray(np.log(obs + TINY).T)


def viterbi(obs: np.ndarray, band: TransitionBand, *, max_lag: int | None = None) -> np.ndarray:
    """Most likely state sequence of a whole utterance (librosa's ``sequence.viterbi(obs, T, p_init=uniform)``).

    Parameters
    ----------
    obs : np.ndarray, shape (2n, n_frames)
        Observation probabilities (:meth:`~.probabilities.ObservationModel.observations`).
    band : TransitionBand
        The transitions.
    max_lag : int or None
        As :class:`OnlineViterbi` (None: :func:`default_max_lag`).

    Returns
    -------
    np.ndarray, shape (n_frames,), int64
        States: ``< n`` voiced bin, ``>= n`` unvoiced.
    """
    decoder = OnlineViterbi(band, max_lag=max_lag)
    decoder.push(obs)
    return decoder.finish()


def default_max_lag(n_states: int, code_bytes: int) -> int:
    """``PENDING_BYTES // (n_states * code_bytes + ROW_OVERHEAD)`` frames (at least 64)."""
    return max(64, PENDING_BYTES // (n_states * code_bytes + ROW_OVERHEAD))


class OnlineViterbi:
    """Viterbi decoding of a stream of observation blocks; states come out as soon as they are final.

    Parameters
    ----------
    band : TransitionBand
        The HMM's transitions.
    unvoiced_bins : bool
        True: the exact state of every frame (the unvoiced bin too; what ``fill_na=None`` shows).  False: frames
        whose survivors are all unvoiced are final at once and reported as state ``n`` (the unvoiced bins are not
        tracked; the voicing and the voiced states are the whole decoding's all the same).
    max_lag : int or None
        Most frames held undecided (``>= 2``); beyond, the oldest are decided along the best current path (see the
        module's notes; counted in :attr:`n_guessed`).  None: :func:`default_max_lag` (32 MiB of backpointers).

    Notes
    -----
    Memory: ``V`` (2n floats) and one row of ``2n`` codes (uint8, or uint16 for ``h > 63``) per frame not yet final,
    at most ``max_lag + max_lag // 8`` rows.  Time: the forward step, plus one trace of the survivors per block and
    per ``max_lag // 8`` frames, which stops where it meets the previous trace's survivors (equal counts: the new
    set is a subset of the old one), so a long undecided stretch is not traced again and again.
    """

    def __init__(self, band: TransitionBand, *, unvoiced_bins: bool = True, max_lag: int | None = None):
        self.step = BandedViterbi(band)
        self.n_bins = band.n_bins
        self.n_states = 2 * band.n_bins
        code_bytes = self.step.code_dtype.itemsize
        if max_lag is None:
            max_lag = default_max_lag(self.n_states, code_bytes)
        self.max_lag = check_int(max_lag, "max_lag", minimum=2)
        self.unvoiced_bins = bool(unvoiced_bins)
        self.value: np.ndarray | None = None
        # per frame after the last final one: backpointer codes (None for the first: its sources are final), far
        # source, and the survivors' count and "one output" of the last trace (-1: not traced yet)
        self.pending: list[np.ndarray | None] = []
        self._far: list[int] = []
        self._size: list[int] = []
        self._single: list[bool] = []
        self.decided: list[np.ndarray] = []  # final states not yet taken
        self.n_decided = 0
        self.n_frames = 0
        #: Frames decided by the lag bound while their survivors disagreed (may differ from the whole decoding).
        self.n_guessed = 0
        #: ``(first, last)`` frame indices (inclusive) of each decision by the lag bound that guessed: every frame
        #: outside them is the whole decoding's.
        self.guessed: list[tuple[int, int]] = []
        self._all = np.arange(self.n_states)
        self._mask = np.zeros(self.n_states, dtype=bool)
        self._slack = max(1, self.max_lag // 8)

    def push(self, obs: np.ndarray) -> None:
        """Add a block of observations ``(2n, n_frames)``."""
        log_prob = log_observations(obs)
        step = self.step
        limit = self.max_lag + self._slack
        for row in log_prob:
            if self.value is None:
                self.value = step.initial(row)
                self._append(None, -1)
            else:
                self.value, codes, far = step.step(self.value, row)
                self._append(codes, far)
            self.n_frames += 1
            if len(self.pending) >= limit:
                self._converge()
        self._converge()

    def _append(self, codes: np.ndarray | None, far: int) -> None:
        self.pending.append(codes)
        self._far.append(far)
        self._size.append(-1)
        self._single.append(False)

    def _predecessors(self, t: int, states: np.ndarray) -> np.ndarray:
        """The distinct sources at frame ``t - 1`` of ``states`` at frame ``t`` (sorted)."""
        codes = self.pending[t]
        assert codes is not None
        mask = self._mask
        mask[self.step.sources(codes, self._far[t], states)] = True
        out = np.flatnonzero(mask)
        mask[out] = False
        return out

    def _trace(self) -> tuple[int, int]:
        """Trace the newest frame's survivors back: ``(t, state)`` of the latest convergence point, or ``(-1, -1)``.
        Updates the per-frame survivor counts and flags."""
        n = self.n_bins
        alive = self._all
        for t in range(len(self.pending) - 1, -1, -1):
            size = alive.size
            before = self._size[t]
            self._size[t] = size
            self._single[t] = size == 1 or (not self.unvoiced_bins and int(alive[0]) >= n)
            if size == 1:
                return t, int(alive[0])
            if size == before or t == 0:  # the same survivors as the last trace from here back
                break
            alive = self._predecessors(t, alive)
        return -1, -1

    def _path(self, last: int, state: int) -> np.ndarray:
        """States of pending frames ``0 .. last`` on the path through ``state`` at frame ``last``."""
        out = np.empty(last + 1, dtype=np.int64)
        out[last] = state
        source = self.step.source
        for t in range(last, 0, -1):
            codes = self.pending[t]
            assert codes is not None
            state = source(codes, self._far[t], state)
            out[t - 1] = state
        return out

    def _release(self, states: np.ndarray) -> None:
        """The first ``states.size`` pending frames are final with ``states``."""
        count = states.size
        if not self.unvoiced_bins:
            states[states >= self.n_bins] = self.n_bins
        self.decided.append(states)
        self.n_decided += count
        for held in (self.pending, self._far, self._size, self._single):
            del held[:count]
        if self.pending:  # the next frame's sources are in the released one: tracing stops there
            self.pending[0], self._far[0] = None, -1

    def _converge(self) -> None:
        """Release the frames up to the latest convergence point (and, without unvoiced bins, the all-unvoiced
        frames after it); then, beyond ``max_lag`` undecided frames, the oldest along the best path."""
        if not self.pending:
            return
        last, state = self._trace()
        ready = last
        if not self.unvoiced_bins:
            single = np.asarray(self._single)
            ready = max(ready, int(np.argmin(single)) - 1 if not single.all() else single.size - 1)
        if ready >= 0:
            states = np.full(ready + 1, self.n_bins, dtype=np.int64)
            if last >= 0:
                states[: last + 1] = self._path(last, state)
            self._release(states)
        excess = len(self.pending) - self.max_lag
        if excess > 0:
            assert self.value is not None
            state = int(np.argmax(self.value))
            for t in range(len(self.pending) - 1, excess - 1, -1):
                codes = self.pending[t]
                assert codes is not None
                state = self.step.source(codes, self._far[t], state)
            guessed = np.flatnonzero(~np.asarray(self._single[:excess]))
            if guessed.size:
                self.n_guessed += guessed.size
                self.guessed.append((self.n_decided + int(guessed[0]), self.n_decided + int(guessed[-1])))
            self._release(self._path(excess - 1, state))

    def take(self) -> np.ndarray:
        """The states made final since the last call (int64)."""
        out = np.concatenate(self.decided) if self.decided else np.zeros(0, dtype=np.int64)
        self.decided = []
        return out

    def finish(self) -> np.ndarray:
        """End of stream: the remaining states (after :meth:`take`'s), traced back from ``argmax V``."""
        if self.value is not None and self.pending:
            self._release(self._path(len(self.pending) - 1, int(np.argmax(self.value))))
        return self.take()

    def warn_guessed(self, frame_seconds: float, what: str = "pYIN") -> None:
        """Warn (``UserWarning``) when the lag bound decided frames whose survivors disagreed; ``frame_seconds`` is
        the hop (s), for the message's times."""
        if not self.guessed:
            return
        first, last = self.guessed[0][0], self.guessed[-1][1]
        warnings.warn(
            f"{what}: {self.n_guessed} frames between {first * frame_seconds:.2f} s and {last * frame_seconds:.2f} s "
            f"had no convergence point within max_lag={self.max_lag} frames ({self.max_lag * frame_seconds:.0f} s) "
            "and were decided along the best path then; they may differ from a whole-input decoding",
            stacklevel=3,
        )

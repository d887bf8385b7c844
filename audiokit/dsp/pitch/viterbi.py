"""Exact Viterbi decoding of pYIN's HMM in ``O(states x band)`` per frame, whole or online.

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

:class:`OnlineViterbi` decodes a stream with bounded memory: after each block it traces all ``2n`` survivors back
until they meet at one state (a convergence point); every frame up to it is then final, and equal to the
whole-utterance path (every path through the latest frame passes through that state).
"""

from __future__ import annotations

import numpy as np

from .transitions import LOG_TINY, TINY, TransitionBand

__all__ = ["BandedViterbi", "OnlineViterbi", "viterbi"]


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

    def step(self, v: np.ndarray, log_prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One frame: ``(V[t], ptr[t])`` from ``V[t-1]`` ``(2n,)`` and ``log_prob[t]`` ``(2n,)``."""
        n, h = self.n, self.h
        self.values[:, h : h + n] = v.reshape(2, n)
        np.add(self.kernel, self.windows, out=self.cand)
        idx = self.flat.argmax(axis=1)
        best = self.flat.ravel()[self.base + idx]
        ptr = self.offset[idx] + self.target
        far = v + LOG_TINY
        top = far.max()
        take = best <= top
        if take.any():
            reach = np.flatnonzero(far == top)
            first = reach[0]
            take &= (top > best) | (first < ptr)
            for m in np.unique(reach % n):  # targets with a top source inside their band keep the band's best
                lo, hi = max(0, m - h), min(n, m + h + 1)
                take[lo:hi] = False
                take[n + lo : n + hi] = False
            best[take] = top
            ptr[take] = first
        return log_prob + best, ptr

    def initial(self, log_prob: np.ndarray) -> np.ndarray:
        """``V[0] = log_prob[0] + log(1 / 2n + tiny)`` (librosa's uniform initial distribution)."""
        return log_prob + self.log_p_init


def log_observations(obs: np.ndarray) -> np.ndarray:
    """``log(obs + tiny)``, frame-major ``(n_frames, 2n)``, from librosa's ``(2n, n_frames)`` layout."""
    return np.ascontiguousarray(np.log(obs + TINY).T)


def viterbi(obs: np.ndarray, band: TransitionBand) -> np.ndarray:
    """Most likely state sequence of a whole utterance (librosa's ``sequence.viterbi(obs, T, p_init=uniform)``).

    Parameters
    ----------
    obs : np.ndarray, shape (2n, n_frames)
        Observation probabilities (:meth:`~.probabilities.ObservationModel.observations`).
    band : TransitionBand
        The transitions.

    Returns
    -------
    np.ndarray, shape (n_frames,), int64
        States: ``< n`` voiced bin, ``>= n`` unvoiced.
    """
    decoder = OnlineViterbi(band)
    decoder.push(obs)
    return decoder.finish()


class OnlineViterbi:
    """Viterbi decoding of a stream of observation blocks; states come out as soon as they are final.

    Memory: ``V`` (2n floats) and one ``ptr`` row (2n int16) per frame not yet final, that is since the last
    convergence point (on speech and music, a fraction of a second to a few seconds; in the worst case the whole
    input).
    """

    def __init__(self, band: TransitionBand):
        self.step = BandedViterbi(band)
        self.n_states = 2 * band.n_bins
        self.dtype = np.int16 if self.n_states <= np.iinfo(np.int16).max else np.int32
        self.value: np.ndarray | None = None
        self.pending: list[np.ndarray] = []  # ptr rows of the frames after the last final one
        self.decided: list[np.ndarray] = []  # final states not yet taken
        self.n_decided = 0
        self.n_frames = 0

    def push(self, obs: np.ndarray) -> None:
        """Add a block of observations ``(2n, n_frames)``."""
        log_prob = log_observations(obs)
        step = self.step
        for row in log_prob:
            if self.value is None:
                self.value = step.initial(row)
                self.pending.append(np.zeros(self.n_states, dtype=self.dtype))
            else:
                self.value, ptr = step.step(self.value, row)
                self.pending.append(ptr.astype(self.dtype))
            self.n_frames += 1
        self._converge()

    def _converge(self) -> None:
        """Find the latest convergence point and move the frames up to it to :attr:`decided`."""
        alive = np.arange(self.n_states)
        for back in range(len(self.pending) - 1, 0, -1):
            alive = np.unique(self.pending[back][alive])
            if alive.size == 1:
                self._emit(back - 1, int(alive[0]))
                return

    def _emit(self, last: int, state: int) -> None:
        """Frames ``0 .. last`` of :attr:`pending` are final, ending in ``state``."""
        out = np.empty(last + 1, dtype=np.int64)
        out[last] = state
        for t in range(last, 0, -1):
            out[t - 1] = self.pending[t][out[t]]
        self.decided.append(out)
        self.n_decided += last + 1
        del self.pending[: last + 1]
        # the next pending frame's ptr points into the emitted frame: keep its row, tracing stops there
        if self.pending:
            self.pending[0] = np.zeros(self.n_states, dtype=self.dtype)

    def take(self) -> np.ndarray:
        """The states made final since the last call (int64)."""
        out = np.concatenate(self.decided) if self.decided else np.zeros(0, dtype=np.int64)
        self.decided = []
        return out

    def finish(self) -> np.ndarray:
        """End of stream: the remaining states (after :meth:`take`'s), traced back from ``argmax V``."""
        if self.value is not None and self.pending:
            self._emit(len(self.pending) - 1, int(np.argmax(self.value)))
        return self.take()

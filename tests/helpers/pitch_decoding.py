"""pYIN decoding references for the Viterbi tests: librosa's dense decoder written out, and synthetic observation
matrices (``(2n, frames)``: n voiced, n unvoiced states)."""

from __future__ import annotations

import numpy as np

from audiokit.dsp.pitch.transitions import TINY, TransitionBand


def dense_viterbi(obs: np.ndarray, band: TransitionBand) -> np.ndarray:
    """librosa's decoder written out naively: every source for every target, first argmax, log(T + tiny)."""
    log_t = band.dense()
    log_p = np.log(obs + TINY).T
    n_states = log_t.shape[0]
    value = log_p[0] + np.log(np.ones(n_states) / n_states + TINY)
    ptrs = []
    for row in log_p[1:]:
        scores = value[:, None] + log_t
        ptr = np.argmax(scores, axis=0)
        value = row + scores[ptr, np.arange(n_states)]
        ptrs.append(ptr)
    state = [int(np.argmax(value))]
    for ptr in reversed(ptrs):
        state.append(int(ptr[state[-1]]))
    return np.array(state[::-1])


def speech_like_obs(n: int, frames: int, rng: np.random.Generator, *, segment: int = 150, period: float = 40) -> np.ndarray:
    """A wandering voiced candidate (sine of ``period`` frames over the grid) with a weaker second one two bins up,
    voiced/unvoiced alternation every ``segment`` frames; the unvoiced states share what is left (converges often)."""
    voiced = (np.arange(frames) // segment) % 2 == 0
    pitch = (n / 2 + (n / 3) * np.sin(np.arange(frames) / period)).astype(int)
    obs = np.zeros((2 * n, frames))
    obs[pitch, np.arange(frames)] = np.where(voiced, 0.8, 0.1) * rng.random(frames)
    obs[pitch + 2, np.arange(frames)] = 0.1 * rng.random(frames)
    obs[n:] = (1 - obs[:n].sum(axis=0)) / n
    return obs

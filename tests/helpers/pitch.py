"""Pitch test material: a test utterance with known f0, librosa's dense Viterbi decoder written out, and synthetic
pYIN observation matrices (``(2n, frames)``: n voiced, n unvoiced states)."""

from __future__ import annotations

import numpy as np

from audiokit.dsp.pitch.transitions import TINY, TransitionBand

SR = 16000


def voice(seconds: float = 3.0, *, sr: int = SR, seed: int = 0, snr_db: float = 20.0) -> np.ndarray:
    """A test utterance: harmonic complex gliding 110 -> 330 Hz with vibrato, a silent gap, a 200 Hz segment with
    a jump, white noise at ``snr_db``, and a noise-only stretch (float64)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    f0 = 110 * 3 ** (t / seconds) * (1 + 0.02 * np.sin(2 * np.pi * 5 * t))
    f0[(t > 0.6 * seconds) & (t < 0.8 * seconds)] = 200.0
    f0[t >= 0.8 * seconds] = 420.0
    phase = 2 * np.pi * np.cumsum(f0) / sr
    x = sum(np.sin(k * phase) / k for k in range(1, 8))
    x[(t > 0.4 * seconds) & (t < 0.5 * seconds)] = 0.0
    x[t > 0.92 * seconds] = 0.0
    x = 0.3 * x / np.abs(x).max()
    noise = rng.standard_normal(t.size)
    noise *= np.sqrt(np.mean(x**2) / np.mean(noise**2)) * 10 ** (-snr_db / 20)
    return x + noise


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

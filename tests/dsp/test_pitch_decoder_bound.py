"""The online pYIN decoder's memory bound (audiokit.dsp.pitch.viterbi.OnlineViterbi): exact below ``max_lag``,
bounded above it, and never different from the whole decoding outside the frames it reports as guessed.

References: the naive dense decoder of ``tests/dsp/test_pitch.py`` (librosa's ``_viterbi`` written out) and the
same decoder with no effective bound (``max_lag`` above the input length).  No tolerances: states are integers.
"""

from __future__ import annotations

import numpy as np
import pytest

from audiokit.dsp.pitch import PyinModel, pyin
from audiokit.dsp.pitch.stream import PitchTracker
from audiokit.dsp.pitch.transitions import TransitionBand
from audiokit.dsp.pitch.viterbi import OnlineViterbi, default_max_lag, viterbi
from audiokit.errors import ParameterError
from tests.helpers import pitch as pitch_material
from tests.helpers.pitch import dense_viterbi

SR = 16000


def silence_obs(n: int, frames: int) -> np.ndarray:
    """Observations of digital silence as pYIN makes them: voiced 0, every unvoiced state ``1 / n``.  The two
    unvoiced ends of the grid tie for ever: no convergence point."""
    obs = np.zeros((2 * n, frames))
    obs[n:] = 1.0 / n
    return obs


def speech_like_obs(n: int, frames: int, seed: int) -> np.ndarray:
    """:func:`tests.helpers.pitch_material.speech_like_obs` with its own generator."""
    return pitch_material.speech_like_obs(n, frames, np.random.default_rng(seed))


def outside(frames: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """The ``frames`` in none of the inclusive ``spans``."""
    inside = np.zeros(frames.size, dtype=bool)
    for first, last in spans:
        inside |= (frames >= first) & (frames <= last)
    return frames[~inside]


class Counting(OnlineViterbi):
    """The decoder, counting the most frames it ever holds (also inside a push: at every appended frame)."""

    held = 0

    def _append(self, codes: np.ndarray | None, far: int) -> None:
        super()._append(codes, far)
        self.held = max(self.held, len(self.pending))


def decode(decoder: Counting, obs: np.ndarray, seed: int) -> tuple[np.ndarray, int]:
    """Push ``obs`` in random blocks of 1..150 frames: the states and the most frames the decoder held."""
    rng = np.random.default_rng(seed)
    parts, start = [], 0
    while start < obs.shape[1]:
        size = int(rng.integers(1, 151))
        decoder.push(obs[:, start : start + size])
        parts.append(decoder.take())
        start += size
    parts.append(decoder.finish())
    return np.concatenate(parts), decoder.held


@pytest.mark.parametrize("seed", range(3))
def test_below_the_lag_the_result_is_the_whole_decoding(seed: int) -> None:
    """max_lag just above the longest natural gap: nothing guessed, states equal to the dense decoder."""
    n = 25
    band = TransitionBand(n, 7, 0.02)
    obs = speech_like_obs(n, 1500, seed)
    free, longest = decode(Counting(band, max_lag=10**6), obs, seed)
    assert np.array_equal(free, dense_viterbi(obs, band))
    assert 10 < longest < 1500  # natural convergence points cut the input
    bounded = Counting(band, max_lag=longest + 1)
    states, held = decode(bounded, obs, seed)
    assert bounded.n_guessed == 0 and not bounded.guessed
    assert np.array_equal(states, free)
    assert held <= longest + 1 + (longest + 1) // 8


@pytest.mark.parametrize("max_lag", [8, 40, 300])
def test_above_the_lag_memory_is_bounded_and_only_guessed_frames_differ(max_lag: int) -> None:
    """Speech-like, then 800 frames of silence (no convergence point), then speech-like again, exact states
    (``unvoiced_bins=True``): the decoder never holds more than ``max_lag + max_lag // 8`` frames, and every frame
    outside the spans it reports as guessed is the whole decoding's (at 300, longer than every natural gap of the
    speech-like parts, the only guesses are in the silence)."""
    n = 25
    band = TransitionBand(n, 7, 0.02)
    obs = np.concatenate([speech_like_obs(n, 400, 1), silence_obs(n, 800), speech_like_obs(n, 400, 2)], axis=1)
    whole = dense_viterbi(obs, band)
    decoder = Counting(band, max_lag=max_lag)
    states, held = decode(decoder, obs, 5)
    assert held <= max_lag + max(1, max_lag // 8)
    assert decoder.n_guessed > 0 and decoder.guessed
    assert sum(last - first + 1 for first, last in decoder.guessed) == decoder.n_guessed  # exact states: all guessed
    differ = np.flatnonzero(states != whole)
    assert outside(differ, decoder.guessed).size == 0
    if max_lag == 300:
        assert 300 <= decoder.guessed[0][0] and decoder.guessed[-1][1] < 1200
    with pytest.warns(UserWarning, match=rf"{decoder.n_guessed} frames .* max_lag={max_lag} frames"):
        decoder.warn_guessed(0.016)


def test_all_unvoiced_frames_are_final_without_unvoiced_bins() -> None:
    """The same input with ``unvoiced_bins=False`` and ``max_lag=300`` (where exact states guess in the silence):
    silence is final at once, nothing is guessed, voicing and voiced states equal the whole decoding's, unvoiced
    frames are reported as state n."""
    n = 25
    band = TransitionBand(n, 7, 0.02)
    obs = np.concatenate([speech_like_obs(n, 400, 1), silence_obs(n, 800), speech_like_obs(n, 400, 2)], axis=1)
    whole = dense_viterbi(obs, band)
    decoder = Counting(band, unvoiced_bins=False, max_lag=300)
    states, held = decode(decoder, obs, 6)
    assert decoder.n_guessed == 0 and not decoder.guessed
    assert np.array_equal(states, np.where(whole < n, whole, n))
    assert held < 300


def test_exact_ties_between_voiced_candidates_are_bounded_too() -> None:
    """Two voiced candidates far apart (more than the band) with equal probability in every frame: two survivors
    for ever, voiced, so even ``unvoiced_bins=False`` cannot decide them; the lag bound does, and warns."""
    n = 40
    band = TransitionBand(n, 5, 0.01)
    obs = np.zeros((2 * n, 600))
    obs[[5, 30]] = 0.5
    obs[n:] = 1e-3
    decoder = Counting(band, unvoiced_bins=False, max_lag=50)
    states, held = decode(decoder, obs, 7)
    assert held <= 50 + 6 and decoder.n_guessed > 0
    whole = dense_viterbi(obs, band)
    assert outside(np.flatnonzero(states != whole), decoder.guessed).size == 0
    with pytest.warns(UserWarning, match="may differ from a whole-input decoding"):
        decoder.warn_guessed(0.016)


def test_wide_bands_store_uint16_codes_and_stay_exact() -> None:
    """h = 64 (2 (2h + 1) = 258 band sources: codes do not fit a byte): uint16 codes, still the dense decoder's
    states (random tie-heavy observations as in tests/dsp/test_pitch.py); the default band's codes are uint8."""
    rng = np.random.default_rng(11)
    n = 140
    band = TransitionBand(n, 129, 0.05)
    obs = np.round(rng.random((2 * n, 150)) ** 4, 1) * (rng.random((2 * n, 150)) < 0.3)
    obs[:, 20:30] = 0.0
    obs[:n, 40:50] = 0.0
    decoder = OnlineViterbi(band)
    assert decoder.step.code_dtype == np.uint16
    assert np.array_equal(viterbi(obs, band), dense_viterbi(obs, band))
    model = PyinModel.make(sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
    assert OnlineViterbi(model.band).step.code_dtype == np.uint8


def test_default_lag_is_the_memory_budget() -> None:
    """32 MiB of rows of 1202 one-byte codes (+ 200 bytes each): 23 933 frames, 6.4 min at a 16 ms hop."""
    model = PyinModel.make(sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
    decoder = OnlineViterbi(model.band)
    assert decoder.n_states == 1202
    assert decoder.max_lag == default_max_lag(1202, 1) == 32 * 2**20 // 1402 == 23933
    with pytest.raises(ParameterError, match="max_lag"):
        OnlineViterbi(model.band, max_lag=1)


def noise_with_silence(seconds: float, seed: int) -> np.ndarray:
    """White noise (natural convergence gaps up to ~19 s at 16 ms) with 4 s of digital silence in the middle."""
    rng = np.random.default_rng(seed)
    y = 0.1 * rng.standard_normal(int(seconds * SR))
    mid = y.size // 2
    y[mid - 2 * SR : mid + 2 * SR] = 0.0
    return y.astype(np.float32)


def test_tracker_lag_bound_warns_and_keeps_voicing_outside_the_guesses() -> None:
    """PitchTracker with max_lag=64 frames (1 s) on 20 s of noise and silence: bounded, guessed frames reported
    (one warning), and outside them the voicing and voiced f0 are pyin's; the silence itself is never guessed."""
    y = noise_with_silence(20, 3)
    model = PyinModel.make(sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
    tracker = PitchTracker(model, max_lag=64)
    held = 0
    for start in range(0, y.size, 4096):
        tracker.push(y[start : start + 4096])
        held = max(held, tracker.pending_frames)
    with pytest.warns(UserWarning, match="frames between .* had no convergence point") as caught:
        f0, flag, prob = tracker.finish()
    assert len(caught) == 1
    assert held <= 64 and tracker.guessed_frames > 0
    ef0, eflag, eprob = pyin(y, sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
    assert np.array_equal(prob, eprob)
    same_f0 = (f0 == ef0) | (np.isnan(f0) & np.isnan(ef0))
    differ = np.flatnonzero((flag != eflag) | ~same_f0)
    assert outside(differ, tracker.guessed).size == 0
    silent = slice(int((10 - 1.9) * SR / 256), int((10 + 1.9) * SR / 256))
    assert not flag[silent].any() and not eflag[silent].any()


def test_tracker_unvoiced_bins_and_fill_na_none() -> None:
    """fill_na=None needs the unvoiced bins (ParameterError otherwise); with them the tracker equals pyin."""
    y = noise_with_silence(3, 4)
    model = PyinModel.make(sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
    plain = PitchTracker(model)
    plain.push(y)
    with pytest.raises(ParameterError, match="unvoiced_bins=True"):
        plain.finish(fill_na=None)
    tracker = PitchTracker(model, unvoiced_bins=True)
    tracker.push(y)
    got = tracker.finish(fill_na=None)
    expected = pyin(y, sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024, fill_na=None)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))

"""YIN and pYIN (audiokit.dsp.pitch) against librosa 0.11, scipy, and a naive dense Viterbi decoder.

Tolerances: none for pYIN -- every comparison with librosa is ``array_equal`` (f0 bit for bit, voiced flags and
voiced probabilities identical), because the arithmetic is librosa's operation for operation (scipy.fft, the same
BLAS products on the same matrix shapes); the decoder is exact (same floats, same first-argmax ties).  YIN's faster
rows equal librosa's to float rounding: its comparison, with the tolerance and the counts, is test_yin_fast.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from audiokit.dsp.pitch import PyinModel, pyin, yin
from audiokit.dsp.pitch.params import PitchGeometry, next_fast_len
from audiokit.dsp.pitch.transitions import TINY, TransitionBand, local_transition, triangle
from audiokit.dsp.pitch.viterbi import OnlineViterbi, viterbi
from audiokit.errors import ParameterError
from tests.helpers.pitch import dense_viterbi, speech_like_obs, voice

SR = 16000


def test_next_fast_len_is_scipys() -> None:
    import scipy.fft

    assert all(next_fast_len(n) == scipy.fft.next_fast_len(n, real=True) for n in range(1, 3000))


def test_triangle_and_local_transition_are_scipys_and_librosas() -> None:
    import scipy.signal

    for width in (1, 2, 5, 70, 71, 141):
        assert np.array_equal(triangle(width), scipy.signal.windows.triang(width))
    for n, width in ((601, 71), (50, 11), (7, 7), (30, 1)):
        band = local_transition(n, width)
        i, j = np.nonzero(band)
        assert np.all(np.abs(i - j) <= width // 2) and np.count_nonzero(band) == sum(
            min(n, k + width // 2 + 1) - max(0, k - width // 2) for k in range(n)
        )
        assert np.allclose(band.sum(axis=1), 1.0, rtol=0, atol=4 * np.finfo(float).eps)


def test_band_holds_the_dense_matrix_entries() -> None:
    band = TransitionBand(40, 9, 0.05)
    dense, kernel, n, h = band.dense(), band.kernel, 40, band.half
    for tv in range(2):
        for j in range(n):
            for sv in range(2):
                for d in range(-h, h + 1):
                    if 0 <= j + d < n:
                        assert kernel[tv, j, sv, h + d] == dense[sv * n + j + d, tv * n + j]
                    else:
                        assert kernel[tv, j, sv, h + d] == -np.inf
    outside = np.abs(np.subtract.outer(np.arange(2 * n) % n, np.arange(2 * n) % n)) > h
    assert np.all(dense[outside] == np.log(TINY))


@pytest.mark.parametrize("seed", range(6))
def test_banded_viterbi_equals_the_dense_decoder(seed: int) -> None:
    """Random observations, with many exact ties (values on a coarse grid, zero rows, flat frames)."""
    rng = np.random.default_rng(seed)
    n, frames = 25, 120
    band = TransitionBand(n, [3, 7, 11][seed % 3], [0.01, 0.3, 0.5][seed % 3])
    obs = np.round(rng.random((2 * n, frames)) ** 4, 1) * (rng.random((2 * n, frames)) < 0.3)
    obs[:, 10:20] = 0.0  # all states impossible: every transition ties
    obs[:n, 30:40] = 0.0  # voiced impossible: the out-of-band (tiny) transitions compete
    obs[n:, 50:55] = 1.0 / n
    assert np.array_equal(viterbi(obs, band), dense_viterbi(obs, band))


def test_online_decoder_equals_the_whole_decoding_on_long_input() -> None:
    """Blocks of 1..97 frames over 6 000 frames: convergence points cut the path into final pieces that join
    into exactly the one-block path, and memory holds only the frames after the last one."""
    rng = np.random.default_rng(7)
    n, frames = 30, 6000
    band = TransitionBand(n, 7, 0.02)
    obs = speech_like_obs(n, frames, rng, segment=300, period=80)
    whole = viterbi(obs, band)
    decoder = OnlineViterbi(band)
    parts, start, longest = [], 0, 0
    while start < frames:
        size = int(rng.integers(1, 98))
        decoder.push(obs[:, start : start + size])
        parts.append(decoder.take())
        longest = max(longest, len(decoder.pending))
        start += size
    parts.append(decoder.finish())
    assert np.array_equal(np.concatenate(parts), whole)
    assert longest < 1000  # the pending frames stay bounded (convergence within a few hundred frames)


def test_parameter_errors() -> None:
    y = np.zeros(SR)
    with pytest.raises(ParameterError, match="Nyquist"):
        yin(y, sr=SR, fmin=65, fmax=9000)
    with pytest.raises(ParameterError, match="less than fmax"):
        pyin(y, sr=SR, fmin=500, fmax=400)
    with pytest.raises(ParameterError, match="too small"):
        yin(y, sr=SR, fmin=10, fmax=400, frame_length=1024)
    with pytest.raises(ParameterError, match="switch_prob"):
        pyin(y, sr=SR, fmin=65, fmax=400, frame_length=1024, switch_prob=0)
    with pytest.raises(ParameterError, match="finite"):
        yin(np.full(SR, np.nan), sr=SR, fmin=65, fmax=400, frame_length=1024)
    with pytest.raises(ParameterError, match="floating"):
        yin(np.zeros(SR, dtype=np.int16), sr=SR, fmin=65, fmax=400, frame_length=1024)
    with pytest.warns(UserWarning, match="two periods"):
        PitchGeometry.make(sr=SR, fmin=40, fmax=400, frame_length=512, hop_length=None)


def test_pyin_shapes_fill_na_and_channels() -> None:
    y = voice(1.0)
    f0, flag, prob = pyin(y, sr=SR, fmin=65, fmax=1000, frame_length=1024)
    assert f0.shape == flag.shape == prob.shape == (1 + SR // 256,)
    assert np.all(np.isnan(f0[~flag])) and np.all(np.isfinite(f0[flag])) and flag.any() and (~flag).any()
    kept, flag2, _ = pyin(y, sr=SR, fmin=65, fmax=1000, frame_length=1024, fill_na=None)
    assert np.array_equal(flag, flag2) and np.all(np.isfinite(kept)) and np.array_equal(kept[flag], f0[flag])
    stereo = np.stack([y, y[::-1].copy()])
    f0s, flags, probs = pyin(stereo, sr=SR, fmin=65, fmax=1000, frame_length=1024, fill_na=0.0)
    assert f0s.shape == (2, f0.shape[0]) and np.array_equal(f0s[0], np.nan_to_num(f0, nan=0.0))
    assert np.array_equal(probs[0], prob)


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [
        dict(frame_length=1024),
        dict(frame_length=2048, dtype=np.float64),
        dict(frame_length=1024, hop_length=160, switch_prob=0.05, resolution=0.2, no_trough_prob=0.05),
        dict(frame_length=800, max_transition_rate=10.0, boltzmann_parameter=1.5, beta_parameters=(1, 10)),
    ],
)
def test_pyin_equals_librosa(options: dict) -> None:
    """f0 (NaN where unvoiced), voiced flags and probabilities identical on every frame (0 frames differ)."""
    librosa = pytest.importorskip("librosa")
    options = dict(options)
    y = voice(3.0, snr_db=10.0).astype(options.pop("dtype", np.float32))
    expected = librosa.pyin(y, sr=SR, fmin=65.4, fmax=2093.0, **options)
    got = pyin(y, sr=SR, fmin=65.4, fmax=2093.0, **options)
    assert np.array_equal(got[0], expected[0], equal_nan=True)
    assert np.array_equal(got[1], expected[1])
    assert np.array_equal(got[2], expected[2])


@pytest.mark.slow
def test_observation_priors_are_scipys() -> None:
    import scipy.stats

    model = PyinModel.make(sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
    obs = model.observation
    assert np.array_equal(obs.beta_probs, np.diff(scipy.stats.beta.cdf(obs.thresholds, 2, 18)))
    table = obs.boltzmann(40)
    n, p = np.meshgrid(np.arange(1, 41), np.arange(40), indexing="ij")
    assert np.array_equal(table[1:], np.where(p < n, scipy.stats.boltzmann.pmf(p, 2, n), 0.0))


def test_flat_api_is_the_dsp_function() -> None:
    import audiokit

    y = voice(1.0, sr=22050)
    assert np.array_equal(audiokit.yin(y, fmin=65, fmax=2093), yin(y, fmin=65, fmax=2093))
    got, expected = audiokit.pyin(y, fmin=65, fmax=2093, fill_na=None), pyin(y, fmin=65, fmax=2093, fill_na=None)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))


@pytest.mark.parametrize("method", ["pyin", "yin"])
def test_stream_in_random_blocks_equals_the_whole_signal(method: str) -> None:
    from audiokit.dsp.pitch.stream import PitchTracker

    y = voice(6.0).astype(np.float32)
    model = PyinModel.make(sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
    rng = np.random.default_rng(3)
    tracker, i = PitchTracker(model, method), 0
    while i < y.size:
        size = int(rng.choice([1, 255, 256, 1023, 5000, 40000]))
        tracker.push(y[i : i + size])
        i += size
    f0, flag, prob = tracker.finish()
    if method == "pyin":
        expected = pyin(y, sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip((f0, flag, prob), expected))
    else:
        assert np.array_equal(f0, yin(y, sr=SR, fmin=65.4, fmax=2093.0, frame_length=1024))
        assert flag.any() and (~flag).any() and np.array_equal(prob, flag.astype(float))

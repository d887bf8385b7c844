"""Tests of audiokit.dsp.features: MFCC and deltas vs librosa, Kaldi deltas and CMVN vs kaldi-native-fbank
and a naive transcription of Kaldi's sliding-window loop."""

from __future__ import annotations

import numpy as np
import pytest

from audiokit.dsp.features import (
    SlidingCmvn,
    add_deltas,
    cmvn,
    delta,
    kaldi_delta_window,
    mfcc,
    sliding_cmvn_window,
)
from audiokit.errors import ParameterError
from tests.helpers.paths import SPEECH

librosa = pytest.importorskip("librosa")


@pytest.fixture
def rng():
    return np.random.default_rng(11)


@pytest.fixture(scope="module")
def log_mel():
    """librosa's default log-mel (dB, 128 bands x frames) of the bundled speech."""
    import soundfile as sf

    y, sr = sf.read(SPEECH, dtype="float32")
    return y, sr, librosa.power_to_db(librosa.feature.melspectrogram(y=y, sr=sr))


def rel_err(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


# --------------------------------------------------------------------------------------------
# MFCC
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("n_mfcc,lifter", [(20, 0), (13, 22), (40, 0), (1, 0), (20, 7.5)])
def test_mfcc_matches_librosa(log_mel, n_mfcc, lifter):
    y, sr, S = log_mel
    ref = librosa.feature.mfcc(S=S, n_mfcc=n_mfcc, lifter=lifter)
    ours = mfcc(S, n_mfcc=n_mfcc, lifter=lifter)
    assert ours.shape == ref.shape == (n_mfcc, S.shape[1])
    assert rel_err(ours, ref) <= 1e-5


@pytest.mark.slow
def test_mfcc_from_audio_matches_librosa_end_to_end(log_mel):
    y, sr, S = log_mel
    ref = librosa.feature.mfcc(y=y, sr=sr)  # 20 coefficients from power_to_db(melspectrogram)
    assert rel_err(mfcc(S), ref) <= 1e-5


@pytest.mark.slow
def test_mfcc_layouts_dct_types_and_energy(log_mel, rng):
    _, _, S = log_mel
    a = mfcc(S, n_mfcc=13)
    np.testing.assert_allclose(mfcc(S.T, n_mfcc=13, axis=0), a.T, rtol=1e-12)  # frames x bins
    batch = np.stack([S, S + 1])
    np.testing.assert_allclose(mfcc(batch, n_mfcc=13)[1], mfcc(S + 1, n_mfcc=13), rtol=1e-12)
    for t in (1, 3):
        np.testing.assert_allclose(
            mfcc(S, dct_type=t, norm=None),
            librosa.feature.mfcc(S=S, dct_type=t, norm=None),
            rtol=1e-5,
            atol=1e-5 * np.abs(mfcc(S, dct_type=t, norm=None)).max(),
        )
    e = rng.standard_normal(S.shape[1])
    m = mfcc(S, n_mfcc=13, energy=e)
    np.testing.assert_array_equal(m[0], e.astype(m.dtype))
    np.testing.assert_array_equal(m[1:], a[1:])
    assert mfcc(S.astype(np.float32)).dtype == np.float32


@pytest.mark.slow
def test_mfcc_errors(log_mel):
    _, _, S = log_mel
    with pytest.raises(ParameterError, match=r"n_mfcc \(200\) cannot exceed the number of mel bands \(128\)"):
        mfcc(S, n_mfcc=200)
    with pytest.raises(ParameterError, match="lifter must be >= 0"):
        mfcc(S, lifter=-1)
    with pytest.raises(ParameterError, match="norm must be 'ortho' or None"):
        mfcc(S, norm="forward")
    with pytest.raises(ParameterError, match="dct_type must be 1, 2 or 3"):
        mfcc(S, dct_type=4)
    with pytest.raises(ParameterError, match="log_mel must be 2-D"):
        mfcc(S[0])
    with pytest.raises(ParameterError, match="energy has 3 values"):
        mfcc(S, energy=np.zeros(3))


# --------------------------------------------------------------------------------------------
# Deltas
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("width", [9, 5, 3])
def test_librosa_delta(log_mel, order, width):
    _, _, S = log_mel
    m = librosa.feature.mfcc(S=S)
    ref = librosa.feature.delta(m, width=width, order=order)
    ours = delta(m, method="librosa", width=width, order=order)
    assert ours.shape == ref.shape
    assert rel_err(ours, ref) <= 1e-5
    np.testing.assert_allclose(delta(m.T, method="librosa", order=order, width=width, axis=0), ours.T, rtol=1e-12)


@pytest.mark.slow
def test_librosa_delta_other_modes(log_mel):
    _, _, S = log_mel
    m = librosa.feature.mfcc(S=S)
    for mode in ("nearest", "mirror", "constant", "wrap"):
        assert rel_err(delta(m, method="librosa", mode=mode), librosa.feature.delta(m, mode=mode)) <= 1e-5


def test_kaldi_delta_windows():
    np.testing.assert_allclose(kaldi_delta_window(1, 2), [-0.2, -0.1, 0, 0.1, 0.2])
    np.testing.assert_allclose(kaldi_delta_window(2, 2), [0.04, 0.04, 0.01, -0.04, -0.1, -0.04, 0.01, 0.04, 0.04])
    np.testing.assert_allclose(kaldi_delta_window(2, 1), [0.25, 0, -0.5, 0, 0.25])
    np.testing.assert_allclose(kaldi_delta_window(0, 2), [1.0])


@pytest.mark.slow
@pytest.mark.parametrize("order,window", [(2, 2), (1, 2), (2, 1), (3, 3), (0, 2)])
@pytest.mark.parametrize("n_frames", [1, 3, 50, 633])
def test_add_deltas_matches_kaldi_native_fbank(rng, order, window, n_frames):
    knf = pytest.importorskip("kaldi_native_fbank")
    feats = rng.standard_normal((n_frames, 13)).astype(np.float32) * 5
    ref = knf.compute_deltas(knf.DeltaOptions(order=order, window=window), feats)
    ours = add_deltas(feats, order=order, window=window, axis=0)
    assert ours.shape == ref.shape == (n_frames, 13 * (order + 1))
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    # bins x frames layout: the transposes
    np.testing.assert_allclose(add_deltas(feats.T, order=order, window=window), ours.T, rtol=1e-6)
    if order:
        np.testing.assert_allclose(
            delta(feats, order=order, window=window, axis=0), ours[:, 13 * order : 13 * (order + 1)], rtol=1e-6
        )


def test_kaldi_delta_on_a_ramp():
    x = np.arange(20, dtype=np.float64)[None, :] * 3.0  # slope 3 per frame
    d = delta(x, order=1)
    np.testing.assert_allclose(d[0, 2:-2], 3.0)
    np.testing.assert_allclose(d[0, 0], (0.1 * 3 + 0.2 * 6) / 1.0)  # edge frames replicated: x[-1] = x[-2] = x[0]
    np.testing.assert_allclose(delta(x, order=2)[0, 4:-4], 0.0, atol=1e-12)


def test_delta_errors():
    x = np.zeros((3, 5))
    with pytest.raises(ParameterError, match=r"width \(9\) cannot exceed the number of frames \(5\)"):
        delta(x, method="librosa")
    with pytest.raises(ParameterError, match="width must be an odd integer"):
        delta(x, method="librosa", width=4)
    with pytest.raises(ParameterError, match="order must be a whole number >= 1"):
        delta(x, order=0)
    with pytest.raises(ParameterError, match="unknown delta method 'htk'; allowed: kaldi, librosa"):
        delta(x, method="htk")
    with pytest.raises(ParameterError, match="axis 2 is out of range"):
        delta(x, axis=2)


# --------------------------------------------------------------------------------------------
# CMVN
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("norm_vars", [False, True])
def test_utterance_cmvn_matches_kaldi_native_fbank(rng, norm_vars):
    knf = pytest.importorskip("kaldi_native_fbank")
    feats = (rng.standard_normal((700, 13)) * 4 + 10).astype(np.float32)
    stats = knf.compute_cmvn_stats(feats)
    ref = knf.apply_cmvn(stats, knf.CmvnOptions(norm_vars=norm_vars), feats)
    ours = cmvn(feats, mode="utterance", norm_vars=norm_vars, axis=0)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cmvn(feats.T, norm_vars=norm_vars), ours.T, rtol=1e-6, atol=1e-6)


def naive_sliding(feats, window=600, center=True, min_window=100, norm_vars=False):
    """Kaldi's SlidingWindowCmnInternal loop, transcribed (incremental double sums)."""
    x = np.asarray(feats, dtype=np.float64)
    n, dim = x.shape
    out = np.empty_like(x)
    last_s = last_e = -1
    s1 = np.zeros(dim)
    s2 = np.zeros(dim)
    for t in range(n):
        if center:
            ws = t - window // 2
            we = ws + window
        else:
            ws = t - window
            we = t + 1
        if ws < 0:
            we -= ws
            ws = 0
        if not center and we > t:
            we = max(t + 1, min_window)
        if we > n:
            ws -= we - n
            we = n
            ws = max(ws, 0)
        if last_s == -1:
            s1 = x[ws:we].sum(axis=0)
            s2 = (x[ws:we] ** 2).sum(axis=0)
        else:
            if ws > last_s:
                assert ws == last_s + 1
                s1 -= x[last_s]
                s2 -= x[last_s] ** 2
            if we > last_e:
                assert we == last_e + 1
                s1 += x[last_e]
                s2 += x[last_e] ** 2
        k = we - ws
        last_s, last_e = ws, we
        out[t] = x[t] - s1 / k
        if norm_vars:
            if k == 1:
                out[t] = 0.0
            else:
                var = s2 / k - s1 * s1 / (k * k)
                out[t] *= np.maximum(var, 1e-10) ** -0.5
    return out


@pytest.mark.parametrize("n_frames", [1, 2, 50, 99, 100, 101, 599, 600, 601, 1500])
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("norm_vars", [False, True])
def test_sliding_cmvn_matches_kaldi_loop(rng, n_frames, center, norm_vars):
    feats = rng.standard_normal((n_frames, 5)) * 3 + np.linspace(0, 20, n_frames)[:, None]
    ref = naive_sliding(feats, center=center, norm_vars=norm_vars)
    ours = cmvn(feats, mode="sliding", center=center, norm_vars=norm_vars, axis=0)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("window,min_window", [(10, 3), (7, 7), (1, 1), (5, 20)])
def test_sliding_cmvn_small_windows(rng, window, min_window):
    feats = rng.standard_normal((40, 3))
    for center in (True, False):
        if center and min_window > window:
            continue
        ref = naive_sliding(feats, window=window, center=center, min_window=min_window, norm_vars=True)
        ours = cmvn(feats, mode="sliding", window=window, center=center, min_window=min_window, norm_vars=True, axis=0)
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)


def test_sliding_window_bounds():
    s, e = sliding_cmvn_window(1000)
    assert (s[0], e[0]) == (0, 600)
    assert (s[500], e[500]) == (200, 800)
    assert (s[999], e[999]) == (400, 1000)
    s, e = sliding_cmvn_window(1000, center=False)
    assert (s[0], e[0]) == (0, 100) and (s[150], e[150]) == (0, 151) and (s[800], e[800]) == (200, 801)


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("block", [1, 37, 600, 5000])
def test_sliding_cmvn_stream_equals_whole(rng, center, block):
    feats = rng.standard_normal((13, 2345)) + 4.0  # bins x frames
    whole = cmvn(feats, mode="sliding", center=center, norm_vars=True)
    s = SlidingCmvn(center=center, norm_vars=True)
    parts = [s.accept(feats[:, i : i + block]) for i in range(0, feats.shape[1], block)]
    parts.append(s.finish())
    got = np.concatenate(parts, axis=1)
    np.testing.assert_allclose(got, whole, rtol=1e-9, atol=1e-9)
    assert s._frames.shape[0] <= 600 + 1 + 300 + block


def test_cmvn_errors_and_dtypes():
    with pytest.raises(ParameterError, match="unknown cmvn mode 'global'; allowed: utterance, sliding"):
        cmvn(np.zeros((3, 4)), mode="global")
    with pytest.raises(ParameterError, match="utterance CMVN needs at least one frame"):
        cmvn(np.zeros((3, 0)))
    with pytest.raises(ParameterError, match="window must be a whole number >= 1"):
        cmvn(np.zeros((3, 4)), mode="sliding", window=0)
    assert cmvn(np.ones((2, 5), dtype=np.float32)).dtype == np.float32
    np.testing.assert_array_equal(cmvn(np.ones((2, 5))), 0.0)
    np.testing.assert_array_equal(cmvn(np.ones((2, 5)), norm_vars=True), 0.0)  # variance floored, no NaN

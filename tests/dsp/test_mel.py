"""Tests of audiokit.dsp.mel: scales, filter bank and (log-)mel spectrograms vs librosa."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from audiokit.dsp.mel import (
    hz_to_mel,
    log_melspectrogram,
    mel_filterbank,
    mel_frequencies,
    mel_to_hz,
    melspectrogram,
)
from audiokit.dsp.stft import StftPlan, StftStream
from audiokit.errors import ParameterError

EPS = np.finfo(np.float64).eps


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_htk_formula():
    assert hz_to_mel(0.0) == 0.0
    assert hz_to_mel(700.0) == pytest.approx(2595 * np.log10(2), rel=4 * EPS)
    assert hz_to_mel(1000.0) == pytest.approx(2595 * np.log10(1 + 1000 / 700), rel=4 * EPS)
    assert isinstance(hz_to_mel(440.0), float)


def test_slaney_formula():
    assert hz_to_mel(600.0, scale="slaney") == pytest.approx(9.0, rel=4 * EPS)  # 3 f / 200
    assert hz_to_mel(1000.0, scale="slaney") == pytest.approx(15.0, rel=4 * EPS)
    assert hz_to_mel(6400.0, scale="slaney") == pytest.approx(15.0 + 27.0, rel=4 * EPS)


@pytest.mark.slow
@pytest.mark.parametrize("scale", ["htk", "slaney"])
def test_scales_vs_librosa_and_inverse(scale):
    librosa = pytest.importorskip("librosa")
    f = np.linspace(0, 24000, 1001)
    m = hz_to_mel(f, scale=scale)
    np.testing.assert_allclose(m, librosa.hz_to_mel(f, htk=scale == "htk"), rtol=8 * EPS, atol=8 * EPS)
    np.testing.assert_allclose(mel_to_hz(m, scale=scale), f, rtol=64 * EPS, atol=1e-9)
    np.testing.assert_allclose(mel_to_hz(m, scale=scale), librosa.mel_to_hz(m, htk=scale == "htk"), rtol=64 * EPS, atol=1e-9)
    assert np.all(np.diff(m) > 0)


def test_mel_frequencies():
    f = mel_frequencies(10, fmin=100, fmax=4000)
    assert f[0] == pytest.approx(100) and f[-1] == pytest.approx(4000)
    np.testing.assert_allclose(np.diff(hz_to_mel(f)), np.full(9, (hz_to_mel(4000) - hz_to_mel(100)) / 9), rtol=1e-12)


def test_bad_scale():
    with pytest.raises(ParameterError, match="mel scale must be one of htk, slaney; got 'bark'"):
        hz_to_mel(100.0, scale="bark")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sr", "n_fft", "n_mels"), [(16000, 512, 80), (22050, 1024, 128), (8000, 256, 40), (44100, 2048, 64), (16000, 401, 40)]
)
@pytest.mark.parametrize("scale", ["htk", "slaney"])
@pytest.mark.parametrize("norm", [None, "slaney"])
@pytest.mark.parametrize("band", [(0.0, None), (60.0, 0.45)])
def test_filterbank_equals_librosa(sr, n_fft, n_mels, scale, norm, band):
    librosa = pytest.importorskip("librosa")
    fmin, fmax_frac = band
    fmax = None if fmax_frac is None else fmax_frac * sr
    F = mel_filterbank(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, scale=scale, norm=norm)
    ref = librosa.filters.mel(
        sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, htk=scale == "htk", norm=norm, dtype=np.float64
    )
    assert F.shape == (n_mels, n_fft // 2 + 1) and F.dtype == np.float64
    np.testing.assert_allclose(F, ref, rtol=1e-10, atol=1e-12 * ref.max())


def test_filterbank_shape_properties():
    F = mel_filterbank(sr=16000, n_fft=512, n_mels=80)
    assert F.shape == (80, 257)
    assert F.max() <= 1.0 and F.min() >= 0.0
    # each bin is in at most two triangles, and rising + falling slopes sum to 1 inside the band
    assert np.all((F > 0).sum(axis=0) <= 2)
    c = mel_frequencies(82, fmin=0.0, fmax=8000.0)
    f = np.arange(257) * 16000 / 512
    inner = (f >= c[1]) & (f <= c[80])  # between the first and the last peak
    assert inner.sum() > 200
    np.testing.assert_allclose(F[:, inner].sum(axis=0), 1.0, atol=1e-12)
    assert mel_filterbank(sr=16000, n_fft=512, n_mels=80, dtype=np.float32).dtype == np.float32
    # slaney norm: area-normalised triangles = peak * 2 / (upper - lower)
    Fs = mel_filterbank(sr=16000, n_fft=512, n_mels=80, norm="slaney")
    np.testing.assert_allclose(Fs, F * (2 / (c[2:] - c[:-2]))[:, None], rtol=1e-12)


def test_empty_filters_warn():
    with pytest.warns(UserWarning, match=r"of 128 mel filters are empty .* n_mels=128 is too many for n_fft=128"):
        F = mel_filterbank(sr=16000, n_fft=128, n_mels=128)
    assert np.any(F.max(axis=1) == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mel_filterbank(sr=16000, n_fft=512, n_mels=80)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"fmax": 9000.0}, r"fmax must satisfy fmin \(0 Hz\) < fmax <= sr/2 \(8000 Hz\), got 9000.0"),
        ({"fmin": 500.0, "fmax": 400.0}, r"fmax must satisfy fmin \(500 Hz\) < fmax"),
        ({"fmin": -1.0}, r"fmin must be a number >= 0 \(Hz\), got -1.0"),
        ({"n_mels": 0}, r"n_mels must be an integer > 0, got 0"),
        ({"n_fft": 0}, r"n_fft must be an integer > 0, got 0"),
        ({"norm": "l2"}, r"norm must be None or 'slaney'; got 'l2'"),
        ({"scale": "mel"}, r"mel scale must be one of htk, slaney; got 'mel'"),
    ],
)
def test_filterbank_errors(kwargs, match):
    args = {"sr": 16000, "n_fft": 512, **kwargs}
    with pytest.raises(ParameterError, match=match):
        mel_filterbank(**args)


@pytest.mark.slow
@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("pad_mode", ["constant", "reflect"])
@pytest.mark.parametrize(("scale", "norm"), [("htk", None), ("slaney", "slaney")])
@pytest.mark.parametrize("power", [2.0, 1.0])
def test_melspectrogram_equals_librosa(rng, center, pad_mode, scale, norm, power):
    librosa = pytest.importorskip("librosa")
    sr, n_fft, win, hop = 16000, 512, 400, 160
    x = rng.uniform(-1, 1, 12_345)
    plan = StftPlan(sr=sr, win_length=win, hop_length=hop, n_fft=n_fft, center=center, pad_mode=pad_mode)
    M = melspectrogram(x, plan, n_mels=80, scale=scale, norm=norm, power=power)
    ref = librosa.feature.melspectrogram(
        y=x,
        sr=sr,
        n_fft=n_fft,
        hop_length=hop,
        win_length=win,
        window="hann",
        center=center,
        pad_mode=pad_mode,
        power=power,
        n_mels=80,
        htk=scale == "htk",
        norm=norm,
    )
    assert M.shape == ref.shape == (80, plan.n_frames(len(x))) and M.dtype == np.float64
    # librosa's bank is float32 by default: 1e-5 relative
    np.testing.assert_allclose(M, ref, rtol=0, atol=1e-5 * ref.max())
    # with a float64 bank the only differences are rounding
    bank = librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=80, htk=scale == "htk", norm=norm, dtype=np.float64)
    S = np.abs(librosa.stft(x, n_fft=n_fft, hop_length=hop, win_length=win, center=center, pad_mode=pad_mode)) ** power
    exact = bank @ S
    np.testing.assert_allclose(M, exact, rtol=0, atol=1e-12 * exact.max())


@pytest.mark.filterwarnings("ignore::audiokit.dsp.mel.DuplicateBandsWarning")  # 80 bands at n_fft 400 / 512: the default warns
def test_article_mel_shape():
    plan = StftPlan(sr=22050, win_length=512, hop_length=128)
    x = np.random.default_rng(0).uniform(-1, 1, 52225).astype(np.float32)
    M = log_melspectrogram(x, plan)
    assert M.shape == (80, 405) and M.dtype == np.float32


def test_float32_melspectrogram(rng):
    x = rng.uniform(-1, 1, (2, 8000)).astype(np.float32)
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True)
    M = melspectrogram(x, plan)
    assert M.shape == (2, 80, 51) and M.dtype == np.float32
    ref = melspectrogram(x.astype(np.float64), plan)
    np.testing.assert_allclose(M, ref, rtol=0, atol=1e-5 * ref.max())


@pytest.mark.slow
@pytest.mark.parametrize("ref", [1.0, "max", 3.0])
@pytest.mark.parametrize("top_db", [80.0, None, 30.0])
def test_log_mel_db_equals_librosa(rng, ref, top_db):
    librosa = pytest.importorskip("librosa")
    x = rng.uniform(-1, 1, 8000)
    x[2000:5000] = 0.0  # silence: floored, finite
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True)
    L = log_melspectrogram(x, plan, ref=ref, top_db=top_db)
    M = librosa.feature.melspectrogram(y=x, sr=16000, n_fft=512, hop_length=160, win_length=400, n_mels=80, htk=True, norm=None)
    expected = librosa.power_to_db(M, ref=np.max if ref == "max" else ref, top_db=top_db)
    assert np.all(np.isfinite(L))
    np.testing.assert_allclose(L, expected, rtol=0, atol=1e-4)


def test_log_mel_ln_and_magnitude(rng):
    x = rng.uniform(-1, 1, 8000)
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)
    M = melspectrogram(x, plan)
    L = log_melspectrogram(x, plan, log="ln", top_db=None, amin=1e-6)
    np.testing.assert_allclose(L, np.log(np.maximum(1e-6, M)), rtol=1e-12, atol=1e-12)
    # top_db in nepers for ln: 40 dB = 4 ln(10) / 1... of power
    L40 = log_melspectrogram(x, plan, log="ln", top_db=40.0)
    full = np.log(np.maximum(1e-10, M))
    np.testing.assert_allclose(L40, np.maximum(full, full.max() - 4 * np.log(10)), rtol=1e-12, atol=1e-12)
    M1 = melspectrogram(x, plan, power=1.0)
    D1 = log_melspectrogram(x, plan, power=1.0, top_db=None)
    np.testing.assert_allclose(D1, 20 * np.log10(np.maximum(1e-5, M1)), rtol=1e-12, atol=1e-10)
    with pytest.raises(ParameterError, match="log must be one of db, ln; got 'log2'"):
        log_melspectrogram(x, plan, log="log2")


def test_log_mel_stream_then_rescale(rng):
    """Streaming log-mel (ref 1, no top_db) + rescale_db == one-shot with ref='max', top_db."""
    from audiokit.dsp.scaling import rescale_db

    x = rng.uniform(-1, 1, 20_000)
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True, pad_mode="reflect")
    bank = mel_filterbank(sr=16000, n_fft=512)
    s = StftStream(plan, output="power", filterbank=bank, log="db")
    parts = [s.push(x[i : i + 3001]) for i in range(0, len(x), 3001)] + [s.finish()]
    running_max = max(p.max() for p in parts if p.size)
    L = rescale_db(np.concatenate(parts, axis=-1), ref_db="max", top_db=60.0, max_db=running_max)
    expected = log_melspectrogram(x, plan, filterbank=bank, ref="max", top_db=60.0)
    np.testing.assert_allclose(L, expected, rtol=0, atol=1e-10)


def test_filterbank_argument(rng):
    x = rng.uniform(-1, 1, 4000)
    plan = StftPlan(sr=16000, win_length=256, hop_length=128)
    bank = mel_filterbank(sr=16000, n_fft=256, n_mels=20, fmin=100.0)
    np.testing.assert_allclose(
        melspectrogram(x, plan, filterbank=bank), melspectrogram(x, plan, n_mels=20, fmin=100.0), rtol=1e-12
    )
    with pytest.raises(ParameterError, match=r"filterbank must be shaped \(n_mels, n_freqs=129\), got \(20, 257\)"):
        melspectrogram(x, plan, filterbank=np.ones((20, 257)))

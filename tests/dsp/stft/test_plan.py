"""Tests of audiokit.dsp.stft.plan: StftPlan parameters, derived quantities, frame counts and times."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from audiokit.dsp.stft import StftPlan, spectrogram
from audiokit.dsp.windows import get_window
from audiokit.errors import ParameterError


def test_article_numbers():
    plan = StftPlan(sr=22050, win_length=512, hop_length=128)
    assert plan.n_fft == 512 and plan.n_freqs == 257
    assert plan.n_frames(52225) == 405
    x = np.zeros(52225, np.float32)
    assert spectrogram(x, plan).shape == (257, 405)


def test_plan_derived_quantities():
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)
    assert plan.delta_f == 16000 / 512
    assert plan.delta_t == 160 / 16000
    np.testing.assert_array_equal(plan.freqs, np.fft.rfftfreq(512, 1 / 16000))
    assert plan.win_offset == 56 and plan.pad == 0
    assert plan.padded_window[:56].sum() == 0 and plan.padded_window[456:].sum() == 0
    np.testing.assert_array_equal(plan.padded_window[56:456], get_window("hann", 400))
    assert plan.n_frames(16000) == 1 + (16000 - 512) // 160
    centred = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, center=True)
    assert centred.pad == 256 and centred.n_frames(16000) == 1 + 16000 // 160
    assert StftPlan(sr=8000, win_length=5, hop_length=2, center=True).n_frames(10) == 1 + (10 + 4 - 5) // 2
    assert plan.window_spec == "hann" and StftPlan(sr=1, win_length=8, hop_length=2, window="Kaiser:4").window_spec == "kaiser:4"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.hop_length = 3  # frozen


@pytest.mark.slow
def test_times():
    librosa = pytest.importorskip("librosa")
    plan = StftPlan(sr=16000, win_length=512, hop_length=128)
    np.testing.assert_allclose(plan.times(4), np.arange(4) * 128 / 16000)
    np.testing.assert_allclose(plan.times(4, where="centre"), (np.arange(4) * 128 + 256) / 16000)
    c = StftPlan(sr=16000, win_length=512, hop_length=128, center=True)
    np.testing.assert_allclose(c.times(5, where="center"), librosa.frames_to_time(np.arange(5), sr=16000, hop_length=128))
    np.testing.assert_allclose(c.times(2), (np.arange(2) * 128 - 256) / 16000)
    with pytest.raises(ParameterError, match="where must be 'start' or 'centre', got 'end'"):
        plan.times(3, where="end")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"win_length": 0}, r"win_length must be an integer > 0 \(samples\), got 0"),
        ({"hop_length": -1}, r"hop_length must be an integer > 0 \(samples\), got -1"),
        ({"hop_length": 2.5}, r"hop_length must be an integer > 0 \(samples\), got 2.5"),
        ({"n_fft": 100}, r"n_fft must be an integer >= win_length \(256\), got 100"),
        ({"sr": 0}, r"sr must be a number > 0 \(Hz\), got 0"),
        ({"window": "gauss"}, r"unknown window 'gauss'; allowed: rectangular, hann"),
        ({"window": "hann", "beta": 3.0}, r"beta applies to the kaiser window only"),
        ({"pad_mode": "edge"}, r"pad_mode must be one of constant, reflect; got 'edge'"),
        ({"dtype": "int16"}, r"dtype must be one of float32, float64 or None; got 'int16'"),
    ],
)
def test_plan_errors(kwargs, match):
    base = {"sr": 16000, "win_length": 256, "hop_length": 64}
    with pytest.raises(ParameterError, match=match):
        StftPlan(**{**base, **kwargs})


@pytest.mark.parametrize("n_fft", [None, 512, np.int64(512)])
def test_n_fft_is_an_int_after_construction(n_fft):
    plan = StftPlan(sr=16000, win_length=400 if n_fft is not None else 512, hop_length=np.int32(160), n_fft=n_fft)
    assert type(plan.n_fft) is int and plan.n_fft == 512
    assert type(plan.win_length) is int and type(plan.hop_length) is int
    assert plan == StftPlan(sr=16000, win_length=plan.win_length, hop_length=160, n_fft=512)
    assert hash(plan) == hash(StftPlan(sr=16000, win_length=plan.win_length, hop_length=160, n_fft=512))


def test_plan_repr_and_replace():
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, window="kaiser:4", dtype=np.float32)
    assert repr(plan) == (
        "StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512, window='kaiser', beta=4.0, "
        "periodic=True, center=False, pad_mode='constant', dtype='float32')"
    )
    other = dataclasses.replace(plan, hop_length=100)
    assert other.hop_length == 100 and other.n_fft == 512 and other.window_spec == "kaiser:4"
    assert dataclasses.replace(plan, n_fft=None, win_length=256).n_fft == 256


@pytest.mark.slow
def test_window_sumsquare_equals_librosa():
    librosa = pytest.importorskip("librosa")
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)
    ref = librosa.filters.window_sumsquare(window="hann", n_frames=7, hop_length=160, win_length=400, n_fft=512, dtype=np.float64)
    np.testing.assert_allclose(plan.window_sumsquare(7), ref, rtol=1e-12, atol=1e-15)
    with pytest.raises(ParameterError, match="n_frames must be >= 1, got 0"):
        plan.window_sumsquare(0)


def test_invertible_is_scipy_nola():
    import scipy.signal as ss

    for hop in (64, 100, 200, 256):
        plan = StftPlan(sr=16000, win_length=256, hop_length=hop, window="hann")
        assert plan.invertible == ss.check_NOLA(ss.get_window("hann", 256), 256, 256 - hop)


def test_bins_between_keeps_the_bins_inside_the_range():
    plan = StftPlan(sr=16000, win_length=400, hop_length=160, n_fft=512)  # bins 31.25 Hz apart
    rows = plan.bins_between(100.0, 1000.0)
    assert (rows.start, rows.stop) == (4, 33)  # 125 Hz .. 1000 Hz inclusive
    assert plan.freqs[rows][0] >= 100 and plan.freqs[rows][-1] <= 1000
    with pytest.raises(ParameterError, match="must be below --fmax"):
        plan.bins_between(1000.0, 100.0)
    with pytest.raises(ParameterError, match="contains no bin"):
        plan.bins_between(100.0, 110.0)

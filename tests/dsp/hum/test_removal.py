"""Tests of audiokit.dsp.hum.removal: erase depth and settings, and the streaming HumRemover
(output + removed = input, alignment of the delayed erase output, re-runs, parameter errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from audiokit.dsp.hum import HumEraser, HumRemover, HumSubtractor, analyze_hum, dehum
from audiokit.engine import get_backend
from audiokit.errors import ParameterError
from tests.helpers.hum_signals import SR, hum, programme, quiet

EPS = np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def hummed():
    """Two channels: a programme plus hum, and hum alone at half the level; and its analysis."""
    rng = np.random.default_rng(5)
    n = 3 * SR + 123
    h, _ = hum(50.01, n, amp=0.1)
    x = np.stack([programme(rng, n) + h, 0.5 * h])
    return x, analyze_hum(x, sr=SR, freq=50)


def run(remover, x, block):
    """Concatenated ``(output, removed)`` of ``remover.run`` over blocks of ``block`` samples, and the pieces."""
    pairs = list(remover.run(x[:, i : i + block] for i in range(0, x.shape[1], block)))
    return np.concatenate([y for y, _ in pairs], axis=1), np.concatenate([r for _, r in pairs], axis=1), pairs


# ----------------------------------------------------------------------------- erase


def _band_power(x, freqs, sr=SR):
    spec = np.abs(get_backend().rfft(x * np.hanning(len(x)))) ** 2
    f = np.fft.rfftfreq(len(x), 1 / sr)
    return np.array([spec[np.abs(f - c) < 0.5].sum() for c in freqs])


def test_erase_removes_the_line_bins_and_keeps_the_rest(rng):
    n = 4 * SR
    t = np.arange(n) / SR
    clean = 0.2 * np.sin(2 * np.pi * 440 * t) + 0.002 * rng.standard_normal(n)
    h, _ = hum(50.0, n, amp=0.1, harmonics=(1, 2, 3))
    x = clean + h
    res = dehum(x, sr=SR, freq=50, method="erase")
    lines = [50.0, 100.0, 150.0]
    drop = 10 * np.log10(_band_power(res.output, lines) / _band_power(x, lines))
    assert np.all(drop < -25)
    assert 10 * np.log10(_band_power(res.output, [440.0]) / _band_power(x, [440.0]))[0] == pytest.approx(0, abs=0.05)
    # away from the erased bands the output is the input
    far = _band_power(res.output - clean, [300.0, 700.0, 2000.0])
    assert np.all(far < 1e-6 * _band_power(x, [50.0]))


@pytest.mark.slow
def test_erase_width_and_window(rng):
    n = 4 * SR
    h, _ = hum(50.0, n, amp=0.1, harmonics=(1, 2))
    x = h + 0.002 * rng.standard_normal(n)
    a = analyze_hum(x, sr=SR, freq=50)
    er = HumEraser(a)
    assert (er.win_length, er.width_hz) == (16000, 4.0)
    er = HumEraser(a, win_length=32000, width_hz=3.0)
    assert (er.plan.hop_length, er.width_hz) == (8000, 3.0)
    y = np.concatenate([er.push(x[None]), er.finish()], axis=1)
    assert y.shape == (1, n)
    with pytest.raises(ParameterError, match="at least 4 periods"):
        HumEraser(a, win_length=1000)
    with pytest.raises(ParameterError, match="width_hz must be a number of Hz > 0"):
        HumEraser(a, width_hz=0)


# ----------------------------------------------------------------------------- HumRemover


@pytest.mark.slow
@pytest.mark.parametrize("method", ["subtract", "erase"])
@pytest.mark.parametrize("block", [1000, 4096, 1 << 16])
def test_remover_output_plus_removed_is_the_input(hummed, method, block):
    x, a = hummed
    y, removed, pairs = run(HumRemover(a, method), x, block)
    assert y.shape == removed.shape == x.shape and y.dtype == removed.dtype == np.float64
    # removed is input - output, computed in float64: exactly
    np.testing.assert_array_equal(removed, x - y)
    # so output + removed gives the input back to the rounding of that one subtraction
    assert np.all(np.abs((y + removed) - x) <= EPS * (np.abs(x) + np.abs(removed)))
    assert np.abs(removed).max() > 0.01  # the hum was removed


@pytest.mark.slow
@pytest.mark.parametrize("block", [777, 1001, 5000, 16001])
def test_erase_pairs_are_aligned_with_the_input(hummed, block):
    # block sizes that do not divide the 16000-sample window nor its 4000-sample hop
    x, a = hummed
    y, removed, pairs = run(HumRemover(a, "erase"), x, block)
    start = 0
    for out, rem in pairs:
        n = out.shape[1]
        assert n > 0 and rem.shape == out.shape
        np.testing.assert_array_equal(rem, x[:, start : start + n] - out)
        start += n
    assert start == x.shape[1]
    # the same samples as the eraser fed in one go (batched FFTs: rounding only)
    er = HumEraser(a)
    whole = np.concatenate([er.push(x), er.finish()], axis=1)
    np.testing.assert_allclose(y, whole, rtol=0, atol=1e-9)
    # the pairs follow the overlap-add (whole hops of 4000 samples), not the input blocks
    assert all(out.shape[1] % 4000 == 0 for out, _ in pairs[:-1])


def test_subtract_pairs_follow_the_input_blocks(hummed):
    x, a = hummed
    y, _, pairs = run(HumRemover(a), x, 777)
    assert [p[0].shape[1] for p in pairs] == [min(777, x.shape[1] - i) for i in range(0, x.shape[1], 777)]
    np.testing.assert_array_equal(y, HumSubtractor(a).process(x))


@pytest.mark.slow
def test_remover_can_run_twice(hummed):
    # the CLI's --normalize reads the removal once for the peak, then again to write
    x, a = hummed
    for method in ("subtract", "erase"):
        remover = HumRemover(a, method)
        first, _, _ = run(remover, x, 3000)
        again, _, _ = run(remover, x, 3000)
        np.testing.assert_array_equal(first, again)


@pytest.mark.slow
def test_dehum_streams_through_the_remover(hummed):
    x, a = hummed
    for method in ("subtract", "erase"):
        res = dehum(x, sr=SR, freq=50, method=method, block_size=4096)
        y, removed, _ = run(HumRemover(res.analysis, method), x, 4096)
        np.testing.assert_array_equal(res.output, y)
        np.testing.assert_array_equal(res.residual, removed)


def test_nothing_found_passes_through():
    x = programme(np.random.default_rng(2), 2 * SR)[None]
    a = quiet(analyze_hum, x, sr=SR, freq=50)
    assert not a.found
    for method in ("subtract", "erase"):
        y, removed, _ = run(HumRemover(a, method), x, 5000)
        np.testing.assert_array_equal(y, x)
        assert not removed.any()


def test_empty_input_yields_nothing():
    x = np.zeros((1, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = analyze_hum(x, sr=SR, freq=50)
    for method in ("subtract", "erase"):
        assert list(HumRemover(a, method).run([x])) == []


def test_eraser_settings_for_reports(hummed):
    _, a = hummed
    assert HumRemover(a).eraser is None
    er = HumRemover(a, "erase", win_length=32000, width_hz=3.0).eraser
    assert (er.win_length, er.width_hz, er.plan.hop_length) == (32000, 3.0, 8000)
    assert (HumRemover(a, "erase").eraser.win_length, HumRemover(a, "erase").eraser.width_hz) == (16000, 4.0)


@pytest.mark.parametrize(
    "method, kwargs, message",
    [
        ("subtract", {"win_length": 16000}, r"win_length and width_hz apply to method='erase' only"),
        ("subtract", {"width_hz": 4.0}, r"win_length and width_hz apply to method='erase' only"),
        ("notch", {}, r"unknown method 'notch'; allowed: subtract, erase"),
        (
            "erase",
            {"win_length": 1000},
            r"the erase window must hold at least 4 periods of the fundamental "
            r"\(0\.0\d+ s = 1280 samples\) to resolve the hum lines; got 1000 samples",
        ),
        ("erase", {"win_length": 16000.0}, r"win_length must be a whole number of samples, got 16000\.0"),
        ("erase", {"win_length": True}, r"win_length must be a whole number of samples, got True"),
        ("erase", {"width_hz": 0}, r"width_hz must be a number of Hz > 0, got 0"),
        ("erase", {"width_hz": float("nan")}, r"width_hz must be a number of Hz > 0, got nan"),
    ],
)
def test_remover_checks_its_parameters_at_construction(hummed, method, kwargs, message):
    _, a = hummed
    with pytest.raises(ParameterError, match=message):
        HumRemover(a, method, **kwargs)


def test_erase_refuses_a_stream_of_another_length(hummed):
    x, a = hummed
    with pytest.raises(ParameterError, match=r"erase: the blocks hold 1000 samples, the analysis 48123"):
        list(HumRemover(a, "erase").run([x[:, :1000]]))
    with pytest.raises(ParameterError, match=r"erase: the blocks hold more than the analysed 48123 samples"):
        list(HumRemover(a, "erase").run([x, x[:, :10]]))
    with pytest.raises(ParameterError, match=r"blocks must be shaped \(2, n\), got \(48123,\)"):
        list(HumRemover(a).run([x[0]]))

"""Tests of audiokit.dsp.hum analysis and one-shot dehum: fundamental and drift estimates, subtraction
depth, clean pass-through, detection per harmonic, auto 50/60, streaming equals one-shot, errors.

Removal (erase, HumRemover) is in test_removal.py, the building blocks in test_track.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiokit.dsp.hum import (
    DEFAULT_THRESHOLD_DB,
    HumMeter,
    HumSubtractor,
    analyze_hum,
    analyze_hum_blocks,
    dehum,
)
from audiokit.errors import ParameterError
from tests.helpers.hum_signals import SR, hum, hum_energy, programme, quiet, reduction_db, sdr

# ----------------------------------------------------------------------------- estimates


def test_fundamental_is_estimated_within_10_mhz(rng):
    n = 3 * SR
    h, _ = hum(50.03, n)
    a = analyze_hum(h + 0.01 * rng.standard_normal(n), sr=SR, freq=50)
    assert abs(a.f0 - 50.03) < 0.01
    assert np.all(np.abs(a.f0_track - 50.03) < 0.01)
    assert a.treated_harmonics == (1, 2, 3, 4, 5)


def test_drift_is_tracked(rng):
    n = 4 * SR

    def drift(t):
        return 0.08 * np.sin(2 * np.pi * t / 3.0)

    h, phase = hum(60.0, n, drift=drift)
    x = h + 0.01 * rng.standard_normal(n)
    a = analyze_hum(x, sr=SR, freq=60)
    inner = (a.times > 0.5) & (a.times < 3.5)
    assert np.max(np.abs(a.frequency(a.times[inner]) - (60 + drift(a.times[inner])))) < 0.01
    # the reported track (slope over ±0.5 s) smooths a little: this drift is 10x faster than a grid's
    assert np.max(np.abs(a.f0_track[inner] - (60 + drift(a.times[inner])))) < 0.02
    assert a.f0_track.max() - a.f0_track.min() > 0.12  # the drift is followed, not averaged out
    out = HumSubtractor(a).process(x[None])[0]
    assert reduction_db(x - h, x, out, phase, range(1, 6)) <= -30


# ----------------------------------------------------------------------------- subtraction


def test_subtract_removes_30_db_of_hum_under_a_programme(rng):
    n = 3 * SR
    clean = programme(rng, n)
    h, phase = hum(50.02, n, amp=0.1, harmonics=tuple(range(1, 9)))
    res = dehum(clean + h, sr=SR, freq=50)
    assert reduction_db(clean, clean + h, res.output, phase, range(1, 9)) <= -30
    assert sdr(clean, res.output) >= 30
    np.testing.assert_allclose(res.residual, clean + h - res.output)


def test_clean_signal_passes_through_untouched(rng):
    n = 3 * SR
    clean = programme(rng, n)
    with pytest.warns(UserWarning, match="no hum found near 50 Hz"):
        res = dehum(clean, sr=SR, freq=50)
    assert res.analysis.treated_harmonics == ()
    assert sdr(clean, res.output) >= 30
    np.testing.assert_array_equal(res.output, clean)


def test_harmonics_that_are_absent_are_not_treated(rng):
    n = 3 * SR
    clean = programme(rng, n)
    h, phase = hum(50.0, n, amp=0.08, harmonics=(1, 3, 5))
    res = dehum(clean + h, sr=SR, freq=50)
    a = res.analysis
    assert a.treated_harmonics == (1, 3, 5)
    # the removed signal holds (next to) nothing at the untreated lines: < -60 dB re the fundamental
    for k in (2, 4, 6, 7):
        assert hum_energy(res.residual, phase, [k]) < 1e-6 * hum_energy(h, phase, [1])
    assert reduction_db(clean, clean + h, res.output, phase, (1, 3, 5)) <= -30


def test_a_partial_two_hz_from_a_line_is_kept(rng):
    n = 4 * SR
    t = np.arange(n) / SR
    note = 0.05 * np.sin(2 * np.pi * 102.0 * t)  # 2 Hz from the 2nd harmonic
    clean = note + 0.003 * rng.standard_normal(n)
    h, phase = hum(50.0, n, amp=0.1, harmonics=(1, 2, 3))
    out = dehum(clean + h, sr=SR, freq=50).output
    trim = SR // 2
    basis = np.stack([np.sin(2 * np.pi * 102 * t), np.cos(2 * np.pi * 102 * t)], 1)[trim:-trim]
    coef, *_ = np.linalg.lstsq(basis, out[trim:-trim], rcond=None)
    assert 20 * math.log10(np.hypot(*coef) / 0.05) == pytest.approx(0, abs=0.2)
    assert reduction_db(clean, clean + h, out, phase, (1, 2, 3)) <= -25


def test_channels_are_treated_separately(rng):
    n = 3 * SR
    clean = np.stack([programme(rng, n), programme(rng, n)])
    h, _ = hum(50.0, n, amp=0.1)
    x = clean + np.stack([h, np.zeros(n)])
    res = dehum(x, sr=SR, freq=50)
    assert res.analysis.treated[0, :5].all() and not res.analysis.treated[1].any()
    np.testing.assert_array_equal(res.output[1], x[1])
    assert sdr(clean[0], res.output[0]) > 30


def test_meter_shows_the_lines_brought_down_to_the_floor(rng):
    n = 3 * SR
    clean = programme(rng, n)
    h, _ = hum(50.0, n, amp=0.1)
    res = dehum(clean + h, sr=SR, freq=50)
    a = res.analysis
    treated = a.treated[0]
    assert np.all(res.after_db[0, treated] < a.level_db[0, treated] - 20)
    assert np.all(np.abs(res.after_db[0, treated] - a.floor_db[0, treated]) < 10)
    # untreated lines keep their level (within the model's faint sidebands)
    np.testing.assert_allclose(res.after_db[0, ~treated], a.level_db[0, ~treated], atol=2.0)
    meter = HumMeter(a)
    meter.push((clean + h)[None])
    again = meter.finish()[0]  # the same projection as the analysis (along the refined track)
    np.testing.assert_allclose(again[treated], a.level_db[0, treated], atol=0.05)


# ----------------------------------------------------------------------------- auto, streaming


def test_auto_picks_60_for_a_60_hz_hum(rng):
    n = 3 * SR
    h, _ = hum(59.97, n, amp=0.1)
    a = analyze_hum(programme(rng, n) + h, sr=SR)
    assert (a.nominal, a.auto) == (60.0, True)
    assert a.f0 == pytest.approx(59.97, abs=0.01)
    h, _ = hum(50.0, n, amp=0.1)
    assert analyze_hum(programme(rng, n) + h, sr=SR).nominal == 50.0


@pytest.mark.slow
@pytest.mark.parametrize("block", [13, 777, 16000])
def test_blocks_equal_one_shot(rng, block):
    n = 3 * SR + 123
    h, _ = hum(50.01, n, amp=0.1)
    x = np.stack([programme(rng, n) + h, 0.5 * h])
    one = dehum(x, sr=SR, freq=50, block_size=1 << 20)
    a = analyze_hum_blocks(lambda: (x[:, i : i + block] for i in range(0, n, block)), sr=SR, channels=2, n_samples=n, freq=50)
    np.testing.assert_allclose(a.psi, one.analysis.psi, atol=1e-9)
    np.testing.assert_allclose(a.amplitudes, one.analysis.amplitudes, atol=1e-9)
    np.testing.assert_array_equal(a.treated, one.analysis.treated)
    sub = HumSubtractor(a)
    y = np.concatenate([sub.process(x[:, i : i + block]) for i in range(0, n, block)], axis=1)
    np.testing.assert_allclose(y, one.output, atol=1e-6)  # float32 synthesis: a few ulps
    er = dehum(x, sr=SR, freq=50, method="erase", block_size=1 << 20)
    streamed = dehum(x, sr=SR, freq=50, method="erase", block_size=block)
    np.testing.assert_allclose(streamed.output, er.output, atol=1e-9)


# ----------------------------------------------------------------------------- odd input, errors


def test_short_input_warns_and_passes_through():
    x = 0.1 * np.sin(2 * np.pi * 50 * np.arange(4000) / SR)
    with pytest.warns(UserWarning, match="too short to measure hum"):
        res = dehum(x, sr=SR, freq=50)
    np.testing.assert_array_equal(res.output, x)


def test_silence_warns_and_passes_through():
    with pytest.warns(UserWarning, match="silent"):
        res = dehum(np.zeros(SR), sr=SR)
    assert not res.analysis.found and np.all(res.output == 0)


def test_harmonics_are_capped_below_nyquist(rng):
    n = 2 * 8000
    h, _ = hum(50.0, n, amp=0.1, sr=8000)
    with pytest.warns(UserWarning, match="harmonics above 79 would reach the Nyquist"):
        a = analyze_hum(h + 0.001 * rng.standard_normal(n), sr=8000, freq=50, harmonics=100)
    assert len(a.harmonics) == 79
    assert len(quiet(analyze_hum, h, sr=8000, freq=50, harmonics=3).harmonics) == 3


def test_threshold_decides(rng):
    n = 2 * SR
    h, _ = hum(50.0, n, amp=0.02)
    x = h + 0.01 * rng.standard_normal(n)
    assert analyze_hum(x, sr=SR, freq=50).found
    with pytest.warns(UserWarning, match="no hum found"):
        assert not analyze_hum(x, sr=SR, freq=50, threshold_db=300).found
    assert DEFAULT_THRESHOLD_DB == 8.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"freq": -50}, "freq must be > 0 and below the Nyquist frequency 8000 Hz, got -50 Hz"),
        ({"freq": 9000}, "below the Nyquist"),
        ({"freq": "50"}, "freq must be a frequency in Hz or None"),
        ({"method": "notch"}, "unknown method 'notch'; allowed: subtract, erase"),
        ({"harmonics": 0}, "harmonics must be a whole number >= 1, got 0"),
        ({"threshold_db": math.nan}, "threshold_db must be a finite number"),
        ({"width_hz": 4.0}, "apply to method='erase' only"),
        ({"sr": 0}, "sr must be a whole number of Hz > 0"),
    ],
)
def test_bad_parameters(kwargs, message):
    args = {"sr": SR, **kwargs}
    with pytest.raises(ParameterError, match=message):
        dehum(np.zeros(SR), **args)


def test_bad_samples():
    with pytest.raises(ParameterError, match="x must be a float array"):
        dehum(np.zeros((1, 2, 3)), sr=SR)
    with pytest.raises(ParameterError, match="NaN or Inf"):
        dehum(np.array([0.0, np.nan] * SR), sr=SR)


@pytest.mark.slow
def test_intermittent_signal_at_the_lines_is_averaged_out(rng):
    # syllable-like bursts (0.2 s, random phase, 10 dB above the hum) sit right on the lines
    # half of the time: the amplitudes come from the gaps, not from a plain average
    n = 8 * SR
    t = np.arange(n) / SR
    h, phase = hum(50.0, n, amp=0.02, harmonics=(1, 2, 3, 4, 5, 6))
    clean = 0.002 * rng.standard_normal(n)
    burst = int(0.2 * SR)
    for start in range(0, n - burst, 2 * burst):
        if rng.random() < 0.5:
            continue
        seg = slice(start, start + burst)
        env = np.hanning(burst)
        for k in (2, 3, 4, 5, 6):
            clean[seg] += 3 * 0.02 / k * env * np.cos(2 * np.pi * 50.0 * k * t[seg] + rng.uniform(0, 2 * np.pi))
    res = dehum(clean + h, sr=SR, freq=50)
    assert res.analysis.treated_harmonics == (1, 2, 3, 4, 5, 6)
    assert reduction_db(clean, clean + h, res.output, phase, range(1, 7)) <= -25


def test_float_rounding_is_not_taken_for_a_line():
    # no noise at all: the lines far up read float32 rounding of the demodulation (~-100 dB), not hum
    t = np.arange(3 * SR) / SR
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 50.02 * t)
    assert analyze_hum(x, sr=SR, freq=50).treated_harmonics == (1,)


# ----------------------------------------------------------------------------- do no harm, wrong frequency (issue 14)


def _state_with_rows(rows):
    """An analysis state after detect() whose 1 s frame amplitudes are ``rows`` (K, M), all treated."""
    from audiokit.dsp.hum.state import AnalysisState

    s = AnalysisState.checked(SR, 1, 10 * SR, 50.0, None, DEFAULT_THRESHOLD_DB)
    k, m = rows.shape
    s.harmonics = np.arange(1, k + 1)
    s.rate, s.length, s.hop = 200.0, 201, 50  # 1 s frames, hop 0.25 s
    s.rot, s.weights = rows.astype(complex), np.ones((k, m))
    s.choice = np.full(k, 2)  # 8 s spans
    s.treated = s.detected = np.ones((1, k), bool)
    return s


def test_do_no_harm_drops_a_line_that_the_other_frames_do_not_predict(rng):
    from audiokit.dsp.hum.fit import do_no_harm

    m = 40
    steady = 0.01 * np.exp(0.3j) + 1e-4 * (rng.standard_normal(m) + 1j * rng.standard_normal(m))
    wild = 0.01 * (rng.standard_normal(m) + 1j * rng.standard_normal(m))  # speech-like: no phase lock
    s = _state_with_rows(np.stack([steady, wild, steady]))
    do_no_harm(s)
    assert s.treated.tolist() == [[True, False, True]]
    assert s.harmless.tolist() == [[False, True, False]]
    # without its fundamental or a low series, the channel is not hum at all
    s = _state_with_rows(np.stack([wild, wild, steady]))
    do_no_harm(s)
    assert not s.treated.any() and s.harmless[0, :2].all()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_hum_40_db_under_the_programme_is_not_made_worse(seed):
    rng = np.random.default_rng(seed)
    n = 6 * SR
    t = np.arange(n) / SR
    # a programme with a held note whose partials sit 2-3 Hz from the lines
    clean = programme(rng, n) + sum(0.02 / q * np.sin(2 * np.pi * q * 76.3 * t + q) for q in range(1, 8))
    h, _ = hum(50.0, n, amp=1.0, harmonics=(1, 2, 3, 4, 5, 6))
    h *= 10 ** (-40 / 20) * np.sqrt(np.mean(clean**2) / np.mean(h**2))
    x = clean + h
    assert sdr(clean, quiet(dehum, x, sr=SR, freq=50).output) >= sdr(clean, x)


def test_a_freq_whose_window_misses_the_hum_removes_nothing_and_hints():
    n = 4 * SR
    clean = programme(np.random.default_rng(3), n)
    h, _ = hum(50.0, n, amp=0.05)
    for freq in (51,):
        with pytest.warns(UserWarning, match=rf"no hum found near {freq:g} Hz.*a strong line at 50.0 Hz: try --freq 50"):
            res = dehum(clean + h, sr=SR, freq=freq)
        np.testing.assert_array_equal(res.output, clean + h)
    with pytest.warns(UserWarning, match=r"no hum found near 60 Hz.*a strong line at 50.0 Hz: try --freq 50"):
        res = dehum(clean + h, sr=SR, freq=60)
    np.testing.assert_array_equal(res.output, clean + h)


@pytest.mark.slow
def test_hum_levels_match_the_truth_for_both_methods(rng):
    n = 6 * SR
    clean = programme(rng, n)
    h, phase = hum(50.02, n, amp=0.05)
    for method in ("subtract", "erase"):
        res = dehum(clean + h, sr=SR, freq=50, method=method)
        lv = res.levels
        for k in range(1, 6):
            truth = 20 * math.log10(0.05 / k)
            assert lv.db("before")[0, k - 1] == pytest.approx(truth, abs=1.0)
            assert lv.db("removed")[0, k - 1] == pytest.approx(truth, abs=1.0)
            # the error left at the line (remaining + other removed) against (output - clean) on the true phase
            err = hum_energy(res.output - clean, phase, [k]) / (n / 2)  # peak amplitude²
            est = lv.remaining[0, k - 1] + lv.other_removed[0, k - 1]
            assert 10 * math.log10(est / err) == pytest.approx(0, abs=6.0)
        assert np.all(lv.remaining[0, 5:] >= lv.floor[0, 5:])  # untreated lines: at least their floor

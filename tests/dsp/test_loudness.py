"""audiokit.dsp.loudness: K-weighting, channel weights, gating, true peak and the streaming meter, against the
BS.1770-4 table, closed forms and a naive whole-signal implementation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal

from audiokit.dsp.loudness import (
    LoudnessMeter,
    TruePeakMeter,
    channel_weights,
    energy_to_lufs,
    gated_integral,
    k_weighting_sos,
    layout_names,
    loudness_range,
    oversampling_factor,
)
from audiokit.dsp.loudness.kweighting import BS1770_48K
from audiokit.dsp.loudness.truepeak import interpolation_filter


def test_k_weighting_at_48k_is_the_bs1770_table():
    sos = k_weighting_sos(48000)
    np.testing.assert_allclose(sos[:, [0, 1, 2, 4, 5]], np.array(BS1770_48K), rtol=0, atol=1e-8)
    assert (sos[:, 3] == 1.0).all()


@pytest.mark.parametrize("sr", [8000, 16000, 22050, 44100, 48000, 96000, 192000])
def test_k_weighting_gain_at_997_hz_is_the_0691_offset(sr):
    # -0.691 in the loudness formula is there so that a 997 Hz sine reads its own level: the filter gain there is
    # +0.691 dB at 48 kHz; the bilinear transform (pre-warped at each corner) bends the shelf's shape a little at
    # other rates: measured +0.731 dB at 16 kHz, +0.664 at 192 kHz (libebur128's filters, the same design, alike).
    _, h = signal.sosfreqz(k_weighting_sos(sr), worN=[997.0], fs=sr)
    assert 20 * np.log10(abs(h[0])) == pytest.approx(0.691, abs=0.001 if sr == 48000 else 0.05)


@pytest.mark.parametrize(
    ("n", "mask", "names", "weights"),
    [
        (1, None, ("FC",), [1.0]),
        (2, None, ("FL", "FR"), [1.0, 1.0]),
        (4, None, ("FL", "FR", "BL", "BR"), [1, 1, 1.41, 1.41]),
        (5, None, ("FL", "FR", "FC", "BL", "BR"), [1, 1, 1, 1.41, 1.41]),
        (6, None, ("FL", "FR", "FC", "LFE", "BL", "BR"), [1, 1, 1, 0, 1.41, 1.41]),
        (6, 0x60F, ("FL", "FR", "FC", "LFE", "SL", "SR"), [1, 1, 1, 0, 1.41, 1.41]),
        (8, 0x63F, ("FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"), [1, 1, 1, 0, 1.41, 1.41, 1.41, 1.41]),
        (2, 0x4, ("FC", "?"), [1.0, 1.0]),
        (3, 0x108, ("LFE", "BC", "?"), [0.0, 1.0, 1.0]),
    ],
)
def test_channel_layout_rule(n, mask, names, weights):
    assert layout_names(n, mask) == names
    np.testing.assert_array_equal(channel_weights(n, mask), weights)


def test_gating_closed_forms():
    assert gated_integral(np.array([])) == (-math.inf, -math.inf)
    assert gated_integral(np.zeros(10)) == (-math.inf, -math.inf)
    z = 10 ** ((-23 + 0.691) / 10)
    loud, gate = gated_integral(np.full(8, z))
    assert loud == pytest.approx(-23.0, abs=1e-12) and gate == pytest.approx(-33.0, abs=1e-12)
    # one block 15 LU below the others falls under the relative gate (mean of all minus 10 LU), then counts no more
    quiet = 10 ** ((-38 + 0.691) / 10)
    assert gated_integral(np.array([z, z, z, quiet]))[0] == pytest.approx(-23.0, abs=1e-12)
    # two blocks 5 LU apart both pass: the loudness of their mean energy
    z5 = 10 ** ((-28 + 0.691) / 10)
    assert gated_integral(np.array([z, z5]))[0] == pytest.approx(10 * math.log10((z + z5) / 2) - 0.691, abs=1e-12)
    np.testing.assert_array_equal(energy_to_lufs(np.array([0.0, 1.0])), [-math.inf, -0.691])


def test_loudness_range_closed_form():
    levels = np.linspace(-30, -10, 201)  # 0.1 LU apart: the nearest-rank percentiles are exact values
    energies = 10 ** ((levels + 0.691) / 10)
    lra, low, high = loudness_range(energies)
    assert low == pytest.approx(-28.0, abs=1e-9) and high == pytest.approx(-11.0, abs=1e-9)
    assert lra == pytest.approx(17.0, abs=1e-9)
    assert loudness_range(np.zeros(40)) is None
    assert loudness_range(np.array([])) is None


def naive_loudness(x: np.ndarray, sr: int, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """BS.1770-4 straight from its text: filter the whole signal, mean square of every 400 ms block every 100 ms."""
    y = signal.sosfilt(k_weighting_sos(sr), x, axis=-1)
    bounds = [(k * sr + 5) // 10 for k in range(x.shape[1] * 10 // sr + 2)]
    energies = []
    j = 0
    while j + 4 < len(bounds) and bounds[j + 4] <= x.shape[1]:
        seg = y[:, bounds[j] : bounds[j + 4]]
        energies.append(float(weights @ np.mean(seg**2, axis=1)))
        j += 1
    z = np.array(energies)
    loud = z[-0.691 + 10 * np.log10(np.maximum(z, 1e-300)) > -70]
    gate = -0.691 + 10 * np.log10(loud.mean()) - 10
    kept = loud[-0.691 + 10 * np.log10(loud) > gate]
    return -0.691 + 10 * np.log10(kept.mean()), z


@pytest.mark.parametrize("sr", [8000, 11025, 44100, 48000])
@pytest.mark.parametrize("block", [1000, 4801, 65536])
def test_meter_equals_the_naive_whole_signal_computation(rng, sr, block):
    n = int(4.37 * sr)
    x = rng.normal(0, 0.1, size=(2, n)) * np.linspace(0.01, 1, n)  # a fade-in: the relative gate removes the start
    meter = LoudnessMeter(sr, 2, true_peak=False)
    for i in range(0, n, block):
        meter.push(x[:, i : i + block])
    r = meter.result()
    expected, z = naive_loudness(x, sr, np.ones(2))
    assert r.integrated == pytest.approx(expected, abs=1e-9)
    np.testing.assert_allclose(r.momentary, energy_to_lufs(z), atol=1e-9)
    assert r.short_term.size == r.momentary.size - 26
    assert r.n_samples == n
    np.testing.assert_array_equal(r.sample_peak, np.abs(x).max(axis=1))


def test_results_do_not_depend_on_the_block_size(rng):
    x = rng.normal(0, 0.2, size=(2, 48000 * 5))
    results = []
    for block in (x.shape[1], 777, 65536):
        meter = LoudnessMeter(48000, 2)
        for i in range(0, x.shape[1], block):
            meter.push(x[:, i : i + block])
        results.append(meter.result())
    for r in results[1:]:
        assert r.integrated == pytest.approx(results[0].integrated, abs=1e-10)
        np.testing.assert_allclose(r.short_term, results[0].short_term, atol=1e-10)
        assert r.lra == pytest.approx(results[0].lra, abs=1e-10)
        assert r.momentary_max == pytest.approx(results[0].momentary_max, abs=1e-10)
        assert r.short_term_max == pytest.approx(results[0].short_term_max, abs=1e-10)
        np.testing.assert_allclose(r.true_peak, results[0].true_peak, rtol=1e-6)


def naive_true_peak(x: np.ndarray, factor: int) -> np.ndarray:
    """Every output of the interpolator: upfirdn of the whole signal, outputs n*L + p for n < len(x)."""
    if factor == 1:
        return np.abs(x).max(axis=1)
    h = interpolation_filter(factor)
    y = np.stack([signal.upfirdn(h, row, up=factor)[: row.size * factor] for row in x])
    return np.abs(y).max(axis=1)


@pytest.mark.parametrize("sr", [8000, 44100, 48000, 96000, 192000])
@pytest.mark.parametrize("kind", ["noise", "sine", "bursts"])
def test_true_peak_equals_every_output_evaluated(rng, sr, kind):
    n = sr // 2 + 37
    t = np.arange(n) / sr
    if kind == "noise":
        x = rng.normal(0, 0.2, size=(2, n))
    elif kind == "sine":  # a sine at sr/4 with its peaks between samples: true peak 3 dB above the sample peak
        x = np.stack([np.sin(2 * np.pi * sr / 4 * t + np.pi / 4), 0.5 * np.sin(2 * np.pi * 0.1 * sr * t)])
    else:
        x = rng.normal(0, 0.05, size=(2, n)) * (rng.random((2, n)) < 0.001) * 20
    meter = TruePeakMeter(sr, 2)
    for i in range(0, n, 5000):
        meter.push(x[:, i : i + 5000])
    assert meter.factor == oversampling_factor(sr) == (4 if sr < 96000 else 2 if sr < 192000 else 1)
    np.testing.assert_allclose(meter.peak, naive_true_peak(x, meter.factor), rtol=2e-6)
    assert (meter.peak >= meter.sample_peak).all()


def test_true_peak_of_a_quarter_rate_sine_between_samples():
    sr = 48000
    t = np.arange(sr) / sr
    x = np.sin(2 * np.pi * 12000 * t + np.pi / 4)[None, :]  # samples at +-0.707, the peaks of 1.0 between them
    meter = TruePeakMeter(sr, 1)
    meter.push(x)
    assert 20 * np.log10(meter.sample_peak[0]) == pytest.approx(-3.01, abs=0.01)
    # Tech 3341's true-peak tolerance (+0.2 / -0.4 dB); the 49-tap filter's ripple near sr/4 reads +0.10 dB
    assert -0.4 <= 20 * np.log10(meter.peak[0]) <= 0.2


def test_silence_and_short_inputs_have_defined_results():
    meter = LoudnessMeter(48000, 2)
    meter.push(np.zeros((2, 48000 * 4)))
    r = meter.result()
    assert r.integrated == -math.inf and r.integrated_reason == "every block at or below the -70 LUFS absolute gate"
    assert r.lra is None and r.lra_low is None
    assert r.momentary_max == -math.inf and (r.momentary == -math.inf).all()
    assert (r.true_peak == 0).all()
    short = LoudnessMeter(48000, 1)
    short.push(np.full((1, 19199), 0.5))  # 1 sample short of 400 ms
    r = short.result()
    assert r.integrated == -math.inf and r.integrated_reason == "shorter than one 400 ms block"
    assert r.momentary.size == 0 and r.short_term.size == 0 and r.short_term_max == -math.inf
    short.push(np.full((1, 1), 0.5))
    r = short.result()
    assert r.momentary.size == 1 and r.integrated_reason is None and r.lra is None
    empty = LoudnessMeter(44100, 1).result()
    assert empty.n_samples == 0 and empty.integrated == -math.inf


def test_meter_checks_its_input():
    with pytest.raises(ValueError, match="shape"):
        LoudnessMeter(48000, 2).push(np.zeros((3, 10)))
    with pytest.raises(ValueError, match="weights"):
        LoudnessMeter(48000, 2, weights=np.ones(3))


def naive_window_max(x: np.ndarray, sr: int, ticks: int) -> float:
    """Largest energy of a window of ``ticks`` 10 ms ticks, at every tick (whole windows only)."""
    y2 = signal.sosfilt(k_weighting_sos(sr), x, axis=-1) ** 2
    bounds = [(k * sr + 50) // 100 for k in range(x.shape[1] * 100 // sr + 2)]
    bounds = [b for b in bounds if b <= x.shape[1]]
    best = 0.0
    for j in range(len(bounds) - ticks):
        seg = y2[:, bounds[j] : bounds[j + ticks]]
        best = max(best, float(seg.sum() / seg.shape[1]))
    return best


@pytest.mark.parametrize("block", [441, 10007, 1 << 16])
def test_maxima_are_over_windows_at_10_ms_steps(rng, block):
    sr = 44100
    x = np.zeros((2, int(4.2 * sr)))
    burst = slice(int(0.537 * sr), int(0.537 * sr) + int(0.4 * sr))  # off the 100 ms grid
    x[:, burst] = rng.normal(0, 0.3, size=(2, burst.stop - burst.start))
    meter = LoudnessMeter(sr, 2, true_peak=False)
    for i in range(0, x.shape[1], block):
        meter.push(x[:, i : i + block])
    r = meter.result()
    assert r.momentary_max == pytest.approx(float(energy_to_lufs(np.array(naive_window_max(x, sr, 40)))), abs=1e-9)
    assert r.short_term_max == pytest.approx(float(energy_to_lufs(np.array(naive_window_max(x, sr, 300)))), abs=1e-9)
    assert r.momentary_max > r.momentary.max()  # the 100 ms series misses the burst's alignment


def test_peak_positions():
    sr = 48000
    x = np.zeros((2, sr))
    x[0, 12345] = -0.9  # a lone sample: its interpolated neighbours are smaller, the peak is the sample
    t = np.arange(4000) / sr
    x[1, 20000:24000] = 0.5 * np.sin(2 * np.pi * sr / 4 * t + np.pi / 4) * np.hanning(4000)  # peaks between samples
    meter = LoudnessMeter(sr, 2)
    for i in range(0, sr, 7000):
        meter.push(x[:, i : i + 7000])
    r = meter.result()
    assert r.sample_peak_position[0] == 12345 and r.true_peak_position[0] == 12345.0
    assert 21900 < r.true_peak_position[1] < 22100 and r.true_peak_position[1] % 1 == 0.5
    assert r.true_peak[1] > r.sample_peak[1] * 1.3
    assert LoudnessMeter(sr, 2, true_peak=False).result().true_peak is None


def test_biquad_kernel_is_scipy_sosfilt_bit_for_bit(rng, monkeypatch):
    from audiokit.dsp.loudness import biquads

    sos = k_weighting_sos(44100)
    x = rng.normal(size=(3, 5000))
    state = np.zeros((3, 2, 2))
    first = biquads.sos_filter(sos, x[:, :1234], state)
    second = biquads.sos_filter(sos, x[:, 1234:], state)
    expected = signal.sosfilt(sos, x, axis=-1)
    assert np.array_equal(np.concatenate([first, second], axis=1), expected)
    assert biquads._kernel() is not biquads._public_kernel  # the compiled kernel was found in this scipy
    public_state = np.zeros((3, 2, 2))
    monkeypatch.setattr(biquads, "_kernel", lambda: biquads._public_kernel)  # another scipy: the public function
    again = np.concatenate(
        [biquads.sos_filter(sos, x[:, :1234], public_state), biquads.sos_filter(sos, x[:, 1234:], public_state)], axis=1
    )
    assert np.array_equal(again, expected) and np.array_equal(public_state, state)


@pytest.mark.slow
def test_measuring_does_not_import_scipy_signal():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from audiokit.dsp.loudness import LoudnessMeter; m = LoudnessMeter(48000, 2); "
        "m.push(np.ones((2, 48000)) * 0.1); m.result(); print('scipy.signal' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"

"""Tests of the hum analysis' building blocks: audiokit.dsp.hum.track and audiokit.dsp.hum.smoothing."""

from __future__ import annotations

import numpy as np
import pytest

from audiokit.dsp.hum.smoothing import convolve_frames, hann_kernel, kernel_smooth, overlap_factor
from audiokit.dsp.hum.track import (
    Demodulator,
    Framer,
    LongTermSpectrum,
    decimation_factor,
    find_fundamental,
    frame_length,
    n_decimated,
    odd,
)
from tests.helpers.hum_signals import SR, hum


def test_convolve_frames_is_a_centred_convolution(rng):
    for n in (1, 5, 33, 70, 600):
        for width in (1, 3, 9, 65, 257):
            a = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))
            ker = hann_kernel(width)
            half = len(ker) // 2
            ref = np.array([np.convolve(row, ker)[half : half + n] for row in a])
            np.testing.assert_allclose(convolve_frames(a, ker), ref, atol=1e-9)


@pytest.mark.parametrize("width", [0.5, 2.0, 7.3, 32.0])
def test_hann_kernel_is_odd_symmetric_and_excludes_the_centre(width):
    ker = hann_kernel(width)
    assert len(ker) % 2 == 1
    np.testing.assert_array_equal(ker, ker[::-1])
    assert ker[len(ker) // 2] == 1.0
    held = hann_kernel(width, exclude=2)
    assert not held[len(ker) // 2 - 1 : len(ker) // 2 + 2].any()


def test_kernel_smooth_of_a_constant_is_the_constant(rng):
    y = np.full((3, 40), 0.2 - 0.1j)
    mean, den = kernel_smooth(y, rng.uniform(0.5, 2.0, (3, 40)), hann_kernel(9))
    np.testing.assert_allclose(mean, y, atol=1e-15)
    assert np.all(den > 0)


def test_overlap_factor_of_frames_that_do_not_overlap_is_one():
    assert overlap_factor(np.hanning(9), 9) == 1.0
    assert overlap_factor(np.ones(8), 4) == pytest.approx(2.0)  # half overlap: ρ(1) = 1/2 on each side


def test_odd_and_frame_length():
    assert [odd(n) for n in (0, 1, 2, 3, 200)] == [1, 1, 3, 3, 201]
    assert frame_length(1.0, 200.0) == 201 and frame_length(0.5, 200.0) == 101


@pytest.mark.parametrize("n_samples", [1, 50, 101, 1000])
def test_framer_covers_every_decimated_sample(n_samples):
    framer = Framer(n_samples=n_samples, length=200, hop=50)
    assert framer.length == 201
    g, idx = framer.weights(np.arange(framer.n_frames))
    covered = np.zeros(n_samples, bool)
    covered[idx[g > 0]] = True
    assert covered.all()


def test_demodulator_does_not_depend_on_the_block_sizes(rng):
    n = 2 * SR + 37
    x = rng.standard_normal((2, n)) * 0.1
    decim = decimation_factor(SR)

    def run(block):
        dem = Demodulator(harmonics=[1, 2, 5], channels=2, decim=decim, phase=lambda k: k * (50.02 / SR))
        return np.concatenate([dem.push(x[:, i : i + block]) for i in range(0, n, block)], axis=-1)

    whole = run(n)
    assert whole.shape == (2, 3, n_decimated(n, decim)) and whole.dtype == np.complex64
    np.testing.assert_array_equal(run(333), whole)


def test_long_term_spectrum_finds_the_fundamental_of_a_hum(rng):
    # lines 20-40 dB above the noise: under the 30 dB cap of each harmonic's vote the sum peaks
    # at the fundamental (lines far above it saturate every vote over a main lobe: a plateau)
    n = 3 * SR
    h, _ = hum(50.04, n, amp=0.1)
    x = h + 0.1 * rng.standard_normal(n)
    lts = LongTermSpectrum(sr=SR, n_samples=n, fmax=300.0)
    for i in range(0, n, 4000):
        lts.push(x[None, i : i + 4000])
    assert lts.df == SR / (2 * 24000)  # segments of half the signal (1.5 s), zero-padded twice
    f0, score, prom = find_fundamental(lts.finish(), lts.df, lo=49.5, hi=50.5, kmax=5, fmax=300.0)
    assert f0 == pytest.approx(50.04, abs=0.05)  # coarse (bins of 0.33 Hz): the drift tracking refines it
    assert 0 < score < 5 * 30 and np.all(prom > 6.0)

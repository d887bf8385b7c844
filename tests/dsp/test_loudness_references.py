"""audiokit.dsp.loudness against the real meters on synthetic programme at 8-192 kHz, mono to 5.1: libebur128
(``pyebur128``), ffmpeg's ``ebur128=peak=true`` filter and pyloudnorm.

The material is noise in bands with a speech-like envelope, a tone, and level steps, 20 s (so LRA is not 0 and the
relative gate removes something).  libebur128 is the tight reference (the same filter design and interpolator):
integrated loudness within 0.01 LU, LRA within 0.1 LU (it takes short-term values every 1 s, we every 100 ms),
true peak within 0.01 dB.  ffmpeg prints one decimal: within 0.1 LU + 0.05 of print rounding for I and LRA; its
true peak resamples to 192 kHz with its own filter: within 0.3 dB (measured up to 0.22).  pyloudnorm designs its K-weighting its own way
and has no LFE exclusion (5.1 is not compared): within 0.1 LU where it agrees with libebur128 to 0.1 LU.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.loudness import LoudnessMeter, LoudnessResult

pytestmark = pytest.mark.slow  # reference libraries and an ffmpeg process per case

SRS = [8000, 16000, 22050, 44100, 48000, 96000, 192000]
CHANNELS = [1, 2, 5, 6]


def programme(sr: int, channels: int, seed: int) -> np.ndarray:
    """20 s of band noise under a syllable-rate envelope, a 440 Hz tone and steps of -6/0/-15 dB, per channel."""
    rng = np.random.default_rng(seed)
    n = 20 * sr
    t = np.arange(n) / sr
    spectrum = np.fft.rfft(rng.normal(size=(channels, n)), axis=-1)
    f = np.fft.rfftfreq(n, 1 / sr)
    spectrum *= 1 / np.sqrt(np.maximum(f, 50.0) / 50.0)  # pink-ish
    noise = np.fft.irfft(spectrum, n, axis=-1)
    noise /= noise.std()
    envelope = np.abs(np.sin(2 * np.pi * 2.5 * t + rng.uniform(0, 3, (channels, 1)))) ** 2
    steps = np.repeat([0.5, 1.0, 0.18, 1.0], n // 4 + 1)[:n]
    x = 0.12 * steps * (envelope * noise + 0.3 * np.sin(2 * np.pi * 440 * t))
    return x * np.linspace(1.0, 0.6, channels)[:, None]


def ours(x: np.ndarray, sr: int) -> LoudnessResult:
    meter = LoudnessMeter(sr, x.shape[0])
    for i in range(0, x.shape[1], 1 << 16):
        meter.push(x[:, i : i + (1 << 16)])
    return meter.result()


def ffmpeg_summary(path) -> dict[str, float]:
    run = subprocess.run(
        ["ffmpeg", "-nostats", "-hide_banner", "-i", str(path), "-af", "ebur128=peak=true", "-f", "null", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = run.stderr[run.stderr.rindex("Summary:") :]
    found = {
        key: float(re.search(rf"{label}:\s+(-?[\d.]+|-inf)", summary).group(1))
        for key, label in (("I", "I"), ("LRA", "LRA"), ("TP", "Peak"))
    }
    return found


@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("sr", SRS)
def test_against_libebur128(sr, channels):
    pyebur128 = pytest.importorskip("pyebur128")
    x = programme(sr, channels, seed=sr + channels)
    r = ours(x, sr)
    mode = pyebur128.MeasurementMode
    state = pyebur128.R128State(channels, sr, mode.MODE_I | mode.MODE_LRA | mode.MODE_TRUE_PEAK | mode.MODE_SAMPLE_PEAK)
    state.add_frames(np.ascontiguousarray(x.T).ravel(), x.shape[1])
    # libebur128 cuts 100 ms into round(sr / 10) samples; at 22.05 kHz that is the same, at 11.025 it is not (0.006 LU)
    assert r.integrated == pytest.approx(pyebur128.get_loudness_global(state), abs=0.01)
    assert r.lra == pytest.approx(pyebur128.get_loudness_range(state), abs=0.1)
    for c in range(channels):
        assert 20 * math.log10(r.true_peak[c]) == pytest.approx(20 * math.log10(pyebur128.get_true_peak(state, c)), abs=0.01)
        assert r.sample_peak[c] == pytest.approx(pyebur128.get_sample_peak(state, c), rel=1e-12)


@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("sr", SRS)
def test_against_ffmpeg(tmp_path, sr, channels):
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg not installed")
    x = programme(sr, channels, seed=sr + channels)
    path = tmp_path / "programme.wav"
    sf.write(path, x.T.astype(np.float32), sr, subtype="FLOAT")
    r = ours(sf.read(path, dtype="float32", always_2d=True)[0].T, sr)
    ref = ffmpeg_summary(path)
    assert r.integrated == pytest.approx(ref["I"], abs=0.15)
    assert r.lra == pytest.approx(ref["LRA"], abs=0.15)
    assert 20 * math.log10(r.true_peak.max()) == pytest.approx(ref["TP"], abs=0.3)


@pytest.mark.parametrize("channels", [1, 2, 5])
@pytest.mark.parametrize("sr", SRS)
def test_against_pyloudnorm_where_it_agrees_with_libebur128(sr, channels):
    pyln = pytest.importorskip("pyloudnorm")
    pyebur128 = pytest.importorskip("pyebur128")
    x = programme(sr, channels, seed=sr + channels)
    state = pyebur128.R128State(channels, sr, pyebur128.MeasurementMode.MODE_I)
    state.add_frames(np.ascontiguousarray(x.T).ravel(), x.shape[1])
    reference = pyln.Meter(sr).integrated_loudness(x.T)
    if abs(reference - pyebur128.get_loudness_global(state)) > 0.1:
        pytest.skip(f"pyloudnorm and libebur128 differ by {reference - pyebur128.get_loudness_global(state):+.3f} LU here")
    assert ours(x, sr).integrated == pytest.approx(reference, abs=0.1)

"""audiokit.dsp.silence against a naive implementation of its definition, and against ffmpeg ``silencedetect``."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.silence import PeakFrameLevel, SilenceTracker, Span, complement
from audiokit.pipelines.silence import SilenceOptions, detect_silence
from tests.helpers.sox_stats import needs_ffmpeg

SR = 16000


def naive_silences(x: np.ndarray, frame: int, threshold_db: float, min_silence: int, min_speech: int = 0, hangover: int = 0):
    """The module docstring's definition, frame by frame and run by run (x: (channels, n))."""
    n = x.shape[1]
    silent = []
    for m in range(0, n, frame):
        power = max(float(np.mean(c[m : m + frame] ** 2)) for c in x)
        silent.append(power > 0 and 10 * np.log10(power) < threshold_db or power == 0 and threshold_db > -np.inf)
    runs, i = [], 0
    while i < len(silent):
        if silent[i]:
            j = i
            while j < len(silent) and silent[j]:
                j += 1
            runs.append([i * frame, min(j * frame, n)])
            i = j
        else:
            i += 1
    merged: list[list[int]] = []
    for run in runs:
        if merged and run[0] - merged[-1][1] < min_speech:
            merged[-1][1] = run[1]
        elif not merged and run[0] < min_speech:
            merged.append([0, run[1]])
        else:
            merged.append(run)
    if merged and n - merged[-1][1] < min_speech:
        merged[-1][1] = n
    out = []
    for start, end in (m for m in merged if m[1] - m[0] >= min_silence):
        start += hangover if start > 0 else 0
        end -= hangover if end < n else 0
        if end > start:
            out.append(Span(start, end))
    return out


def _track(x: np.ndarray, block: int, frame: int, threshold_db: float, **kwargs) -> list[Span]:
    tracker = SilenceTracker(frame, threshold_db, **kwargs)
    for start in range(0, x.shape[1], block):
        tracker.update(x[:, start : start + block])
    return tracker.finish()


def _bursts(n: int, rng: np.random.Generator, channels: int = 1) -> np.ndarray:
    """Noise switched between -60 dB and 0 dB in 50-sample steps, per channel."""
    gains = rng.choice([0.001, 1.0], size=(channels, n // 50 + 1))
    return rng.standard_normal((channels, n)) * np.repeat(gains, 50, axis=1)[:, :n]


@pytest.mark.parametrize("seed", range(40))
def test_tracker_is_the_naive_definition_for_any_blocks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4000))
    x = _bursts(n, rng, channels=int(rng.integers(1, 3)))
    frame, block = int(rng.choice([1, 7, 16, 160])), int(rng.integers(1, 700))
    lengths = {
        "min_silence": int(rng.integers(1, 300)),
        "min_speech": int(rng.integers(0, 120)),
        "hangover": int(rng.integers(0, 40)),
    }
    got = _track(x, block, frame, -30.0, **lengths)
    assert got == naive_silences(x, frame, -30.0, **lengths)


def test_min_speech_joins_and_hangover_shrinks() -> None:
    x = np.zeros((1, 1000))
    x[0, 400:410] = 0.5  # a 10-sample click inside a pause
    assert _track(x, 64, 1, -40, min_silence=100) == [Span(0, 400), Span(410, 1000)]
    assert _track(x, 64, 1, -40, min_silence=100, min_speech=20) == [Span(0, 1000)]
    assert _track(x, 64, 1, -40, min_silence=100, hangover=30) == [Span(0, 370), Span(440, 1000)]
    assert complement([Span(0, 370), Span(440, 1000)], 1000) == [Span(370, 440)]


def test_per_sample_frames_are_an_amplitude_threshold() -> None:
    threshold = 10 ** (-40 / 20)
    x = np.array([[0.0, threshold * 0.999, threshold, -threshold * 0.999, 0.0, 0.0]])
    assert _track(x, 2, 1, -40.0, min_silence=1) == [Span(0, 2), Span(3, 6)]  # |x| = threshold is not silent


def test_peak_frame_level() -> None:
    peak = PeakFrameLevel(4)
    peak.update(np.array([[0.1, 0.1, 0.1, 0.1, 0.5, 0.5]]))
    assert peak.level_db == pytest.approx(10 * np.log10(0.25))  # the partial last frame [0.5, 0.5]


def test_relative_threshold_follows_the_file_level(tmp_path) -> None:
    t = np.arange(2 * SR) / SR
    x = 0.5 * np.sin(2 * np.pi * 300 * t) * (t < 1) + 0.005 * np.sin(2 * np.pi * 300 * t) * (t >= 1)  # -46 dB quieter
    for gain, name in ((1.0, "loud.wav"), (0.01, "quiet.wav")):
        sf.write(tmp_path / name, gain * x, SR, subtype="FLOAT")
    options = SilenceOptions(threshold="-30dB", relative=True)
    loud, quiet = (detect_silence(str(tmp_path / name), options) for name in ("loud.wav", "quiet.wav"))
    assert loud["silences"] == quiet["silences"] and [s["start_sample"] for s in loud["silences"]] == [SR]
    assert loud["threshold_db"] == pytest.approx(quiet["threshold_db"] + 40, abs=1e-6)


def test_digital_silence_is_all_silent_even_relative(tmp_path) -> None:
    sf.write(tmp_path / "zero.wav", np.zeros(SR), SR, subtype="PCM_16")
    report = detect_silence(str(tmp_path / "zero.wav"), SilenceOptions(relative=True, threshold="-20dB"))
    assert [(s["start_sample"], s["end_sample"]) for s in report["silences"]] == [(0, SR)] and report["sound"] == []
    assert report["threshold_db"] is None and report["reference_db"] is None


# --- ffmpeg silencedetect ------------------------------------------------------------------------------------


def ffmpeg_silences(path, noise_db: float, seconds: float) -> list[tuple[float, float]]:
    """``silencedetect=noise=…dB:d=…``: (start, end) seconds of each silence (a silence running to the end is
    closed at the end)."""
    done = subprocess.run(
        [needs_ffmpeg(), "-hide_banner", "-nostats", "-i", str(path), "-af", f"silencedetect=noise={noise_db}dB:d={seconds}",
         "-f", "null", "-"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    starts = [float(v) for v in re.findall(r"silence_start: (-?[\d.e+-]+)", done.stderr)]
    ends = [float(v) for v in re.findall(r"silence_end: (-?[\d.e+-]+)", done.stderr)]
    return list(zip(starts, ends, strict=True))


def _speechlike(n: int, rng: np.random.Generator) -> np.ndarray:
    """Tone bursts of random lengths (0.1-1.2 s) between pauses (0.2-1.5 s) of noise at -70 dBFS peak-ish."""
    x, at = np.zeros(n), int(rng.integers(0, SR // 2))
    while at < n:
        length = int(rng.uniform(0.1, 1.2) * SR)
        t = np.arange(min(length, n - at)) / SR
        x[at : at + t.size] = 0.3 * np.sin(2 * np.pi * rng.uniform(150, 900) * t) + 0.05 * rng.standard_normal(t.size)
        at += t.size + int(rng.uniform(0.2, 1.5) * SR)
    return x + 0.0001 * rng.standard_normal(n)


@pytest.mark.slow
@pytest.mark.parametrize("seed, channels", [(0, 1), (1, 1), (2, 1), (3, 2)])
def test_same_definition_as_ffmpeg_agrees_within_one_sample(tmp_path, seed: int, channels: int) -> None:
    rng = np.random.default_rng(seed)
    first = _speechlike(12 * SR, rng)
    x = np.stack([first, 0.7 * np.roll(first, 200)][:channels], axis=1)  # stereo: the second channel 12.5 ms late
    path = tmp_path / "talk.wav"
    sf.write(path, x, SR, subtype="PCM_16")
    ours = detect_silence(str(path), SilenceOptions(threshold="-50dB", min_silence="0.5s", frame="1"))
    theirs = ffmpeg_silences(path, -50, 0.5)
    assert len(theirs) == len(ours["silences"]) > 3
    for (start, end), span in zip(theirs, ours["silences"], strict=True):
        # ffmpeg prints times to 6 significant digits; one sample is 62.5 us
        assert abs(start - span["start"]) <= 1 / SR + 5e-6 * max(1, start)
        assert abs(end - span["end"]) <= 1 / SR + 5e-6 * max(1, end)

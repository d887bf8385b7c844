"""The PNG of a long spectrogram/mel in two frame ranges on two threads (:mod:`audiokit.pipelines.timefreq_split`).

Reference: the one-pass job (the split threshold out of reach).  The PNG bytes must be equal: the frames of a range
are the frames of the whole (the STFT of a frame depends on its samples only), and the merge is a maximum.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

import audiokit.pipelines.timefreq_split as split
from audiokit.pipelines.params import InputOptions
from audiokit.pipelines.stft_frontend import StftFrontEnd
from audiokit.pipelines.timefreq import StftOptions, TimeFreqOptions

SR = 16000


@pytest.fixture
def calls(monkeypatch):
    """Split from 10 frames on (the real threshold is for speed, not meaning); count the split runs."""
    seen = []
    real = split.pool_in_ranges

    def spy(*args, **kwargs):
        seen.append(args[0].n_frames)
        return real(*args, **kwargs)

    monkeypatch.setattr(split, "SPLIT_MIN_FRAMES", 10)
    monkeypatch.setattr("audiokit.pipelines.timefreq.pool_in_ranges", spy)
    return seen


def _one_pass(monkeypatch, cli, *args):
    with monkeypatch.context() as m:
        m.setattr(split, "SPLIT_MIN_FRAMES", 1 << 62)
        code, _, err = cli(*args)
    assert code == 0, err
    return err


def _signal(channels=1, seconds=3.0, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    y = 0.3 * np.sin(2 * np.pi * (300 + 2000 * t) * t) + 0.05 * rng.standard_normal(t.size)
    y[SR : SR + 40] += 0.6  # a click: lands in one range
    return np.stack([y * (c + 1) / channels for c in range(channels)])


@pytest.mark.parametrize(
    "command, args, channels",
    [
        ("spectrogram", ["--nfft", "512", "--win", "512", "--hop", "128"], 1),
        ("spectrogram", ["--win", "25ms", "--hop", "10ms", "--freq-scale", "log"], 2),
        ("mel", ["--nfft", "1024"], 1),
        ("spectrogram", ["--hop", "7", "--win", "64", "--size", "300x200"], 1),
    ],
)
def test_split_png_equals_the_one_pass_png(cli, monkeypatch, tmp_path, calls, command, args, channels):
    src = tmp_path / "in.wav"
    sf.write(src, _signal(channels).T, SR, subtype="PCM_16")
    code, _, err = cli(command, src, *args, "-o", tmp_path / "split.png")
    assert code == 0, err
    assert len(calls) == 1  # took the split
    _one_pass(monkeypatch, cli, command, src, *args, "-o", tmp_path / "one.png")
    assert (tmp_path / "split.png").read_bytes() == (tmp_path / "one.png").read_bytes()


@pytest.mark.parametrize(
    "args",
    [["--npy", "a.npy"], ["--center"], ["--mix", "--channel", "0"]],
    ids=["npy", "center", "bad-options-stay-errors"],
)
def test_other_jobs_keep_one_pass(cli, tmp_path, calls, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    sf.write("in.wav", _signal().T, SR, subtype="PCM_16")
    code, _, err = cli("spectrogram", "in.wav", "-o", "a.png", *args)
    assert calls == []
    assert code == (2 if "--mix" in args else 0), err


def test_silence_and_huge_floats_behave_as_in_one_pass(cli, tmp_path, calls):
    quiet = tmp_path / "silent.wav"
    sf.write(quiet, np.zeros(3 * SR), SR, subtype="PCM_16")
    code, _, err = cli("spectrogram", quiet, "-o", tmp_path / "s.png")
    assert code == 0 and "digital silence" in err and len(calls) == 1
    big = tmp_path / "big.wav"
    y = _signal()[0].astype(np.float32) * np.float32(3e30)  # beyond SAFE_PEAK: the job restarts in float64
    sf.write(big, y, SR, subtype="FLOAT")
    code, _, err = cli("spectrogram", big, "-o", tmp_path / "b.png")
    assert code == 0, err
    assert (tmp_path / "b.png").stat().st_size > 1000


def test_frames_of_a_range_are_the_frames_of_the_whole(tmp_path):
    src = tmp_path / "in.wav"
    sf.write(src, _signal(seconds=2.0)[0], SR, subtype="PCM_16")
    parsed = TimeFreqOptions(stft=StftOptions(win="400", hop="160", nfft="512")).check()

    def frames(first, last, block):
        with InputOptions().open(str(src)) as source:
            front = StftFrontEnd(parsed, source, "float32")
            front.start()
            n = (last - first - 1) * 160 + 512
            out = [front.push(b) for b in source.blocks(block, start=first * 160, n_samples=n)] + [front.finish()]
            return np.concatenate(out, axis=-1)

    with InputOptions().open(str(src)) as source:
        M = StftFrontEnd(parsed, source, "float32").n_frames
    whole = frames(0, M, 1 << 16)
    for cut, block in ((M // 2, 4096), (1, 1000), (M - 1, 777)):
        both = np.concatenate([frames(0, cut, block), frames(cut, M, block)], axis=-1)
        assert np.array_equal(whole, both)

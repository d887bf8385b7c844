"""``--channel N`` on ``mel``, ``spectrogram`` and ``mfcc`` (and ``audiokit batch``): one channel of a multichannel
file is analysed exactly as the single-channel file holding its samples; errors name the file, channel and count."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from audiokit.dsp.generate import generate
from tests.helpers.cli import SR, png_size, samples, sidecar, write

#: Six channels of different noise, 0.5 s, PCM_16 (so the extracted channel's file holds the same codes).
CHANNELS = 6


@pytest.fixture
def six(tmp_path) -> tuple[Path, Path]:
    """A 6-channel PCM_16 file and the 1-channel PCM_16 file of its channel 3."""
    x = np.concatenate(
        [
            generate(f"noise:{0.01 * (c + 1)} + sine:{300 * (c + 1)}:0.3", n_samples=SR // 2, sr=SR, seed=c)
            for c in range(CHANNELS)
        ]
    )
    multi = write(tmp_path / "six.wav", x, subtype="PCM_16")
    third = write(tmp_path / "third.wav", samples(multi)[3:4], subtype="PCM_16")
    np.testing.assert_array_equal(samples(third)[0], samples(multi)[3])
    return multi, third


CASES = [
    ("mel", []),
    ("spectrogram", []),
    ("mfcc", []),
    ("mel", ["--compat", "kaldi"]),  # the Kaldi front end
    ("mel", ["--deltas", "1"]),  # the features job
    ("spectrogram", ["--complex"]),
]


@pytest.mark.parametrize("command, extra", CASES)
def test_channel_3_equals_the_file_of_channel_3(cli, six, tmp_path, command, extra):
    multi, third = six
    one, ref = tmp_path / "one.npy", tmp_path / "ref.npy"
    code, _, err = cli(command, multi, "--channel", "3", "--npy", one, *extra)
    assert code == 0, err
    assert cli(command, third, "--npy", ref, *extra)[0] == 0
    assert one.read_bytes() == ref.read_bytes()
    assert np.load(one).ndim == 2  # one channel: (rows, frames)
    meta = sidecar(one)
    assert (meta["channels"], meta["channel"], meta["mixed"]) == (1, 3, False)
    assert sidecar(ref)["channel"] is None
    everything = tmp_path / "all.npy"
    assert cli(command, multi, "--npy", everything, *extra)[0] == 0
    assert np.load(everything).shape[0] == CHANNELS
    np.testing.assert_array_equal(np.load(everything)[3], np.load(one))


@pytest.mark.parametrize("command", ["mel", "spectrogram"])
def test_channel_draws_one_panel(cli, six, tmp_path, command):
    multi, _ = six
    for args, height in (([], 600), (["--channel", "3"], 600)):  # six panels share the --size height
        png = tmp_path / f"{command}{len(args)}.png"
        code, _, err = cli(command, multi, *args, "-o", png)
        assert code == 0, err
        assert png_size(png.read_bytes()) == (1200, height)


@pytest.mark.parametrize("command", ["mel", "spectrogram", "mfcc", "spectrum"])
def test_channel_out_of_range_names_file_channel_and_count(cli, six, tmp_path, command):
    multi, _ = six
    npy = tmp_path / "x.npy"
    code, out, err = cli(command, multi, "--channel", "6", "--npy", npy)
    assert (code, out) == (2, "")
    assert err == f"error: {multi}: --channel 6: the input has 6 channel(s) (0..5)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["six.wav", "third.wav"]  # nothing written


@pytest.mark.parametrize("command", ["mel", "spectrogram", "mfcc", "spectrum"])
def test_channel_with_mix_is_a_usage_error(cli, six, tmp_path, command):
    multi, _ = six
    code, _, err = cli(command, multi, "--channel", "1", "--mix", "--npy", tmp_path / "x.npy")
    assert code == 2 and err == "error: --channel and --mix exclude each other\n"
    code, _, err = cli(command, multi, "--channel", "-1")
    assert code == 2 and "--channel" in err


def test_batch_channel_equals_the_single_file_command_and_enters_the_fingerprint(cli, six, tmp_path):
    multi, _ = six
    single = tmp_path / "single.npy"
    assert cli("mfcc", multi, "--channel", "3", "--npy", single)[0] == 0
    out = tmp_path / "out"
    code, _, err = cli("batch", "mfcc", "--store", "files", multi, "--out", out, "--channel", "3", "-j", "1", "-q")
    assert code == 0, err
    assert (out / "six.mfcc.npy").read_bytes() == single.read_bytes()
    # another channel is another job: not "already done", recomputed and recorded under another fingerprint
    code, _, err = cli("batch", "mfcc", "--store", "files", multi, "--out", out, "--channel", "2", "-j", "1", "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["fingerprint"] != lines[1]["fingerprint"]
    assert sidecar(out / "six.mfcc.npy")["channel"] == 2
    # refused before any input is read
    code, _, err = cli(
        "batch", "mel", "--store", "files", multi, "--out", tmp_path / "mixed", "--channel", "1", "--mix", "-j", "1"
    )
    assert code == 2 and "--channel and --mix exclude each other" in err
    code, _, err = cli("batch", "mel", "--store", "files", multi, "--out", tmp_path / "far", "--channel", "9", "-j", "1", "-q")
    assert code == 3
    (record,) = [json.loads(line) for line in (tmp_path / "far" / "manifest.jsonl").read_text().splitlines()]
    assert record["status"] == "failed" and "--channel 9: the input has 6 channel(s) (0..5)" in record["error"]

"""``audiokit generate`` through the CLI (lightly: the signals themselves are tested with audiokit.dsp.generate)."""

from __future__ import annotations

import errno
import io
import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import soundfile as sf


def test_writes_a_wav_file(cli, tmp_path, listing, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("generate", "sine:440", "--dur", "0.1s", "-o", "x.wav")
    assert (code, out, err) == (0, "x.wav\n", "")
    assert listing() == ["x.wav"]  # no temp file left beside it
    data, sr = sf.read(tmp_path / "x.wav", always_2d=True)
    assert sr == 16000 and data.shape == (1600, 1)
    assert sf.info(tmp_path / "x.wav").subtype == "FLOAT"
    assert np.isfinite(data).all() and 0 < np.abs(data).max() <= 1


def test_rate_duration_in_samples_and_subtype(cli, tmp_path):
    path = tmp_path / "y.wav"
    code, out, err = cli(
        "generate", "sine:440", "--rate", "8k", "--dur", "400", "--subtype", "pcm_16", "--channels", "2", "-o", path
    )
    assert (code, out, err) == (0, f"{path}\n", "")
    info = sf.info(path)
    assert (info.samplerate, info.frames, info.channels, info.subtype) == (8000, 400, 2, "PCM_16")


def test_duration_rounding_is_exact(cli, tmp_path):
    path = tmp_path / "z.wav"
    assert cli("generate", "sine:440", "--rate", "48000", "--dur", "0.009s", "-o", path)[0] == 0
    assert sf.info(path).frames == 432


def test_overwrites_an_existing_output(cli, tmp_path, listing):
    path = tmp_path / "x.wav"
    path.write_bytes(b"old")
    assert cli("generate", "sine:440", "--dur", "10ms", "-o", path)[0] == 0
    assert sf.info(path).frames == 160
    assert listing() == ["x.wav"]


def test_stdout_holds_only_wav_bytes(run, listing):
    code, out, err = run("generate", "sine:440", "--dur", "0.1s", "-o", "-")
    assert (code, err) == (0, "")
    data, sr = sf.read(io.BytesIO(out), always_2d=True)
    assert sr == 16000 and data.shape == (1600, 1)
    assert listing() == []


def test_default_output_is_stdout_and_pipes_into_info(run):
    code, wav, err = run("generate", "sine:440", "--dur", "0.25s", "--rate", "8k")
    assert (code, err) == (0, "")
    code, out, err = run("info", "-", "--json", stdin=wav)
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["path"], report["sr"], report["frames"], report["subtype"]) == ("-", 8000, 2000, "FLOAT")


# --- output errors: exit 4, one line, nothing left ---------------------------------------------


def test_missing_output_folder_is_reported_before_any_work(cli, tmp_path, listing, monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("generation started before the output path was checked")

    monkeypatch.setattr("audiokit.dsp.generate.generate_blocks", must_not_run)
    target = tmp_path / "missing" / "x.wav"
    code, out, err = cli("generate", "sine:440", "--dur", "0.1s", "-o", target)
    assert (code, out) == (4, "")
    assert err == f"error: {target}: output folder '{tmp_path / 'missing'}' does not exist\n"
    assert listing() == []


def test_output_is_a_directory(cli, tmp_path, listing):
    code, out, err = cli("generate", "sine:440", "--dur", "0.1s", "-o", tmp_path)
    assert (code, out) == (4, "")
    assert err == f"error: {tmp_path}: output is a directory\n"
    assert listing() == []


def failing_write(exc: BaseException, after: int):
    real = sf.SoundFile.write
    calls = {"n": 0}

    def write(self, data):
        calls["n"] += 1
        if calls["n"] > after:
            raise exc
        return real(self, data)

    return write


def test_disk_full_midway(cli, tmp_path, listing, monkeypatch):
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(OSError(errno.ENOSPC, "No space left on device"), after=1))
    target = tmp_path / "x.wav"
    code, out, err = cli("generate", "sine:440", "--dur", "10s", "-o", target)  # 160000 frames: 3 blocks
    assert (code, out) == (4, "")
    assert err == f"error: {target}: disk full (no space left on device); nothing was written\n"
    assert listing() == []


def test_disk_full_keeps_the_previous_output(cli, tmp_path, listing, monkeypatch):
    target = tmp_path / "x.wav"
    target.write_bytes(b"previous")
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(OSError(errno.ENOSPC, "No space left on device"), after=0))
    assert cli("generate", "sine:440", "--dur", "0.1s", "-o", target)[0] == 4
    assert target.read_bytes() == b"previous"
    assert listing() == ["x.wav"]


def test_ctrl_c_midway_leaves_nothing(cli, tmp_path, listing, monkeypatch):
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(KeyboardInterrupt(), after=1))
    code, out, err = cli("generate", "sine:440", "--dur", "10s", "-o", tmp_path / "x.wav")
    assert (code, out, err) == (130, "", "error: interrupted\n")
    assert listing() == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_real_signal_leaves_nothing(tmp_path, listing, signum, code, word):
    proc = subprocess.Popen(
        [sys.executable, "-m", "audiokit", "generate", "noise", "--dur", "600s", "--rate", "16k", "-o", "long.wav"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while not any(name.startswith(".long.wav.") for name in listing()):  # the temp file exists: writing has begun
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the temp file never appeared"
        time.sleep(0.01)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert out == b""
    assert err.decode() == f"error: {word}\n"
    assert listing() == []


# --- bad parameters: exit 2 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dur", "abc"], "error: --dur: invalid duration 'abc': use e.g. 25ms, 0.025s or a whole number of samples like 400\n"),
        (
            ["--dur", "2.5"],
            "error: --dur: invalid duration '2.5': a bare number means samples and must be whole; add s or ms for time\n",
        ),
        (["--dur", "1e99999999s"], "error: --dur: invalid duration '1e99999999s': number too long or exponent out of range\n"),
        (["--rate", "0"], "error: --rate: invalid frequency '0': must be > 0\n"),
        (
            ["--subtype", "PCM_12"],
            "error: --subtype: unknown subtype 'PCM_12' (allowed: PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT, DOUBLE)\n",
        ),
    ],
    ids=["dur-text", "dur-fractional-samples", "dur-huge-exponent", "rate-zero", "subtype"],
)
def test_bad_parameter(cli, tmp_path, listing, args, message):
    code, out, err = cli("generate", "sine:440", *args, "-o", tmp_path / "x.wav")
    assert (code, out, err) == (2, "", message)
    assert listing() == []

"""Closed or full standard streams, read-only folders, a full temp folder, a bad colormap: one line, the right exit
code, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import audiokit


@pytest.fixture
def wav(tmp_path):
    path = tmp_path / "x.wav"
    audiokit.write(path, 0.1 * np.random.default_rng(8).standard_normal((1, 8000)), 16000, subtype="PCM_16")
    return path


def shell(command: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=60)


def ak(*args) -> str:
    return " ".join([f'"{sys.executable}"', "-m", "audiokit", *(f'"{a}"' for a in args)])


@pytest.mark.slow
def test_closed_stdin_is_an_input_error(wav, tmp_path):
    done = shell(ak("info", "-") + " <&-", tmp_path)
    assert (done.returncode, done.stdout) == (3, "") and done.stderr == "error: -: standard input is closed\n"


@pytest.mark.slow
@pytest.mark.parametrize("args", [("info", "{wav}", "--json"), ("generate", "sine:440", "--dur", "0.1s")])
def test_closed_stdout_is_an_output_error(wav, tmp_path, args):
    done = shell(ak(*(a.format(wav=wav) for a in args)) + " >&-", tmp_path)
    assert done.returncode == 4 and "standard output is closed" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_full_stdout_is_an_output_error(wav, tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    done = shell(ak("info", wav, "--json") + " > /dev/full", tmp_path)
    assert (
        done.returncode == 4
        and done.stderr == "error: standard output: disk full (no space left on device); nothing was written\n"
    )


@pytest.mark.slow
def test_closed_stderr_keeps_errors_off_stdout(tmp_path):
    done = shell(ak("info", tmp_path / "missing.wav") + " 2>&-", tmp_path)
    assert done.returncode == 3 and done.stdout == ""


@pytest.mark.slow
def test_read_only_folder_is_named_as_such(wav, tmp_path):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a read-only tmpfs needs root")
    ro = tmp_path / "ro"
    ro.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], capture_output=True).returncode:
        pytest.skip("cannot mount tmpfs here")
    try:
        done = shell(ak("resample", wav, "--to", "8k", "-o", ro / "y.wav"), tmp_path)
        assert done.returncode == 4 and "read-only file system" in done.stderr
    finally:
        subprocess.run(["umount", str(ro)], check=False)


@pytest.mark.slow
def test_full_temp_folder_with_stdout_output_says_disk_full(wav, tmp_path):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(tmp)], capture_output=True).returncode:
        pytest.skip("cannot mount tmpfs here")
    try:  # stdout redirected to a regular file is spooled in TMPDIR first
        done = shell(
            f'TMPDIR="{tmp}" ' + ak("resample", wav, "--to", "16k", "--subtype", "FLOAT", "-o", "-") + " > out.wav", tmp_path
        )
        assert done.returncode == 4 and "disk full" in done.stderr and "System error" not in done.stderr
    finally:
        subprocess.run(["umount", str(tmp)], check=False)


def test_unknown_colormap_is_usage_with_the_names_and_leaves_nothing(cli, wav, tmp_path):
    code, out, err = cli("spectrogram", wav, "--cmap", "nonsense", "--npy", tmp_path / "s.npy", "-o", tmp_path / "s.png")
    assert (code, out) == (2, "") and "--cmap: unknown colormap 'nonsense'" in err and "viridis" in err
    assert not any(p.name.startswith("s.") for p in tmp_path.iterdir())

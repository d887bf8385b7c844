"""Several outputs of one command: refused when two are the same file; committed together or not at all."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import audiokit


@pytest.fixture
def wav(tmp_path, rng):
    path = tmp_path / "x.wav"
    audiokit.write(path, 0.1 * rng.standard_normal((1, 16000)), 16000, subtype="PCM_16")
    return path


@pytest.mark.parametrize("command", ["spectrogram", "mel"])
@pytest.mark.parametrize(
    "outputs",
    [("-o", "x.json", "--npy", "x.npy"), ("-o", "s.npy", "--npy", "s.npy"), ("-o", "sub/../x.json", "--npy", "x.npy")],
)
def test_two_outputs_naming_one_file_are_refused_before_work(cli, wav, tmp_path, command, outputs):
    (tmp_path / "sub").mkdir()
    args = [str(tmp_path / a) if not a.startswith("-") else a for a in outputs]
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = cli(command, wav, *args)
    assert (code, out) == (2, "") and "name the same file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_spectrum_png_and_sidecar_of_npy_are_refused(cli, wav, tmp_path):
    code, _, err = cli("spectrum", wav, "--npy", tmp_path / "s.npy", "-o", tmp_path / "s.json")
    assert code == 2 and "name the same file" in err


def _tmpfs(path, size):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs (a real full disk) needs root")
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount tmpfs here: {done.stderr.decode().strip()}")
    return path


@pytest.mark.slow
def test_disk_full_while_drawing_leaves_no_array_nor_sidecar(cli, wav, tmp_path):
    disk = _tmpfs(tmp_path / "disk", "200k")  # the .npy (~80 kB) and its sidecar fit, the PNG does not
    try:
        code, out, err = cli("spectrogram", wav, "--npy", disk / "s.npy", "-o", disk / "s.png", "--size", "4000x3000")
        assert (code, out) == (4, "") and "disk full" in err
        assert list(disk.iterdir()) == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_all_outputs_written_when_all_fit(cli, wav, tmp_path):
    code, out, _ = cli("mel", wav, "--npy", tmp_path / "m.npy", "-o", tmp_path / "m.png")
    assert code == 0 and out.split() == [str(tmp_path / n) for n in ("m.png", "m.npy", "m.json")]
    assert np.load(tmp_path / "m.npy").shape[0] == 80

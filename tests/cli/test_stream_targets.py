"""Outputs that are not regular files: written straight through, never replaced by a regular file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest
import soundfile as sf

import audiokit


@pytest.fixture
def wav(tmp_path):
    path = tmp_path / "x.wav"
    audiokit.write(path, 0.1 * np.random.default_rng(2).standard_normal((1, 8000)), 16000, subtype="PCM_16")
    return path


def test_dev_null_stays_a_device(cli, wav):
    code, out, err = cli("resample", wav, "--to", "8k", "-o", os.devnull)
    assert code == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_fifo_receives_the_wav(cli, wav, tmp_path):
    fifo = tmp_path / "ff.wav"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, out, err = cli("resample", wav, "--to", "8k", "-o", fifo)
    reader.join(timeout=30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO, not replaced
    out_wav = tmp_path / "got.wav"
    out_wav.write_bytes(received[0])
    assert sf.info(out_wav).frames == 4000


@pytest.mark.slow
def test_process_substitution_path(wav, tmp_path):
    target = tmp_path / "sub.png"
    script = f'"{sys.executable}" -m audiokit spectrogram "{wav}" -o >(cat > "{target}") && wait'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for _ in range(100):  # the substituted cat may finish just after bash returns
        if target.exists() and target.stat().st_size > 0:
            break
        threading.Event().wait(0.05)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_block_devices_are_refused(cli, wav, tmp_path):
    devices = [f"/dev/{name}" for name in ("loop0", "sda", "vda", "nvme0n1") if os.path.exists(f"/dev/{name}")]
    block = [d for d in devices if stat.S_ISBLK(os.stat(d).st_mode)]
    if not block:
        pytest.skip("no block device to point at here")
    code, _, err = cli("resample", wav, "--to", "8k", "-o", block[0])
    assert code == 4 and "block device" in err

"""Fixtures of the batch tests: a small generated corpus and ways to run the CLI (in process and as a subprocess)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.batch import audiokit_cmd, write_tone_noise


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """``data/``: 6 short files in nested folders, WAV and FLAC, one stereo, one float."""
    root = tmp_path / "data"
    write_tone_noise(root / "spk1" / "a.wav", 0.6, seed=1)
    write_tone_noise(root / "spk1" / "b.flac", 0.9, seed=2)
    write_tone_noise(root / "spk2" / "sess" / "c.wav", 1.1, seed=3, channels=2)
    write_tone_noise(root / "spk2" / "sess" / "d.flac", 0.5, seed=4)
    write_tone_noise(root / "spk2" / "e.wav", 0.7, seed=5, subtype="FLOAT")
    write_tone_noise(root / "f.flac", 1.3, seed=6)
    return root


@pytest.fixture
def run(tmp_path: Path):
    """``run(*args, stdin=None) -> (exit_code, stdout, stderr)`` as a subprocess in ``tmp_path``."""

    def call(*args, stdin: str | None = None) -> tuple[int, str, str]:
        proc = subprocess.run(
            audiokit_cmd(*args),
            input=stdin,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            timeout=120,
            env={**os.environ, "COLUMNS": "200"},
        )
        return proc.returncode, proc.stdout, proc.stderr

    return call

"""Fixtures of the batch tests: a small generated corpus and ways to run the CLI (in process and as a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

SR = 16000


def write_tone_noise(
    path: Path, seconds: float, *, sr: int = SR, channels: int = 1, subtype: str = "PCM_16", seed: int = 0, hum: float = 0.0
) -> Path:
    """A reproducible test signal (tone + noise, optional 50 Hz hum) written with soundfile."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(seconds * sr))) / sr
    x = 0.3 * np.sin(2 * np.pi * (220 + 40 * seed) * t) + 0.05 * rng.standard_normal(t.size)
    if hum:
        x = x + hum * np.sin(2 * np.pi * 50 * t)
    data = np.stack([x * (0.8**c) for c in range(channels)], axis=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, data.astype(np.float32), sr, subtype=subtype)
    return path


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


def audiokit_cmd(*args) -> list[str]:
    """The argv of ``python -m audiokit ARGS`` (for subprocesses)."""
    return [sys.executable, "-m", "audiokit", *map(str, args)]


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


def manifest_lines(out: Path) -> list[dict]:
    """The parsed lines of ``out/manifest.jsonl`` (torn lines skipped)."""
    lines = []
    for line in (out / "manifest.jsonl").read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return lines


def temp_files(folder: Path) -> list[Path]:
    """Leftover temp files of atomic writes under ``folder``."""
    return [p for p in folder.rglob(".*") if "audiokit-tmp" in p.name or ".tmp" in p.name]

"""Helpers of the batch tests: the generated corpus files, the manifest and leftovers of a run, and what the
single-file commands write for each input of a corpus (the reference the batch outputs must equal)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

#: Sample rate (Hz) of the generated corpus.
SR = 16000

#: Per command: options given to both the single-file command and the batch (not all defaults).
OPTIONS = {
    "mel": ["--win", "20ms", "--hop", "10ms", "--n-mels", "40", "--fmax", "7kHz"],
    "spectrogram": ["--win", "512", "--hop", "256", "--scale", "power", "--mix"],
    "resample": ["--to", "8k", "--quality", "medium"],
    "quantize": ["--bits", "8", "--seed", "3"],
    "dehum": ["--freq", "50"],
    "info": [],
    "spectrum": ["--peaks", "1", "--threshold", "20", "--window", "hamming"],
}


#: Per command: options only the batch takes -- the feature jobs keep the single-file outputs (``--store files``),
#: which these tests compare byte for byte with the single-file commands' (the stores: tests/batch/test_stores.py).
BATCH_OPTIONS = {"mel": ["--store", "files"], "spectrogram": ["--store", "files"], "mfcc": ["--store", "files"]}


def batch_options(command: str) -> list[str]:
    """The options of ``audiokit batch command`` in these tests: ``OPTIONS[command]`` + ``BATCH_OPTIONS[command]``."""
    return [*OPTIONS.get(command, []), *BATCH_OPTIONS.get(command, [])]


def reference_outputs(cli, command: str, corpus: Path, ref: Path) -> dict[str, object]:
    """Run the single-file ``command`` on every audio file of ``corpus``; return ``{relative output: bytes or dict}``.

    Outputs are named like the batch names them (``<id>.<tag>.<ext>`` with the id relative to ``corpus``);
    for ``info``/``spectrum`` the value is the ``--json`` report keyed by the id.
    """
    found: dict[str, object] = {}
    for path in sorted(p for p in corpus.rglob("*") if p.suffix in (".wav", ".flac")):
        item_id = path.relative_to(corpus).with_suffix("").as_posix()
        target = ref / item_id
        target.parent.mkdir(parents=True, exist_ok=True)
        options = OPTIONS[command]
        if command in ("mel", "spectrogram"):
            args = [command, path, *options, "--npy", f"{target}.{command}.npy"]
            names = [f"{item_id}.{command}.npy", f"{item_id}.{command}.json"]
        elif command in ("info", "spectrum"):
            code, out, err = cli(command, path, *options, "--json")
            assert code == 0, err
            found[item_id] = json.loads(out)
            continue
        else:
            tag = {"resample": "8k", "quantize": "8bit", "dehum": "dehum"}[command]
            args = [command, path, *options, "-o", f"{target}.{tag}.wav"]
            names = [f"{item_id}.{tag}.wav"]
        code, out, err = cli(*args)
        assert code == 0, err
        for name in names:
            found[name] = (ref / name).read_bytes()
    return found


def batch_outputs(command: str, out: Path, expected: dict[str, object]) -> dict[str, object]:
    """The batch's outputs under ``out`` for the keys of ``expected`` (reports from ``results.jsonl``)."""
    if command in ("info", "spectrum"):
        reports = {}
        for line in (out / "results.jsonl").read_text().splitlines():
            report = json.loads(line)
            reports[report.pop("id")] = report
        return reports
    return {name: (out / name).read_bytes() for name in expected if (out / name).exists()}


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


def audiokit_cmd(*args) -> list[str]:
    """The argv of ``python -m audiokit ARGS`` (for subprocesses)."""
    return [sys.executable, "-m", "audiokit", *map(str, args)]


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

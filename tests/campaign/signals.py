"""SIGINT and SIGTERM at random moments to real ``python -m audiokit`` processes.

A run ends with 130/143 and ``error: interrupted``/``error: terminated`` last on stderr, or finishes (exit 0)
with exactly the outputs of an undisturbed run; either way the outputs are all there or none, no temp file stays
and the input is unchanged.  A signal during the interpreter's own start-up (before audiokit runs) is Python's
business: its ``KeyboardInterrupt`` traceback, or death by the default action, with no outputs.
"""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import numpy as np

from .runner import Case, execute

#: Per command: argv with ``{src}`` and ``{out}`` (the case's output folder, relative).
COMMANDS = {
    "info": ["info", "{src}", "--json"],
    "spectrogram": ["spectrogram", "{src}", "--npy", "{out}/s.npy", "-o", "{out}/s.png"],
    "mel": ["mel", "{src}", "--npy", "{out}/m.npy"],
    "mfcc": ["mfcc", "{src}", "--compat", "kaldi", "--npy", "{out}/k.npy"],
    "dehum": ["dehum", "{src}", "--freq", "50", "-o", "{out}/d.wav", "--residual", "{out}/r.wav"],
    "resample": ["resample", "{src}", "--to", "8k", "-o", "{out}/x.wav"],
    "batch": ["batch", "mel", "{src}", "--store", "files", "--out", "{out}", "--jobs", "1"],
}


def make_source(folder: Path) -> Path:
    """``folder/in.wav``: 20 s at 16 kHz, a 440 Hz tone, 50 Hz hum and noise, PCM_16."""
    import audiokit

    sr = 16000
    t = np.arange(20 * sr) / sr
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 50 * t)
    x += 0.01 * np.random.default_rng(7).standard_normal(t.size)
    folder.mkdir(parents=True, exist_ok=True)
    audiokit.write(folder / "in.wav", x[None], sr, subtype="PCM_16")
    return folder / "in.wav"


def argv(command: str, src: Path) -> list[str]:
    """The command line of ``command`` on ``src`` writing into ``out``."""
    return [a.format(src=src, out="out") for a in COMMANDS[command]]


def reference(folder: Path, command: str, src: Path) -> tuple[dict[str, bytes], float]:
    """The undisturbed run in ``folder`` (created): ``({relative output: bytes}, wall seconds)``."""
    folder.mkdir(parents=True)
    (folder / "out").mkdir()
    start = time.monotonic()
    res = execute(Case("signal", f"{command} reference", folder, argv(command, src)))
    duration = time.monotonic() - start
    if res.code != 0:
        raise RuntimeError(f"the undisturbed {command} failed: {res.stderr}")
    outputs = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return outputs, duration


def case(folder: Path, rng: random.Random, command: str, src: Path, ref: dict[str, bytes], duration: float) -> Case:
    """One run of ``command`` in ``folder`` (created) with SIGINT or SIGTERM after ``U(0, 1.1 * duration)`` s."""
    folder.mkdir(parents=True)
    (folder / "out").mkdir()
    signum = rng.choice([signal.SIGINT, signal.SIGTERM])
    at = rng.uniform(0.0, 1.1 * duration)
    label = f"{command} {signal.Signals(signum).name} at {at:.2f} s"
    return Case(
        "signal", label, folder, argv(command, src), batch=command == "batch", signal_at=(signum, at), reference=ref, watch=(src,)
    )

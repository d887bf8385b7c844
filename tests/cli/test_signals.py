"""Ctrl-C and SIGTERM at random moments: every run ends with 130/143 and one line, or finishes with the same
outputs as an undisturbed run (exit 0) — never wrong results, never an orphan file or temp file.

A signal that lands while the interpreter itself starts (before ``audiokit/__main__.py`` installs its handlers)
kills the process by the default action (the shell sees 128 + signum, no message), and a Ctrl-C there is Python's
traceback and exit 1: then nothing may be written.  One after the outputs were committed says so
(``error: terminated after writing …``).

Each command gets up to ``AUDIOKIT_SIGNAL_RUNS`` runs (default 12) within ``AUDIOKIT_SIGNAL_SECONDS`` seconds
(default 10) so the suite stays bounded; the issue's campaign (>= 50 per command) is
``AUDIOKIT_SIGNAL_RUNS=50 AUDIOKIT_SIGNAL_SECONDS=600 pytest tests/cli/test_signals.py``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import audiokit

# Real signals to real processes (python -m audiokit), at random moments.
pytestmark = pytest.mark.slow

RUNS = int(os.environ.get("AUDIOKIT_SIGNAL_RUNS", "12"))
BUDGET_S = float(os.environ.get("AUDIOKIT_SIGNAL_SECONDS", "10"))

#: Packages that do the work: a traceback through them would be a real failure, not the start-up window.
_WORKING_PARTS = ("cli", "pipelines", "io", "dsp", "engine")

COMMANDS = {
    "info": (["info", "{src}", "--json"], []),
    "spectrogram": (["spectrogram", "{src}", "--npy", "{out}/s.npy", "-o", "{out}/s.png"], ["s.npy", "s.json", "s.png"]),
    "mel": (["mel", "{src}", "--npy", "{out}/m.npy"], ["m.npy", "m.json"]),
    "dehum": (["dehum", "{src}", "--freq", "50", "-o", "{out}/d.wav", "--residual", "{out}/r.wav"], ["d.wav", "r.wav"]),
    "resample": (["resample", "{src}", "--to", "8k", "-o", "{out}/x.wav"], ["x.wav"]),
}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    folder = tmp_path_factory.mktemp("signals")
    src = folder / "in.wav"
    sr = 16000
    t = np.arange(60 * sr) / sr
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 50 * t)
    x += 0.01 * np.random.default_rng(7).standard_normal(t.size)
    audiokit.write(src, x[None], sr, subtype="PCM_16")
    return src


def _argv(command: str, src: Path, out: Path) -> list[str]:
    return [a.format(src=src, out=out) for a in COMMANDS[command][0]]


def _run(argv: list[str], cwd: Path, signum: int | None = None, after: float = 0.0) -> tuple[int, bytes, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "audiokit", *argv],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if signum is not None:
        time.sleep(after)
        proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err.decode("utf-8", "replace")


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_signals_at_random_moments(command, source, tmp_path):
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    start = time.monotonic()
    code, reference_out, err = _run(_argv(command, source, reference_dir), tmp_path)
    duration = time.monotonic() - start
    assert code == 0, err
    reference = _contents(reference_dir)
    assert sorted(reference) == sorted(COMMANDS[command][1])
    rng = random.Random(f"signals-{command}")
    runs, deadline = 0, time.monotonic() + BUDGET_S
    outcomes = {0: 0, 130: 0, 143: 0}
    while runs < RUNS and (runs < 3 or time.monotonic() < deadline):
        out_dir = tmp_path / f"run{runs}"
        out_dir.mkdir()
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        code, stdout, err = _run(_argv(command, source, out_dir), tmp_path, signum, rng.uniform(0.0, 1.1 * duration))
        if code in (1, -signum) and "KeyboardInterrupt" in err and not any(f"/audiokit/{d}/" in err for d in _WORKING_PARTS):
            # Ctrl-C while the interpreter is still starting (runpy, site, the package's first import lines):
            # Python reports it itself, before audiokit can install anything.
            assert _contents(out_dir) == {}
            runs += 1
            continue
        assert "Traceback" not in err and "Exception ignored" not in err, err
        if code == -signum:
            # Killed by the default action: the signal landed while the interpreter was starting, before
            # audiokit/__main__.py's first line installed the handlers -- so nothing was written.  (After the
            # outputs are committed a signal always prints its line: audiokit.cli.signals.install_for_process.)
            assert "Traceback" not in err and "error: internal" not in err, err
            assert _contents(out_dir) == {}, "a signal after the outputs were committed killed the process silently"
            runs += 1
            continue
        assert code in outcomes, (code, err)
        outcomes[code] += 1
        if code == 0:  # finished before the signal: the results must be exactly the undisturbed ones
            assert _contents(out_dir) == reference
            if command == "info":
                assert json.loads(stdout) == json.loads(reference_out)
        else:
            word = "interrupted" if code == 130 else "terminated"
            assert code == (130 if signum == signal.SIGINT else 143)
            assert err.count("error:") == 1, err
            # a signal after the outputs were committed (while the summary prints) leaves them complete, and says so
            contents = _contents(out_dir)
            assert contents in ({}, reference), sorted(p.name for p in out_dir.iterdir())
            last = err.splitlines()[-1]
            assert last == f"error: {word}" if contents == {} else last.startswith(f"error: {word} after writing "), err
        runs += 1
    assert runs >= 3

"""Start-up cost (issue 13): what each kind of invocation imports, and that the shortcuts change no behaviour.

``audiokit --version`` imports neither Typer nor numpy; ``--help`` no numpy; a ``--npy``-only job no
matplotlib; the lazy command list shows each command's own summary.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

HEAVY = ("numpy", "scipy", "matplotlib", "pyfftw", "soundfile")


def _imported(args: list[str], cwd: Path) -> set[str]:
    """Top-level names of the modules ``python -X importtime -m audiokit ARGS`` imported (exit code 0 asserted)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "audiokit", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "COLUMNS": "100"}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", line)
        if match:
            names.add(match.group(1).split(".")[0])
    return names


def test_version_imports_no_typer_and_nothing_numeric(tmp_path):
    names = _imported(["--version"], tmp_path)
    assert not names & {*HEAVY, "typer", "rich"}, sorted(names & {*HEAVY, "typer", "rich"})


def test_help_imports_no_numeric_module(tmp_path):
    names = _imported(["--help"], tmp_path)
    assert not names & set(HEAVY), sorted(names & set(HEAVY))


@pytest.mark.parametrize("kind", ["mel", "spectrogram"])
def test_npy_only_job_imports_no_matplotlib(tmp_path, kind):
    t = np.arange(16000) / 16000
    sf.write(tmp_path / "a.wav", 0.5 * np.sin(2 * np.pi * 440 * t), 16000, subtype="PCM_16")
    names = _imported([kind, "a.wav", "--npy", "a.npy", "-q"], tmp_path)
    assert "numpy" in names
    assert "matplotlib" not in names


def test_version_fast_path_prints_what_the_option_prints(cli):
    import audiokit

    code, out, err = cli("--version")
    assert (code, out, err) == (0, f"audiokit {audiokit.__version__}\n", "")
    code, out2, _ = cli("--version", "info")  # not the fast path: Typer's eager option, before the command
    assert (code, out2) == (0, out)


def test_lazy_summaries_are_the_commands_own_help():
    from audiokit.cli.lazy import COMMANDS, load_command

    for name in COMMANDS:
        command = load_command(name)
        assert command.name == name
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]
        assert COMMANDS[name][2] == first, f"update the summary of {name!r} in audiokit/cli/lazy.py"


def test_root_help_lists_every_command_without_loading_them(cli):
    from audiokit.cli.lazy import COMMANDS

    code, out, _ = cli("--help")
    assert code == 0
    for name, (_, _, summary) in COMMANDS.items():
        assert re.search(rf"│ {name} +{re.escape(summary[:40])}", out), name

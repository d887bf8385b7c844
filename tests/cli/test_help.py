"""``--help`` shows every help text as written (no bracketed text eaten as rich markup, no stray " ."); the
example scripts the help and the README point to are executable.

Rich markup once ate ``[freq_hz, amplitude(, phase)]`` from ``spectrum --npy`` ("Save rows  as .npy"), every
``[on]``/``[off]``/``[sr/2]`` default (leaving "... mean ."), ``|X[k]|^2`` and the ``audiokit[cluster]`` extra.
The expected texts come from the commands as :func:`audiokit.cli.lazy.load_command` builds them (the help as
declared), the rendered ones from ``audiokit ... --help`` at a terminal wide enough that nothing wraps.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audiokit.cli.lazy import load_command
from audiokit.pipelines import registry

#: Wide enough that no help text of audiokit wraps in its table cell (the longest is ~190 characters).
COLUMNS = "400"


def _normalised(text: str) -> str:
    return " ".join(text.split())


def _commands() -> Iterator[tuple[list[str], Any]]:
    """(argv before --help, the click command as declared) for every command and subcommand."""

    def walk(path: list[str], command: Any) -> Iterator[tuple[list[str], Any]]:
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk([*path, name], sub)

    for item in registry.entries():
        yield from walk([item.name], load_command(item.name))


def _declared_texts(command: Any) -> list[tuple[str, str]]:
    """(what, help text) for the command's own help (up to ``\\f``) and each argument / option that has one."""
    texts = [("command help", inspect.cleandoc(command.help or "").partition("\f")[0])]
    texts += [(f"{param.param_type_name} {param.name}", param.help) for param in command.params if getattr(param, "help", None)]
    return [(what, text.replace("\b", "")) for what, text in texts if text.strip()]


CASES = {" ".join(path): (path, command) for path, command in _commands()}


@pytest.fixture
def wide_help(cli, monkeypatch):
    """``wide_help(*argv) -> the --help text`` rendered at COLUMNS characters (exit code 0, stderr empty)."""
    monkeypatch.setenv("COLUMNS", COLUMNS)
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)

    def render(*argv: str) -> str:
        code, out, err = cli(*argv, "--help")
        assert (code, err) == (0, ""), err
        return out

    return render


@pytest.mark.parametrize("name", CASES)
def test_every_help_text_is_shown_whole(wide_help, name):
    path, command = CASES[name]
    shown = _normalised(wide_help(*path))
    missing = [(what, text) for what, text in _declared_texts(command) if _normalised(text) not in shown]
    assert not missing, missing


@pytest.mark.parametrize("name", ["", *CASES])
def test_no_help_line_ends_in_a_stray_full_stop(wide_help, name):
    lines = wide_help(*name.split())
    stray = [line.strip() for line in lines.splitlines() if re.search(r"\s\.$", line.rstrip().rstrip("│").rstrip())]
    assert not stray, stray


def test_root_help_shows_every_summary_whole(wide_help):
    shown = _normalised(wide_help())
    assert [item.summary for item in registry.entries() if _normalised(item.summary) not in shown] == []


def test_the_texts_that_were_eaten(wide_help):
    """The examples of the bug report, literally."""
    assert "Save rows [freq_hz, amplitude(, phase)] as .npy + JSON sidecar." in wide_help("spectrum")
    assert "Subtract each frame's mean [on]." in wide_help("mfcc")
    assert "pip install 'audiokit[cluster]'" in wide_help("batch", "mel")


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.sh"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_is_an_executable_script(script):
    """The README runs them as ``examples/NAME.sh``: a bash shebang and the execute bit (examples/dehum.sh had none)."""
    assert script.read_text().startswith("#!/usr/bin/env bash\n")
    assert os.access(script, os.X_OK), f"chmod +x {script.name}"


def test_examples_were_found():
    assert len(EXAMPLES) >= 10  # the glob looks where the scripts are


# --- the README's examples ------------------------------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"
#: The options whose value is a path the command writes.
_OUTPUT_OPTIONS = ("-o", "--output", "--npy", "--residual", "--out")
#: A word that names a file or folder: absolute, a folder (``corpus/``), a list (``@wavs.txt``) or a name with a
#: file extension.
_PATH = re.compile(r"^(/.*|.*/|@.*|[\w.-]+\.(wav|flac|ogg|mp3|npy|txt|jsonl|json|png))$")


def _runnable_readme_lines() -> list[str]:
    """The README's shell lines that need only the bundled data: ``audiokit`` pipelines whose every path is under
    examples/data/ or an output, without globs, a cluster or tools that may be missing (jq)."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S):
        for line in block.splitlines():
            command = line.partition(" #")[0].strip()
            if not command.startswith("audiokit ") or "jq" in command or "*" in command or "--scheduler" in command:
                continue
            words = shlex.split(command)
            paths = [(i, w) for i, w in enumerate(words) if _PATH.match(w)]
            if all(w.startswith("examples/data/") or words[i - 1] in _OUTPUT_OPTIONS for i, w in paths):
                lines.append(command)
    return lines


README_LINES = _runnable_readme_lines()


def test_the_readme_examples_were_found():
    assert any(line.startswith('audiokit generate "sine:50') and "spectrum" in line for line in README_LINES)
    assert len(README_LINES) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("line", README_LINES)
def test_readme_example_runs_without_warning(tmp_path, line):
    """Each README line that needs only bundled data runs (exit 0, pipefail) and warns about nothing: its signal
    stays under full scale (the spectrum example reached 1.69 FS and warned twice)."""
    (tmp_path / "examples" / "data").mkdir(parents=True)
    shutil.copy(README.parent / "examples" / "data" / "speech.wav", tmp_path / "examples" / "data")
    command = re.sub(r"(^|\| )audiokit ", rf"\1{shlex.quote(sys.executable)} -m audiokit ", line)
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr, proc.stderr


def test_readme_spectrum_example_is_under_full_scale_by_construction_and_is_the_helps():
    """A sum of sines peaks at most at the sum of its amplitudes: at most 1 keeps any phase under full scale."""
    line = next(line for line in README_LINES if line.startswith('audiokit generate "sine:50'))
    assert line in inspect.getdoc(load_command("spectrum").callback)  # the same example in `spectrum --help`
    assert sum(float(a) for a in re.findall(r"sine:\d+:([\d.]+)", line)) <= 1.0

"""``--help`` shows every help text as written: no bracketed text eaten as rich markup, no stray " .".

Rich markup once ate ``[freq_hz, amplitude(, phase)]`` from ``spectrum --npy`` ("Save rows  as .npy"), every
``[on]``/``[off]``/``[sr/2]`` default (leaving "... mean ."), ``|X[k]|^2`` and the ``audiokit[cluster]`` extra.
The expected texts come from the commands as :func:`audiokit.cli.lazy.load_command` builds them (the help as
declared), the rendered ones from ``audiokit ... --help`` at a terminal wide enough that nothing wraps.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any

import pytest

from audiokit.cli.lazy import COMMANDS, load_command

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

    for name in COMMANDS:
        yield from walk([name], load_command(name))


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
    assert [summary for _, _, summary in COMMANDS.values() if _normalised(summary) not in shown] == []


def test_the_texts_that_were_eaten(wide_help):
    """The examples of the bug report, literally."""
    assert "Save rows [freq_hz, amplitude(, phase)] as .npy + JSON sidecar." in wide_help("spectrum")
    assert "Subtract each frame's mean [on]." in wide_help("mfcc")
    assert "pip install 'audiokit[cluster]'" in wide_help("batch", "mel")

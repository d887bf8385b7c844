"""Errors and usage: one line ``error: <path>: <reason>``, the right exit code, no traceback, nothing left."""

from __future__ import annotations

import ast
import inspect
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import audiokit
from audiokit.io import reader as reader_module
from audiokit.io.reader import READABLE


def pcm(codes) -> bytes:
    return np.asarray(codes, dtype="<i2").tobytes()


def float_wav(path, values):
    sf.write(path, np.asarray(values, dtype=np.float64), 8000, subtype="FLOAT")


def make_missing(tmp_path, craft_wav):
    return tmp_path / "missing.wav"


def make_directory(tmp_path, craft_wav):
    (tmp_path / "folder.wav").mkdir()
    return tmp_path / "folder.wav"


def make_empty(tmp_path, craft_wav):
    (tmp_path / "empty.wav").write_bytes(b"")
    return tmp_path / "empty.wav"


def make_text(tmp_path, craft_wav):
    (tmp_path / "notes.wav").write_text("Shopping list:\n- eggs\n- milk\n" * 10)
    return tmp_path / "notes.wav"


def make_zero_channels(tmp_path, craft_wav):
    return craft_wav("zero_ch.wav", pcm(range(100)), channels=0)


def make_many_channels(tmp_path, craft_wav):
    return craft_wav("many_ch.wav", pcm(range(10_000)), channels=5000)


def make_rate_zero(tmp_path, craft_wav):
    return craft_wav("sr0.wav", pcm(range(100)), sr=0)


def make_rate_5(tmp_path, craft_wav):
    return craft_wav("sr5.wav", pcm(range(100)), sr=5)


def make_nan(tmp_path, craft_wav):
    values = np.zeros(100)
    values[10] = np.nan
    float_wav(tmp_path / "nan.wav", values)
    return tmp_path / "nan.wav"


def make_inf(tmp_path, craft_wav):
    values = np.zeros(100)
    values[[20, 30]] = [np.inf, -np.inf]
    float_wav(tmp_path / "inf.wav", values)
    return tmp_path / "inf.wav"


def make_zero_length(tmp_path, craft_wav):
    return craft_wav("nodata.wav", b"")


BAD_INPUTS = {
    "missing": (make_missing, "no such file"),
    "directory": (make_directory, "is a directory, not an audio file"),
    "empty": (make_empty, "empty file (0 bytes)"),
    "text": (make_text, f"not a recognised audio file ({READABLE})"),
    "zero-channels": (make_zero_channels, "header says 0 channels"),
    "5000-channels": (make_many_channels, "header says 5000 channels (more than 256); file is corrupt"),
    "rate-0": (make_rate_zero, "header says sample rate 0 Hz"),
    "rate-5": (make_rate_5, "sample rate 5 Hz is outside the accepted range 100..3072000 Hz"),
    "nan": (
        make_nan,
        "contains NaN or Inf samples (1 in this block, first at frame 10, 0.00125 s); use --fix-nonfinite to replace them with 0",
    ),
    "inf": (
        make_inf,
        "contains NaN or Inf samples (2 in this block, first at frame 20, 0.0025 s); use --fix-nonfinite to replace them with 0",
    ),
    "zero-length": (make_zero_length, "no audio samples (0 frames)"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["table", "json"])
def test_bad_input(cli, tmp_path, craft_wav, listing, case, json_flag):
    make, reason = BAD_INPUTS[case]
    path = make(tmp_path, craft_wav)
    before = listing()
    code, out, err = cli("info", *json_flag, path)
    assert code == 3
    assert out == ""
    assert err == f"error: {path}: {reason}\n"
    assert "Traceback" not in err
    assert listing() == before


def test_permission_denied(cli, tmp_path, listing, monkeypatch):
    path = tmp_path / "locked.wav"
    audiokit.write(path, np.zeros((1, 10)), 8000)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(args[0]))

    monkeypatch.setattr(reader_module, "open", refuse, raising=False)  # root can read anything: simulate
    code, out, err = cli("info", path)
    assert (code, out) == (3, "")
    assert err == f"error: {path}: permission denied\n"
    assert listing() == ["locked.wav"]


def test_fix_nonfinite_accepts_the_nan_file(cli, tmp_path, craft_wav):
    path = make_nan(tmp_path, craft_wav)
    code, out, err = cli("info", "--json", "--fix-nonfinite", path)
    assert (code, err) == (0, "")
    assert json.loads(out)["levels"][0]["peak_dbfs"] is None  # all zeros once the NaN is replaced


@pytest.mark.parametrize("case", ["missing", "nan"])
def test_bad_input_subprocess(run, tmp_path, craft_wav, listing, case):
    make, reason = BAD_INPUTS[case]
    path = make(tmp_path, craft_wav)
    before = listing()
    code, out, err = run("info", path.name)
    assert (code, out) == (3, b"")
    assert err == f"error: {path.name}: {reason}\n"
    assert listing() == before


def test_stdin_garbage_without_raw_flags(run):
    code, out, err = run("info", "-", stdin=b"\x13\x37 definitely not audio " * 50)
    assert (code, out) == (3, b"")
    assert err == f"error: -: standard input is not {READABLE}; for raw PCM give --rate, --format and --channels\n"


def test_stdin_empty(cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert cli("info", "-") == (3, "", "error: -: standard input is empty\n")


def test_one_bad_file_among_several(cli, tmp_path):
    good = tmp_path / "good.wav"
    audiokit.write(good, np.full((1, 100), 0.5), 8000, subtype="PCM_16")
    missing = tmp_path / "missing.wav"
    code, out, err = cli("info", "--jsonl", good, missing, good)
    assert code == 3
    assert err == f"error: {missing}: no such file\n"
    reports = [json.loads(line) for line in out.splitlines()]
    assert [r["path"] for r in reports] == [str(good), str(good)]


def test_one_bad_file_among_several_table(cli, tmp_path, craft_wav):
    good = tmp_path / "good.wav"
    audiokit.write(good, np.full((1, 100), 0.5), 8000, subtype="PCM_16")
    bad = craft_wav("sr0.wav", pcm(range(10)), sr=0)
    code, out, err = cli("info", bad, good)
    assert code == 3
    assert err == f"error: {bad}: header says sample rate 0 Hz\n"
    assert f"{good}: WAV PCM_16" in out and "sr0.wav" not in out


def test_debug_shows_the_traceback(cli, tmp_path):
    missing = tmp_path / "missing.wav"
    code, out, err = cli("info", "--debug", missing)
    assert (code, out) == (3, "")
    assert "Traceback (most recent call last)" in err
    assert "audiokit.errors.InputError" in err
    assert err.endswith(f"error: {missing}: no such file\n")


def test_internal_error_is_reported_in_one_line(cli, tmp_path, monkeypatch):
    path = tmp_path / "ok.wav"
    audiokit.write(path, np.zeros((1, 10)), 8000)

    def broken(*args, **kwargs):
        raise RuntimeError("something unexpected")

    monkeypatch.setattr("audiokit.cli.info.info", broken)
    code, out, err = cli("info", path)
    assert (code, out) == (1, "")
    assert err == "error: internal error: RuntimeError: something unexpected (rerun with --debug for the traceback)\n"


def test_ctrl_c_exits_130(cli, tmp_path, monkeypatch):
    path = tmp_path / "ok.wav"
    audiokit.write(path, np.zeros((1, 10)), 8000)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("audiokit.cli.info.info", interrupted)
    code, out, err = cli("info", path)
    assert (code, out, err) == (130, "", "error: interrupted\n")


def test_ctrl_c_with_debug_shows_the_traceback(cli, tmp_path, monkeypatch):
    path = tmp_path / "ok.wav"
    audiokit.write(path, np.zeros((1, 10)), 8000)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("audiokit.cli.info.info", interrupted)
    code, out, err = cli("info", "--debug", path)
    assert code == 130
    assert "Traceback (most recent call last)" in err and "KeyboardInterrupt" in err
    assert err.endswith("error: interrupted\n")


@pytest.mark.slow
@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["unbuffered", "buffered"])
def test_broken_pipe_is_silent(tmp_path, unbuffered):
    path = tmp_path / "ok.wav"
    audiokit.write(path, np.zeros((1, 10)), 8000)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered  # print() itself then meets the closed pipe, inside the command
    proc = subprocess.Popen(
        [sys.executable, "-m", "audiokit", "info", "--json", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    proc.stdout.close()  # the reader goes away before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert err == ""


#: Commands that print to stdout: rich tables (info, spectrum), JSON, WAV bytes, the help (rich too).
CLOSED_PIPE_COMMANDS = {
    "info table": ["info", "{wav}"],
    "info table, 3 files": ["info", "{wav}", "{wav}", "{wav}"],
    "info --json, 2 files": ["info", "--json", "{wav}", "{wav}"],
    "spectrum table": ["spectrum", "{wav}", "--peaks", "3"],
    "spectrum --json": ["spectrum", "{wav}", "--json"],
    "generate -o -": ["generate", "sine:1k", "--dur", "1s", "-o", "-"],
    "help": ["--help"],
    "spectrum --help": ["spectrum", "--help"],
}


@pytest.mark.slow
@pytest.mark.parametrize("args", CLOSED_PIPE_COMMANDS.values(), ids=CLOSED_PIPE_COMMANDS.keys())
def test_closed_pipe_exits_141_silently(tmp_path, args):
    """The reader is gone before anything is written (``| head -0``): every command exits 141, stderr empty.

    rich (tables, help) turned the BrokenPipeError into a silent exit 1.  The read end is closed before the
    process starts, so the first write fails whatever the timing.
    """
    path = tmp_path / "ok.wav"
    audiokit.write(path, 0.1 * np.ones((1, 800)), 8000)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "audiokit", *(a.format(wav=path) for a in args)],
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr.decode()) == (141, "")


@pytest.mark.slow
def test_reader_closing_the_pipe_early_exits_141(tmp_path):
    """``audiokit info a b c ... | head -c 100``: the reader takes a little, then goes; the rest meets EPIPE.

    The tables of 300 inputs (~100 kB) exceed a pipe's capacity (64 kB), so a write fails after the close.
    """
    path = tmp_path / "ok.wav"
    audiokit.write(path, 0.1 * np.ones((1, 800)), 8000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "audiokit", "info", *[str(path)] * 300],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(100).startswith(str(path).encode())
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=60), err) == (141, "")


# --- usage ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["generate", "sine:440", "--dur", "2"], "--dur 2 means 2 samples (0.125 ms at 16000 Hz); did you mean 2s?"),
        (
            ["generate", "sine:440", "--dur", "50", "--rate", "8k"],
            "--dur 50 means 50 samples (6.25 ms at 8000 Hz); did you mean 50s?",
        ),
        (
            ["spectrogram", "{wav}", "--win", "25", "--hop", "10"],
            "--win 25 means 25 samples (3.12 ms at 8000 Hz); did you mean 25ms?",
        ),
        (
            ["generate", "sine:440", "--dur", "5000", "--rate", "768k"],  # 5000 s is longer than an hour
            "--dur 5000 means 5000 samples (6.51 ms at 768000 Hz); did you mean 5000ms?",
        ),
    ],
    ids=["dur 2", "dur 50", "win 25", "dur 5000"],
)
def test_bare_number_hint_names_the_plausible_unit(cli, tmp_path, args, hint):
    """The hint names the largest unit (s, else ms) that keeps the number at most the option's longest plausible
    value: a test signal up to an hour (``--dur 2`` is 2 s, as in SoX and ffmpeg), a window up to 1 s."""
    wav = tmp_path / "in.wav"
    audiokit.write(wav, 0.1 * np.ones((1, 800)), 8000)
    out = ["--npy", tmp_path / "s.npy"] if args[0] == "spectrogram" else ["-o", tmp_path / "g.wav"]
    code, _, err = cli(*(a.format(wav=wav) for a in args), *out)
    assert code == 0 and f"warning: {hint}\n" in err


def test_version(cli):
    code, out, err = cli("--version")
    assert (code, err) == (0, "")
    assert out == f"audiokit {audiokit.__version__}\n"


@pytest.mark.parametrize("command", ["info", "generate"])
def test_help_of_each_command(cli, command):
    code, out, err = cli(command, "--help")
    assert (code, err) == (0, "")
    assert "Example" in out and f"audiokit {command}" in out


def test_unknown_option(cli, tmp_path):
    code, out, err = cli("info", "--bogus", tmp_path / "x.wav")
    assert (code, out) == (2, "")
    assert err == "error: No such option: --bogus (see 'audiokit info --help')\n"


def test_unknown_option_subprocess(run):
    code, out, err = run("info", "--bogus", "x.wav")
    assert (code, out) == (2, b"")
    assert err == "error: No such option: --bogus (see 'audiokit info --help')\n"


def test_unknown_command(cli):
    code, out, err = cli("frobnicate")
    assert (code, out) == (2, "")
    assert err.startswith("error: No such command 'frobnicate'") and err.count("\n") == 1


def test_missing_argument(cli):
    code, out, err = cli("info")
    assert (code, out) == (2, "")
    assert err == "error: Missing argument 'FILES...'. (see 'audiokit info --help')\n" or (
        err.startswith("error: Missing argument") and err.count("\n") == 1
    )


# --- exit statuses: one enum ----------------------------------------------------------------------------------

PACKAGE = Path(audiokit.__file__).parent
README = PACKAGE.parent / "README.md"


def _readme_exit_codes() -> set[int]:
    """The codes of the README's "Exit codes" table: each row's first cell, and ``143:`` inside the 130 row."""
    table = README.read_text().split("## Exit codes", 1)[1].split("\n\n")[1]
    rows = [line.split("|")[1:3] for line in table.splitlines()[2:]]
    return {int(code) for code, _ in rows} | {int(c) for _, meaning in rows for c in re.findall(r"\b(\d{3}): ", meaning)}


def test_exit_statuses_are_one_enum_and_the_readme_table():
    from audiokit.errors import AudiokitError, ExitStatus, InputError, OutputError, ParameterError

    assert {int(s) for s in ExitStatus} == _readme_exit_codes() == {0, 1, 2, 3, 4, 130, 141, 143}
    assert (ExitStatus.INTERRUPTED, ExitStatus.TERMINATED, ExitStatus.BROKEN_PIPE) == tuple(
        128 + s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)
    )
    classes = {AudiokitError: ExitStatus.INTERNAL, ParameterError: ExitStatus.USAGE, InputError: ExitStatus.INPUT}
    for cls, status in {**classes, OutputError: ExitStatus.OUTPUT}.items():
        assert type(cls.exit_code) is ExitStatus and cls.exit_code is status, cls


def _literal_exit_statuses(path: Path) -> set[tuple[int, int]]:
    """``(line, status)`` wherever ``path`` writes an exit status as a number: ``sys.exit(3)``, ``SystemExit(143)``,
    ``exit_code = 2``, ``exit_code=1``, an ``exit_code`` property returning one, any 130/141/143 (but in the enum
    itself, errors.py) and any ``return 2`` in cli/app.py (the error map)."""

    def numbers(node: ast.AST | None) -> list[int]:
        if isinstance(node, ast.IfExp):
            return numbers(node.body) + numbers(node.orelse)
        return [node.value] if isinstance(node, ast.Constant) and type(node.value) is int else []

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        values: list[int] = []
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.exit", "SystemExit", "exit", "typer.Exit"):
            values = [v for arg in node.args for v in numbers(arg)]
        elif isinstance(node, ast.Assign) and any(ast.unparse(t).endswith("exit_code") for t in node.targets):
            values = numbers(node.value)
        elif isinstance(node, ast.keyword) and node.arg == "exit_code":
            values = numbers(node.value)
        elif isinstance(node, ast.FunctionDef) and (node.name == "exit_code" or path.name == "app.py"):
            found |= {(sub.lineno, v) for sub in ast.walk(node) if isinstance(sub, ast.Return) for v in numbers(sub.value)}
        elif isinstance(node, ast.Constant) and type(node.value) is int and node.value in (130, 141, 143):
            values = [node.value] if path.name != "errors.py" else []
        found |= {(node.lineno, v) for v in values}  # type: ignore[attr-defined]
    return found


def test_no_exit_status_is_written_as_a_number():
    """Every exit status comes from ``audiokit.errors.ExitStatus`` (130/143/141/4/2/3 were literals in cli/app.py,
    batch/runner.py, batch/tasks.py, batch/jobs.py, errors.py and __main__.py)."""
    found = {
        f"{path.relative_to(PACKAGE)}:{line}": value
        for path in PACKAGE.rglob("*.py")
        for line, value in _literal_exit_statuses(path)
    }
    assert not found, found


def test_the_literal_exit_status_check_finds_each_kind(tmp_path):
    (tmp_path / "app.py").write_text(
        "import sys\nclass E(Exception):\n    exit_code = 2\n"
        "def exit_code(self):\n    return 3 if self.failed else 0\n"
        "def f(record):\n    record.update(exit_code=1)\n    sys.exit(130)\n    raise SystemExit(143)\n    return 141\n"
    )
    found = _literal_exit_statuses(tmp_path / "app.py")
    assert found == {(3, 2), (5, 3), (5, 0), (7, 1), (8, 130), (9, 143), (10, 141)}


# --- -q/--quiet and --debug: declared once, taken by every command ----------------------------------------------


def _command_paths() -> list[list[str]]:
    """Every command and ``audiokit batch`` subcommand, as the argv before its own options (a group -- ``batch``
    itself -- takes none: ``audiokit batch -q mel`` never worked)."""
    from audiokit.cli.lazy import load_command
    from audiokit.pipelines import registry

    paths = []
    for entry in registry.entries():
        command = load_command(entry.name)
        paths += [[entry.name, sub] for sub in command.commands] if hasattr(command, "commands") else [[entry.name]]
    return paths


COMMAND_PATHS = _command_paths()


@pytest.mark.slow
@pytest.mark.parametrize("path", COMMAND_PATHS, ids=" ".join)
def test_every_command_takes_quiet_and_debug(cli, path):
    """Before ``--help`` (eager, but parsed after them): an unknown ``-q`` would be exit 2, "No such option"."""
    for flags in (["-q", "--debug"], ["--quiet"]):
        code, out, err = cli(*path, *flags, "--help")
        assert (code, err) == (0, ""), err
        assert re.search(r"--quiet +-q +Print nothing on stderr but errors\.", out), out
        assert re.search(r"--debug +Show the Python traceback on errors\.", out), out


def test_no_command_declares_quiet_or_debug_itself():
    """They are added to every command in one place (audiokit.cli.common): eleven signatures declared them."""
    from audiokit.pipelines import registry

    for entry in registry.entries():
        target = registry.load(entry.cli)
        if callable(target) and inspect.isfunction(target):
            assert not {"quiet", "debug"} & set(inspect.signature(target).parameters), entry.name


@pytest.mark.parametrize("where", ["end", "before the argument"])
def test_quiet_anywhere_among_the_commands_options_silences_warnings(cli, tmp_path, where):
    out = tmp_path / "g.wav"
    args = ["generate", "sine:440", "--dur", "2", "-o", out]  # --dur 2 is 2 samples: a warning
    assert "warning: --dur 2 means 2 samples" in cli(*args)[2]
    quiet = [*args, "-q"] if where == "end" else ["generate", "-q", *args[1:]]
    assert cli(*quiet) == (0, f"{out}\n", "")


def test_debug_given_as_an_options_value_is_not_debug(cli, tmp_path, monkeypatch):
    """``--npy --debug`` names the .npy "--debug": it is parsed, not looked for in argv (which showed a traceback)."""
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "missing.wav"
    assert cli("spectrum", missing, "--npy", "--debug") == (3, "", f"error: {missing}: no such file\n")
    assert os.listdir(tmp_path) == []


def test_debug_shows_the_traceback_of_a_bad_option_value(cli, tmp_path):
    """--debug is read before the other options are converted (it is eager), wherever it stands."""
    wav = tmp_path / "in.wav"
    audiokit.write(wav, 0.1 * np.ones((1, 800)), 8000)
    code, out, err = cli("mel", wav, "--n-mels", "0", "--npy", tmp_path / "m.npy", "--debug")
    assert (code, out) == (2, "")
    assert "Traceback (most recent call last)" in err and "BadParameter" in err
    assert err.endswith(
        "error: Invalid value for '--n-mels': Input should be greater than or equal to 1 (see 'audiokit mel --help')\n"
    )


def test_debug_lasts_one_run(cli, tmp_path):
    missing = tmp_path / "missing.wav"
    assert "Traceback" in cli("info", missing, "--debug")[2]
    assert cli("info", "--bogus", missing) == (2, "", "error: No such option: --bogus (see 'audiokit info --help')\n")
    assert cli("info", missing) == (3, "", f"error: {missing}: no such file\n")


def test_an_error_a_signal_caused_is_the_signal(cli, monkeypatch, tmp_path):
    """Ctrl-C landing in a C extension's import makes Python raise ImportError("initialization failed"), not
    KeyboardInterrupt: the run still ends as interrupted (130, one line), not as an internal error (seen under load
    in test_signals_at_random_moments[dehum])."""
    import audiokit.cli.info as info_cli

    def interrupted_import(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)  # the handler raises KeyboardInterrupt here, as during an import
        except KeyboardInterrupt:
            raise ImportError("initialization failed") from None

    monkeypatch.setattr(info_cli, "info", interrupted_import)
    wav = tmp_path / "x.wav"
    wav.write_bytes(b"")
    code, out, err = cli("info", wav)
    assert (code, out, err) == (130, "", "error: interrupted\n")

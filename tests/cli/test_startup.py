"""Start-up cost (issue 13): what each kind of invocation imports, and that the shortcuts change no behaviour.

``audiokit --version`` imports neither Typer nor numpy; ``--help`` no numpy; a ``--npy``-only job no
matplotlib and no pydantic; the lazy command list shows each command's own summary; the fast conversion of
plain option values gives what Typer's pydantic conversion gives, errors included.
"""

from __future__ import annotations

import dataclasses
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
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "audiokit", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "100"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", line)
        if match:
            names.add(match.group(1).split(".")[0])
    return names


@pytest.mark.slow
def test_version_imports_no_typer_and_nothing_numeric(tmp_path):
    names = _imported(["--version"], tmp_path)
    assert not names & {*HEAVY, "typer", "rich", "pydantic"}, sorted(names & {*HEAVY, "typer", "rich", "pydantic"})


@pytest.mark.slow
def test_help_imports_no_numeric_module(tmp_path):
    names = _imported(["--help"], tmp_path)
    assert not names & {*HEAVY, "pydantic"}, sorted(names & {*HEAVY, "pydantic"})


@pytest.mark.slow
@pytest.mark.parametrize("args", [["mel"], ["spectrogram"], ["mel", "--compat", "kaldi"], ["mfcc", "--compat", "kaldi"]])
def test_npy_only_job_imports_no_matplotlib_pydantic_nor_scipy(tmp_path, args):
    t = np.arange(16000) / 16000
    sf.write(tmp_path / "a.wav", 0.5 * np.sin(2 * np.pi * 440 * t), 16000, subtype="PCM_16")
    names = _imported([args[0], "a.wav", *args[1:], "--npy", "a.npy", "-q"], tmp_path)
    assert "numpy" in names
    assert not names & {"matplotlib", "pydantic", "scipy"}, sorted(names & {"matplotlib", "pydantic", "scipy"})


def test_version_fast_path_prints_what_the_option_prints(cli):
    import audiokit

    code, out, err = cli("--version")
    assert (code, out, err) == (0, f"audiokit {audiokit.__version__}\n", "")
    code, out2, _ = cli("--version", "info")  # not the fast path: Typer's eager option, before the command
    assert (code, out2) == (0, out)


def test_lazy_summaries_are_the_commands_own_help():
    from audiokit.cli.lazy import load_command
    from audiokit.pipelines import registry

    for item in registry.entries():
        command = load_command(item.name)
        assert command.name == item.name
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]
        assert item.summary == first, f"update the summary of {item.name!r} in audiokit/pipelines/registry.py"


def test_root_help_lists_every_command_without_loading_them(cli):
    from audiokit.pipelines import registry

    code, out, _ = cli("--help")
    assert code == 0
    for name, summary in ((item.name, item.summary) for item in registry.entries()):
        assert re.search(rf"│ {name} +{re.escape(summary[:40])}", out), name


SAMPLES = [
    "0",
    "1",
    "80",
    "-3",
    "007",
    "+5",
    " 5",
    "5 ",
    "1.5",
    "-0.25",
    "1e3",
    ".5",
    "5.",
    "1_000",
    "inf",
    "nan",
    "-nan",
    "abc",
    "",
    "99999999999999999999999",
    "1024",
    "1025",
    "20000",
    "0x10",
    "٣",
    "80.0",
    "-0",
]


def _outcome(runtime, value, param, ctx):
    from typer._click.exceptions import BadParameter

    try:
        result = runtime.coerce(value, param=param, ctx=ctx)
    except BadParameter as exc:
        return ("error", exc.format_message())
    return (type(result).__name__, repr(result))


def test_fast_conversion_equals_typers_for_every_plain_parameter():
    from typer._click import Context
    from typer._coercion import build_runtime_param

    from audiokit.cli.lazy import load_command
    from audiokit.pipelines import registry

    checked = 0
    commands = [load_command(item.name) for item in registry.entries()]
    commands += [sub for group in commands for sub in getattr(group, "commands", {}).values()]
    for command in commands:
        ctx = Context(command)
        params = [*command.params, command.get_help_option(ctx)]
        for param in params:
            if param is None or type(param._runtime_param).__name__ != "PlainValue":
                continue
            typer_way = build_runtime_param(param.type_descriptor)
            values = [None, True, False, param.default, *SAMPLES]
            if param.nargs == -1 or param.multiple:
                values = [None, [], ["a.wav", "b.wav"], ("x",)]
            for value in values:
                assert _outcome(param._runtime_param, value, param, ctx) == _outcome(typer_way, value, param, ctx), (
                    command.name,
                    param.name,
                    value,
                )
                checked += 1
    assert checked > 500


def test_typer_is_the_tested_range_and_has_the_private_names_audiokit_uses():
    """No public Typer API converts plain values without pydantic or shows ``FILE`` for ``{FILE}``, so
    audiokit.cli.typer_hooks uses Typer's private modules: pyproject pins the tested range, and this fails loudly
    when an upgrade moves any name used (rather than start-up or the help silently degrading)."""
    import typer
    from packaging.specifiers import SpecifierSet
    from typer._click import Context, exceptions
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param

    from audiokit.cli import typer_hooks
    from audiokit.cli.lazy import load_command

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    pinned = SpecifierSet(re.search(r'"typer([<>=!~][^"]*)"', pyproject).group(1))
    assert {spec.operator for spec in pinned} >= {">=", "<"}, pinned
    assert typer.__version__ in pinned, (typer.__version__, str(pinned))
    assert typer_hooks.click_exceptions is exceptions
    assert all(isinstance(getattr(exceptions, n), type) for n in ("NoArgsIsHelpError", "ClickException", "UsageError"))
    assert RuntimeParam.__abstractmethods__ == {"_coerce_value"} and callable(RuntimeParam.coerce)
    assert {f.name for f in dataclasses.fields(RuntimeParam)} == {"parameter_info", "annotation"}
    for name in ("annotation", "parameter_info", "file_annotation", "is_list", "is_path", "is_choice"):
        assert hasattr(TypeDescriptor, name) or name in {f.name for f in dataclasses.fields(TypeDescriptor)}, name
    command = load_command("mel")
    argument = next(p for p in command.params if p.param_type_name == "argument")
    assert callable(type(argument)._usage_display_name) and callable(type(argument).display_type_rich)
    for param in [*command.params, command.get_help_option(Context(command))]:
        assert isinstance(param.type_descriptor, TypeDescriptor) and hasattr(param, "_runtime_param"), param.name
    assert isinstance(build_runtime_param(argument.type_descriptor), RuntimeParam)


@pytest.mark.slow
def test_fftw_backend_imports_no_pyfftw_interfaces_nor_scipy_fft():
    pytest.importorskip("pyfftw")
    code = (
        "import sys, numpy as np; from audiokit.engine import get_backend; b = get_backend('fftw'); "
        "b.rfft(np.ones((2, 400), np.float32)); "
        "print(sorted(m for m in ('scipy.fft', 'scipy.fftpack', 'pyfftw.interfaces', 'dask') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
    # and the full package still works afterwards, on the same extension
    code = (
        "import numpy as np; from audiokit.engine import get_backend; get_backend('fftw'); import pyfftw, sys; "
        "assert pyfftw.FFTW is sys.modules['pyfftw.pyfftw'].FFTW; a = pyfftw.empty_aligned(8, 'float64'); a[:] = 1; "
        "print(pyfftw.interfaces.numpy_fft.rfft(a)[0].real)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "8.0"


def test_version_in_one_place_equals_the_installed_metadata():
    """``audiokit.__version__`` is ``audiokit/_version.py``'s, which pyproject.toml reads: the installed metadata agrees."""
    import importlib.metadata

    import audiokit
    from audiokit._version import __version__

    assert audiokit.__version__ == __version__ == importlib.metadata.version("audiokit")


@pytest.mark.parametrize("command", ["mel", "info", "istft", "generate", "spectrum"])
def test_help_shows_no_python_type_names(run, command):
    code, out, _ = run(command, "--help")
    text = out.decode()
    assert code == 0
    for noise in ("<str>", "<bool>", "<list[str]>", "<int>", "<float>", "{file}", "{FILE}"):
        assert noise not in text, noise

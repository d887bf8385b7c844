"""Fixtures that drive the CLI: in-process through ``main(argv)`` and as a real subprocess."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

# audiokit.cli.app imports the generate command, which needs audiokit.dsp.generate.
CLI_IMPORTABLE = importlib.util.find_spec("audiokit.dsp.generate") is not None


@pytest.fixture(autouse=True)
def _needs_the_cli():
    if not CLI_IMPORTABLE:
        pytest.skip("audiokit/dsp/generate.py does not exist yet, so audiokit.cli.app cannot be imported")


@pytest.fixture
def cli(capsys):
    """``cli(*args) -> (exit_code, stdout_text, stderr_text)``, running ``main(argv)`` in this process."""
    from audiokit.cli.app import main

    def call(*args) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def run(tmp_path: Path):
    """``run(*args, stdin=None) -> (exit_code, stdout_bytes, stderr_text)`` via ``python -m audiokit`` in tmp_path."""

    def call(*args, stdin: bytes | None = None, cwd: Path | None = None) -> tuple[int, bytes, str]:
        proc = subprocess.run(
            [sys.executable, "-m", "audiokit", *map(str, args)],
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            cwd=cwd or tmp_path,
            env={**os.environ, "COLUMNS": "200"},
            timeout=60,
        )
        return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")

    return call


@pytest.fixture
def listing(tmp_path: Path):
    """``listing() -> sorted names in tmp_path`` (to check that nothing was left behind)."""

    def names() -> list[str]:
        return sorted(p.name for p in tmp_path.iterdir())

    return names

"""Fixtures that drive the CLI: in-process through ``main(argv)`` and as a real subprocess."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="session", autouse=True)
def cli_app() -> ModuleType:
    """``audiokit.cli.app``, imported once for every CLI test.

    If the CLI cannot be imported, the ImportError is raised here, so every CLI
    test errors with its traceback: a broken CLI is never a silent skip.
    """
    return importlib.import_module("audiokit.cli.app")


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

"""Every ``audiokit/cli`` module stays small (issue 18: at most 200 lines), split by what each part owns."""

from __future__ import annotations

from pathlib import Path

import pytest

import audiokit

CLI = Path(audiokit.__file__).parent / "cli"


@pytest.mark.parametrize("module", [p.name for p in sorted(CLI.glob("*.py"))])
def test_cli_module_is_at_most_200_lines(module):
    lines = len((CLI / module).read_text().splitlines())
    assert lines <= 200, f"audiokit/cli/{module}: {lines} lines"

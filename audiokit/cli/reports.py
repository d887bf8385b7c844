"""Printing the reports of a measuring command over several files, the rule ``audiokit info`` follows.

``--json`` prints one indented object per file whatever their number (a stream of objects, as jq reads and
writes them), ``--jsonl`` one object per line, else the command's table; a file that cannot be read gets an
error line and the others are still reported (exit 3 when one failed, the error itself for a single file).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..errors import InputError, ParameterError
from . import console
from .options import print_paths, refuse_terminal


def value_text(value: float | None, unit: str, digits: int = 1) -> str:
    """A table cell: ``value`` with ``digits`` decimals and its unit, or ``-`` for an undefined value (None)."""
    return "-" if value is None else f"{value:.{digits}f} {unit}"


def check_json_flags(json_out: bool, json_lines: bool) -> None:
    """``--json`` and ``--jsonl`` exclude each other (ParameterError)."""
    if json_out and json_lines:
        raise ParameterError("--json and --jsonl exclude each other (--json indents each object, --jsonl puts one per line)")


def check_outputs(
    files: list[str], *, one_file: str, given: bool, batch: str, png: str | None, json_out: bool, json_lines: bool
) -> None:
    """The output rules of a measuring command that also writes files (ParameterError): ``--json``/``--jsonl``
    exclude each other; the outputs ``one_file`` names (``given``: one of them is) take one input (``batch`` is the
    command to use for more); ``-o -`` (the PNG on stdout) excludes the JSON; no PNG bytes to a terminal."""
    check_json_flags(json_out, json_lines)
    if given and len(files) > 1:
        raise ParameterError(f"{one_file} take one input file ({len(files)} given); use '{batch}'")
    if (json_out or json_lines) and png == "-":
        raise ParameterError("--json and -o - both write to stdout; choose one")
    refuse_terminal(png, "PNG")


def report_and_list(
    files: list[str],
    measure: Callable[[str], dict[str, Any]],
    table: Callable[[dict[str, Any]], None],
    *,
    png: str | None,
    written: list[str],
    json_out: bool,
    json_lines: bool,
) -> int:
    """:func:`report_each`, then the ``written`` paths: on stdout after a table, as notices on stderr after JSON,
    and after the one report (not printed) when ``png`` is ``-`` (stdout holds the PNG bytes only)."""
    if png == "-":
        measure(files[0])
        print_paths(written, to_stderr=True)
        return 0
    status = report_each(files, measure, table, json_out=json_out, json_lines=json_lines)
    print_paths(written, to_stderr=json_out or json_lines)
    return status


def report_each(
    files: list[str],
    measure: Callable[[str], dict[str, Any]],
    table: Callable[[dict[str, Any]], None],
    *,
    json_out: bool,
    json_lines: bool,
) -> int:
    """Measure and print each of ``files`` as it is done; the exit status (0, or that of the last failure)."""
    check_json_flags(json_out, json_lines)
    failed: InputError | None = None
    for path in files:
        try:
            report = measure(path)
        except InputError as exc:
            if len(files) == 1:
                raise
            console.error(str(exc))
            failed = exc
            continue
        if json_lines:
            print(json.dumps(report))
        elif json_out:
            print(json.dumps(report, indent=2))
        else:
            table(report)
    return failed.exit_code if failed else 0

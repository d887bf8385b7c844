"""Printing the reports of a measuring command over several files, the rule ``audiokit info`` follows.

``--json`` prints one indented object per file whatever their number (a stream of objects, as jq reads and
writes them), ``--jsonl`` one object per line, else the command's table; a file that cannot be read gets an
error line and the others are still reported (exit 3 when one failed, the error itself for a single file).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, ParameterError
from ..io.npy import sidecar_path
from . import console
from .options import print_paths, refuse_terminal


def value_text(value: float | None, unit: str, digits: int = 1) -> str:
    """A table cell: ``value`` with ``digits`` decimals and its unit, or ``-`` for an undefined value (None)."""
    return "-" if value is None else f"{value:.{digits}f} {unit}"


def check_json_flags(json_out: bool, json_lines: bool) -> None:
    """``--json`` and ``--jsonl`` exclude each other (ParameterError)."""
    if json_out and json_lines:
        raise ParameterError("--json and --jsonl exclude each other (--json indents each object, --jsonl puts one per line)")


@dataclass(frozen=True)
class FileOutputs:
    """The files a measuring command writes besides its report (:func:`run_measuring`).

    Attributes
    ----------
    png : str or None
        ``-o``: the PNG (``-`` for stdout).
    data, flag : str or None, str
        The data file (``--npy``, ``--series``) and its flag.
    sidecar : bool
        The data file has a JSON sidecar beside it (``.json``), which is listed too.
    batch : str
        The command to use for more than one input.
    """

    png: str | None
    data: str | None
    flag: str
    sidecar: bool
    batch: str

    def check(self, files: list[str], *, json_out: bool, json_lines: bool) -> None:
        """The output rules (ParameterError): ``--json``/``--jsonl`` exclude each other; the outputs take one input;
        ``-o -`` (the PNG on stdout) excludes the JSON; no PNG bytes to a terminal."""
        check_json_flags(json_out, json_lines)
        if (self.data is not None or self.png is not None) and len(files) > 1:
            raise ParameterError(f"{self.flag} and -o take one input file ({len(files)} given); use '{self.batch}'")
        if (json_out or json_lines) and self.png == "-":
            raise ParameterError("--json and -o - both write to stdout; choose one")
        refuse_terminal(self.png, "PNG")

    @property
    def written(self) -> list[str]:
        """The paths written, as printed: the PNG (unless stdout), the data file, its sidecar."""
        paths = [p for p in (self.png, self.data) if p not in (None, "-")]
        return paths + ([str(sidecar_path(self.data))] if self.data is not None and self.sidecar else [])


def run_measuring(
    files: list[str],
    outputs: FileOutputs,
    prepare: Callable[[], Callable[[str], dict[str, Any]]],
    table: Callable[[dict[str, Any]], None],
    *,
    json_out: bool,
    json_lines: bool,
) -> int:
    """A measuring command that also writes files: the output rules (:meth:`FileOutputs.check`), then ``prepare()``
    (the command's option checks; it returns the function measuring one path), then :func:`report_each`, then the
    written paths: on stdout after a table, as notices on stderr after JSON, and after the one report (not printed)
    when the PNG goes to stdout (``-o -``: stdout holds its bytes only).  The exit status."""
    outputs.check(files, json_out=json_out, json_lines=json_lines)
    measure = prepare()
    if outputs.png == "-":
        measure(files[0])
        print_paths(outputs.written, to_stderr=True)
        return 0
    status = report_each(files, measure, table, json_out=json_out, json_lines=json_lines)
    print_paths(outputs.written, to_stderr=json_out or json_lines)
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

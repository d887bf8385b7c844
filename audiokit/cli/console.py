"""Everything the CLI says to a human goes through here, on stderr.

stdout is reserved for data (paths, JSON, WAV/PNG/npy bytes).  Warnings from
the core (``warnings.warn``) are shown as ``warning: <text>`` lines; a rich
progress bar appears only when stderr is a terminal and ``--quiet`` is off.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator

_state = {"quiet": False, "debug": False}


def configure(*, quiet: bool = False) -> None:
    """Set the verbosity for this run and route warnings to stderr lines."""
    _state["quiet"] = quiet
    warnings.simplefilter("always")
    # a file a signal's unwinding left for the collector: a note for developers, not a line for the user
    warnings.simplefilter("ignore", ResourceWarning)
    warnings.showwarning = _show_warning


def set_debug(on: bool) -> None:
    """Record whether ``--debug`` was given: the CLI then prints the traceback of an error."""
    _state["debug"] = on


def debugging() -> bool:
    """True when ``--debug`` was given in this run."""
    return _state["debug"]


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if not _state["quiet"]:
        print(f"warning: {message}", file=sys.stderr)


def _printable(text: str) -> str:
    """``text`` with lone surrogates (a file name that is not UTF-8, as ``os.fsdecode`` gives it) as ``\\udcXX``:
    a stderr with strict errors (a captured or redirected stream) cannot encode them."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def error(text: str) -> None:
    """Print ``error: <text>`` on stderr (always, even with --quiet)."""
    print(f"error: {_printable(text)}", file=sys.stderr)


def info(text: str) -> None:
    """Print a human line on stderr unless --quiet."""
    if not _state["quiet"]:
        print(_printable(text), file=sys.stderr)


def show_progress() -> bool:
    """True when a progress bar should be drawn (stderr is a terminal, not quiet)."""
    return not _state["quiet"] and sys.stderr.isatty()


@contextlib.contextmanager
def progress(description: str, total: float | None) -> Iterator:
    """Yield ``advance(n)``; draws a rich progress bar on a terminal stderr only."""
    if not show_progress():
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


def print_table(title: str | None, columns: list[str], rows: list[list[str]]) -> None:
    """Print a command's result table on stdout (it is the data the user asked for)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_edge=False, header_style="bold")
    for name in columns:
        table.add_column(name, justify="right" if name not in ("channel", "file", "field") else "left")
    for row in rows:
        table.add_row(*row)
    # In a pipe the width is not the terminal's: never let rich truncate data.
    width = None if sys.stdout.isatty() else 10_000
    Console(file=sys.stdout, soft_wrap=True, width=width).print(table)

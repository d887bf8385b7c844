"""The standard streams at the edges of a run: closed when audiokit starts, a reader gone away, a failed write.

:func:`reopen_closed_stdio` runs first in :func:`audiokit.cli.app.main`; the others tell a write to a closed
pipe (exit 141, silently) from any other failed write to standard output (exit 4).  Nothing heavy is imported
here (``audiokit --version`` goes through it).
"""

from __future__ import annotations

import errno
import os
import sys

from ..errors import OutputError

__all__ = ["closed_pipe", "os_reason", "reopen_closed_stdio", "silence_stdout"]


def closed_pipe(exc: BaseException | None) -> bool:
    """True when ``exc`` is a write to a closed pipe, or was raised while handling one.

    rich (``Console.on_broken_pipe``: a result table, the help) and Typer (an ``EPIPE`` outside a command) catch the
    ``BrokenPipeError`` themselves and raise ``SystemExit(1)`` in its place; the original stays as its context.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def os_reason(exc: OSError) -> str:
    """One-line reason for a failed write (imported late: :mod:`audiokit.io` loads numpy)."""
    from ..io.atomic import describe_os_error

    return describe_os_error(exc)


class _ClosedOutput:
    """Stands for a standard output that was closed when audiokit started: writing data to it is an error (exit 4)."""

    def write(self, text: str) -> int:
        if text:
            raise OutputError("standard output is closed; nowhere to write the result")
        return 0

    def flush(self) -> None:
        """Nothing is buffered."""

    @property
    def buffer(self) -> _ClosedOutput:
        return self

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return 1


def reopen_closed_stdio() -> None:
    """Give closed descriptors 0-2 a /dev/null, so that no file opened later takes their number.

    Without this, a file opened while fd 2 is closed becomes "standard error" (error messages would land in it, or
    on stdout).  A closed stdin then reads as closed (``-`` is refused), a closed stdout refuses data (exit 4),
    and a closed stderr silences messages (there is nowhere to print them).
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            if fd == 0:
                sys.stdin = None  # type: ignore[assignment]
            elif fd == 1:
                sys.stdout = _ClosedOutput()  # type: ignore[assignment]
            else:
                sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


def silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so interpreter exit stays quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())

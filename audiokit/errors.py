"""The one exception hierarchy of audiokit and its exit statuses, in one enum (httpie's ``ExitStatus``).

Every error the library raises on purpose is an :class:`AudiokitError`; its ``exit_code`` is an
:class:`ExitStatus`.  The CLI maps ``exit_code`` to the process exit status in one place
(``audiokit.cli.app``) and prints ``error: <path>: <reason>``.

=====================  =========  ==========================================
class                  exit code  meaning
=====================  =========  ==========================================
``AudiokitError``      1          internal error (a bug)
``ParameterError``     2          bad option or argument value (usage)
``InputError``         3          input missing, unreadable or invalid
``OutputError``        4          output cannot be written
(Ctrl-C / SIGTERM)     130 / 143  interrupted; no partial output is left
(broken pipe)          141        the reader of stdout went away, silently
=====================  =========  ==========================================
"""

from __future__ import annotations

import enum
import os


class ExitStatus(enum.IntEnum):
    """Every exit status of ``audiokit`` (the README's "Exit codes" table); signals are 128 + the signal number."""

    OK = 0
    #: An internal error: a bug (``--debug`` shows the traceback).
    INTERNAL = 1
    #: Usage: unknown option, bad option or argument value.
    USAGE = 2
    #: Bad input: missing, unreadable or invalid audio (``audiokit batch``: some inputs failed).
    INPUT = 3
    #: An output cannot be written (folder missing, disk full, output = input).
    OUTPUT = 4
    #: Interrupted by Ctrl-C (128 + SIGINT).
    INTERRUPTED = 130
    #: The reader of standard output went away (128 + SIGPIPE).
    BROKEN_PIPE = 141
    #: Terminated by SIGTERM (128 + SIGTERM).
    TERMINATED = 143


class AudiokitError(Exception):
    """Root of all audiokit errors.

    Parameters
    ----------
    reason : str
        One-line human reason, without the ``error:`` prefix.
    path : str or Path, optional
        The file the error concerns; ``"-"`` means standard input/output.
    """

    exit_code = ExitStatus.INTERNAL

    def __init__(self, reason: str, path: str | os.PathLike[str] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.path = None if path is None else str(path)

    def __str__(self) -> str:
        if self.path is None:
            return self.reason
        return f"{self.path}: {self.reason}"


class ParameterError(AudiokitError, ValueError):
    """A parameter value is invalid (exit code 2)."""

    exit_code = ExitStatus.USAGE


class InputError(AudiokitError):
    """An input file is missing, unreadable or holds invalid audio (exit code 3)."""

    exit_code = ExitStatus.INPUT


class OutputError(AudiokitError):
    """An output cannot be written (exit code 4)."""

    exit_code = ExitStatus.OUTPUT

"""The one exception hierarchy of audiokit and its exit codes.

Every error the library raises on purpose is an :class:`AudiokitError`.  The
CLI maps ``exit_code`` to the process exit status in one place
(``audiokit.cli.app``) and prints ``error: <path>: <reason>``.

=====================  =========  ==========================================
class                  exit code  meaning
=====================  =========  ==========================================
``AudiokitError``      1          internal error (a bug)
``ParameterError``     2          bad option or argument value (usage)
``InputError``         3          input missing, unreadable or invalid
``OutputError``        4          output cannot be written
(Ctrl-C / SIGTERM)     130 / 143  interrupted; no partial output is left
=====================  =========  ==========================================
"""

from __future__ import annotations

import os


class AudiokitError(Exception):
    """Root of all audiokit errors.

    Parameters
    ----------
    reason : str
        One-line human reason, without the ``error:`` prefix.
    path : str or Path, optional
        The file the error concerns; ``"-"`` means standard input/output.
    """

    exit_code = 1

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

    exit_code = 2


class InputError(AudiokitError):
    """An input file is missing, unreadable or holds invalid audio (exit code 3)."""

    exit_code = 3


class OutputError(AudiokitError):
    """An output cannot be written (exit code 4)."""

    exit_code = 4

"""Progress and notices without a user interface: the caller passes a :class:`Reporter`, pipelines call it.

A pipeline announces each long loop with ``progress(description, total)``,
a context manager yielding ``advance(n)``; ``total`` and ``n`` are in the
loop's own unit (samples of the input for every streaming job).  The CLI
passes a factory that draws a rich bar on a terminal; the batch runner and
library callers pass :func:`no_progress` (the default).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Advance", "ProgressFactory", "no_progress", "Reporter", "SILENT"]

#: Called with the amount of work just done (in the unit of the loop's ``total``).
Advance = Callable[[float], None]


class ProgressFactory(Protocol):
    """``progress(description, total)`` → context manager yielding :data:`Advance`."""

    def __call__(self, description: str, total: float | None) -> AbstractContextManager[Advance]: ...


def _ignore(n: float = 1) -> None:
    """An :data:`Advance` that does nothing."""


@contextlib.contextmanager
def no_progress(description: str, total: float | None) -> Iterator[Advance]:
    """The silent :class:`ProgressFactory`."""
    yield _ignore


def _discard(text: str) -> None:
    """A notice sink that drops the text."""


@dataclass(frozen=True)
class Reporter:
    """What a pipeline may tell a human, through the caller.

    Attributes
    ----------
    progress : ProgressFactory
        Progress of long loops (see the module docstring).
    info : callable
        One human-readable line (a notice, not data: the CLI prints it on
        stderr unless ``--quiet``).  Warnings go through :mod:`warnings`.
    """

    progress: ProgressFactory = no_progress
    info: Callable[[str], None] = _discard


#: The reporter that says nothing (library and batch default).
SILENT = Reporter()

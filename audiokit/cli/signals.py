"""Ctrl-C and SIGTERM during a run: both unwind as exceptions (cleanup code runs), and are recorded.

:func:`recorded` installs the handlers for one run of :func:`audiokit.cli.app.main` and yields the list of the
signals received, whether or not their exception reached ``main`` (one raised inside a callback is swallowed
by Python).  :data:`ENDED_BY` says what such a run exits with.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from typing import Any

from ..errors import ExitStatus
from ..held import deferred

__all__ = ["ENDED_BY", "Terminated", "recorded"]


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives, so cleanup code runs."""


#: Signals received during this run (SIGINT, SIGTERM), whether or not their exception reached ``main``.
_RECEIVED: list[int] = []
#: Exit status and message of a run ended by a signal.
ENDED_BY: dict[int, tuple[ExitStatus, str]] = {
    int(signal.SIGINT): (ExitStatus.INTERRUPTED, "interrupted"),
    int(signal.SIGTERM): (ExitStatus.TERMINATED, "terminated"),
}


def ended_by() -> tuple[ExitStatus, str] | None:
    """Exit status and message of the first signal received in this run, or None."""
    return ENDED_BY[_RECEIVED[0]] if _RECEIVED else None


def _on_sigterm(signum: int, frame: Any) -> None:
    if deferred(signum):  # inside a held block (audiokit.held): handled when it ends
        return
    _RECEIVED.append(signum)
    raise Terminated()


def _on_sigint(signum: int, frame: Any) -> None:
    if deferred(signum):
        return
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def _quiet_unraisable(unraisable: Any) -> None:
    """Python drops an exception raised inside a callback (a weakref or import-lock callback, ``__del__``) and
    prints it as "Exception ignored".  Ours are recorded in :data:`_RECEIVED` and acted on by ``main``."""
    if isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)):
        return
    sys.__unraisablehook__(unraisable)


@contextlib.contextmanager
def recorded() -> Iterator[list[int]]:
    """Handle SIGTERM (and SIGINT, unless the run started with it ignored) for the ``with`` block; yield the signals
    received (in order), which stays readable after the block."""
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    # Ctrl-C stays ignored when the run was started with it ignored (a background job); otherwise it is recorded too
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_unraisable
    _RECEIVED.clear()
    try:
        yield _RECEIVED
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)

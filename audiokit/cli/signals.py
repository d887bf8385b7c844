"""Ctrl-C and SIGTERM during a run: both unwind as exceptions (cleanup code runs), and are recorded.

:func:`recorded` installs the handlers for one run of :func:`audiokit.cli.app.main` and yields the list of the
signals received, whether or not their exception reached ``main`` (one raised inside a callback is swallowed
by Python).  :data:`ENDED_BY` says what such a run exits with.

Outside a run -- while the ``audiokit`` process imports the CLI, and between the end of the run and the return
of ``main`` -- there is nothing to unwind: :func:`install_for_process` makes a signal there print its one line
(``error: terminated after writing out.png``) and end the process at once with 130/143, instead of dying silently
(SIGTERM's default) or with a traceback (Python's KeyboardInterrupt during an import).  Once ``main`` has returned,
:func:`ignore_while_exiting`: the command has finished and exits with its own status.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from ..errors import ExitStatus
from ..held import deferred

__all__ = [
    "ENDED_BY",
    "Terminated",
    "after_writing",
    "forget_written",
    "ignore_while_exiting",
    "install_for_process",
    "recorded",
    "stop_raising",
]


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


#: True while a run's signals unwind it as exceptions; False once its work is over (:func:`stop_raising`).
_RAISING = [False]


def stop_raising() -> None:
    """The run's work is over (called in the ``finally`` of :func:`audiokit.cli.app._run`): a signal from now on is
    recorded, not raised -- an exception raised in the run's last steps (a context manager's exit, the handlers'
    restore) would escape as a traceback, since every such step is Python code a signal can interrupt."""
    _RAISING[0] = False


def _on_sigterm(signum: int, frame: Any) -> None:
    if deferred(signum):  # inside a held block (audiokit.held): handled when it ends
        return
    _RECEIVED.append(signum)
    if _RAISING[0]:
        raise Terminated()


def _on_sigint(signum: int, frame: Any) -> None:
    if deferred(signum):
        return
    _RECEIVED.append(signum)
    if _RAISING[0]:
        raise KeyboardInterrupt


def after_writing(word: str) -> str:
    """``word`` ("interrupted", "terminated"), and what the run had written by then: ``terminated after writing
    out.png`` -- its outputs are complete, the signal came after they were committed."""
    atomic = sys.modules.get("audiokit.io.atomic")  # not imported yet: nothing was written
    committed = getattr(atomic, "COMMITTED", None)
    if committed is None or not committed.count:
        return word
    return f"{word} after writing {committed.describe()}"


def forget_written() -> None:
    """Start a run with nothing written (several runs of :func:`audiokit.cli.app.main` in one process)."""
    atomic = sys.modules.get("audiokit.io.atomic")
    if atomic is not None:
        atomic.COMMITTED.clear()


def _outside_run(signum: int, frame: Any) -> None:
    """A signal before or after the run: its one line (naming what was written, if anything), then exit now."""
    code, word = ENDED_BY[signum]
    word = after_writing(word)
    with contextlib.suppress(Exception):  # data a finished command printed goes out first
        sys.stdout.flush()
    with contextlib.suppress(OSError):
        os.write(2, f"error: {word}\n".encode(errors="replace"))
    os._exit(int(code))


def install_for_process() -> None:
    """Make SIGTERM (and SIGINT, unless ignored from the start) outside a run print one line and exit (see above).

    For the ``audiokit`` process only (the console script and ``python -m audiokit``), never on import: a program
    or test that calls :func:`audiokit.cli.app.main` keeps its own handlers, which :func:`recorded` restores.
    """
    signal.signal(signal.SIGTERM, _outside_run)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _outside_run)


def ignore_while_exiting() -> None:
    """After ``main`` returned: ignore SIGTERM/SIGINT while the interpreter exits.

    The command has finished (its outputs committed, stdout flushed) and its exit status stands.  Python resets its
    own handlers to the default action early in its exit (a late signal would then kill the process silently), but
    keeps an ignored signal ignored.
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if signal.getsignal(signal.SIGINT) is _outside_run:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _quiet_unraisable(unraisable: Any) -> None:
    """Python drops an exception raised inside a callback (a weakref or import-lock callback, ``__del__``) and
    prints it as "Exception ignored".  Ours are recorded in :data:`_RECEIVED` and acted on by ``main``."""
    if isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)):
        return
    sys.__unraisablehook__(unraisable)


@contextlib.contextmanager
def recorded() -> Iterator[list[int]]:
    """Handle SIGTERM (and SIGINT, unless the run started with it ignored) for the ``with`` block; yield the signals
    received (in order), which stays readable after the block.

    A signal raises only until :func:`stop_raising`; one that escapes the block (it landed before the run's own
    handling began) is swallowed: it is in the list.  At the end, the temp files a signal stranded are removed
    (:func:`audiokit.io.atomic.discard_live_temps`) and the previous handlers restored."""
    _RAISING[0] = True
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    # Ctrl-C stays ignored when the run was started with it ignored (a background job); otherwise it is recorded too
    previous_int = signal.getsignal(signal.SIGINT)
    catch_int = previous_int is signal.default_int_handler or previous_int is _outside_run
    if catch_int:
        signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_unraisable
    _RECEIVED.clear()
    try:
        yield _RECEIVED
    except (KeyboardInterrupt, Terminated):
        pass  # landed before the run's own handling began: recorded, main reports it
    finally:
        _RAISING[0] = False
        if (atomic := sys.modules.get("audiokit.io.atomic")) is not None:  # not imported: nothing written
            atomic.discard_live_temps()  # temp files a signal stranded between two context managers
        signal.signal(signal.SIGTERM, previous)
        if catch_int:
            signal.signal(signal.SIGINT, previous_int)

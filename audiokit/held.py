"""Ctrl-C and SIGTERM held back for the length of a critical section (shared by the batch runner and the registry).

Inside :func:`signals_held` a SIGINT/SIGTERM is acted on only when the block ends: the signals are blocked in the
calling thread (``pthread_sigmask``), and -- since the kernel gives a process-directed signal to any thread that
does not block it (OpenBLAS's, FFTW's), after which Python runs the handler in the main thread anyway -- audiokit's
own handlers (:mod:`audiokit.cli.signals`) ask :func:`deferred` first: inside a held block the signal is kept and its
handler runs when the block ends.  Used where an exception raised from a signal handler would do harm: while a
manifest line is written and counted, and while a command's module is imported (an exception raised inside the
initialisation of a compiled extension -- soxr's -- crashed ``audiokit resample`` with SIGSEGV, about once in 300
signals at random moments).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

__all__ = ["HELD_SIGNALS", "deferred", "signals_held"]

#: The signals :func:`signals_held` holds back.
HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
#: How many held blocks are open in this process, and the signals that arrived meanwhile.
_DEPTH = [0]
_PENDING: list[int] = []


def deferred(signum: int) -> bool:
    """For a signal handler: True while a held block is open (the signal is kept and handled when it ends)."""
    if _DEPTH[0] > 0:
        _PENDING.append(signum)
        return True
    return False


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold :data:`HELD_SIGNALS` for the block; one that arrives meanwhile is handled when it ends (see above)."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - no pthread_sigmask on this platform
        previous = None
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a signal blocked meanwhile is delivered here
        if _DEPTH[0] == 0 and _PENDING:
            signum = _PENDING[0]
            _PENDING.clear()
            handler = signal.getsignal(signum)
            if callable(handler):
                handler(signum, None)  # its exception (KeyboardInterrupt, Terminated) leaves the block here

"""Ctrl-C and SIGTERM held back for the length of a critical section (shared by the batch runner and the registry).

:func:`signals_held` blocks SIGINT/SIGTERM in the calling thread (``pthread_sigmask``); one that arrives meanwhile
stays pending and is delivered -- its Python handler runs -- when the block ends.  Used where an exception raised
from a signal handler would do harm: while a manifest line is written and counted, and while a command's module is
imported (an exception raised inside the initialisation of a compiled extension -- soxr's nanobind module -- crashed
the interpreter with SIGSEGV once in ~150 signals at random moments).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

__all__ = ["HELD_SIGNALS", "signals_held"]

#: The signals :func:`signals_held` holds back.
HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Block :data:`HELD_SIGNALS` in this thread for the block; one that arrives meanwhile is delivered when it ends."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - no pthread_sigmask on this platform
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)

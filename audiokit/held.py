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

__all__ = ["HELD_SIGNALS", "deferred", "held_now", "signals_held", "signals_released"]

#: The signals :func:`signals_held` holds back.
HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
#: How many held blocks are open in this process, and the signals that arrived meanwhile.
_DEPTH = [0]
_PENDING: list[int] = []
#: True while a :func:`signals_released` window is open inside a held block.
_WINDOW = [False]


def deferred(signum: int) -> bool:
    """For a signal handler: True while a held block is open (the signal is kept and handled when it ends).

    Inside a :func:`signals_released` window the first signal is not deferred (False: the handler raises) and
    closes the window, so that any later one is kept again."""
    if _DEPTH[0] > 0:
        if _WINDOW[0]:
            _WINDOW[0] = False
            return False
        _PENDING.append(signum)
        return True
    return False


def held_now() -> bool:
    """True while a held block is open in this process."""
    return _DEPTH[0] > 0


class signals_released:  # noqa: N801 (used as a context manager, like signals_held)
    """Inside a held block, let Ctrl-C/SIGTERM act for the length of a ``with``: their handler raises there.

    For a wait inside a held C call that Python code can abandon safely -- a ranged read of a URL input, made from
    libsndfile's read callback (:class:`audiokit.io.remote.RemoteFile`), that may hang on a stalled connection for
    the transport's timeouts: the code in the ``with`` catches what the handler raises (``KeyboardInterrupt``,
    ``Terminated``) and hands it on once the C call has returned.  The signals are unblocked in this thread for the
    window (so that the wait is interrupted at once, not at its next timeout), a signal kept earlier in the block is
    raised on entry, and the first signal in the window closes it (:func:`deferred`): one exception at most, and only
    inside the ``with``.  Outside a held block this does nothing.
    """

    def __enter__(self) -> signals_released:
        self._open = _DEPTH[0] > 0
        if not self._open:
            return self
        self._previous = _mask(signal.SIG_UNBLOCK)
        _WINDOW[0] = True
        if _PENDING:  # a signal that came while the block held it: raised now, inside the window
            signum = _PENDING.pop(0)
            _PENDING.clear()
            handler = signal.getsignal(signum)
            try:
                if callable(handler):
                    handler(signum, None)
            except BaseException:
                self._close()
                raise
        return self

    def _close(self) -> None:
        _WINDOW[0] = False
        if self._previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._previous)

    def __exit__(self, *exc: object) -> None:
        if self._open:
            self._close()


def _mask(how: int) -> set[int | signal.Signals] | None:
    """``pthread_sigmask(how, HELD_SIGNALS)``; the previous mask, or None where there is none."""
    try:
        return signal.pthread_sigmask(how, HELD_SIGNALS)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - no pthread_sigmask on this platform
        return None


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

"""A stalled connection for the object-storage tests: WSGI middleware over the moto server that, for the GETs of
chosen objects from a chosen byte on, sends the response's headers and part of its body, then sends nothing more
until released -- a server that accepted the request and hangs mid-body, as a dying connection looks to a client.
:func:`signal_while_stalled` runs a command into such a stall and signals it there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from audiokit.io.remote import READ_TIMEOUT

__all__ = ["DEFAULT_SIGINT", "GUARD", "Stall", "signal_while_stalled"]

#: ``python -m audiokit`` with SIGINT's default action: a process started in the background (``cmd &``, nohup, some
#: CI runners) inherits SIGINT ignored, and audiokit keeps an ignored SIGINT ignored, as it should.
DEFAULT_SIGINT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'audiokit', *sys.argv[1:]])",
]
#: Seconds a signalled command may take to end before the test fails: well under the transport's read timeout, so
#: only the signal can have ended it (a hang guard, not a timing measurement; benchmarks/bench_remote.py measures).
GUARD = READ_TIMEOUT / 2

_RANGE_START = re.compile(r"bytes=(\d+)-")


class Stall:
    """Wrap ``log``'s application (a :class:`tests.helpers.remote.RequestLog`) while the ``with`` lasts.

    Parameters
    ----------
    log : RequestLog
        The moto server's log, whose ``app`` is the server's application.
    fragment : str
        GETs whose path holds it stall (other requests are served as usual).
    from_byte : int
        Only ranged GETs starting at or after this byte stall (0: the first read too).
    sent : int
        Body bytes sent before the stall.

    Attributes
    ----------
    stalled : threading.Event
        Set once a response has stalled.
    """

    def __init__(self, log: Any, fragment: str, *, from_byte: int = 0, sent: int = 4096) -> None:
        self.log, self.fragment, self.from_byte, self.sent = log, fragment, from_byte, sent
        self.stalled = threading.Event()
        self._release = threading.Event()
        self._app: Callable[..., Iterable[bytes]] | None = None

    def __enter__(self) -> Stall:
        self._app = self.log.app
        self.log.app = self._serve
        return self

    def __exit__(self, *exc: object) -> None:
        self.log.app = self._app
        self._release.set()  # the stalled responses end (their client is gone: the server drops them)

    def _serve(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        assert self._app is not None
        body = self._app(environ, start_response)
        match = _RANGE_START.match(environ.get("HTTP_RANGE") or "bytes=0-")
        start = int(match.group(1)) if match else 0
        if environ["REQUEST_METHOD"] != "GET" or self.fragment not in environ.get("PATH_INFO", "") or start < self.from_byte:
            return body
        return self._stalling(body)

    def _stalling(self, body: Iterable[bytes]) -> Iterator[bytes]:
        data = b"".join(body)
        yield data[: self.sent]
        self.stalled.set()
        self._release.wait(120)
        yield data[self.sent :]


def signal_while_stalled(
    log: Any,
    fragment: str,
    args: list[str],
    signum: int,
    *,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str],
    from_byte: int = 0,
) -> tuple[int, bytes, bytes]:
    """Run ``audiokit ARGS`` (:data:`DEFAULT_SIGINT`) with the GETs of ``fragment`` stalled (:class:`Stall` over
    ``log``, from ``from_byte``); once a response has stalled, and 0.2 s into it, send ``signum``.

    Returns
    -------
    (returncode, stdout, stderr)
        Of the command, which must end within :data:`GUARD` seconds of the signal (else the test fails; the process
        is killed).
    """
    with Stall(log, fragment, from_byte=from_byte) as stall:
        proc = subprocess.Popen(
            [*DEFAULT_SIGINT, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=dict(env),
            cwd=cwd,
        )
        try:
            assert stall.stalled.wait(120), f"the command never reached the stalled read of {fragment}"
            time.sleep(0.2)  # well inside the stalled read
            assert proc.poll() is None, proc.communicate()
            proc.send_signal(signum)
            stdout, stderr = proc.communicate(timeout=GUARD)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return proc.returncode, stdout, stderr

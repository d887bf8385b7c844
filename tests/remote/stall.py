"""A stalled connection for the object-storage tests: WSGI middleware over the moto server that, for the GETs of
chosen objects from a chosen byte on, sends the response's headers and part of its body, then sends nothing more
until released -- a server that accepted the request and hangs mid-body, as a dying connection looks to a client.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["Stall"]

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

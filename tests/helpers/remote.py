"""Real servers on 127.0.0.1 for the object-storage tests: moto's S3 server and a plain HTTP server with ranges.

:class:`CountingMotoServer` is moto's :class:`~moto.server.ThreadedMotoServer` (the real S3 implementation moto
serves to any client) with its WSGI application wrapped in :class:`RequestLog`, which records every request the
server sees (method, path, ``Range`` header, status, bytes of the response body, recorded as the response starts
so a client never sees a response the log lacks): the tests count
requests and bytes from there, not from the client.  :class:`RangeHTTPServer` serves a folder over plain HTTP/1.1
with ``Range: bytes=a-b`` honoured (Python's SimpleHTTPRequestHandler sends whole files) and logs the same way.

Both bind port 0 (a free port chosen by the kernel) and are stopped by ``stop()``.  :func:`run_audiokit` runs the
CLI in a subprocess with a test's environment (the batches of the tests reach the server from their own processes).
"""

from __future__ import annotations

import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "AUDIOKIT",
    "CountingMotoServer",
    "RangeHTTPServer",
    "Request",
    "RequestLog",
    "FAKE_KEY",
    "FAKE_SECRET",
    "run_audiokit",
    "server_environment",
]

#: The command line of the CLI in a subprocess: ``python -m audiokit`` of this interpreter.
AUDIOKIT = [sys.executable, "-m", "audiokit"]

#: Credentials moto accepts (it checks none unless auth is switched on); the tests grep outputs for the secret.
FAKE_KEY = "AKIAAUDIOKITTESTKEY1"
FAKE_SECRET = "audiokit-test-secret-Zq8w1x9v2Lr6"


@dataclass(frozen=True)
class Request:
    """One request a test server saw."""

    method: str
    path: str
    range: str | None
    status: int
    sent: int  # bytes of the response body


class RequestLog:
    """WSGI middleware recording :class:`Request` s (thread-safe); ``clear()`` between the steps of a test."""

    def __init__(self, app: Callable[..., Iterable[bytes]] | None = None):
        self.app = app
        self._lock = threading.Lock()
        self._requests: list[Request] = []

    def add(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def gets(self, fragment: str = "") -> list[Request]:
        """The GET requests whose path holds ``fragment``."""
        return [r for r in self.requests if r.method == "GET" and fragment in r.path]

    def bytes_sent(self, fragment: str = "") -> int:
        """Body bytes sent in answer to the GET requests whose path holds ``fragment``."""
        return sum(r.sent for r in self.gets(fragment))

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """Record the request when its response starts (before the client can see a byte of it): the body's
        length is its ``Content-Length`` (none for HEAD)."""
        assert self.app is not None
        method = environ["REQUEST_METHOD"]

        def start(status_line: str, headers: list, exc_info: Any = None) -> Any:
            length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
            sent = 0 if method == "HEAD" else length
            self.add(Request(method, environ.get("PATH_INFO", ""), environ.get("HTTP_RANGE"), int(status_line.split()[0]), sent))
            return start_response(status_line, headers, exc_info) if exc_info else start_response(status_line, headers)

        return self.app(environ, start)


class CountingMotoServer:
    """moto's threaded S3 server on 127.0.0.1 (a free port) whose requests are recorded in ``log``."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self.log = RequestLog()
        log = self.log

        class _Server(ThreadedMotoServer):  # the same server, its application wrapped in the log
            def _server_entry(self) -> None:
                from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
                from werkzeug.serving import make_server

                class Quiet(MotoRequestHandler):  # the log is ``RequestLog``, not werkzeug's lines on stderr
                    def log(self, type: str, message: str, *args: Any) -> None:
                        pass

                log.app = DomainDispatcherApplication(create_backend_app)
                self._server = make_server(self._ip_address, self._port, log, True, request_handler=Quiet)
                self._server_ready_event.set()
                self._server.serve_forever()

        self._server = _Server(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"

    def client(self) -> Any:
        """A boto3 S3 client of this server (the tests' own setup: buckets and objects)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=FAKE_KEY,
            aws_secret_access_key=FAKE_SECRET,
            region_name="us-east-1",
        )

    def stop(self) -> None:
        self._server.stop()


def server_environment(endpoint: str) -> dict[str, str]:
    """The environment that points boto/s3fs at ``endpoint`` with the fake credentials (no profile, no metadata)."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": FAKE_KEY,
        "AWS_SECRET_ACCESS_KEY": FAKE_SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }


def run_audiokit(
    *args: object, env: dict[str, str], cwd: str | os.PathLike[str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m audiokit ARGS`` (each made text) with ``env``, standard input closed, its output captured as text;
    a hang guard of ``timeout`` seconds (subprocess.TimeoutExpired), not a timing measurement."""
    return subprocess.run(
        [*AUDIOKIT, *map(str, args)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    """GET/HEAD of the files under the server's root, with single ``Range: bytes=a-b`` requests honoured."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the log is the server's RequestLog
        pass

    def _target(self) -> Path | None:
        rel = self.path.split("?", 1)[0].lstrip("/")
        path = (self.server.root / rel).resolve()
        return path if path.is_file() and self.server.root in path.parents else None

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def do_GET(self) -> None:
        self._serve(body=True)

    def _serve(self, body: bool) -> None:
        path = self._target()
        if path is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.server.log.add(Request(self.command, self.path, self.headers.get("Range"), 404, 0))
            return
        size = path.stat().st_size
        first, last, status = 0, size - 1, 200
        text = self.headers.get("Range")
        match = _RANGE.match(text.strip()) if text else None
        if match and (match.group(1) or match.group(2)):
            if match.group(1):
                first = int(match.group(1))
                last = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
            else:  # a suffix: the last N bytes
                first = max(size - int(match.group(2)), 0)
            if first >= size or first > last:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.server.log.add(Request(self.command, self.path, text, 416, 0))
                return
            status = 206
        length = last - first + 1
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(length))
        if status == 206:
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.server.log.add(Request(self.command, self.path, text, status, length if body else 0))  # before any byte
        self.end_headers()
        sent = 0
        cut = self.server.cut_after
        if cut is not None and body and self.server.log.bytes_sent() > cut:  # the network "cut": half a body, closed
            length = length // 2
            self.close_connection = True
        if body:
            with open(path, "rb") as fh:
                fh.seek(first)
                while sent < length:
                    chunk = fh.read(min(1 << 16, length - sent))
                    if not chunk:
                        break
                    try:
                        self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        break
                    sent += len(chunk)


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    root: Path
    log: RequestLog
    cut_after: int | None = None


class RangeHTTPServer:
    """A threaded HTTP/1.1 server of folder ``root`` on 127.0.0.1 (a free port), with ranges; requests in ``log``."""

    def __init__(self, root: Path):
        self.log = RequestLog()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _RangeHandler)
        self._httpd.root = Path(root).resolve()
        self._httpd.log = self.log
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    def cut_after(self, n_bytes: int | None) -> None:
        """Once more than ``n_bytes`` body bytes were served in all, send half of each body and close the connection
        (a network cut mid-read, as the client sees it: a short body); None: serve whole bodies again."""
        self._httpd.cut_after = n_bytes

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

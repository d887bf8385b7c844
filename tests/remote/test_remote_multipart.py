"""A multipart upload of a remote ``--out`` that fails midway leaves no object and no open upload (issue 22).

:meth:`audiokit.io.outdir.RemoteOut.put` hands a finished file to s3fs's ``put_file``, which uploads a file of two
parts or more (2 x 50 MiB) as a multipart upload.  When that fails midway the upload is aborted, so the object
appears whole or not at all and S3 keeps (and bills) no parts:

* a request that fails (here part 2 answered ``403 AccessDenied`` by the real moto server): one line, exit 4's
  :class:`~audiokit.io.outdir.ObjectStoreError`;
* SIGTERM while a part is in flight (here part 2 held by the server, the signal raising the CLI's ``Terminated``
  in the main thread): s3fs aborts only on an ``Exception``, so it is ``RemoteOut.put`` that aborts, before the
  exception goes on -- checked while the held part is still held, so no later request of s3fs's can have done it.

The abort of an upload left by a ``kill -9`` at the next start is tested in tests/remote/test_batch_outputs.py.
To use 12 MiB instead of 100 MiB, s3fs's part size (``s3fs.core.calculate_chunksize``, 50 MiB) is lowered to
S3's smallest, 5 MiB, for the test: audiokit passes none of its own.  Part numbers are counted at the server.
"""

from __future__ import annotations

import signal
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from audiokit.cli.signals import Terminated
from audiokit.io.outdir import ObjectStoreError, RemoteOut
from audiokit.io.remote import storage_options

pytestmark = pytest.mark.slow  # 12 MiB through a real server

BUCKET = "multipart"
PART = 5 << 20  # S3's smallest part (moto checks it only when an upload is completed)
SIZE = 12 << 20  # parts of 5, 5 and 2 MiB: a multipart upload at PART (>= 2 parts), one PutObject at s3fs's 50 MiB
DENIED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message>'
    b"<RequestId>audiokit-test</RequestId></Error>"
)


class PartTwo:
    """WSGI middleware over the moto server's application: records the part numbers of the uploads it sees and
    answers part 2 with ``AccessDenied`` (``deny``) or holds it until the ``with`` ends (``hold``; ``held`` is set
    once it is held)."""

    def __init__(self, log: Any, mode: str) -> None:
        self.log, self.mode = log, mode
        self.parts: set[int] = set()
        self.held = threading.Event()
        self._release = threading.Event()
        self._app: Callable[..., Iterable[bytes]] | None = None

    def __enter__(self) -> PartTwo:
        self._app = self.log.app
        self.log.app = self._serve
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.log.app = self._app

    def _serve(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        assert self._app is not None
        query = dict(item.partition("=")[::2] for item in environ.get("QUERY_STRING", "").split("&") if item)
        if environ["REQUEST_METHOD"] == "PUT" and "uploadId" in query and query.get("partNumber", "").isdigit():
            number = int(query["partNumber"])
            self.parts.add(number)
            if number == 2 and self.mode == "deny":
                start_response("403 Forbidden", [("Content-Type", "application/xml"), ("Content-Length", str(len(DENIED)))])
                return [DENIED]
            if number == 2 and self.mode == "hold":
                self.held.set()
                self._release.wait(120)
        return self._app(environ, start_response)


@pytest.fixture(scope="module")
def bucket(s3) -> str:
    s3.server.client().create_bucket(Bucket=BUCKET)
    return BUCKET


@pytest.fixture
def big_file(tmp_path) -> str:
    """12 MiB of bytes that are not all one value (an upload of zeros could be compressed on the way)."""
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(range(256)) * (SIZE // 256))
    return str(path)


@pytest.fixture
def small_parts(monkeypatch) -> None:
    import s3fs.core

    monkeypatch.setattr(s3fs.core, "calculate_chunksize", lambda filesize, chunksize=None, **kwargs: PART)


def _left(client, prefix: str) -> tuple[list[str], list[str]]:
    """The objects and the open multipart uploads under ``prefix``."""
    objects = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    uploads = client.list_multipart_uploads(Bucket=BUCKET, Prefix=prefix).get("Uploads", [])
    return [o["Key"] for o in objects], [u["Key"] for u in uploads]


def test_a_part_refused_midway_is_one_error_and_leaves_no_upload(bucket, s3_env, big_file, small_parts):
    prefix = f"denied-{uuid.uuid4().hex[:8]}"
    out = RemoteOut(f"s3://{bucket}/{prefix}", storage_options())
    with PartTwo(s3_env.server.log, "deny") as server:
        with pytest.raises(ObjectStoreError) as caught:
            out.put(big_file, "big.bin")
    assert str(caught.value) == (
        f"s3://{bucket}/{prefix}/big.bin: cannot write: access denied (check the credentials and the bucket's policy)"
    )
    assert 2 in server.parts  # the multipart path (a PutObject has no part numbers)
    assert _left(s3_env.server.client(), prefix) == ([], [])


def test_sigterm_during_a_part_aborts_the_upload(bucket, s3_env, big_file, small_parts):
    prefix = f"terminated-{uuid.uuid4().hex[:8]}"
    out = RemoteOut(f"s3://{bucket}/{prefix}", storage_options())
    client = s3_env.server.client()

    def terminate(signum: int, frame: Any) -> None:
        raise Terminated

    def signal_when_held(server: PartTwo) -> None:
        if server.held.wait(120):
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        with PartTwo(s3_env.server.log, "hold") as server:
            sender = threading.Thread(target=signal_when_held, args=(server,), daemon=True)
            sender.start()
            try:
                with pytest.raises(Terminated):
                    out.put(big_file, "big.bin")
            finally:
                sender.join(130)
            assert server.held.is_set()  # the multipart path: part 2 of the upload was held
            left = _left(client, prefix)  # part 2 still held: only RemoteOut.put can have aborted the upload
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert left == ([], [])

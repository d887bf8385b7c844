"""The output folder's bookkeeping: ``manifest.jsonl``, ``results.jsonl``, the lock and stale temp files.

``manifest.jsonl`` is append-only: one JSON object per finished input, written
by the batch's client process only (workers return their records), one
``write`` per line, flushed at once, ``fsync`` at the end.  A ``kill -9``
can tear at most the last line: readers skip a line that is not a JSON
object, and the writer starts a new line after a torn one.  The latest record
of an input (its id, path and segment) is the one that counts.

An id belongs to one source (input path) per folder (:class:`IdOwners`): the
path of its last ``ok`` line, or, for an id that never succeeded, any path
that has a line for it.  A batch refuses to give an id to another source, so
that one collection's outputs never replace another's.

Line format (keys in this order; see README "Corpora")::

    {"id": "a/b/utt", "path": "/abs/a/b/utt.wav", "segment": null, "size": 123, "mtime_ns": 1700000000000000000,
     "digest": "blake2b:0123456789abcdef0123456789abcdef", "content_digest": null, "status": "ok", "error": null,
     "outputs": {"npy": "a/b/utt.mel.npy", "json": "a/b/utt.mel.json"},
     "shape": [80, 1198], "duration": 12.0, "sr": 16000, "channels": 1, "warnings": [], "seconds": 0.004,
     "command": "mel", "fingerprint": "sha256:0123456789abcdef", "finished": "2026-12-01T10:00:00Z"}

``digest`` is :func:`head_tail_digest` of the input as the worker found it (every record whose input could be
stat-ed), ``content_digest`` its full-content digest with ``--verify hash`` (else null).  On resume an input whose
size and mtime match is compared by content too (:func:`input_unchanged`, modes :data:`VERIFY_MODES`): a file
rewritten with the same size and its mtime restored (``touch -r``, ``cp -p``, ``rsync -t``) is computed again.

``results.jsonl`` (``info``, ``spectrum``) holds ``{"id": ..., **report}`` per
input; at the start of a run it is rewritten (atomically) to the results of
the inputs that run skips, so that every input appears once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import OutputError, ParameterError
from ..io.atomic import TEMP_MARKER, describe_os_error, write_text_atomic
from ..io.remote import is_url, object_state

__all__ = [
    "MANIFEST",
    "RESULTS",
    "LOCK",
    "read_records",
    "latest_records",
    "read_manifest",
    "listed_outputs",
    "IdOwners",
    "record_key",
    "ManifestWriter",
    "DirLock",
    "sweep_temp_files",
    "compact_manifest",
    "compact_results",
    "file_state",
    "VERIFY_MODES",
    "check_verify",
    "head_tail_digest",
    "content_digest",
    "input_digests",
    "input_unchanged",
    "is_done",
    "split_done",
]

MANIFEST = "manifest.jsonl"
RESULTS = "results.jsonl"
LOCK = ".audiokit-batch.lock"

#: How resume tells an input is unchanged (``--verify``), weakest first: ``stat`` size and mtime only;
#: ``head-tail`` (the default) also :func:`head_tail_digest`; ``hash`` also :func:`content_digest` (every byte).
VERIFY_MODES = ("stat", "head-tail", "hash")
#: Bytes :func:`head_tail_digest` reads at each end of a file (64 KiB).
DIGEST_SPAN = 64 * 1024
#: Bytes per read of :func:`content_digest` (1 MiB).
_BLOCK = 1 << 20


def read_records(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """The records of a manifest (or results) file in order, skipping torn or invalid lines."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                yield record


def record_key(item_id: str, path: str, segment: dict | None) -> tuple[str, str, str]:
    """What identifies an input across runs: id, path and segment."""
    return item_id, path, json.dumps(segment, sort_keys=True)


class IdOwners:
    """Which source (input path) each id of an output folder belongs to, from its manifest lines in order.

    An id belongs to the path of its last ``ok`` line (its outputs are that
    file's); an id that never succeeded belongs to every path that has a line
    for it (in-run duplicates fail beside the first), and no ``ok`` line
    of another path has replaced them.
    """

    def __init__(self) -> None:
        self._ok: dict[str, str] = {}
        self._tried: dict[str, set[str]] = {}

    def add(self, record: dict[str, Any]) -> None:
        """Take one manifest line into account (lines in file order)."""
        item_id, path = record["id"], str(record.get("path"))
        if record.get("status") == "ok":
            self._ok[item_id] = path
            self._tried.pop(item_id, None)
        elif item_id not in self._ok:
            self._tried.setdefault(item_id, set()).add(path)

    def other_owner(self, item_id: str, path: str) -> str | None:
        """The path ``item_id`` belongs to when that is not ``path`` (nor the same file); None when ``path`` may have it."""
        if item_id in self._ok:
            owners = {self._ok[item_id]}
        else:
            owners = self._tried.get(item_id, set())
        if not owners or path in owners:
            return None
        for owner in owners:
            with contextlib.suppress(OSError):
                if os.path.samefile(owner, path):  # the same file under another name (a symlinked folder)
                    return None
        return min(owners)


def read_manifest(path: str | os.PathLike) -> tuple[dict[tuple[str, str, str], dict[str, Any]], IdOwners]:
    """One pass over a manifest: the last record of each input (:func:`record_key`) and the ids' owners."""
    latest = {}
    owners = IdOwners()
    for record in read_records(path):
        latest[record_key(record["id"], str(record.get("path")), record.get("segment"))] = record
        owners.add(record)
    return latest, owners


def listed_outputs(out_dir: str) -> frozenset[str]:
    """Absolute paths of every output any line of ``out_dir``'s manifest lists (all lines, not only the latest: a
    run with other options named other files), with the manifest and ``results.jsonl`` themselves."""
    found = {os.path.join(out_dir, MANIFEST), os.path.join(out_dir, RESULTS)}
    try:
        for record in read_records(os.path.join(out_dir, MANIFEST)):
            outputs = record.get("outputs")
            if isinstance(outputs, dict):
                found.update(os.path.join(out_dir, *name.split("/")) for name in outputs.values() if isinstance(name, str))
    except OSError:
        pass  # not readable (``--out`` under a file, no permission): taking the folder says why, later
    return frozenset(found)


def latest_records(path: str | os.PathLike) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The last record of each input (:func:`record_key`) in a manifest."""
    return read_manifest(path)[0]


def check_verify(verify: str) -> str:
    """``verify`` when it is one of :data:`VERIFY_MODES`; ParameterError (exit 2) naming the allowed ones."""
    if verify not in VERIFY_MODES:
        raise ParameterError(f"--verify: {verify!r} is not one of {', '.join(VERIFY_MODES)}")
    return verify


def head_tail_digest(path: str) -> str | None:
    """``blake2b:`` + 32 hex digits (16-byte BLAKE2b) of a file's size (8 bytes, little-endian), its first and its
    last :data:`DIGEST_SPAN` bytes (the whole file, once, when it is at most twice that): one or two reads.

    Catches a rewrite of the same size that changes a byte within 64 KiB of either end (a header, the first or last
    samples); a change only in the middle of a file over 128 KiB is caught by :func:`content_digest` alone.
    None when the file cannot be read.
    """
    digest = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            digest.update(size.to_bytes(8, "little"))
            digest.update(fh.read(DIGEST_SPAN if size > 2 * DIGEST_SPAN else 2 * DIGEST_SPAN))
            if size > 2 * DIGEST_SPAN:
                fh.seek(size - DIGEST_SPAN)
                digest.update(fh.read(DIGEST_SPAN))
    except OSError:
        return None
    return "blake2b:" + digest.hexdigest()


def content_digest(path: str) -> str | None:
    """``blake2b:`` + 32 hex digits (16-byte BLAKE2b) of every byte of a file (read in 1 MiB blocks); None when the
    file cannot be read."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                digest.update(block)
    except OSError:
        return None
    return "blake2b:" + digest.hexdigest()


def input_digests(path: str, verify: str) -> dict[str, str | None]:
    """The digest fields of a manifest record: ``digest`` (:func:`head_tail_digest`, every mode) and
    ``content_digest`` (:func:`content_digest` with ``verify == "hash"``, else None)."""
    return {"digest": head_tail_digest(path), "content_digest": content_digest(path) if verify == "hash" else None}


def object_fields(url: str, storage_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``size``, ``mtime_ns`` and ``digest`` fields of a record for a URL input: one metadata request
    (:func:`audiokit.io.remote.object_state`); ``digest`` is ``etag:`` + the object's entity tag (None when the
    server gives none), for every ``--verify`` mode (the content is not read twice)."""
    size, mtime_ns, etag = object_state(url, storage_options)
    return {"size": size, "mtime_ns": mtime_ns, "digest": f"etag:{etag}" if etag else None, "content_digest": None}


def _object_unchanged(record: dict[str, Any], url: str, verify: str, storage_options: Mapping[str, Any] | None) -> bool:
    """:func:`input_unchanged` of a URL input: size, mtime and (but with ``stat``) the entity tag as recorded."""
    now = object_fields(url, storage_options)
    if record.get("size") != now["size"] or record.get("mtime_ns") != now["mtime_ns"]:
        return False
    return now["size"] is None or verify == "stat" or record.get("digest") == now["digest"]


def input_unchanged(record: dict[str, Any], path: str, *, verify: str, storage_options: Mapping[str, Any] | None = None) -> bool:
    """True when the input at ``path`` is as ``record`` found it (missing then and now counts as unchanged).

    Size and mtime first (one ``stat``); when they match, ``head-tail`` compares :func:`head_tail_digest` (a record
    with no ``digest``, written by an older audiokit or for a file it could not read, is taken on size and
    mtime), ``hash`` compares :func:`content_digest` (a record with no ``content_digest``, made without
    ``--verify hash``, is not taken: its input is computed again, once); ``stat`` stops there.  A URL input
    (``storage_options`` to reach it) compares size, mtime and its entity tag (:func:`object_fields`).
    """
    if is_url(path):
        return _object_unchanged(record, path, verify, storage_options)
    size, mtime_ns = file_state(path)
    if record.get("size") != size or record.get("mtime_ns") != mtime_ns:
        return False
    if size is None or verify == "stat":
        return True
    if verify == "hash":
        recorded = record.get("content_digest")
        return recorded is not None and recorded == content_digest(path)
    recorded = record.get("digest")
    return recorded is None or recorded == head_tail_digest(path)


def is_done(
    record: dict[str, Any] | None,
    *,
    fingerprint: str,
    path: str,
    out_dir: str,
    verify: str = "head-tail",
    storage_options: Mapping[str, Any] | None = None,
    exists: Callable[[str], bool] | None = None,
) -> bool:
    """True when ``record`` says the input at ``path`` was done with these options, its outputs exist and it is
    unchanged (:func:`input_unchanged`; the digests are read last, only for an input otherwise done).

    ``exists(name)`` tells whether output ``name`` (POSIX, relative) is there (default: a file under ``out_dir``;
    a remote ``--out`` gives :meth:`audiokit.io.outdir.RemoteOut.exists`, its listing)."""
    if record is None or record.get("status") != "ok" or record.get("fingerprint") != fingerprint:
        return False
    if record.get("size") is None:
        return False
    outputs = record.get("outputs") or {}
    if exists is None:
        exists = lambda name: os.path.exists(os.path.join(out_dir, *name.split("/")))  # noqa: E731
    if not all(exists(str(name)) for name in outputs.values()):
        return False
    return input_unchanged(record, path, verify=verify, storage_options=storage_options)


def file_state(path: str) -> tuple[int | None, int | None]:
    """``(size, mtime_ns)`` of a file, ``(None, None)`` when it cannot be stat-ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None, None
    return st.st_size, st.st_mtime_ns


def split_done(
    items: Iterable[Any],
    previous: dict[tuple[str, str, str], dict[str, Any]],
    *,
    fingerprint: str,
    out_dir: str,
    verify: str = "head-tail",
    storage_options: Mapping[str, Any] | None = None,
    exists: Callable[[str], bool] | None = None,
) -> tuple[list[Any], list[Any]]:
    """The inputs (``InputItem``) split into ``(to run, already done)`` by their last records (:func:`is_done`;
    ``verify``: one of :data:`VERIFY_MODES`; ``storage_options``: to reach URL inputs; ``exists``: as there)."""
    todo: list[Any] = []
    done: list[Any] = []
    for item in items:
        record = previous.get(record_key(item.id, item.path, item.segment))
        ok = item.problem is None and is_done(
            record,
            fingerprint=fingerprint,
            path=item.path,
            out_dir=out_dir,
            verify=verify,
            storage_options=storage_options,
            exists=exists,
        )
        (done if ok else todo).append(item)
    return todo, done


class ManifestWriter:
    """Append records to ``manifest.jsonl`` (a context manager; see the module docstring)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        self._fd: int | None = None
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as exc:
            raise OutputError(f"cannot write the manifest: {describe_os_error(exc)}", self.path) from exc
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":  # a torn last line: start a fresh one
                    self._write(b"\n")

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            raise OutputError("the manifest is closed", self.path)
        try:
            written = os.write(self._fd, data)
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError as exc:
            raise OutputError(f"cannot write the manifest: {describe_os_error(exc)}", self.path) from exc

    def check(self) -> None:
        """OutputError (exit 4) when ``path`` is no longer the file this writer appends to: the output folder was
        deleted, moved or replaced during the batch, and its lines (and the lock) went with the old one.

        Compares the open file's device and inode (``os.fstat``) with those of its path (``os.stat``).
        """
        if self._fd is None:
            raise OutputError("the manifest is closed", self.path)
        mine = os.fstat(self._fd)
        try:
            there = os.stat(self.path)
        except OSError:
            there = None
        if there is None or (there.st_dev, there.st_ino) != (mine.st_dev, mine.st_ino):
            raise OutputError(
                "the output folder was deleted or replaced during the batch (this manifest went with it): stopped; "
                "run the batch again to redo what it held",
                self.path,
            )

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one line (one ``write`` call), after :meth:`check`."""
        self.check()
        self._write((json.dumps(record, separators=(", ", ": ")) + "\n").encode("utf-8"))

    def close(self) -> None:
        """``fsync`` and close."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ManifestWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DirLock:
    """An exclusive ``flock`` on ``DIR/.audiokit-batch.lock``: one batch writes a folder at a time."""

    def __init__(self, out_dir: str | os.PathLike) -> None:
        import fcntl

        path = os.path.join(out_dir, LOCK)
        self._fd: int | None = None
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise OutputError(f"cannot write in the output folder: {describe_os_error(exc)}", out_dir) from exc
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise OutputError(
                "another audiokit batch is writing this folder (wait for it, or give another --out)", out_dir
            ) from None

    def release(self) -> None:
        """Unlock (closing the file releases the lock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def sweep_temp_files(folders: Iterable[str]) -> int:
    """Remove the temp files atomic writes leave when a process is killed (``kill -9``); return how many.

    Those are ``.<name>.audiokit-tmp-<pid>-<random><suffix>``
    (:data:`audiokit.io.atomic.TEMP_MARKER`), of any pid: a Dask worker's pid
    is from another machine.

    Only called while holding the :class:`DirLock` and with no worker running,
    so every such file is stale.
    """
    removed = 0
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") and TEMP_MARKER in entry.name and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def compact_manifest(path: str | os.PathLike, latest: dict[tuple[str, str, str], dict[str, Any]]) -> bool:
    """Rewrite ``manifest.jsonl`` to the last record of each input when it holds more than twice as many lines
    (retries and re-runs): the file stays within twice the number of inputs.  Returns True when it was rewritten.

    Records keep the order of their inputs' first lines; the ids' owners (:class:`IdOwners`) are unchanged, as an
    input's last record is the one that decides.
    """
    try:
        with open(path, "rb") as fh:
            lines = sum(1 for _ in fh)
    except FileNotFoundError:
        return False
    if lines <= 2 * len(latest) + 16:
        return False
    write_text_atomic(path, "".join(json.dumps(r, separators=(", ", ": ")) + "\n" for r in latest.values()))
    return True


def compact_results(path: str | os.PathLike, keep: set[str]) -> None:
    """Rewrite ``results.jsonl`` to the last line of each id in ``keep`` (atomically; nothing else kept)."""
    if not Path(path).exists():
        return
    last: dict[str, str] = {}
    for record in read_records(path):
        if record["id"] in keep:
            last[record["id"]] = json.dumps(record, separators=(", ", ": "))
    write_text_atomic(path, "".join(line + "\n" for line in last.values()))


def utc_now() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

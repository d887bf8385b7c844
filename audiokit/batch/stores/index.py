"""A store's compact index (``index.sqlite``) and its statistics journal (``stats.journal``).

``index.sqlite`` is rebuilt from the manifest at the end of every run (a new file, then a rename): one row per
utterance done (``utterances``: id, key, source, segment start, duration, sr, n_frames, n_feats, speaker, and where
its array is: ``file`` + ``offset``/``nbytes``/``row``), one per failed input (``failures``), and the store
description (``store``).  Python ships SQLite, the file can be fetched whole from object storage, and opening it
reads nothing but its header: :func:`audiokit.corpus.open` of a million utterances opens in milliseconds and looks
an id up through the primary key.

``stats.journal`` holds per-utterance statistics as the client receives them: fixed-size records (a 16-byte
BLAKE2b digest of the key, the frame count, then the per-dimension sums and sums of squares, float64), appended
before the utterance's manifest line, so that a ``kill -9`` loses nothing the manifest lists (a torn last record is
ignored).  :func:`corpus_stats` sums the latest record of every utterance in the index: global CMVN statistics
without a second pass over the arrays.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...errors import OutputError
from ...io.atomic import describe_os_error
from .layout import utf8_text

__all__ = ["COLUMNS", "INDEX", "JOURNAL", "StatsJournal", "build_index", "corpus_stats", "fill_index", "key_digest"]

INDEX = "index.sqlite"
JOURNAL = "stats.journal"

_COLUMNS = (
    ("id", "TEXT PRIMARY KEY"),
    ("key", "TEXT NOT NULL"),
    ("source", "TEXT"),
    ("start", "REAL"),
    ("duration", "REAL"),
    ("sr", "INTEGER"),
    ("n_frames", "INTEGER"),
    ("n_feats", "INTEGER"),
    ("speaker", "TEXT"),
    ("file", "TEXT"),
    ("offset", "INTEGER"),
    ("nbytes", "INTEGER"),
    ("row", "INTEGER"),
)


def key_digest(key: str) -> bytes:
    """16-byte BLAKE2b digest of a store key (the journal's record id)."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=16).digest()


def _record_dtype(n_feats: int) -> np.dtype:
    return np.dtype([("digest", "V16"), ("count", "<f8"), ("sums", "<f8", (n_feats,)), ("squares", "<f8", (n_feats,))])


class StatsJournal:
    """Append per-utterance statistics to ``stats.journal`` (one ``write`` per record; see the module docstring)."""

    def __init__(self, path: str, n_feats: int) -> None:
        self.path, self.dtype = path, _record_dtype(n_feats)
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            size = os.fstat(self._fd).st_size
            if size % self.dtype.itemsize:  # a torn record from a killed run: cut it off
                os.ftruncate(self._fd, size - size % self.dtype.itemsize)
        except OSError as exc:
            raise OutputError(f"cannot write the statistics journal: {describe_os_error(exc)}", path) from exc

    def append(self, key: str, count: int, sums: np.ndarray, squares: np.ndarray) -> None:
        record = np.zeros(1, dtype=self.dtype)
        record["digest"], record["count"], record["sums"], record["squares"] = key_digest(key), count, sums, squares
        try:
            os.write(self._fd, record.tobytes())
        except OSError as exc:
            raise OutputError(f"cannot write the statistics journal: {describe_os_error(exc)}", self.path) from exc

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def corpus_stats(journal: str, keys: Iterable[str], n_feats: int) -> tuple[float, np.ndarray, np.ndarray]:
    """``(count, sums, squares)`` over the latest journal record of each key in ``keys`` (float64, ``(n_feats,)``)."""
    dtype = _record_dtype(n_feats)
    try:
        size = os.path.getsize(journal)
    except OSError:
        size = 0
    n = size // dtype.itemsize
    if n == 0:
        return 0.0, np.zeros(n_feats), np.zeros(n_feats)
    records = np.fromfile(journal, dtype=dtype, count=n)
    digests = records["digest"].view("S16").ravel()
    # the latest record of each digest: unique over the reversed order gives each digest's last index
    _, last_reversed = np.unique(digests[::-1], return_index=True)
    latest = records[n - 1 - last_reversed]
    wanted = np.array(sorted({key_digest(k) for k in keys}), dtype="S16")
    latest = latest[np.isin(latest["digest"].view("S16").ravel(), wanted)]
    return float(latest["count"].sum()), latest["sums"].sum(axis=0), latest["squares"].sum(axis=0)


def build_index(path: str, description: dict[str, Any], ok: list[dict[str, Any]], failed: list[dict[str, Any]]) -> None:
    """Write ``index.sqlite`` (a new file renamed over the old): ``ok``/``failed`` manifest records, sorted by id."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        db = sqlite3.connect(tmp)
        try:
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            fill_index(db, description, ok, failed)
        finally:
            db.close()
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, (OSError, sqlite3.Error)):
            reason = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
            raise OutputError(f"cannot write the store index: {reason}", path) from exc
        raise


def fill_index(
    db: sqlite3.Connection, description: dict[str, Any], ok: list[dict[str, Any]], failed: list[dict[str, Any]]
) -> None:
    """Create and fill the index tables in ``db`` (a new database; see the module docstring) and commit."""
    db.execute("CREATE TABLE store (name TEXT PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO store VALUES (?, ?)", [(k, json.dumps(v)) for k, v in description.items()])
    db.execute(f"CREATE TABLE utterances ({', '.join(f'{n} {t}' for n, t in _COLUMNS)})")
    db.executemany(
        f"INSERT INTO utterances VALUES ({', '.join('?' * len(_COLUMNS))})",
        (_row(r, description) for r in sorted(ok, key=lambda r: r["id"])),
    )
    db.execute("CREATE INDEX utterances_by_length ON utterances (n_frames)")
    db.execute("CREATE TABLE failures (id TEXT, source TEXT, error TEXT)")
    db.executemany(
        "INSERT INTO failures VALUES (?, ?, ?)",
        (
            (utf8_text(r["id"]), utf8_text(r.get("path")), utf8_text(r.get("error")))
            for r in sorted(failed, key=lambda r: r["id"])
        ),
    )
    db.commit()


#: The columns of the ``utterances`` table, in order.
COLUMNS = tuple(name for name, _ in _COLUMNS)


def _row(record: dict[str, Any], description: dict[str, Any]) -> tuple[Any, ...]:
    location = record.get("location") or {}
    outputs = record.get("outputs") or {}
    segment = record.get("segment") or {}
    shape = record.get("shape") or [None, None]
    return (
        utf8_text(record["id"]),
        utf8_text(record.get("key")),
        utf8_text(record.get("path")),
        segment.get("start"),
        record.get("duration"),
        record.get("sr"),
        shape[0],
        shape[1] if len(shape) > 1 else description.get("n_feats"),
        utf8_text(record.get("speaker")),
        utf8_text(outputs.get("npy") or outputs.get("shard")),
        location.get("offset"),
        location.get("nbytes"),
        location.get("row"),
    )

"""A corpus store in object storage, as :class:`~.reader.StoreCorpus` reads it: the index fetched, arrays by ranges.

``audiokit.corpus.open("s3://bucket/feats", storage_options={...})`` opens the store with three requests: one
listing of the store's top level (its objects' sizes, modification times and ETags), ``store.json``, and
``index.sqlite`` fetched whole into a temporary file that SQLite opens and whose name is then removed (nothing is
left behind; a million utterances are an index of ~100 MB, fetched in 8 MiB reads).  A batch writing to object
storage (:mod:`audiokit.batch.ledger`) puts the index before the whole ``manifest.jsonl`` and leaves per-task parts
``manifest.d/*.jsonl`` until it finishes: a store with parts, or without an index, is an unfinished run, and is read
from ``manifest.jsonl`` and its parts (in name order) with the index rebuilt in memory and a warning, as a local
store whose index is older than its manifest.  (Modification times decide nothing here: S3 keeps them to the second.)

One utterance is then one ranged GET (no HEAD: sizes come from the index), counted at the server in the tests:

* ``shards``: the tar member's bytes ``[offset, offset + nbytes)`` (the index holds the data's offset);
* ``kaldi``: ``[offset, offset + nbytes)`` of the ark from ``feats.scp``'s offset: the matrix with its header
  (float, or compressed and decoded by kaldiio: :func:`audiokit.io.ark.matrix_from_bytes`);
* ``npy``: the array's bytes after the ``.npy`` header (its own object);
* ``parquet``: the row group holding the row, read by pyarrow through fsspec (``pre_buffer``: the group's column
  chunks in one coalesced read); the file's footer is read once (one GET of its tail) and the opened file kept
  (:data:`KEPT_PARQUET` of them), so the first utterance of a file costs two requests and the others one.

Reads of an object listed at open are conditional on its ETag (:func:`audiokit.io.remote.open_known`).  Every
failure is one :class:`~audiokit.errors.InputError` line naming the object (credentials redacted).  HTTP(S) servers
give no listing fsspec can trust, so a store is read from a filesystem that lists (``s3://``, ``gs://``, ...).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import tempfile
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ...errors import InputError, ParameterError
from ...io.remote import display_url, filesystem, open_known, remote_error, storage_options

__all__ = ["KEPT_PARQUET", "StoreObjects"]

#: Opened remote Parquet files kept per store (their footers read): reading a store in order opens each once.
KEPT_PARQUET = 8
#: Bytes per read when an index or manifest is fetched whole.
FETCH_BYTES = 8 << 20


class StoreObjects:
    """The objects of a store under URL ``url`` (see the module docstring).

    Parameters
    ----------
    url : str
        The store's prefix, ``s3://bucket/feats`` (a trailing ``/`` is dropped).
    options : mapping, optional
        fsspec storage options (``endpoint_url``, ``key``/``secret``, ``anon`` ...), over those of
        ``AUDIOKIT_STORAGE_OPTIONS`` per key, as for URL inputs (:func:`audiokit.io.remote.storage_options`).

    Attributes
    ----------
    name : str
        The URL as shown (:func:`~audiokit.io.remote.display_url`).
    top : dict
        The listing of the store's top level: object name (``store.json``, ``index.sqlite`` ...) -> fsspec info.
    """

    def __init__(self, url: str, options: Mapping[str, Any] | None = None) -> None:
        self.url = url.rstrip("/")
        self.name = display_url(self.url)
        self.options = storage_options(options)  # AUDIOKIT_STORAGE_OPTIONS, then ``options`` over it per key
        if urlsplit(self.url).scheme.lower() in ("http", "https"):
            raise ParameterError(
                f"{self.name}: a store is read from object storage that lists its objects (s3://, gs:// ...); "
                "an HTTP server gives no listing: download the store, or serve it from an S3-compatible server"
            )
        self._fs, path = filesystem(self.url, self.options)
        self._path = path.rstrip("/")
        self._parquet: OrderedDict[str, tuple[Any, Any, tuple[Any, ...]]] = OrderedDict()
        self.top = self._list()

    # ------------------------------------------------------------------ objects
    def _shown(self, name: str) -> str:
        return f"{self.name}/{name}"

    def _failure(self, exc: BaseException, name: str) -> InputError:
        return remote_error(exc, self._shown(name), self.options, reading=True)

    def _list(self) -> dict[str, dict[str, Any]]:
        try:
            self._fs.invalidate_cache(self._path)  # what is there now, not what this process listed before
            entries = self._fs.ls(self._path, detail=True)
        except FileNotFoundError:
            entries = []
        except Exception as exc:  # noqa: BLE001 (every transport failure becomes one line)
            raise remote_error(exc, self.name, self.options) from None
        self.folders = {str(e["name"]).rstrip("/").rpartition("/")[2] for e in entries if e.get("type") == "directory"}
        return {str(e["name"]).rstrip("/").rpartition("/")[2]: e for e in entries if e.get("type") == "file"}

    def names_under(self, folder: str) -> list[str]:
        """The object names (relative to the store) under top-level ``folder``, sorted: one listing."""
        try:
            found = self._fs.find(f"{self._path}/{folder}")
        except Exception as exc:  # noqa: BLE001
            raise self._failure(exc, folder) from None
        return sorted(str(key)[len(self._path) + 1 :] for key in found)

    def fetch(self, name: str) -> bytes:
        """The whole object ``name`` (relative to the store, POSIX): one GET."""
        try:
            return bytes(self._fs.cat_file(f"{self._path}/{name}"))
        except Exception as exc:  # noqa: BLE001
            raise self._failure(exc, name) from None

    def fetch_range(self, name: str, start: int, stop: int) -> bytes:
        """Bytes ``[start, stop)`` of object ``name``: one ranged GET (InputError if the object is shorter)."""
        if stop <= start:
            return b""
        try:
            data = bytes(self._fs.cat_file(f"{self._path}/{name}", start=start, end=stop))
        except Exception as exc:  # noqa: BLE001
            raise self._failure(exc, name) from None
        if len(data) != stop - start:
            raise InputError(f"ends before byte {stop} of the member the index gives (the store changed?)", self._shown(name))
        return data

    def download(self, name: str, sink: Any) -> None:
        """Copy top-level object ``name`` (listed at open) into the binary file ``sink``, :data:`FETCH_BYTES` a read."""
        info = self.top[name]
        try:
            with open_known(self._fs, f"{self._path}/{name}", info, block_size=FETCH_BYTES, cache_type="none") as fh:
                while chunk := fh.read(FETCH_BYTES):
                    sink.write(chunk)
        except Exception as exc:  # noqa: BLE001
            raise self._failure(exc, name) from None

    def sqlite(self, name: str) -> sqlite3.Connection:
        """Top-level SQLite object ``name`` fetched into a temporary file, opened read-only; the file's name is removed
        once SQLite holds it open (its descriptor keeps the bytes until the connection closes)."""
        fd, tmp = tempfile.mkstemp(prefix="audiokit-index-", suffix=".sqlite")
        try:
            with os.fdopen(fd, "wb") as sink:
                self.download(name, sink)
            db = sqlite3.connect(f"file:{tmp}?mode=ro&immutable=1", uri=True, check_same_thread=False)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file before its name goes
            except sqlite3.Error as exc:
                db.close()
                raise InputError(f"not an SQLite index ({exc})", self._shown(name)) from None
            return db
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def manifest_copy(self, names: list[str]) -> str:
        """Objects ``names`` (a manifest and its parts) fetched one after the other into a temporary file; its path
        (the caller removes it).  A top-level object is read in :data:`FETCH_BYTES` reads, a part whole."""
        fd, tmp = tempfile.mkstemp(prefix="audiokit-manifest-", suffix=".jsonl")
        try:
            with os.fdopen(fd, "wb") as sink:
                for name in names:
                    if name in self.top:
                        self.download(name, sink)
                    else:
                        data = self.fetch(name)
                        sink.write(data if not data or data.endswith(b"\n") else data + b"\n")
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return tmp

    def json(self, name: str) -> Any:
        """Object ``name`` parsed as JSON (InputError naming it if it is not)."""
        try:
            return json.loads(self.fetch(name))
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"not JSON ({exc})", self._shown(name)) from None

    # ------------------------------------------------------------------ arrays
    def array(self, kind: str, row: Mapping[str, Any], *, dtype: np.dtype, compressed: bool) -> np.ndarray:
        """The ``(n_frames, n_feats)`` array of index row ``row`` of a ``kind`` store (read-only; see above)."""
        name = str(row["file"])
        n_frames, n_feats = int(row["n_frames"]), int(row["n_feats"])
        if kind == "parquet":
            return self._parquet_row(name, int(row["row"]))
        offset, nbytes = row.get("offset"), row.get("nbytes")
        if kind == "npy" and offset is None:  # no recorded offset: the whole .npy
            return np.load(io.BytesIO(self.fetch(name)), allow_pickle=False)
        if offset is None or nbytes is None:
            raise InputError(f"the index gives no location of {row['id']!r}", self._shown(name))
        data = self.fetch_range(name, int(offset), int(offset) + int(nbytes))
        if kind == "kaldi":
            from ...io.ark import matrix_from_bytes

            return matrix_from_bytes(data, n_frames, n_feats, compressed=compressed, name=self._shown(name))
        if kind in ("npy", "shards"):
            stored = dtype.newbyteorder("<")
            if len(data) != n_frames * n_feats * stored.itemsize:
                raise InputError(f"member of {len(data)} bytes is no ({n_frames}, {n_feats}) {stored.name} array", name)
            return np.frombuffer(data, dtype=stored).reshape(n_frames, n_feats)
        raise InputError(f"unknown store kind {kind!r}", self.name)

    def _parquet_row(self, name: str, row: int) -> np.ndarray:
        from ...io.parquet import read_row

        handle, version = self._parquet_file(name)
        try:
            return np.asarray(read_row(self._shown(name), row, handle=handle, version=version)["feats"])
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 (a transport failure inside pyarrow's read)
            raise self._failure(exc, name) from None

    def _parquet_file(self, name: str) -> tuple[Any, tuple[Any, ...]]:
        kept = self._parquet.pop(name, None)
        if kept is None:
            import pyarrow.parquet as pq

            info = self.top.get(name) if "/" not in name else None
            path = f"{self._path}/{name}"
            try:
                if info is None:
                    info = self._fs.info(path)
                fh = open_known(self._fs, path, info, cache_type="none")
                kept = (pq.ParquetFile(fh, pre_buffer=True), fh, (info.get("size"), info.get("ETag")))
            except Exception as exc:  # noqa: BLE001
                raise self._failure(exc, name) from None
        self._parquet[name] = kept
        while len(self._parquet) > KEPT_PARQUET:
            _, (_, fh, _) = self._parquet.popitem(last=False)
            fh.close()
        return kept[0], kept[2]

    def close(self) -> None:
        """Close the kept Parquet files."""
        while self._parquet:
            _, (_, fh, _) = self._parquet.popitem()
            with contextlib.suppress(Exception):
                fh.close()

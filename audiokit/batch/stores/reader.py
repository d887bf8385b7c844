"""Read a corpus store back, whatever its kind: ``audiokit.corpus.open(DIR)`` on a folder with a ``store.json``.

>>> feats = audiokit.corpus.open("feats")                 # doctest: +SKIP  (reads index.sqlite's header only)
>>> len(feats), feats.ids[:2]                              # doctest: +SKIP
(2000, ['spk1/utt001', 'spk1/utt002'])
>>> feats["spk1/utt001"].array.shape                       # doctest: +SKIP  ((n_frames, n_feats), float32)
(1198, 80)
>>> for batch in feats.batches(max_frames=20000):          # doctest: +SKIP
...     batch.features, batch.mask, batch.lengths          # (B, T, D) zero-padded, (B, T) bool, (B,)

The index is ``index.sqlite`` (:mod:`.index`): ids, lengths and locations, looked up through its primary key; an
array is read when asked for (``npy``: ``np.load(mmap_mode="r")``; ``shards``: a memory map into the tar; ``kaldi``:
a memory map into the ark, or kaldiio for compressed matrices; ``parquet``: the row group holding the row).  After an
interrupted run (the index older than the manifest) the index is rebuilt in memory from the manifest, with a warning.

A store in object storage (``StoreCorpus("s3://bucket/feats", storage_options=...)``) reads the same index, fetched,
and each array with one ranged request of the member's bytes (:mod:`.bucket`); its arrays are read-only copies.
"""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...io.remote import is_url
from ..manifest import MANIFEST, latest_records
from .bucket import StoreObjects
from .description import DESCRIPTION, FORMAT, read_description
from .index import COLUMNS, INDEX, fill_index
from .layout import utf8_text

__all__ = ["Batch", "StoreCorpus", "StoreEntry"]


@dataclass(frozen=True)
class Batch:
    """A padded batch: ``features`` ``(B, T, D)`` float32 (zeros after each utterance), ``mask`` ``(B, T)`` True on real
    frames, ``lengths`` ``(B,)`` frames per utterance, ``ids`` in the batch's order."""

    ids: list[str]
    features: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray


class StoreEntry:
    """One utterance of a store: its index row (``id``, ``key``, ``source``, ``start``, ``duration``, ``sr``,
    ``n_frames``, ``n_feats``, ``speaker``, ``file``, ``offset``, ``nbytes``, ``row``) and its array, read on access."""

    def __init__(self, corpus: StoreCorpus, row: dict[str, Any]) -> None:
        self._corpus, self.record = corpus, row
        self.id: str = row["id"]

    def __repr__(self) -> str:
        return f"StoreEntry({self.id!r}, n_frames={self.record['n_frames']}, duration={self.record['duration']})"

    @property
    def duration(self) -> float:
        """Seconds of audio the features cover."""
        return float(self.record["duration"])

    @property
    def speaker(self) -> str | None:
        """The speaker (``--speaker-from``), or None."""
        return self.record["speaker"]

    @property
    def metadata(self) -> dict[str, Any]:
        """The index row merged over the store's plan (the sidecar a single-file ``.npy`` would have had)."""
        return {**(self._corpus.description.get("plan") or {}), **self.record}

    @property
    def array(self) -> np.ndarray:
        """The ``(n_frames, n_feats)`` array (a read-only memory map into the shard or ark; a ``.npy`` is read
        whole, up to 16 MiB, and mapped beyond)."""
        return self._corpus.read(self.record)


class StoreCorpus:
    """A corpus store (see the module docstring): a folder, or a URL prefix in object storage
    (``s3://bucket/feats``, read through fsspec with ``storage_options``: :mod:`.bucket`)."""

    def __init__(self, root: str | os.PathLike, *, storage_options: Mapping[str, Any] | None = None) -> None:
        self._objects: StoreObjects | None = None
        if is_url(str(root)):
            self._objects = StoreObjects(str(root), storage_options)
            self.root: Path | str = self._objects.name
            description = self._remote_description(self._objects)
        else:
            self.root = Path(root).resolve()
            description = read_description(str(self.root))
        if description is None:
            raise InputError("no store.json here: not an audiokit corpus store", self.root)
        self.description: dict[str, Any] = description
        self.kind: str = description["store"]
        self.dtype = np.dtype(description["dtype"])
        self._db = self._connect()

    @staticmethod
    def _remote_description(objects: StoreObjects) -> dict[str, Any] | None:
        if DESCRIPTION not in objects.top:
            return None
        data = objects.json(DESCRIPTION)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"not an audiokit store description (format {FORMAT!r} expected)", f"{objects.name}/{DESCRIPTION}")
        return data

    def _connect(self) -> sqlite3.Connection:
        if self._objects is not None:
            return self._connect_remote(self._objects)
        index, manifest = Path(self.root) / INDEX, Path(self.root) / MANIFEST
        try:
            fresh = index.stat().st_mtime_ns >= manifest.stat().st_mtime_ns
        except FileNotFoundError:
            fresh = index.exists()
        if fresh:
            return sqlite3.connect(f"file:{index}?mode=ro", uri=True, check_same_thread=False)
        self._warn_stale()
        return self._rebuilt(latest_records(manifest))

    def _connect_remote(self, objects: StoreObjects) -> sqlite3.Connection:
        """The index of a store in object storage: ``index.sqlite``, or the manifest and its parts of an unfinished
        run (:mod:`.bucket`)."""
        from ..ledger import PARTS

        if INDEX in objects.top and PARTS not in objects.folders:
            return objects.sqlite(INDEX)
        warnings.warn(
            f"{self.root}: {INDEX} is missing, or a run is unfinished ({PARTS}/ holds manifest parts): reading "
            f"{MANIFEST} and its parts (run the batch again to finish the store and its index)",
            stacklevel=4,
        )
        names = [MANIFEST] if MANIFEST in objects.top else []
        if PARTS in objects.folders:
            names += [n for n in objects.names_under(PARTS) if n.endswith(".jsonl")]
        copy = objects.manifest_copy(names)
        try:
            return self._rebuilt(latest_records(copy))
        finally:
            os.unlink(copy)

    def _warn_stale(self) -> None:
        warnings.warn(
            f"{self.root}: {INDEX} is missing or older than {MANIFEST} (an interrupted run): reading the manifest "
            "(run the batch again to finish the store and its index)",
            stacklevel=4,
        )

    def _rebuilt(self, latest: Mapping[Any, dict[str, Any]]) -> sqlite3.Connection:
        """An index in memory from the manifest's latest records (those of this store's fingerprint)."""
        fingerprint = self.description.get("fingerprint")
        ok: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        for record in latest.values():
            if record.get("fingerprint") == fingerprint:
                (ok if record.get("status") == "ok" else failed).append(record)
        done = {r["id"] for r in ok}
        db = sqlite3.connect(":memory:", check_same_thread=False)
        fill_index(db, self.description, ok, [r for r in failed if r["id"] not in done])
        return db

    # ------------------------------------------------------------------ the mapping
    @cached_property
    def _length(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM utterances").fetchone()[0])

    def __len__(self) -> int:
        return self._length

    @property
    def ids(self) -> list[str]:
        """Every id, sorted."""
        return [row[0] for row in self._db.execute("SELECT id FROM utterances ORDER BY id")]

    def __iter__(self) -> Iterator[str]:
        return (row[0] for row in self._db.execute("SELECT id FROM utterances ORDER BY id"))

    def __contains__(self, item_id: object) -> bool:
        return (
            self._db.execute(
                "SELECT 1 FROM utterances WHERE id = ?", (utf8_text(item_id) if isinstance(item_id, str) else item_id,)
            ).fetchone()
            is not None
        )

    def _row(self, item_id: str) -> dict[str, Any] | None:
        row = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM utterances WHERE id = ?", (utf8_text(item_id),)).fetchone()
        return None if row is None else dict(zip(COLUMNS, row, strict=True))

    def __getitem__(self, item_id: str) -> StoreEntry:
        row = self._row(item_id)
        if row is None:
            failure = self._db.execute("SELECT error FROM failures WHERE id = ?", (utf8_text(item_id),)).fetchone()
            why = f" (it failed: {failure[0]})" if failure else ""
            raise KeyError(f"{item_id!r} is not in the corpus{why}")
        return StoreEntry(self, row)

    def items(self) -> Iterator[tuple[str, StoreEntry]]:
        """``(id, entry)`` pairs, by id."""
        for row in self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM utterances ORDER BY id"):
            entry = StoreEntry(self, dict(zip(COLUMNS, row, strict=True)))
            yield entry.id, entry

    @property
    def failed(self) -> dict[str, dict[str, Any]]:
        """The inputs that failed, by id: ``{"path": ..., "error": ...}``."""
        return {r[0]: {"path": r[1], "error": r[2]} for r in self._db.execute("SELECT id, source, error FROM failures")}

    @cached_property
    def stats(self) -> dict[str, Any]:
        """The corpus statistics (``stats.json``: count, sum, sum_squares, mean, std per dimension)."""
        if self._objects is not None:
            return self._objects.json("stats.json") if "stats.json" in self._objects.top else {}
        path = Path(self.root) / "stats.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def __repr__(self) -> str:
        return f"StoreCorpus({str(self.root)!r}, store={self.kind}, {len(self)} utterances, {len(self.failed)} failed)"

    # ------------------------------------------------------------------ arrays
    def read(self, row: dict[str, Any]) -> np.ndarray:
        """The array of an index row (see the module docstring)."""
        if self._objects is not None:
            compressed = bool(self.description.get("compress"))
            return self._objects.array(self.kind, row, dtype=self.dtype, compressed=compressed)
        path = Path(self.root).joinpath(*str(row["file"]).split("/"))
        n_frames, n_feats = int(row["n_frames"]), int(row["n_feats"])
        if self.kind == "npy":  # read whole (faster than np.load: the header is known), mapped beyond 16 MiB
            nbytes, offset = row.get("nbytes") or 0, row.get("offset")
            if offset is None or nbytes > MMAP_BYTES:
                return np.load(path, mmap_mode="r" if nbytes > MMAP_BYTES else None)
            count = n_frames * n_feats
            array = np.fromfile(path, dtype=self.dtype.newbyteorder("<"), count=count, offset=int(offset))
            if array.size != count:
                raise InputError(f"holds {array.size} of the {count} values the store's index gives (the file changed?)", path)
            return array.reshape(n_frames, n_feats)
        if self.kind == "shards":
            from ...io.tar_shard import read_member

            return read_member(
                path, {"offset": row["offset"], "nbytes": row["nbytes"]}, n_frames, n_feats, self.dtype.name, mmap=True
            )
        if self.kind == "kaldi":
            from ...io.ark import read_matrix

            return read_matrix(path, int(row["offset"]), n_frames, n_feats, compressed=bool(self.description.get("compress")))
        if self.kind == "parquet":
            from ...io.parquet import read_row

            return np.asarray(read_row(path, int(row["row"]))["feats"])
        raise InputError(f"unknown store kind {self.kind!r}", self.root)

    def batches(
        self,
        *,
        batch_size: int | None = None,
        max_frames: int | None = None,
        order: str = "length",
        bucket: int = 100,
        pool: int = 64,
        seed: int | None = None,
        drop_last: bool = False,
    ) -> Iterator[Batch]:
        """Padded batches for a training loop, grouped by length so that padding stays small.

        The index is read in length order as the batches are made (the first batch of a million-utterance store
        costs one batch of rows), so memory holds one bucket and the pool of batches below.

        Parameters
        ----------
        batch_size : int, optional
            Utterances per batch.
        max_frames : int, optional
            Largest ``B * T`` (padded frames) of a batch; with ``batch_size`` both limits hold.  One of the two is
            needed.
        order : {"length", "bucket"}
            ``length``: every utterance by ``n_frames`` (then id), batches in that order; ``bucket``: consecutive
            runs of ``bucket`` utterances in that order shuffled within the run, their batches drawn at random
            from a pool of up to ``pool`` batches (``seed``; the same seed gives the same batches).
        drop_last : bool
            Drop the batches smaller than ``batch_size``.
        """
        if batch_size is None and max_frames is None:
            raise ValueError("give batch_size or max_frames")
        if order not in ("length", "bucket"):
            raise ValueError(f"order must be 'length' or 'bucket', got {order!r}")
        rows = (
            dict(zip(COLUMNS, r, strict=True))
            for r in self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM utterances ORDER BY n_frames, id")
        )
        groups = (
            _group(rows, batch_size, max_frames)
            if order == "length"
            else _bucketed(rows, batch_size, max_frames, bucket, pool, seed)
        )
        for group in groups:
            if drop_last and batch_size is not None and len(group) < batch_size:
                continue
            yield self._pad(group)

    def _pad(self, rows: list[dict[str, Any]]) -> Batch:
        lengths = np.array([r["n_frames"] for r in rows], dtype=np.int64)
        width = int(lengths.max()) if len(rows) else 0
        features = np.zeros((len(rows), width, int(self.description["n_feats"])), dtype=np.float32)
        for b, row in enumerate(rows):
            features[b, : lengths[b]] = self.read(row)
        mask = np.arange(width)[None, :] < lengths[:, None]
        return Batch(ids=[r["id"] for r in rows], features=features, mask=mask, lengths=lengths)


Row = dict[str, Any]


def _group(rows: Iterable[Row], batch_size: int | None, max_frames: int | None) -> Iterator[list[Row]]:
    """Consecutive rows into batches under ``batch_size`` utterances and ``max_frames`` padded frames (a lazy pass)."""
    current: list[Row] = []
    longest = 0
    for row in rows:
        longer = max(longest, int(row["n_frames"]))
        full = batch_size is not None and len(current) >= batch_size
        over = max_frames is not None and current and longer * (len(current) + 1) > max_frames
        if full or over:
            yield current
            current, longer = [], int(row["n_frames"])
        current.append(row)
        longest = longer
    if current:
        yield current


def _bucketed(
    rows: Iterable[Row], batch_size: int | None, max_frames: int | None, bucket: int, pool: int, seed: int | None
) -> Iterator[list[Row]]:
    """``order="bucket"``: runs of ``bucket`` rows shuffled, batched, and drawn at random from a pool of batches."""
    rng = np.random.default_rng(seed)
    waiting: list[list[Row]] = []
    run: list[Row] = []

    def batches_of(run: list[Row]) -> Iterator[list[Row]]:
        return _group([run[i] for i in rng.permutation(len(run))], batch_size, max_frames)

    for row in rows:
        run.append(row)
        if len(run) == bucket:
            waiting.extend(batches_of(run))
            run = []
            while len(waiting) > pool:
                yield waiting.pop(int(rng.integers(len(waiting))))
    if run:
        waiting.extend(batches_of(run))
    while waiting:
        yield waiting.pop(int(rng.integers(len(waiting))))


#: Arrays of the ``npy`` store larger than this are memory-mapped rather than read.
MMAP_BYTES = 16 << 20

"""Read what ``audiokit batch`` wrote: ids, lazily memory-mapped arrays, their metadata (``audiokit.corpus``).

>>> import audiokit.corpus
>>> feats = audiokit.corpus.open("feats")            # doctest: +SKIP
>>> len(feats), feats.ids[:2]                         # doctest: +SKIP
(2000, ['spk1/utt001', 'spk1/utt002'])
>>> x = feats["spk1/utt001"].array                    # doctest: +SKIP  (np.load(..., mmap_mode="r"))
>>> feats["spk1/utt001"].metadata["hop_length"]       # doctest: +SKIP  (the JSON sidecar)

A corpus store (``--store npy|shards|kaldi|parquet``: a folder with a ``store.json``) opens as a
:class:`~audiokit.batch.stores.reader.StoreCorpus`: ids from ``index.sqlite``, ``[id].array`` in ``(n_frames,
n_feats)``, ``.batches(...)`` of padded arrays with a mask.  The single-file outputs of ``--store files`` (and of
``resample``/``dehum``/``quantize``/``info``/``spectrum``) open as a :class:`Corpus`: the folder's
``manifest.jsonl`` is the index, the last record of each id counts; ids whose last record is ``ok`` are the
corpus, the others are in :attr:`Corpus.failed` with their error.  Nothing is loaded before it is asked for.

A store in object storage opens from its URL: ``audiokit.corpus.open("s3://bucket/feats", storage_options={...})``
fetches its index, then reads each utterance with one ranged request (:mod:`.stores.bucket`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io.remote import is_url
from .manifest import MANIFEST, RESULTS, read_records
from .stores.description import DESCRIPTION
from .stores.reader import Batch, StoreCorpus, StoreEntry

__all__ = ["open", "Batch", "Corpus", "Entry", "StoreCorpus", "StoreEntry"]


class Entry:
    """One input of a corpus: its manifest record, output paths, array and metadata (loaded on access).

    Attributes
    ----------
    id : str
        The input's id (output name without suffix, or the segment id).
    record : dict
        Its manifest line (``path``, ``segment``, ``shape``, ``duration``, ``sr``, ...).
    """

    def __init__(self, root: Path, record: dict[str, Any]) -> None:
        self._root = root
        self.id: str = record["id"]
        self.record = record

    def __repr__(self) -> str:
        return f"Entry({self.id!r}, shape={self.record.get('shape')}, duration={self.record.get('duration')})"

    @property
    def outputs(self) -> dict[str, Path]:
        """Absolute output paths by kind (``npy``, ``json``, ``png``, ``wav``)."""
        return {kind: self._root.joinpath(*name.split("/")) for kind, name in (self.record.get("outputs") or {}).items()}

    @property
    def duration(self) -> float | None:
        """Duration of the input (or segment) in seconds."""
        return self.record.get("duration")

    @property
    def array(self) -> Any:
        """The ``.npy`` output, memory-mapped read-only (``np.load(path, mmap_mode="r")``)."""
        import numpy as np

        path = self.outputs.get("npy")
        if path is None:
            raise InputError(f"{self.id!r} has no .npy output (command {self.record.get('command')})", self._root)
        return np.load(path, mmap_mode="r")

    @cached_property
    def metadata(self) -> dict[str, Any]:
        """The JSON sidecar of the array (``{}`` for outputs without one)."""
        path = self.outputs.get("json")
        if path is None:
            return {}
        return json.loads(path.read_text(encoding="utf-8"))

    def audio(self) -> Any:
        """The WAV output (``resample``, ``quantize``, ``dehum``) read as a :class:`~audiokit.io.signal.Signal`."""
        from ..io import read

        path = self.outputs.get("wav")
        if path is None:
            raise InputError(f"{self.id!r} has no WAV output (command {self.record.get('command')})", self._root)
        return read(path)


class Corpus:
    """The outputs of a batch folder, indexed by id (see the module docstring)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root).resolve()
        manifest = self.root / MANIFEST
        if not manifest.is_file():
            raise InputError(f"no {MANIFEST} here: not an audiokit batch folder", root)
        latest: dict[str, dict[str, Any]] = {}
        for record in read_records(manifest):
            latest.pop(record["id"], None)  # keep first-finished order of the latest records
            latest[record["id"]] = record
        self._records = {k: r for k, r in latest.items() if r.get("status") == "ok"}
        #: Records of the ids whose last run failed, by id (``error`` says why).
        self.failed = {k: r for k, r in latest.items() if r.get("status") != "ok"}

    @property
    def ids(self) -> list[str]:
        """Ids of the inputs done, in the order they finished."""
        return list(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._records

    def __getitem__(self, item_id: str) -> Entry:
        try:
            return Entry(self.root, self._records[item_id])
        except KeyError:
            why = f" (it failed: {self.failed[item_id].get('error')})" if item_id in self.failed else ""
            raise KeyError(f"{item_id!r} is not in the corpus{why}") from None

    def items(self) -> Iterator[tuple[str, Entry]]:
        """``(id, entry)`` pairs."""
        for item_id in self._records:
            yield item_id, self[item_id]

    def results(self) -> dict[str, dict[str, Any]]:
        """The ``results.jsonl`` objects (``info``, ``spectrum``) by id, without the ``id`` key."""
        out = {}
        for record in read_records(self.root / RESULTS):
            item_id = record.pop("id")
            if item_id in self._records:
                out[item_id] = record
        return out

    def __repr__(self) -> str:
        return f"Corpus({str(self.root)!r}, {len(self)} ok, {len(self.failed)} failed)"


def open(  # noqa: A001 - audiokit.corpus.open reads like the builtin
    path: str | os.PathLike, *, storage_options: Mapping[str, Any] | None = None
) -> Corpus | StoreCorpus:
    """Open a batch output folder: a corpus store (``store.json``) or the single-file outputs (``manifest.jsonl``).

    Parameters
    ----------
    path : str or PathLike
        The folder, or a store's URL prefix in object storage (``s3://bucket/feats``, ``gs://...``): the index is
        fetched (three requests) and each array read by one ranged request (:mod:`audiokit.batch.stores.bucket`).
    storage_options : mapping, optional
        fsspec storage options for a URL, as Hugging Face datasets' ``storage_options=`` (``endpoint_url``,
        ``key``/``secret``, ``anon`` ...; defaults from ``AUDIOKIT_STORAGE_OPTIONS``, then fsspec's and the
        filesystem's own configuration); ignored for a folder.

    Raises
    ------
    InputError
        Not a batch output (no ``store.json`` nor ``manifest.jsonl``; a URL must hold a store), or for a URL: no
        such bucket, access denied, no credentials, server unreachable (one line naming the URL).
    """
    if is_url(str(path)):
        return StoreCorpus(str(path), storage_options=storage_options)
    if (Path(path) / DESCRIPTION).is_file():
        return StoreCorpus(path)
    return Corpus(path)

"""The client's bookkeeping of a batch whose ``--out`` is in object storage (:class:`RemoteLedger`).

An object cannot be appended to, so the client keeps the output folder's bookkeeping in a local *shadow* folder
and publishes it in whole objects, in an order that never lets an index point at a missing object:

1. :meth:`RemoteLedger.pull`, once the lock is held: ``manifest.jsonl`` then the parts ``manifest.d/*.jsonl`` (in
   name order: ``<run>-<seq>``, run ids sort by their start time) concatenated into the shadow's
   ``manifest.jsonl``; ``stats.journal`` then ``stats.d/*.journal`` likewise; ``store.json`` and
   ``shards.plan.jsonl`` as they are.  The runner then works on the shadow exactly as on a local ``--out``;
2. the workers put each shard (or ``.npy``) object before they return its records;
   :meth:`RemoteLedger.commit`, after each task's records are written to the shadow, puts what the shadow gained:
   ``store.json`` / ``shards.plan.jsonl`` if they changed, the new journal records as
   ``stats.d/<run>-<seq>.journal``, then the new manifest lines as ``manifest.d/<run>-<seq>.jsonl`` -- one small
   object per task, after every object its lines list;
3. :meth:`RemoteLedger.finish`: the indexes and views built in the shadow, the whole journal and
   ``store.json``, then the whole ``manifest.jsonl``, and only then the parts are deleted (a run killed between
   leaves lines twice, which readers take once: the latest record of an input counts).

A ``kill -9`` at any point leaves the objects of the tasks committed so far and the parts that list them; a
resume pulls them back and redoes only the tasks whose manifest part was not written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..io.outdir import RemoteOut
from .manifest import MANIFEST
from .stores.description import DESCRIPTION
from .stores.index import JOURNAL
from .stores.plan import PLAN

__all__ = ["RemoteLedger", "PARTS", "JOURNAL_PARTS"]

#: The manifest parts of a remote ``--out``: ``manifest.d/<run>-<seq>.jsonl``.
PARTS = "manifest.d"
#: The journal parts: ``stats.d/<run>-<seq>.journal``.
JOURNAL_PARTS = "stats.d"
#: Files pulled and pushed whole when they change.
_WHOLE = (DESCRIPTION, PLAN)


class RemoteLedger:
    """Bookkeeping of run ``run`` on ``target`` through the local folder ``shadow`` (see the module docstring)."""

    def __init__(self, target: RemoteOut, shadow: str, run: str) -> None:
        self.target, self.shadow, self.run = target, shadow, run
        self.seq = 0
        self.parts: list[str] = []  # every part object there is (pulled and written), to delete at the end
        self._offsets = {MANIFEST: 0, JOURNAL: 0}
        self._published: dict[str, bytes | None] = {}

    def local(self, name: str) -> str:
        return os.path.join(self.shadow, name)

    def pull(self) -> None:
        """Fetch the bookkeeping objects into the shadow (step 1)."""
        names = self.target.names()
        for name in _WHOLE:
            self.target.get(name, self.local(name))
            self._published[name] = self._read(name)
        for whole, folder, suffix in ((MANIFEST, PARTS, ".jsonl"), (JOURNAL, JOURNAL_PARTS, ".journal")):
            parts = sorted(n for n in names if n.startswith(folder + "/") and n.endswith(suffix))
            self.parts.extend(parts)
            with open(self.local(whole), "wb") as out:
                for name in [whole, *parts]:
                    data = self.target.read(name) if name in names else None
                    if data:
                        out.write(data if data.endswith(b"\n") or whole != MANIFEST else data + b"\n")

    def _read(self, name: str) -> bytes | None:
        try:
            with open(self.local(name), "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return None

    def start(self) -> None:
        """Note where the shadow's manifest and journal end (after the runner opened them): what :meth:`commit` puts."""
        for name in self._offsets:
            data = self._read(name)
            self._offsets[name] = len(data) if data is not None else 0

    def sync(self, names: Iterable[str] = _WHOLE) -> None:
        """Put each of ``names`` whose shadow bytes changed since pulled or last put, or whose object was deleted
        (``--force`` empties the store)."""
        for name in names:
            data = self._read(name)
            if data is not None and (data != self._published.get(name) or not self.target.exists(name)):  # --force: gone
                self.target.put(self.local(name), name)
                self._published[name] = data

    def commit(self) -> None:
        """Put what the shadow gained since the last commit (step 2): changed files, journal part, manifest part."""
        self.sync()
        tails = {}
        for name, offset in self._offsets.items():
            data = self._read(name) or b""
            tails[name] = data[offset:]
        if not tails[MANIFEST]:
            return
        self.seq += 1
        stem = f"{self.run}-{self.seq:06d}"
        for name, folder, suffix in ((JOURNAL, JOURNAL_PARTS, ".journal"), (MANIFEST, PARTS, ".jsonl")):
            if tails[name]:
                part = f"{folder}/{stem}{suffix}"
                self.target.put_bytes(part, tails[name])
                self.parts.append(part)
                self._offsets[name] += len(tails[name])

    def finish(self, names: Iterable[str]) -> None:
        """Put ``names`` (indexes, views) and the whole journal and ``store.json``, then ``manifest.jsonl``, then delete
        the parts (step 3)."""
        for name in [*names, JOURNAL]:
            if os.path.exists(self.local(name)):
                self.target.put(self.local(name), name)
        self.sync()
        self.target.put(self.local(MANIFEST), MANIFEST)
        self.target.remove(self.parts)
        self.parts.clear()

"""The client's side of a store run: take the store, plan the tasks, keep what workers return, write the indexes.

:class:`StoreSession` is created by :func:`audiokit.batch.runner.run_batch` once the folder is locked:

* :meth:`StoreSession.prepare` reads ``store.json``: a store of another kind, other options (fingerprint) or
  another ``--shard-size`` is refused (exit 2) unless ``--force``, which empties the store first (only the files a
  store writes are removed); it fixes the store's rate (``store.json``, ``--sr``, or the first input's header) and
  its geometry, writes ``store.json`` and returns the tasks (:mod:`.plan`) and the inputs already done;
* :meth:`StoreSession.take` keeps, before a record's manifest line is written, its statistics (the journal) and
  the first sidecar (the store's ``plan``);
* :meth:`StoreSession.finish` rebuilds ``index.sqlite`` and the views from the manifest and rewrites ``store.json``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import Any

from ...errors import InputError, ParameterError
from ...io.outdir import RemoteOut
from ...pipelines.registry import MemberGeometry
from ..inputs import InputItem
from ..manifest import MANIFEST, latest_records, record_key, split_done
from .description import DESCRIPTION, describe, read_description, store_plan, write_description
from .headers import read_all
from .index import INDEX, JOURNAL, StatsJournal, build_index, corpus_stats
from .layout import SHAR, key_of, member_path, shard_number
from .lhotse import framing_note
from .options import parse_shard_size
from .plan import PLAN, array_bytes, read_plan, shard_plan, write_plan
from .views import view_files, write_views
from .work import StoreTask, lhotse_record

__all__ = ["StoreSession"]


class StoreSession:
    """One run's store (see the module docstring)."""

    def __init__(self, job: Any, out_dir: str, target: RemoteOut | None = None) -> None:
        """``out_dir``: the output folder (a remote ``--out``'s local shadow, :mod:`audiokit.batch.ledger`);
        ``target``: that remote ``--out`` (its listing says which arrays and shards exist; ``--force`` empties it; the
        views name its URL)."""
        self.job, self.out_dir, self.store, self.target = job, out_dir, job.store, target
        self.exists = target.exists if target is not None else None
        self.fingerprint = job.fingerprint()
        self.description: dict[str, Any] = {}
        self.facts: dict[str, Any] = {}
        self._journal: StatsJournal | None = None
        self._headers: dict[tuple[Any, ...], tuple[int, int] | None] = {}
        self._plan: dict[int, list[InputItem]] | None = None

    # ------------------------------------------------------------------ before the run
    def prepare(
        self, items: list[InputItem], latest: dict[tuple[str, str, str], dict[str, Any]], *, force: bool, chunk: int
    ) -> tuple[list[StoreTask], list[InputItem]]:
        """Take the store; return ``(tasks, inputs already done)``.  ``latest``: the manifest's last records."""
        previous = read_description(self.out_dir)
        if previous is not None:
            self._check_same(previous, force)
            if force:
                self.clear(previous)
                previous = None
                latest = {}
        if self.store.sr is None and not (previous and previous.get("sr")):  # the rate: every input's header
            self._read_headers(items)
        sr = previous["sr"] if previous and previous.get("sr") else (self.store.sr or self._common_rate(items))
        geometry = self._geometry(sr or 16000)
        plan = previous.get("plan") if previous else None
        self.description = describe(
            self.job, self.fingerprint, sr=sr, n_feats=geometry.n_feats, hop_length=geometry.hop_length, plan=plan
        )
        self.facts = self._facts(geometry)
        tasks, done = self._tasks(items, latest, chunk, geometry, sr or 0)
        if self.store.sr is None and sr:
            self._read_headers([i for t in tasks for i in t])
            self._refuse_other_rates([i for t in tasks for i in t], sr)
        if self._plan is not None:
            write_plan(self.out_dir, self._plan)
        write_description(self.out_dir, self.description)
        self._journal = StatsJournal(os.path.join(self.out_dir, JOURNAL), geometry.n_feats)
        return tasks, done

    def _tasks(
        self,
        items: list[InputItem],
        latest: dict[tuple[str, str, str], dict[str, Any]],
        chunk: int,
        geometry: MemberGeometry,
        sr: int,
    ) -> tuple[list[StoreTask], list[InputItem]]:
        def task(members: list[InputItem], shard: int | None) -> StoreTask:
            return StoreTask(tuple(members), shard, geometry.n_feats, sr, self.facts)

        if not self.store.sharded:
            todo, done = split_done(
                items,
                latest,
                fingerprint=self.fingerprint,
                out_dir=self.out_dir,
                verify=self.job.verify,
                storage_options=self.job.inputs.storage_options,
                exists=self.exists,
            )
            return [task(todo[i : i + chunk], None) for i in range(0, len(todo), chunk)], done
        itemsize = 2 if self.store.dtype == "float16" else 4
        if parse_shard_size(self.store.shard_size)[0] != "utterances":  # packed by size: the new inputs' headers
            planned = {record_key(m.id, m.path, m.segment) for members in read_plan(self.out_dir).values() for m in members}
            self._read_headers([i for i in items if record_key(i.id, i.path, i.segment) not in planned])

        def estimate(item: InputItem) -> int:
            header = self._header(item)
            return array_bytes(header[1] if header else 0, geometry.hop_length, geometry.n_feats, itemsize)

        shards, done, self._plan = shard_plan(
            items,
            latest,
            kind=self.store.kind,
            fingerprint=self.fingerprint,
            out_dir=self.out_dir,
            shard_size=self.store.shard_size,
            estimate=estimate,
            verify=self.job.verify,
            storage_options=self.job.inputs.storage_options,
            exists=self.exists,
        )
        return [task(members, number) for number, members in shards], done

    def _check_same(self, previous: dict[str, Any], force: bool) -> None:
        here = self.target.root if self.target is not None else self.out_dir
        if previous.get("store") != self.store.kind:
            raise ParameterError(
                f"{here} holds a --store {previous.get('store')} store; this run asks --store {self.store.kind} (give "
                "another --out)"
            )
        if force:
            return
        if previous.get("fingerprint") != self.fingerprint:
            raise ParameterError(
                f"the store in {here} was made with other options or another audiokit numbers version (fingerprint "
                f"{previous.get('fingerprint')}, this run {self.fingerprint}): give another --out, or --force to rebuild it"
            )
        if self.store.sharded and previous.get("shard_size") != self.store.shard_size:
            raise ParameterError(
                f"the store in {here} was packed with --shard-size {previous.get('shard_size')}; this run asks "
                f"{self.store.shard_size} (give the same, or --force to rebuild it)"
            )

    def clear(self, previous: dict[str, Any]) -> None:
        """``--force``: remove every file the store wrote (arrays, shards, indexes, journal, plan, manifest)."""
        kind = str(previous.get("store"))
        names = [MANIFEST, INDEX, JOURNAL, PLAN, DESCRIPTION, *view_files(kind)]
        for entry in os.scandir(self.out_dir):
            if kind in ("kaldi", "parquet") and entry.is_file() and shard_number(kind, entry.name) is not None:
                names.append(entry.name)
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.out_dir, name))
        folder = {"npy": "feats", "shards": SHAR}.get(kind)
        if folder is not None:
            shutil.rmtree(os.path.join(self.out_dir, folder), ignore_errors=True)
        if self.target is not None:  # the same names in the bucket, and the manifest's and journal's parts
            from ..ledger import JOURNAL_PARTS, PARTS

            folders = tuple(f"{f}/" for f in (folder, PARTS, JOURNAL_PARTS) if f is not None)
            self.target.remove(
                n
                for n in self.target.names()
                if n in names
                or n.startswith(folders)
                or (kind in ("kaldi", "parquet") and "/" not in n and shard_number(kind, n) is not None)
            )

    def _header(self, item: InputItem) -> tuple[int, int] | None:
        """``(sr, n_samples)`` of ``item`` as the job opens it (after ``--sr``), read once; None when it does not open
        (its task fails it with the reason)."""
        key = self._key(item)
        if key not in self._headers:
            self._headers[key] = self._open_header(item)
        return self._headers[key]

    def _read_headers(self, items: list[InputItem]) -> None:
        """Read the headers of the URL inputs at once (:func:`.headers.read_all`, :data:`.headers.WORKERS` in flight),
        before the plan asks for them one by one: the same values, in input order, as the serial reads; local inputs
        are read when asked, one after another (an open is a few µs there)."""
        from ...io.remote import is_url

        todo: dict[tuple[Any, ...], InputItem] = {}
        for item in items:
            key = self._key(item)
            if key not in self._headers and key not in todo and item.problem is None and is_url(item.path):
                todo[key] = item
        for key, header in zip(todo, read_all(list(todo.values()), self._open_header), strict=True):
            self._headers[key] = header

    @staticmethod
    def _key(item: InputItem) -> tuple[Any, ...]:
        return (item.id, item.path, item.start, item.duration)

    def _open_header(self, item: InputItem) -> tuple[int, int] | None:
        """Open ``item`` and read its header; None when it does not open (or has a problem already)."""
        from ..jobs import input_options

        if item.problem is not None:
            return None
        with contextlib.suppress(Exception):
            with input_options(self.job, item).open(item.path) as source:
                return (int(source.sr), int(source.n_samples))
        return None

    def _common_rate(self, items: list[InputItem]) -> int | None:
        """A new store's rate: the most common header rate of its inputs (ties: the first input's by id)."""
        counts: dict[int, int] = {}
        for item in sorted(items, key=lambda i: i.id):
            header = self._header(item)
            if header is not None:
                counts[header[0]] = counts.get(header[0], 0) + 1
        return max(counts, key=lambda rate: counts[rate]) if counts else None

    def _refuse_other_rates(self, items: list[InputItem], sr: int) -> None:
        """InputError naming the first input (by id) whose rate is not the store's, before any work (exit 3)."""
        odd = [(i, h[0]) for i in sorted(items, key=lambda i: i.id) if (h := self._header(i)) is not None and h[0] != sr]
        if odd:
            item, rate = odd[0]
            more = f"; {len(odd) - 1} more inputs are not at {sr} Hz either" if len(odd) > 1 else ""
            raise InputError(
                f"{rate} Hz, but the store's rate is {sr} Hz{more}: a store holds one rate (give --sr {sr} to resample "
                "every input on read)",
                item.path,
            )

    def _geometry(self, sr: int) -> MemberGeometry:
        """The job's :class:`~audiokit.pipelines.registry.MemberGeometry` at ``sr`` Hz (its spec's hook)."""
        of = self.job.spec.member_geometry
        assert of is not None, "a store runs jobs with run_member (checked by batch.jobs.validate)"
        return of(self.job.options, sr)

    def _facts(self, geometry: MemberGeometry) -> dict[str, Any]:
        """Store-level facts for the Lhotse manifests (:class:`~.work.StoreTask`)."""
        return {
            "frame_shift": geometry.frame_shift,
            "n_feats": geometry.n_feats,
            "dtype": self.store.dtype,
            "feature_type": geometry.feature_type,
            "channel": geometry.channel,
        }

    def folders(self, tasks: list[StoreTask]) -> set[str]:
        """The folders the tasks write in (where a killed run's temp files may lie)."""
        if self.store.sharded:
            return {self.out_dir, os.path.join(self.out_dir, SHAR)}
        return {os.path.dirname(os.path.join(self.out_dir, *member_path(key_of(i.id)).split("/"))) for t in tasks for i in t}

    # ------------------------------------------------------------------ during the run
    def take(self, record: dict[str, Any]) -> None:
        """Keep a record's statistics and the store's plan; remove them from the record (not manifest fields)."""
        stats, plan = record.pop("stats", None), record.pop("plan", None)
        if record.get("status") != "ok":
            return
        if stats is not None and self._journal is not None:
            self._journal.append(record["key"], *stats)
        if plan is not None and self.description.get("plan") is None:
            self.description["plan"] = store_plan(plan)
            write_description(self.out_dir, self.description)

    # ------------------------------------------------------------------ after the run
    def finish(self) -> list[str]:
        """Rebuild ``index.sqlite`` and the views from the manifest; close the journal; return the notes for stderr
        (:func:`.lhotse.framing_note`)."""
        if self._journal is not None:
            self._journal.close()
        ok: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        for record in latest_records(os.path.join(self.out_dir, MANIFEST)).values():
            if record.get("fingerprint") != self.fingerprint or record.get("command") != self.job.command:
                continue
            (ok if record.get("status") == "ok" else failed).append(record)
        ok_ids = {r["id"] for r in ok}
        failed = [r for r in failed if r["id"] not in ok_ids]
        n_feats = int(self.description["n_feats"])
        stats = corpus_stats(os.path.join(self.out_dir, JOURNAL), [r["key"] for r in ok], n_feats)
        self.description["utterances"] = len(ok)
        self.description["failed"] = len(failed)
        self.description["frames"] = int(stats[0])
        build_index(os.path.join(self.out_dir, INDEX), self.description, ok, failed)
        root = self.target.root if self.target is not None else None
        write_views(self.store.kind, self.out_dir, self.description, ok, stats, self.facts, root)
        write_description(self.out_dir, self.description)
        if self.store.kind not in ("npy", "shards"):  # the stores with Lhotse manifests
            return []
        note = framing_note([lhotse_record(r) for r in ok], self.facts)
        return [f"{root or self.out_dir}: {note}"] if note else []

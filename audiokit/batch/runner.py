"""``audiokit batch``: plan the inputs, skip what is done, run the rest, record every input.

:func:`run_batch` is the whole job, Typer-free (the CLI in
:mod:`audiokit.cli.batch` only declares options and draws progress):

1. validate the options (exit 2) and collect the inputs
   (:mod:`audiokit.batch.inputs`; a missing file or folder named on the
   command line is exit 3), before anything is created;
2. take the output folder (create it, lock it; exit 4 when it cannot be
   written); refuse the whole batch (exit 2) when an input's id already
   belongs to another source in the manifest (even with ``force``: one
   collection's outputs never replace another's); drop the inputs the
   manifest shows done with the same fingerprint, size and mtime (and content, as ``verify`` asks:
   :func:`~audiokit.batch.manifest.input_unchanged`), outputs present (unless ``force``);
3. remove stale temp files a killed run left, group the rest into tasks of
   ``chunk`` inputs and keep ``backend.slots`` tasks in flight
   (:mod:`audiokit.batch.executor`); as each task finishes, append its
   records (and ``results.jsonl`` lines) — the client is the only writer;
4. stop early after ``max_failures`` failed inputs; on Ctrl-C/SIGTERM the
   exception propagates after the workers are stopped and temp files removed
   (the CLI exits 130/143 and says how far the run got from the
   :class:`BatchStats` it was last given: every manifest line written is
   counted, as lines are written and counted with those signals held back).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from ..errors import ExitStatus, OutputError, ParameterError
from ..held import signals_held
from ..io.atomic import describe_os_error
from ..io.outdir import ObjectStoreError, RemoteOut, new_staging_folder, sweep_staging_folders
from ..io.remote import display_url, is_url
from .executor import Backend, PoolBackend, make_backend
from .inputs import InputItem, OwnOutputs, collect_inputs
from .jobs import Job, output_names, validate
from .ledger import RemoteLedger
from .manifest import (
    MANIFEST,
    RESULTS,
    DirLock,
    IdOwners,
    ManifestWriter,
    check_verify,
    compact_manifest,
    compact_results,
    listed_outputs,
    read_manifest,
    split_done,
    sweep_temp_files,
    utc_now,
)
from .outlock import ObjectLock, run_id
from .stores.session import StoreSession
from .stores.work import run_store_task
from .tasks import THREAD_VARS, chunked, run_task, single_thread_env

__all__ = ["BatchRequest", "BatchStats", "run_batch", "default_jobs", "own_outputs"]

#: How many failures, warnings and ignored file names the summary keeps (the manifest has every record).
MAX_ERRORS_SHOWN = 5
#: Keys of a manifest line, in order (see :mod:`audiokit.batch.manifest`).
RECORD_KEYS = (
    "id",
    "path",
    "segment",
    "size",
    "mtime_ns",
    "digest",
    "content_digest",
    "status",
    "error",
    "outputs",
    "shape",
    "duration",
    "sr",
    "channels",
    "warnings",
    "seconds",
)
#: Keys a store run adds: the utterance's key in the store, its speaker, its shard (sharded stores) and where its
#: array sits in its file (``offset``/``nbytes``, ``row``); for a segment or a resampled input, the file's own rate and
#: length (the Lhotse manifests describe the recording with them).
STORE_KEYS = ("key", "speaker", "shard", "location", "file_sr", "file_samples")


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class BatchRequest:
    """Everything ``audiokit batch`` was asked (values as typed; see :func:`run_batch`)."""

    job: Job
    paths: tuple[str, ...] = ()
    out: str = "."
    root: str | None = None
    glob: str | None = None
    manifest: str | None = None
    force: bool = False
    max_failures: int | None = None
    jobs: int | None = None
    chunk: int | None = None
    scheduler: str | None = None
    #: How resume compares an input with its record: ``head-tail``, ``hash`` or ``stat``
    #: (:data:`~audiokit.batch.manifest.VERIFY_MODES`).
    verify: str = "head-tail"


@dataclass
class BatchStats:
    """Counts and rates of a run so far (passed to the progress callback; the summary at the end).

    ``total`` counts every input, ``skipped`` those already done, ``done``
    those finished in this run (``ok + failed``); rates are over this run.
    ``warned`` counts the inputs of this run that warned (their ``warnings``
    in the manifest), ``ignored`` the files not taken: in walked folders for
    their name (not an audio extension, or not matching ``--glob``) or their
    kind (a FIFO, a device), and the batch's own outputs wherever named
    (``ignored_reasons``: how many for each reason, in order of first use).
    """

    command: str
    total: int
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    audio_seconds: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None
    stopped_early: bool = False
    out: str = ""
    backend: str = ""
    workers: int = 1
    #: The first :data:`MAX_ERRORS_SHOWN` error lines of this run (the manifest has them all).
    errors: list[str] = field(default_factory=list)
    warned: int = 0
    #: The first :data:`MAX_ERRORS_SHOWN` inputs that warned: ``(id, "<path>: <its first warning>")``.
    warnings: list[tuple[str, str]] = field(default_factory=list)
    ignored: int = 0
    #: The first :data:`MAX_ERRORS_SHOWN` ignored files, as the folder given joined with the path inside it.
    ignored_files: list[str] = field(default_factory=list)
    ignored_reasons: dict[str, int] = field(default_factory=dict)
    glob: str | None = None
    #: Store-level notes for stderr (a store's Lhotse manifests off Lhotse's frame-count rule).
    notes: list[str] = field(default_factory=list)

    @property
    def done(self) -> int:
        """Inputs finished in this run, ``ok + failed``."""
        return self.ok + self.failed

    @property
    def to_run(self) -> int:
        """Inputs this run has to compute, ``total - skipped``."""
        return self.total - self.skipped

    @property
    def elapsed(self) -> float:
        """Seconds since the run started (until it finished)."""
        return (self.finished or time.perf_counter()) - self.started

    @property
    def files_per_second(self) -> float:
        """``done / elapsed``."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def audio_hours_per_second(self) -> float:
        """Hours of audio of the ``ok`` inputs per second of wall time."""
        return self.audio_seconds / 3600 / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        """``(to_run - done) / files_per_second`` (None before the first input finishes)."""
        rate = self.files_per_second
        return (self.to_run - self.done) / rate if rate > 0 else None

    @property
    def exit_code(self) -> int:
        """0 when no input failed, 3 otherwise."""
        return ExitStatus.INPUT if self.failed else ExitStatus.OK

    def progress(self) -> str:
        """How far the run got, e.g. ``96 of 306 done, 2 failed`` (done: ``skipped + ok``, what a re-run skips)."""
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{self.skipped + self.ok} of {self.total} done{failed}"

    def ignored_text(self) -> str:
        """``2 files ignored (not an audio extension): a/notes.txt, b/clip.m4a`` (the first few names), or ``""``; with
        several reasons, ``3 files ignored (2 not an audio extension, 1 an output of this batch): ...``."""
        if not self.ignored:
            return ""
        reasons = self.ignored_reasons or {
            "not an audio extension" if self.glob is None else f"not matching --glob {self.glob}": 1
        }
        why = next(iter(reasons)) if len(reasons) == 1 else ", ".join(f"{n} {reason}" for reason, n in reasons.items())
        more = f", ... ({self.ignored - len(self.ignored_files)} more)" if self.ignored > len(self.ignored_files) else ""
        files = "file" if self.ignored == 1 else "files"
        return f"{self.ignored} {files} ignored ({why}): {', '.join(self.ignored_files)}{more}"

    def line(self) -> str:
        """The one-line summary printed on stderr."""
        early = " (stopped early: --max-failures reached)" if self.stopped_early else ""
        warned = f"; {self.warned} with warnings" if self.warned else ""
        ignored = f"; {self.ignored_text()}" if self.ignored else ""
        return (
            f"batch {self.command}: {self.ok} ok, {self.failed} failed, {self.skipped} already done, "
            f"{self.total} inputs{warned}{ignored}; {self.elapsed:.2f} s, {self.files_per_second:.1f} files/s, "
            f"{self.audio_hours_per_second * 3600:.0f}x real time ({self.backend}, {self.workers} worker(s)){early}; "
            f"manifest {os.path.join(self.out, MANIFEST)}"
        )

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` summary (``warned_ids`` and ``ignored_files``: the first :data:`MAX_ERRORS_SHOWN`)."""
        return {
            "command": self.command,
            "total": self.total,
            "ok": self.ok,
            "failed": self.failed,
            "skipped": self.skipped,
            "warnings": self.warned,
            "warned_ids": [item_id for item_id, _ in self.warnings],
            "ignored": self.ignored,
            "ignored_files": list(self.ignored_files),
            "ignored_reasons": dict(self.ignored_reasons),
            "seconds": round(self.elapsed, 3),
            "files_per_second": round(self.files_per_second, 2),
            "audio_seconds": round(self.audio_seconds, 3),
            "stopped_early": self.stopped_early,
            "notes": list(self.notes),
            "out": self.out,
            "manifest": os.path.join(self.out, MANIFEST),
            "backend": self.backend,
            "workers": self.workers,
            "exit_code": self.exit_code,
        }


def _refuse_taken_ids(items: Iterable[InputItem], owners: IdOwners, manifest_path: str) -> None:
    """ParameterError naming the first input whose id belongs to another source in the manifest (and how many more)."""
    taken = []
    for item in items:
        if item.problem is None:  # an in-run duplicate fails on its own, without outputs
            owner = owners.other_owner(item.id, item.path)
            if owner is not None:
                taken.append((item, owner))
    if taken:
        item, owner = taken[0]
        more = f" (and {len(taken) - 1} more of these inputs' ids)" if len(taken) > 1 else ""
        raise ParameterError(
            f"id {item.id!r} already belongs to {owner} in {manifest_path}{more}; use another --out or --root", item.path
        )


def own_outputs(out_dir: str) -> OwnOutputs:
    """The files of ``out_dir`` a batch never takes as inputs: what its manifest lists and, in a corpus store (a
    ``store.json``), the store's files: its indexes, plan, views and shards, everything under ``feats/`` and ``shar/``
    (the names :meth:`StoreSession.clear <audiokit.batch.stores.session.StoreSession.clear>` removes)."""
    from .stores.description import DESCRIPTION
    from .stores.index import INDEX, JOURNAL
    from .stores.layout import SHAR, shard_number
    from .stores.options import ARRAY_STORES, SHARDED_STORES
    from .stores.plan import PLAN
    from .stores.views import view_files

    files = set(listed_outputs(out_dir))
    if not os.path.isfile(os.path.join(out_dir, DESCRIPTION)):
        return OwnOutputs(frozenset(files))
    names = {DESCRIPTION, INDEX, JOURNAL, PLAN}.union(*(view_files(kind) for kind in ARRAY_STORES))
    with contextlib.suppress(OSError):
        for entry in os.scandir(out_dir):
            if any(shard_number(kind, entry.name) is not None for kind in SHARDED_STORES):
                names.add(entry.name)
    files.update(os.path.join(out_dir, name) for name in names)
    folders = frozenset(os.path.join(out_dir, name) for name in ("feats", SHAR))  # feats/: layout.member_path
    return OwnOutputs(frozenset(files), folders)


def _finish_files(kind: str) -> list[str]:
    """The files a store's finish writes beside ``store.json`` (what a remote ``--out`` puts at the end)."""
    from .stores.index import INDEX
    from .stores.views import view_files

    return [INDEX, *view_files(kind)]


def _output_folders(job: Job, items: Iterable[InputItem], out_dir: str) -> set[str]:
    folders = {out_dir}
    for item in items:
        for name in output_names(job, item.id).values():
            folders.add(os.path.dirname(os.path.join(out_dir, *name.split("/"))))
    return folders


def _task_failure(item: InputItem, exc: BaseException) -> dict[str, Any]:
    """The record of an input whose task could not finish (its worker died, the cluster failed it)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return {
        "id": item.id,
        "path": item.path,
        "segment": item.segment,
        "status": "failed",
        "error": f"{item.path}: the task running it failed: {type(exc).__name__}: {text}",
        "outputs": {},
    }


def _default_chunk(n_tasks_inputs: int, workers: int) -> int:
    """Inputs per task: about 16 tasks per worker, between 1 and 32 inputs each."""
    return max(1, min(32, n_tasks_inputs // max(1, 16 * workers)))


class _Recorder:
    """Writes the records the workers return: ``results.jsonl`` first, then the manifest line (a store run of a
    reporting job, ``batch pitch --store K``: the report is the line's ``result``; no ``results.jsonl``)."""

    def __init__(
        self,
        job: Job,
        out_dir: str,
        manifest: ManifestWriter,
        stats: BatchStats,
        session: StoreSession | None = None,
        ledger: RemoteLedger | None = None,
    ) -> None:
        self.job, self.out_dir, self.manifest, self.stats, self.session = job, out_dir, manifest, stats, session
        self.ledger = ledger
        self._uncounted: list[dict[str, Any]] = []
        if ledger is not None:
            ledger.start()
        self.fingerprint = job.fingerprint()
        self.results_path = os.path.join(out_dir, RESULTS)
        self.keys = RECORD_KEYS + STORE_KEYS if session is not None else RECORD_KEYS

    def __call__(self, record: dict[str, Any]) -> None:
        self.manifest.check()  # the output folder still is the one this run took (before writing anything of it)
        if self.session is not None:
            self.session.take(record)
        result = record.pop("result", None)
        if record.get("status") == "ok" and self.job.spec.reports and self.session is None:
            text = json.dumps({"id": record["id"], **(result or {})}, separators=(", ", ": ")) + "\n"
            try:
                with open(self.results_path, "a", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise OutputError(f"cannot write the results: {describe_os_error(exc)}", self.results_path) from exc
        line = {key: record.get(key) for key in self.keys}
        if self.session is not None and self.job.spec.reports:  # a store's report: in its manifest line (a bucket too)
            line["result"] = result
        line.update(command=self.job.command, fingerprint=self.fingerprint, finished=utc_now())
        with signals_held():  # an interrupted run's counts are its lines
            self.manifest.append(line)
            if self.ledger is None:
                self._count(record)
            else:  # counted once its manifest part is in the bucket
                self._uncounted.append(record)

    def task_done(self) -> None:
        """A task's records are written: a remote ``--out`` puts them (:meth:`RemoteLedger.commit`: two small objects,
        with Ctrl-C/SIGTERM held so that the counts an interrupted run reports are the records in the bucket)."""
        if self.ledger is not None:
            with signals_held():
                self.ledger.commit()
                for record in self._uncounted:
                    self._count(record)
                self._uncounted.clear()

    def _count(self, record: dict[str, Any]) -> None:
        stats = self.stats
        if record.get("status") == "ok":
            stats.ok += 1
            stats.audio_seconds += record.get("duration") or 0.0
        else:
            stats.failed += 1
            if len(stats.errors) < MAX_ERRORS_SHOWN:
                stats.errors.append(str(record.get("error")))
        if record.get("warnings"):
            stats.warned += 1
            if len(stats.warnings) < MAX_ERRORS_SHOWN:
                path, text = str(record.get("path")), str(record["warnings"][0])
                stats.warnings.append((str(record["id"]), text if text.startswith(f"{path}: ") else f"{path}: {text}"))


def _execute(
    backend: Backend,
    job: Job,
    tasks: list[Any],
    out_dir: str,
    record: _Recorder,
    stats: BatchStats,
    max_failures: int | None,
    on_update: Callable[[BatchStats], None],
    work: Callable[..., list[dict[str, Any]]] = run_task,
) -> Backend:
    """Keep ``backend.slots`` tasks in flight, record each as it finishes; return the (maybe restarted) backend.

    ``work(job, task, out_dir)`` runs one task in a worker (:func:`~audiokit.batch.tasks.run_task`, or a store's
    :func:`~audiokit.batch.stores.work.run_store_task`); a task iterates over its inputs.
    """
    queue = list(reversed(tasks))
    pending: dict[Any, Any] = {}
    retried: set[int] = set()
    cancel = True
    try:
        while queue or pending:
            while queue and len(pending) < backend.slots:
                task = queue.pop()
                pending[backend.submit(work, job, task, out_dir)] = task
            broken = False
            for future in backend.wait_first(set(pending)):
                task = pending.pop(future)
                try:
                    records = future.result()
                except BrokenProcessPool as exc:  # a worker died (killed, out of memory): retry its tasks once
                    broken = True
                    if id(task) not in retried:
                        retried.add(id(task))
                        queue.append(task)
                        continue
                    records = [_task_failure(item, exc) for item in task]
                except ObjectStoreError:  # the output prefix cannot be written: every task would fail the same way
                    raise
                except Exception as exc:  # noqa: BLE001 - e.g. Dask's KilledWorker after repeated worker deaths
                    records = [_task_failure(item, exc) for item in task]
                for rec in records:
                    record(rec)
                record.task_done()
            on_update(stats)
            if max_failures is not None and stats.failed >= max_failures:
                stats.stopped_early = True
                return backend
            if broken and isinstance(backend, PoolBackend):
                for task in pending.values():
                    if id(task) not in retried:
                        retried.add(id(task))
                        queue.append(task)
                pending.clear()
                backend.close(cancel=True)
                backend = PoolBackend(backend.workers)
        cancel = False
        return backend
    finally:
        try:
            if cancel:  # stopping early or interrupted: record the tasks that finished meanwhile, then stop the rest
                for future in list(pending):
                    if _finished(future):
                        del pending[future]
                        for rec in future.result():
                            record(rec)
                        record.task_done()
        finally:  # the workers stop even when recording fails (the output folder went away)
            backend.close(cancel=cancel, pending=set(pending))


def _finished(future: Any) -> bool:
    """True for a future that finished without an exception (a concurrent.futures or Dask future)."""
    try:
        return bool(future.done()) and not future.cancelled() and future.exception(timeout=0) is None
    except Exception:  # noqa: BLE001 - cancelled, timed out or failed: not finished
        return False


def run_batch(
    request: BatchRequest, *, on_update: Callable[[BatchStats], None] | None = None, stdin_lines: Iterable[str] | None = None
) -> BatchStats:
    """Run a batch (see the module docstring); return its statistics (``exit_code``: 0 or 3).

    Raises
    ------
    ParameterError
        Bad options or inputs, or an input whose id belongs to another source in the manifest (exit 2).
    InputError
        A file or folder named in ``request.paths`` does not exist (exit 3; the output folder is not created).
    OutputError
        The output folder cannot be created, locked or written (exit 4).
    KeyboardInterrupt, audiokit.cli.app.Terminated
        Propagated after the workers are stopped and temp files removed.
    """
    job = dataclasses.replace(request.job, verify=check_verify(request.verify))
    validate(job)
    for name, value in (("--max-failures", request.max_failures), ("--chunk", request.chunk), ("--jobs", request.jobs)):
        if value is not None and value < 1:
            raise ParameterError(f"{name}: {value} must be >= 1")
    remote = is_url(request.out)
    if remote and not job.store.arrays:
        raise ParameterError(
            f"--out {display_url(request.out)}: only the corpus stores (--store npy, shards, kaldi, parquet) are written to "
            "object storage; --store files and the WAV/report jobs need a local --out"
        )
    out_dir = os.path.abspath(request.out) if not remote else ""
    ignored: list[tuple[str, str]] = []
    items = collect_inputs(
        request.paths,
        glob=request.glob,
        root=request.root,
        manifest=request.manifest,
        exclude=out_dir or None,
        own=own_outputs(out_dir) if not remote else None,
        stdin_lines=stdin_lines,
        ignored=ignored,
        storage_options=request.job.inputs.storage_options,
    )
    target: RemoteOut | None = None
    ledger: RemoteLedger | None = None
    lock: DirLock | ObjectLock
    if remote:
        target = RemoteOut(request.out, request.job.inputs.storage_options)
        sweep_staging_folders()  # a killed run's, on this host
        out_dir = new_staging_folder()  # the shadow of the bookkeeping (audiokit.batch.ledger)
        try:
            run = run_id()
            lock = ObjectLock(target, run)
        except BaseException:
            shutil.rmtree(out_dir, ignore_errors=True)
            raise
    else:
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the output folder: {describe_os_error(exc)}", request.out) from exc
        if not os.access(out_dir, os.W_OK | os.X_OK):
            raise OutputError("the output folder is not writable (permission denied)", request.out)
        lock = DirLock(out_dir)
    folders = {out_dir}
    try:
        if target is not None:
            target.abort_uploads()  # a killed run's (we hold the lock: none is alive)
            ledger = RemoteLedger(target, out_dir, run)
            ledger.pull()
        manifest_path = os.path.join(out_dir, MANIFEST)
        latest, owners = read_manifest(manifest_path)
        _refuse_taken_ids(items, owners, f"{target.root}/{MANIFEST}" if target is not None else manifest_path)
        compact_manifest(manifest_path, latest)
        previous = {} if request.force else latest
        workers = 1 if request.scheduler is None and (request.jobs or default_jobs()) <= 1 else (request.jobs or default_jobs())
        session = StoreSession(job, out_dir, target) if job.store.arrays else None
        work: Callable[..., list[dict[str, Any]]] = run_task
        tasks: list[Any]
        if session is not None:
            tasks, done = session.prepare(
                items, latest, force=request.force, chunk=request.chunk or _default_chunk(len(items), workers)
            )
            folders = session.folders(tasks)
            work = run_store_task
            if ledger is not None:
                ledger.sync()
        else:
            todo, done = split_done(
                items,
                previous,
                fingerprint=job.fingerprint(),
                out_dir=out_dir,
                verify=job.verify,
                storage_options=job.inputs.storage_options,
            )
            tasks = chunked(todo, request.chunk or _default_chunk(len(todo), workers))
            folders = _output_folders(job, todo, out_dir)
        if job.spec.reports:
            compact_results(os.path.join(out_dir, RESULTS), {item.id for item in done})
        sweep_temp_files(folders)
        shown = target.root if target is not None else out_dir
        stats = BatchStats(command=job.command, total=len(items), skipped=len(done), out=shown, workers=workers)
        stats.glob, stats.ignored = request.glob, len(ignored)
        stats.ignored_files = [path for path, _ in ignored[:MAX_ERRORS_SHOWN]]
        for _, reason in ignored:
            stats.ignored_reasons[reason] = stats.ignored_reasons.get(reason, 0) + 1
        update = on_update or (lambda s: None)
        saved_env = single_thread_env() if request.scheduler is None and workers > 1 else None
        try:
            with ManifestWriter(manifest_path) as manifest:
                recorder = _Recorder(job, out_dir, manifest, stats, session, ledger)
                update(stats)
                if tasks:
                    backend = make_backend(workers, request.scheduler)
                    stats.backend = backend.name
                    stats.workers = workers if request.scheduler is None else backend.slots // 2
                    where = target.url if target is not None else out_dir  # the workers write straight to the bucket
                    _execute(backend, job, tasks, where, recorder, stats, request.max_failures, update, work)
                stats.backend = stats.backend or "nothing to do"
            if session is not None:
                stats.notes.extend(session.finish())
                if ledger is not None:
                    ledger.finish(_finish_files(job.store.kind))
        finally:
            if saved_env is not None:
                for name in THREAD_VARS:
                    if saved_env[name] is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = saved_env[name]  # type: ignore[assignment]
        stats.finished = time.perf_counter()
        update(stats)
        return stats
    finally:
        sweep_temp_files(folders)
        lock.release()
        if target is not None:
            shutil.rmtree(out_dir, ignore_errors=True)

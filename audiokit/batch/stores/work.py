"""A worker's task in a store run: its utterances into members of one container, committed together.

A :class:`StoreTask` is a few inputs of the ``npy`` store (each its own ``.npy``), or the inputs of one shard of a
sharded store (one container file).  :func:`run_store_task` runs the job of every input into a member
(:data:`audiokit.pipelines.registry.RunMember`), commits the container, writes a shard's Lhotse cuts after it, and
only then returns the records (so the manifest never lists bytes that are not on disk).  Each record carries, for
the client only, the utterance's statistics (``stats``: frame count, per-dimension sums and sums of squares, float64)
and, for the first utterance of the task, the sidecar the single-file ``.npy`` would have had (``plan``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import AudiokitError, InputError, OutputError
from ...io.atomic import describe_os_error
from ...io.remote import display_url, is_url
from ..inputs import InputItem
from .layout import absolute, cuts_file, key_of, member_path, open_container, shard_file, utf8_text

__all__ = ["FLOAT16_MAX", "StoreTask", "lhotse_record", "run_store_task"]


#: Largest finite float16 value: stored values beyond it are refused (``--dtype float16``).
FLOAT16_MAX = 65504.0


@dataclass(frozen=True)
class StoreTask:
    """One task: ``items`` (in order), the shard they fill (None: the ``npy`` store), the store's facts.

    Attributes
    ----------
    items : tuple of InputItem
    shard : int or None
        Shard number of a sharded store.
    n_feats : int
        Values per frame of every array.
    sr : int
        The store's sample rate: an input at another rate fails (unless ``--sr`` resamples it).
    facts : dict
        Store-level facts for the Lhotse manifests (``frame_shift``, ``n_feats``, ``dtype``, ``feature_type``).
    """

    items: tuple[InputItem, ...]
    shard: int | None
    n_feats: int
    sr: int
    facts: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[InputItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class _Tap:
    """The member sink a job writes to, summing the statistics (and checking float16's range) on the way."""

    def __init__(self, sink: Any, n_feats: int, float16: bool, path: str) -> None:
        self.sink, self.float16, self.path = sink, float16, path
        self.count = 0
        self.sums = np.zeros(n_feats)
        self.squares = np.zeros(n_feats)

    def write(self, frames: np.ndarray) -> None:
        # the single-file .npy's float32 values first (a float64 chain's rows are rounded once, as there), then the
        # store's dtype: a float16 store holds exactly the float32 store's values cast to float16
        frames = np.asarray(frames, dtype=np.float32)
        if self.float16 and frames.size:
            peak = float(np.abs(frames).max())
            if peak > FLOAT16_MAX:
                raise InputError(
                    f"values up to {peak:.6g} exceed float16's range ({FLOAT16_MAX:g}): use --dtype float32", self.path
                )
            frames = frames.astype(np.float16)
        wide = frames.astype(np.float64)  # the statistics of the stored values
        self.count += wide.shape[0]
        self.sums += wide.sum(axis=0)
        self.squares += np.einsum("ij,ij->j", wide, wide)
        self.sink.write(frames)


def _utterance(
    job: Any, item: InputItem, key: str, task: StoreTask, container: Any, extra: dict[str, Any], describing: list[bool]
) -> dict[str, Any]:
    """Run one input into ``container``; its record (a failed record when it fails: the member is dropped)."""
    from ..jobs import attempt

    store, spec = job.store, job.spec

    def call(inputs: Any) -> tuple[Any, dict[str, Any]]:
        if store.kind == "kaldi":
            from ...io.ark import check_kaldi_key

            check_kaldi_key(key, item.path)  # before any work, naming the input
        speaker = store.speaker_of(item.id, item.path)
        taps: list[_Tap] = []

        def open_member(n_frames: int, n_feats: int) -> _Tap:
            taps.append(_Tap(container.begin(key, n_frames, n_feats), n_feats, store.dtype == "float16", item.path))
            return taps[0]

        try:
            result = spec.run_member(item.path, job.options, inputs, open_member, describing[0])
            if result.source.sr != task.sr:
                raise InputError(
                    f"{result.source.sr} Hz, but the store holds {task.sr} Hz features (give --sr {task.sr} to resample on read)",
                    item.path,
                )
            n_frames = int(result.shape[-1])
            file_sr, file_samples = _file_facts(item, job.store.sr)
            fields = {
                "key": key,
                "speaker": speaker,
                "file_sr": file_sr,
                "file_samples": file_samples,
                "shape": [n_frames, task.n_feats],
            }
            described = lhotse_record(_manifest_view(item, result, fields))
            fields["location"] = container.end(_member_meta(store.kind, described, task.facts))
        except BaseException:
            if taps:
                container.drop()
            raise
        tap = taps[0]
        if result.sidecar is not None:
            describing[0] = False
        fields.update(stats=(tap.count, tap.sums, tap.squares), plan=result.sidecar, **extra)
        if spec.reports:  # the per-utterance report: the manifest line's "result" (batch.runner)
            fields["result"] = result.report
        return result, fields

    return attempt(job, item, call)


def _manifest_view(item: InputItem, result: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The manifest fields :func:`lhotse_record` reads, as :func:`audiokit.batch.jobs.attempt` will record them
    (``path`` without a URL's credentials), before the record exists: the member's metadata and the Lhotse views
    are built from the same record by the same function."""
    return {
        "id": item.id,
        "path": display_url(item.path) if is_url(item.path) else item.path,
        "segment": item.segment,
        "duration": result.source.duration,
        "sr": result.source.sr,
        "channels": result.source.channels,
        **fields,
    }


def _file_facts(item: InputItem, resampled_to: int | None) -> tuple[int | None, int | None]:
    """The input file's own rate and length (samples per channel) when the features are of a segment or resampled
    (what the Lhotse manifests need to describe the recording); ``(None, None)`` otherwise."""
    if item.segment is None and resampled_to is None:
        return None, None
    import soundfile as sf

    info = sf.info(item.path)
    return int(info.samplerate), int(info.frames)


def _member_meta(kind: str, record: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """What a container stores beside the array: Lhotse's Features manifest in a tar shard, the row's columns in
    Parquet, nothing elsewhere."""
    if kind == "shards":
        from .lhotse import shar_member

        return shar_member(record, facts)
    return record


def run_store_task(job: Any, task: StoreTask, out_dir: str) -> list[dict[str, Any]]:
    """Run one task (see the module docstring); one record per input, after its container is committed."""
    from .. import tasks

    for name, value in tasks.THREAD_VARS.items():
        os.environ.setdefault(name, value)
    describing = [True]  # until one utterance of the task has given its sidecar (the client keeps the first one)
    if is_url(out_dir):
        return _remote_task(job, task, out_dir, describing)
    if task.shard is None:
        return [_npy_utterance(job, item, task, out_dir, describing) for item in task.items]
    return _shard(job, task, out_dir, describing)


def _remote_task(job: Any, task: StoreTask, url: str, describing: list[bool]) -> list[dict[str, Any]]:
    """A task of a remote ``--out``: made in a local staging folder by the same code, each finished file then put as one
    object (a shard before its cuts), all before the records return; the staging folder is removed.

    Raises
    ------
    audiokit.io.outdir.ObjectStoreError
        An object could not be put: the client stops the batch (exit 4); none of this task's records is written,
        so a resume redoes it.
    """
    from ...io.outdir import RemoteOut, staging_folder

    target = RemoteOut(url, job.inputs.storage_options)
    with staging_folder() as local:
        if task.shard is None:
            records = [_npy_utterance(job, item, task, local, describing) for item in task.items]
        else:
            records = _shard(job, task, local, describing)
        names = list(dict.fromkeys(str(n) for r in records if r.get("status") == "ok" for n in r["outputs"].values()))
        if task.shard is not None and job.store.kind == "shards" and names:
            names.append(cuts_file(task.shard))
        for name in names:
            target.put(absolute(local, name), name)
    return records


def _npy_utterance(job: Any, item: InputItem, task: StoreTask, out_dir: str, describing: list[bool]) -> dict[str, Any]:
    from ..jobs import attempt

    if item.problem is not None:  # fails with its problem, before any file is made for it
        return attempt(job, item, _unreachable)
    key = key_of(item.id)
    name = member_path(key)
    path = absolute(out_dir, name)
    try:
        folder = os.path.dirname(path)
        if not os.path.isdir(folder):  # one of 256 folders: a stat per input, a mkdir per folder
            os.makedirs(folder, exist_ok=True)
        with open_container("npy", path, dtype=job.store.dtype, compress=False, n_feats=task.n_feats) as container:
            record = _utterance(job, item, key, task, container, {"outputs": {"npy": name}}, describing)
    except (AudiokitError, OSError) as exc:  # its file cannot be made (a name too long for the file system, ...)
        reason = exc.reason if isinstance(exc, AudiokitError) else describe_os_error(exc)
        return attempt(job, item, _raiser(OutputError(f"cannot write its array {name}: {reason}", item.path)))
    return record


def _unreachable(inputs: Any) -> Any:
    raise AssertionError("internal: an input with a problem is not run")


def _raiser(exc: BaseException) -> Any:
    def call(inputs: Any) -> Any:
        raise exc

    return call


class _Empty(Exception):
    """Every input of a shard failed: no container file is written."""


def _shard(job: Any, task: StoreTask, out_dir: str, describing: list[bool]) -> list[dict[str, Any]]:
    store = job.store
    assert task.shard is not None
    name = shard_file(store.kind, task.shard)
    Path(absolute(out_dir, name)).parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    try:
        with open_container(
            store.kind, absolute(out_dir, name), dtype=store.dtype, compress=store.compress, n_feats=task.n_feats
        ) as c:
            for item in task.items:
                records.append(_utterance(job, item, key_of(item.id), task, c, {"outputs": {"shard": name}}, describing))
            if not any(r.get("status") == "ok" for r in records):
                raise _Empty
    except _Empty:
        pass
    for record in records:
        record["shard"] = task.shard
        if record.get("status") != "ok":
            record["outputs"] = {}
    ok = [r for r in records if r.get("status") == "ok"]
    if store.kind == "shards" and ok:
        from .lhotse import shar_cut, write_jsonl_gz

        write_jsonl_gz(absolute(out_dir, cuts_file(task.shard)), [shar_cut(lhotse_record(r), task.facts) for r in ok])
    return records


def lhotse_record(record: dict[str, Any]) -> dict[str, Any]:
    """The per-utterance record the Lhotse manifests read (:mod:`.lhotse`) from a manifest record."""
    segment = record.get("segment") or {}
    return {
        "id": utf8_text(record["id"]),
        "key": record["key"],
        "source": utf8_text(record["path"]),
        "start": segment.get("start"),
        "duration": record["duration"],
        "sr": record["sr"],
        "n_frames": record["shape"][0],
        "speaker": utf8_text(record.get("speaker")),
        "channels": record.get("channels"),
        **({"source_sr": record["file_sr"]} if record.get("file_sr") else {}),
        **({"source_n_samples": record["file_samples"]} if record.get("file_samples") else {}),
    }

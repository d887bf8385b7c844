"""What a batch computes per input: the job, its fingerprint, its output names, and one input run.

A :class:`Job` is the command name, the pipeline options dataclass built by
the single-file command's ``options_from`` (values as typed), the
:class:`~audiokit.pipelines.params.InputOptions` and ``png``.  Everything
per command comes from the job registry (:mod:`audiokit.pipelines.registry`):
its :class:`~audiokit.pipelines.registry.JobSpec` checks the options, names
the outputs of one input as the single-file command names them
(``<id>.mel.npy`` + ``<id>.mel.json``, ``<id>.<rate>.wav``, ...), runs the
very pipeline of the single-file command and returns a
:class:`~audiokit.pipelines.registry.JobResult` (the input's length, rate
and channels, the output's shape, the report of ``info``/``spectrum``, which
the runner appends to ``results.jsonl``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import NUMBERS_VERSION
from ..errors import AudiokitError, ExitStatus, OutputError, ParameterError
from ..io.atomic import describe_os_error
from ..io.remote import display_url, is_url
from ..pipelines import registry
from ..pipelines.params import InputOptions
from .inputs import InputItem
from .manifest import input_digests, object_fields
from .stores.options import StoreOptions

__all__ = ["Job", "attempt", "input_options", "output_names", "validate", "run_item", "segment_text"]


@dataclass(frozen=True)
class Job:
    """One batch job: the same for every input.

    Attributes
    ----------
    command : str
        A command of the job registry with a spec (:func:`audiokit.pipelines.registry.batch_jobs`).
    options : dataclass
        The pipeline options (``TimeFreqOptions``, ``ResampleOptions``, ...).
    inputs : InputOptions
        How inputs are opened (raw PCM, NaN policy); segments are per item.
    png : bool
        Also draw ``<id>.<kind>.png`` (``mel``/``spectrogram``).
    store : StoreOptions
        Where the outputs go (``--store``; :mod:`audiokit.batch.stores`): the single-file outputs (``files``) or a
        corpus store of time-major arrays.
    verify : str
        How resume compares an input with its record (``--verify``, :data:`audiokit.batch.manifest.VERIFY_MODES`;
        set by :func:`~audiokit.batch.runner.run_batch` from ``BatchRequest.verify``): ``hash`` makes the worker
        record a full-content digest too.  Not part of :meth:`fingerprint` (it changes no number).
    """

    command: str
    options: Any
    inputs: InputOptions = field(default_factory=InputOptions)
    png: bool = False
    store: StoreOptions = field(default_factory=lambda: StoreOptions(kind="files"))
    verify: str = "head-tail"

    @property
    def spec(self) -> registry.JobSpec:
        """The registry's :class:`~audiokit.pipelines.registry.JobSpec` of :attr:`command`."""
        return registry.spec(self.command)

    def fingerprint(self) -> str:
        """``sha256:`` + 16 hex digits of the canonical JSON of everything that shapes the outputs.

        That is the command, the options dataclass (its type name and fields),
        the input options but the segment and the storage options, ``png``, the store options that shape the numbers (dtype, compression,
        ``--sr``), :data:`audiokit._version.NUMBERS_VERSION` (raised only by changes that alter output bytes, so
        a release that does not resumes a half-built store) and
        the FFT backend the ``--fft`` option resolves to here, with its library
        version (one backend gives the same bytes everywhere; two agree to
        float rounding only).  The input itself is identified separately
        (path, size, mtime, segment).
        """
        from ..engine import provenance

        inputs = dataclasses.asdict(self.inputs)
        inputs.pop("start", None)
        inputs.pop("duration", None)
        inputs.pop("storage_options", None)  # where and how to reach the inputs (credentials): no number depends on it
        options = dataclasses.asdict(self.options)
        payload = {
            "command": self.command,
            "options_type": type(self.options).__name__,
            "options": options,
            "inputs": inputs,
            "png": self.png,
            "numbers_version": NUMBERS_VERSION,
            "store": self.store.numbers(),
            "fft": provenance(_fft_option(options)),
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _fft_option(options: Mapping[str, Any]) -> str | None:
    """The ``fft`` field (``--fft``) anywhere in the nested options dict, or None (auto)."""
    if isinstance(options.get("fft"), str):
        return options["fft"]
    for value in options.values():
        if isinstance(value, Mapping):
            found = _fft_option(value)
            if found is not None:
                return found
    return None


def output_names(job: Job, item_id: str) -> dict[str, str]:
    """Outputs of one input, relative to the output folder: ``{"npy": "a/utt.mel.npy", "json": ..., ...}``."""
    return job.spec.outputs(job.options, item_id, job.png)


def validate(job: Job) -> None:
    """Refuse, before any input is read, options that would fail on every input (ParameterError, exit 2)."""
    if job.command not in registry.batch_jobs():
        raise ParameterError(f"batch: unknown command {job.command!r} (allowed: {', '.join(registry.batch_jobs())})")
    spec = job.spec
    if job.png and not spec.draws:
        drawing = [name for name in registry.batch_jobs() if registry.spec(name).draws]
        raise ParameterError(f"--png applies to {', '.join(drawing)} only")
    job.inputs.raw_format()
    spec.check(job.options)
    job.store.check()
    if job.store.arrays and spec.run_member is None:
        arrays = [name for name in registry.batch_jobs() if registry.spec(name).run_member is not None]
        raise ParameterError(
            f"--store {job.store.kind}: batch {job.command} writes no feature array; corpus stores hold those of "
            f"{', '.join(arrays)} (use --store files)"
        )
    if job.store.arrays and job.png:
        raise ParameterError("--png draws the single-file outputs: give --store files with it")


def segment_text(seconds: float) -> str:
    """Seconds as an exact duration text for :class:`InputOptions` (``1.25`` -> ``"1.25s"``)."""
    from decimal import Decimal

    return f"{Decimal(repr(float(seconds))):f}s"


def input_options(job: Job, item: InputItem) -> InputOptions:
    """The job's input options with the item's segment (``start``/``duration`` as exact texts) and ``--sr``."""
    inputs = job.inputs if job.store.sr is None else dataclasses.replace(job.inputs, resample_to=job.store.sr)
    if item.start is None and item.duration is None:
        return inputs
    return dataclasses.replace(
        inputs,
        start=segment_text(item.start) if item.start else None,
        duration=segment_text(item.duration) if item.duration is not None else None,
    )


def run_item(job: Job, item: InputItem, out_dir: str, made_dirs: set[str] | None = None) -> dict[str, Any]:
    """Run one input, writing the single-file command's outputs; return its manifest fields (never raises for a bad
    input).

    ``made_dirs`` holds the output folders already created by the caller's task (saves a ``mkdir`` per input).

    Returns
    -------
    dict
        ``id, path, segment, size, mtime_ns, status, error, outputs, shape,
        duration, sr, channels, warnings, seconds`` and, for ``info``/``spectrum``,
        ``result`` (the report).  ``error`` is the one-line text the
        single-file command prints after ``error:``.
    """
    made = set() if made_dirs is None else made_dirs
    spec = job.spec

    def call(inputs: InputOptions) -> tuple[registry.JobResult, dict[str, Any]]:
        names = output_names(job, item.id)
        out = {kind: os.path.join(out_dir, *name.split("/")) for kind, name in names.items()}
        for path in {os.path.dirname(p) for p in out.values()} - made:
            try:
                Path(path).mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # e.g. an output subfolder replaced by a file
                raise OutputError(f"cannot create the output folder: {describe_os_error(exc)}", path) from exc
            made.add(path)
        result = spec.run(item.path, out, job.options, inputs)
        return result, ({"outputs": names, "result": result.report} if spec.reports else {"outputs": names})

    return attempt(job, item, call)


def attempt(
    job: Job, item: InputItem, call: Callable[[InputOptions], tuple[registry.JobResult, dict[str, Any]]]
) -> dict[str, Any]:
    """Run ``call(inputs)`` for one input and build its manifest fields; a bad input is a ``failed`` record.

    ``call`` runs the job with the item's input options and returns its :class:`~audiokit.pipelines.registry.
    JobResult` and the fields it adds to the record (``outputs``, a report, a store's location).  Warnings raised
    meanwhile go to ``warnings``; the input's size, mtime and digests (:func:`~audiokit.batch.manifest.input_digests`,
    for ``job.verify``) are taken before it is read; an :class:`~audiokit.errors.AudiokitError` is the record's
    ``error`` (its one-line text), any other exception an "internal error" of that input alone.
    """
    started = time.perf_counter()
    record: dict[str, Any] = {
        "id": item.id,
        "path": display_url(item.path) if is_url(item.path) else item.path,  # a URL without its credentials
        "segment": item.segment,
        "size": None,
        "mtime_ns": None,
        "digest": None,
        "content_digest": None,
        "duration": None,
        "sr": None,
        "channels": None,
    }
    caught: list[warnings.WarningMessage] = []
    try:
        if item.problem is not None:
            raise ParameterError(item.problem, item.path)
        if is_url(item.path):  # one metadata request: size, mtime, entity tag (the run names any problem)
            record.update(object_fields(item.path, job.inputs.storage_options))
        else:
            try:
                st = os.stat(item.path)
                record.update(size=st.st_size, mtime_ns=st.st_mtime_ns, **input_digests(item.path, job.verify))
            except OSError:
                pass  # the pipeline names the problem (no such file, permission denied)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result, fields = call(input_options(job, item))
        facts = result.source
        record.update(
            duration=facts.duration,
            sr=facts.sr,
            channels=facts.channels,
            status="ok",
            error=None,
            shape=list(result.shape) if result.shape is not None else None,
        )
        record.update(fields)
    except AudiokitError as exc:
        record.update(status="failed", error=str(exc), exit_code=exc.exit_code, outputs={}, shape=None)
    except Exception as exc:  # noqa: BLE001 - a file that makes a pipeline raise fails alone, as "internal error"
        text = " ".join(str(exc).split())
        record.update(
            status="failed",
            error=f"{item.path}: internal error: {type(exc).__name__}: {text}",
            exit_code=ExitStatus.INTERNAL,
            outputs={},
            shape=None,
        )
    record["warnings"] = [str(w.message) for w in caught]
    record["seconds"] = round(time.perf_counter() - started, 6)
    return record

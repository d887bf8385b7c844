"""``audiokit batch COMMAND``: a single-file command over a corpus (the engine: :mod:`audiokit.batch`).

Each ``batch`` subcommand is built from the single-file command's own
signature: every option of ``audiokit mel`` is an option of ``audiokit batch
mel``, declared once (in :mod:`audiokit.cli.mel`), but the input argument,
the switches and the refused options (:mod:`audiokit.cli.batch_params`:
``loudness --series`` is a flag writing ``<id>.loudness.npy``; ``-o``,
``--npy``, ``--residual``, ``--jsonl``, ``mel --filterbank``, ``silence --trim``
stop the run, exit 2, saying why); the batch options are added.  The values are turned into the pipeline options by the command
module's ``options_from``, exactly as the single-file command does.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any, cast

import typer

from ..batch.jobs import Job
from ..batch.runner import BatchRequest, BatchStats, run_batch
from ..pipelines import registry
from . import console
from .app import Terminated
from .batch_options import BATCH_PARAMS, PNG_PARAM, progress
from .batch_params import DROPPED, SWITCHES, batch_parameters, flags_of, refuse_given
from .options import inputs_from
from .store_options import STORE_PARAMS, store_from

__all__ = ["batch_app", "DROPPED"]


def single_file_command(name: str) -> tuple[Callable[..., Any], Callable[[Mapping[str, Any]], Any]]:
    """The registry's single-file command ``name``: its Typer callback and its module's ``options_from``."""
    ref = registry.entry(name).cli
    return registry.load(ref), importlib.import_module(ref.partition(":")[0]).options_from


def _run(name: str, options_from: Callable[[Mapping[str, Any]], Any], params: dict[str, Any]) -> int:
    job = Job(
        command=name,
        options=options_from(params),
        inputs=inputs_from(params),
        png=params.get("png", False),
        store=store_from(params),
    )
    request = BatchRequest(
        job=job,
        paths=tuple(params["paths"] or ()),
        out=params["out"],
        root=params["root"],
        glob=params["glob"],
        manifest=params["segments"],
        force=params["force"],
        verify=params["verify"],
        max_failures=params["max_failures"],
        jobs=params["jobs"],
        chunk=params["chunk"],
        scheduler=params["scheduler"],
    )
    seen: list[BatchStats] = []  # the run's statistics, once it has them (for an interrupted run's message)

    def observe(update: Callable[[BatchStats], None]) -> Callable[[BatchStats], None]:
        def on_update(stats: BatchStats) -> None:
            seen[:] = [stats]
            update(stats)

        return on_update

    try:
        with progress() as update:
            stats = run_batch(request, on_update=observe(update))
    except KeyboardInterrupt as exc:
        raise KeyboardInterrupt(_stopped("interrupted", seen)) from exc
    except Terminated as exc:
        raise Terminated(_stopped("terminated", seen)) from exc
    for error in stats.errors:
        console.error(error)
    if stats.failed > len(stats.errors):
        console.error(f'... {stats.failed - len(stats.errors)} more failed inputs: see status "failed" in the manifest')
    for _, warning in stats.warnings:
        console.info(f"warning: {warning}")
    if stats.warned > len(stats.warnings):
        console.info(f'... {stats.warned - len(stats.warnings)} more inputs warned: see "warnings" in the manifest')
    for note in stats.notes:
        console.info(f"note: {note}")
    console.info(stats.line())
    if params["summary_json"]:
        print(json.dumps(stats.to_json()))
    return stats.exit_code


def _stopped(word: str, seen: list[BatchStats]) -> str:
    """``interrupted: 96 of 306 done; run the same command again to resume`` (just ``word`` before the run started)."""
    if not seen:
        return word
    return f"{word}: {seen[0].progress()}; run the same command again to resume"


def batch_command(name: str) -> Callable[..., int]:
    """The ``audiokit batch NAME`` callback: the single-file command's parameters (switches and refusals:
    :func:`~audiokit.cli.batch_params.batch_parameters`) + batch's."""
    single, options_from = single_file_command(name)
    spec = registry.spec(name)
    extra = BATCH_PARAMS + ([PNG_PARAM] if spec.draws else []) + (_store_params(spec) if spec.run_member is not None else [])
    own, refused = batch_parameters(name, inspect.signature(single, eval_str=True).parameters.values(), extra)
    clash = {p.name for p in own} & {p.name for p in extra}
    assert not clash, f"batch {name}: parameters {clash} declared twice"

    def command(**params: Any) -> int:
        refuse_given(name, refused, params)
        return _run(name, options_from, params)

    parameters = own + extra
    cast(Any, command).__signature__ = inspect.Signature(parameters, return_annotation=int)  # read by Typer
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": int}
    command.__name__ = command.__qualname__ = f"batch_{name}"
    first = (inspect.getdoc(single) or "").splitlines()[0]
    flags = ["/".join(flags_of(p)) for (command_name, _), p in SWITCHES.items() if command_name == name]
    switched = f"; {', '.join(flags)} is a flag here" if flags else ""
    command.__doc__ = (
        f"audiokit {name} over many inputs: {first}\n\n"
        f"Every option of 'audiokit {name}' works the same way but those naming one output file or printing to stdout "
        f"(batch names its outputs{switched}); "
        + (
            "the arrays go to a corpus store under --out (--store; default npy: one time-major (n_frames, n_feats) "
            ".npy per utterance, described once in DIR/store.json, indexed in DIR/index.sqlite)"
            if spec.run_member is not None and not spec.reports
            else f"outputs are named as {name} names them, under --out, mirroring the input tree"
            + (" (or, with --store npy|shards|kaldi|parquet, the arrays go to a corpus store)" if spec.run_member else "")
        )
        + ", with DIR/manifest.jsonl recording each input (re-run to resume)."
        + (
            "  The JSON reports go to DIR/results.jsonl, one line per input"
            + (" (in a corpus store: each manifest line's result)." if spec.run_member else ".")
            if spec.reports
            else ""
        )
        + "\n\nExit codes: 0 all done, 3 some inputs failed (or an input named does not exist), 2 usage (or an id of DIR "
        "already belongs to another input), 4 DIR cannot be written, 130/143 interrupted (re-run to resume)."
    )
    return command


def _store_params(spec: registry.JobSpec) -> list[inspect.Parameter]:
    """The store options of a job with arrays: ``--store`` defaults to npy, to files for a reporting job (``pitch``:
    its per-file outputs and ``results.jsonl`` unless a store is asked for)."""
    if not spec.reports:
        return STORE_PARAMS
    return [p.replace(default="files") if p.name == "store" else p for p in STORE_PARAMS]


batch_app = typer.Typer(
    name="batch",
    no_args_is_help=True,
    add_completion=False,
    help="Run a command over a corpus: resumable, failure-tolerant, on local processes or a Dask cluster.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
for _name in registry.batch_jobs():  # every job of the registry with a spec
    batch_app.command(_name)(batch_command(_name))

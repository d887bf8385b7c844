"""The options ``audiokit batch`` adds to a single-file command, and its progress line (:mod:`audiokit.cli.batch`)."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Optional

import typer

from ..batch.runner import BatchStats
from . import console

__all__ = ["BATCH_PANEL", "BATCH_PARAMS", "PNG_PARAM", "batch_option", "progress"]

BATCH_PANEL = "Batch"


def _option(annotation: Any, default: Any = inspect.Parameter.empty) -> Callable[[str], inspect.Parameter]:
    return lambda name: inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def batch_option(
    name: str, kind: Any, default: Any, *decls: str, help: str, panel: str = BATCH_PANEL, **extra: Any
) -> inspect.Parameter:
    return _option(Annotated[kind, typer.Option(*decls, help=help, rich_help_panel=panel, **extra)], default)(name)


#: The options ``audiokit batch`` adds to every subcommand.
BATCH_PARAMS = [
    _option(
        Annotated[
            Optional[list[str]],
            typer.Argument(
                metavar="INPUTS...",
                show_default=False,
                help="Audio files, folders (recursed), @list.txt (one path per line) or - (paths on stdin).",
            ),
        ],
        None,
    )("paths"),
    batch_option(
        "out",
        str,
        inspect.Parameter.empty,
        "--out",
        help="Output folder (created), or for a corpus store a prefix in object storage (s3://bucket/feats).",
    ),
    batch_option(
        "root",
        Optional[str],
        None,
        "--root",
        help="Folder the output tree is relative to (default: the common folder of the inputs).",
    ),
    batch_option(
        "glob",
        Optional[str],
        None,
        "--glob",
        help="File names to take in folders, e.g. '*.flac' (default: every extension soundfile reads).",
    ),
    batch_option(
        "segments",
        Optional[str],
        None,
        "--manifest",
        help='JSONL segments to run: {"id", "path", "start", "duration"} per line (seconds).',
    ),
    batch_option("force", bool, False, "--force", help="Recompute the inputs the manifest shows done."),
    batch_option(
        "verify",
        str,
        "head-tail",
        "--verify",
        help="How resume tells an input is unchanged: head-tail (size, mtime and a digest of its first and last 64 KiB; "
        "catches a same-size rewrite with its mtime restored unless only the middle changed), hash (every byte: "
        "catches any change, reads each input whole) or stat (size and mtime only).",
    ),
    batch_option("max_failures", Optional[int], None, "--max-failures", min=1, help="Stop after this many failed inputs."),
    batch_option(
        "jobs",
        Optional[int],
        None,
        "--jobs",
        "-j",
        min=1,
        help="Worker processes (default: the number of cores); 1 runs in this process.",
    ),
    batch_option(
        "chunk",
        Optional[int],
        None,
        "--chunk",
        min=1,
        help="Inputs per task (default: about 16 tasks per worker, at most 32 inputs).",
    ),
    batch_option(
        "scheduler",
        Optional[str],
        None,
        "--scheduler",
        help="Run on a Dask cluster, e.g. tcp://10.0.0.5:8786 (pip install 'audiokit[cluster]'; "
        "inputs and --out on storage the workers share).",
    ),
    batch_option("summary_json", bool, False, "--json", help="Print the summary as JSON on stdout."),
]
#: ``--png``, for the jobs that draw (``JobSpec.draws``).
PNG_PARAM = batch_option("png", bool, False, "--png", help="Also draw <id>.<kind>.png (slower).")


@contextlib.contextmanager
def progress() -> Iterator[Callable[[BatchStats], None]]:
    """``update(stats)``: a rich progress line on a terminal stderr (nothing otherwise or with --quiet)."""
    if not console.show_progress():
        yield lambda stats: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(
        TextColumn("batch {task.fields[command]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "{task.fields[failed]} failed  {task.fields[rate]:.1f} files/s  {task.fields[speed]:.2f} h audio/s  "
            "ETA {task.fields[eta]}"
        ),
        console=Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task("batch", total=None, command="", failed=0, rate=0.0, speed=0.0, eta="-")

        def update(stats: BatchStats) -> None:
            eta = stats.eta_seconds
            bar.update(
                task,
                total=stats.to_run,
                completed=stats.done,
                command=stats.command,
                failed=stats.failed,
                rate=stats.files_per_second,
                speed=stats.audio_hours_per_second,
                eta="-" if eta is None else f"{int(eta) // 60}:{int(eta) % 60:02d}",
            )

        yield update

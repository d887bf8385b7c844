"""The options ``audiokit batch`` adds to a single-file command, and its progress line (:mod:`audiokit.cli.batch`)."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Optional

import typer

from ..batch.runner import BatchStats
from . import console

__all__ = ["BATCH_PANEL", "BATCH_PARAMS", "PNG_PARAM", "STORE_PANEL", "STORE_PARAMS", "progress", "store_from"]

BATCH_PANEL = "Batch"
STORE_PANEL = "Corpus store"


def _option(annotation: Any, default: Any = inspect.Parameter.empty) -> Callable[[str], inspect.Parameter]:
    return lambda name: inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _batch_option(
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
    _batch_option("out", str, inspect.Parameter.empty, "--out", help="Output folder (created); outputs mirror the input tree."),
    _batch_option(
        "root",
        Optional[str],
        None,
        "--root",
        help="Folder the output tree is relative to (default: the common folder of the inputs).",
    ),
    _batch_option(
        "glob",
        Optional[str],
        None,
        "--glob",
        help="File names to take in folders, e.g. '*.flac' (default: every extension soundfile reads).",
    ),
    _batch_option(
        "segments",
        Optional[str],
        None,
        "--manifest",
        help='JSONL segments to run: {"id", "path", "start", "duration"} per line (seconds).',
    ),
    _batch_option("force", bool, False, "--force", help="Recompute the inputs the manifest shows done."),
    _batch_option("max_failures", Optional[int], None, "--max-failures", min=1, help="Stop after this many failed inputs."),
    _batch_option(
        "jobs",
        Optional[int],
        None,
        "--jobs",
        "-j",
        min=1,
        help="Worker processes (default: the number of cores); 1 runs in this process.",
    ),
    _batch_option(
        "chunk",
        Optional[int],
        None,
        "--chunk",
        min=1,
        help="Inputs per task (default: about 16 tasks per worker, at most 32 inputs).",
    ),
    _batch_option(
        "scheduler",
        Optional[str],
        None,
        "--scheduler",
        help="Run on a Dask cluster, e.g. tcp://10.0.0.5:8786 (pip install 'audiokit[cluster]'; "
        "inputs and --out on storage the workers share).",
    ),
    _batch_option("summary_json", bool, False, "--json", help="Print the summary as JSON on stdout."),
]
#: The corpus-store options, for the jobs whose output is one feature array per input (``JobSpec.run_member``).
STORE_PARAMS = [
    _batch_option(
        "store",
        str,
        "npy",
        "--store",
        help="Where the arrays go: npy (one time-major (n_frames, n_feats) .npy per utterance), shards (tar shards "
        "for WebDataset, HF datasets and Lhotse Shar), kaldi (ark + scp), parquet (HF datasets), or files (the "
        "single-file command's (rows, frames) .npy + sidecar, mirroring the input tree). See README 'Feed your trainer'.",
        panel=STORE_PANEL,
    ),
    _batch_option(
        "shard_size",
        str,
        "1GiB",
        "--shard-size",
        help="Target array bytes per shard/ark/parquet file (e.g. 1GiB, 200MB), or utterances per shard (e.g. 1000u).",
        panel=STORE_PANEL,
    ),
    _batch_option(
        "store_dtype",
        str,
        "float32",
        "--dtype",
        help="Stored values: float32 (the single-file values exactly) or float16 (lossy: relative error <= 2^-11, "
        "i.e. <= 0.06 dB on a 120 dB log-mel; absolute <= 2^-25 below 6.1e-5; values beyond 65504 are refused).",
        panel=STORE_PANEL,
    ),
    _batch_option(
        "compress",
        bool,
        False,
        "--compress",
        help="--store kaldi: Kaldi compressed matrices (kaldiio compression_method=2, ~1 byte per value; error "
        "<= (max - min)/126 of each utterance's matrix, see README).",
        panel=STORE_PANEL,
    ),
    _batch_option(
        "speaker_from",
        Optional[str],
        None,
        "--speaker-from",
        help="Speakers for utt2spk and the manifests: 'parent' (the input's folder name) or a regular expression "
        "searched in the id (group 'speaker', else group 1), e.g. '^(\\d+)-'.",
        panel=STORE_PANEL,
    ),
    _batch_option(
        "sr",
        Optional[str],
        None,
        "--sr",
        help="Resample every input to this rate on read (soxr, as 'audiokit resample'); without it, inputs at "
        "another rate than the store's fail.",
        panel=STORE_PANEL,
    ),
]


def store_from(params: dict[str, Any]) -> Any:
    """The :class:`~audiokit.batch.stores.StoreOptions` of a batch subcommand's values (``files`` without them)."""
    from ..batch.stores import StoreOptions
    from ..pipelines.params import rate_hz

    if "store" not in params:
        return StoreOptions(kind="files")
    return StoreOptions(
        kind=params["store"],
        dtype=params["store_dtype"],
        shard_size=params["shard_size"],
        compress=params["compress"],
        speaker_from=params["speaker_from"],
        sr=rate_hz("--sr", params["sr"]) if params["sr"] is not None else None,
    )


#: ``--png``, for the jobs that draw (``JobSpec.draws``).
PNG_PARAM = _batch_option("png", bool, False, "--png", help="Also draw <id>.<kind>.png (slower).")


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

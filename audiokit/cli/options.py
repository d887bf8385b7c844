"""Typer declarations of the options every command shares, and the CLI's side of the pipelines' plumbing."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Optional, TypeVar, cast

import typer

from ..errors import ParameterError
from ..io import is_stdio
from ..pipelines.params import InputOptions
from ..pipelines.progress import Reporter
from . import console
from .common import given_storage_options

RAW_PANEL = "Raw PCM input (headerless files or stdin)"
OUT_PANEL = "Output"

Json = Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")]
#: ``--json``/``--jsonl`` of the commands that report on each of several files (info, stats, silence, loudness;
#: printed by :func:`audiokit.cli.reports.report_each`).
JsonPerFile = Annotated[
    bool, typer.Option("--json", help="Print one JSON object per file on stdout (indented) instead of a table.")
]
JsonLinesPerFile = Annotated[bool, typer.Option("--jsonl", help="Print one JSON object per file, one per line (JSON Lines).")]
RawRate = Annotated[
    Optional[str],
    typer.Option("--rate", help="Sample rate of raw PCM input, e.g. 16000 or 16k.", rich_help_panel=RAW_PANEL),
]
RawFormatOpt = Annotated[
    Optional[str],
    typer.Option("--format", help="Raw PCM sample format: s16le, s24le, s32le, u8, f32le, f64le.", rich_help_panel=RAW_PANEL),
]
RawChannels = Annotated[
    Optional[int],
    typer.Option("--channels", help="Channel count of raw PCM input (default 1).", rich_help_panel=RAW_PANEL, min=1),
]
FixNonFinite = Annotated[
    bool, typer.Option("--fix-nonfinite", help="Replace NaN/Inf samples with 0 instead of refusing the file.")
]
#: The shared input options (what :func:`inputs_from` reads), as :func:`reads_audio` appends them to a command.
INPUT_OPTIONS = (
    inspect.Parameter("rate", inspect.Parameter.KEYWORD_ONLY, annotation=RawRate, default=None),
    inspect.Parameter("fmt", inspect.Parameter.KEYWORD_ONLY, annotation=RawFormatOpt, default=None),
    inspect.Parameter("channels", inspect.Parameter.KEYWORD_ONLY, annotation=RawChannels, default=None),
    inspect.Parameter("fix_nonfinite", inspect.Parameter.KEYWORD_ONLY, annotation=FixNonFinite, default=False),
)
Command = TypeVar("Command", bound=Callable[..., Any])


def reads_audio(command: Command) -> Command:
    """``command`` declaring the shared input options (:data:`INPUT_OPTIONS`: ``--rate``, ``--format``,
    ``--channels`` of raw PCM and ``--fix-nonfinite``) after its own parameters, as every command that reads audio
    lists them.

    ``command`` takes them as ``**raw`` (its only variadic parameter) and hands that to :func:`inputs_from`; its
    signature, what Typer and ``audiokit batch`` read, names them one by one instead.
    """
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    if len(own) != len(signature.parameters) - 1:
        raise TypeError(f"{command.__name__} must take the input options as **raw")
    parameters = [*own, *INPUT_OPTIONS]
    cast(Any, command).__signature__ = signature.replace(parameters=parameters)  # read by Typer and audiokit batch
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": signature.return_annotation}
    return command


Channel = Annotated[
    Optional[int],
    typer.Option(
        "--channel",
        min=0,
        help="Analyse only this channel (0-based: 0 is the first); not with --mix.",
    ),
]


def inputs_from(params: Mapping[str, Any]) -> InputOptions:
    """The pipelines' :class:`InputOptions` from a command's raw-PCM and NaN parameters (``rate``, ``fmt``,
    ``channels``, ``fix_nonfinite``) and the run's ``--storage-option`` values (:mod:`.common`) over
    ``AUDIOKIT_STORAGE_OPTIONS`` (ParameterError for a malformed one)."""
    from ..io.remote import parse_storage_options, storage_options

    return InputOptions(
        rate=params["rate"],
        format=params["fmt"],
        channels=params["channels"],
        fix_nonfinite=params["fix_nonfinite"],
        storage_options=storage_options(parse_storage_options(given_storage_options())),
    )


def reporter() -> Reporter:
    """Progress bars and notices on stderr (configured by :func:`console.configure`)."""
    return Reporter(progress=console.progress, info=console.info)


def refuse_terminal(path: str | None, what: str) -> None:
    """Refuse to write binary ``what`` (``WAV``, ``PNG``) to a terminal when ``path`` is ``-``."""
    if is_stdio(path) and sys.stdout.isatty():
        raise ParameterError(f"refusing to write {what} bytes to a terminal: give -o PATH or pipe the output")


def print_paths(paths: list[str], *, to_stderr: bool = False) -> None:
    """Print written paths: on stdout (data), or as ``wrote PATH`` notices when stdout carries file bytes."""
    for path in paths:
        if to_stderr:
            console.info(f"wrote {path}")
        else:
            print(path)

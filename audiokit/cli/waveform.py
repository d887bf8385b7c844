"""``audiokit waveform``: the min/max envelope per pixel column as a PNG (the job: :mod:`audiokit.pipelines.waveform`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..errors import ParameterError
from ..pipelines.waveform import WaveformOptions, check_options, waveform_file
from . import console
from .options import OUT_PANEL, Channel, Json, inputs_from, print_paths, reads_audio, refuse_terminal, reporter
from .stft_options import Size


def options_from(params: Mapping[str, Any]) -> WaveformOptions:
    """The pipeline options from the parameter values of :func:`waveform_command` (also ``audiokit batch waveform``)."""
    names = ("start", "dur", "scale", "size", "channel")
    return WaveformOptions(**{name: params[name] for name in names})


def _print_table(report: dict) -> None:
    head = (
        f"{report['path']}: {report['sr']} Hz, {report['channels']} ch, {report['subtype']}, "
        f"{report['duration_s']:.6g} s from {report['start_s']:.6g} s, {report['columns']} columns"
    )
    rows = [
        [
            str(level["channel"]),
            f"{level['min']:.6g}",
            f"{level['max']:.6g}",
            "-" if level["peak_dbfs"] is None else f"{level['peak_dbfs']:.2f}",
            str(level["clipped"]),
            str(level["clipped_columns"]),
        ]
        for level in report["levels"]
    ]
    console.print_table(head, ["channel", "min", "max", "peak dBFS", "clipped", "clipped columns"], rows)


@reads_audio
def waveform_command(
    file: Annotated[str, typer.Argument(help="Audio file (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="PNG of the waveform (- for stdout).", rich_help_panel=OUT_PANEL),
    ] = None,
    start: Annotated[str, typer.Option("--start", help="Segment start: 1.5s, 200ms or samples.")] = "0",
    dur: Annotated[Optional[str], typer.Option("--dur", help="Segment length (default: to the end).")] = None,
    scale: Annotated[
        str,
        typer.Option(
            "--scale",
            help="Amplitude axis: linear (1 = full scale) or dbfs (0 dBFS at the edges, -60 dBFS on the centre line).",
            rich_help_panel=OUT_PANEL,
        ),
    ] = "linear",
    size: Size = "1200x500",
    channel: Channel = None,
    json_out: Json = False,
    **raw: Any,
) -> int:
    """Waveform PNG: the min/max envelope per pixel column of each channel, clipped samples in red.

    One pass in blocks, whatever the length (a 4 h file in a few tens of MiB).  One panel per channel within
    exactly --size; the time axis covers the file (or --start/--dur) in s; the title names the file, rate,
    channels and subtype.  A sample is clipped when |x| reaches the full scale of the subtype (1 - 2^-(B-1)
    for B-bit PCM, 1.0 for float), as info counts.  The table (or --json) gives each channel's min, max,
    peak and clipped count.

    Example:

        audiokit waveform examples/data/speech.wav -o speech.waveform.png

        audiokit waveform long.flac --start 60s --dur 10s --scale dbfs -o minute1.png --json
    """
    params = dict(locals())
    if json_out and output == "-":
        raise ParameterError("--json and -o - both write to stdout; choose one")
    refuse_terminal(output, "PNG")
    options = options_from(params)
    check_options(options)
    report = waveform_file(file, options, png=output, inputs=inputs_from(raw), reporter=reporter()).report or {}
    written = [output] if output not in (None, "-") else []
    if json_out:
        print(json.dumps(report, indent=2))
    elif output == "-":
        print_paths(written, to_stderr=True)
    else:
        _print_table(report)
        print_paths(written)
    return 0

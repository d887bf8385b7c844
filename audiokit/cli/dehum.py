"""``audiokit dehum``: remove mains hum (the job and its conventions: :mod:`audiokit.pipelines.dehum`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..dsp.hum import DEFAULT_THRESHOLD_DB, ERASE_WINDOW_SECONDS
from ..errors import ParameterError
from ..io import is_stdio
from ..pipelines.dehum import DehumOptions, dehum_file
from . import console
from .options import OUT_PANEL, inputs_from, print_paths, reads_audio, refuse_terminal, reporter

HUM_PANEL = "Hum"
ERASE_PANEL = "--method erase"


def options_from(params: Mapping[str, Any]) -> DehumOptions:
    """The pipeline options from the parameter values of :func:`dehum_command` (also ``audiokit batch``)."""
    p = params
    return DehumOptions(
        freq=p["freq"],
        method=p["method"],
        harmonics=p["harmonics"],
        threshold=p["threshold"],
        width=p["width"],
        win=p["win"],
        subtype=p["subtype"],
        normalize=p["normalize"],
    )


@reads_audio
def dehum_command(
    file: Annotated[str, typer.Argument(help="Audio file (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    freq: Annotated[
        str,
        typer.Option(
            "--freq",
            help="Mains frequency: 50, 60 or any frequency in Hz (the estimate is searched within ±1 %), or auto (tries 50 and 60).",
            rich_help_panel=HUM_PANEL,
        ),
    ] = "auto",
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="subtract (model the hum and subtract it) or erase (zero its STFT bins, overlap-add).",
            rich_help_panel=HUM_PANEL,
        ),
    ] = "subtract",
    harmonics: Annotated[
        Optional[int],
        typer.Option(
            "--harmonics",
            min=1,
            help="Highest harmonic considered (default 40, below Nyquist); only those detected are treated.",
            rich_help_panel=HUM_PANEL,
        ),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            help="Detection threshold in dB: a harmonic is treated when its fitted power exceeds what the local noise alone would give by this much.",
            rich_help_panel=HUM_PANEL,
        ),
    ] = DEFAULT_THRESHOLD_DB,
    width: Annotated[
        Optional[str],
        typer.Option(
            "--width",
            help="Band erased around each line, e.g. 4 or 4Hz (default: the window's main lobe, 4/WIN Hz) plus the drift within a frame.",
            rich_help_panel=ERASE_PANEL,
        ),
    ] = None,
    win: Annotated[
        Optional[str],
        typer.Option(
            "--win",
            help=f"STFT window, e.g. 1s, 2s or samples (default {ERASE_WINDOW_SECONDS:g}s; at least 4 periods of the hum).",
            rich_help_panel=ERASE_PANEL,
        ),
    ] = None,
    output: Annotated[
        Optional[str],
        typer.Option(
            "-o",
            "--output",
            help="WAV file to write, or - for stdout.  Default: <stem>.dehum.wav beside the input.",
            rich_help_panel=OUT_PANEL,
        ),
    ] = None,
    residual: Annotated[
        Optional[str],
        typer.Option("--residual", help="Also write what was removed (input - output) to this WAV.", rich_help_panel=OUT_PANEL),
    ] = None,
    subtype: Annotated[
        Optional[str],
        typer.Option(
            "--subtype",
            help="Output PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE.  Default: as the input.",
            rich_help_panel=OUT_PANEL,
        ),
    ] = None,
    normalize: Annotated[
        bool,
        typer.Option(
            "--normalize",
            help="If the output would exceed full scale, scale it down to fit (one more pass).",
            rich_help_panel=OUT_PANEL,
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a JSON report on stdout (it holds the written paths) instead of the paths.")
    ] = False,
    **raw: Any,
) -> int:
    """Remove mains hum (50/60 Hz and harmonics) and write the cleaned WAV.

    The fundamental is estimated to about 0.01 Hz and tracked as it drifts;
    each harmonic's amplitude and phase are fitted over seconds (weighted
    towards frames where nothing else sits on the line) and, with the
    default --method subtract, the modelled hum is subtracted sample by
    sample.  Harmonics that do not stand --threshold dB above their local
    noise are left alone, so clean audio passes through untouched.
    --method erase zeroes the hum's bins of a 1 s STFT and overlap-adds
    (simpler, but it also cuts whatever the signal has in those bins).

    Prints the written path(s) on stdout (output, then --residual); with
    --json one JSON report (estimated f0 and, per harmonic, the level before
    and after, the local floor and whether it was treated).

    Memory: the input is read in blocks (4 passes, 5 with --normalize) and
    wide inputs are handled 8-16 channels at a time; the whole-file
    analysis (40 harmonics measured 12 times a second, ~65 MB per hour per
    channel) is kept in temporary files in TMPDIR, read a few rows at a
    time: the peak stays near 170-185 MiB (30 min to 4 h of mono).

    Example:

        audiokit dehum rec.wav --freq 50

        audiokit dehum rec.wav --freq auto --residual hum.wav --json
    """
    params = dict(locals())
    options = options_from(params)
    if is_stdio(output) and json_out:
        raise ParameterError("--json and -o - both write to stdout: give -o PATH with --json")
    refuse_terminal(output, "WAV")
    result = dehum_file(file, output, options, residual=residual, inputs=inputs_from(raw), reporter=reporter())
    console.info(result.summary)
    if json_out:
        print(json.dumps(result.report, indent=2))
    elif not is_stdio(result.output):
        print_paths([p for p in (result.output, result.residual) if p is not None])
    return 0

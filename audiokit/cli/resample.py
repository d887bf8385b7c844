"""``audiokit resample``: sample-rate conversion of a file (the job: :mod:`audiokit.pipelines.resample`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.resample import ResampleOptions, resample_file
from .options import inputs_from, print_paths, reads_audio, refuse_terminal, reporter


def options_from(params: Mapping[str, Any]) -> ResampleOptions:
    """The pipeline options from the parameter values of :func:`resample_command` (also ``audiokit batch``)."""
    p = params
    return ResampleOptions(
        to=p["to"], quality=p["quality"], no_filter=p["no_filter"], normalize=p["normalize"], subtype=p["subtype"]
    )


@reads_audio
def resample_command(
    file: Annotated[str, typer.Argument(help="Audio file (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    to: Annotated[str, typer.Option("--to", help="Target sample rate: 16000, 16k, 44.1kHz.")],
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="WAV file to write, or - for stdout.  Default: <stem>.<rate>.wav beside the input."),
    ] = None,
    quality: Annotated[
        Optional[str],
        typer.Option("--quality", help="Filter: very-high, high (default), medium, low, quick (soxr recipes)."),
    ] = None,
    no_filter: Annotated[
        bool,
        typer.Option("--no-filter", help="No anti-alias filter: pick the nearest input sample (shows aliasing)."),
    ] = False,
    normalize: Annotated[
        bool,
        typer.Option("--normalize", help="If the output would exceed full scale, scale it down to fit (reads the input twice)."),
    ] = False,
    subtype: Annotated[
        Optional[str],
        typer.Option("--subtype", help="Output PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE.  Default: as the input."),
    ] = None,
    **raw: Any,
) -> int:
    """Convert the sample rate (band-limited, or naive with --no-filter) and write WAV.

    The output has floor(n * sr_out / sr_in + 1/2) samples and starts at the same
    instant as the input (filter delay compensated).  --quality picks the soxr
    filter: high (default) keeps aliases 120 dB down and the passband within
    0.01 dB up to 0.9 x the lower Nyquist; very-high buys ~45 dB more.
    --no-filter picks the nearest input sample instead: a 9 kHz tone taken from
    48 kHz to 16 kHz comes out at 7 kHz.

    A result beyond full scale is reported (peak dBFS, count) and kept in FLOAT
    output, clipped in PCM output; --normalize scales it down instead.  The
    written path is printed on stdout (nothing with -o -).

    Example:

        audiokit resample examples/data/speech.wav --to 8k

        audiokit generate "sine:9k" --rate 48k | audiokit resample - --to 16k --no-filter -o alias.wav
    """
    params = dict(locals())
    refuse_terminal(output, "WAV")
    result = resample_file(file, output, options_from(params), inputs=inputs_from(raw), reporter=reporter())
    print_paths([result.output] if result.output != "-" else [])
    return 0

"""``audiokit quantize``: requantize a file to B bits (dither, noise shaping) and measure the error.

The job and its measures: :mod:`audiokit.pipelines.quantize`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..dsp.quantize import MAX_BITS, MIN_BITS
from ..errors import ParameterError
from ..pipelines.quantize import QuantizeOptions, quantize_file
from . import console
from .options import inputs_from, print_paths, reads_audio, refuse_terminal, reporter


def options_from(params: Mapping[str, Any]) -> QuantizeOptions:
    """The (checked) pipeline options from the parameter values of :func:`quantize_command` (also ``audiokit batch``)."""
    p = params
    options = QuantizeOptions(
        bits=p["bits"], dither=p["dither"], noise_shape=p["noise_shape"], seed=p["seed"], subtype=p["subtype"]
    )
    options.check()
    return options


@reads_audio
def quantize_command(
    file: Annotated[str, typer.Argument(help="Audio file (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    bits: Annotated[int, typer.Option("--bits", help=f"Bit depth B, {MIN_BITS}..{MAX_BITS}: step 2^-(B-1) of full scale.")],
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="WAV file to write, or - for stdout.  Default: <stem>.<B>bit.wav beside the input."),
    ] = None,
    dither: Annotated[str, typer.Option("--dither", help="Dither added before rounding: tpdf, rpdf or none.")] = "tpdf",
    noise_shape: Annotated[
        str, typer.Option("--noise-shape", help="Noise shaping: none, or first (first-order error feedback, 1 - z^-1).")
    ] = "none",
    seed: Annotated[int, typer.Option("--seed", help="Dither seed (>= 0): the same seed gives the same output.")] = 0,
    subtype: Annotated[
        Optional[str],
        typer.Option(
            "--subtype",
            help="Output PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE (must hold B bits).  "
            "Default: the smallest PCM that holds B bits.",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the settings and measures (SQNR, noise floor, clipped) as JSON on stdout.")
    ] = False,
    **raw: Any,
) -> int:
    """Requantize to B bits on the mid-tread grid k / 2^(B-1) and report the SQNR.

    Values are rounded to the nearest level (ties up) after the dither (TPDF
    by default) and optional first-order noise shaping; samples outside
    [-1, 1 - 2^-(B-1)] are clipped and counted.  The WAV holds exactly the B-bit
    values: by default PCM_U8 for B <= 8, PCM_16 for B <= 16, PCM_24 above.

    SQNR = 10 log10(sum x^2 / sum (y - x)^2) over the whole file (x input,
    y output); undithered, a full-scale sine reads about 6.02 B + 1.76 dB.
    The summary goes to stderr, or with --json to stdout as data; the written
    path is printed on stdout (nothing with -o -).

    Example:

        audiokit quantize examples/data/speech.wav --bits 8 --dither none

        audiokit quantize tone.wav --bits 4 --noise-shape first --json -o tone4.wav
    """
    params = dict(locals())
    options = options_from(params)
    if json_out and output == "-":
        raise ParameterError("--json and -o - would both write to stdout; give -o PATH with --json")
    refuse_terminal(output, "WAV")
    result = quantize_file(file, output, options, inputs=inputs_from(raw), reporter=reporter())
    if json_out:
        print(json.dumps(result.report, indent=2))
        return 0
    console.info(result.summary())
    print_paths([result.output] if result.output != "-" else [])
    return 0

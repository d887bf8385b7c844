"""``audiokit generate``: test and example signals as WAV."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ..errors import ParameterError
from ..io import WavWriter, check_output_path, resolve_subtype
from ..units import parse_rate
from . import console
from .options import Debug, Quiet, duration_option, option_error

BLOCK_FRAMES = 1 << 16


def generate_command(
    spec: Annotated[str, typer.Argument(help="Signal spec: components joined by '+', e.g. 'sine:440 + hum:50'.")],
    output: Annotated[Optional[str], typer.Option("-o", "--output", help="WAV file to write; - or absent: stdout.")] = None,
    dur: Annotated[str, typer.Option("--dur", help="Duration: 2s, 500ms, or a whole number of samples.")] = "1s",
    rate: Annotated[str, typer.Option("--rate", help="Sample rate in Hz, e.g. 16000, 16k, 44.1kHz.")] = "16000",
    seed: Annotated[int, typer.Option("--seed", help="Seed for the noise components (same seed, same noise).")] = 0,
    channels: Annotated[int, typer.Option("--channels", min=1, max=256, help="Channel count (noise independent per channel).")] = 1,
    subtype: Annotated[str, typer.Option("--subtype", help="PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE.")] = "FLOAT",
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Generate a test signal and write it as WAV (to -o PATH, or stdout).

    Components (FREQ accepts 440, 440Hz, 1.5kHz; AMP is linear, 1.0 = full scale):
    sine:FREQ[:AMP[:PHASE]], square:FREQ[:AMP], chirp:F0:F1[:AMP] (linear),
    logchirp:F0:F1[:AMP], noise[:AMP] (white), pink[:AMP], hum:FREQ[:AMP[:HARMONICS]],
    silence, impulse[:AT], dc:AMP.  Mix them with '+'.

    The default subtype FLOAT stores every value exactly, even beyond full
    scale; PCM subtypes clip such samples with a warning.

    Example:

        audiokit generate "sine:440 + hum:50" --dur 2s -o tone.wav

        audiokit generate "chirp:200:3600" --rate 8k --dur 2s | audiokit info -
    """
    from ..dsp.generate import generate_blocks, parse_spec

    console.configure(quiet=quiet)
    try:
        sr = parse_rate(rate)
    except ParameterError as exc:
        raise option_error("--rate", exc) from None
    n_samples = duration_option("--dur", dur, sr)
    kind = resolve_subtype(subtype)
    parse_spec(spec)
    target = output if output is not None else "-"
    if target == "-" and sys.stdout.isatty():
        raise ParameterError("refusing to write WAV bytes to a terminal: give -o PATH or pipe the output")
    check_output_path(target)
    blocks = generate_blocks(spec, n_samples=n_samples, sr=sr, channels=channels, seed=seed, block_size=BLOCK_FRAMES)
    with WavWriter(target, sr=sr, channels=channels, subtype=kind, expected_frames=n_samples) as writer:
        for block in blocks:
            writer.write(block)
    if target != "-":
        print(target)
    return 0

"""``audiokit generate``: test and example signals as WAV."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..pipelines.generate import GenerateOptions, generate
from .options import print_paths, refuse_terminal


def generate_command(
    spec: Annotated[str, typer.Argument(help="Signal spec: components joined by '+', e.g. 'sine:440 + hum:50'.")],
    output: Annotated[Optional[str], typer.Option("-o", "--output", help="WAV file to write; - or absent: stdout.")] = None,
    dur: Annotated[str, typer.Option("--dur", help="Duration: 2s, 500ms, or a whole number of samples.")] = "1s",
    rate: Annotated[str, typer.Option("--rate", help="Sample rate in Hz, e.g. 16000, 16k, 44.1kHz.")] = "16000",
    seed: Annotated[int, typer.Option("--seed", help="Seed for the noise components (same seed, same noise).")] = 0,
    channels: Annotated[
        int, typer.Option("--channels", min=1, max=256, help="Channel count (noise independent per channel).")
    ] = 1,
    subtype: Annotated[
        Optional[str],
        typer.Option("--subtype", help="PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE.  Default: FLOAT (.flac: PCM_24)."),
    ] = None,
) -> int:
    """Generate a test signal and write it as WAV (to -o PATH, or stdout).

    Components, mixed with '+' (FREQ: 440, 440Hz, 1.5kHz):
    sine:FREQ[:AMP[:PHASE]], square:FREQ[:AMP], chirp:F0:F1[:AMP] (linear sweep),
    logchirp:F0:F1[:AMP], noise[:AMP] (white), pink[:AMP], hum:FREQ[:AMP[:HARMONICS]]
    (harmonic k at AMP/k), silence, impulse[:AT], dc:AMP.

    AMP is linear full scale (1.0 = 0 dBFS) or a level such as -6dB: the peak for
    tones (default 0.5, -6 dBFS), the RMS for noise and pink (default 0.1, -20 dBFS),
    the fundamental's peak for hum (default 0.1, 5 harmonics).  PHASE is in radians
    (1.5708) or degrees with a deg suffix (90deg).  AT is a time (0.5s) or samples.

    The default subtype FLOAT stores every value exactly, even beyond full
    scale; PCM subtypes clip such samples with a warning.

    Example:

        audiokit generate "sine:440 + hum:50" --dur 2s -o tone.wav

        audiokit generate "chirp:200:3600" --rate 8k --dur 2s | audiokit info -
    """
    target = output if output is not None else "-"
    refuse_terminal(target, "WAV")
    options = GenerateOptions(dur=dur, rate=rate, seed=seed, channels=channels, subtype=subtype)
    result = generate(spec, target, options)
    print_paths([result.output] if result.output != "-" else [])
    return 0

"""``audiokit istft``: rebuild a waveform from ``spectrogram --complex`` output."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..pipelines.istft import IstftOptions, istft_file
from .options import print_paths, refuse_terminal, reporter


def istft_command(
    spec_path: Annotated[
        str, typer.Argument(metavar="SPEC.npy", help="Complex STFT saved by 'audiokit spectrogram --complex --npy'.")
    ],
    output: Annotated[
        Optional[str], typer.Option("-o", "--output", help="WAV to write (- for stdout). Default: <SPEC>.istft.wav.")
    ] = None,
    subtype: Annotated[
        Optional[str], typer.Option("--subtype", help="PCM_16, PCM_24, PCM_32, PCM_U8, FLOAT, DOUBLE (default: the source's).")
    ] = None,
    fix_nonfinite: Annotated[
        bool, typer.Option("--fix-nonfinite", help="Replace NaN/Inf values of the STFT with 0 instead of refusing it.")
    ] = False,
) -> int:
    """Inverse STFT by weighted overlap-add, exact wherever the window sum is nonzero.

    Reads the sidecar (SPEC.json) for sr, window, hop, n_fft, centring and the
    original length.  Uncentred framing cannot bring back the samples no frame
    covers (after the last frame; sample 0 under a periodic Hann window):
    they come out as 0; and the first and last hop, seen by one frame through
    small window values, come back with amplified rounding errors (up to full
    scale next to the ends with a float32 STFT) — use 'spectrogram --center'
    for a full-length round trip.

    Example:

        audiokit spectrogram speech.wav --center --complex --npy spec.npy

        audiokit istft spec.npy -o speech.rebuilt.wav
    """
    refuse_terminal(output, "WAV")
    result = istft_file(spec_path, output, IstftOptions(subtype=subtype, fix_nonfinite=fix_nonfinite), reporter=reporter())
    print_paths([result.output] if result.output != "-" else [])
    return 0

"""``audiokit griffinlim``: rebuild a waveform from a magnitude, power, dB or mel spectrogram (no phase).

The job: :mod:`audiokit.pipelines.griffinlim`; the algorithm: :mod:`audiokit.dsp.griffinlim`.
"""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from ..errors import ParameterError
from ..pipelines.griffinlim import GriffinLimOptions, griffinlim_file
from . import console
from .options import print_paths, refuse_terminal, reporter


def griffinlim_command(
    spec_path: Annotated[
        str, typer.Argument(metavar="SPEC.npy", help="Spectrogram saved by 'audiokit spectrogram --npy' or 'audiokit mel --npy'.")
    ],
    output: Annotated[
        Optional[str], typer.Option("-o", "--output", help="WAV to write (- for stdout). Default: <SPEC>.griffinlim.wav.")
    ] = None,
    iters: Annotated[int, typer.Option("--iters", help="Griffin-Lim iterations (0 to 10000).")] = 32,
    momentum: Annotated[
        float, typer.Option("--momentum", help="Fast Griffin-Lim momentum: 0.99 (default), 0 for the original algorithm.")
    ] = 0.99,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the random initial phase: the same seed gives the same output.")
    ] = 0,
    init: Annotated[str, typer.Option("--init", help="Initial phase: random (uniform, seeded) or zeros.")] = "random",
    mel_inverse: Annotated[
        str,
        typer.Option(
            "--mel-inverse", help="Undo a mel filter bank by pinv (pseudo-inverse) or nnls (non-negative least squares)."
        ),
    ] = "pinv",
    subtype: Annotated[
        Optional[str], typer.Option("--subtype", help="PCM_16, PCM_24, PCM_32, PCM_U8, FLOAT, DOUBLE (default: the source's).")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the settings and the spectral convergence of every iteration as JSON on stdout.")
    ] = False,
) -> int:
    """Rebuild audio from a magnitude, power, dB or mel spectrogram by fast Griffin-Lim.

    Reads the sidecar (SPEC.json) for sr, window, hop, n_fft, centring, the
    saved scale and the original length; undoes the scale (dB and ln values
    back to power, power to magnitude; a mel bank by its pseudo-inverse or
    NNLS), then iterates x = istft(S * phase), phase = phase of stft(x) with
    momentum 0.99 (librosa.griffinlim's algorithm and seeding).  Values
    clipped by --top-db when saved cannot be recovered below the clip.  A
    complex STFT has its phase: use 'audiokit istft' instead.

    Spectral convergence ||S - |STFT(x)| ||_F / ||S||_F is reported per
    iteration with --json (on stderr: first and last).

    Example:

        audiokit spectrogram speech.wav --center --scale magnitude --npy mag.npy

        audiokit griffinlim mag.npy --iters 64 -o speech.gl.wav --json
    """
    if json_out and output == "-":
        raise ParameterError("--json and -o - would both write to stdout; give -o PATH with --json")
    refuse_terminal(output, "WAV")
    options = GriffinLimOptions(n_iter=iters, momentum=momentum, seed=seed, init=init, mel_inverse=mel_inverse, subtype=subtype)
    result = griffinlim_file(spec_path, output, options, reporter=reporter())
    if json_out:
        print(json.dumps(result.report(), indent=2))
        return 0
    console.info(result.summary())
    print_paths([result.output] if result.output != "-" else [])
    return 0

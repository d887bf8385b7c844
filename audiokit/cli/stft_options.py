"""Typer declarations of the options shared by ``spectrogram``, ``mel``, ``mfcc`` and ``spectrum`` (no logic).

The options a ``--compat`` preset sets (``--win``, ``--hop``, ``--ref``, ``--top-db``, ...) are declared unset in
:mod:`.feature_options`; their values come from :mod:`audiokit.defaults` through :mod:`audiokit.pipelines.compat`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.timefreq import StftOptions
from .options import OUT_PANEL

STFT_PANEL = "STFT"

Window = Annotated[
    str,
    typer.Option(
        "--window",
        help="hann, hamming, blackman, kaiser:BETA, rectangular, blackmanharris, nuttall, flattop, bartlett.",
        rich_help_panel=STFT_PANEL,
    ),
]
Symmetric = Annotated[
    bool, typer.Option("--symmetric", help="Symmetric window instead of the periodic (DFT-even) one.", rich_help_panel=STFT_PANEL)
]
Fft = Annotated[
    Optional[str],
    typer.Option("--fft", help="FFT backend: fftw, scipy or numpy (default: AUDIOKIT_FFT or fftw).", rich_help_panel=STFT_PANEL),
]
Mix = Annotated[bool, typer.Option("--mix", help="Average the channels into one before the transform.")]
Output = Annotated[
    Optional[str],
    typer.Option(
        "-o",
        "--output",
        help="PNG to write (- for stdout). Default: <input>.<kind>.png beside the input, unless only --npy is given.",
        rich_help_panel=OUT_PANEL,
    ),
]
Npy = Annotated[
    Optional[str],
    typer.Option("--npy", help="Save the full-resolution array as float32 .npy plus a JSON sidecar.", rich_help_panel=OUT_PANEL),
]
Layout = Annotated[
    str,
    typer.Option(
        "--layout",
        help="--npy axes: rows = (n_rows, n_frames), audiokit's order; frames = (n_frames, n_rows), the time-major order "
        "of Kaldi, Lhotse and PyTorch (the same bytes; the sidecar says which).",
        rich_help_panel=OUT_PANEL,
    ),
]
Cmap = Annotated[str, typer.Option("--cmap", help="matplotlib colormap of the PNG.", rich_help_panel=OUT_PANEL)]
Size = Annotated[
    str, typer.Option("--size", help="PNG size in pixels, WIDTHxHEIGHT, whatever the channel count.", rich_help_panel=OUT_PANEL)
]
Vmin = Annotated[
    Optional[float],
    typer.Option(
        "--vmin",
        help="PNG colour range bottom, in the colorbar's unit (dB re --ref; unset --ref: re 1, absolute), so a "
        "series of PNGs made with one --vmin/--vmax maps equal values to equal colours [the picture's own range].",
        rich_help_panel=OUT_PANEL,
    ),
]
Vmax = Annotated[Optional[float], typer.Option("--vmax", help="PNG colour range top (see --vmin).", rich_help_panel=OUT_PANEL)]


def stft_options_from(params: Mapping[str, Any]) -> StftOptions:
    """The :class:`StftOptions` from a command's parameter values (``win``, ``hop``, ``nfft``, ...)."""
    return StftOptions(
        win=params["win"],
        hop=params["hop"],
        nfft=params["nfft"],
        window=params["window"],
        symmetric=params["symmetric"],
        center=params["center"],
        pad_mode=params["pad_mode"],
        fft=params["fft"],
    )

"""Typer declarations of the options shared by ``spectrogram``, ``mel`` and ``spectrum`` (no logic)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.timefreq import StftOptions

STFT_PANEL = "STFT"
OUT_PANEL = "Output"

Win = Annotated[str, typer.Option("--win", help="Window length: 25ms, 0.025s or samples.", rich_help_panel=STFT_PANEL)]
Hop = Annotated[str, typer.Option("--hop", help="Hop between frame starts: 10ms or samples.", rich_help_panel=STFT_PANEL)]
Nfft = Annotated[
    Optional[str],
    typer.Option(
        "--nfft", help="FFT size >= window length (zero padding); default: the window length.", rich_help_panel=STFT_PANEL
    ),
]
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
Center = Annotated[
    bool,
    typer.Option(
        "--center",
        help="Pad n_fft/2 on each side so frame m is centred on m*hop (librosa/torchaudio framing).",
        rich_help_panel=STFT_PANEL,
    ),
]
PadMode = Annotated[
    str, typer.Option("--pad-mode", help="Padding for --center: constant (zeros) or reflect.", rich_help_panel=STFT_PANEL)
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
Scale = Annotated[
    str, typer.Option("--scale", help="Values saved in --npy: db, power (|X|^2) or magnitude (|X|).", rich_help_panel=OUT_PANEL)
]
Ref = Annotated[
    str, typer.Option("--ref", help="dB reference: max (0 dB = loudest cell) or 1 (absolute).", rich_help_panel=OUT_PANEL)
]
TopDb = Annotated[
    float,
    typer.Option("--top-db", help="Clip dB values below (max - TOP_DB); 0 disables the clip.", min=0, rich_help_panel=OUT_PANEL),
]
Cmap = Annotated[str, typer.Option("--cmap", help="matplotlib colormap of the PNG.", rich_help_panel=OUT_PANEL)]
Size = Annotated[str, typer.Option("--size", help="PNG size in pixels, WIDTHxHEIGHT.", rich_help_panel=OUT_PANEL)]


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

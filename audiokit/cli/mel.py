"""``audiokit mel``: log-mel spectrogram (and the filter bank itself) as PNG and .npy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.timefreq import MelOptions, TimeFreqOptions, filterbank_job, timefreq
from . import console
from .options import (
    Debug, FixNonFinite, Quiet, RawChannels, RawFormatOpt, RawRate, inputs_from, print_paths, refuse_terminal, reporter,
)
from .stft_options import (
    Center, Cmap, Fft, Hop, Mix, Npy, Nfft, Output, PadMode, Ref, Scale, Size, Symmetric, TopDb, Win, Window,
    stft_options_from,
)

MEL_PANEL = "Mel"


def options_from(params: Mapping[str, Any]) -> TimeFreqOptions:
    """The pipeline options from the parameter values of :func:`mel_command` (also ``audiokit batch mel``)."""
    p = params
    return TimeFreqOptions(
        stft=stft_options_from(p),
        mel=MelOptions(n_mels=p["n_mels"], mel_scale=p["mel_scale"], norm=p["norm"], log=p["log"]).checked(),
        fmin=p["fmin"], fmax=p["fmax"], mix=p["mix"], scale=p["scale"], ref=p["ref"], top_db=p["top_db"],
        cmap=p["cmap"], size=p["size"],
    )


def mel_command(
    file: Annotated[str, typer.Argument(help="Audio file, or - for stdin.")],
    win: Win = "25ms",
    hop: Hop = "10ms",
    nfft: Nfft = None,
    window: Window = "hann",
    symmetric: Symmetric = False,
    center: Center = False,
    pad_mode: PadMode = "constant",
    n_mels: Annotated[int, typer.Option("--n-mels", min=1, max=1024, help="Number of mel bands.", rich_help_panel=MEL_PANEL)] = 80,
    fmin: Annotated[Optional[str], typer.Option("--fmin", help="Lowest filter edge (Hz).", rich_help_panel=MEL_PANEL)] = None,
    fmax: Annotated[Optional[str], typer.Option("--fmax", help="Highest filter edge (Hz), default sr/2.", rich_help_panel=MEL_PANEL)] = None,
    mel_scale: Annotated[str, typer.Option("--mel-scale", help="htk: 2595*log10(1+f/700); slaney: linear below 1 kHz, log above.", rich_help_panel=MEL_PANEL)] = "htk",
    norm: Annotated[str, typer.Option("--norm", help="none: triangles peak at 1; slaney: each triangle has unit area (2/width).", rich_help_panel=MEL_PANEL)] = "none",
    log: Annotated[str, typer.Option("--log", help="With --scale db: db (10*log10) or ln (natural log, floored at 1e-10).", rich_help_panel=MEL_PANEL)] = "db",
    filterbank: Annotated[bool, typer.Option("--filterbank", help="Draw the filter bank (PNG) and save its matrix (--npy) instead of analysing the file.", rich_help_panel=MEL_PANEL)] = False,
    output: Output = None,
    npy: Npy = None,
    scale: Scale = "db",
    ref: Ref = "max",
    top_db: TopDb = 80.0,
    cmap: Cmap = "magma",
    size: Size = "1200x600",
    mix: Mix = False,
    fft: Fft = None,
    rate: RawRate = None,
    fmt: RawFormatOpt = None,
    channels: RawChannels = None,
    fix_nonfinite: FixNonFinite = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Log-mel spectrogram: mel filter bank applied to |STFT|^2, in dB (or ln).

    Defaults (docs/conventions.md): HTK mel scale, triangles peaking at 1, 80
    bands from 0 Hz to sr/2, periodic Hann, frames not centred.  For librosa's
    defaults use --mel-scale slaney --norm slaney --center --pad-mode constant.
    With neither -o nor --npy, writes <input>.mel.png beside the input.

    Example:

        audiokit mel examples/data/speech.wav --win 25ms --hop 10ms --npy speech.mel.npy

        audiokit mel examples/data/speech.wav --nfft 512 --filterbank -o melfb.png --npy melfb.npy
    """
    params = dict(locals())
    console.configure(quiet=quiet)
    refuse_terminal(output, "PNG")
    options = options_from(params)
    inputs = inputs_from(params)
    if filterbank:
        result = filterbank_job(file, options, png=output, npy=npy, inputs=inputs)
    else:
        result = timefreq(file, options, png=output, npy=npy, inputs=inputs, reporter=reporter())
    print_paths(result.written, to_stderr=result.png_to_stdout)
    return 0

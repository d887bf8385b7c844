"""``audiokit spectrogram``: STFT magnitude/power/dB as PNG and .npy, streamed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.timefreq import TimeFreqOptions, timefreq
from . import console
from .options import (
    Debug, FixNonFinite, Quiet, RawChannels, RawFormatOpt, RawRate, inputs_from, print_paths, refuse_terminal, reporter,
)
from .stft_options import (
    Center, Cmap, Fft, Hop, Mix, Npy, Nfft, Output, PadMode, Ref, Scale, Size, Symmetric, TopDb, Win, Window,
    stft_options_from,
)


def options_from(params: Mapping[str, Any]) -> TimeFreqOptions:
    """The pipeline options from the parameter values of :func:`spectrogram_command` (also ``audiokit batch``)."""
    p = params
    return TimeFreqOptions(
        stft=stft_options_from(p), fmin=p["fmin"], fmax=p["fmax"], mix=p["mix"], scale=p["scale"], ref=p["ref"],
        top_db=p["top_db"], cmap=p["cmap"], size=p["size"], complex_out=p["complex_out"],
    )


def spectrogram_command(
    file: Annotated[str, typer.Argument(help="Audio file, or - for stdin.")],
    win: Win = "25ms",
    hop: Hop = "10ms",
    nfft: Nfft = None,
    window: Window = "hann",
    symmetric: Symmetric = False,
    center: Center = False,
    pad_mode: PadMode = "constant",
    fmin: Annotated[Optional[str], typer.Option("--fmin", help="Lowest frequency kept (PNG and .npy rows), e.g. 0, 100Hz.")] = None,
    fmax: Annotated[Optional[str], typer.Option("--fmax", help="Highest frequency kept, e.g. 4kHz (default sr/2).")] = None,
    output: Output = None,
    npy: Npy = None,
    complex_out: Annotated[bool, typer.Option("--complex", help="Save the complex STFT (complex64) in --npy, for audiokit istft.")] = False,
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
    """Spectrogram: |STFT| of frames [m*hop, m*hop + n_fft), as a PNG and/or .npy.

    With neither -o nor --npy, writes <input>.spectrogram.png beside the input
    and prints its path.  Long files are streamed: memory does not grow with
    the length; the PNG is max-pooled to its width, the .npy keeps every frame.

    Example:

        audiokit spectrogram examples/data/speech.wav --win 25ms --hop 10ms

        audiokit spectrogram rec.wav --nfft 2048 --hop 512 -o rec.png --npy rec.npy --scale power
    """
    params = dict(locals())
    console.configure(quiet=quiet)
    refuse_terminal(output, "PNG")
    result = timefreq(file, options_from(params), png=output, npy=npy, inputs=inputs_from(params), reporter=reporter())
    print_paths(result.written, to_stderr=result.png_to_stdout)
    return 0

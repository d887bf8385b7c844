"""``audiokit spectrogram``: STFT magnitude/power/dB as PNG and .npy, streamed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.timefreq import TimeFreqOptions, run_timefreq
from .feature_options import (
    Amin,
    Center,
    Compat,
    Hop,
    Nfft,
    PadMode,
    Ref,
    Scale,
    TopDb,
    Win,
    Window,
    WindowPosition,
    timefreq_from,
)
from .options import Channel, inputs_from, print_paths, reads_audio, refuse_terminal, reporter
from .stft_options import OUT_PANEL, Cmap, Fft, Layout, Mix, Npy, Output, Size, Symmetric, Vmax, Vmin

FreqScale = Annotated[
    str,
    typer.Option(
        "--freq-scale", help="PNG frequency axis: linear or log (from the first bin above 0 Hz).", rich_help_panel=OUT_PANEL
    ),
]


def options_from(params: Mapping[str, Any]) -> TimeFreqOptions:
    """The pipeline options from the parameter values of :func:`spectrogram_command` (also ``audiokit batch``)."""
    from ..pipelines.compat import resolve
    from ..pipelines.params import choice
    from ..pipelines.timefreq_options import WINDOW_POSITIONS

    p = resolve("spectrogram", params)
    if choice("--window-position", p["window_position"], WINDOW_POSITIONS) != "center" and p["nfft"] is not None:
        from ..errors import ParameterError

        raise ParameterError(
            "--window-position start: audiokit centres a window shorter than --nfft in the FFT frame "
            "(only mel/mfcc --compat kaldi put it at the start)"
        )
    return timefreq_from(p, mel=False)


@reads_audio
def spectrogram_command(
    file: Annotated[str, typer.Argument(help="Audio file, or - for stdin.")],
    compat: Compat = None,
    win: Win = None,
    hop: Hop = None,
    nfft: Nfft = None,
    window: Window = None,
    symmetric: Symmetric = False,
    center: Center = None,
    pad_mode: PadMode = None,
    window_position: WindowPosition = None,
    fmin: Annotated[
        Optional[str], typer.Option("--fmin", help="Lowest frequency kept (PNG and .npy rows), e.g. 0, 100Hz.")
    ] = None,
    fmax: Annotated[Optional[str], typer.Option("--fmax", help="Highest frequency kept, e.g. 4kHz (default sr/2).")] = None,
    output: Output = None,
    npy: Npy = None,
    layout: Layout = "rows",
    complex_out: Annotated[
        bool, typer.Option("--complex", help="Save the complex STFT (complex64) in --npy, for audiokit istft.")
    ] = False,
    scale: Scale = None,
    ref: Ref = None,
    top_db: TopDb = None,
    amin: Amin = None,
    cmap: Cmap = "magma",
    size: Size = "1200x600",
    vmin: Vmin = None,
    vmax: Vmax = None,
    freq_scale: FreqScale = "linear",
    channel: Channel = None,
    mix: Mix = False,
    fft: Fft = None,
    **raw: Any,
) -> int:
    """Spectrogram: |STFT| of frames [m*hop, m*hop + n_fft), as a PNG and/or .npy.

    The .npy is in dB re 1 without a clip by default (comparable across files),
    the PNG re its loudest cell, 80 dB deep (docs/conventions.md).  With neither
    -o nor --npy, writes <input>.spectrogram.png beside the input and prints
    its path.  Long files are streamed: memory does not grow with
    the length; the PNG is max-pooled to its width, the .npy keeps every frame.
    --compat librosa / torchaudio set every default as librosa.stft +
    power_to_db / transforms.Spectrogram + AmplitudeToDB do.

    Example:

        audiokit spectrogram examples/data/speech.wav --win 25ms --hop 10ms

        audiokit spectrogram rec.wav --nfft 2048 --hop 512 -o rec.png --npy rec.npy --scale power
    """
    params = dict(locals())
    refuse_terminal(output, "PNG")
    result = run_timefreq(
        file, options_from(params), png=output, npy=npy, inputs=inputs_from(raw), reporter=reporter(), layout=layout
    )
    print_paths(result.written, to_stderr=result.png_to_stdout)
    return 0

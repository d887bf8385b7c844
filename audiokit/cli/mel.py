"""``audiokit mel``: log-mel spectrogram (and the filter bank itself) as PNG and .npy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, Optional

import typer

from ..pipelines.timefreq import filterbank_job, run_timefreq
from .feature_options import (
    Amin,
    Center,
    Compat,
    Fmax,
    Fmin,
    Hop,
    Log,
    MelScale,
    Nfft,
    NMels,
    Norm,
    PadMode,
    Ref,
    Scale,
    TopDb,
    Win,
    Window,
    WindowPosition,
)
from .kaldi_options import (
    Cmvn,
    CmvnWindow,
    DeltaMethod,
    Deltas,
    Dither,
    HtkCompat,
    Preemphasis,
    RawEnergy,
    RemoveDc,
    Seed,
    SnipEdges,
    UseEnergy,
    feature_options_from,
)
from .options import Channel, inputs_from, print_paths, reads_audio, refuse_terminal, reporter
from .stft_options import Cmap, Fft, Layout, Mix, Npy, Output, Size, Symmetric, Vmax, Vmin

MEL_PANEL = "Mel"
PadOrTrim = Annotated[
    Optional[str],
    typer.Option(
        "--pad-or-trim",
        help="Cut the input to this duration, or pad it with zeros at the end, before the STFT: 30s is Whisper's "
        "window (pad_or_trim; transformers' padding='max_length'); unset: the input as it is.",
        rich_help_panel=MEL_PANEL,
    ),
]


def options_from(params: Mapping[str, Any]) -> Any:
    """The pipeline's ``FeatureOptions`` from the parameter values of :func:`mel_command` (also ``audiokit batch mel``).

    Unset options take the ``--compat`` preset's values (audiokit's without one); the job picks its front end
    (STFT + mel bank, or Kaldi's) and its steps (log, CMVN, deltas) from them.
    """
    from ..pipelines.compat import resolve

    p = resolve("mel", params)
    options = feature_options_from("mel", p)
    return replace(options, pad_or_trim=p["pad_or_trim"]) if p.get("pad_or_trim") is not None else options


@reads_audio
def mel_command(
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
    n_mels: NMels = None,
    fmin: Fmin = None,
    fmax: Fmax = None,
    mel_scale: MelScale = None,
    norm: Norm = None,
    log: Log = None,
    dither: Dither = None,
    seed: Seed = None,
    preemphasis: Preemphasis = None,
    remove_dc: RemoveDc = None,
    snip_edges: SnipEdges = None,
    use_energy: UseEnergy = None,
    raw_energy: RawEnergy = None,
    htk_compat: HtkCompat = None,
    deltas: Deltas = 0,
    delta_method: DeltaMethod = "kaldi",
    cmvn: Cmvn = "none",
    cmvn_window: CmvnWindow = 600,
    pad_or_trim: PadOrTrim = None,
    filterbank: Annotated[
        bool,
        typer.Option(
            "--filterbank",
            help="Draw the filter bank (PNG) and save its matrix (--npy) instead of analysing the file.",
            rich_help_panel=MEL_PANEL,
        ),
    ] = False,
    filterbank_scale: Annotated[
        str,
        typer.Option(
            "--filterbank-scale",
            help="--filterbank PNG frequency axis: mel (mel-spaced, each triangle readable) or linear (Hz).",
            rich_help_panel=MEL_PANEL,
        ),
    ] = "mel",
    output: Output = None,
    npy: Npy = None,
    layout: Layout = "rows",
    scale: Scale = None,
    ref: Ref = None,
    top_db: TopDb = None,
    amin: Amin = None,
    cmap: Cmap = "magma",
    size: Size = "1200x600",
    vmin: Vmin = None,
    vmax: Vmax = None,
    channel: Channel = None,
    mix: Mix = False,
    fft: Fft = None,
    **raw: Any,
) -> int:
    """Log-mel spectrogram: mel filter bank applied to |STFT|^2, in dB (or ln).

    Defaults (docs/conventions.md; audiokit.log_melspectrogram has the same):
    HTK mel scale, triangles peaking at 1, 80 bands from 0 Hz to sr/2, periodic
    Hann, frames not centred; the .npy in dB re 1 without a clip (comparable
    across files), the PNG re its loudest cell, 80 dB deep.  --compat
    librosa / torchaudio set every default as librosa.feature.melspectrogram +
    power_to_db / transforms.MelSpectrogram + AmplitudeToDB do; --compat kaldi
    computes Kaldi's compute-fbank-feats (rows = bins: Kaldi's matrix is the
    transpose), --compat whisper Whisper's log-mel input (80 bands; --n-mels 128
    for large-v3; --pad-or-trim 30s for its 30 s window).  With neither -o nor
    --npy, writes <input>.mel.png beside the input.

    Example:

        audiokit mel examples/data/speech.wav --win 25ms --hop 10ms --npy speech.mel.npy

        audiokit mel examples/data/speech.wav --nfft 512 --filterbank -o melfb.png --npy melfb.npy

        audiokit mel examples/data/speech.wav --compat whisper --pad-or-trim 30s --npy speech.whisper.npy
    """
    params = dict(locals())
    refuse_terminal(output, "PNG")
    options = options_from(params)
    inputs = inputs_from(raw)
    if filterbank:
        result = filterbank_job(file, options, png=output, npy=npy, inputs=inputs, scale=filterbank_scale)
    else:
        result = run_timefreq(file, options, png=output, npy=npy, inputs=inputs, reporter=reporter(), layout=layout)
    print_paths(result.written, to_stderr=result.png_to_stdout)
    return 0

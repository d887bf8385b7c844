"""``audiokit mfcc``: MFCCs (DCT-II of the log-mel spectrogram, or Kaldi's compute-mfcc-feats) as PNG and .npy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

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
    feature_options_from,
)
from .options import Channel, inputs_from, print_paths, reads_audio, refuse_terminal, reporter
from .stft_options import Cmap, Fft, Layout, Mix, Npy, Output, Size, Symmetric, Vmax, Vmin

MFCC_PANEL = "MFCC"
NMfcc = Annotated[
    Optional[int],
    typer.Option("--n-mfcc", min=1, help="Cepstra kept, c0 included [20; torchaudio 40; kaldi 13].", rich_help_panel=MFCC_PANEL),
]
Lifter = Annotated[
    Optional[float],
    typer.Option(
        "--lifter",
        min=0,
        help="Cepstral lifter Q, 0 = none [0; kaldi 22]: 1 + Q/2*sin(pi*(k+1)/Q) (librosa), kaldi 1 + Q/2*sin(pi*k/Q).",
        rich_help_panel=MFCC_PANEL,
    ),
]
Energy = Annotated[
    Optional[bool],
    typer.Option(
        "--energy/--no-energy",
        "--use-energy/--no-use-energy",
        help="Replace c0 by the log frame energy [off; kaldi on]: "
        "kaldi's log energy, otherwise the log of the frame's total power sum_k |X[k]|^2.",
        rich_help_panel=MFCC_PANEL,
        show_default=False,
    ),
]


def options_from(params: Mapping[str, Any]) -> Any:
    """The pipeline's ``FeatureOptions`` from the parameter values of :func:`mfcc_command` (also ``audiokit batch mfcc``)."""
    from ..pipelines.compat import resolve

    return feature_options_from("mfcc", resolve("mfcc", params))


@reads_audio
def mfcc_command(
    file: Annotated[str, typer.Argument(help="Audio file, or - for stdin.")],
    compat: Compat = None,
    n_mfcc: NMfcc = None,
    lifter: Lifter = None,
    energy: Energy = None,
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
    raw_energy: RawEnergy = None,
    htk_compat: HtkCompat = None,
    deltas: Deltas = 0,
    delta_method: DeltaMethod = "kaldi",
    cmvn: Cmvn = "none",
    cmvn_window: CmvnWindow = 600,
    output: Output = None,
    npy: Npy = None,
    layout: Layout = "rows",
    scale: Scale = None,
    ref: Ref = None,
    top_db: TopDb = None,
    amin: Amin = None,
    cmap: Cmap = "RdBu_r",
    size: Size = "1200x600",
    vmin: Vmin = None,
    vmax: Vmax = None,
    channel: Channel = None,
    mix: Mix = False,
    fft: Fft = None,
    **raw: Any,
) -> int:
    """MFCC: orthonormal DCT-II of the log-mel spectrogram, or Kaldi's with --compat kaldi.

    Defaults (docs/conventions.md; audiokit.mfcc(y, sr=sr) has the same): the
    mel command's framing and bank (25 ms / 10 ms, periodic Hann, 80 HTK
    bands), 10*log10 floored at 1e-10 re 1 with no clip (absolute: comparable
    across files), 20 coefficients, no lifter.  --compat librosa
    = librosa.feature.mfcc, torchaudio = transforms.MFCC, kaldi =
    compute-mfcc-feats (13 cepstra, lifter 22, energy).  The .npy is (rows,
    frames) like every audiokit array (Kaldi's matrix is its transpose); rows
    are c0.. then the deltas.  With neither -o nor --npy, writes
    <input>.mfcc.png beside the input.

    Example:

        audiokit mfcc examples/data/speech.wav --npy speech.mfcc.npy

        audiokit mfcc speech.wav --compat kaldi --deltas 2 --cmvn sliding --npy feats.npy
    """
    params = dict(locals())
    refuse_terminal(output, "PNG")
    from ..pipelines.timefreq import run_timefreq

    result = run_timefreq(
        file, options_from(params), png=output, npy=npy, inputs=inputs_from(raw), reporter=reporter(), layout=layout
    )
    print_paths(result.written, to_stderr=result.png_to_stdout)
    return 0

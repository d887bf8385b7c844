"""Typer declarations of ``--compat`` and the options it presets (``spectrogram``, ``mel``, ``mfcc``), no logic.

Every option a preset sets is declared with the default ``None`` ("unset"); ``options_from`` calls
:func:`audiokit.pipelines.compat.resolve`, which fills the unset ones from the preset (or from audiokit's own
defaults without ``--compat``, the values shown in each help text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.timefreq import MelOptions, TimeFreqOptions
from .stft_options import OUT_PANEL, STFT_PANEL, stft_options_from

COMPAT_PANEL = "Toolkit presets"
KALDI_PANEL = "Kaldi (--compat kaldi)"
FEAT_PANEL = "Deltas and CMVN"
MEL_PANEL = "Mel"

Compat = Annotated[
    Optional[str],
    typer.Option(
        "--compat",
        help="kaldi, torchaudio or librosa: every default below as that toolkit sets it (explicit flags still "
        "win); kaldi = compute-fbank-feats (mel) / compute-mfcc-feats (mfcc).",
        rich_help_panel=COMPAT_PANEL,
    ),
]
Win = Annotated[
    Optional[str],
    typer.Option(
        "--win", help="Window length: 25ms, 0.025s or samples [25ms; librosa 2048; torchaudio 400].", rich_help_panel=STFT_PANEL
    ),
]
Hop = Annotated[
    Optional[str],
    typer.Option(
        "--hop", help="Hop between frame starts: 10ms or samples [10ms; librosa 512; torchaudio 200].", rich_help_panel=STFT_PANEL
    ),
]
Nfft = Annotated[
    Optional[str],
    typer.Option(
        "--nfft",
        help="FFT size >= window length (zero padding) [the window length; kaldi: next power of two].",
        rich_help_panel=STFT_PANEL,
    ),
]
Window = Annotated[
    Optional[str],
    typer.Option(
        "--window",
        help="hann, hamming, blackman, kaiser:BETA, rectangular, ... [hann]; kaldi: povey, hamming, hanning, "
        "rectangular, blackman, sine (Kaldi's symmetric definitions) [povey].",
        rich_help_panel=STFT_PANEL,
    ),
]
Center = Annotated[
    Optional[bool],
    typer.Option(
        "--center/--no-center",
        help="Pad n_fft/2 on each side so frame m is centred on m*hop [off; librosa/torchaudio: on].",
        rich_help_panel=STFT_PANEL,
        show_default=False,
    ),
]
PadMode = Annotated[
    Optional[str],
    typer.Option(
        "--pad-mode",
        help="Padding for --center: constant or reflect [constant; torchaudio: reflect].",
        rich_help_panel=STFT_PANEL,
    ),
]
WindowPosition = Annotated[
    Optional[str],
    typer.Option(
        "--window-position",
        help="Where a window shorter than --nfft sits in the FFT frame: center [audiokit] or start "
        "[kaldi; the only choice there].",
        rich_help_panel=STFT_PANEL,
    ),
]
NMels = Annotated[
    Optional[int],
    typer.Option(
        "--n-mels", min=1, max=1024, help="Mel bands [80; librosa/torchaudio 128; kaldi 23].", rich_help_panel=MEL_PANEL
    ),
]
Fmin = Annotated[
    Optional[str], typer.Option("--fmin", help="Lowest filter edge (Hz) [0; kaldi: 20 = --low-freq].", rich_help_panel=MEL_PANEL)
]
Fmax = Annotated[
    Optional[str],
    typer.Option(
        "--fmax",
        help="Highest filter edge (Hz) [sr/2]; kaldi: --high-freq, a negative value means sr/2 minus it.",
        rich_help_panel=MEL_PANEL,
    ),
]
MelScale = Annotated[
    Optional[str],
    typer.Option(
        "--mel-scale",
        help="htk: 2595*log10(1+f/700) [htk; librosa: slaney]; slaney: linear below 1 kHz, log above.",
        rich_help_panel=MEL_PANEL,
    ),
]
Norm = Annotated[
    Optional[str],
    typer.Option(
        "--norm",
        help="none: triangles peak at 1 [none; librosa: slaney]; slaney: unit area (2/width).",
        rich_help_panel=MEL_PANEL,
    ),
]
Log = Annotated[
    Optional[str],
    typer.Option(
        "--log",
        help="With --scale db: db (10*log10) [db; kaldi: ln], ln (natural log) or log10; --ref and --top-db apply in "
        "that unit as in audiokit.log_melspectrogram (top_db dB = top_db*ln(10)/10 nepers).",
        rich_help_panel=MEL_PANEL,
    ),
]
Scale = Annotated[
    Optional[str],
    typer.Option(
        "--scale", help="Values saved in --npy: db (the log of --log), power or magnitude [db].", rich_help_panel=OUT_PANEL
    ),
]
Ref = Annotated[
    Optional[str],
    typer.Option(
        "--ref",
        help="Log reference: max (0 = loudest cell) or a linear value [.npy: 1, absolute, comparable across files; "
        "PNG: max; a value given applies to both; the presets: 1].",
        rich_help_panel=OUT_PANEL,
    ),
]
TopDb = Annotated[
    Optional[float],
    typer.Option(
        "--top-db",
        min=0,
        help="Clip values more than TOP_DB dB below the peak; 0 disables [.npy: no clip (a clip below each file's "
        "peak normalises per file); PNG: 80; a value given applies to both; librosa 80; torchaudio 0 (None), its "
        "MFCC 80; kaldi 0].",
        rich_help_panel=OUT_PANEL,
    ),
]
Amin = Annotated[
    Optional[float],
    typer.Option(
        "--amin",
        help="Floor before the log [1e-10 for power, 1e-5 for magnitude; torchaudio 1e-10; kaldi FLT_EPSILON "
        "on int16-scaled samples].",
        rich_help_panel=OUT_PANEL,
    ),
]

Dither = Annotated[
    Optional[float],
    typer.Option(
        "--dither", min=0, help="Gaussian dither std in int16 units [0; Kaldi's own default is 1].", rich_help_panel=KALDI_PANEL
    ),
]
Seed = Annotated[Optional[int], typer.Option("--seed", help="Seed of the dither noise.", rich_help_panel=KALDI_PANEL)]
Preemphasis = Annotated[
    Optional[float],
    typer.Option("--preemphasis", min=0, max=1, help="Pre-emphasis coefficient per frame [0.97].", rich_help_panel=KALDI_PANEL),
]
RemoveDc = Annotated[
    Optional[bool],
    typer.Option(
        "--remove-dc/--no-remove-dc", help="Subtract each frame's mean [on].", rich_help_panel=KALDI_PANEL, show_default=False
    ),
]
SnipEdges = Annotated[
    Optional[bool],
    typer.Option(
        "--snip-edges/--no-snip-edges",
        help="Only frames inside the signal [on]; off: round(n/hop) frames, ends reflected.",
        rich_help_panel=KALDI_PANEL,
        show_default=False,
    ),
]
UseEnergy = Annotated[
    Optional[bool],
    typer.Option(
        "--use-energy/--no-use-energy",
        help="fbank: add the log frame energy as row 0 (last with --htk-compat) [off].",
        rich_help_panel=KALDI_PANEL,
        show_default=False,
    ),
]
RawEnergy = Annotated[
    Optional[bool],
    typer.Option(
        "--raw-energy/--no-raw-energy",
        help="Energy before pre-emphasis and window [on].",
        rich_help_panel=KALDI_PANEL,
        show_default=False,
    ),
]
HtkCompat = Annotated[
    Optional[bool],
    typer.Option(
        "--htk-compat/--no-htk-compat",
        help="HTK order: energy / c0 last (c0 * sqrt(2) without energy) [off].",
        rich_help_panel=KALDI_PANEL,
        show_default=False,
    ),
]

Deltas = Annotated[
    int,
    typer.Option(
        "--deltas", min=0, max=2, help="Append the first (1) and second (2) deltas as rows.", rich_help_panel=FEAT_PANEL
    ),
]
DeltaMethod = Annotated[
    str,
    typer.Option(
        "--delta-method",
        help="kaldi: add-deltas --delta-window=2 (edges repeated); librosa: feature.delta(width=9, mode='interp').",
        rich_help_panel=FEAT_PANEL,
    ),
]
Cmvn = Annotated[
    str,
    typer.Option(
        "--cmvn",
        help="none, utterance (Kaldi apply-cmvn with the file's means) or sliding (apply-cmvn-sliding "
        "--cmn-window=600 --center=true); means only, before the deltas.",
        rich_help_panel=FEAT_PANEL,
    ),
]
CmvnWindow = Annotated[
    int, typer.Option("--cmvn-window", min=1, help="Sliding CMVN window in frames.", rich_help_panel=FEAT_PANEL)
]


def timefreq_from(p: Mapping[str, Any], *, mel: bool) -> TimeFreqOptions:
    """:class:`TimeFreqOptions` from resolved parameter values (see :func:`audiokit.pipelines.compat.resolve`)."""
    mel_options = None
    if mel:
        mel_options = MelOptions(n_mels=p["n_mels"], mel_scale=p["mel_scale"], norm=p["norm"], log=p["log"])
        if p["compat"] != "kaldi":
            mel_options = mel_options.checked()
    return TimeFreqOptions(
        stft=stft_options_from(p),
        mel=mel_options,
        fmin=p["fmin"],
        fmax=p["fmax"],
        mix=p["mix"],
        scale=p["scale"],
        ref=p["ref"],
        top_db=p["top_db"],
        cmap=p["cmap"],
        size=p["size"],
        complex_out=p.get("complex_out", False),
        amin=p["amin"],
        channel=p.get("channel"),
    )


def feature_options_from(kind: str, p: Mapping[str, Any]) -> Any:
    """The pipeline's :class:`~audiokit.pipelines.features.FeatureOptions` from resolved parameter values."""
    from ..pipelines.features import FeatureOptions
    from ..pipelines.kaldi_frontend import KaldiFrontend

    kaldi = KaldiFrontend(
        **{
            name: p[name]
            for name in ("dither", "seed", "preemphasis", "remove_dc", "snip_edges", "raw_energy", "htk_compat")
            if p.get(name) is not None
        },
        **({"use_energy": p["use_energy"]} if p.get("use_energy") is not None else {}),
    )
    extra: dict[str, Any] = {}
    if kind == "mfcc":
        extra = {"n_mfcc": p["n_mfcc"], "lifter": p["lifter"], "energy": p["energy"]}
    options = FeatureOptions(
        kind=kind,
        timefreq=timefreq_from(p, mel=True),
        compat=p["compat"],
        window_position=p["window_position"],
        kaldi=kaldi,
        deltas=p["deltas"],
        delta_method=p["delta_method"],
        cmvn=p["cmvn"],
        cmvn_window=p["cmvn_window"],
        **extra,
    )
    options.check()
    return options

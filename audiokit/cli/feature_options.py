"""Typer declarations of ``--compat`` and the options it presets for the STFT, the mel bank and the output
(``spectrogram``, ``mel``, ``mfcc``), and the :class:`TimeFreqOptions` they make; no logic.

Every option a preset sets is declared with the default ``None`` ("unset"); ``options_from`` calls
:func:`audiokit.pipelines.compat.resolve`, which fills the unset ones from the preset (or from audiokit's own
defaults without ``--compat``, the values shown in each help text).  The features job's own options (Kaldi's
front end, deltas, CMVN) are in :mod:`.kaldi_options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.compat import KALDI_COMPATS
from ..pipelines.timefreq import MelOptions, TimeFreqOptions
from .stft_options import OUT_PANEL, STFT_PANEL, stft_options_from

COMPAT_PANEL = "Toolkit presets"
MEL_PANEL = "Mel"

Compat = Annotated[
    Optional[str],
    typer.Option(
        "--compat",
        help="kaldi, torchaudio, librosa, whisper or lhotse: every default below as that toolkit sets it (explicit "
        "flags still win); kaldi = compute-fbank-feats (mel) / compute-mfcc-feats (mfcc); whisper = Whisper's log-mel "
        "(mel); lhotse = Lhotse's Fbank() (mel) / Mfcc() (mfcc).",
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
        "--n-mels",
        min=1,
        max=1024,
        help="Mel bands [80; librosa/torchaudio 128; kaldi 23]; bands built from the same FFT bins (too many "
        "for --nfft at low frequencies) draw a warning: give a larger --nfft (zero padding) or fewer bands.",
        rich_help_panel=MEL_PANEL,
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


def timefreq_from(p: Mapping[str, Any], *, mel: bool) -> TimeFreqOptions:
    """:class:`TimeFreqOptions` from resolved parameter values (see :func:`audiokit.pipelines.compat.resolve`)."""
    mel_options = None
    if mel:
        mel_options = MelOptions(n_mels=p["n_mels"], mel_scale=p["mel_scale"], norm=p["norm"], log=p["log"])
        if p["compat"] not in KALDI_COMPATS:
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
        vmin=p.get("vmin"),
        vmax=p.get("vmax"),
        freq_scale=p.get("freq_scale") or "linear",
    )

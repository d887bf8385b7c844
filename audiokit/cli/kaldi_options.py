"""Typer declarations of the features job's own options -- Kaldi's front end (``--compat kaldi``), deltas and
CMVN (``mel``, ``mfcc``) -- and the :class:`~audiokit.pipelines.features.FeatureOptions` they make; no logic.

The Kaldi options are declared unset (``None``) like the other preset options (:mod:`.feature_options`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from .feature_options import timefreq_from

KALDI_PANEL = "Kaldi (--compat kaldi)"
FEAT_PANEL = "Deltas and CMVN"

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

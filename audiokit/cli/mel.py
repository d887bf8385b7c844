"""``audiokit mel``: log-mel spectrogram (and the filter bank itself) as PNG and .npy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from ..io import check_output_path, derived_output, write_bytes_atomic
from ..io.npy import write_sidecar
from . import console
from .options import (
    Debug, FixNonFinite, Quiet, RawChannels, RawFormatOpt, RawRate, choice_option, open_input,
)
from .timefreq import (
    Center, Cmap, Fft, Hop, Mix, Npy, Nfft, Output, PadMode, Ref, Scale, Size, Symmetric, TfRequest, TopDb, Win, Window,
    mel_bank, plan_from_request, resolve_outputs, run_timefreq,
)

MEL_PANEL = "Mel"


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
    channels: RawChannels = 1,
    fix_nonfinite: FixNonFinite = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Log-mel spectrogram: mel filter bank applied to |STFT|^2, in dB (or ln).

    Defaults follow the article: HTK mel scale, triangles peaking at 1, 80
    bands from 0 Hz to sr/2, periodic Hann, frames not centred.  For librosa's
    defaults use --mel-scale slaney --norm slaney --center --pad-mode constant.
    With neither -o nor --npy, writes <input>.mel.png beside the input.

    Example:

        audiokit mel examples/data/speech.wav --win 25ms --hop 10ms --npy speech.mel.npy

        audiokit mel examples/data/speech.wav --nfft 512 --filterbank -o melfb.png --npy melfb.npy
    """
    console.configure(quiet=quiet)
    mel_settings = {
        "n_mels": n_mels,
        "scale": choice_option("--mel-scale", mel_scale, ("htk", "slaney")),
        "norm": None if choice_option("--norm", norm, ("none", "slaney")) == "none" else "slaney",
        "log": log,
    }
    request = TfRequest(
        kind="mel", path=file, win=win, hop=hop, nfft=nfft, window=window, symmetric=symmetric, center=center,
        pad_mode=pad_mode, fft=fft, mix=mix, output=output, npy=npy, scale=scale, ref=ref, top_db=top_db, cmap=cmap,
        size=size, fmin=fmin, fmax=fmax, mel=mel_settings,
    )
    with open_input(file, rate, fmt, channels, fix_nonfinite) as source:
        paths = _filterbank(request, source.sr) if filterbank else run_timefreq(request, source)
    for path in paths:
        print(path)
    return 0


def _filterbank(request: TfRequest, sr: int) -> list[str]:
    """Draw the triangles and save the (n_mels, n_freqs) matrix; return the written paths."""
    from ..plot import filterbank_figure, parse_size, png_bytes

    png = request.output if request.output is not None or request.npy is not None else str(derived_output(request.path, "melfb", ".png"))
    if request.output is None and request.npy is not None:
        png = None
    resolve_outputs(request)
    for out in (png, request.npy, request.npy and str(Path(request.npy).with_suffix(".json"))):
        if out:
            check_output_path(out, [request.path])
    plan = plan_from_request(request, sr)
    m = request.mel
    bank, mel_meta, _ = mel_bank(request, plan)
    written = []
    if png is not None:
        title = f"{m['n_mels']} mel filters ({m['scale']}, norm {m['norm'] or 'none'}) over {plan.n_freqs} bins, sr {sr} Hz, n_fft {plan.n_fft}"
        write_bytes_atomic(png, png_bytes(filterbank_figure(bank, plan.freqs, title=title, size=parse_size(request.size))))
        if png != "-":
            written.append(png)
    if request.npy is not None:
        import io

        buffer = io.BytesIO()
        np.save(buffer, bank)
        write_bytes_atomic(request.npy, buffer.getvalue())
        meta = {
            "kind": "mel_filterbank", "shape": list(bank.shape), "dtype": "float32", "layout": "(n_mels, n_freqs)",
            "sr": sr, "n_fft": plan.n_fft, **mel_meta, "freq_hz": {"formula": "k * sr / n_fft", "count": plan.n_freqs},
        }
        from .. import __version__

        meta["audiokit_version"] = __version__
        written += [request.npy, str(write_sidecar(request.npy, meta))]
    if png == "-":  # stdout carries the PNG bytes: the other paths must not follow them there
        for path in written:
            console.info(f"wrote {path}")
        return []
    return written

"""The streaming pipeline shared by ``audiokit spectrogram`` and ``audiokit mel``.

file → blocks → :class:`~audiokit.dsp.stft.StftStream` (power, magnitude or
complex; mel filter bank for ``mel``) → per chunk: scaled and appended to the
``.npy``, and max-pooled into the display image → PNG.  Memory holds one
block, one chunk of frames and the display image, whatever the input length.
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from .. import __version__
from ..errors import ParameterError
from ..io import check_output_path, derived_output, is_stdio, write_bytes_atomic
from ..io.npy import NpyFrameWriter, write_sidecar
from ..io.reader import AudioSource
from . import console
from .options import choice_option, duration_option, frequency_option

BLOCK_FRAMES = 1 << 16
SCALES = ("db", "power", "magnitude")
STFT_PANEL = "STFT"
OUT_PANEL = "Output"

Win = Annotated[str, typer.Option("--win", help="Window length: 25ms, 0.025s or samples.", rich_help_panel=STFT_PANEL)]
Hop = Annotated[str, typer.Option("--hop", help="Hop between frame starts: 10ms or samples.", rich_help_panel=STFT_PANEL)]
Nfft = Annotated[
    Optional[str],
    typer.Option("--nfft", help="FFT size >= window length (zero padding); default: the window length.", rich_help_panel=STFT_PANEL),
]
Window = Annotated[
    str,
    typer.Option("--window", help="hann, hamming, blackman, kaiser:BETA, rectangular, blackmanharris, nuttall, flattop, bartlett.", rich_help_panel=STFT_PANEL),
]
Symmetric = Annotated[bool, typer.Option("--symmetric", help="Symmetric window instead of the periodic (DFT-even) one.", rich_help_panel=STFT_PANEL)]
Center = Annotated[
    bool, typer.Option("--center", help="Pad n_fft/2 on each side so frame m is centred on m*hop (librosa/torchaudio framing).", rich_help_panel=STFT_PANEL)
]
PadMode = Annotated[str, typer.Option("--pad-mode", help="Padding for --center: constant (zeros) or reflect.", rich_help_panel=STFT_PANEL)]
Fft = Annotated[Optional[str], typer.Option("--fft", help="FFT backend: fftw, scipy or numpy (default: AUDIOKIT_FFT or fftw).", rich_help_panel=STFT_PANEL)]
Mix = Annotated[bool, typer.Option("--mix", help="Average the channels into one before the transform.")]
Output = Annotated[
    Optional[str],
    typer.Option("-o", "--output", help="PNG to write (- for stdout). Default: <input>.<kind>.png beside the input, unless only --npy is given.", rich_help_panel=OUT_PANEL),
]
Npy = Annotated[Optional[str], typer.Option("--npy", help="Save the full-resolution array as float32 .npy plus a JSON sidecar.", rich_help_panel=OUT_PANEL)]
Scale = Annotated[str, typer.Option("--scale", help="Values saved in --npy: db, power (|X|^2) or magnitude (|X|).", rich_help_panel=OUT_PANEL)]
Ref = Annotated[str, typer.Option("--ref", help="dB reference: max (0 dB = loudest cell) or 1 (absolute).", rich_help_panel=OUT_PANEL)]
TopDb = Annotated[float, typer.Option("--top-db", help="Clip dB values below (max - TOP_DB); 0 disables the clip.", min=0, rich_help_panel=OUT_PANEL)]
Cmap = Annotated[str, typer.Option("--cmap", help="matplotlib colormap of the PNG.", rich_help_panel=OUT_PANEL)]
Size = Annotated[str, typer.Option("--size", help="PNG size in pixels, WIDTHxHEIGHT.", rich_help_panel=OUT_PANEL)]


@dataclass
class TfRequest:
    """Everything a time-frequency command was asked to do (CLI units resolved later)."""

    kind: str  # "spectrogram" or "mel"
    path: str
    win: str
    hop: str
    nfft: str | None
    window: str
    symmetric: bool
    center: bool
    pad_mode: str
    fft: str | None
    mix: bool
    output: str | None
    npy: str | None
    scale: str
    ref: str
    top_db: float
    cmap: str
    size: str
    fmin: str | None = None
    fmax: str | None = None
    complex_out: bool = False
    mel: dict = field(default_factory=dict)


def _parse_ref(text: str) -> str | float:
    if text.lower() == "max":
        return "max"
    try:
        value = float(text)
    except ValueError:
        raise ParameterError(f"--ref: {text!r} is not 'max' or a positive number") from None
    if not value > 0 or not math.isfinite(value):
        raise ParameterError(f"--ref: {text!r} must be 'max' or a number > 0")
    return value


def plan_from_request(req: TfRequest, sr: int):
    """Build the :class:`StftPlan` from the CLI options (durations rounded to samples)."""
    from ..dsp.stft import StftPlan

    win = duration_option("--win", req.win, sr)
    hop = duration_option("--hop", req.hop, sr)
    n_fft = duration_option("--nfft", req.nfft, sr) if req.nfft is not None else win
    if n_fft < win:
        raise ParameterError(f"--nfft: {n_fft} samples is shorter than the window ({win} samples); it must be >= --win")
    pad_mode = choice_option("--pad-mode", req.pad_mode, ("constant", "reflect"))
    return StftPlan(
        sr=sr, win_length=win, hop_length=hop, n_fft=n_fft, window=req.window, periodic=not req.symmetric,
        center=req.center, pad_mode=pad_mode, dtype="float32",
    )


def resolve_outputs(req: TfRequest) -> tuple[str | None, str | None]:
    """(png, npy) destinations: -o if given; a derived PNG when neither -o nor --npy is."""
    png = req.output
    if png is None and req.npy is None:
        png = str(derived_output(req.path, req.kind, ".png"))
    if png is not None and req.npy is not None and not is_stdio(png) and Path(png).resolve() == Path(req.npy).resolve():
        raise ParameterError("-o and --npy name the same file")
    if req.npy is not None and is_stdio(req.npy):
        raise ParameterError("--npy: give a file path (the JSON sidecar is written beside it)")
    if png is not None and is_stdio(png) and sys.stdout.isatty():
        raise ParameterError("refusing to write PNG bytes to a terminal: give -o PATH or pipe the output")
    if req.npy is not None and not req.npy.endswith(".npy"):
        raise ParameterError(f"--npy: {req.npy!r} must end in .npy")
    return png, req.npy


def _to_scale(chunk: np.ndarray, scale: str, kind: str, log: str) -> np.ndarray:
    """Convert a power/magnitude chunk to the saved scale (dB with ref 1, or ln; both floored)."""
    from ..dsp.scaling import AMIN, to_db

    if scale != "db":
        return chunk
    if log == "ln":
        return np.log(np.maximum(chunk, AMIN[kind]))
    return to_db(chunk, kind=kind, ref=1.0, top_db=None)


def run_timefreq(req: TfRequest, source: AudioSource) -> list[str]:
    """Compute, save and draw; return the written paths (to print on stdout)."""
    from ..dsp.stft import StftStream
    from ..engine import get_backend

    scale = choice_option("--scale", req.scale, SCALES)
    log = choice_option("--log", req.mel.get("log", "db"), ("db", "ln"))
    ref = _parse_ref(req.ref)
    png_path, npy_path = resolve_outputs(req)
    for out in (png_path, npy_path):
        if out is not None:
            check_output_path(out, [req.path])
    if npy_path is not None:
        check_output_path(Path(npy_path).with_suffix(".json"), [req.path])
    from ..plot import parse_size

    size = parse_size(req.size)
    plan = plan_from_request(req, source.sr)
    channels = 1 if req.mix else source.channels
    backend = get_backend(req.fft)

    filterbank, rows, row_freqs = None, plan.n_freqs, plan.freqs
    mel_meta = {}
    if req.kind == "mel":
        filterbank, mel_meta, row_freqs = mel_bank(req, plan)
        rows = filterbank.shape[0]
        row_slice = slice(None)
    else:
        row_slice, row_freqs = _freq_rows(req, plan)
        rows = row_freqs.size

    want_complex = req.complex_out and req.kind == "spectrogram"
    if want_complex and npy_path is None:
        raise ParameterError("--complex needs --npy PATH (the complex STFT is saved for istft)")
    power_kind = "magnitude" if scale == "magnitude" else "power"
    stream = StftStream(
        plan, output="complex" if want_complex else power_kind,
        filterbank=filterbank, backend=backend,
    )
    n_frames = plan.n_frames(source.frames)
    shape = (rows, n_frames) if channels == 1 else (channels, rows, n_frames)
    npy_dtype = np.complex64 if want_complex else np.float32

    from ..plot import ColumnPooler

    poolers = [ColumnPooler(rows, n_frames, size[0]) for _ in range(channels)]
    peak_db = -math.inf

    def consume(chunk: np.ndarray) -> None:
        nonlocal peak_db
        if chunk.shape[-1] == 0:
            return
        chunk = chunk[..., row_slice, :]
        if want_complex:
            display = chunk.real**2 + chunk.imag**2
            saved = chunk
        else:
            display = chunk
        for c, pooler in enumerate(poolers):
            pooler.add(display[c])
        if npy is not None:
            if not want_complex:
                saved = _to_scale(chunk, scale, power_kind, log)
                if scale == "db" and log == "db":
                    peak_db = max(peak_db, float(saved.max()))
            npy.write(saved[0] if channels == 1 else saved)

    import contextlib

    with contextlib.ExitStack() as stack:
        npy = stack.enter_context(NpyFrameWriter(npy_path, shape, npy_dtype)) if npy_path else None
        with console.progress(f"{req.kind} {source.name}", source.frames) as advance:
            for block in source.blocks(BLOCK_FRAMES):
                if req.mix:
                    block = block.mean(axis=0, keepdims=True)
                consume(stream.push(block))
                advance(block.shape[1])
            consume(stream.finish())
        ref_db = None
        if npy is not None and scale == "db" and log == "db" and not want_complex:
            ref_db = _apply_reference(npy, ref, req.top_db, peak_db, power_kind)
        if npy is not None:
            meta = _metadata(
                req, source, plan, channels, shape, npy_dtype, scale, log, power_kind, ref, ref_db, row_freqs, mel_meta, want_complex
            )
            write_sidecar(npy_path, meta)
    if all(pooler.image.max() <= 0 for pooler in poolers):
        warnings.warn(f"{source.name}: the input is digital silence; every value is the floor", stacklevel=2)
    written = [p for p in (npy_path,) if p]
    if npy_path:
        written.append(str(Path(npy_path).with_suffix(".json")))
    if png_path is not None:
        _draw(req, source, plan, poolers, power_kind if not want_complex else "power", ref, row_freqs, mel_meta, size, png_path)
        if is_stdio(png_path):
            # stdout carries the PNG bytes: the other paths must not follow them there
            for path in written:
                console.info(f"wrote {path}")
            return []
        written.insert(0, png_path)
    return written


def _apply_reference(npy: NpyFrameWriter, ref, top_db: float, peak_db: float, kind: str) -> float:
    """Second pass over the saved dB values: subtract the reference, clip at ``top_db``; return ref in dB."""
    from ..dsp.scaling import rescale_db

    ref_db = peak_db if ref == "max" else (10.0 if kind == "power" else 20.0) * math.log10(ref)
    top = top_db if top_db > 0 else None
    if ref_db != 0.0 or top is not None:
        npy.rewrite(lambda chunk: rescale_db(chunk, ref_db=ref_db, top_db=top, max_db=peak_db))
    return ref_db


def _freq_rows(req: TfRequest, plan) -> tuple[slice, np.ndarray]:
    freqs = plan.freqs
    fmin = frequency_option("--fmin", req.fmin) if req.fmin is not None else 0.0
    fmax = frequency_option("--fmax", req.fmax) if req.fmax is not None else freqs[-1]
    if fmax <= fmin:
        raise ParameterError(f"--fmin {fmin:g} Hz must be below --fmax {fmax:g} Hz")
    keep = np.flatnonzero((freqs >= fmin) & (freqs <= fmax))
    if keep.size == 0:
        raise ParameterError(f"--fmin/--fmax {fmin:g}..{fmax:g} Hz contains no bin (bins are {plan.delta_f:g} Hz apart)")
    return slice(int(keep[0]), int(keep[-1]) + 1), freqs[keep[0] : keep[-1] + 1]


def mel_bank(req: TfRequest, plan):
    """The float32 mel filter bank of ``--n-mels/--fmin/--fmax/--mel-scale/--norm``, its sidecar fields and centre Hz."""
    from ..dsp.mel import mel_filterbank, mel_frequencies

    m = req.mel
    fmin = frequency_option("--fmin", req.fmin) if req.fmin is not None else 0.0
    fmax = frequency_option("--fmax", req.fmax) if req.fmax is not None else plan.sr / 2
    bank = mel_filterbank(
        sr=plan.sr, n_fft=plan.n_fft, n_mels=m["n_mels"], fmin=fmin, fmax=fmax, scale=m["scale"], norm=m["norm"],
        dtype=np.float32,
    )
    centres = mel_frequencies(m["n_mels"] + 2, fmin=fmin, fmax=fmax, scale=m["scale"])[1:-1]
    meta = {"n_mels": m["n_mels"], "fmin_hz": fmin, "fmax_hz": fmax, "mel_scale": m["scale"], "norm": m["norm"] or "none"}
    return bank, meta, centres


def _metadata(req, source, plan, channels, shape, dtype, scale, log, kind, ref, ref_db, row_freqs, mel_meta, complex_out) -> dict:
    """The JSON sidecar: every parameter needed to read the array."""
    from ..dsp.scaling import AMIN

    n_frames = shape[-1]
    times = plan.times(min(n_frames, 1), where="centre")
    linear = "|X|^2" if kind == "power" else "|X|"
    if req.kind == "mel":
        linear = f"mel filterbank @ {linear}"
    if complex_out:
        values = "complex STFT X[k, m] (unnormalised forward DFT)"
    elif scale == "db" and log == "ln":
        values = f"ln(max({linear}, amin))"
    elif scale == "db":
        factor = 10 if kind == "power" else 20
        values = f"{factor}*log10(max({linear}, amin)) - ref_db, clipped below (max - ref_db - top_db)"
    else:
        values = linear
    meta = {
        "audiokit_version": __version__,
        "kind": req.kind,
        "source": source.name if is_stdio(source.name) else str(Path(source.name).resolve()),
        "source_frames": source.frames,
        "source_subtype": source.subtype,
        "sr": plan.sr,
        "channels": channels,
        "mixed": req.mix,
        "layout": "(n_rows, n_frames)" if channels == 1 else "(channels, n_rows, n_frames)",
        "shape": list(shape),
        "dtype": np.dtype(dtype).name,
        "win_length": plan.win_length,
        "hop_length": plan.hop_length,
        "n_fft": plan.n_fft,
        "window": str(plan.window_spec),
        "periodic": plan.periodic,
        "center": plan.center,
        "pad_mode": plan.pad_mode,
        "scale": "complex" if complex_out else ("ln" if scale == "db" and log == "ln" else scale),
        "values": values,
        "amin": AMIN[kind] if scale == "db" and not complex_out else None,
        "ref": ref if ref_db is not None else None,
        "ref_db": ref_db,
        "top_db": (req.top_db or None) if ref_db is not None else None,
        "frame_time_s": {
            "formula": "centre of frame m = (m*hop_length - pad + n_fft//2) / sr",
            "pad": plan.pad,
            "first": float(times[0]) if n_frames else None,
            "step": plan.hop_length / plan.sr,
        },
        "delta_f_hz": plan.delta_f,
    }
    if req.kind == "mel":
        meta["mel"] = mel_meta
        meta["mel_centre_hz"] = [round(float(f), 6) for f in row_freqs]
    else:
        meta["freq_hz"] = {"formula": "k * sr / n_fft", "first_bin": int(round(row_freqs[0] / plan.delta_f)), "count": int(row_freqs.size)}
    return meta


def _draw(req, source, plan, poolers, kind, ref, row_freqs, mel_meta, size, png_path) -> None:
    """Render the pooled image(s) as dB and write the PNG atomically."""
    from ..dsp.scaling import to_db
    from ..plot import png_bytes, spectrogram_figure

    images = [p.image for p in poolers]
    stacked = np.stack(images)
    top = req.top_db if req.top_db > 0 else None
    db = to_db(stacked, kind=kind, ref=ref, top_db=top)
    n_frames = poolers[0].edges[-1]
    centres = plan.times(int(n_frames), where="centre") if n_frames else np.zeros(1)
    half = plan.hop_length / plan.sr / 2
    t0, t1 = float(centres[0] - half), float(centres[-1] + half)
    name = Path(source.name).name if source.name != "-" else "stdin"
    title = (
        f"{name} — {req.kind}, sr {plan.sr} Hz, win {plan.win_length} ({1000 * plan.win_length / plan.sr:g} ms), "
        f"hop {plan.hop_length} ({1000 * plan.hop_length / plan.sr:g} ms), n_fft {plan.n_fft}, {plan.window_spec}"
        + (", centred" if plan.center else "")
    )
    ref_label = "dB re max" if ref == "max" else f"dB re {ref:g}"
    if req.kind == "mel":
        title += f", {mel_meta['n_mels']} mel ({mel_meta['mel_scale']})"
        ticks = _mel_ticks(mel_meta)
        fig = spectrogram_figure(
            db, t_start=t0, t_end=t1, f_low=-0.5, f_high=mel_meta["n_mels"] - 0.5, title=title, colorbar_label=ref_label,
            cmap=req.cmap, size=size, mel_ticks=ticks, ylabel="frequency (Hz, mel-spaced)",
        )
    else:
        df = plan.delta_f
        fig = spectrogram_figure(
            db, t_start=t0, t_end=t1, f_low=float(row_freqs[0] - df / 2), f_high=float(row_freqs[-1] + df / 2),
            title=title, colorbar_label=ref_label, cmap=req.cmap, size=size,
        )
    write_bytes_atomic(png_path, png_bytes(fig))


def _mel_ticks(mel_meta: dict) -> tuple[list[float], list[str]]:
    """Band positions (fractional band index) of round Hz values, for the mel image's y axis."""
    from ..dsp.mel import hz_to_mel

    n, lo, hi = mel_meta["n_mels"], mel_meta["fmin_hz"], mel_meta["fmax_hz"]
    m_lo, m_hi = hz_to_mel(lo, scale=mel_meta["mel_scale"]), hz_to_mel(hi, scale=mel_meta["mel_scale"])
    candidates = [50, 100, 200, 300, 500, 1000, 2000, 3000, 4000, 6000, 8000, 12000, 16000, 20000]
    positions, labels = [], []
    for hz in candidates:
        if lo <= hz <= hi:
            frac = (hz_to_mel(hz, scale=mel_meta["mel_scale"]) - m_lo) / (m_hi - m_lo)
            positions.append(frac * (n + 1) - 1)
            labels.append(f"{hz // 1000}k" if hz >= 1000 and hz % 1000 == 0 else str(hz))
    return positions, labels

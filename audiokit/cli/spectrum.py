"""``audiokit spectrum``: the DFT of a whole signal or a segment, with its peaks."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from ..errors import ParameterError
from ..io import check_output_path, write_bytes_atomic
from ..io.npy import write_sidecar
from . import console
from .options import (
    Debug, FixNonFinite, Json, Quiet, RawChannels, RawFormatOpt, RawRate, duration_option, frequency_option, open_input,
)
from .timefreq import Fft, Mix, Size, Symmetric, Window

PEAKS_PANEL = "Peaks"
#: Dynamic range shown by the dB plot, below its highest value.
DB_RANGE = 140.0
OUT_PANEL = "Output"


def spectrum_command(
    file: Annotated[str, typer.Argument(help="Audio file, or - for stdin.")],
    start: Annotated[str, typer.Option("--start", help="Segment start: 1.5s, 200ms or samples.")] = "0",
    dur: Annotated[Optional[str], typer.Option("--dur", help="Segment length (default: to the end).")] = None,
    window: Window = "hann",
    symmetric: Symmetric = False,
    nfft: Annotated[Optional[str], typer.Option("--nfft", help="DFT size >= segment length (zero padding); default: the segment length.")] = None,
    peaks: Annotated[int, typer.Option("--peaks", min=0, help="Report the K strongest peaks.", rich_help_panel=PEAKS_PANEL)] = 5,
    threshold: Annotated[float, typer.Option("--threshold", help="Ignore peaks below the strongest by more than this many dB.", rich_help_panel=PEAKS_PANEL)] = 60.0,
    min_sep: Annotated[Optional[str], typer.Option("--min-sep", help="Minimum distance between peaks (Hz); default the window's ENBW.", rich_help_panel=PEAKS_PANEL)] = None,
    phase: Annotated[bool, typer.Option("--phase", help="Add the phase (radians, cosine phase at the segment start) of each peak / bin.", rich_help_panel=PEAKS_PANEL)] = False,
    json_out: Json = False,
    npy: Annotated[Optional[str], typer.Option("--npy", help="Save rows [freq_hz, amplitude(, phase)] as .npy + JSON sidecar.", rich_help_panel=OUT_PANEL)] = None,
    output: Annotated[Optional[str], typer.Option("-o", "--output", help="PNG of the spectrum (- for stdout).", rich_help_panel=OUT_PANEL)] = None,
    linear: Annotated[bool, typer.Option("--linear", help="PNG in linear amplitude instead of dBFS.", rich_help_panel=OUT_PANEL)] = False,
    two_sided: Annotated[bool, typer.Option("--two-sided", help="PNG over 0..fs with the mirror image above Nyquist (for teaching).", rich_help_panel=OUT_PANEL)] = False,
    size: Size = "1200x500",
    fmin: Annotated[Optional[str], typer.Option("--fmin", help="PNG: lowest frequency shown (Hz).", rich_help_panel=OUT_PANEL)] = None,
    fmax: Annotated[Optional[str], typer.Option("--fmax", help="PNG: highest frequency shown (Hz).", rich_help_panel=OUT_PANEL)] = None,
    channel: Annotated[Optional[int], typer.Option("--channel", min=0, help="Analyse only this channel (0-based).")] = None,
    mix: Mix = False,
    fft: Fft = None,
    rate: RawRate = None,
    fmt: RawFormatOpt = None,
    channels: RawChannels = 1,
    fix_nonfinite: FixNonFinite = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """One-sided DFT of the signal (or a segment): resolution, Nyquist and peaks.

    Amplitudes are corrected for the window's coherent gain and the one-sided
    factor 2 (not at DC and Nyquist), so a sine of amplitude A reads A
    (20*log10(A) dBFS).  Peak frequencies and amplitudes are fitted between
    bins with the window's exact transform.

    Example:

        audiokit generate "sine:50:1 + sine:120:0.5 + sine:300:0.25" --rate 8k --dur 1s | audiokit spectrum - --peaks 5

        audiokit spectrum rec.wav --start 1s --dur 0.5s --nfft 16384 -o rec.spectrum.png --json
    """
    from ..dsp.dft import find_peaks, spectrum
    from ..dsp.windows import parse_window_spec

    console.configure(quiet=quiet)
    if channel is not None and mix:
        raise ParameterError("--channel and --mix exclude each other")
    if json_out and output == "-":
        raise ParameterError("--json and -o - both write to stdout; choose one")
    if not threshold >= 0:
        raise ParameterError(f"--threshold: {threshold!r} must be a number of dB >= 0 (below the strongest peak)")
    for path in (output, npy):
        if path is not None:
            check_output_path(path, [file])
    if npy is not None:
        if not npy.endswith(".npy") or npy == "-":
            raise ParameterError(f"--npy: {npy!r} must be a file path ending in .npy")
        check_output_path(Path(npy).with_suffix(".json"), [file])
    spec_window = parse_window_spec(window)
    with open_input(file, rate, fmt, channels, fix_nonfinite) as source:
        sr = source.sr
        first = duration_option("--start", start, sr, allow_zero=True)
        if first >= source.frames:
            raise ParameterError(f"--start {start} is at or beyond the end ({source.frames} samples)")
        count = duration_option("--dur", dur, sr) if dur is not None else source.frames - first
        if count > source.frames - first:
            warnings.warn(
                f"{source.name}: --dur {dur} ({count} samples) runs past the end; "
                f"using the {source.frames - first} samples that exist",
                stacklevel=1,
            )
        signal = source.read(start=first, frames=count)
    x = signal.samples
    labels = list(range(x.shape[0]))
    if mix:
        x, labels = x.mean(axis=0, keepdims=True), ["mix"]
    elif channel is not None:
        if channel >= x.shape[0]:
            raise ParameterError(f"--channel {channel}: the input has {x.shape[0]} channel(s) (0..{x.shape[0] - 1})")
        x, labels = x[channel : channel + 1], [channel]
    n = x.shape[1]
    n_fft = duration_option("--nfft", nfft, sr) if nfft is not None else n
    if n_fft < n:
        raise ParameterError(f"--nfft: {n_fft} is shorter than the segment ({n} samples)")
    xlim = _display_range(fmin, fmax, sr / 2 if not two_sided else sr)
    spec = spectrum(x, sr=sr, window=spec_window.get(n, periodic=not symmetric), n_fft=n_fft, backend=fft)
    separation = frequency_option("--min-sep", min_sep) if min_sep is not None else None
    found = [
        find_peaks(spec.channel(i), k=peaks, threshold_db=-threshold, min_separation_hz=separation) if peaks else []
        for i in range(len(labels))
    ]
    report = {
        "path": source.name,
        "sr": sr,
        "start_s": first / sr,
        "n": n,
        "n_fft": n_fft,
        "df": spec.delta_f,
        "nyquist": spec.nyquist,
        "window": f"{spec_window}{'' if not symmetric else ' (symmetric)'}",
        "channels": [
            {"channel": label, "peaks": [_peak_json(p, phase) for p in channel_peaks]}
            for label, channel_peaks in zip(labels, found)
        ],
    }
    if npy is not None:
        _save_npy(npy, spec, phase, report)
    if output is not None:
        _draw(output, spec, found, report, linear=linear, two_sided=two_sided, size=size, xlim=xlim)
    if json_out:
        print(json.dumps(report, indent=2))
    elif output != "-":  # with -o -, stdout holds the PNG bytes only
        _print_report(report, phase)
        for path in (output, npy):
            if path is not None and path != "-":
                console.info(f"wrote {path}")
    return 0


def _peak_json(peak, with_phase: bool) -> dict:
    item = {
        "freq_hz": round(peak.freq_hz, 6),
        "amplitude": float(f"{peak.amplitude:.9g}"),
        "dbfs": round(peak.dbfs, 4) + 0.0,  # no "-0.0" for a full-scale tone
        "bin": round(peak.bin, 6),
    }
    if with_phase:
        item["phase"] = round(peak.phase, 6)
    return item


def _print_report(report: dict, with_phase: bool) -> None:
    head = (
        f"{report['path']}: N = {report['n']} samples (n_fft {report['n_fft']}), sr {report['sr']} Hz, "
        f"Δf = {report['df']:.6g} Hz, Nyquist {report['nyquist']:g} Hz, window {report['window']}"
    )
    columns = ["channel", "freq Hz", "amplitude", "dBFS", "bin"] + (["phase rad"] if with_phase else [])
    rows = []
    for entry in report["channels"]:
        for peak in entry["peaks"]:
            row = [str(entry["channel"]), f"{peak['freq_hz']:.4f}", f"{peak['amplitude']:.6g}", f"{peak['dbfs']:.2f}", f"{peak['bin']:.3f}"]
            rows.append(row + ([f"{peak['phase']:.4f}"] if with_phase else []))
    console.print_table(head, columns, rows)


def _save_npy(path: str, spec, with_phase: bool, report: dict) -> None:
    import io

    rows = [np.broadcast_to(spec.freqs, spec.amplitude.shape), spec.amplitude] + ([spec.phase] if with_phase else [])
    data = np.stack(rows, axis=-2).astype(np.float64)
    if data.shape[0] == 1:
        data = data[0]
    buffer = io.BytesIO()
    np.save(buffer, data)
    write_bytes_atomic(path, buffer.getvalue())
    from .. import __version__

    meta = {key: report[key] for key in ("path", "sr", "start_s", "n", "n_fft", "df", "nyquist", "window")}
    meta.update(
        kind="spectrum",
        audiokit_version=__version__,
        shape=list(data.shape),
        dtype="float64",
        layout="(rows, n_bins)" if data.ndim == 2 else "(channels, rows, n_bins)",
        rows=["freq_hz", "amplitude"] + (["phase_rad"] if with_phase else []),
        amplitude="one-sided: |X[k]| * 2 / sum(w) (1 / sum(w) at DC and Nyquist); a sine of amplitude A reads A",
        phase="angle of X[k] in radians (cosine phase relative to the segment start)",
        freq_hz="k * sr / n_fft",
    )
    write_sidecar(path, meta)


def _display_range(fmin: str | None, fmax: str | None, top: float) -> tuple[float, float] | None:
    """The PNG's frequency range from --fmin/--fmax (None: everything)."""
    if fmin is None and fmax is None:
        return None
    low = frequency_option("--fmin", fmin) if fmin is not None else 0.0
    high = frequency_option("--fmax", fmax) if fmax is not None else top
    if high <= low:
        raise ParameterError(f"--fmin {low:g} Hz must be below --fmax {high:g} Hz")
    return low, high


def _draw(path: str, spec, found, report: dict, *, linear: bool, two_sided: bool, size: str, xlim=None) -> None:
    from ..plot import parse_size, png_bytes, spectrum_figure

    amplitude = spec.amplitude
    freqs = spec.freqs
    if two_sided:
        # 0..fs: the upper half is the mirror X[N-k] = conj(X[k]); two-sided amplitude |X|/sum(w)
        mirror = spec.magnitude[..., 1 : spec.n_fft - spec.n_bins + 1][..., ::-1]
        magnitude = np.concatenate([spec.magnitude, mirror], axis=-1)
        amplitude = magnitude / spec.window_sum
        freqs = np.arange(spec.n_fft) * spec.delta_f
    values = amplitude if linear else 20 * np.log10(np.maximum(amplitude, 1e-10))
    marks = []
    for channel_peaks in found:
        for peak in channel_peaks:
            value = peak.amplitude if linear else peak.dbfs
            if two_sided and 0 < peak.freq_hz < spec.nyquist:  # DC and Nyquist have no mirror to share with
                value = value / 2 if linear else value - 20 * math.log10(2)
            marks.append((peak.freq_hz, value, f"{peak.freq_hz:.2f} Hz, {round(peak.dbfs, 1) + 0.0:.1f} dBFS"))
            if two_sided and 0 < peak.freq_hz < spec.nyquist:
                marks.append((report["sr"] - peak.freq_hz, value, f"mirror of {peak.freq_hz:.2f} Hz"))
    name = Path(report["path"]).name if report["path"] != "-" else "stdin"
    title = (
        f"{name} — N {report['n']}, n_fft {report['n_fft']}, sr {report['sr']} Hz, Δf {report['df']:.4g} Hz, "
        f"window {report['window']}" + (" — two-sided" if two_sided else "")
    )
    fig = spectrum_figure(
        freqs, values, title=title, nyquist=spec.nyquist, peaks=marks, two_sided=two_sided, size=parse_size(size),
        ylabel="amplitude (linear, 1 = full scale)" if linear else "amplitude (dBFS)",
        floor=None if linear else float(np.max(values)) - DB_RANGE, xlim=xlim,
    )
    write_bytes_atomic(path, png_bytes(fig))

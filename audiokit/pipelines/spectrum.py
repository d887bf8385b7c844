"""The ``spectrum`` job: the one-sided DFT of a whole signal or a segment, its fitted peaks, .npy and PNG."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, ParameterError
from ..io import check_distinct, check_output_path, outputs_together
from ..io.npy import save_npy, sidecar_path
from ..plot.spectrum import DB_RANGE
from .params import (
    LONGEST_SIGNAL_S,
    PLAUSIBLE_SIGNAL_S,
    InputOptions,
    check_channel,
    check_channel_of,
    check_figure_path,
    check_syntax,
    duration_samples,
    frequency_hz,
)
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts, no_outputs
from .sidecar import provenance

__all__ = ["SPECTRUM_SPEC", "SpectrumOptions", "check_options", "spectrum_file", "DB_RANGE"]

#: Source subtypes whose samples float32 holds exactly (<= 24-bit codes, float32 itself).
_EXACT_IN_FLOAT32 = frozenset({"PCM_U8", "PCM_S8", "PCM_16", "PCM_24", "FLOAT"})


@dataclass(frozen=True)
class SpectrumOptions:
    """Options of ``audiokit spectrum`` as typed (durations ``1.5s``/samples, frequencies ``100Hz``)."""

    start: str = "0"
    dur: str | None = None
    window: str = "hann"
    symmetric: bool = False
    nfft: str | None = None
    peaks: int = 5
    threshold: float = 60.0
    min_sep: str | None = None
    phase: bool = False
    linear: bool = False
    two_sided: bool = False
    size: str = "1200x500"
    fmin: str | None = None
    fmax: str | None = None
    channel: int | None = None
    mix: bool = False
    fft: str | None = None


def _peak_json(peak: Any, with_phase: bool) -> dict[str, Any]:
    item = {
        "freq_hz": round(peak.freq_hz, 6),
        "amplitude": float(f"{peak.amplitude:.9g}"),
        "dbfs": round(peak.dbfs, 4) + 0.0,  # no "-0.0" for a full-scale tone
        "bin": round(peak.bin, 6),
    }
    if with_phase:
        item["phase"] = round(peak.phase, 6)
    item["method"] = peak.method  # the exact-transform fit, or the fallback that replaced an implausible one
    return item


def check_options(options: SpectrumOptions) -> None:
    """Rate-free checks of the options (exit 2 before the input is read): spelling, channel, threshold."""
    check_syntax(
        durations={"--dur": options.dur, "--nfft": options.nfft},
        zero_durations={"--start": options.start},
        frequencies={"--min-sep": options.min_sep, "--fmin": options.fmin, "--fmax": options.fmax},
        window=options.window,
    )
    check_channel(options.channel, options.mix)
    if not options.threshold >= 0:
        raise ParameterError(f"--threshold: {options.threshold!r} must be a number of dB >= 0 (below the strongest peak)")


def _check_outputs(path: str, png: str | None, npy: str | None) -> None:
    for out in (png, npy):
        if out is not None:
            check_output_path(out, [path])
    if npy is not None:
        if not npy.endswith(".npy") or npy == "-":
            raise ParameterError(f"--npy: {npy!r} must be a file path ending in .npy")
        check_output_path(sidecar_path(npy), [path])
    check_distinct({"-o": png, "--npy": npy, "the sidecar of --npy": npy and sidecar_path(npy)})
    check_figure_path(png)


def spectrum_file(
    path: str,
    options: SpectrumOptions = SpectrumOptions(),
    *,
    png: str | None = None,
    npy: str | None = None,
    inputs: InputOptions = InputOptions(),
    reporter: Reporter = SILENT,
) -> JobResult:
    """DFT of ``path`` (or its ``start``/``dur`` segment); save ``npy``, draw ``png``.

    Returns the ``--json`` report (``.report``) with the facts of the input as opened (``.source``).
    """
    from ..dsp.dft import spectrum
    from ..dsp.peaks import find_peaks
    from ..dsp.windows import parse_window_spec

    check_options(options)
    spec_window = parse_window_spec(options.window)
    with inputs.open(path) as source:
        _check_outputs(path, png, npy)
        sr = source.sr
        first = duration_samples("--start", options.start, sr, allow_zero=True)
        if first >= source.n_samples:
            raise ParameterError(f"--start {options.start} is at or beyond the end ({source.n_samples} samples)")
        count = (
            duration_samples("--dur", options.dur, sr, plausible_s=PLAUSIBLE_SIGNAL_S, longest_s=LONGEST_SIGNAL_S)
            if options.dur is not None
            else source.n_samples - first
        )
        if count > source.n_samples - first:
            warnings.warn(
                f"{source.name}: --dur {options.dur} ({count} samples) runs past the end; "
                f"using the {source.n_samples - first} samples that exist",
                stacklevel=2,
            )
        check_channel_of(options.channel, source)
        # float32 holds <= 24-bit PCM and FLOAT samples exactly: half the memory of float64 for a long segment
        exact32 = source.subtype in _EXACT_IN_FLOAT32
        signal = source.read(start=first, n_samples=count, dtype="float32" if exact32 else "float64")
    x = signal.samples
    del signal
    labels: list[int | str] = list(range(x.shape[0]))
    if options.mix:
        x, labels = x.mean(axis=0, dtype=np.float64, keepdims=True), ["mix"]
    elif options.channel is not None:
        x, labels = x[options.channel : options.channel + 1], [options.channel]
    n = x.shape[1]
    n_fft = duration_samples("--nfft", options.nfft, sr) if options.nfft is not None else n
    if n_fft < n:
        raise ParameterError(f"--nfft: {n_fft} is shorter than the segment ({n} samples)")
    xlim = _display_range(options.fmin, options.fmax, sr / 2 if not options.two_sided else sr)
    window = spec_window.get(n, periodic=not options.symmetric)
    separation = frequency_hz("--min-sep", options.min_sep) if options.min_sep is not None else None
    spectra, found = [], []
    # One channel at a time, in float64: memory stays near the segment's float32 size plus a few channel-sized arrays.
    with reporter.progress(f"spectrum {source.name}", len(labels)) as advance:
        for row in range(len(labels)):
            x_c = x[row].astype(np.float64)
            # Huge float samples are analysed scaled by an exact power of two (the fit squares |X|), then scaled back.
            exponent = _scale_exponent(x_c)
            if exponent:
                x_c = np.ldexp(x_c, -exponent)
            spec = spectrum(x_c, sr=sr, window=window, n_fft=n_fft, backend=options.fft)
            del x_c
            peaks = (
                find_peaks(spec, k=options.peaks, threshold_db=-options.threshold, min_separation_hz=separation)
                if options.peaks
                else []
            )
            if exponent:
                spec, peaks = _unscaled(spec, peaks, exponent, source.name)
            spectra.append(spec)
            found.append(peaks)
            advance(1)
    del x
    spec = spectra[0]
    report = {
        "path": source.name,
        "sr": sr,
        "start_s": first / sr,
        "n": n,
        "n_fft": n_fft,
        "df": spec.delta_f,
        "nyquist": spec.nyquist,
        "window": f"{spec_window}{'' if not options.symmetric else ' (symmetric)'}",
        "channels": [
            {"channel": label, "peaks": [_peak_json(p, options.phase) for p in channel_peaks]}
            for label, channel_peaks in zip(labels, found)
        ],
    }
    with outputs_together():
        if npy is not None:
            _save_npy(npy, spectra, options.phase, report, options.fft)
        if png is not None:
            from ..plot.spectrum import draw_spectrum

            draw_spectrum(png, spectra, found, report, options, xlim)
    return JobResult(SourceFacts.of(source), report=report)


#: Largest sample magnitude analysed as is (2**64 full scale): beyond it the peak fit's squares could overflow.
SAFE_PEAK = float(2**64)


def _scale_exponent(x: np.ndarray) -> int:
    """0 for ordinary signals; else the power of two ``e`` such that ``x·2**-e`` peaks at about 1."""
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    return int(np.frexp(peak)[1]) if peak > SAFE_PEAK else 0


def _unscaled(spec: Any, peaks: list[Any], exponent: int, name: str) -> tuple[Any, list[Any]]:
    """Undo :func:`_scale_exponent`'s scaling on one channel's spectrum and peaks (exact: a power of two)."""
    with np.errstate(over="ignore"):
        X = spec.X * 2.0**exponent  # exact: a power of two
    if not np.isfinite(X).all():
        raise InputError("the input's values are too large: its spectrum exceeds the float64 range (scale it down)", name)
    gain_db = 20.0 * exponent * math.log10(2.0)
    peaks = [dataclasses.replace(p, amplitude=p.amplitude * 2.0**exponent, dbfs=p.dbfs + gain_db) for p in peaks]
    return dataclasses.replace(spec, X=X), peaks


def _save_npy(path: str, spectra: list[Any], with_phase: bool, report: dict[str, Any], fft: str | None) -> None:
    """Rows ``[freq_hz, amplitude(, phase)]`` per channel, float64, with the sidecar (filled channel by channel)."""
    n_rows = 3 if with_phase else 2
    data = np.empty((len(spectra), n_rows, spectra[0].n_bins), dtype=np.float64)
    for c, spec in enumerate(spectra):
        data[c, 0] = spec.freqs
        data[c, 1] = spec.amplitude
        if with_phase:
            data[c, 2] = spec.phase
    if data.shape[0] == 1:
        data = data[0]
    meta = {key: report[key] for key in ("path", "sr", "start_s", "n", "n_fft", "df", "nyquist", "window")}
    meta.update(
        kind="spectrum",
        **provenance(fft),
        shape=list(data.shape),
        dtype="float64",
        layout="(rows, n_bins)" if data.ndim == 2 else "(channels, rows, n_bins)",
        rows=["freq_hz", "amplitude"] + (["phase_rad"] if with_phase else []),
        amplitude="one-sided: |X[k]| * 2 / sum(w) (1 / sum(w) at DC and Nyquist); a sine of amplitude A reads A",
        phase="angle of X[k] in radians (cosine phase relative to the segment start)",
        freq_hz="k * sr / n_fft",
    )
    save_npy(path, data, meta)


def _display_range(fmin: str | None, fmax: str | None, top: float) -> tuple[float, float] | None:
    """The PNG's frequency range from --fmin/--fmax (None: everything)."""
    if fmin is None and fmax is None:
        return None
    low = frequency_hz("--fmin", fmin) if fmin is not None else 0.0
    high = frequency_hz("--fmax", fmax) if fmax is not None else top
    if high <= low:
        raise ParameterError(f"--fmin {low:g} Hz must be below --fmax {high:g} Hz")
    return low, high


def _run(path: str, outputs: Mapping[str, str], options: SpectrumOptions, inputs: InputOptions) -> JobResult:
    return spectrum_file(path, options, inputs=inputs)


#: The registry's spec of ``spectrum`` (:mod:`audiokit.pipelines.registry`): the ``--json`` report per input.
SPECTRUM_SPEC = JobSpec(name="spectrum", options=SpectrumOptions, check=check_options, outputs=no_outputs, run=_run, reports=True)

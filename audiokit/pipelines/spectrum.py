"""The ``spectrum`` job: the one-sided DFT of a whole signal or a segment, its fitted peaks, .npy and PNG."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, ParameterError
from ..io import check_distinct, check_output_path, outputs_together
from ..io.npy import NpyFrameWriter, sidecar_path, write_sidecar
from ..plot.spectrum import DB_RANGE, MAX_LINES, draw_spectrum, spectrum_line
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

__all__ = ["SPECTRUM_SPEC", "MAX_DFT_SAMPLES", "SpectrumOptions", "check_dft_size", "check_options", "spectrum_file", "DB_RANGE"]

#: Longest DFT (samples per channel: the segment, or ``--nfft``).  The whole-segment DFT needs the segment, its
#: window and its spectrum in memory at once (about 40 bytes per sample with the peak fit, the .npy rows and the
#: PNG); 2**22 (87 s at 48 kHz) keeps a run under the 300 MiB the guide sets.  Longer: refused (exit 3).
MAX_DFT_SAMPLES = 1 << 22
#: Samples (float64, all channels of a group) read per pass over the segment: 32 MiB.
_GROUP_SAMPLES = 1 << 22
#: Bytes of one block read (all channels, float64), and the fewest frames a block holds.
_BLOCK_BYTES = 1 << 23
_MIN_BLOCK = 1 << 10
#: Spectrum bins (all channels) and channels whose peak searches finish together: at most 8 MiB of complex128
#: spectra and 256 searches' state.
_PEAK_BATCH_BINS = 1 << 19
_PEAK_BATCH_CHANNELS = 256


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
        n = min(count, source.n_samples - first)
        n_fft = duration_samples("--nfft", options.nfft, sr) if options.nfft is not None else n
        if n_fft < n:
            raise ParameterError(f"--nfft: {n_fft} is shorter than the segment ({n} samples)")
        check_dft_size(n, n_fft, sr, source.name)
        xlim = _display_range(options.fmin, options.fmax, sr / 2 if not options.two_sided else sr)
        window = spec_window.get(n, periodic=not options.symmetric)
        separation = frequency_hz("--min-sep", options.min_sep) if options.min_sep is not None else None
        labels: list[int | str] = (
            ["mix"] if options.mix else [options.channel] if options.channel is not None else list(range(source.channels))
        )
        report: dict[str, Any] = {
            "path": source.name,
            "sr": sr,
            "start_s": first / sr,
            "n": n,
            "n_fft": n_fft,
            "df": sr / n_fft,  # Spectrum.delta_f
            "nyquist": sr / 2,  # Spectrum.nyquist
            "window": f"{spec_window}{'' if not options.symmetric else ' (symmetric)'}",
        }
        found: list[list[Any]] = []
        lines: list[tuple[np.ndarray, np.ndarray, float]] = []
        with outputs_together(), contextlib.ExitStack() as stack:
            rows = stack.enter_context(_NpyRows(npy, len(labels), options.phase, n_fft)) if npy is not None else None
            # Channels read in groups, analysed in batches of _PEAK_BATCH_BINS bins, in float64: memory is a group's
            # samples plus a batch's DFTs and fits, whatever the channel count; only the PNG's lines and the peaks are kept.
            analysed = _analysed(source, first, n, options, window=window, n_fft=n_fft, separation=separation)
            with reporter.progress(f"spectrum {source.name}", len(labels)) as advance:
                for spec, peaks in analysed:
                    found.append(peaks)
                    if rows is not None:
                        rows.write(spec)
                    if png is not None and len(lines) < MAX_LINES:
                        lines.append(spectrum_line(spec, options, xlim))
                    del spec
                    advance(1)
            report["channels"] = [
                {"channel": label, "peaks": [_peak_json(p, options.phase) for p in channel_peaks]}
                for label, channel_peaks in zip(labels, found)
            ]
            if rows is not None:
                rows.finish(report, options.fft)
            if png is not None:
                draw_spectrum(png, lines, found, report, options, xlim, n_channels=len(labels))
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


class _NpyRows:
    """The ``--npy`` array, rows ``[freq_hz, amplitude(, phase)]`` float64, written channel by channel.

    Shape ``(rows, n_bins)`` for one channel, else ``(channels, rows, n_bins)``
    (C order, as ``np.save`` writes it): one channel's rows are in memory at a
    time.  :meth:`finish` writes the sidecar.
    """

    def __init__(self, path: str, n_channels: int, with_phase: bool, n_fft: int):
        self.path = path
        self.with_phase = with_phase
        n_rows, n_bins = 3 if with_phase else 2, n_fft // 2 + 1
        self.shape = (n_rows, n_bins) if n_channels == 1 else (n_channels, n_rows, n_bins)
        # NpyFrameWriter in time-major mode writes the reversed axes in C order: (n_bins, rows[, channels]) -> shape.
        self._writer = NpyFrameWriter(path, self.shape[::-1], np.float64, time_major=True)

    def __enter__(self) -> _NpyRows:
        self._writer.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> bool:
        return self._writer.__exit__(*exc_info)

    def write(self, spec: Any) -> None:
        """Append one channel's rows."""
        rows = np.empty(self.shape[-2:], dtype=np.float64)
        rows[0] = spec.freqs
        rows[1] = spec.amplitude
        if self.with_phase:
            rows[2] = spec.phase
        self._writer.write(rows.T if len(self.shape) == 2 else rows.T[:, :, None])

    def finish(self, report: dict[str, Any], fft: str | None) -> None:
        """Write the JSON sidecar (after the last channel)."""
        meta = {key: report[key] for key in ("path", "sr", "start_s", "n", "n_fft", "df", "nyquist", "window")}
        meta.update(
            kind="spectrum",
            **provenance(fft),
            shape=list(self.shape),
            dtype="float64",
            layout="(rows, n_bins)" if len(self.shape) == 2 else "(channels, rows, n_bins)",
            rows=["freq_hz", "amplitude"] + (["phase_rad"] if self.with_phase else []),
            amplitude="one-sided: |X[k]| * 2 / sum(w) (1 / sum(w) at DC and Nyquist); a sine of amplitude A reads A",
            phase="angle of X[k] in radians (cosine phase relative to the segment start)",
            freq_hz="k * sr / n_fft",
        )
        write_sidecar(self.path, meta)


def check_dft_size(n: int, n_fft: int, sr: float, name: str) -> None:
    """Refuse a DFT longer than :data:`MAX_DFT_SAMPLES`: InputError for a long segment, ParameterError for ``--nfft``."""
    if n_fft <= MAX_DFT_SAMPLES:
        return
    limit = f"{MAX_DFT_SAMPLES} samples per channel ({MAX_DFT_SAMPLES / sr:.4g} s at {sr:g} Hz)"
    if n > MAX_DFT_SAMPLES:
        raise InputError(
            f"the segment has {n} samples per channel; the whole-segment DFT holds at most {limit} in memory: "
            "choose a segment with --start/--dur, or use spectrogram for a long signal",
            name,
        )
    raise ParameterError(f"--nfft: {n_fft} is beyond the longest DFT, {limit}: choose a smaller --nfft")


def _read_group(source: Any, first: int, n: int, channels: range) -> np.ndarray:
    """Channels ``channels`` of the segment in float64, shape (len(channels), n): one pass, block by block."""
    out = np.empty((len(channels), n), dtype=np.float64)
    filled = 0
    block = max(_MIN_BLOCK, _BLOCK_BYTES // (8 * source.channels))
    for data in source.blocks(block, dtype="float64", start=first, n_samples=n):
        out[:, filled : filled + data.shape[1]] = data[channels.start : channels.stop]
        filled += data.shape[1]
    _check_filled(filled, n, source.name)
    return out


def _read_mix(source: Any, first: int, n: int) -> np.ndarray:
    """The mean of the channels over the segment, float64 (the mean of each frame, as ``x.mean(axis=0)``)."""
    out = np.empty(n, dtype=np.float64)
    filled = 0
    block = max(_MIN_BLOCK, _BLOCK_BYTES // (8 * source.channels))
    for data in source.blocks(block, dtype="float64", start=first, n_samples=n):
        out[filled : filled + data.shape[1]] = data.mean(axis=0, dtype=np.float64)
        filled += data.shape[1]
    _check_filled(filled, n, source.name)
    return out


def _check_filled(filled: int, n: int, name: str) -> None:
    if filled < n:
        raise InputError(f"ends after {filled} of the {n} samples per channel its header declares (truncated?)", name)


def _channel_samples(source: Any, first: int, n: int, options: SpectrumOptions) -> Iterator[np.ndarray]:
    """Each analysed channel's samples, float64 shape (n,): the mix, the one ``--channel``, or every channel.

    Channels are read in groups of about :data:`_GROUP_SAMPLES` samples, one
    pass over the segment per group (samples are exact in float64 for every
    subtype), so memory does not grow with the channel count.
    """
    if options.mix:
        yield _read_mix(source, first, n)
        return
    channels = range(options.channel, options.channel + 1) if options.channel is not None else range(source.channels)
    group = max(1, _GROUP_SAMPLES // max(n, 1))
    for start in range(channels.start, channels.stop, group):
        if group == 1:  # a long channel: the caller holds its only reference, and frees it after the DFT
            yield _read_group(source, first, n, range(start, start + 1))[0]
            continue
        samples = _read_group(source, first, n, range(start, min(start + group, channels.stop)))
        yield from samples
        del samples


def _analysed(
    source: Any, first: int, n: int, options: SpectrumOptions, *, window: np.ndarray, n_fft: int, separation: float | None
) -> Iterator[tuple[Any, list[Any]]]:
    """Each analysed channel's ``Spectrum`` and peaks, in channel order.

    Each channel's peak search starts as its spectrum is computed (its
    warnings come in channel order) and the searches of a batch of channels
    (about :data:`_PEAK_BATCH_BINS` bins, at most :data:`_PEAK_BATCH_CHANNELS`) finish
    together (:func:`~audiokit.dsp.peaks._find_peaks_together`: their
    least-squares problems solved in batched calls, each with the bits
    ``find_peaks`` of the channel alone gives).
    """
    from ..dsp.dft import spectrum
    from ..dsp.peaks import _PeakSearch

    batch: list[tuple[Any, int, _PeakSearch | None]] = []
    held = 0
    for x_c in _channel_samples(source, first, n, options):
        # Huge float samples are analysed scaled by an exact power of two (the fit squares |X|), then back.
        exponent = _scale_exponent(x_c)
        if exponent:
            x_c = np.ldexp(x_c, -exponent)
        spec = spectrum(x_c, sr=source.sr, window=window, n_fft=n_fft, backend=options.fft, overwrite_x=True)
        del x_c
        search = (
            _PeakSearch(spec, k=options.peaks, threshold_db=-options.threshold, min_separation_hz=separation)
            if options.peaks
            else None
        )
        batch.append((spec, exponent, search))
        held += spec.X.size
        del spec
        if held >= _PEAK_BATCH_BINS or len(batch) >= _PEAK_BATCH_CHANNELS:
            yield from _finished(batch, source.name)
            held = 0
    yield from _finished(batch, source.name)


def _finished(batch: list[tuple[Any, int, Any]], name: str) -> Iterator[tuple[Any, list[Any]]]:
    """Finish the searches of ``batch`` together; yield each channel's spectrum (unscaled) and peaks, emptying it."""
    from ..dsp.peaks import _find_peaks_together

    found = iter(_find_peaks_together([search for _, _, search in batch if search is not None]))
    while batch:
        spec, exponent, search = batch.pop(0)  # the batch lets go of each spectrum as it is handed over
        peaks = next(found) if search is not None else []
        if exponent:
            spec, peaks = _unscaled(spec, peaks, exponent, name)
        yield spec, peaks
        del spec


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

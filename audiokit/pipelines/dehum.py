"""The ``dehum`` job: find the mains hum, remove it, write the cleaned WAV (and what was removed).

The core (:mod:`audiokit.dsp.hum`) does the maths; this job reads the input
block by block for the analysis passes, streams the removal
(:class:`~audiokit.dsp.hum.HumRemover`) into a WAV writer, measures the lines
left in the output and returns the report.

Conventions (also in README "audiokit dehum")
---------------------------------------------
* Passes over the input: 3 (analysis) + 1 (removal) + 1 more with
  ``normalize``.  Standard input is spooled by the reader, so it can be read
  several times.  Memory does not grow with the length of the input: the
  per-frame arrays of the analysis (~18 kB per second per channel) beyond
  1 MiB each live in temporary files (:mod:`audiokit.dsp.hum.spill`, in
  ``TMPDIR``; no room there is exit 4).
* Output: same rate, channels and subtype as the input unless ``subtype``;
  default path ``<stem>.dehum.wav`` beside the input.
* ``residual`` gets ``input - output`` computed in float64 before the output
  is encoded (and before the ``normalize`` gain).
* Beyond full scale: :mod:`audiokit.pipelines.fullscale`.  Beyond
  :data:`DEHUM_SAFE_PEAK` (2**32, +192.7 dBFS) the input is refused (exit 3):
  the hum model demodulates in single precision, whose powers overflow
  (from a peak of 2**55..2**59) and whose f0 estimate then goes wrong.
* Levels are dB re a full-scale sine (peak amplitude 1.0 = 0 dB), read with
  1 s frames at each line; ``null`` in JSON stands for ``-inf``.
* The hum estimates (``hum`` and the per-harmonic ``hum_*_db``) are the
  hum-coherent power at every line considered (:class:`~audiokit.dsp.hum.HumLevels`):
  the 1 s frame amplitudes averaged over the analysis' span with its
  weights, in the input (``before``, the floor taken off), in what was
  removed (``removed``), in the output (``remaining``, never below the
  ``floor``), and what was removed at the lines that is not locked to the
  mains (``other_removed``: the signal ``erase`` cuts).  The same statistic
  for both methods.  With no hum found, ``f0_hz`` (and its range) is ``null``.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dsp.hum import DEFAULT_THRESHOLD_DB, METHODS, HumAnalysis, HumLevels, HumMeter, HumRemover, analyze_hum_blocks, hum_levels
from ..dsp.hum.track import CHANNEL_GROUP
from ..dsp.levels import dbfs
from ..dsp.resample import measure_overshoot
from ..errors import InputError, ParameterError
from ..io import WavWriter, check_distinct, check_output_path, derived_output, is_stdio, outputs_together
from ..io.reader import BLOCK_SAMPLES, AudioSource
from ..io.subtypes import resolve_subtype
from ..io.writer import audio_container
from .fullscale import FullScaleGuard
from .params import InputOptions, check_syntax, duration_samples, finite_or_none, frequency_hz
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts

__all__ = ["DEHUM_SAFE_PEAK", "DEHUM_SPEC", "DehumOptions", "check_options", "DehumResult", "dehum_file", "parse_freq"]

#: The largest sample magnitude (full-scale units) dehum takes: its hum model demodulates in float32, whose powers
#: overflowed (and f0 went wrong) from a peak between 2**55 and 2**59 on a 3 s, 8 kHz hum; 2**32 leaves a wide margin.
DEHUM_SAFE_PEAK = float(2**32)

_MIN_BLOCK_SAMPLES = 1024  # the shortest block (samples per channel) of a very wide input

#: Decimal places of levels (dB) and frequencies (Hz) in the JSON report.
_DB_DIGITS, _HZ_DIGITS = 3, 4


@dataclass(frozen=True)
class DehumOptions:
    """Options of ``audiokit dehum`` as typed (``freq`` ``"50"``/``"auto"``, ``win`` ``"1s"``, ``width`` ``"4Hz"``)."""

    freq: str = "auto"
    method: str = "subtract"
    harmonics: int | None = None
    threshold: float = DEFAULT_THRESHOLD_DB
    width: str | None = None
    win: str | None = None
    subtype: str | None = None
    normalize: bool = False


@dataclass(frozen=True)
class DehumResult:
    """The written paths (``output`` may be ``-``), the report (the ``--json`` object) and its one-line summary."""

    output: str
    residual: str | None
    report: dict[str, Any]
    summary: str
    source: SourceFacts


def parse_freq(text: str) -> float | None:
    """``--freq``: ``auto`` -> None, else a frequency in Hz (``50``, ``60Hz``, ``16.7``)."""
    if text.strip().lower() == "auto":
        return None
    try:
        return frequency_hz("--freq", text)
    except ParameterError:
        raise ParameterError(f"--freq: invalid value {text!r}: use 50, 60, another frequency such as 16.7Hz, or auto") from None


def _total_db(levels: np.ndarray, mask: np.ndarray) -> list[float | None]:
    """Total power of the masked harmonics per channel, in dB (None when nothing is masked)."""
    out: list[float | None] = []
    for lv, m in zip(levels, mask, strict=True):
        if not m.any():
            out.append(None)
            continue
        p = np.sum(10.0 ** (lv[m] / 10.0))
        out.append(finite_or_none(10.0 * math.log10(p), _DB_DIGITS) if p > 0 else None)
    return out


def _levels(values: np.ndarray) -> list[float | None]:
    return [finite_or_none(v, _DB_DIGITS) for v in values]


def _hum_totals(levels: HumLevels) -> dict[str, list[float | None]]:
    """Per channel, summed over the harmonics considered: the ``hum`` object of the report (dB)."""
    names = ("before", "removed", "remaining", "other_removed", "floor")
    return {f"{name}_db": _levels(levels.total_db(name)) for name in names}


def build_report(
    analysis: HumAnalysis,
    after_db: np.ndarray,
    *,
    source: AudioSource,
    target: str,
    residual: str | None,
    method: str,
    remover: HumRemover,
    gain: float,
    peak: float,
    levels: HumLevels,
) -> dict[str, Any]:
    """The ``--json`` object (see the README for its fields)."""
    a = analysis
    found = a.found
    track = a.f0_track if a.times.size and found else np.zeros(0)
    dropped = a.dropped if a.dropped is not None else np.zeros(a.treated.shape, bool)
    harmonics = [
        {
            "k": int(k),
            "freq_hz": round(float(k) * a.f0, _HZ_DIGITS),
            "treated": [bool(t) for t in a.treated[:, i]],
            "dropped": [bool(t) for t in dropped[:, i]],
            "level_db": _levels(a.level_db[:, i]),
            "after_db": _levels(after_db[:, i]),
            "floor_db": _levels(a.floor_db[:, i]),
            "snr_db": _levels(a.snr_db[:, i]),
            "span_s": [float(v) for v in a.span_s[:, i]],
            "hum_before_db": _levels(levels.db("before")[:, i]),
            "hum_removed_db": _levels(levels.db("removed")[:, i]),
            "hum_remaining_db": _levels(levels.db("remaining")[:, i]),
            "other_removed_db": _levels(levels.db("other_removed")[:, i]),
            "hum_floor_db": _levels(levels.db("floor")[:, i]),
        }
        for i, k in enumerate(a.harmonics)
    ]
    out: dict[str, Any] = {
        "input": source.name,
        "output": target,
        "residual": residual,
        "method": method,
        "sr": a.sr,
        "channels": a.channels,
        "frames": a.n_samples,
        "duration_s": a.n_samples / a.sr,
        "nominal_hz": a.nominal,
        "auto": a.auto,
        "search_hz": [round(a.search[0], _HZ_DIGITS), round(a.search[1], _HZ_DIGITS)],
        "found": found,
        "f0_hz": round(a.f0, _HZ_DIGITS) if a.times.size and found else None,
        "f0_min_hz": round(float(track.min()), _HZ_DIGITS) if track.size else None,
        "f0_max_hz": round(float(track.max()), _HZ_DIGITS) if track.size else None,
        "threshold_db": a.threshold_db,
        "harmonics_considered": len(a.harmonics),
        "treated": list(a.treated_harmonics),
        "dropped": [int(k) for k in a.harmonics[dropped.any(axis=0)]] if len(a.harmonics) else [],
        "tracked": list(a.tracked),
        "hum_db": {"before": _total_db(a.level_db, a.treated), "after": _total_db(after_db, a.treated)},
        "hum": _hum_totals(levels),
        "harmonics": harmonics,
        "gain_db": round(dbfs(gain), _DB_DIGITS),
        "peak_dbfs": finite_or_none(dbfs(peak), _DB_DIGITS),
    }
    if remover.eraser is not None:
        out["erase"] = {"win_s": remover.eraser.win_length / a.sr, "width_hz": remover.eraser.width_hz}
    return out


def _db_text(value: float | None) -> str:
    return "-inf" if value is None else f"{value:.1f}"


def summary(analysis: HumAnalysis, levels: HumLevels) -> str:
    """One line: f0 and its range, harmonics treated, the hum before -> remaining per channel (no f0 when none found)."""
    a = analysis
    where = "near 50 or 60 Hz" if a.auto else f"near {a.nominal:g} Hz"
    if not len(a.harmonics):
        return f"hum: not measured {where}: output = input"
    if not a.found:
        why = f"no harmonic {a.threshold_db:g} dB above its noise that removal would lower"
        return f"hum: none found {where} ({why}): output = input"
    track = a.f0_track
    head = f"hum: f0 {a.f0:.3f} Hz ({track.min():.3f}..{track.max():.3f} Hz)"
    totals = _hum_totals(levels)
    per_channel = ", ".join(
        f"{_db_text(b)} -> {_db_text(r)} dB" + (f" (other removed {_db_text(o)} dB)" if o is not None else "")
        for b, r, o in zip(totals["before_db"], totals["remaining_db"], totals["other_removed_db"], strict=True)
    )
    ks = a.treated_harmonics
    return f"{head}; treated {len(ks)} of {len(a.harmonics)} harmonics ({_ranges(ks)}); hum {per_channel}"


def _ranges(ks: tuple[int, ...]) -> str:
    """``(1, 2, 3, 5, 7, 8)`` -> ``1-3, 5, 7-8``."""
    parts: list[str] = []
    start: int | None = None
    prev = 0  # the last k seen (read only once start is set)
    for k in (*ks, None):
        if start is not None and (k is None or k != prev + 1):
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = None
        if k is not None:
            start = k if start is None else start
            prev = k
    return ", ".join(parts)


def _check_options(options: DehumOptions) -> tuple[float | None, float | None]:
    """Validate the options before any work; return (nominal Hz or None, width Hz or None)."""
    if options.method not in METHODS:
        raise ParameterError(f"--method: unknown method {options.method!r} (allowed: {', '.join(METHODS)})")
    if options.method != "erase":
        for name, value in (("--width", options.width), ("--win", options.win)):
            if value is not None:
                raise ParameterError(f"{name} applies to --method erase only")
    check_syntax(durations={"--win": options.win})
    nominal = parse_freq(options.freq)
    width_hz = None
    if options.width is not None:
        width_hz = frequency_hz("--width", options.width)
        if width_hz <= 0:
            raise ParameterError(f"--width: must be > 0 Hz, got {options.width!r}")
    if not math.isfinite(options.threshold):
        raise ParameterError(f"--threshold: must be a finite number of dB, got {options.threshold!r}")
    if options.subtype is not None:
        resolve_subtype(options.subtype)
    return nominal, width_hz


def _check_outputs(path: str, target: str, residual: str | None, subtype: str) -> None:
    """Refuse outputs that cannot or must not be written (before any work)."""
    check_output_path(target, [path])
    if residual is not None:
        if is_stdio(residual):
            raise ParameterError("--residual needs a file path (stdout is for the output or the report)")
        check_output_path(residual, [path])
        if not is_stdio(target) and residual == target:
            raise ParameterError("--residual: same path as the output")
        check_distinct({"-o": target, "--residual": residual})
    for out in (target, residual):
        if out is not None:
            audio_container(out, subtype)


_DEFAULT_INPUTS = InputOptions()


def block_samples(channels: int) -> int:
    """Samples per channel in a block: :data:`~audiokit.io.reader.BLOCK_SAMPLES` up to 16 channels, fewer beyond.

    ``max(1024, BLOCK_SAMPLES·16 // channels)`` for more than
    :data:`~audiokit.dsp.hum.track.CHANNEL_GROUP` (16) channels: a float64
    block stays within 8 MiB (32 MiB from 4 096 channels on).
    """
    if channels <= CHANNEL_GROUP:
        return BLOCK_SAMPLES
    return max(_MIN_BLOCK_SAMPLES, BLOCK_SAMPLES * CHANNEL_GROUP // channels)


def _checked_blocks(source: AudioSource) -> Iterator[np.ndarray]:
    """The source's float64 blocks; InputError (naming the source) at a sample beyond :data:`DEHUM_SAFE_PEAK`."""
    for block in source.blocks(block_samples(source.channels), dtype="float64"):
        peak = float(np.abs(block).max()) if block.size else 0.0
        if peak > DEHUM_SAFE_PEAK:
            raise InputError(
                f"holds a sample of {peak:.3g} (full scale 1), beyond what the hum model computes "
                f"(|x| <= 2^32: it demodulates in float32, whose powers would overflow); scale the input down",
                source.name,
            )
        yield block


def dehum_file(
    path: str,
    output: str | None,
    options: DehumOptions = DehumOptions(),
    *,
    residual: str | None = None,
    inputs: InputOptions = _DEFAULT_INPUTS,
    reporter: Reporter = SILENT,
) -> DehumResult:
    """Remove the hum of ``path`` into ``output`` (default ``<stem>.dehum.wav``; ``-``: stdout)."""
    nominal, width_hz = _check_options(options)
    # the derived name needs a file name: stdin without -o is refused before stdin is read
    target = output if output is not None else str(derived_output(path, "dehum", ".wav"))
    with inputs.open(path) as source:
        kind = resolve_subtype(options.subtype, source.subtype, target=target)
        _check_outputs(path, target, residual, kind)
        win_length = duration_samples("--win", options.win, source.sr) if options.win is not None else None
        passes = 4 + (1 if options.normalize else 0)
        with reporter.progress(f"dehum {source.name}", passes * max(source.n_samples, 1)) as advance:

            def blocks() -> Iterator[np.ndarray]:
                for block in _checked_blocks(source):
                    advance(block.shape[1])
                    yield block

            analysis = analyze_hum_blocks(
                blocks,
                sr=source.sr,
                channels=source.channels,
                n_samples=source.n_samples,
                freq=nominal,
                harmonics=options.harmonics,
                threshold_db=options.threshold,
            )
            erase: dict[str, Any] = {"win_length": win_length, "width_hz": width_hz} if options.method == "erase" else {}
            remover = HumRemover(analysis, options.method, **erase)  # validates --win/--width

            def removal() -> Iterator[tuple[np.ndarray, np.ndarray]]:
                return remover.run(_checked_blocks(source))

            guard = FullScaleGuard(kind)
            if options.normalize:
                peak = 0.0
                for y, _ in removal():
                    peak = max(peak, measure_overshoot(y).peak)
                    advance(y.shape[1])
                if guard.fit_peak(peak):
                    reporter.info(f"{target}: output peak {dbfs(peak):+.2f} dBFS; --normalize applies {dbfs(guard.gain):.2f} dB")
                else:
                    reporter.info(f"{target}: output peak {dbfs(peak):+.2f} dBFS is within full scale; no gain applied")
            meter = HumMeter(analysis)
            spec: dict[str, Any] = {
                "sr": source.sr,
                "channels": source.channels,
                "subtype": kind,
                "expected_samples": source.n_samples,
            }
            with outputs_together(), contextlib.ExitStack() as stack:
                writer = stack.enter_context(WavWriter(target, **spec))
                res_writer = stack.enter_context(WavWriter(residual, **spec)) if residual is not None else None
                for y, removed in removal():
                    meter.push(y)
                    writer.write(guard(y))
                    if res_writer is not None:
                        res_writer.write(removed)
                    advance(y.shape[1])
    after = meter.finish()
    levels = hum_levels(analysis, meter)
    message = guard.warning(target, "the output")
    if message:
        warnings.warn(message, stacklevel=2)
    report = build_report(
        analysis,
        after,
        source=source,
        target=target,
        residual=residual,
        method=options.method,
        remover=remover,
        gain=guard.gain,
        peak=guard.peak,
        levels=levels,
    )
    return DehumResult(
        output=target, residual=residual, report=report, summary=summary(analysis, levels), source=SourceFacts.of(source)
    )


def check_options(options: DehumOptions) -> None:
    """Rate-free checks (exit 2 before any input is read): method, frequency, width, window, threshold, subtype."""
    _check_options(options)


def _outputs(options: DehumOptions, stem: str, png: bool) -> dict[str, str]:
    return {"wav": f"{stem}.dehum.wav"}


def _run(path: str, outputs: Mapping[str, str], options: DehumOptions, inputs: InputOptions) -> JobResult:
    result = dehum_file(path, outputs["wav"], options, inputs=inputs)
    return JobResult(result.source, shape=(result.source.channels, result.source.n_samples))


#: The registry's spec of ``dehum`` (:mod:`audiokit.pipelines.registry`): ``<stem>.dehum.wav`` per input.
DEHUM_SPEC = JobSpec(name="dehum", options=DehumOptions, check=check_options, outputs=_outputs, run=_run)

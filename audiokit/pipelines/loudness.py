"""The ``loudness`` job: EBU R128 / ITU-R BS.1770-4 loudness, loudness range and true peak of one input, streamed.

The numbers are :class:`audiokit.dsp.loudness.LoudnessMeter`'s; this module opens the input, picks the channel
weights from its layout, feeds the meter block by block and turns the result into the ``--json`` report, the
``--series`` file and the PNG.  Undefined values (silence, an input shorter than 400 ms or 3 s) are ``null`` in the
report, each with its reason in ``"undefined"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dsp.loudness import LoudnessMeter, LoudnessResult, channel_weights, layout_names
from ..dsp.loudness.meter import MOMENTARY_SUBBLOCKS, STEP_S
from ..errors import ParameterError
from ..io import check_distinct, check_output_path, outputs_together
from ..io.atomic import write_text_atomic
from ..io.npy import save_npy, sidecar_path
from ..io.reader import BLOCK_SAMPLES
from ..io.wavheader import wave_channel_mask
from .params import InputOptions, check_figure_path, finite_or_none
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts

__all__ = ["FILL_LUFS", "LOUDNESS_SPEC", "LoudnessOptions", "check_options", "loudness_file"]

#: The value written in a ``--series`` .npy cell that has no loudness: digital silence (-inf LUFS) or a short-term
#: window not yet full (before 3 s).  A .csv leaves such a cell empty.
FILL_LUFS = -200.0
#: Samples per channel of a block read: 4 of the reader's blocks (the meter's per-block work in Python is then
#: ~5 % of a 16 kHz mono hour, not 20 %; 1 MiB per float32 channel).
_BLOCK = 4 * BLOCK_SAMPLES
#: Accepted ``--target`` range (LUFS).
_TARGET_RANGE = (-70.0, 0.0)


@dataclass(frozen=True)
class LoudnessOptions:
    """Options of ``audiokit loudness`` as typed.

    Attributes
    ----------
    target : str, optional
        Target integrated loudness in LUFS (``-23`` EBU R128, ``-16`` podcasts, ``-14`` streaming): the report
        gives the gain that reaches it.
    true_peak : bool
        Measure the true peak (4x oversampling below 96 kHz); without it only the sample peak.
    size : str
        PNG size, ``WIDTHxHEIGHT`` pixels.
    series : bool
        Write the momentary and short-term series (``--series``).  ``audiokit batch loudness --series`` writes
        ``<id>.loudness.npy`` + ``<id>.loudness.json`` per input (:data:`LOUDNESS_SPEC`); :func:`loudness_file` writes
        the file its ``series`` argument names, whatever this field says.
    """

    target: str | None = None
    true_peak: bool = True
    size: str = "1200x500"
    series: bool = False

    @property
    def target_lufs(self) -> float | None:
        """``target`` as a number (ParameterError naming ``--target`` for bad text or range)."""
        if self.target is None:
            return None
        try:
            value = float(self.target.strip().lower().removesuffix("lufs"))
        except ValueError:
            raise ParameterError(f"--target: {self.target!r} is not a loudness in LUFS (e.g. -23, -16, -14)") from None
        if not _TARGET_RANGE[0] <= value <= _TARGET_RANGE[1]:
            raise ParameterError(f"--target: {value:g} LUFS is outside {_TARGET_RANGE[0]:g}..{_TARGET_RANGE[1]:g} LUFS")
        return value


def check_options(options: LoudnessOptions) -> None:
    """Rate-free checks (exit 2 before any input is read): the target and the PNG size."""
    from ..plot.layout import parse_size

    _ = options.target_lufs
    parse_size(options.size)


def _db(value: float) -> float | None:
    return finite_or_none(20.0 * math.log10(value)) if value > 0 else None


def _report(result: LoudnessResult, name: str, channels: int, mask: int | None, target: float | None) -> dict[str, Any]:
    """The ``--json`` object (README "Levels and loudness")."""
    undefined: dict[str, str] = {}

    def lufs(key: str, value: float | None, reason: str) -> float | None:
        shown = None if value is None else finite_or_none(value)
        if shown is None:
            undefined[key] = reason
        return shown

    silent = "every block at or below the -70 LUFS absolute gate"
    integrated = lufs("integrated_lufs", result.integrated, result.integrated_reason or silent)
    too_short = "shorter than 3 s" if result.short_term.size == 0 else None
    lra_reason = too_short or "every short-term block at or below the -70 LUFS absolute gate"
    positions = result.true_peak_position if result.true_peak_position is not None else result.sample_peak_position
    report: dict[str, Any] = {
        "path": name,
        "sr": result.sr,
        "channels": channels,
        "frames": result.n_samples,
        "duration_s": result.n_samples / result.sr,
        "layout": list(layout_names(channels, mask)),
        "weights": [float(w) for w in result.weights],
        "integrated_lufs": integrated,
        "relative_gate_lufs": lufs("relative_gate_lufs", result.relative_gate, result.integrated_reason or silent),
        "momentary_max_lufs": lufs(
            "momentary_max_lufs",
            result.momentary_max,
            "shorter than one 400 ms block" if result.momentary.size == 0 else "digital silence",
        ),
        "short_term_max_lufs": lufs("short_term_max_lufs", result.short_term_max, too_short or "digital silence"),
        "loudness_range_lu": lufs("loudness_range_lu", result.lra, lra_reason),
        "lra_low_lufs": lufs("lra_low_lufs", result.lra_low, lra_reason),
        "lra_high_lufs": lufs("lra_high_lufs", result.lra_high, lra_reason),
        "true_peak_dbtp": None,
        "sample_peak_dbfs": _db(float(result.sample_peak.max(initial=0.0))),
        "true_peak_oversampling": result.oversampling if result.true_peak is not None else None,
        "levels": [
            {
                "channel": c,
                "sample_peak_dbfs": _db(float(result.sample_peak[c])),
                "true_peak_dbtp": _db(float(result.true_peak[c])) if result.true_peak is not None else None,
                "peak_time_s": round(float(positions[c]) / result.sr, 6),
            }
            for c in range(channels)
        ],
    }
    if result.true_peak is not None:
        report["true_peak_dbtp"] = _db(float(result.true_peak.max(initial=0.0)))
    if report["sample_peak_dbfs"] is None:
        undefined["sample_peak_dbfs"] = undefined["true_peak_dbtp"] = "digital silence"
    if target is not None:
        report["target_lufs"] = target
        gain = None if integrated is None else round(target - integrated, 4)
        report["gain_db"] = gain
        peak = report["true_peak_dbtp"] if result.true_peak is not None else report["sample_peak_dbfs"]
        report["peak_after_gain_db"] = None if gain is None or peak is None else round(peak + gain, 4)
        if gain is None:
            undefined["gain_db"] = undefined["peak_after_gain_db"] = "no integrated loudness"
    report["undefined"] = undefined
    return report


def _series_table(result: LoudnessResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times (s, the end of each momentary window) and the two series on that grid (-inf where there is no value)."""
    n = result.momentary.size
    times = (np.arange(n) + MOMENTARY_SUBBLOCKS) * STEP_S
    short = np.full(n, -np.inf)
    short[n - result.short_term.size :] = result.short_term
    return times, result.momentary, short


def _write_series(path: str, result: LoudnessResult, name: str) -> None:
    times, momentary, short = _series_table(result)
    if path.lower().endswith(".csv"):
        cell = lambda v: f"{v:.4f}" if math.isfinite(v) else ""  # noqa: E731
        lines = ["time_s,momentary_lufs,short_term_lufs"]
        lines += [f"{t:.1f},{cell(m)},{cell(s)}" for t, m, s in zip(times, momentary, short)]
        write_text_atomic(path, "\n".join(lines) + "\n")
        return
    rows = np.stack([momentary, short])
    rows[~np.isfinite(rows)] = FILL_LUFS
    save_npy(
        path,
        rows,
        {
            "kind": "loudness_series",
            "path": name,
            "sr": result.sr,
            "shape": list(rows.shape),
            "dtype": "float64",
            "layout": "(rows, steps)",
            "rows": ["momentary_lufs", "short_term_lufs"],
            "step_s": STEP_S,
            "time_s": "(k + 4) * 0.1: the end of the 400 ms (momentary) / 3 s (short-term) window of column k",
            "fill_lufs": FILL_LUFS,
            "fill": "no value: digital silence (-inf LUFS) or, in the short-term row, a window not yet full (< 3 s)",
        },
    )


def _check_outputs(path: str, png: str | None, series: str | None) -> None:
    if series is not None:
        if series == "-" or not series.lower().endswith((".npy", ".csv")):
            raise ParameterError(f"--series: {series!r} must be a file path ending in .npy or .csv")
        check_output_path(series, [path])
        if series.lower().endswith(".npy"):
            check_output_path(sidecar_path(series), [path])
    if png is not None:
        check_output_path(png, [path])
    npy = series if series is not None and series.lower().endswith(".npy") else None
    check_distinct({"-o": png, "--series": series, "the sidecar of --series": npy and sidecar_path(npy)})
    check_figure_path(png)


def loudness_file(
    path: str,
    options: LoudnessOptions = LoudnessOptions(),
    *,
    png: str | None = None,
    series: str | None = None,
    inputs: InputOptions = InputOptions(),
    reporter: Reporter = SILENT,
) -> JobResult:
    """Measure ``path`` (its report in ``.report``); write the ``series`` (.npy + sidecar or .csv; ``.shape`` is the
    .npy's ``(2, steps)``) and the ``png``."""
    check_options(options)
    target = options.target_lufs
    with inputs.open(path) as source:
        _check_outputs(path, png, series)
        mask = wave_channel_mask(path)
        meter = LoudnessMeter(
            int(source.sr), source.channels, weights=channel_weights(source.channels, mask), true_peak=options.true_peak
        )
        # PCM_32 and DOUBLE hold more than float32's 24 bits: read them as float64.
        dtype = "float64" if source.subtype in ("PCM_32", "DOUBLE") else "float32"
        with reporter.progress(f"loudness {source.name}", source.n_samples) as advance:
            for block in source.blocks(_BLOCK, dtype=dtype):
                meter.push(block)
                advance(block.shape[1])
        result = meter.result()
        report = _report(result, source.name, source.channels, mask, target)
        with outputs_together():
            if series is not None:
                _write_series(series, result, source.name)
            if png is not None:
                _draw(png, result, report, options)
    shape = (2, int(result.momentary.size)) if series is not None and series.lower().endswith(".npy") else None
    return JobResult(SourceFacts.of(source), shape=shape, report=report)


def _draw(png: str, result: LoudnessResult, report: dict[str, Any], options: LoudnessOptions) -> None:
    from ..plot.loudness import LoudnessPicture, draw_loudness

    kind = "true_peak_dbtp" if result.true_peak is not None else "sample_peak_dbfs"
    peaks = [(level["peak_time_s"], level[kind]) for level in report["levels"] if level[kind] is not None]
    picture = LoudnessPicture(
        path=report["path"],
        sr=result.sr,
        channels=report["channels"],
        duration_s=report["duration_s"],
        momentary=result.momentary,
        short_term=result.short_term,
        integrated=report["integrated_lufs"],
        lra=report["loudness_range_lu"],
        target=options.target_lufs,
        true_peaks=peaks,
        peak_kind="dBTP" if result.true_peak is not None else "dBFS",
    )
    draw_loudness(png, picture, size=options.size)


def _outputs(options: LoudnessOptions, stem: str, png: bool) -> dict[str, str]:
    names = {"npy": f"{stem}.loudness.npy", "json": f"{stem}.loudness.json"} if options.series else {}
    return names | ({"png": f"{stem}.loudness.png"} if png else {})


def _run(path: str, outputs: Mapping[str, str], options: LoudnessOptions, inputs: InputOptions) -> JobResult:
    return loudness_file(path, options, png=outputs.get("png"), series=outputs.get("npy"), inputs=inputs)


#: The registry's spec of ``loudness`` (:mod:`audiokit.pipelines.registry`): a report per input; the series with
#: ``series`` (``<id>.loudness.npy`` + ``.json``), a PNG with --png.
LOUDNESS_SPEC = JobSpec(
    name="loudness", options=LoudnessOptions, check=check_options, outputs=_outputs, run=_run, draws=True, reports=True
)

"""``audiokit stats``: SoX's ``stats`` fields and ffmpeg ``astats`` extras (the job: :mod:`audiokit.pipelines.stats`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from ..pipelines.stats import StatsOptions, stats
from . import console
from .options import JsonLinesPerFile, JsonPerFile, inputs_from, reads_audio, reporter
from .reports import report_each

#: The table's rows: label, JSON field, format ("db", "lin", "factor", "count", "bits").
_ROWS = (
    ("DC offset", "dc_offset", "lin"),
    ("Min level", "min_level", "lin"),
    ("Max level", "max_level", "lin"),
    ("Pk lev dB", "peak_level_db", "db"),
    ("RMS lev dB", "rms_level_db", "db"),
    ("RMS Pk dB", "rms_peak_db", "db"),
    ("RMS Tr dB", "rms_trough_db", "db"),
    ("Crest factor", "crest_factor", "factor"),
    ("Flat factor", "flat_factor", "factor"),
    ("Pk count", "peak_count", "count"),
    ("Bit-depth", "bit_depth", "bits"),
    ("Zero crossings", "zero_crossings", "count"),
    ("ZC rate /sample", "zero_crossing_rate", "rate"),
    ("Noise floor dB", "noise_floor_db", "db"),
    ("Noise floor count", "noise_floor_count", "count"),
    ("Dynamic range dB", "dynamic_range_db", "factor"),
    ("NaN / Inf", "nan_count", "nonfinite"),
    ("Subnormals", "subnormal_count", "count"),
)


def options_from(params: Mapping[str, Any]) -> StatsOptions:
    """The (checked) pipeline options of ``stats`` (also ``audiokit batch stats``)."""
    options = StatsOptions(window=params["window"])
    options.check()
    return options


def _cell(column: dict, field: str, kind: str) -> str:
    value = column[field]
    if kind == "bits":
        return f"{value[0]}/{value[1]}"
    if kind == "nonfinite":
        return f"{column['nan_count']} / {column['inf_count']}"
    if value is None:
        return "-inf" if kind == "db" else "-"
    if kind == "lin":
        return f"{value:.6f}"
    if kind in ("db", "factor"):
        return f"{value:.2f}"
    if kind == "rate":
        return f"{value:.6f}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _print_table(report: dict) -> None:
    head = (
        f"{report['path']}: {report['sr']} Hz, {report['channels']} ch, {report['n_samples']} samples, "
        f"{report['duration_s']:.3f} s, window {report['window_s']:.3f} s, scale max 1.0"
    )
    columns = [report["overall"]] + (report["levels"] if report["channels"] > 1 else [])
    names = ["field", "overall"] + ([f"ch{c['channel']}" for c in report["levels"]] if report["channels"] > 1 else [])
    rows = [[label] + [_cell(column, field, kind) for column in columns] for label, field, kind in _ROWS]
    console.print_table(head, names, rows)


@reads_audio
def stats_command(
    files: Annotated[list[str], typer.Argument(help="Audio files (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    json_out: JsonPerFile = False,
    json_lines: JsonLinesPerFile = False,
    window: Annotated[
        str,
        typer.Option(
            "--window", "-w", help="Time constant of RMS Pk/Tr and noise floor window (SoX's -w), 10ms..10s.", show_default=True
        ),
    ] = "50ms",
    **raw: Any,
) -> int:
    """Level statistics as SoX's stats (DC, peak, RMS, RMS peak/trough, crest, flat factor, bit depth) and more.

    Per channel and overall: DC offset, min/max level, peak and RMS level
    (dBFS), RMS peak and trough of SoX's running mean square (time constant
    --window, 50 ms), crest factor, flat factor, peak count, bit depth used,
    and what ffmpeg's astats adds: zero crossings, noise floor, dynamic range,
    NaN/Inf and subnormal counts.  Each field equals `sox FILE -n stats` (the
    definitions: README, "Levels and loudness").  A float file holding NaN or
    Inf is refused unless --fix-nonfinite: then they are counted as stored
    (the NaN / Inf row) and read as 0 in every other field.  Files are
    streamed in blocks.  --json and --jsonl follow `audiokit info`: one object
    per file.

    Example:

        audiokit stats examples/data/speech.wav

        audiokit stats *.wav --jsonl | jq -r '[.path, .overall.rms_level_db] | @tsv'
    """
    params = dict(locals())
    inputs = inputs_from(raw)
    options = options_from(params)
    return report_each(
        files,
        lambda path: stats(path, options, inputs=inputs, reporter=reporter()),
        _print_table,
        json_out=json_out,
        json_lines=json_lines,
    )

"""``audiokit loudness``: EBU R128 / ITU-R BS.1770-4 loudness, LRA and true peak (the job: :mod:`audiokit.pipelines.loudness`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.loudness import LoudnessOptions, check_options, loudness_file
from . import console
from .options import OUT_PANEL, JsonLinesPerFile, JsonPerFile, inputs_from, reads_audio, reporter
from .reports import FileOutputs, run_measuring, value_text
from .stft_options import Size


def options_from(params: Mapping[str, Any]) -> LoudnessOptions:
    """The pipeline options from the parameter values of :func:`loudness_command` (also ``audiokit batch loudness``)."""
    return LoudnessOptions(
        target=params["target"], true_peak=not params["no_true_peak"], size=params["size"], series=bool(params["series"])
    )


def _print_table(report: dict) -> None:
    head = (
        f"{report['path']}: {report['sr']} Hz, {report['channels']} ch ({' '.join(report['layout'])}), "
        f"{report['duration_s']:.6g} s"
    )
    peak = "true peak" if report["true_peak_oversampling"] else "sample peak"
    rows = [
        ["integrated", value_text(report["integrated_lufs"], "LUFS"), f"gate {value_text(report['relative_gate_lufs'], 'LUFS')}"],
        ["momentary max", value_text(report["momentary_max_lufs"], "LUFS"), "400 ms"],
        ["short-term max", value_text(report["short_term_max_lufs"], "LUFS"), "3 s"],
        [
            "loudness range",
            value_text(report["loudness_range_lu"], "LU"),
            f"{value_text(report['lra_low_lufs'], 'LUFS')} .. {value_text(report['lra_high_lufs'], 'LUFS')}",
        ],
        [
            "true peak",
            value_text(report["true_peak_dbtp"], "dBTP"),
            f"{report['true_peak_oversampling']}x" if report["true_peak_oversampling"] else "off",
        ],
        ["sample peak", value_text(report["sample_peak_dbfs"], "dBFS"), ""],
    ]
    if "target_lufs" in report:
        rows.append(
            [
                f"gain to {report['target_lufs']:g} LUFS",
                value_text(report["gain_db"], "dB"),
                f"{peak} after: {value_text(report['peak_after_gain_db'], 'dB')}",
            ]
        )
    rows += [[reason_of, "", reason] for reason_of, reason in report["undefined"].items()]
    console.print_table(head, ["field", "value", "note"], rows)


@reads_audio
def loudness_command(
    files: Annotated[list[str], typer.Argument(help="Audio files (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    json_out: JsonPerFile = False,
    json_lines: JsonLinesPerFile = False,
    target: Annotated[
        Optional[str],
        typer.Option(
            "--target", help="Target loudness in LUFS (-23 EBU R128, -16 podcasts, -14 streaming): report the gain to reach it."
        ),
    ] = None,
    no_true_peak: Annotated[
        bool,
        typer.Option(
            "--no-true-peak", help="Measure the sample peak only (default: the true peak, 4x oversampling below 96 kHz)."
        ),
    ] = False,
    series: Annotated[
        Optional[str],
        typer.Option(
            "--series",
            help="Write the momentary and short-term loudness every 100 ms: PATH.npy (rows, steps) + sidecar, or PATH.csv.",
            rich_help_panel=OUT_PANEL,
        ),
    ] = None,
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="PNG of the loudness against time (- for stdout).", rich_help_panel=OUT_PANEL),
    ] = None,
    size: Size = "1200x500",
    **raw: Any,
) -> int:
    """Loudness (EBU R128 / ITU-R BS.1770-4): integrated, momentary, short-term, LRA, true peak.

    K-weighting designed for the file's own rate, channel weights from its
    layout (LFE left out, surrounds +1.5 dB), gates at -70 LUFS and -10 LU,
    loudness range by EBU Tech 3342, true peak by 4x oversampling (2x from 96
    kHz).  Files stream in blocks: hours of audio in little memory.  A value
    that does not exist (silence, a file shorter than 400 ms or 3 s) is "-" in
    the table and null in JSON, its reason under "undefined".

    --json prints one object per file whatever the number of files (as info
    does); --jsonl one per line.  --series and -o take one file.

    Example:

        audiokit loudness podcast.wav --target -16

        audiokit loudness podcast.wav --target -16 -o podcast.loudness.png --series podcast.loudness.csv

        audiokit loudness *.wav --jsonl | jq -r '[.path, .integrated_lufs, .true_peak_dbtp] | @tsv'
    """
    params = dict(locals())
    npy = series is not None and series.lower().endswith(".npy")
    outputs = FileOutputs(png=output, data=series, flag="--series", sidecar=npy, batch="audiokit batch loudness --series --png")

    def prepare() -> Callable[[str], dict]:
        options = options_from(params)
        check_options(options)
        inputs = inputs_from(raw)
        return lambda path: (
            loudness_file(path, options, png=output, series=series, inputs=inputs, reporter=reporter()).report or {}
        )

    return run_measuring(files, outputs, prepare, _print_table, json_out=json_out, json_lines=json_lines)

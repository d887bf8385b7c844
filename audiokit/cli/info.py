"""``audiokit info``: format and levels of audio files (the job: :mod:`audiokit.pipelines.info`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from ..pipelines.info import InfoOptions, info
from . import console
from .options import JsonLinesPerFile, JsonPerFile, inputs_from, reads_audio, reporter
from .reports import report_each


def options_from(params: Mapping[str, Any]) -> InfoOptions:
    """The pipeline options of ``info`` (it has none of its own; also ``audiokit batch info``)."""
    return InfoOptions()


def _db_text(value: float | None) -> str:
    return "-inf" if value is None else f"{value:.2f}"


def _print_table(report: dict) -> None:
    head = (
        f"{report['path']}: {report['container']} {report['subtype']}, {report['sr']} Hz, "
        f"{report['channels']} ch, {report['frames']} frames, {report['duration_s']:.6g} s"
    )
    rows = [
        [str(lv["channel"]), _db_text(lv["peak_dbfs"]), _db_text(lv["rms_dbfs"]), f"{lv['dc_offset']:.3g}", str(lv["clipped"])]
        for lv in report["levels"]
    ]
    console.print_table(head, ["channel", "peak dBFS", "RMS dBFS", "DC offset", "clipped"], rows)


@reads_audio
def info_command(
    files: Annotated[list[str], typer.Argument(help="Audio files (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    json_out: JsonPerFile = False,
    json_lines: JsonLinesPerFile = False,
    **raw: Any,
) -> int:
    """Show format, duration and levels (peak, RMS, DC offset, clipped samples).

    Files are read in blocks, so an hour-long WAV needs little memory.  A file
    that cannot be read gets an error line; the others are still reported, and
    the exit code is 3.  Each file is printed when it is done.

    --json prints one object per file, whatever the number of files (a stream
    of objects, as jq reads and writes them: the same jq filter works for one
    file and for a glob); --jsonl prints the same objects one per line.

    Example:

        audiokit info examples/data/speech.wav

        audiokit generate "sine:1k" --dur 1s | audiokit info - --json | jq .levels

        audiokit info *.wav --jsonl | jq -r '[.path, .levels[0].rms_dbfs] | @tsv'
    """
    params = dict(locals())
    inputs = inputs_from(raw)
    options = options_from(params)
    return report_each(
        files,
        lambda path: info(path, options, inputs=inputs, reporter=reporter()),
        _print_table,
        json_out=json_out,
        json_lines=json_lines,
    )

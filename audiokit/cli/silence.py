"""``audiokit silence``: silent spans, a segments manifest of the sound, ``--trim`` (the job:
:mod:`audiokit.pipelines.silence`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..errors import ParameterError
from ..pipelines.silence import SilenceOptions, detect_silence, trim_file, write_manifest
from . import console
from .options import JsonLinesPerFile, JsonPerFile, inputs_from, reads_audio, refuse_terminal, reporter
from .reports import check_json_flags, report_each


def options_from(params: Mapping[str, Any]) -> SilenceOptions:
    """The (checked) pipeline options of ``silence`` (also ``audiokit batch silence``)."""
    p = params
    options = SilenceOptions(
        threshold=p["threshold"],
        relative=p["relative"],
        min_silence=p["min_silence"],
        min_speech=p["min_speech"],
        hangover=p["hangover"],
        frame=p["frame"],
    )
    options.check()
    return options


def _print_table(report: dict) -> None:
    threshold = "-inf" if report["threshold_db"] is None else f"{report['threshold_db']:.2f}"
    head = (
        f"{report['path']}: {report['duration_s']:.3f} s, threshold {threshold} dBFS, "
        f"{len(report['silences'])} silences, {report['silent_s']:.3f} s silent"
    )
    rows = [[f"{s['start']:.3f}", f"{s['end']:.3f}", f"{s['duration']:.3f}"] for s in report["silences"]]
    console.print_table(head, ["silence start s", "end s", "duration s"], rows)


@reads_audio
def silence_command(
    files: Annotated[list[str], typer.Argument(help="Audio files (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    threshold: Annotated[
        str, typer.Option("--threshold", "-t", help="Silent below this frame level (dBFS, or dB re the loudest frame).")
    ] = "-50dB",
    relative: Annotated[bool, typer.Option("--relative", help="Read --threshold relative to the file's loudest frame.")] = False,
    min_silence: Annotated[str, typer.Option("--min-silence", "-d", help="Shortest silence reported.")] = "0.5s",
    min_speech: Annotated[str, typer.Option("--min-speech", help="Shorter sound between silences counts as silence.")] = "0",
    hangover: Annotated[str, typer.Option("--hangover", help="Sound keeps this much of each silence it touches.")] = "0",
    frame: Annotated[
        str, typer.Option("--frame", help="Frame of the RMS levels; 1 (sample) = ffmpeg's per-sample rule.")
    ] = "10ms",
    json_out: JsonPerFile = False,
    json_lines: JsonLinesPerFile = False,
    manifest: Annotated[
        Optional[str],
        typer.Option(
            "--manifest", "-m", help="Write the sound spans as a segments manifest (JSONL) for audiokit batch --manifest."
        ),
    ] = None,
    trim: Annotated[bool, typer.Option("--trim", help="Write the file without its leading and trailing silence to -o.")] = False,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Output WAV/FLAC of --trim (- for stdout).")] = None,
    **raw: Any,
) -> int:
    """Find silent spans (frame level below a dBFS or relative threshold); write a segments manifest or a trimmed file.

    A frame (--frame, 10 ms) is silent when its loudest channel's mean square
    is below --threshold (dBFS; with --relative, dB below the file's loudest
    frame); silences shorter than --min-silence are sound, sound shorter than
    --min-speech between silences is silence, and --hangover gives sound that
    much of each silence it touches.  --frame 1 is ffmpeg silencedetect's
    per-sample rule.  -m writes one {"id","path","start","duration"} line per
    span of sound, what `audiokit batch --manifest` reads; --trim -o OUT.wav
    writes the file from its first sound to its last.  --json and --jsonl
    follow `audiokit info`.

    Example:

        audiokit silence talk.wav --threshold -45dB --min-silence 0.3s

        audiokit silence talk.wav --threshold -30dB --relative -m talk.jsonl && audiokit batch mel --manifest talk.jsonl --out feats

        audiokit silence take.wav --trim -o take.trimmed.wav
    """
    params = dict(locals())
    check_json_flags(json_out, json_lines)
    if trim != (output is not None):
        raise ParameterError("--trim writes to -o/--output: give both (or neither)")
    if trim and len(files) != 1:
        raise ParameterError(f"--trim writes one file: give one input (got {len(files)})")
    if trim and (json_out or json_lines) and output == "-":
        raise ParameterError("--trim -o - writes the WAV on stdout: it cannot carry --json too")
    if manifest is not None and "-" in files:
        raise ParameterError("-m/--manifest: standard input has no path a manifest could name; give a file")
    inputs = inputs_from(raw)
    options = options_from(params)
    if trim:
        refuse_terminal(output, "WAV")
    reports: list[dict] = []

    def measure(path: str) -> dict:
        report = detect_silence(path, options, inputs=inputs, reporter=reporter())
        reports.append(report)
        if trim and output is not None:
            report["trimmed"] = trim_file(path, output, report, inputs=inputs)
        return report

    table = (lambda report: None) if trim and output == "-" else _print_table
    code = report_each(files, measure, table, json_out=json_out, json_lines=json_lines)
    if manifest is not None:
        write_manifest(manifest, reports, files)
        console.info(f"{manifest}: {sum(len(r['sound']) for r in reports)} segments of {len(reports)} file(s)")
    return code

"""The ``silence`` job: silent spans of one input (streamed), the segments manifest of the sound between them, and
the copy of a file without its leading and trailing silence.

The definitions (frame levels, threshold, minimum silence, minimum sound, hangover) are those of
:mod:`audiokit.dsp.silence`; the report is documented in the README ("Levels and loudness").
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dsp.silence import PeakFrameLevel, SilenceTracker, Span, complement
from ..errors import InputError, ParameterError
from ..io import WavWriter, check_output_path, is_stdio
from ..io.atomic import write_text_atomic
from ..io.reader import AudioSource
from ..io.subtypes import resolve_subtype
from ..units import parse_duration
from .params import InputOptions, duration_samples, option_error
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts, no_outputs
from .stats import stream_block

__all__ = ["SILENCE_SPEC", "SilenceOptions", "detect_silence", "manifest_lines", "trim_file", "write_manifest"]

_DB = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?:db)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class SilenceOptions:
    """Options of ``silence`` as typed (durations: ``0.5s``, ``250ms`` or a bare number of samples).

    Attributes
    ----------
    threshold : str
        ``-50dB``: a frame below this level (dBFS) is silent; with ``relative``, dB relative to the loudest frame.
    relative : bool
        Read ``threshold`` relative to the file's loudest frame (two passes over the input).
    min_silence : str
        Shortest silence reported (``0.5s``).
    min_speech : str
        Shorter sound between silences is silence (``0``: off).
    hangover : str
        Sound keeps this much of each silence it touches (``0``: off).
    frame : str
        Frame length of the levels (``10ms``); ``1`` (one sample) is ffmpeg silencedetect's per-sample rule.
    """

    threshold: str = "-50dB"
    relative: bool = False
    min_silence: str = "0.5s"
    min_speech: str = "0"
    hangover: str = "0"
    frame: str = "10ms"

    @property
    def threshold_db(self) -> float:
        """``threshold`` in dB (ParameterError naming ``--threshold`` unless it is a number with an optional dB)."""
        match = _DB.match(self.threshold)
        if match is None:
            raise ParameterError(f"--threshold: {self.threshold!r} is not a level in dB (e.g. -50dB, or -30dB with --relative)")
        value = float(match.group(1))
        if not -400 <= value <= 400:
            raise ParameterError(f"--threshold: {self.threshold!r} is outside -400..400 dB")
        return value

    def check(self) -> None:
        """Rate-free checks of every option (ParameterError naming it)."""
        _ = self.threshold_db
        for option, text, zero in (
            ("--min-silence", self.min_silence, False),
            ("--min-speech", self.min_speech, True),
            ("--hangover", self.hangover, True),
            ("--frame", self.frame, False),
        ):
            try:
                parse_duration(text, allow_zero=zero)
            except ParameterError as exc:
                raise option_error(option, exc) from None

    def samples(self, sr: int) -> dict[str, int]:
        """The durations in samples at ``sr``: ``frame``, ``min_silence``, ``min_speech``, ``hangover``."""
        self.check()
        return {
            "frame": duration_samples("--frame", self.frame, sr),
            "min_silence": duration_samples("--min-silence", self.min_silence, sr),
            "min_speech": duration_samples("--min-speech", self.min_speech, sr, allow_zero=True),
            "hangover": duration_samples("--hangover", self.hangover, sr, allow_zero=True),
        }


def _spans(spans: list[Span], sr: int) -> list[dict[str, Any]]:
    return [
        {"start": s.start / sr, "end": s.end / sr, "duration": s.length / sr, "start_sample": s.start, "end_sample": s.end}
        for s in spans
    ]


def _reference_db(source: AudioSource, frame: int) -> float:
    """The loudest frame's level (the first pass of a relative threshold)."""
    peak = PeakFrameLevel(frame)
    for block in source.blocks(stream_block(source.channels), dtype="float64"):
        peak.update(block)
    return peak.level_db


def measure_silence(
    source: AudioSource, options: SilenceOptions = SilenceOptions(), reporter: Reporter = SILENT
) -> dict[str, Any]:
    """Find the silences of one opened source: the JSON object of ``audiokit silence --json``."""
    n = options.samples(source.sr)
    reference = _reference_db(source, n["frame"]) if options.relative else None
    threshold = options.threshold_db + (reference if reference is not None else 0.0)
    # digital silence has no level to be relative to: all of it is silent
    tracker = SilenceTracker(
        n["frame"], math.inf if threshold == -math.inf else threshold,
        min_silence=n["min_silence"], min_speech=n["min_speech"], hangover=n["hangover"],
    )  # fmt: skip
    with reporter.progress(f"silence {source.name}", source.n_samples) as advance:
        for block in source.blocks(stream_block(source.channels), dtype="float64"):
            tracker.update(block)
            advance(block.shape[1])
    silences = tracker.finish()
    count = tracker.n_samples
    return {
        "path": source.name,
        "sr": source.sr,
        "channels": source.channels,
        "n_samples": count,
        "duration_s": count / source.sr,
        "threshold_db": threshold if math.isfinite(threshold) else None,
        "relative": options.relative,
        "reference_db": reference if reference is None or math.isfinite(reference) else None,
        **{f"{key}_samples": value for key, value in n.items()},
        "silent_s": sum(s.length for s in silences) / source.sr,
        "silences": _spans(silences, source.sr),
        "sound": _spans(complement(silences, count), source.sr),
    }


def detect_silence(
    path: str, options: SilenceOptions = SilenceOptions(), *, inputs: InputOptions = InputOptions(), reporter: Reporter = SILENT
) -> dict[str, Any]:
    """Open ``path`` and :func:`measure_silence` it."""
    with inputs.open(path) as source:
        return measure_silence(source, options, reporter)


def manifest_lines(reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """The segments manifest of the sound spans of ``reports``: one ``{"id","path","start","duration"}`` JSON line per
    span, as ``audiokit batch --manifest`` reads it (ids ``<stem>-0001`` …; a stem met twice gets its file's number)."""
    stems = [Path(r["path"]).stem for r in reports]
    lines = []
    for number, (report, stem) in enumerate(zip(reports, stems, strict=True)):
        if is_stdio(report["path"]):
            raise ParameterError("-m/--manifest: standard input has no path a manifest could name; give a file")
        name = stem if stems.count(stem) == 1 else f"{stem}_{number}"
        for k, span in enumerate(report["sound"], 1):
            entry = {"id": f"{name}-{k:04d}", "path": os.path.abspath(report["path"]), "start": span["start"]}
            lines.append(json.dumps({**entry, "duration": span["duration"]}))
    return lines


def write_manifest(target: str, reports: Sequence[Mapping[str, Any]], inputs: Sequence[str]) -> None:
    """Write :func:`manifest_lines` to ``target`` atomically (never over one of ``inputs``)."""
    check_output_path(target, list(inputs))
    lines = manifest_lines(reports)
    write_text_atomic(target, "".join(line + "\n" for line in lines))


def trim_file(path: str, output: str, report: Mapping[str, Any], *, inputs: InputOptions = InputOptions()) -> dict[str, Any]:
    """Write ``path`` from the start of its first sound span to the end of its last to ``output`` (WAV/FLAC, the
    input's subtype, atomically, never over the input); the trimmed span ``{"output","start","end"}`` (samples)."""
    sound = report["sound"]
    if not sound:
        raise InputError(f"--trim: no sound above {report['threshold_db']} dBFS, nothing to write", path)
    start, end = sound[0]["start_sample"], sound[-1]["end_sample"]
    with inputs.open(path) as source:
        check_output_path(output, [path])
        subtype = resolve_subtype(None, source.subtype, target=output)
        with WavWriter(output, sr=source.sr, channels=source.channels, subtype=subtype, expected_samples=end - start) as out:
            for block in source.blocks(stream_block(source.channels), dtype="float64", start=start, n_samples=end - start):
                out.write(block)
    return {"output": output, "start_sample": start, "end_sample": end}


def _check(options: SilenceOptions) -> None:
    options.check()


def _run(path: str, outputs: Mapping[str, str], options: SilenceOptions, inputs: InputOptions) -> JobResult:
    report = detect_silence(path, options, inputs=inputs)
    return JobResult(SourceFacts(n_samples=report["n_samples"], sr=report["sr"], channels=report["channels"]), report=report)


#: The registry's spec of ``silence`` (:mod:`audiokit.pipelines.registry`): a report per input, no file.
SILENCE_SPEC = JobSpec(name="silence", options=SilenceOptions, check=_check, outputs=no_outputs, run=_run, reports=True)

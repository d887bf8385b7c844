"""The ``waveform`` job: the min/max envelope of each channel per pixel column, streamed, its PNG and report.

One pass over the input (or its ``--start``/``--dur`` segment) in blocks: :class:`audiokit.dsp.envelope.ColumnEnvelope`
keeps a minimum, a maximum and a clipped-sample count per column and channel, so memory is the block plus
``channels x width`` numbers, whatever the length.  A sample is clipped when ``|x|`` reaches the full scale of the
input's subtype (``1 - 2**-(B-1)`` for B-bit PCM, 1.0 for float), as ``audiokit info`` counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..dsp.envelope import ColumnEnvelope
from ..dsp.levels import dbfs
from ..errors import InputError, ParameterError
from ..io import check_output_path, outputs_together
from ..io.reader import BLOCK_SAMPLES
from ..io.subtypes import largest_code, source_bits
from .params import (
    LONGEST_SIGNAL_S,
    PLAUSIBLE_SIGNAL_S,
    InputOptions,
    check_channel,
    check_channel_of,
    check_figure_path,
    check_syntax,
    duration_samples,
    finite_or_none,
)
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts

__all__ = ["SCALES", "WAVEFORM_SPEC", "WaveformOptions", "check_options", "waveform_file"]

#: The amplitude axes of the PNG.
SCALES = ("linear", "dbfs")
#: Samples per channel of a block read (the reader's block: 1 MiB per float32 channel).
_BLOCK = BLOCK_SAMPLES


@dataclass(frozen=True)
class WaveformOptions:
    """Options of ``audiokit waveform`` as typed.

    Attributes
    ----------
    start, dur : str
        The segment drawn (``1.5s``, ``200ms`` or samples); ``dur`` None: to the end.
    scale : {"linear", "dbfs"}
        Amplitude axis of the PNG.
    size : str
        PNG size, ``WIDTHxHEIGHT`` pixels; the envelope has one column per pixel of the width.
    channel : int, optional
        Draw (and report) this channel only.
    """

    start: str = "0"
    dur: str | None = None
    scale: Literal["linear", "dbfs"] = "linear"
    size: str = "1200x500"
    channel: int | None = None


def check_options(options: WaveformOptions) -> None:
    """Rate-free checks (exit 2 before the input is read): durations, scale, size, channel."""
    from ..plot.layout import parse_size

    check_syntax(durations={"--dur": options.dur}, zero_durations={"--start": options.start})
    if options.scale not in SCALES:
        raise ParameterError(f"--scale: {options.scale!r} is not one of {', '.join(SCALES)}")
    parse_size(options.size)
    check_channel(options.channel, False)


def clip_level(subtype: str, is_float: bool) -> float:
    """Full scale of a subtype: ``|x| >= clip_level`` is a clipped sample (``audiokit info``'s rule)."""
    bits = source_bits(subtype)
    return 1.0 if is_float or bits is None else largest_code(bits)


def waveform_file(
    path: str,
    options: WaveformOptions = WaveformOptions(),
    *,
    png: str | None = None,
    inputs: InputOptions = InputOptions(),
    reporter: Reporter = SILENT,
) -> JobResult:
    """Envelope of ``path`` (or its segment) per pixel column; draw ``png``; the ``--json`` report in ``.report``."""
    from ..plot.layout import parse_size

    check_options(options)
    width = parse_size(options.size)[0]
    with inputs.open(path) as source:
        if png is not None:
            check_output_path(png, [path])
        check_figure_path(png)
        check_channel_of(options.channel, source)
        first, n = _segment(source, options)
        rows = [options.channel] if options.channel is not None else list(range(source.channels))
        level = clip_level(source.subtype, source.is_float)
        envelope = ColumnEnvelope(len(rows), n, min(width, n), level)
        # float32 holds FLOAT and <= 24-bit codes exactly; PCM_32 and DOUBLE need float64 (info's rule)
        bits = source_bits(source.subtype)
        dtype = "float32" if source.subtype == "FLOAT" or (bits is not None and bits <= 24) else "float64"
        with reporter.progress(f"waveform {source.name}", n) as advance:
            for block in source.blocks(_BLOCK, dtype=dtype, start=first, n_samples=n):
                envelope.push(block if options.channel is None else block[options.channel : options.channel + 1])
                advance(block.shape[1])
        if envelope.position < n:
            raise InputError(f"ends after {envelope.position} of the {n} samples per channel its header declares", source.name)
        report = _report(source, first, n, envelope, rows, level, options)
        if png is not None:
            with outputs_together():
                _draw(png, envelope, report, options)
    return JobResult(SourceFacts.of(source), report=report)


def _segment(source: Any, options: WaveformOptions) -> tuple[int, int]:
    """First sample and sample count of the segment drawn (spectrum's rules: past the end warns and is cut)."""
    sr = source.sr
    first = duration_samples("--start", options.start, sr, allow_zero=True)
    if source.n_samples == 0:
        raise InputError("has no samples to draw", source.name)
    if first >= source.n_samples:
        raise ParameterError(f"--start {options.start} is at or beyond the end ({source.n_samples} samples)")
    left = source.n_samples - first
    if options.dur is None:
        return first, left
    count = duration_samples("--dur", options.dur, sr, plausible_s=PLAUSIBLE_SIGNAL_S, longest_s=LONGEST_SIGNAL_S)
    if count > left:
        warnings.warn(
            f"{source.name}: --dur {options.dur} ({count} samples) runs past the end; using the {left} samples that exist",
            stacklevel=3,
        )
    return first, min(count, left)


def _report(
    source: Any, first: int, n: int, envelope: ColumnEnvelope, rows: list[int], level: float, options: WaveformOptions
) -> dict[str, Any]:
    peaks = envelope.peak
    return {
        "path": source.name,
        "sr": source.sr,
        "channels": source.channels,
        "subtype": source.subtype,
        "start_s": first / source.sr,
        "duration_s": n / source.sr,
        "n_samples": n,
        "columns": envelope.n_columns,
        "scale": options.scale,
        "clip_level": level,
        "levels": [
            {
                "channel": channel,
                "min": float(envelope.low[i].min()),
                "max": float(envelope.high[i].max()),
                "peak_dbfs": finite_or_none(dbfs(float(peaks[i]))),
                "clipped": int(envelope.clipped[i].sum()),
                "clipped_columns": int(np.count_nonzero(envelope.clipped[i])),
            }
            for i, channel in enumerate(rows)
        ],
    }


def _draw(png: str, envelope: ColumnEnvelope, report: dict[str, Any], options: WaveformOptions) -> None:
    from ..plot.waveform import WaveformPicture
    from ..plot.waveform_raster import draw_waveform

    edges = envelope.edges
    picture = WaveformPicture(
        path=report["path"],
        sr=report["sr"],
        channels=report["channels"],
        subtype=report["subtype"],
        start_s=report["start_s"],
        duration_s=report["duration_s"],
        times=report["start_s"] + (edges[:-1] + edges[1:]) / 2 / report["sr"],
        low=envelope.low,
        high=envelope.high,
        clipped=envelope.clipped,
        channel_labels=[level["channel"] for level in report["levels"]],
        scale=options.scale,
    )
    draw_waveform(png, picture, size=options.size)


def _outputs(options: WaveformOptions, stem: str, png: bool) -> dict[str, str]:
    return {"png": f"{stem}.waveform.png"} if png else {}


def _run(path: str, outputs: Mapping[str, str], options: WaveformOptions, inputs: InputOptions) -> JobResult:
    return waveform_file(path, options, png=outputs.get("png"), inputs=inputs)


#: The registry's spec of ``waveform`` (:mod:`audiokit.pipelines.registry`): a report per input, the PNG with --png.
WAVEFORM_SPEC = JobSpec(
    name="waveform", options=WaveformOptions, check=check_options, outputs=_outputs, run=_run, draws=True, reports=True
)

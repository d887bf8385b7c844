"""The ``info`` job: format, duration and levels of one input, streamed block by block."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..dsp.levels import LevelMeter, dbfs
from ..io.reader import BLOCK_SAMPLES, AudioSource
from ..io.subtypes import largest_code, source_bits
from .params import InputOptions, finite_or_none
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts, no_outputs

__all__ = ["INFO_SPEC", "InfoOptions", "measure", "info"]


@dataclass(frozen=True)
class InfoOptions:
    """``info`` has no options of its own (the input options are separate)."""


def measure(source: AudioSource, reporter: Reporter = SILENT) -> dict[str, Any]:
    """Measure one opened source; the JSON object documented in the README ("audiokit info")."""
    bits = source_bits(source.subtype)
    clip_level = 1.0 if source.is_float or bits is None else largest_code(bits)
    meter = LevelMeter(source.channels, clip_level)
    # float32 holds FLOAT and <= 24-bit codes exactly; PCM_32/DOUBLE need float64, else
    # values just below full scale round to 1.0 and are miscounted as clipped.
    exact32 = source.subtype == "FLOAT" or (bits is not None and bits <= 24)
    dtype = "float32" if exact32 else "float64"
    with reporter.progress(f"info {source.name}", source.n_samples) as advance:
        for block in source.blocks(BLOCK_SAMPLES, dtype=dtype):
            meter.update(block)
            advance(block.shape[1])
    return {
        "path": source.name,
        "container": source.container,
        "subtype": source.subtype,
        "bits": bits,
        "sr": source.sr,
        "channels": source.channels,
        "frames": meter.count,
        "duration_s": meter.count / source.sr,
        "levels": [
            {
                "channel": c,
                "peak_dbfs": finite_or_none(dbfs(meter.peak[c])),
                "rms_dbfs": finite_or_none(dbfs(meter.rms[c])),
                "dc_offset": float(meter.dc_offset[c]),
                "clipped": int(meter.clipped[c]),
            }
            for c in range(source.channels)
        ],
    }


def info(
    path: str, options: InfoOptions = InfoOptions(), *, inputs: InputOptions = InputOptions(), reporter: Reporter = SILENT
) -> dict[str, Any]:
    """Open ``path`` and :func:`measure` it."""
    with inputs.open(path) as source:
        return measure(source, reporter)


def _check(options: InfoOptions) -> None:
    """``info`` has no options to check."""


def _run(path: str, outputs: Mapping[str, str], options: InfoOptions, inputs: InputOptions) -> JobResult:
    report = info(path, options, inputs=inputs)
    return JobResult(SourceFacts(n_samples=report["frames"], sr=report["sr"], channels=report["channels"]), report=report)


#: The registry's spec of ``info`` (:mod:`audiokit.pipelines.registry`): a report per input, no file.
INFO_SPEC = JobSpec(name="info", options=InfoOptions, check=_check, outputs=no_outputs, run=_run, reports=True)

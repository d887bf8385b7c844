"""The ``stats`` job: SoX's ``stats`` fields and ffmpeg ``astats`` extras per channel and overall, streamed.

The definitions are those of :mod:`audiokit.dsp.stats`; the report (``--json``) is documented in the README
("Levels and loudness").  Values that are ``-inf`` dBFS (silence) are JSON ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..dsp.levels import dbfs
from ..dsp.stats import LevelStats, StatsMeter
from ..errors import ParameterError
from ..io.reader import BLOCK_SAMPLES, AudioSource
from ..io.subtypes import source_bits
from ..units import parse_duration
from .params import InputOptions, finite_or_none, option_error
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts, no_outputs

__all__ = ["STATS_SPEC", "StatsOptions", "level_fields", "measure_stats", "stats", "stream_block"]

#: SoX's accepted range of ``stats -w`` (seconds).
WINDOW_RANGE_S = (0.01, 10.0)
#: Subnormal limits by subtype: nonzero ``|x|`` below these are float32 / float64 subnormals as stored.
_SUBNORMAL_BELOW = {"FLOAT": 2.0**-126, "VORBIS": 2.0**-126, "OPUS": 2.0**-126, "DOUBLE": 2.0**-1022}


@dataclass(frozen=True)
class StatsOptions:
    """Options of ``stats`` as typed.

    Attributes
    ----------
    window : str
        SoX's ``-w``: the time constant of the running mean square behind RMS peak/trough and the length of the
        noise floor's windows (``50ms``; a bare integer is samples), 10 ms to 10 s.
    """

    window: str = "50ms"

    def check(self) -> None:
        """Rate-free check of ``window`` (a time between 10 ms and 10 s; samples are checked once the rate is known)."""
        try:
            duration = parse_duration(self.window)
        except ParameterError as exc:
            raise option_error("--window", exc) from None
        if not duration.in_samples and not WINDOW_RANGE_S[0] <= float(duration.value) <= WINDOW_RANGE_S[1]:
            raise ParameterError(f"--window: {self.window!r} is outside SoX's range 10ms..10s")

    def window_s(self, sr: int) -> float:
        """The window in seconds at ``sr`` (a bare integer is samples), within 10 ms .. 10 s."""
        self.check()
        seconds = float(parse_duration(self.window).to_seconds(sr))
        if not WINDOW_RANGE_S[0] <= seconds <= WINDOW_RANGE_S[1]:
            raise ParameterError(f"--window: {self.window!r} is {seconds:.6g} s at {sr} Hz, outside SoX's range 10ms..10s")
        return seconds


def stream_block(channels: int) -> int:
    """Samples per channel in a block of the streaming measures (``stats``, ``silence``):
    :data:`~audiokit.io.reader.BLOCK_SAMPLES` up to 4 channels, ``max(1024, BLOCK_SAMPLES·4 // channels)`` beyond, so
    that a float64 block stays within 2 MiB (8 MiB from 1 024 channels on)."""
    return max(1024, BLOCK_SAMPLES * 4 // max(channels, 4))


def _db(value: float | None) -> float | None:
    return None if value is None else finite_or_none(dbfs(value))


def level_fields(level: LevelStats) -> dict[str, Any]:
    """The JSON fields of one column of ``stats`` (levels in full-scale units and dBFS; see the README)."""
    return {
        "dc_offset": round(level.dc_offset, 10),
        "min_level": round(level.min_level, 10),
        "max_level": round(level.max_level, 10),
        "peak_level_db": _db(level.peak),
        "rms_level_db": _db(level.rms),
        "rms_peak_db": _db(level.rms_peak),
        "rms_trough_db": _db(level.rms_trough),
        "crest_factor": None if level.crest_factor is None else finite_or_none(level.crest_factor),
        "flat_factor": finite_or_none(level.flat_factor),
        "peak_count": level.peak_count,
        "bit_depth": list(level.bit_depth),
        "zero_crossings": level.zero_crossings,
        "zero_crossing_rate": round(level.zero_crossing_rate, 6),
        "noise_floor_db": _db(level.noise_floor),
        "noise_floor_count": level.noise_floor_count,
        "dynamic_range_db": None if level.dynamic_range_db is None else finite_or_none(level.dynamic_range_db),
        "nan_count": level.nan_count,
        "inf_count": level.inf_count,
        "subnormal_count": level.subnormal_count,
    }


def measure_stats(source: AudioSource, options: StatsOptions = StatsOptions(), reporter: Reporter = SILENT) -> dict[str, Any]:
    """Measure one opened source: the JSON object of ``audiokit stats --json``."""
    window_s = options.window_s(source.sr)
    bits = source_bits(source.subtype)
    meter = StatsMeter(
        source.channels,
        source.sr,
        window_s=window_s,
        pcm=not source.is_float,
        exact32=source.subtype == "FLOAT" or (bits is not None and bits <= 24),
        subnormal_below=_SUBNORMAL_BELOW.get(source.subtype, 0.0),
    )
    with reporter.progress(f"stats {source.name}", source.n_samples) as advance:
        for samples in source.blocks(stream_block(source.channels), dtype="float64"):
            meter.update(samples)
            advance(samples.shape[1])
    return {
        "path": source.name,
        "container": source.container,
        "subtype": source.subtype,
        "sr": source.sr,
        "channels": source.channels,
        "n_samples": meter.count,
        "duration_s": meter.count / source.sr,
        "window_s": window_s,
        "scale_max": 1.0,
        "overall": level_fields(meter.overall()),
        "levels": [{"channel": c, **level_fields(meter.channel(c))} for c in range(source.channels)],
    }


def stats(
    path: str, options: StatsOptions = StatsOptions(), *, inputs: InputOptions = InputOptions(), reporter: Reporter = SILENT
) -> dict[str, Any]:
    """Open ``path`` and :func:`measure_stats` it.

    NaN/Inf samples refuse the file (exit 3) unless ``inputs.fix_nonfinite``; then they are counted (``nan_count``,
    ``inf_count``, as stored in the file) and read as 0 in every other field (:class:`~audiokit.dsp.stats.StatsMeter`).
    """
    with inputs.open(path, count_nonfinite=True) as source:
        return measure_stats(source, options, reporter)


def _check(options: StatsOptions) -> None:
    options.check()


def _run(path: str, outputs: Mapping[str, str], options: StatsOptions, inputs: InputOptions) -> JobResult:
    report = stats(path, options, inputs=inputs)
    return JobResult(SourceFacts(n_samples=report["n_samples"], sr=report["sr"], channels=report["channels"]), report=report)


#: The registry's spec of ``stats`` (:mod:`audiokit.pipelines.registry`): a report per input, no file.
STATS_SPEC = JobSpec(name="stats", options=StatsOptions, check=_check, outputs=no_outputs, run=_run, reports=True)

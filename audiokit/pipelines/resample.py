"""The ``resample`` job: sample-rate conversion of a file, streamed block by block.

Conventions (also in README "audiokit resample")
------------------------------------------------
* Output length ``floor(n * sr_out / sr_in + 1/2)``; input sample ``k`` is
  time ``k / sr_in``, output sample ``m`` time ``m / sr_out`` (both start at
  t = 0, filter delay compensated).
* ``no_filter`` picks input sample ``floor(m * sr_in / sr_out + 1/2)`` for
  output sample ``m`` (no anti-alias filter: everything above the new Nyquist
  folds back).
* Overshoot and ``normalize``: :mod:`audiokit.pipelines.fullscale`.  With
  ``normalize`` the input is read twice (standard input is spooled by the
  reader, so it can be read twice as well).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from math import gcd
from typing import TYPE_CHECKING, Literal, cast

import numpy as np

from ..dsp.levels import dbfs
from ..dsp.resample import QUALITIES, Resampler, measure_overshoot, output_length, resample
from ..errors import ParameterError
from ..io import WavWriter, check_output_path, derived_output
from ..io.reader import BLOCK_SAMPLES, MAX_SR, MIN_SR, AudioSource
from ..io.subtypes import resolve_subtype
from ..io.writer import audio_container
from .fullscale import FullScaleGuard
from .params import InputOptions, rate_hz
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts

if TYPE_CHECKING:
    from ..dsp.resample import Quality

__all__ = ["RESAMPLE_SPEC", "ResampleOptions", "check_options", "ResampleResult", "resample_file", "rate_tag", "DEFAULT_QUALITY"]

#: Method of :func:`audiokit.dsp.resample.resample` used with ``no_filter`` (sample picking).
NAIVE_METHOD: Literal["nearest"] = "nearest"
DEFAULT_QUALITY: Literal["high"] = "high"


@dataclass(frozen=True)
class ResampleOptions:
    """Options of ``audiokit resample`` as typed (``to`` ``"16k"``)."""

    to: str
    quality: str | None = None
    no_filter: bool = False
    normalize: bool = False
    subtype: str | None = None


@dataclass(frozen=True)
class ResampleResult:
    """The written ``output`` (``-``: stdout), its rate (Hz), length (samples) and subtype."""

    output: str
    sr: int
    n_samples: int
    subtype: str
    gain: float
    source: SourceFacts


def rate_tag(sr: int) -> str:
    """Short rate text for derived file names: 16000 -> ``16k``, 44100 -> ``44.1k``, 500 -> ``500Hz``."""
    if sr < 1000:
        return f"{sr}Hz"
    whole, rest = divmod(sr, 1000)
    return f"{whole}.{rest:03d}".rstrip("0").rstrip(".") + "k"


def target_rate(text: str) -> int:
    """``--to`` in Hz, within the rates audiokit accepts."""
    sr = rate_hz("--to", text)
    if not MIN_SR <= sr <= MAX_SR:
        raise ParameterError(f"--to: {sr} Hz is outside the accepted range {MIN_SR}..{MAX_SR} Hz")
    return sr


def _quality(options: ResampleOptions) -> Quality:
    if options.no_filter and options.quality is not None:
        raise ParameterError("--quality has no effect with --no-filter (there is no filter); give one or the other")
    if options.quality is None:
        return DEFAULT_QUALITY
    if options.quality not in QUALITIES:
        raise ParameterError(f"--quality: unknown quality {options.quality!r} (allowed: {', '.join(QUALITIES)})")
    return cast("Quality", options.quality)


def _filtered_blocks(source: AudioSource, sr_out: int, quality: Quality) -> Iterator[np.ndarray]:
    """Band-limited output blocks (soxr), ending with the filter tail."""
    dtype = np.float64 if quality == "very-high" else np.float32
    resampler = Resampler(sr_in=source.sr, sr_out=sr_out, channels=source.channels, dtype=dtype, quality=quality)
    for block in source.blocks(BLOCK_SAMPLES, dtype=np.dtype(dtype).name):
        yield resampler.process(block)
    yield resampler.flush()


def _naive_blocks(source: AudioSource, sr_out: int, method: Literal["nearest"]) -> Iterator[np.ndarray]:
    """Output of the naive ``method`` on the whole input, computed in chunks.

    With ``g = gcd(sr_in, sr_out)``, every ``L = sr_in / g`` input samples map
    to exactly ``M = sr_out / g`` output samples.  Chunks start at multiples
    of ``L`` and carry one extra sample (the next chunk's first, which
    ``nearest`` or ``linear`` may need), so each chunk's first ``k·M`` outputs
    equal the one-shot result; the last chunk gives the rest, ending at
    :func:`output_length` of the whole input.  Samples are float64 (picking
    is exact for every input subtype).
    """
    g = gcd(source.sr, sr_out)
    period_in, period_out = source.sr // g, sr_out // g
    periods = max(1, BLOCK_SAMPLES // period_in)
    step = periods * period_in
    start = 0
    for block in source.blocks(step + 1, overlap=1, dtype="float64"):
        y = resample(block, sr_in=source.sr, sr_out=sr_out, method=method)
        last = start + block.shape[1] >= source.n_samples
        yield y if last else y[:, : periods * period_out]
        start += step


def resample_file(
    path: str, output: str | None, options: ResampleOptions, *, inputs: InputOptions = InputOptions(), reporter: Reporter = SILENT
) -> ResampleResult:
    """Resample ``path`` into ``output`` (default ``<stem>.<rate>.wav`` beside the input; ``-``: stdout)."""
    sr_out = target_rate(options.to)
    quality = _quality(options)
    requested = resolve_subtype(options.subtype) if options.subtype is not None else None
    # the derived name needs a file name: stdin without -o is refused before stdin is read
    target = output if output is not None else str(derived_output(path, rate_tag(sr_out), ".wav"))
    with inputs.open(path) as source:
        subtype = resolve_subtype(requested, source.subtype, target=target)
        check_output_path(target, [path])
        audio_container(target, subtype)
        n_out = output_length(source.n_samples, sr_in=source.sr, sr_out=sr_out)

        def blocks() -> Iterator[np.ndarray]:
            if options.no_filter:
                return _naive_blocks(source, sr_out, NAIVE_METHOD)
            return _filtered_blocks(source, sr_out, quality)

        guard = FullScaleGuard(subtype)
        passes = 2 if options.normalize else 1
        scale = source.n_samples / max(n_out, 1)  # progress is counted in input samples
        with reporter.progress(f"resample {source.name}", passes * source.n_samples) as advance:
            if options.normalize:
                peak = 0.0
                for y in blocks():
                    peak = max(peak, measure_overshoot(y).peak)
                    advance(y.shape[1] * scale)
                if guard.fit_peak(peak):
                    reporter.info(
                        f"{target}: resampled peak {dbfs(peak):+.2f} dBFS; --normalize applies a gain of "
                        f"{dbfs(guard.gain):.2f} dB"
                    )
                else:
                    reporter.info(f"{target}: resampled peak {dbfs(peak):+.2f} dBFS is within full scale; no gain applied")
            with WavWriter(target, sr=sr_out, channels=source.channels, subtype=subtype, expected_samples=n_out) as writer:
                for y in blocks():
                    writer.write(guard(y))
                    advance(y.shape[1] * scale)
    message = guard.warning(target, "the resampled signal")
    if message:
        warnings.warn(message, stacklevel=2)
    if n_out == 0:
        warnings.warn(f"{target}: the input is too short for {sr_out} Hz: the output has 0 samples", stacklevel=2)
    return ResampleResult(
        output=target, sr=sr_out, n_samples=n_out, subtype=subtype, gain=guard.gain, source=SourceFacts.of(source)
    )


def check_options(options: ResampleOptions) -> None:
    """Rate-free checks (exit 2 before any input is read): the target rate, the quality, the subtype."""
    target_rate(options.to)
    _quality(options)
    if options.subtype is not None:
        resolve_subtype(options.subtype)


def _outputs(options: ResampleOptions, stem: str, png: bool) -> dict[str, str]:
    return {"wav": f"{stem}.{rate_tag(target_rate(options.to))}.wav"}


def _run(path: str, outputs: Mapping[str, str], options: ResampleOptions, inputs: InputOptions) -> JobResult:
    result = resample_file(path, outputs["wav"], options, inputs=inputs)
    return JobResult(result.source, shape=(result.source.channels, result.n_samples))


#: The registry's spec of ``resample`` (:mod:`audiokit.pipelines.registry`): ``<stem>.<rate>.wav`` per input.
RESAMPLE_SPEC = JobSpec(name="resample", options=ResampleOptions, check=check_options, outputs=_outputs, run=_run)

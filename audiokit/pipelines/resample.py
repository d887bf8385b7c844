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
* Range: soxr filters in single precision (below ``very-high`` in and out,
  internally at every quality), so a float input whose filtered values
  overflow float32 (samples near 3e38) is redone scaled: the input times
  2**-e (e the exponent of its peak, exact), the output times 2**e
  (resampling is linear).  A result beyond float32's range written as FLOAT
  is refused (exit 3: ``--normalize`` or ``--subtype DOUBLE``) -- never Inf
  or NaN at exit 0.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

import numpy as np

from ..dsp.levels import dbfs
from ..dsp.resample import (
    QUALITIES,
    Resampler,
    block_samples,
    first_nearest_output,
    measure_overshoot,
    nearest_indices,
    output_length,
)
from ..errors import InputError, ParameterError
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


@dataclass(frozen=True)
class _Plan:
    """What one run writes: ``target`` (``-``: stdout) at ``sr_out`` Hz, ``n_out`` samples of ``subtype``, through
    the filter of ``quality`` (or none: ``no_filter``), peak-normalised in a first pass when ``normalize``."""

    target: str
    subtype: str
    sr_out: int
    n_out: int
    quality: Quality
    no_filter: bool
    normalize: bool


class _Overflow(Exception):
    """Filtering a float input overflowed float32: the job restarts scaled (:func:`_peak_exponent`)."""


#: Float subtypes, whose samples can reach float32's range (integer PCM is within ±1).
_FLOAT_SUBTYPES = frozenset({"FLOAT", "DOUBLE"})


def _peak_exponent(source: AudioSource) -> int:
    """``e`` with the input's peak below ``2**e`` (a reading pass): the scaled run's exponent."""
    peak = 0.0
    for block in source.blocks(BLOCK_SAMPLES, dtype="float64"):
        if block.size:
            peak = max(peak, float(np.abs(block).max()))
    return int(np.frexp(peak)[1])


def _filtered_blocks(source: AudioSource, sr_out: int, quality: Quality, *, exponent: int = 0) -> Iterator[np.ndarray]:
    """Band-limited output blocks (soxr), ending with the filter tail; input blocks sized by
    :func:`~audiokit.dsp.resample.block_samples`, so a large up-ratio or many channels do not grow them.

    With ``exponent`` e > 0 the input is filtered times ``2**-e`` in double precision and the output scaled back
    by ``2**e``.  Otherwise a non-finite block from a float input (soxr's single-precision sums overflowed: the
    reader passes only finite samples) raises :class:`_Overflow`.
    """
    dtype = np.float64 if exponent or quality == "very-high" else np.float32
    watch = not exponent and source.subtype in _FLOAT_SUBTYPES
    resampler = Resampler(sr_in=source.sr, sr_out=sr_out, channels=source.channels, dtype=dtype, quality=quality)
    size = block_samples(BLOCK_SAMPLES, sr_in=source.sr, sr_out=sr_out, channels=source.channels)
    with np.errstate(over="ignore", invalid="ignore"):
        for block in source.blocks(size, dtype=np.dtype(dtype).name):
            y = resampler.process(np.ldexp(block, -exponent) if exponent else block)
            if watch and not np.isfinite(y).all():
                raise _Overflow
            yield np.ldexp(y, exponent) if exponent else y
        y = resampler.flush()
    if watch and not np.isfinite(y).all():
        raise _Overflow
    yield np.ldexp(y, exponent) if exponent else y


def _check_float32_range(y: np.ndarray, subtype: str, target: str) -> None:
    """A FLOAT output cannot hold values beyond float32's largest (they would be written as Inf): refuse."""
    if subtype == "FLOAT" and y.size and y.dtype == np.float64 and float(np.abs(y).max()) > float(np.finfo(np.float32).max):
        raise InputError(
            f"the resampled signal exceeds float32's range (peak {dbfs(float(np.abs(y).max())):+.2f} dBFS): "
            "use --normalize, or --subtype DOUBLE",
            target,
        )


def _naive_blocks(source: AudioSource, sr_out: int) -> Iterator[np.ndarray]:
    """The ``nearest`` picks of the whole input, block by block (float64 samples: picking is exact).

    Output sample ``m`` takes input sample ``min(floor(m * sr_in / sr_out + 1/2), n - 1)``
    (:func:`~audiokit.dsp.resample.nearest_indices`), so a block of input samples ``[start, end)`` gives the outputs
    from :func:`~audiokit.dsp.resample.first_nearest_output` of ``start`` to that of ``end`` (the last block: to
    :func:`output_length` of the whole input) -- the one-shot result, in blocks of bounded size for any pair of rates.
    """
    sr_in, n = source.sr, source.n_samples
    n_out = output_length(n, sr_in=sr_in, sr_out=sr_out)
    size = block_samples(BLOCK_SAMPLES, sr_in=sr_in, sr_out=sr_out, channels=source.channels)
    start = m = 0
    for block in source.blocks(size, dtype="float64"):
        end = start + block.shape[1]
        m_end = n_out if end >= n else min(n_out, first_nearest_output(end, sr_in=sr_in, sr_out=sr_out))
        idx = np.minimum(nearest_indices(m, m_end, sr_in=sr_in, sr_out=sr_out), n - 1) - start
        yield block[:, idx]
        start, m = end, m_end


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
        plan = _Plan(target, subtype, sr_out, n_out, quality, options.no_filter, options.normalize)
        try:
            guard = _write(source, plan, reporter)
        except _Overflow:
            guard = _write(source, plan, reporter, exponent=_peak_exponent(source))
    message = guard.warning(target, "the resampled signal")
    if message:
        warnings.warn(message, stacklevel=2)
    if n_out == 0:
        warnings.warn(f"{target}: the input is too short for {sr_out} Hz: the output has 0 samples", stacklevel=2)
    return ResampleResult(
        output=target, sr=sr_out, n_samples=n_out, subtype=subtype, gain=guard.gain, source=SourceFacts.of(source)
    )


def _write(source: AudioSource, plan: _Plan, reporter: Reporter, *, exponent: int = 0) -> FullScaleGuard:
    """Resample ``source`` as ``plan`` says (one or two passes, see ``normalize``); the guard that scaled the output.

    ``exponent``: the input is filtered times ``2**-exponent`` and the output scaled back (see the module docstring).
    """
    target, subtype, sr_out, n_out = plan.target, plan.subtype, plan.sr_out, plan.n_out

    def blocks() -> Iterator[np.ndarray]:
        if plan.no_filter:
            return _naive_blocks(source, sr_out)
        return _filtered_blocks(source, sr_out, plan.quality, exponent=exponent)

    guard = FullScaleGuard(subtype)
    passes = 2 if plan.normalize else 1
    scale = source.n_samples / max(n_out, 1)  # progress is counted in input samples
    with reporter.progress(f"resample {source.name}", passes * source.n_samples) as advance:
        if plan.normalize:
            peak = 0.0
            for y in blocks():
                peak = max(peak, measure_overshoot(y).peak)
                advance(y.shape[1] * scale)
            if guard.fit_peak(peak):
                reporter.info(
                    f"{target}: resampled peak {dbfs(peak):+.2f} dBFS; --normalize applies a gain of {dbfs(guard.gain):.2f} dB"
                )
            else:
                reporter.info(f"{target}: resampled peak {dbfs(peak):+.2f} dBFS is within full scale; no gain applied")
        with WavWriter(target, sr=sr_out, channels=source.channels, subtype=subtype, expected_samples=n_out) as writer:
            for y in blocks():
                scaled = guard(y)
                _check_float32_range(scaled, subtype, target)
                writer.write(scaled)
                advance(y.shape[1] * scale)
    return guard


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

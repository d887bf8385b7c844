"""The ``quantize`` job: requantize a file to B bits (dither, noise shaping) and measure the error.

Measures (also in README "audiokit quantize"), over all channels and samples,
with ``x`` the input and ``y`` the output in full-scale units (1.0 = 0 dBFS)
and ``e = y - x`` the total error (rounding, dither, shaping and clipping)::

    sqnr_db                   = 10·log10(Σx² / Σe²)      (as audiokit.dsp.quantize.sqnr_db)
    signal_rms_dbfs           = 10·log10(mean x²)
    noise_rms_dbfs            = 10·log10(mean e²)        (as audiokit.dsp.quantize.noise_rms_dbfs)
    noise_density_dbfs_per_hz = noise_rms_dbfs - 10·log10(sr / 2)

The last one is the average one-sided noise power density.  Infinite values
(no error at all, or a silent input) are ``null`` in JSON.  The sums are scaled
by powers of two where squares would overflow (:class:`~audiokit.dsp.levels.ScaledSums`),
so a finite 1e307 sample of a DOUBLE input (one clipped sample) gives finite measures.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..dsp.levels import ScaledSums
from ..dsp.quantize import DITHERS, MAX_BITS, MIN_BITS, NOISE_SHAPES, Quantizer, expected_noise_power, theoretical_sqnr_db
from ..errors import ParameterError
from ..io import WavWriter, check_output_path, derived_output
from ..io.reader import BLOCK_SAMPLES
from ..io.subtypes import SUBTYPE_CAPACITY, resolve_subtype
from ..io.writer import audio_container
from .params import InputOptions, finite_or_none
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, SourceFacts

if TYPE_CHECKING:
    from ..dsp.quantize import Dither, NoiseShape

__all__ = ["QUANTIZE_SPEC", "QuantizeOptions", "QuantizeResult", "quantize_file", "default_subtype", "output_subtype"]


@dataclass(frozen=True)
class QuantizeOptions:
    """Options of ``audiokit quantize``."""

    bits: int
    dither: str = "tpdf"
    noise_shape: str = "none"
    seed: int = 0
    subtype: str | None = None

    def check(self) -> None:
        """Refuse out-of-range values with the option named (before any work)."""
        if not MIN_BITS <= self.bits <= MAX_BITS:
            raise ParameterError(f"--bits: {self.bits} is outside {MIN_BITS}..{MAX_BITS}")
        if self.seed < 0:
            raise ParameterError(f"--seed: {self.seed} is negative; give a whole number >= 0")
        if self.dither not in DITHERS:
            raise ParameterError(f"--dither: unknown dither {self.dither!r} (allowed: {', '.join(DITHERS)})")
        if self.noise_shape not in NOISE_SHAPES:
            raise ParameterError(
                f"--noise-shape: unknown noise shaping {self.noise_shape!r} (allowed: {', '.join(NOISE_SHAPES)})"
            )


def default_subtype(bits: int) -> str:
    """Smallest PCM subtype that holds B-bit codes exactly: PCM_U8 (B <= 8), PCM_16 (B <= 16), else PCM_24."""
    return "PCM_U8" if bits <= 8 else "PCM_16" if bits <= 16 else "PCM_24"


def output_subtype(bits: int, requested: str | None) -> str:
    """The subtype to write: ``requested`` if it holds B bits exactly, else the default (ParameterError if too small)."""
    if requested is None:
        return default_subtype(bits)
    subtype = resolve_subtype(requested)
    if SUBTYPE_CAPACITY[subtype] < bits:
        raise ParameterError(
            f"--subtype {subtype} holds only {SUBTYPE_CAPACITY[subtype]} bits, fewer than --bits {bits}; "
            f"use {default_subtype(bits)} or a larger one"
        )
    return subtype


def _db(ratio: float) -> float:
    """``10·log10(ratio)``: ``inf`` for a ratio of inf, ``-inf`` for 0."""
    if ratio == 0:
        return -math.inf
    return math.inf if math.isinf(ratio) else 10.0 * math.log10(ratio)


@dataclass(frozen=True)
class QuantizeResult:
    """``report``: the ``--json`` object of the README; the three measures unrounded (dB, may be ±inf)."""

    report: dict[str, Any]
    sqnr_db: float
    noise_rms_dbfs: float
    expected_noise_rms_dbfs: float
    source: SourceFacts

    @property
    def output(self) -> str:
        """The written WAV (``-``: stdout)."""
        return str(self.report["output"])

    def summary(self) -> str:
        """One human line: settings, SQNR, noise RMS against the expected value, clipped count."""
        r = self.report
        seeded = f", seed {r['seed']}" if r["dither"] != "none" else ""
        return (
            f"{r['output']}: {r['bits']} bits, {r['dither']} dither, noise shaping {r['noise_shape']}{seeded}: "
            f"SQNR {self.sqnr_db:.2f} dB, noise {self.noise_rms_dbfs:.2f} dBFS RMS "
            f"(expected {self.expected_noise_rms_dbfs:.2f}), {r['clipped']} clipped"
        )


def quantize_file(
    path: str, output: str | None, options: QuantizeOptions, *, inputs: InputOptions = InputOptions(), reporter: Reporter = SILENT
) -> QuantizeResult:
    """Quantize ``path`` into ``output`` (default ``<stem>.<B>bit.wav`` beside it; ``-``: stdout)."""
    options.check()
    bits = options.bits
    dither, noise_shape = cast("Dither", options.dither), cast("NoiseShape", options.noise_shape)
    subtype = output_subtype(bits, options.subtype)
    # the derived name needs a file name: stdin without -o is refused before stdin is read
    target = output if output is not None else str(derived_output(path, f"{bits}bit", ".wav"))
    if options.subtype is None:  # the smallest subtype holding B bits that the container holds (.flac: PCM_U8 -> PCM_16)
        subtype = resolve_subtype(None, subtype, target=target)
    with inputs.open(path) as source:
        check_output_path(target, [path])
        audio_container(target, subtype)
        quantizer = Quantizer(bits=bits, channels=source.channels, dither=dither, noise_shape=noise_shape, seed=options.seed)
        signal, noise = ScaledSums(1), ScaledSums(1)  # Σx², Σe² over all channels, finite for any finite x
        with (
            reporter.progress(f"quantize {source.name}", source.n_samples) as advance,
            WavWriter(
                target, sr=source.sr, channels=source.channels, subtype=subtype, expected_samples=source.n_samples
            ) as writer,
        ):
            for x in source.blocks(BLOCK_SAMPLES, dtype="float64"):
                y = quantizer.process(x)
                e = (y - x).reshape(1, -1)
                signal.add(x.reshape(1, -1))
                noise.add(e)
                writer.write(y)
                advance(x.shape[1])
        sr, n_channels = source.sr, source.channels
        facts = SourceFacts.of(source)
    count_db = 10.0 * math.log10(max(quantizer.n_samples * n_channels, 1))
    signal_db, noise_db = float(signal.energy_db()[0]), float(noise.energy_db()[0])
    sqnr = signal_db - noise_db if noise_db > -math.inf else math.inf
    noise_rms = noise_db - count_db
    expected_rms = _db(expected_noise_power(bits, dither=dither, noise_shape=noise_shape))
    if quantizer.n_clipped:
        warnings.warn(
            f"{target}: {quantizer.n_clipped} samples fell outside the {bits}-bit range [-1, 1 - 2^-{bits - 1}] "
            "and were clipped to its end codes",
            stacklevel=2,
        )
    report = {
        "path": path,
        "output": target,
        "bits": bits,
        "step": 2.0 ** (1 - bits),
        "dither": options.dither,
        "noise_shape": options.noise_shape,
        "seed": options.seed,
        "subtype": subtype,
        "sr": sr,
        "channels": n_channels,
        "frames": quantizer.n_samples,
        "sqnr_db": finite_or_none(sqnr),
        "signal_rms_dbfs": finite_or_none(signal_db - count_db),
        "noise_rms_dbfs": finite_or_none(noise_rms),
        "noise_density_dbfs_per_hz": finite_or_none(noise_rms - 10.0 * math.log10(sr / 2)),
        "expected_noise_rms_dbfs": finite_or_none(expected_rms),
        "full_scale_sine_sqnr_db": finite_or_none(theoretical_sqnr_db(bits, dither=dither, noise_shape=noise_shape)),
        "clipped": quantizer.n_clipped,
    }
    return QuantizeResult(report, sqnr, noise_rms, expected_rms, facts)


def _check(options: QuantizeOptions) -> None:
    options.check()


def _outputs(options: QuantizeOptions, stem: str, png: bool) -> dict[str, str]:
    return {"wav": f"{stem}.{options.bits}bit.wav"}


def _run(path: str, outputs: Mapping[str, str], options: QuantizeOptions, inputs: InputOptions) -> JobResult:
    result = quantize_file(path, outputs["wav"], options, inputs=inputs)
    return JobResult(result.source, shape=(result.source.channels, result.report["frames"]))


#: The registry's spec of ``quantize`` (:mod:`audiokit.pipelines.registry`): ``<stem>.<B>bit.wav`` per input.
QUANTIZE_SPEC = JobSpec(name="quantize", options=QuantizeOptions, check=_check, outputs=_outputs, run=_run)

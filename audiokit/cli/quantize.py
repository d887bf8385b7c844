"""``audiokit quantize``: requantize a file to B bits (dither, noise shaping) and measure the error.

The core (:mod:`audiokit.dsp.quantize`) does the maths; this module streams
blocks through a :class:`~audiokit.dsp.quantize.Quantizer` (bit-identical to
the one-shot :func:`~audiokit.dsp.quantize.quantize`), writes the grid values
to a WAV that holds them exactly and accumulates the error statistics.

Measures (also in README "audiokit quantize"), over all channels and samples,
with ``x`` the input and ``y`` the output in full-scale units (1.0 = 0 dBFS)
and ``e = y - x`` the total error (rounding, dither, shaping and clipping)::

    sqnr_db                  = 10·log10(Σx² / Σe²)
    signal_rms_dbfs          = 10·log10(mean x²)
    noise_rms_dbfs           = 10·log10(mean e²)
    noise_density_dbfs_per_hz = noise_rms_dbfs - 10·log10(sr / 2)

The last one is the average one-sided noise power density (a flat noise
spectrum with this density holds the measured noise power between 0 and
``sr/2``).  Infinite values (no error at all, or a silent input) are ``null``
in JSON.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from typing import Annotated, Optional

import numpy as np
import typer

from ..dsp.quantize import (
    DITHERS,
    MAX_BITS,
    MIN_BITS,
    NOISE_SHAPES,
    Quantizer,
    expected_noise_power,
    theoretical_sqnr_db,
)
from ..errors import ParameterError
from ..io import WavWriter, check_output_path, derived_output, resolve_subtype
from . import console
from .options import Debug, FixNonFinite, Quiet, RawChannels, RawFormatOpt, RawRate, open_input

BLOCK_FRAMES = 1 << 16
#: Bits each output subtype holds exactly (FLOAT: the 24-bit float32 significand).
SUBTYPE_CAPACITY = {"PCM_U8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32, "FLOAT": 24, "DOUBLE": 53}


def default_subtype(bits: int) -> str:
    """Smallest PCM subtype that holds B-bit codes exactly: PCM_U8 (B <= 8), PCM_16 (B <= 16), else PCM_24."""
    return "PCM_U8" if bits <= 8 else "PCM_16" if bits <= 16 else "PCM_24"


def _subtype_for(bits: int, requested: str | None) -> str:
    if requested is None:
        return default_subtype(bits)
    kind = resolve_subtype(requested)
    if SUBTYPE_CAPACITY[kind] < bits:
        raise ParameterError(
            f"--subtype {kind} holds only {SUBTYPE_CAPACITY[kind]} bits, fewer than --bits {bits}; "
            f"use {default_subtype(bits)} or a larger one"
        )
    return kind


def _db(ratio: float) -> float:
    """``10·log10(ratio)``: ``inf`` for a ratio of inf, ``-inf`` for 0."""
    if ratio == 0:
        return -math.inf
    return math.inf if math.isinf(ratio) else 10.0 * math.log10(ratio)


def _json_number(value: float) -> float | None:
    """Round for JSON; None for ``±inf`` (JSON has no infinities)."""
    return round(value, 4) if math.isfinite(value) else None


def quantize_command(
    file: Annotated[str, typer.Argument(help="Audio file (WAV, FLAC, OGG, raw PCM with --format), or - for stdin.")],
    bits: Annotated[int, typer.Option("--bits", help=f"Bit depth B, {MIN_BITS}..{MAX_BITS}: step 2^-(B-1) of full scale.")],
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="WAV file to write, or - for stdout.  Default: <stem>.<B>bit.wav beside the input."),
    ] = None,
    dither: Annotated[str, typer.Option("--dither", help="Dither added before rounding: tpdf, rpdf or none.")] = "tpdf",
    noise_shape: Annotated[
        str, typer.Option("--noise-shape", help="Noise shaping: none, or first (first-order error feedback, 1 - z^-1).")
    ] = "none",
    seed: Annotated[int, typer.Option("--seed", help="Dither seed (>= 0): the same seed gives the same output.")] = 0,
    subtype: Annotated[
        Optional[str],
        typer.Option(
            "--subtype",
            help="Output PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE (must hold B bits).  "
            "Default: the smallest PCM that holds B bits.",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the settings and measures (SQNR, noise floor, clipped) as JSON on stdout.")
    ] = False,
    rate: RawRate = None,
    fmt: RawFormatOpt = None,
    channels: RawChannels = 1,
    fix_nonfinite: FixNonFinite = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Requantize to B bits on the mid-tread grid k / 2^(B-1) and report the SQNR.

    Values are rounded to the nearest level (ties up) after the dither (TPDF
    by default) and optional first-order noise shaping; samples outside
    [-1, 1 - 2^-(B-1)] are clipped and counted.  The WAV holds exactly the B-bit
    values: by default PCM_U8 for B <= 8, PCM_16 for B <= 16, PCM_24 above.

    SQNR = 10 log10(sum x^2 / sum (y - x)^2) over the whole file (x input,
    y output); undithered, a full-scale sine reads about 6.02 B + 1.76 dB.
    The summary goes to stderr, or with --json to stdout as data; the written
    path is printed on stdout (nothing with -o -).

    Example:

        audiokit quantize examples/data/speech.wav --bits 8 --dither none

        audiokit quantize tone.wav --bits 4 --noise-shape first --json -o tone4.wav
    """
    console.configure(quiet=quiet)
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ParameterError(f"--bits: {bits} is outside {MIN_BITS}..{MAX_BITS}")
    if seed < 0:
        raise ParameterError(f"--seed: {seed} is negative; give a whole number >= 0")
    if dither not in DITHERS:
        raise ParameterError(f"--dither: unknown dither {dither!r} (allowed: {', '.join(DITHERS)})")
    if noise_shape not in NOISE_SHAPES:
        raise ParameterError(f"--noise-shape: unknown noise shaping {noise_shape!r} (allowed: {', '.join(NOISE_SHAPES)})")
    kind = _subtype_for(bits, subtype)
    if json_out and output == "-":
        raise ParameterError("--json and -o - would both write to stdout; give -o PATH with --json")
    target = output if output is not None else str(derived_output(file, f"{bits}bit", ".wav"))
    if target == "-" and sys.stdout.isatty():
        raise ParameterError("refusing to write WAV bytes to a terminal: give -o PATH or pipe the output")
    check_output_path(target, [file])

    with open_input(file, rate, fmt, channels, fix_nonfinite) as source:
        quantizer = Quantizer(bits=bits, channels=source.channels, dither=dither, noise_shape=noise_shape, seed=seed)
        signal_energy = noise_energy = 0.0
        with console.progress(f"quantize {source.name}", source.frames) as advance, WavWriter(
            target, sr=source.sr, channels=source.channels, subtype=kind, expected_frames=source.frames
        ) as writer:
            for x in source.blocks(BLOCK_FRAMES, dtype="float64"):
                y = quantizer.process(x)
                e = y - x
                signal_energy += float(np.einsum("ij,ij->", x, x))
                noise_energy += float(np.einsum("ij,ij->", e, e))
                writer.write(y)
                advance(x.shape[1])
        sr, n_channels = source.sr, source.channels
    count = quantizer.n_samples * n_channels
    sqnr = _db(signal_energy / noise_energy if noise_energy > 0 else math.inf)
    noise_rms = _db(noise_energy / count)
    expected_rms = _db(expected_noise_power(bits, dither=dither, noise_shape=noise_shape))
    report = {
        "path": file,
        "output": target,
        "bits": bits,
        "step": 2.0 ** (1 - bits),
        "dither": dither,
        "noise_shape": noise_shape,
        "seed": seed,
        "subtype": kind,
        "sr": sr,
        "channels": n_channels,
        "frames": quantizer.n_samples,
        "sqnr_db": _json_number(sqnr),
        "signal_rms_dbfs": _json_number(_db(signal_energy / count)),
        "noise_rms_dbfs": _json_number(noise_rms),
        "noise_density_dbfs_per_hz": _json_number(noise_rms - 10.0 * math.log10(sr / 2)),
        "expected_noise_rms_dbfs": _json_number(expected_rms),
        "full_scale_sine_sqnr_db": _json_number(theoretical_sqnr_db(bits, dither=dither, noise_shape=noise_shape)),
        "clipped": quantizer.n_clipped,
    }
    if quantizer.n_clipped:
        warnings.warn(
            f"{target}: {quantizer.n_clipped} samples fell outside the {bits}-bit range [-1, 1 - 2^-{bits - 1}] "
            "and were clipped to its end codes",
            stacklevel=1,
        )
    if json_out:
        print(json.dumps(report, indent=2))
        return 0
    seeded = f", seed {seed}" if dither != "none" else ""
    console.info(
        f"{target}: {bits} bits, {dither} dither, noise shaping {noise_shape}{seeded}: "
        f"SQNR {sqnr:.2f} dB, noise {noise_rms:.2f} dBFS RMS (expected {expected_rms:.2f}), "
        f"{quantizer.n_clipped} clipped"
    )
    if target != "-":
        print(target)
    return 0

"""``audiokit resample``: sample-rate conversion of a file, streamed block by block.

The core (:mod:`audiokit.dsp.resample`) does the maths; this module reads
blocks, feeds them to a :class:`~audiokit.dsp.resample.Resampler` (or, with
``--no-filter``, to the naive ``nearest`` method in period-aligned chunks),
watches the output for overshoot beyond full scale and writes a WAV.

Conventions (also in README "audiokit resample")
------------------------------------------------
* Output length ``floor(n * sr_out / sr_in + 1/2)``; input sample ``k`` is
  time ``k / sr_in``, output sample ``m`` time ``m / sr_out`` (both start at
  t = 0, filter delay compensated).
* ``--no-filter`` picks input sample ``floor(m * sr_in / sr_out + 1/2)`` for
  output sample ``m`` (no anti-alias filter: everything above the new Nyquist
  folds back).
* Overshoot (``|y| > 1``) is never clipped silently: FLOAT/DOUBLE output keeps
  it, PCM output clips it to the end codes; either way a warning gives the
  peak in dBFS and the count.  ``--normalize`` reads the input twice (a first
  pass measures the output peak, the second writes with the gain
  ``limit / peak``, ``limit`` being 1.0 for float output and the largest code
  ``1 - 2**-(B-1)`` for B-bit PCM).  Standard input is spooled by the reader,
  so it can be read twice as well.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from math import gcd
from typing import Annotated, Optional

import numpy as np
import typer

from ..dsp.levels import dbfs
from ..dsp.resample import QUALITIES, Resampler, measure_overshoot, output_length, resample
from ..errors import ParameterError
from ..io import SUBTYPE_BITS, WavWriter, check_output_path, derived_output, resolve_subtype
from ..io.reader import MAX_SR, MIN_SR, AudioSource
from ..units import parse_rate
from . import console
from .options import (
    Debug,
    FixNonFinite,
    Quiet,
    RawChannels,
    RawFormatOpt,
    RawRate,
    open_input,
    option_error,
)

BLOCK_FRAMES = 1 << 16
#: ``--no-filter`` method of :func:`audiokit.dsp.resample.resample` (sample picking).
NAIVE_METHOD = "nearest"
DEFAULT_QUALITY = "high"


def rate_tag(sr: int) -> str:
    """Short rate text for derived file names: 16000 -> ``16k``, 44100 -> ``44.1k``, 500 -> ``500Hz``."""
    if sr < 1000:
        return f"{sr}Hz"
    whole, rest = divmod(sr, 1000)
    return f"{whole}.{rest:03d}".rstrip("0").rstrip(".") + "k"


def _target_rate(text: str) -> int:
    try:
        sr = parse_rate(text)
    except ParameterError as exc:
        raise option_error("--to", exc) from None
    if not MIN_SR <= sr <= MAX_SR:
        raise ParameterError(f"--to: {sr} Hz is outside the accepted range {MIN_SR}..{MAX_SR} Hz")
    return sr


def _filtered_blocks(source: AudioSource, sr_out: int, quality: str) -> Iterator[np.ndarray]:
    """Band-limited output blocks (soxr), ending with the filter tail."""
    dtype = np.float64 if quality == "very-high" else np.float32
    resampler = Resampler(sr_in=source.sr, sr_out=sr_out, channels=source.channels, dtype=dtype, quality=quality)
    for block in source.blocks(BLOCK_FRAMES, dtype=np.dtype(dtype).name):
        yield resampler.process(block)
    yield resampler.flush()


def _naive_blocks(source: AudioSource, sr_out: int, method: str) -> Iterator[np.ndarray]:
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
    periods = max(1, BLOCK_FRAMES // period_in)
    step = periods * period_in
    start = 0
    for block in source.blocks(step + 1, overlap=1, dtype="float64"):
        y = resample(block, sr_in=source.sr, sr_out=sr_out, method=method)
        last = start + block.shape[1] >= source.frames
        yield y if last else y[:, : periods * period_out]
        start += step


def resample_command(
    file: Annotated[str, typer.Argument(help="Audio file (WAV, FLAC, OGG, raw PCM with --format), or - for stdin.")],
    to: Annotated[str, typer.Option("--to", help="Target sample rate: 16000, 16k, 44.1kHz.")],
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="WAV file to write, or - for stdout.  Default: <stem>.<rate>.wav beside the input."),
    ] = None,
    quality: Annotated[
        Optional[str],
        typer.Option("--quality", help="Filter: very-high, high (default), medium, low, quick (soxr recipes)."),
    ] = None,
    no_filter: Annotated[
        bool,
        typer.Option("--no-filter", help="No anti-alias filter: pick the nearest input sample (shows aliasing)."),
    ] = False,
    normalize: Annotated[
        bool,
        typer.Option("--normalize", help="If the output would exceed full scale, scale it down to fit (reads the input twice)."),
    ] = False,
    subtype: Annotated[
        Optional[str],
        typer.Option("--subtype", help="Output PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE.  Default: as the input."),
    ] = None,
    rate: RawRate = None,
    fmt: RawFormatOpt = None,
    channels: RawChannels = 1,
    fix_nonfinite: FixNonFinite = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Convert the sample rate (band-limited, or naive with --no-filter) and write WAV.

    The output has floor(n * sr_out / sr_in + 1/2) samples and starts at the same
    instant as the input (filter delay compensated).  --quality picks the soxr
    filter: high (default) keeps aliases 120 dB down and the passband within
    0.01 dB up to 0.9 x the lower Nyquist; very-high buys ~45 dB more.
    --no-filter picks the nearest input sample instead: a 9 kHz tone taken from
    48 kHz to 16 kHz comes out at 7 kHz.

    A result beyond full scale is reported (peak dBFS, count) and kept in FLOAT
    output, clipped in PCM output; --normalize scales it down instead.  The
    written path is printed on stdout (nothing with -o -).

    Example:

        audiokit resample examples/data/speech.wav --to 8k

        audiokit generate "sine:9k" --rate 48k | audiokit resample - --to 16k --no-filter -o alias.wav
    """
    console.configure(quiet=quiet)
    sr_out = _target_rate(to)
    if no_filter and quality is not None:
        raise ParameterError("--quality has no effect with --no-filter (there is no filter); give one or the other")
    if quality is None:
        quality = DEFAULT_QUALITY
    elif quality not in QUALITIES:
        raise ParameterError(f"--quality: unknown quality {quality!r} (allowed: {', '.join(QUALITIES)})")
    if subtype is not None:
        subtype = resolve_subtype(subtype)
    target = output if output is not None else str(derived_output(file, rate_tag(sr_out), ".wav"))
    if target == "-" and sys.stdout.isatty():
        raise ParameterError("refusing to write WAV bytes to a terminal: give -o PATH or pipe the output")
    check_output_path(target, [file])

    with open_input(file, rate, fmt, channels, fix_nonfinite) as source:
        kind = resolve_subtype(subtype, source.subtype)
        bits = SUBTYPE_BITS[kind]
        n_out = output_length(source.frames, sr_in=source.sr, sr_out=sr_out)

        def blocks() -> Iterator[np.ndarray]:
            if no_filter:
                return _naive_blocks(source, sr_out, NAIVE_METHOD)
            return _filtered_blocks(source, sr_out, quality)

        passes = 2 if normalize else 1
        gain, fit = 1.0, 1.0
        with console.progress(f"resample {source.name}", passes * source.frames) as advance:
            if normalize:
                peak = 0.0
                for y in blocks():
                    peak = max(peak, measure_overshoot(y).peak)
                    advance(y.shape[1] * source.frames / max(n_out, 1))
                fit = 1.0 if bits is None else 1.0 - 2.0 ** -(bits - 1)
                if peak > 1.0:
                    gain = fit / peak
                    console.info(
                        f"{target}: resampled peak {dbfs(peak):+.2f} dBFS; --normalize applies a gain of "
                        f"{dbfs(gain):.2f} dB"
                    )
                else:
                    console.info(f"{target}: resampled peak {dbfs(peak):+.2f} dBFS is within full scale; no gain applied")
            peak, n_over = 0.0, 0
            with WavWriter(target, sr=sr_out, channels=source.channels, subtype=kind, expected_frames=n_out) as writer:
                for y in blocks():
                    if gain != 1.0:
                        # Computed in float64; the clip only removes a last-ulp excess of the scaled peak.
                        y = np.clip(y.astype(np.float64) * gain, -fit, fit)
                    over = measure_overshoot(y)
                    peak, n_over = max(peak, over.peak), n_over + over.n_over
                    if bits is not None and over.n_over:
                        # Clip here (as the writer would) so the one warning below reports it.
                        y = np.clip(y, -1.0, 1.0)
                    writer.write(y)
                    advance(y.shape[1] * source.frames / max(n_out, 1))
    if n_over:
        fate = f"clipped to fit {kind}" if bits is not None else f"kept as they are in {kind}"
        warnings.warn(
            f"{target}: the resampled signal exceeds full scale (peak {dbfs(peak):+.2f} dBFS): "
            f"{n_over} samples beyond ±1.0 {fate}; use --normalize to scale it down",
            stacklevel=1,
        )
    if n_out == 0:
        warnings.warn(f"{target}: the input is too short for {sr_out} Hz: the output has 0 samples", stacklevel=1)
    if target != "-":
        print(target)
    return 0

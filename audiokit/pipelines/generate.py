"""The ``generate`` job: a test signal from a spec string, written as WAV."""

from __future__ import annotations

from dataclasses import dataclass

from ..io import WavWriter, check_output_path
from ..io.reader import BLOCK_SAMPLES
from ..io.subtypes import resolve_subtype
from ..io.writer import audio_container
from .params import LONGEST_SIGNAL_S, PLAUSIBLE_SIGNAL_S, duration_samples, rate_hz

__all__ = ["GenerateOptions", "GenerateResult", "generate"]


@dataclass(frozen=True)
class GenerateOptions:
    """Options of ``audiokit generate`` as typed (``dur`` ``"2s"``, ``rate`` ``"16k"``)."""

    dur: str = "1s"
    rate: str = "16000"
    seed: int = 0
    channels: int = 1
    subtype: str | None = None  # None: FLOAT (.flac: PCM_24)


@dataclass(frozen=True)
class GenerateResult:
    """``output`` path (``-`` for stdout), sample rate (Hz) and length (samples per channel)."""

    output: str
    sr: int
    n_samples: int


def generate(spec: str, output: str, options: GenerateOptions = GenerateOptions()) -> GenerateResult:
    """Render ``spec`` (see :func:`audiokit.dsp.generate.parse_spec`) into ``output`` (``-``: stdout)."""
    from ..dsp.generate import generate_blocks, parse_spec

    sr = rate_hz("--rate", options.rate)
    n_samples = duration_samples("--dur", options.dur, sr, plausible_s=PLAUSIBLE_SIGNAL_S, longest_s=LONGEST_SIGNAL_S)
    subtype = resolve_subtype(options.subtype, target=output)
    parse_spec(spec)
    check_output_path(output)
    audio_container(output, subtype)
    blocks = generate_blocks(
        spec, n_samples=n_samples, sr=sr, channels=options.channels, seed=options.seed, block_size=BLOCK_SAMPLES
    )
    with WavWriter(output, sr=sr, channels=options.channels, subtype=subtype, expected_samples=n_samples) as writer:
        for block in blocks:
            writer.write(block)
    return GenerateResult(output=output, sr=sr, n_samples=n_samples)

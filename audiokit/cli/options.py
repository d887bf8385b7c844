"""Options shared by several commands, and their parsing into core values."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..errors import ParameterError
from ..io import RawFormat, open_audio
from ..io.reader import AudioSource
from ..units import parse_duration, parse_frequency, parse_rate

RAW_PANEL = "Raw PCM input (headerless files or stdin)"

Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on stderr but errors.")]
Debug = Annotated[bool, typer.Option("--debug", help="Show the Python traceback on errors.")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")]
RawRate = Annotated[
    Optional[str],
    typer.Option("--rate", help="Sample rate of raw PCM input, e.g. 16000 or 16k.", rich_help_panel=RAW_PANEL),
]
RawFormatOpt = Annotated[
    Optional[str],
    typer.Option("--format", help="Raw PCM sample format: s16le, s24le, s32le, u8, f32le, f64le.", rich_help_panel=RAW_PANEL),
]
RawChannels = Annotated[
    int, typer.Option("--channels", help="Channel count of raw PCM input.", rich_help_panel=RAW_PANEL, min=1)
]
FixNonFinite = Annotated[
    bool, typer.Option("--fix-nonfinite", help="Replace NaN/Inf samples with 0 instead of refusing the file.")
]


def choice_option(option: str, value: str, allowed: tuple[str, ...]) -> str:
    """Lower-case ``value`` and check it is one of ``allowed`` (ParameterError naming them otherwise)."""
    low = value.lower()
    if low not in allowed:
        raise ParameterError(f"{option}: {value!r} is not one of {', '.join(allowed)}")
    return low


def option_error(option: str, exc: ParameterError) -> ParameterError:
    """Prefix a parse error with the option name: ``--win: invalid duration 'x' ...``."""
    return ParameterError(f"{option}: {exc.reason}")


def duration_option(option: str, text: str, sr: int, *, allow_zero: bool = False) -> int:
    """Parse a duration option into samples at ``sr`` (see audiokit.units for the rounding)."""
    try:
        samples = parse_duration(text, allow_zero=allow_zero).to_samples(sr)
    except ParameterError as exc:
        raise option_error(option, exc) from None
    if samples == 0 and not allow_zero:
        raise ParameterError(f"{option}: {text!r} rounds to 0 samples at {sr} Hz")
    return samples


def frequency_option(option: str, text: str) -> float:
    """Parse a frequency option into Hz."""
    try:
        return float(parse_frequency(text))
    except ParameterError as exc:
        raise option_error(option, exc) from None


def raw_format(rate: str | None, fmt: str | None, channels: int) -> RawFormat | None:
    """Build the raw PCM description from ``--rate/--format/--channels`` (None when --format is absent).

    ``--format`` switches to raw input; it needs ``--rate``.
    """
    if fmt is None:
        return None
    if rate is None:
        raise ParameterError("--format given for raw PCM input: --rate is required too")
    try:
        sr = parse_rate(rate)
    except ParameterError as exc:
        raise option_error("--rate", exc) from None
    return RawFormat(sr=sr, format=fmt.lower(), channels=channels)


def open_input(
    path: str, rate: str | None, fmt: str | None, channels: int, fix_nonfinite: bool, *, allow_empty: bool = False
) -> AudioSource:
    """Open an input file (or ``-``) with the shared raw-PCM and NaN options."""
    return open_audio(
        path, raw=raw_format(rate, fmt, channels), nonfinite="zero" if fix_nonfinite else "error", allow_empty=allow_empty
    )

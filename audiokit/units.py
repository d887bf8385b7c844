"""Parsing of durations and frequencies, with exact arithmetic.

Durations: ``25ms``, ``0.025s``, ``40us`` and a bare
integer meaning samples (``400``).  Frequencies: ``8kHz``, ``8000Hz``, ``8000``
(a bare number means Hz), ``1.5k``.

Numbers are parsed into :class:`fractions.Fraction` from their decimal text, so
``0.009s`` at 48 kHz is exactly ``432`` samples (a float would give
431.99999999999994 and truncate to 431).  Conversion to samples rounds to the
nearest integer, ties away from zero (``round_half_up``), and is the only
rounding step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .errors import ParameterError

__all__ = ["Duration", "parse_duration", "parse_frequency", "parse_rate", "round_half_up"]

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_DURATION_RE = re.compile(rf"^\s*({_NUMBER})\s*(ms|s|us|µs|samples?|smp)?\s*$", re.IGNORECASE)
_FREQUENCY_RE = re.compile(rf"^\s*({_NUMBER})\s*(hz|khz|k|mhz)?\s*$", re.IGNORECASE)

_SECONDS_PER_UNIT = {"s": Fraction(1), "ms": Fraction(1, 1000), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6)}
_HZ_PER_UNIT = {None: Fraction(1), "hz": Fraction(1), "k": Fraction(1000), "khz": Fraction(1000), "mhz": Fraction(10**6)}


#: Longest accepted mantissa (characters) and exponent (digits): beyond them a
#: number is absurd, and Fraction() would hang (10**huge) or raise a bare
#: ValueError (Python's 4300-digit int limit) instead of a ParameterError.
_MAX_MANTISSA_CHARS, _MAX_EXPONENT_DIGITS = 64, 3


def _exact(number: str, text: str, kind: str) -> Fraction:
    """``Fraction(number)``, refusing numbers too long to be meant."""
    mantissa, _, exponent = number.lower().partition("e")
    if len(mantissa) > _MAX_MANTISSA_CHARS or len(exponent.lstrip("+-")) > _MAX_EXPONENT_DIGITS:
        raise ParameterError(f"invalid {kind} {text!r}: number too long or exponent out of range")
    return Fraction(number)


def round_half_up(value: Fraction) -> int:
    """Round a fraction to the nearest integer, ties away from zero.

    >>> round_half_up(Fraction(5, 2)), round_half_up(Fraction(-5, 2))
    (3, -3)
    """
    sign = -1 if value < 0 else 1
    magnitude = abs(value)
    return sign * int((magnitude + Fraction(1, 2)).__floor__())


@dataclass(frozen=True)
class Duration:
    """A duration as written by the user: seconds or a count of samples.

    Parameters
    ----------
    value : Fraction
        Seconds when ``in_samples`` is False, else a number of samples.
    in_samples : bool
        True when the text was a bare integer (samples).
    text : str
        The original text, for messages.
    """

    value: Fraction
    in_samples: bool
    text: str

    def to_samples(self, sr: int) -> int:
        """Number of samples at sample rate ``sr`` (Hz).

        ``round_half_up(seconds * sr)`` for times; the integer itself for sample
        counts.
        """
        if self.in_samples:
            return int(self.value)
        return round_half_up(self.value * sr)

    def to_seconds(self, sr: int) -> Fraction:
        """Exact duration in seconds (``samples / sr`` for sample counts)."""
        if self.in_samples:
            return self.value / sr
        return self.value


def parse_duration(text: str, *, allow_zero: bool = False) -> Duration:
    """Parse ``25ms``, ``0.025s``, ``40us`` or a bare integer number of samples.

    Parameters
    ----------
    text : str
        The user's text.
    allow_zero : bool
        Accept a zero duration (e.g. a start offset); otherwise it must be > 0.

    Returns
    -------
    Duration

    Raises
    ------
    ParameterError
        On text that is not a duration, a negative value, zero (unless allowed),
        or a fractional number of samples.
    """
    match = _DURATION_RE.match(str(text))
    if not match:
        raise ParameterError(f"invalid duration {text!r}: use e.g. 25ms, 0.025s or a whole number of samples like 400")
    number, unit = match.group(1), match.group(2)
    value = _exact(number, text, "duration")
    unit_key = unit.lower() if unit else None
    if unit_key in (None, "sample", "samples", "smp"):
        if value.denominator != 1:
            raise ParameterError(
                f"invalid duration {text!r}: a bare number means samples and must be whole; add s or ms for time"
            )
        in_samples = True
    else:
        value = value * _SECONDS_PER_UNIT[unit_key if unit_key != "µs" else "us"]
        in_samples = False
    if value < 0 or (value == 0 and not allow_zero):
        raise ParameterError(f"invalid duration {text!r}: must be {'>= 0' if allow_zero else '> 0'}")
    return Duration(value, in_samples, str(text))


def parse_frequency(text: str, *, allow_zero: bool = True) -> Fraction:
    """Parse a frequency in Hz: ``440``, ``440Hz``, ``8kHz``, ``1.5k``.

    Returns
    -------
    Fraction
        The frequency in Hz, exact.

    Raises
    ------
    ParameterError
        On text that is not a frequency, or a negative one (or zero when not allowed).
    """
    match = _FREQUENCY_RE.match(str(text))
    if not match:
        raise ParameterError(f"invalid frequency {text!r}: use e.g. 440, 440Hz, 8kHz or 1.5k")
    unit = match.group(2).lower() if match.group(2) else None
    value = _exact(match.group(1), text, "frequency") * _HZ_PER_UNIT[unit]
    if value < 0 or (value == 0 and not allow_zero):
        raise ParameterError(f"invalid frequency {text!r}: must be {'>= 0' if allow_zero else '> 0'}")
    return value


def parse_rate(text: str) -> int:
    """Parse a sample rate (``16000``, ``16k``, ``44.1kHz``) into whole Hz > 0."""
    value = parse_frequency(text, allow_zero=False)
    if value.denominator != 1:
        raise ParameterError(f"invalid sample rate {text!r}: must be a whole number of Hz")
    return int(value)

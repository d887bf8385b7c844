"""Turning user-facing option text into core values, with the option named in every error.

The CLI and the batch runner pass options as the user typed them (``"25ms"``,
``"16k"``, ``"hann"``); the pipelines resolve them here, once the input's
sample rate is known (durations round to samples as :mod:`audiokit.units`
documents).  Each error message starts with the option (``--win: ...``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, cast

from ..errors import ParameterError
from ..io import RawFormat, open_audio
from ..io.atomic import is_stream_target
from ..io.reader import MAX_SR, MIN_SR, AudioSource
from ..units import parse_duration, parse_frequency, parse_rate
from ..validate import is_int

__all__ = [
    "LONGEST_SIGNAL_S",
    "PLAUSIBLE_SIGNAL_S",
    "check_syntax",
    "InputOptions",
    "choice",
    "option_error",
    "duration_samples",
    "frequency_hz",
    "rate_hz",
    "finite_or_none",
    "check_figure_path",
    "check_channel",
    "check_channel_of",
]


def choice(option: str, value: str, allowed: Sequence[str]) -> str:
    """Lower-case ``value`` and check it is one of ``allowed`` (ParameterError naming them otherwise)."""
    low = value.lower()
    if low not in allowed:
        raise ParameterError(f"{option}: {value!r} is not one of {', '.join(allowed)}")
    return low


def option_error(option: str, exc: ParameterError) -> ParameterError:
    """Prefix a parse error with the option name: ``--win: invalid duration 'x' ...``."""
    return ParameterError(f"{option}: {exc.reason}")


#: The units a "did you mean" hint can name, largest first, with their length in seconds.
_HINT_UNITS = (("s", Fraction(1)), ("ms", Fraction(1, 1000)))


#: A bare-number signal duration (``generate --dur``, ``spectrum --dur``) shorter than this (seconds, 10 ms) draws
#: a "did you mean 2s?" warning: ``--dur 2`` is 2 samples.
PLAUSIBLE_SIGNAL_S = 0.01
#: The longest plausible signal or segment (seconds): the hint names seconds up to it (``--dur 2`` -> ``2s``).
LONGEST_SIGNAL_S = 3600.0


def duration_samples(
    option: str,
    text: str,
    sr: int,
    *,
    allow_zero: bool = False,
    plausible_s: float | None = None,
    longest_s: float = 1.0,
) -> int:
    """Parse a duration option into samples at ``sr`` (see :mod:`audiokit.units` for the rounding).

    A bare number means samples.  When ``plausible_s`` is given and a bare number is shorter than that many
    seconds (``--win 25`` is 1.6 ms at 16 kHz), a warning asks whether a unit was meant: the largest unit, s
    or ms, in which the number is still at most ``longest_s`` seconds, the longest plausible value of the
    option (default 1 s, a window: ``--win 25`` -> ``25ms``; ``generate --dur`` passes an hour: ``--dur 2`` ->
    ``2s``, what SoX's ``synth 2`` and ffmpeg's ``-t 2`` mean).
    """
    try:
        samples = parse_duration(text, allow_zero=allow_zero).to_samples(sr)
    except ParameterError as exc:
        raise option_error(option, exc) from None
    if samples == 0 and not allow_zero:
        raise ParameterError(f"{option}: {text!r} rounds to 0 samples at {sr} Hz")
    if plausible_s is not None and text.strip().isdigit() and 0 < samples < plausible_s * sr:
        warnings.warn(
            f"{option} {text} means {samples} samples ({1000 * samples / sr:.3g} ms at {sr} Hz); "
            f"did you mean {text.strip()}{_hint_unit(int(text), longest_s)}?",
            stacklevel=2,
        )
    return samples


def _hint_unit(number: int, longest_s: float) -> str:
    """The largest unit of :data:`_HINT_UNITS` in which ``number`` is at most ``longest_s`` seconds (else ms)."""
    return next((unit for unit, seconds in _HINT_UNITS if number * seconds <= longest_s), _HINT_UNITS[-1][0])


def frequency_hz(option: str, text: str) -> float:
    """Parse a frequency option (``440``, ``1.5kHz``) into Hz."""
    try:
        return float(parse_frequency(text))
    except ParameterError as exc:
        raise option_error(option, exc) from None


def rate_hz(option: str, text: str) -> int:
    """Parse a sample-rate option (``16000``, ``16k``, ``44.1kHz``) into whole Hz."""
    try:
        return parse_rate(text)
    except ParameterError as exc:
        raise option_error(option, exc) from None


def check_figure_path(path: str | None) -> None:
    """Figures are PNG: refuse an output named as another format (``-o x.jpg``) instead of mislabelling it."""
    if path is None or path == "-" or path.lower().endswith(".png") or is_stream_target(path):
        return
    raise ParameterError(f"-o: {path!r}: figures are written as PNG; give a path ending in .png (or - for stdout)")


def finite_or_none(value: float, digits: int = 4) -> float | None:
    """``round(value, digits)``, or None for ±inf/NaN (JSON has no infinities)."""
    return round(float(value), digits) if math.isfinite(value) else None


@dataclass(frozen=True)
class InputOptions:
    """How to open an input: raw-PCM description, the NaN/Inf policy and an optional segment.

    Attributes
    ----------
    rate, format : str, optional
        ``--rate`` (e.g. ``16k``) and ``--format`` (``s16le``, ``f32le``, ...) of
        headerless PCM; ``format`` switches to raw input and needs ``rate``.
    channels : int, optional
        Channel count of raw PCM input (default 1).
    fix_nonfinite : bool
        Replace NaN/Inf samples with 0 instead of refusing the file.
    start, duration : str, optional
        A segment of the input (durations as typed: ``1.5s``, ``250ms`` or
        samples, rounded to samples at the input's rate as
        :mod:`audiokit.units` documents): the pipelines then see a source that
        starts at ``start`` and holds ``duration`` (default: to the end), as if
        the file had been cut there.  Used by ``audiokit batch --manifest``.
    resample_to : int, optional
        Resample the input (after the segment) to this rate in Hz on read, as ``audiokit resample --to`` does
        (:class:`~audiokit.pipelines.resampled.ResampledSource`): ``audiokit batch --sr``.
    storage_options : mapping
        fsspec storage options for URL inputs (``--storage-option``, ``AUDIOKIT_STORAGE_OPTIONS``:
        :func:`audiokit.io.remote.storage_options`); credentials, so kept out of ``repr`` and comparisons.
    """

    rate: str | None = None
    format: str | None = None
    channels: int | None = None
    fix_nonfinite: bool = False
    start: str | None = None
    duration: str | None = None
    resample_to: int | None = None
    storage_options: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def raw_format(self) -> RawFormat | None:
        """The raw PCM description (None when ``format`` is absent).

        Raises
        ------
        ParameterError
            ``--rate``/``--channels`` without ``--format`` (they describe headerless PCM only: a file with a
            header would silently ignore them), ``--format`` without ``--rate``, or a rate outside the accepted range.
        """
        if self.format is None:
            given = [name for name, value in (("--rate", self.rate), ("--channels", self.channels)) if value is not None]
            if given:
                raise ParameterError(
                    f"{' and '.join(given)} describe raw PCM input and need --format; a file with a header has its own "
                    "rate and channels (to analyse one channel use --channel N where offered, or --mix)"
                )
            return None
        if self.rate is None:
            raise ParameterError("--format given for raw PCM input: --rate is required too")
        sr = rate_hz("--rate", self.rate)
        if not MIN_SR <= sr <= MAX_SR:
            raise ParameterError(f"--rate: {sr} Hz is outside the accepted range {MIN_SR}..{MAX_SR} Hz")
        return RawFormat(sr=sr, format=self.format.lower(), channels=1 if self.channels is None else self.channels)

    def open(self, path: str, *, allow_empty: bool = False, count_nonfinite: bool = False) -> AudioSource:
        """Open ``path`` (``-``, or a URL) with these options (restricted to the segment, if one is set; resampled).

        ``count_nonfinite``: with ``fix_nonfinite``, NaN/Inf samples reach the caller as they are (it counts them and
        reads them as 0 itself, as ``stats`` does) instead of as 0; not with ``resample_to`` (the filter needs 0).
        """
        source = self._open(path, allow_empty, count_nonfinite and self.resample_to is None)
        if self.resample_to is None:
            return source
        from .resampled import resampled

        return cast("AudioSource", resampled(source, self.resample_to))

    def _open(self, path: str, allow_empty: bool, keep: bool = False) -> AudioSource:
        source = open_audio(
            path,
            raw=self.raw_format(),
            nonfinite=("keep" if keep else "zero") if self.fix_nonfinite else "error",
            allow_empty=allow_empty,
            storage_options=self.storage_options,
        )
        if self.start is None and self.duration is None:
            return source
        try:
            first = duration_samples("segment start", self.start, source.sr, allow_zero=True) if self.start else 0
            count = duration_samples("segment duration", self.duration, source.sr) if self.duration else None
            return source.segment(first, count)
        except BaseException:
            source.close()
            raise


def check_channel(channel: int | None, mix: bool) -> None:
    """``--channel N`` (0-based) is a whole number >= 0 and excludes ``--mix`` (rate-free; ParameterError)."""
    if channel is None:
        return
    if mix:
        raise ParameterError("--channel and --mix exclude each other")
    if not is_int(channel) or channel < 0:
        raise ParameterError(f"--channel must be a channel index >= 0 (0 is the first channel), got {channel!r}")


def check_channel_of(channel: int | None, source: AudioSource) -> None:
    """``--channel N`` exists in ``source`` (ParameterError naming the file, the channel and the channel count)."""
    if channel is not None and channel >= source.channels:
        raise ParameterError(
            f"--channel {channel}: the input has {source.channels} channel(s) (0..{source.channels - 1})", source.name
        )


#: An empty, read-only option table (a default that cannot be mutated between calls).
_NO_OPTIONS: Mapping[str, str | None] = MappingProxyType({})


def check_syntax(
    *,
    durations: Mapping[str, str | None] = _NO_OPTIONS,
    zero_durations: Mapping[str, str | None] = _NO_OPTIONS,
    frequencies: Mapping[str, str | None] = _NO_OPTIONS,
    window: str | None = None,
) -> None:
    """Check the spelling of duration, frequency and window options, before any input gives the rate.

    ``durations`` maps an option name to its text (``{"--win": "25ms"}``; None: unset); ``zero_durations`` may
    be 0.  Their values in samples need the rate, so they are resolved later; here a typo is exit 2, naming the
    option, before a batch reads its first input.
    """
    for allow_zero, group in ((False, durations), (True, zero_durations)):
        for option, text in group.items():
            if text is not None:
                try:
                    parse_duration(text, allow_zero=allow_zero)
                except ParameterError as exc:
                    raise option_error(option, exc) from None
    for option, text in frequencies.items():
        if text is not None:
            frequency_hz(option, text)
    if window is not None:
        from ..dsp.windows import parse_window_spec

        parse_window_spec(window)

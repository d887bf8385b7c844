"""Test and example signals from a small specification language.

A specification is a sum of components joined with ``+`` (spaces allowed);
each component is ``name:arg:arg...``::

    sine:1kHz:0.5 + pink:0.05
    chirp:20:8k + hum:50:0.1:7 + impulse:0.5s

======================================  =====================================================
component                               samples ``x[n]``, ``t = n / sr``
======================================  =====================================================
``sine:FREQ[:AMP[:PHASE]]``             ``AMP·sin(2π·FREQ·t + PHASE)``; AMP 0.5, PHASE 0 rad
``square:FREQ[:AMP]``                   ``+AMP`` on the first half of each period, ``-AMP``
                                        on the second; AMP 0.5 (naive, not band-limited)
``chirp:F0:F1[:AMP]``                   linear sweep ``AMP·sin(2π(F0·t + (F1-F0)·t²/(2T)))``
``logchirp:F0:F1[:AMP]``                exponential sweep ``AMP·sin(2π·F0·T·(β^(t/T) - 1)/ln β)``,
                                        ``β = F1/F0``, F0 and F1 > 0
``noise[:AMP]``                         white Gaussian noise, AMP = RMS (standard deviation), 0.1
``pink[:AMP]``                          pink (1/f power) Gaussian noise, AMP = RMS, 0.1
``hum:FREQ[:AMP[:HARMONICS]]``          ``Σ_{k=1..H} (AMP/k)·sin(2π·k·FREQ·t)``; AMP 0.1, H 5
``silence``                             zeros
``impulse[:AT]``                        ``1.0`` at sample ``AT`` (default 0), else 0
``dc:AMP``                              the constant AMP (may be negative)
======================================  =====================================================

Arguments
---------
FREQ
    Anything :func:`audiokit.units.parse_frequency` accepts: ``440``, ``440Hz``,
    ``8kHz``, ``1.5k``.  Must not exceed the Nyquist frequency ``sr/2``
    (checked by :func:`generate`, where ``sr`` is known).
AMP
    Linear full-scale units (1.0 = 0 dBFS) or a level such as ``-6dB`` /
    ``-6dBFS`` (``10**(dB/20)``).  Peak amplitude for tones, RMS for noise.
PHASE
    Radians (``1.5708``) or degrees with a ``deg`` suffix (``90deg``).
AT
    A duration (``0.5s``, ``20ms``) or a whole number of samples (``4000``).
T
    The sweep length, ``T = n_samples / sr``: a chirp starts at F0 at ``t = 0``
    and would reach F1 one sample after the last one.

Conventions
-----------
* Deterministic components are identical in every channel; ``noise`` and
  ``pink`` are independent per channel.
* Tone phase is exact: for a tone the cycle count ``n·FREQ/sr`` is reduced
  modulo 1 in integer arithmetic (``FREQ/sr`` is an exact fraction) before
  the sine is taken, so sample 10⁹ is as accurate as sample 1.  When the
  fraction's denominator exceeds 2³¹ it is replaced by its best rational
  approximation with denominator <= 2³¹ (a frequency change below 1e-9 Hz at
  audio rates).  Sweeps are computed in float64 from the absolute sample
  index (phase error about 1e-16 times the number of cycles).
* Noise is drawn in fixed chunks of :data:`CHUNK` samples from streams keyed
  by ``(seed, kind, occurrence, chunk index)``, so a seed reproduces the same
  samples whatever the block size, channel 0 does not depend on the number
  of channels, a longer signal starts with the shorter one, and adding a tone
  to a specification leaves its noise unchanged.
* Pink noise is white noise through a fixed 8-pole/8-zero filter
  (:data:`PINK_POLES`, :data:`PINK_ZEROS`) whose power response follows
  ``1/f`` within ±0.012 dB from ``1e-4·sr`` to ``0.45·sr`` (flat below
  ``~5e-5·sr``); the filter is started in its stationary state (a warm-up of
  2¹⁷ samples) and scaled so the RMS is AMP.  Because it is a recursive
  filter with carried state, :func:`generate_blocks` yields exactly the
  samples of :func:`generate`.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import cast

import numpy as np
from scipy import signal as _sps

from ..errors import ParameterError
from ..units import Duration, parse_duration, parse_frequency
from ..validate import check_int

__all__ = [
    "CHUNK",
    "COMPONENT_USAGE",
    "PINK_POLES",
    "PINK_ZEROS",
    "Component",
    "generate",
    "generate_blocks",
    "parse_spec",
]

#: Internal rendering granularity in samples.  Noise streams and the pink
#: filter state advance in whole chunks of this size, which is what makes every
#: block partition give identical samples.
CHUNK = 1 << 16

#: Usage of every component, in the order shown to users.
COMPONENT_USAGE: dict[str, str] = {
    "sine": "sine:FREQ[:AMP[:PHASE]]",
    "square": "square:FREQ[:AMP]",
    "chirp": "chirp:F0:F1[:AMP]",
    "logchirp": "logchirp:F0:F1[:AMP]",
    "noise": "noise[:AMP]",
    "pink": "pink[:AMP]",
    "hum": "hum:FREQ[:AMP[:HARMONICS]]",
    "silence": "silence",
    "impulse": "impulse[:AT]",
    "dc": "dc:AMP",
}

# (minimum, maximum) number of arguments after the name.
_ARITY = {
    "sine": (1, 3),
    "square": (1, 2),
    "chirp": (2, 3),
    "logchirp": (2, 3),
    "noise": (0, 1),
    "pink": (0, 1),
    "hum": (1, 3),
    "silence": (0, 0),
    "impulse": (0, 1),
    "dc": (1, 1),
}

_DEFAULT_AMP = {
    "sine": 0.5,
    "square": 0.5,
    "chirp": 0.5,
    "logchirp": 0.5,
    "noise": 0.1,
    "pink": 0.1,
    "hum": 0.1,
}
_DEFAULT_HARMONICS = 5

#: Poles of the pinking filter (a minimax fit of ``|H|² ∝ 1/f`` on
#: ``[1e-4, 0.45]·sr`` with eight real pole/zero pairs).
PINK_POLES = (
    0.999569859802591,
    0.9979577634663556,
    0.9928230444702201,
    0.975521074739789,
    0.918500721192391,
    0.7461520355102108,
    0.34044537634718736,
    -0.3825070936232146,
)
#: Zeros of the pinking filter (see :data:`PINK_POLES`).
PINK_ZEROS = (
    0.9989681181192809,
    0.9961441221917464,
    0.9867176711477437,
    0.9551326505639254,
    0.8542438100114177,
    0.5767621925145255,
    0.07508717939214923,
    -0.44168604373959036,
)
_PINK_WARMUP = 1 << 17  # samples; 0.99957**(2**17) ~ 1e-25: the start-up transient is gone
#: Length (samples) of the pinking filter's impulse response summed for its power gain: the slowest
#: pole (0.99957) has decayed to 0.99957**(2**18) ~ 1e-49 of its start by then.
_PINK_IMPULSE_LENGTH = 1 << 18
#: Digital full scale (1.0 = 0 dBFS); a generated peak above it is reported.
_FULL_SCALE = 1.0

_AMP_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(db|dbfs)?\s*$", re.IGNORECASE)
_PHASE_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(rad|deg)?\s*$", re.IGNORECASE)
#: Largest denominator of a tone's exact cycles-per-sample ratio: the int64 products in
#: :func:`_tone_cycles` (both factors below it) cannot overflow.
_MAX_DENOMINATOR = 1 << 31


@dataclass(frozen=True)
class Component:
    """One validated term of a specification.

    Parameters
    ----------
    name : str
        One of the keys of :data:`COMPONENT_USAGE`.
    text : str
        The component as written (for messages).
    freqs : tuple of Fraction
        Frequencies in Hz, exact: ``(FREQ,)`` or ``(F0, F1)``; empty otherwise.
    amp : float
        Peak amplitude (tones, ``dc``) or RMS (noise) in full-scale units.
    phase : float
        Start phase of a ``sine`` in radians.
    harmonics : int
        Number of ``hum`` harmonics (0 for other components).
    at : Duration or None
        Position of an ``impulse``.
    """

    name: str
    text: str
    freqs: tuple[Fraction, ...] = ()
    amp: float = 0.0
    phase: float = 0.0
    harmonics: int = 0
    at: Duration | None = None


def _parse_amp(text: str, component: str, *, signed: bool = False) -> float:
    match = _AMP_RE.match(text)
    if not match:
        raise ParameterError(f"invalid amplitude {text!r} in {component!r}: use a linear value like 0.5 or a level like -6dB")
    value = float(match.group(1))
    if match.group(2):
        value = 10.0 ** (value / 20.0)
    elif not signed and value < 0:
        raise ParameterError(f"invalid amplitude {text!r} in {component!r}: must be >= 0")
    if not math.isfinite(value):
        raise ParameterError(f"invalid amplitude {text!r} in {component!r}: must be finite")
    return value


def _parse_phase(text: str, component: str) -> float:
    match = _PHASE_RE.match(text)
    if not match:
        raise ParameterError(f"invalid phase {text!r} in {component!r}: use radians (1.5708) or degrees (90deg)")
    value = float(match.group(1))
    if match.group(2) and match.group(2).lower() == "deg":
        value = math.radians(value)
    if not math.isfinite(value):
        raise ParameterError(f"invalid phase {text!r} in {component!r}: must be finite")
    return value


def _parse_freq(text: str, component: str, *, positive: bool = False) -> Fraction:
    try:
        return parse_frequency(text, allow_zero=not positive)
    except ParameterError as exc:
        raise ParameterError(f"{exc.reason} (in {component!r})") from None


def _parse_component(text: str, spec: str) -> Component:
    parts = [p.strip() for p in text.split(":")]
    name = parts[0].lower()
    args = parts[1:]
    if name not in _ARITY:
        raise ParameterError(f"unknown component {text!r} in {spec!r}: valid names are {', '.join(COMPONENT_USAGE)}")
    lo, hi = _ARITY[name]
    if not lo <= len(args) <= hi or any(a == "" for a in args):
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise ParameterError(
            f"component {text!r} takes {want} argument{'s' if hi != 1 else ''} ({COMPONENT_USAGE[name]}), got {len(args)}"
        )
    amp = _DEFAULT_AMP.get(name, 0.0)
    if name == "sine":
        phase = _parse_phase(args[2], text) if len(args) > 2 else 0.0
        amp = _parse_amp(args[1], text) if len(args) > 1 else amp
        return Component(name, text, (_parse_freq(args[0], text),), amp, phase)
    if name == "square":
        amp = _parse_amp(args[1], text) if len(args) > 1 else amp
        return Component(name, text, (_parse_freq(args[0], text),), amp)
    if name in ("chirp", "logchirp"):
        positive = name == "logchirp"
        freqs = (_parse_freq(args[0], text, positive=positive), _parse_freq(args[1], text, positive=positive))
        amp = _parse_amp(args[2], text) if len(args) > 2 else amp
        return Component(name, text, freqs, amp)
    if name in ("noise", "pink"):
        amp = _parse_amp(args[0], text) if args else amp
        return Component(name, text, (), amp)
    if name == "hum":
        amp = _parse_amp(args[1], text) if len(args) > 1 else amp
        harmonics = _DEFAULT_HARMONICS
        if len(args) > 2:
            if not re.fullmatch(r"\d+", args[2]) or int(args[2]) < 1:
                raise ParameterError(f"invalid number of harmonics {args[2]!r} in {text!r}: must be a whole number >= 1")
            harmonics = int(args[2])
        return Component(name, text, (_parse_freq(args[0], text, positive=True),), amp, harmonics=harmonics)
    if name == "silence":
        return Component(name, text)
    if name == "impulse":
        try:
            at = parse_duration(args[0], allow_zero=True) if args else Duration(Fraction(0), True, "0")
        except ParameterError as exc:
            raise ParameterError(f"{exc.reason} (in {text!r})") from None
        return Component(name, text, (), 1.0, at=at)
    # dc
    return Component(name, text, (), _parse_amp(args[0], text, signed=True))


def parse_spec(spec: str) -> list[Component]:
    """Parse and validate a signal specification.

    Parameters
    ----------
    spec : str
        Components joined with ``+``, e.g. ``"sine:1kHz:0.5 + noise:0.01"``;
        see the module docstring for the grammar.  Names are case-insensitive.

    Returns
    -------
    list of Component
        In the order written.

    Raises
    ------
    ParameterError
        Empty specification or component, unknown name (the message lists the
        valid names), wrong number of arguments, or an argument that does not
        parse.  Limits that depend on the sample rate or length (Nyquist,
        impulse position) are checked by :func:`generate`.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError(f"empty signal specification {spec!r}: use e.g. 'sine:440' or 'sine:1k + noise:0.01'")
    components = []
    for part in spec.split("+"):
        text = part.strip()
        if not text:
            raise ParameterError(f"empty component in {spec!r}: components are joined with a single '+'")
        components.append(_parse_component(text, spec))
    return components


# --------------------------------------------------------------------------- rendering


def _cycle_ratio(freq: Fraction, sr: int) -> tuple[int, int]:
    """``(c, M)`` with ``c/M = (freq/sr) mod 1`` exactly (denominator <= 2**31)."""
    ratio = Fraction(freq) / sr
    if ratio.denominator > _MAX_DENOMINATOR:
        ratio = ratio.limit_denominator(_MAX_DENOMINATOR)
    ratio -= math.floor(ratio)
    return ratio.numerator, ratio.denominator


def _tone_cycles(n: np.ndarray, freq: Fraction, sr: int) -> np.ndarray:
    """Fractional cycle count ``(n·freq/sr) mod 1`` in [0, 1), exact to one rounding."""
    c, m = _cycle_ratio(freq, sr)
    num = ((n % m) * c) % m  # both factors < 2**31: exact in int64
    return num / m


def _square(n: np.ndarray, freq: Fraction, sr: int) -> np.ndarray:
    c, m = _cycle_ratio(freq, sr)
    num = ((n % m) * c) % m
    return np.where(2 * num < m, 1.0, -1.0)


@lru_cache(maxsize=1)
def _pink_sos() -> tuple[np.ndarray, float]:
    """Second-order sections of the pinking filter and the gain giving unit variance."""
    n_sections = len(PINK_POLES) // 2  # each section: a pair of zeros and a pair of poles
    sos = np.empty((n_sections, 6))  # scipy's layout: b0 b1 b2 a0 a1 a2
    for i in range(n_sections):
        z1, z2 = PINK_ZEROS[2 * i], PINK_ZEROS[2 * i + 1]
        p1, p2 = PINK_POLES[2 * i], PINK_POLES[2 * i + 1]
        sos[i] = (1.0, -(z1 + z2), z1 * z2, 1.0, -(p1 + p2), p1 * p2)
    impulse = np.zeros(_PINK_IMPULSE_LENGTH)
    impulse[0] = 1.0
    h = _sps.sosfilt(sos, impulse)
    return sos, 1.0 / math.sqrt(float(np.dot(h, h)))


#: First element of a noise stream's key ``(kind, occurrence)``; part of the seed's meaning, never change.
_STREAM_KIND = {"noise": 0, "pink": 1}


def _noise_rng(seed: int, stream: tuple[int, int], chunk: int) -> np.random.Generator:
    # chunk -1 is the pink filter's warm-up stream.
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(*stream, chunk + 1)))


class _Renderer:
    """Renders whole chunks ``[i·CHUNK, (i+1)·CHUNK)`` in order, in float64."""

    def __init__(self, components: Sequence[Component], *, n_samples: int, sr: int, channels: int, seed: int):
        self.components = list(components)
        self.n_samples = n_samples
        self.sr = sr
        self.channels = channels
        self.seed = seed
        self.next_chunk = 0
        self.streams: list[tuple[int, int] | None] = []
        self.pink_state: dict[int, np.ndarray] = {}
        counts = dict.fromkeys(_STREAM_KIND, 0)
        for index, comp in enumerate(self.components):
            if comp.name in counts:
                stream = (_STREAM_KIND[comp.name], counts[comp.name])
                counts[comp.name] += 1
                self.streams.append(stream)
                if comp.name == "pink":
                    sos, _ = _pink_sos()
                    warm = _noise_rng(seed, stream, -1).standard_normal((channels, _PINK_WARMUP))
                    zi = np.zeros((sos.shape[0], channels, 2))
                    _, self.pink_state[index] = _sps.sosfilt(sos, warm, axis=-1, zi=zi)
            else:
                self.streams.append(None)

    def render(self) -> np.ndarray:
        """The next chunk, shaped ``(channels, CHUNK)``."""
        i = self.next_chunk
        self.next_chunk += 1
        start = i * CHUNK
        n = np.arange(start, start + CHUNK, dtype=np.int64)
        out = np.zeros((self.channels, CHUNK))
        for index, comp in enumerate(self.components):
            out += self._component(index, comp, i, n)
        return out

    def _component(self, index: int, comp: Component, chunk: int, n: np.ndarray) -> np.ndarray | float:
        sr = self.sr
        name = comp.name
        if name == "sine":
            return comp.amp * np.sin(2.0 * np.pi * _tone_cycles(n, comp.freqs[0], sr) + comp.phase)
        if name == "square":
            return comp.amp * _square(n, comp.freqs[0], sr)
        if name == "hum":
            total = np.zeros(n.shape)
            for k in range(1, comp.harmonics + 1):
                fk = k * comp.freqs[0]
                if fk > Fraction(sr, 2):
                    break
                total += (comp.amp / k) * np.sin(2.0 * np.pi * _tone_cycles(n, fk, sr))
            return total
        if name in ("chirp", "logchirp"):
            return comp.amp * np.sin(2.0 * np.pi * self._sweep_cycles(comp, n))
        if name in ("noise", "pink"):
            stream = self.streams[index]
            assert stream is not None  # every noise component has its stream
            white = _noise_rng(self.seed, stream, chunk).standard_normal((self.channels, CHUNK))
            if name == "noise":
                return comp.amp * white
            sos, gain = _pink_sos()
            pink, self.pink_state[index] = _sps.sosfilt(sos, white, axis=-1, zi=self.pink_state[index])
            return (comp.amp * gain) * pink
        if name == "impulse":
            assert comp.at is not None  # parse_spec gives every impulse a position
            at = comp.at.to_samples(sr)
            return np.where(n == at, 1.0, 0.0)
        if name == "dc":
            return comp.amp
        return 0.0  # silence

    def _sweep_cycles(self, comp: Component, n: np.ndarray) -> np.ndarray:
        f0, f1 = float(comp.freqs[0]), float(comp.freqs[1])
        sr = self.sr
        duration = self.n_samples / sr
        t = n / sr
        if comp.name == "chirp":
            cycles = n * (f0 / sr) + (n * n.astype(np.float64)) * ((f1 - f0) / (2.0 * self.n_samples * sr))
        else:
            log_beta = math.log(f1 / f0)
            if log_beta == 0.0:
                cycles = n * (f0 / sr)
            else:
                cycles = (f0 * duration / log_beta) * np.expm1(t * (log_beta / duration))
        return cycles - np.floor(cycles)


def _validate(
    spec: str | Sequence[Component], n_samples: int, sr: int, channels: int, seed: int | None, dtype
) -> tuple[list[Component], int, np.dtype]:
    components = parse_spec(spec) if isinstance(spec, str) else list(spec)
    check_int(n_samples, "n_samples", minimum=0, message="invalid n_samples {value!r}: must be a whole number >= 0")
    check_int(sr, "sr", minimum=1, message="invalid sample rate {value!r}: must be a whole number of Hz > 0")
    check_int(channels, "channels", minimum=1, message="invalid channel count {value!r}: must be a whole number >= 1")
    if seed is None:
        seed = cast(int, np.random.SeedSequence().entropy)  # drawn from the OS: an int (the stub allows sequences, None)
    else:
        seed = check_int(seed, "seed", minimum=0, message="invalid seed {value!r}: must be a whole number >= 0")
    out_dtype = np.dtype(dtype)
    if out_dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ParameterError(f"invalid dtype {out_dtype}: allowed are float32, float64")
    nyquist = Fraction(int(sr), 2)
    for comp in components:
        for freq in comp.freqs:
            if freq > nyquist:
                raise ParameterError(
                    f"frequency {float(freq):g} Hz in {comp.text!r} is above the Nyquist frequency "
                    f"{float(nyquist):g} Hz (sample rate {int(sr)} Hz)"
                )
            if freq == nyquist and comp.name in ("sine", "square", "hum"):
                warnings.warn(
                    f"{comp.text!r}: a tone at exactly the Nyquist frequency {float(nyquist):g} Hz "
                    "is sampled only at two points of its cycle",
                    stacklevel=3,
                )
        if comp.name == "hum" and comp.harmonics * comp.freqs[0] > nyquist:
            kept = int(nyquist / comp.freqs[0])
            warnings.warn(
                f"{comp.text!r}: harmonics above {kept} exceed the Nyquist frequency {float(nyquist):g} Hz and are left out",
                stacklevel=3,
            )
        if comp.name == "impulse":
            assert comp.at is not None
            at = comp.at.to_samples(int(sr))
            if not 0 <= at < n_samples:
                raise ParameterError(
                    f"impulse position {comp.at.text!r} ({at} samples) in {comp.text!r} is outside "
                    f"the signal: must be in [0, {n_samples}) samples"
                )
    return components, int(seed), out_dtype


def _warn_clipping(peak: float) -> None:
    warnings.warn(
        f"generated signal reaches {peak:.6g}, above full scale 1.0 (FLOAT output keeps it; PCM output clips)",
        stacklevel=3,
    )


def generate(
    spec: str | Sequence[Component],
    *,
    n_samples: int,
    sr: int,
    channels: int = 1,
    seed: int | None = None,
    dtype=np.float64,
) -> np.ndarray:
    """Render a signal specification.

    Parameters
    ----------
    spec : str or sequence of Component
        A specification (see the module docstring) or the output of
        :func:`parse_spec`.
    n_samples : int >= 0
        Length in samples per channel.
    sr : int > 0
        Sample rate in Hz.
    channels : int >= 1
        Number of channels.  Tones are identical in every channel, noise is
        independent per channel.
    seed : int >= 0 or None
        Seed of the noise streams; None draws fresh entropy.
    dtype : float32 or float64
        Output type.  Samples are computed in float64 and rounded once.

    Returns
    -------
    np.ndarray, shape (channels, n_samples)
        Samples in full-scale units (1.0 = 0 dBFS).  The sum is not clipped;
        a :class:`UserWarning` is issued when it exceeds 1.0 in magnitude.

    Raises
    ------
    ParameterError
        Bad specification, a frequency above ``sr/2``, an impulse outside the
        signal, or a bad ``n_samples``/``sr``/``channels``/``seed``/``dtype``.

    See Also
    --------
    generate_blocks : the same samples, in bounded memory.

    Examples
    --------
    >>> x = generate("sine:1k:0.5 + noise:0.01", n_samples=16000, sr=16000, seed=1)
    >>> x.shape
    (1, 16000)
    """
    components, seed, out_dtype = _validate(spec, n_samples, sr, channels, seed, dtype)
    out = np.empty((channels, n_samples), dtype=out_dtype)
    renderer = _Renderer(components, n_samples=n_samples, sr=int(sr), channels=channels, seed=seed)
    peak = 0.0
    for start in range(0, n_samples, CHUNK):
        stop = min(start + CHUNK, n_samples)
        chunk = renderer.render()[:, : stop - start]
        out[:, start:stop] = chunk
        if chunk.size:
            peak = max(peak, float(np.max(np.abs(chunk))))
    if peak > _FULL_SCALE:
        _warn_clipping(peak)
    return out


def generate_blocks(
    spec: str | Sequence[Component],
    *,
    n_samples: int,
    sr: int,
    channels: int = 1,
    seed: int | None = None,
    block_size: int = CHUNK,
    dtype=np.float64,
) -> Iterator[np.ndarray]:
    """Render a specification as consecutive blocks, in bounded memory.

    The concatenation of the blocks along the last axis equals
    ``generate(spec, n_samples=..., sr=..., channels=..., seed=..., dtype=...)``
    exactly, for every ``block_size``.  Memory use is about
    ``channels·(block_size + CHUNK)`` float64 values.

    Parameters
    ----------
    spec, n_samples, sr, channels, seed, dtype
        As for :func:`generate`.  With ``seed=None`` one fresh seed is drawn
        for the whole stream.
    block_size : int >= 1
        Samples per block; the last block may be shorter.

    Returns
    -------
    iterator of np.ndarray, each shaped (channels, <= block_size)

    Raises
    ------
    ParameterError
        As :func:`generate`, or a bad ``block_size``; raised by this call, not
        on the first iteration.
    """
    components, seed, out_dtype = _validate(spec, n_samples, sr, channels, seed, dtype)
    block_size = check_int(
        block_size, "block_size", minimum=1, message="invalid block_size {value!r}: must be a whole number >= 1"
    )
    renderer = _Renderer(components, n_samples=n_samples, sr=int(sr), channels=channels, seed=seed)
    return _iter_blocks(renderer, n_samples, block_size, out_dtype)


def _iter_blocks(renderer: _Renderer, n_samples: int, block_size: int, dtype: np.dtype) -> Iterator[np.ndarray]:
    pending = np.empty((renderer.channels, 0))
    produced = 0  # samples rendered so far (whole chunks, trimmed to n_samples)
    warned = False
    for start in range(0, n_samples, block_size):
        need = min(block_size, n_samples - start)
        pieces = []
        while need > 0:
            if pending.shape[1] == 0:
                pending = renderer.render()[:, : n_samples - produced]
                produced += pending.shape[1]
            take = pending[:, :need]
            pending = pending[:, need:]
            pieces.append(take)
            need -= take.shape[1]
        block = pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=1)
        peak = float(np.max(np.abs(block)))
        if peak > _FULL_SCALE and not warned:
            warned = True
            _warn_clipping(peak)
        yield block.astype(dtype, copy=True)

r"""Signal-reading building blocks of the hum analysis (:mod:`audiokit.dsp.hum` tells the method).

Everything here works on blocks, so a file of any length is analysed in
bounded memory:

* :class:`LongTermSpectrum` -- Welch average of the power spectrum (channels
  summed), for the first estimate of the fundamental;
* :func:`find_fundamental` -- harmonic-sum search over that spectrum;
* :class:`Demodulator` -- shifts harmonic ``k`` of a reference phase to 0 Hz
  (``x[n]·exp(-2πi·k·Φ[n])``) and decimates by ``B`` with a triangular kernel;
* :class:`Framer` -- cuts the decimated stream into Hann-weighted frames;
* :func:`search_offsets`, :func:`project` -- per-frame frequency search and
  complex-amplitude projections;
* :func:`channel_groups`, :class:`GroupedFrames` -- the channels of a wide
  signal in groups of about :data:`CHANNEL_GROUP`, so that the per-block
  temporaries (``channels × K × frames × frame length`` complex values) stay
  bounded whatever the channel count.

Smoothing along the frame axis is in :mod:`audiokit.dsp.hum.smoothing`.

Decimated samples
-----------------
With ``B = round(sr / 200)`` samples per group, decimated sample ``j``
(``j = 0 .. n_samples // B - 2``) is the triangular-weighted sum

.. math::  d_k[j] = \sum_{i=0}^{2B-1} t[i]\, x[jB + i]\, e^{-2\pi i k Φ[jB+i]},
           \quad t[i] = \frac{\min(i, 2B-1-i) + 1/2}{B}

(weights summing to ``B``), centred on sample ``p_j = (j+1)·B - 1/2``.  Its
frequency response ``sinc²(f·B/sr)`` has double zeros at multiples of the
decimated rate ``sr/B``, so the neighbouring harmonics and the signal far from
the line cannot alias onto 0 Hz; a line ``ν`` Hz from ``k·Φ'`` is attenuated
by ``sinc²(ν·B/sr)`` (0.1 % at 4 Hz).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from math import log

import numpy as np
from numpy.typing import ArrayLike

from ...engine import get_backend

__all__ = [
    "CHANNEL_GROUP",
    "DECIMATED_RATE",
    "FUNDAMENTAL_STEP_HZ",
    "LTS_MAX_SECONDS",
    "LTS_MIN_SECONDS",
    "MEDIAN_SPAN_HZ",
    "PROBE_FRACTIONS",
    "PROMINENCE_CAP_DB",
    "PROMINENCE_DB",
    "Demodulator",
    "Framer",
    "GroupedFrames",
    "LongTermSpectrum",
    "channel_groups",
    "decimation_factor",
    "find_fundamental",
    "frame_geometry",
    "frame_hop",
    "frame_length",
    "frame_times",
    "hann_positive",
    "n_decimated",
    "odd",
    "project",
    "prominence_db",
    "search_offsets",
]

#: Target rate of the decimated, demodulated harmonics (Hz).
DECIMATED_RATE = 200.0
#: Probe offsets, as fractions of the fundamental, at which the local noise
#: floor around each line is read (both signs are used).
PROBE_FRACTIONS = (0.12, 0.16, 0.20, 0.24)
#: Prominence (dB over the local median) a line needs to count in the
#: harmonic-sum search and to steer the frequency tracking.
PROMINENCE_DB = 6.0
#: Cap of one harmonic's contribution to the harmonic sum (dB), so that one
#: strong line cannot outvote all the others.
PROMINENCE_CAP_DB = 30.0
#: Candidate spacing of the harmonic-sum search (Hz), before the parabolic refinement.
FUNDAMENTAL_STEP_HZ = 0.005
#: Segment of the long-term spectrum: half the signal, clipped to this range (s).
LTS_MIN_SECONDS = 1.0
LTS_MAX_SECONDS = 4.0
#: Width of the running median the prominence is measured against (Hz): ±10 Hz around each bin.
MEDIAN_SPAN_HZ = 20.0
#: Channels processed together in the per-block maths: a signal with more channels is handled in groups of
#: 8 to 16 (:func:`channel_groups`); up to this many, all at once, exactly as before groups existed.
CHANNEL_GROUP = 16

_LTS_PADDING = 2  # segments are zero-padded to this many times their length (bin spacing sr/(2W))
_LTS_GUARD_BINS = 2  # bins kept beyond fmax, so that interpolation at fmax has both neighbours
_DYNAMIC_RANGE_DB = 150.0  # levels further than this under the spectrum's peak are raised to it (dB)
_POWER_FLOOR = 1e-300  # power floor before the logarithm: no log(0)
_DRIFT_ALLOWANCE = 0.002  # a harmonic's peak is looked for within ±0.2 % of its frequency ...
_DRIFT_ALLOWANCE_BINS = 2  # ... plus this many bins
_GRID_MAX_HARMONIC = 4  # the coarse offset grid uses the harmonics k <= 4 ...
_GRID_MIN_HARMONICS = 2  # ... or, when there are none, the two lowest
_GRID_STEP_HZ = 0.02  # coarse grid spacing of the offset δ of the fundamental (Hz) ...
_GRID_STEP_AT_TOP_HZ = 0.1  # ... and at most this spacing at the highest grid harmonic (k·step, Hz)
_PARABOLA_ROUNDS = 4  # parabolic refinements of δ after the grid ...
_PARABOLA_SHRINK = 4  # ... each with a step this many times smaller
_TIMES_CHUNK = 4096  # frames whose times are computed together (frame_times)


def odd(n: int) -> int:
    """The odd number ``n | 1``: ``n`` when odd, else ``n + 1`` (frames and median filters need a centre)."""
    return n | 1


def decimation_factor(sr: float) -> int:
    """Samples per decimation group: ``B = max(1, round(sr / 200))``."""
    return max(1, int(round(float(sr) / DECIMATED_RATE)))


def n_decimated(n_samples: int, decim: int) -> int:
    """Decimated samples a signal of ``n_samples`` gives: ``max(0, n_samples // B - 1)``."""
    return max(0, n_samples // decim - 1)


def frame_length(seconds: float, rate: float) -> int:
    """Frame length in decimated samples: ``round(seconds·rate)``, made odd (:func:`odd`)."""
    return odd(int(round(seconds * rate)))


def frame_hop(seconds: float, rate: float) -> int:
    """Hop in decimated samples: ``max(1, round(seconds·rate))``."""
    return max(1, int(round(seconds * rate)))


def hann_positive(n: int) -> np.ndarray:
    """Symmetric Hann window of ``n`` samples without its zero end points, ``sin²(π(i+1)/(n+1))``."""
    return np.sin(np.pi * (np.arange(n) + 1.0) / (n + 1.0)) ** 2


def channel_groups(channels: int) -> list[slice]:
    """The channels in the groups the per-block maths handles together.

    One group of all channels up to :data:`CHANNEL_GROUP`; beyond,
    ``ceil(C / CHANNEL_GROUP)`` consecutive groups of near-equal size (8 to
    16 channels: never a group of one, whose projections numpy's ``einsum``
    sums in another order than a group's).
    """
    if channels <= CHANNEL_GROUP:
        return [slice(0, channels)]
    n = -(-channels // CHANNEL_GROUP)
    bounds = [channels * i // n for i in range(n + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


# ----------------------------------------------------------------------------- long-term spectrum


class LongTermSpectrum:
    """Welch average of ``|X|²`` over channels and segments, block by block.

    Parameters
    ----------
    sr : float > 0
        Sample rate (Hz).
    n_samples : int >= 1
        Length of the whole signal in samples per channel (fixes the segment length).
    fmax : float
        Highest frequency kept (Hz).

    Notes
    -----
    Segments of ``W = clip(n_samples/2, 1 s, 4 s)`` samples (periodic Hann,
    hop ``W/2``) zero-padded to ``n_fft = 2W`` (bin spacing ``df = sr/(2W)``:
    0.125 Hz for 4 s).  A signal shorter than ``W`` is one zero-padded
    segment; the tail after the last full segment is not used.
    """

    def __init__(self, *, sr: float, n_samples: int, fmax: float):
        self.sr = float(sr)
        w = int(round(min(LTS_MAX_SECONDS, max(LTS_MIN_SECONDS, n_samples / self.sr / 2.0)) * self.sr))
        self.win = max(2, w - (w % 2))
        self.hop = self.win // 2
        self.n_fft = _LTS_PADDING * self.win
        self.n_bins = min(self.n_fft // 2 + 1, int(np.ceil(fmax * self.n_fft / self.sr)) + _LTS_GUARD_BINS)
        self._w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(self.win) / self.win)
        self._buf: np.ndarray | None = None
        self._acc = np.zeros(self.n_bins)
        self._count = 0
        self._fft = get_backend()

    @property
    def df(self) -> float:
        """Bin spacing in Hz, ``sr / n_fft``."""
        return self.sr / self.n_fft

    def push(self, block: np.ndarray) -> None:
        """Add samples ``(channels, n)``."""
        block = np.asarray(block, dtype=np.float64)
        buf = block if self._buf is None else np.concatenate([self._buf, block], axis=1)
        start = 0
        while buf.shape[1] - start >= self.win:
            self._segment(buf[:, start : start + self.win])
            start += self.hop
        self._buf = buf[:, start:]

    def _segment(self, seg: np.ndarray) -> None:
        groups = channel_groups(seg.shape[0])
        if len(groups) == 1:
            spec = self._fft.rfft(seg * self._w, self.n_fft)[:, : self.n_bins]
            self._acc += np.sum(spec.real**2 + spec.imag**2, axis=0)
        else:  # the spectra of a wide signal a group at a time; the channel sum as before
            power = np.empty((seg.shape[0], self.n_bins))
            for g in groups:
                spec = self._fft.rfft(seg[g] * self._w, self.n_fft)[:, : self.n_bins]
                power[g] = spec.real**2 + spec.imag**2
            self._acc += np.sum(power, axis=0)
        self._count += 1

    def finish(self) -> np.ndarray:
        """The averaged power per bin, shape ``(n_bins,)`` (bin ``i`` at ``i·df`` Hz)."""
        if self._count == 0 and self._buf is not None and self._buf.shape[1]:
            seg = np.zeros((self._buf.shape[0], self.win))
            seg[:, : self._buf.shape[1]] = self._buf[:, : self.win]
            self._segment(seg)
        return self._acc / max(self._count, 1)


def prominence_db(power: np.ndarray, df: float) -> np.ndarray:
    """Level of each bin over its surroundings (dB).

    Parameters
    ----------
    power : np.ndarray, shape (n_bins,)
        Power spectrum.
    df : float
        Bin spacing (Hz).

    Returns
    -------
    np.ndarray, shape (n_bins,)
        ``p - median(p over ±10 Hz)`` with ``p = 10·log10(P)``, floored
        150 dB under its peak (so silence in part of the band does not make
        every line prominent).
    """
    p = 10.0 * np.log10(np.maximum(power, _POWER_FLOOR))
    p = np.maximum(p, p.max() - _DYNAMIC_RANGE_DB)
    size = max(3, odd(int(round(MEDIAN_SPAN_HZ / df))))
    from scipy import ndimage  # lazy: keeps CLI start-up short

    return p - ndimage.median_filter(p, size=size, mode="nearest")


def find_fundamental(
    power: np.ndarray, df: float, *, lo: float, hi: float, kmax: int, fmax: float, step: float = FUNDAMENTAL_STEP_HZ
) -> tuple[float, float, np.ndarray]:
    """Harmonic-sum search of the fundamental in ``[lo, hi]`` Hz.

    Parameters
    ----------
    power : np.ndarray, shape (n_bins,)
        Long-term power spectrum (:class:`LongTermSpectrum`).
    df : float
        Bin spacing in Hz.
    lo, hi : float
        Search range in Hz.
    kmax : int
        Highest harmonic number used.
    fmax : float
        Highest frequency used (Hz).
    step : float
        Candidate spacing in Hz (the maximum is then refined by a parabola).

    Returns
    -------
    f0 : float
        The candidate maximising ``S(f) = Σ_k clip(prom(k·f) - 6 dB, 0, 30 dB)``,
        with ``prom`` from :func:`prominence_db` interpolated at ``k·f``.
    score : float
        ``S(f0)`` in dB (0: no line 6 dB above its surroundings).
    prom : np.ndarray, shape (kmax,)
        Peak prominence (dB) of each harmonic of ``f0``: the maximum over
        ``k·f0 ± (0.002·k·f0 + 2·df)`` (drift allowance), ``-inf`` above
        ``fmax``.
    """
    prom = prominence_db(power, df)
    nb = prom.shape[0]
    cands = np.arange(lo, hi + step / 2, step) if hi > lo else np.array([lo])
    ks = np.arange(1, kmax + 1)
    freqs = cands[:, None] * ks[None, :]
    v = np.interp(freqs / df, np.arange(nb), prom)
    v = np.where(freqs <= fmax, np.clip(v - PROMINENCE_DB, 0.0, PROMINENCE_CAP_DB), 0.0)
    s = v.sum(axis=1)
    i = int(np.argmax(s))
    f0 = float(cands[i])
    if 0 < i < len(s) - 1:
        # vertex of the parabola through the best candidate and its neighbours (at most one step away)
        a, b, c = s[i - 1], s[i], s[i + 1]
        den = a - 2 * b + c
        if den < 0:
            f0 += float(np.clip(0.5 * (a - c) / den, -1, 1)) * step
    peaks = np.full(kmax, -np.inf)
    for k in ks:
        f = k * f0
        if f > fmax:
            break
        half = _DRIFT_ALLOWANCE * f + _DRIFT_ALLOWANCE_BINS * df
        a, b = int(np.floor((f - half) / df)), int(np.ceil((f + half) / df))
        seg = prom[max(0, a) : min(nb, b + 1)]
        if seg.size:
            peaks[k - 1] = float(seg.max())
    return f0, float(s[i]), peaks


# ----------------------------------------------------------------------------- demodulation


class Demodulator:
    """Demodulate harmonics of a reference phase and decimate, block by block.

    Parameters
    ----------
    harmonics : sequence of int >= 1
        Harmonic numbers ``k`` (any increasing set).
    channels : int >= 1
    decim : int >= 1
        Group length ``B`` (samples).
    phase : callable
        ``phase(n) -> Φ[n]`` in cycles (float64) of the fundamental, for an
        int64 array of absolute sample indices.

    Notes
    -----
    ``push(x)`` returns the decimated samples completed so far,
    ``(channels, K, j)`` complex64 (see the module docstring); the
    concatenation over pushes does not depend on the block sizes (the same
    sums of the same products, bit for bit).  The last ``n_samples mod B``
    samples and the last group are not covered.
    """

    def __init__(self, *, harmonics: ArrayLike, channels: int, decim: int, phase: Callable[[np.ndarray], np.ndarray]):
        self.harmonics = np.asarray(harmonics, dtype=np.int64)
        self.channels = int(channels)
        self.decim = int(decim)
        self._phase = phase
        self._carry = np.zeros((self.channels, 0), np.float32)
        self._pos = 0
        self._prev: tuple[np.ndarray, np.ndarray] | None = None
        ramp = (np.arange(self.decim) + 0.5) / self.decim
        self._kernel = np.stack([np.ones(self.decim), ramp], axis=1).astype(np.complex64)  # (B, 2)

    def push(self, block: np.ndarray) -> np.ndarray:
        """Demodulate and decimate samples ``(channels, n)``; return ``(channels, K, j)`` complex64."""
        c, b = self.channels, self.decim
        x = np.concatenate([self._carry, np.asarray(block, dtype=np.float32)], axis=1)
        groups = x.shape[1] // b
        kk = len(self.harmonics)
        if groups == 0 or kk == 0:
            self._carry = x if kk else x[:, :0]
            return np.zeros((c, kk, 0), np.complex64)
        use, self._carry = x[:, : groups * b], x[:, groups * b :]
        n = self._pos + np.arange(groups * b, dtype=np.int64)
        self._pos += groups * b
        ang = (2 * np.pi) * np.mod(self._phase(n), 1.0).astype(np.float32)
        u = np.empty(ang.shape, np.complex64)
        u.real = np.cos(ang)
        u.imag = -np.sin(ang)
        z = use * u
        # each group gives its plain sum and its ramp-weighted sum; decimated sample j is the
        # rising ramp of group j plus the falling ramp (sum - ramp) of group j + 1
        sums = np.empty((c, kk, groups), np.complex64)
        ramps = np.empty((c, kk, groups), np.complex64)
        k_now = 1
        for i, k in enumerate(self.harmonics):
            while k_now < k:
                z *= u
                k_now += 1
            sr_ = z.reshape(c * groups, b) @ self._kernel
            sums[:, i] = sr_[:, 0].reshape(c, groups)
            ramps[:, i] = sr_[:, 1].reshape(c, groups)
        if self._prev is not None:
            sums = np.concatenate([self._prev[0], sums], axis=-1)
            ramps = np.concatenate([self._prev[1], ramps], axis=-1)
        self._prev = (sums[..., -1:], ramps[..., -1:])
        return ramps[..., :-1] + sums[..., 1:] - ramps[..., 1:]


# ----------------------------------------------------------------------------- frames


class Framer:
    """Hann-weighted frames of the decimated stream, emitted as soon as they are complete.

    Parameters
    ----------
    n_samples : int >= 0
        Decimated samples in the whole signal (:func:`n_decimated`).
    length : int
        Frame length ``Ld`` in decimated samples (made odd: :func:`odd`).
    hop : int >= 1
        Hop ``Hd`` between frame centres (decimated samples).

    Notes
    -----
    Frame ``m`` is centred on decimated sample ``c_m = m·Hd`` (plus one last
    frame centred on the last sample when the regular grid stops more than
    ``Hd/2`` before it) and weighted by :func:`hann_positive` ``(Ld)``
    truncated to the signal: the frames at both ends are one-sided, so that
    every instant is covered.
    """

    def __init__(self, *, n_samples: int, length: int, hop: int):
        self.n_samples = int(n_samples)
        self.length = odd(int(length))
        self.half = self.length // 2
        self.hop = int(hop)
        centres = list(range(0, self.n_samples, self.hop))
        if centres and self.n_samples - 1 - centres[-1] > self.hop // 2:
            centres.append(self.n_samples - 1)
        self.centres = np.asarray(centres, dtype=np.int64)
        self.window = hann_positive(self.length)
        self._buf: np.ndarray | None = None
        self._start = 0
        self._next = 0

    @property
    def n_frames(self) -> int:
        """Number of frames, ``M``."""
        return len(self.centres)

    def weights(self, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Window weights and decimated indices of ``frames``: ``(G, idx)``, both ``(nm, Ld)``."""
        idx = self.centres[frames, None] + np.arange(-self.half, self.half + 1)
        valid = (idx >= 0) & (idx < self.n_samples)
        return np.where(valid, self.window, 0.0), idx

    def push(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Append decimated samples ``(C, K, j)``; return ``(frames, data)``.

        ``frames`` are the indices of the frames completed, ``data`` their
        samples ``(C, K, nm, Ld)`` (zeros outside the signal; not weighted).
        """
        if self._buf is None:
            self._buf = d[..., :0]
        buf = np.concatenate([self._buf, d], axis=-1)
        end = self._start + buf.shape[-1]
        done = []
        while self._next < self.n_frames and min(self.centres[self._next] + self.half, self.n_samples - 1) < end:
            done.append(self._next)
            self._next += 1
        frames = np.asarray(done, dtype=np.int64)
        if done:
            _, idx = self.weights(frames)
            rel = np.clip(idx - self._start, 0, buf.shape[-1] - 1)
            data = buf[..., rel]
            data[..., (idx < 0) | (idx >= self.n_samples)] = 0
        else:
            data = np.zeros(buf.shape[:-1] + (0, self.length), buf.dtype)
        keep = self.centres[self._next] - self.half if self._next < self.n_frames else end
        keep = max(self._start, min(end, keep))
        self._buf = buf[..., keep - self._start :]
        self._start = keep
        return frames, data


class GroupedFrames:
    """A :class:`Demodulator` over all channels and its framers per channel group (:func:`channel_groups`).

    Parameters
    ----------
    channels : int >= 1
    harmonics, decim, phase
        As :class:`Demodulator`.
    framers : callable
        ``framers()`` -> a new list of :class:`Framer` (the same geometry for every group).

    Notes
    -----
    :meth:`push` gives, group after group and framer after framer, what
    ``Framer.push(Demodulator.push(block))`` gives on all channels at once,
    restricted to the group: the framing of a channel does not depend on the
    others, so only the temporaries shrink (``group × K × frames × length``
    instead of ``channels × K × frames × length``).  The demodulation stays
    one call over all channels (its decimated output is small: ``channels ×
    K`` values per 5 ms), so the matrix products keep their sizes.
    """

    def __init__(
        self,
        *,
        channels: int,
        harmonics: ArrayLike,
        decim: int,
        phase: Callable[[np.ndarray], np.ndarray],
        framers: Callable[[], list[Framer]],
    ):
        self.groups = channel_groups(int(channels))
        self._dem = Demodulator(harmonics=harmonics, channels=channels, decim=decim, phase=phase)
        self.framers = [framers() for _ in self.groups]

    def push(self, block: np.ndarray) -> Iterator[tuple[slice, int, Framer, np.ndarray, np.ndarray]]:
        """Yield ``(group, i, framer, frames, data)``: framer ``i``'s completed frames of the group's channels.

        ``data`` is ``(group channels, K, nm, Ld)`` (:meth:`Framer.push`); empty pushes are yielded too.
        """
        d = self._dem.push(block)
        for g, framers in zip(self.groups, self.framers, strict=True):
            for i, framer in enumerate(framers):
                frames, data = framer.push(d if len(self.groups) == 1 else d[g])
                yield g, i, framer, frames, data


# ----------------------------------------------------------------------------- per-frame maths


def frame_geometry(
    framer: Framer, frames: np.ndarray, decim: int, sr: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Weights, normalisation, times and sample offsets of ``frames``.

    Parameters
    ----------
    framer : Framer
    frames : np.ndarray, shape (nm,), int
        Frame indices.
    decim : int
        Group length ``B`` (samples).
    sr : float
        Sample rate (Hz).

    Returns
    -------
    G : np.ndarray, shape (nm, Ld)
        Window weights.
    norm : np.ndarray, shape (nm,)
        ``2 / (B·ΣG)``: turns a weighted sum of decimated samples into the
        peak amplitude of a real sinusoid.
    t : np.ndarray, shape (nm,)
        Frame time (s): the weighted centroid of the window,
        ``Σ G·p_j / ΣG / sr`` with ``p_j = (j+1)·B - 1/2``.
    tau : np.ndarray, shape (nm, Ld)
        Time of each decimated sample relative to ``t`` (s).
    """
    g, idx = framer.weights(frames)
    pos = ((idx + 1) * decim - 0.5) / sr
    total = g.sum(axis=1)
    t = (g * pos).sum(axis=1) / total
    return g, 2.0 / (decim * total), t, pos - t[:, None]


def frame_times(framer: Framer, decim: int, sr: float) -> np.ndarray:
    """The time (s) of every frame, shape ``(M,)``: :func:`frame_geometry`'s ``t``, :data:`_TIMES_CHUNK` frames at a time.

    Each time is its own row's sum, so the chunks give the one-call values while
    the ``(frames, Ld)`` temporaries stay small (4 h at 8 frames/s: 93 MiB each).
    """
    out = np.empty(framer.n_frames)
    for start in range(0, framer.n_frames, _TIMES_CHUNK):
        frames = np.arange(start, min(start + _TIMES_CHUNK, framer.n_frames))
        out[frames] = frame_geometry(framer, frames, decim, sr)[2]
    return out


def _harmonic_phasors(base: np.ndarray, harmonics: np.ndarray) -> np.ndarray:
    """``base ** k`` for each harmonic, stacked on a new axis 0."""
    out = np.empty((len(harmonics),) + base.shape, base.dtype)
    cur, k_now = base.copy(), 1
    for i, k in enumerate(harmonics):
        while k_now < k:
            cur *= base
            k_now += 1
        out[i] = cur
    return out


def search_offsets(
    data: np.ndarray,
    g: np.ndarray,
    harmonics: np.ndarray,
    weights: np.ndarray,
    *,
    rate: float,
    offsets: tuple[float, float],
) -> np.ndarray:
    """Per-frame frequency offset ``δ`` (Hz) of the fundamental that maximises the harmonic energy.

    ``J(δ) = Σ_c Σ_k w_k |Σ_l G_l d_ck[l] e^{-2πi k δ l / rate}|²`` (``l``: index
    in the frame; a time origin elsewhere changes the phase of each term, not
    ``J``): a grid over ``offsets`` with the harmonics ``k <= 4`` (or the two
    lowest), spaced ``min(0.02, 0.1/k_max)`` Hz, then four parabolic
    refinements with all of them, the step divided by 4 each time (clipped
    to ``offsets``).

    Parameters
    ----------
    data : np.ndarray, shape (C, K, nm, Ld), complex
        Frames demodulated at the reference frequency.
    g : np.ndarray, shape (nm, Ld)
        Window weights (:func:`frame_geometry`).
    harmonics, weights : np.ndarray, shape (K,)
        Harmonic numbers and their weights (>= 0).
    rate : float
        Decimated sample rate (Hz).
    offsets : (float, float)
        Search range of ``δ`` (Hz).

    Returns
    -------
    delta : np.ndarray, shape (nm,), float64
    """
    c, _, nm, ld = data.shape
    if nm == 0:
        return np.zeros(0)
    wd = (data * g).astype(np.complex64)
    lags = (np.arange(ld) - ld // 2) / rate
    low = harmonics <= _GRID_MAX_HARMONIC
    if not low.any():
        low = np.zeros(len(harmonics), bool)
        low[: min(_GRID_MIN_HARMONICS, len(harmonics))] = True
    kl = harmonics[low].astype(float)
    step = min(_GRID_STEP_HZ, _GRID_STEP_AT_TOP_HZ / float(kl.max()))
    lo, hi = offsets
    grid = np.arange(lo, hi + step / 2, step) if hi > lo else np.array([lo])
    val = np.zeros((nm, len(grid)))
    for k, w, d in zip(kl, weights[low], np.moveaxis(wd[:, low], 1, 0), strict=True):
        e = np.exp(-2j * np.pi * k * np.outer(lags, grid)).astype(np.complex64)  # (Ld, grid)
        v = d.reshape(c * nm, ld) @ e
        val += w * (v.real**2 + v.imag**2).reshape(c, nm, -1).sum(axis=0)
    best = grid[np.argmax(val, axis=1)]

    def energy(delta: np.ndarray) -> np.ndarray:
        ph = _harmonic_phasors(np.exp(-2j * np.pi * delta[:, None] * lags).astype(np.complex64), harmonics)
        v = np.einsum("ckmj,kmj->ckm", wd, ph)
        return np.einsum("k,ckm->m", weights, v.real**2 + v.imag**2)

    for _ in range(_PARABOLA_ROUNDS):
        a, b, cc = energy(best - step), energy(best), energy(best + step)
        den = a - 2 * b + cc
        ok = den < 0
        off = np.where(ok, 0.5 * (a - cc) / np.where(ok, den, -1.0), 0.0)
        best = np.clip(best + np.clip(off, -1, 1) * step, lo, hi)
        step /= _PARABOLA_SHRINK
    return best


def project(
    data: np.ndarray, g: np.ndarray, norm: np.ndarray, tau: np.ndarray, probes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Complex amplitude of each line and the noise floor beside it, per frame.

    Parameters
    ----------
    data : np.ndarray, shape (C, K, nm, Ld), complex
        Frames demodulated along the final phase.
    g, norm, tau : np.ndarray
        From :func:`frame_geometry`.
    probes : np.ndarray, shape (P,), float
        Offsets (Hz) at which the floor is read.

    Returns
    -------
    v : np.ndarray, shape (C, K, nm), complex128
        ``norm · Σ_j G_j d[j]``: the peak amplitude ``A·e^{iθ}`` of a line
        ``A·cos(2πkΦ + θ)`` (unbiased when the line follows ``Φ``).
    r : np.ndarray, shape (C, K, nm), float64
        Noise power at the line: the median over the probes of
        ``|norm · Σ_j G_j d[j] e^{-2πi·o·τ_j}|²``, divided by ``ln 2`` (the
        median of an exponential variable is ``ln 2`` times its mean).
    """
    wd = (data * g).astype(np.complex128, copy=False)
    v = wd.sum(axis=-1) * norm
    if data.shape[2] == 0:
        return v, np.zeros(v.shape)
    e = np.exp(-2j * np.pi * probes[:, None, None] * tau[None])  # (P, nm, Ld)
    pr = np.einsum("ckmj,pmj->ckmp", wd, e, optimize=True) * norm[:, None]
    r = np.median(pr.real**2 + pr.imag**2, axis=-1) / log(2.0)
    return v, r

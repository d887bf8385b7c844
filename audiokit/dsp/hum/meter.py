"""Measure the lines of an analysis in another signal (typically the output): :class:`HumMeter`, :func:`hum_levels`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import FRAME_SECONDS, HOP_SECONDS, HumAnalysis, check_block, power_db
from .smoothing import BANDED_MAX_FRAMES, hann_kernel, kernel_smooth
from .spill import frame_array, release, row_pieces
from .track import Framer, GroupedFrames, decimation_factor, frame_geometry, frame_hop, frame_length, n_decimated

__all__ = ["HumLevels", "HumMeter", "coherent", "hum_levels"]


class HumMeter:
    """Measure the lines of an analysis in another signal, block by block.

    Parameters
    ----------
    analysis : HumAnalysis

    Notes
    -----
    The same demodulation along ``Φ`` and the same 1 s frame projections as
    the analysis' pass 3: ``v_k[m] = norm_m·Σ_j G_mj d_k[j]`` (peak amplitude
    of the line in frame ``m``); ``finish()`` returns
    ``10·log10(mean_m |v_k[m]|²)`` per channel and harmonic (dB re full-scale
    sine), comparable with :attr:`HumAnalysis.level_db`; :meth:`coherent`
    the hum-locked part of the same frames (their average over the span the
    analysis chose).  Feed exactly ``analysis.n_samples`` samples.
    """

    def __init__(self, analysis: HumAnalysis):
        a = self.analysis = analysis
        self._power = np.zeros((a.channels, len(a.harmonics)))
        self._count = 0
        self._frames = frame_array((a.channels, len(a.harmonics), len(a.times)), complex)  # spill: a temp file if large
        if len(a.harmonics) == 0:
            self._dem = None
            return
        self._decim = decim = decimation_factor(a.sr)
        rate = a.sr / decim

        def framers() -> list[Framer]:
            length, hop = frame_length(FRAME_SECONDS, rate), frame_hop(HOP_SECONDS, rate)
            return [Framer(n_samples=n_decimated(a.n_samples, decim), length=length, hop=hop)]

        # a wide signal a group of channels at a time (the same numbers, smaller temporaries)
        self._dem = GroupedFrames(channels=a.channels, harmonics=a.harmonics, decim=decim, phase=a.phase, framers=framers)

    def push(self, block: np.ndarray) -> None:
        """Add the next samples ``(channels, n)``."""
        block = check_block(block, self.analysis.channels)
        if self._dem is None:
            return
        counted = False
        for grp, _, framer, frames, data in self._dem.push(block):
            if not frames.size:
                continue
            g, norm, _, _ = frame_geometry(framer, frames, self._decim, self.analysis.sr)
            v = (data * g).astype(np.complex128, copy=False).sum(axis=-1) * norm
            self._power[grp] += np.sum(v.real**2 + v.imag**2, axis=-1)
            if not counted:  # every group completes the same frames
                self._count += frames.size
                counted = True
            if frames.max() < self._frames.shape[-1]:
                self._frames[grp, :, frames] = v
        release(self._frames)

    def finish(self) -> np.ndarray:
        """Levels, shape ``(channels, K)``, in dB re full-scale sine (``-inf`` for an exact zero)."""
        return power_db(self._power / max(self._count, 1))

    @property
    def frames(self) -> np.ndarray:
        """The frame amplitudes ``v_k[m]``, shape ``(channels, K, M)``, complex."""
        return self._frames

    def coherent(self) -> np.ndarray:
        """The hum-locked amplitude of every line per frame, shape ``(channels, K, M)``, complex (:func:`coherent`)."""
        return coherent(self.analysis, self._frames)


def coherent(analysis: HumAnalysis, frames: np.ndarray) -> np.ndarray:
    """Hum-locked average of 1 s frame amplitudes, shape ``(channels, K, M)``, complex.

    ``Σ_l ker_l w v[m-l] / Σ_l ker_l w``: the frame amplitudes ``v``
    averaged over the span the analysis chose for each harmonic (Hann
    kernel) with the analysis' robust weights ``w`` -- the statistic the
    analysis fitted the hum with.  Linear in ``v``.
    """
    a = analysis
    out = np.zeros_like(frames)
    if not frames.size:
        return out
    c, k, m = frames.shape
    rows, w = frames.reshape(c * k, m), _weights(a, frames.shape)
    for p in _pieces(c * k, m):
        out.reshape(c * k, m)[p] = _coherent_rows(a, rows[p], w[p], a.span_s.reshape(-1)[p])
    return out


def _hop_s(a: HumAnalysis) -> float:
    return float(np.median(np.diff(a.times))) if len(a.times) > 1 else HOP_SECONDS


def _weights(a: HumAnalysis, shape: tuple[int, ...]) -> np.ndarray:
    """The analysis' robust weights as rows ``(C·K, M)`` (ones when it has none)."""
    w = a.weights if a.weights is not None else np.ones(shape)
    return w.reshape(shape[0] * shape[1], shape[2])


def _pieces(n_rows: int, m: int) -> list[slice]:
    """The rows a few at a time for long signals; all at once up to 512 frames (one banded product over the rows)."""
    return row_pieces(slice(0, n_rows), m, whole=m <= BANDED_MAX_FRAMES)


def _coherent_rows(a: HumAnalysis, frames: np.ndarray, weights: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """:func:`coherent` of some rows: ``frames``, ``weights`` ``(n, M)``, ``spans`` ``(n,)`` s; rows of one span in one call."""
    out = np.zeros_like(frames)
    hop_s = _hop_s(a)
    for span in np.unique(spans):
        sel = spans == span
        out[sel], _ = kernel_smooth(frames[sel], weights[sel], hann_kernel(float(span) / hop_s))
    return out


@dataclass(frozen=True)
class HumLevels:
    """Hum-coherent power per channel and harmonic, before and after removal (peak amplitude², re full-scale sine).

    ``ā[m]`` is the hum-locked average of the 1 s frame amplitudes at a line
    (:meth:`HumMeter.coherent`: the statistic the analysis fitted the hum
    with); ``P(z) = mean_m |ā_z[m]|²`` for a signal ``z``.  The same
    statistic for ``subtract`` and ``erase``.

    Attributes
    ----------
    before : np.ndarray, shape (channels, K)
        ``max(P(input) - floor, 0)``: the hum in the input.
    removed : np.ndarray, shape (channels, K)
        ``P(input - output)``: the hum-locked part of what was removed.
    remaining : np.ndarray, shape (channels, K)
        ``max(P(output), floor)``: the hum-locked part of the output, never
        below ``floor`` -- a subtracted model is off by its own estimation
        error, whose expected power is the floor, and what lies under it
        cannot be told apart from the signal's own content at the line.
    other_removed : np.ndarray, shape (channels, K)
        ``mean_m |v[m] - ā[m]|²`` of ``input - output``: what was removed at
        the line that is not locked to the mains (the signal's own content:
        large for ``erase``, which zeroes the bins).
    floor : np.ndarray, shape (channels, K)
        What the signal's own content at the line gives ``P`` with no hum
        at all (the noise variance of the analysis' average).
    """

    before: np.ndarray
    removed: np.ndarray
    remaining: np.ndarray
    other_removed: np.ndarray
    floor: np.ndarray

    def db(self, name: str) -> np.ndarray:
        """``10·log10`` of a field (``-inf`` for 0), shape (channels, K)."""
        return power_db(getattr(self, name))

    def total_db(self, name: str) -> np.ndarray:
        """``10·log10`` of a field summed over the harmonics, shape (channels,)."""
        return power_db(np.sum(getattr(self, name), axis=-1))


def hum_levels(analysis: HumAnalysis, output: HumMeter) -> HumLevels:
    """The hum-coherent levels before and after removal, from a meter fed the output.

    Parameters
    ----------
    analysis : HumAnalysis
        Its :attr:`~HumAnalysis.frames` are the input's frame amplitudes; by
        linearity those of what was removed are ``input - output`` frames.
    output : HumMeter
        Meter of ``analysis`` fed the output.

    Returns
    -------
    HumLevels
    """
    a = analysis
    c, k, m = output.frames.shape
    shape = (c, k)
    floor = np.asarray(a.noise, float) if a.noise is not None else np.zeros(shape)
    frames_in = a.frames if a.frames is not None else output.frames
    fin, fout, w = frames_in.reshape(c * k, m), output.frames.reshape(c * k, m), _weights(a, (c, k, m))
    spans = a.span_s.reshape(-1)
    totals = {name: np.zeros(c * k) for name in ("inout", "removed", "out", "other")}

    def power(avg: np.ndarray) -> np.ndarray:
        return np.mean(avg.real**2 + avg.imag**2, axis=-1) if avg.shape[-1] else np.zeros(avg.shape[0])

    # row by row piece (each power is its own row's mean: the numbers of whole arrays); a long signal's
    # frames live in temporary files (spill), their pages released after each piece
    for p in _pieces(c * k, m):
        removed = fin[p] - fout[p]  # by linearity, the frames of input - output
        out, rem = _coherent_rows(a, fout[p], w[p], spans[p]), _coherent_rows(a, removed, w[p], spans[p])
        totals["inout"][p], totals["removed"][p] = power(out + rem), power(rem)
        totals["out"][p], totals["other"][p] = power(out), power(removed - rem)
        release(fin, fout, w)
    return HumLevels(
        before=np.maximum(totals["inout"].reshape(shape) - floor, 0.0),
        removed=totals["removed"].reshape(shape),
        remaining=np.maximum(totals["out"].reshape(shape), floor),
        other_removed=totals["other"].reshape(shape),
        floor=floor,
    )

"""Streaming level statistics: peak, RMS, DC offset, clipped samples."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["UNSCALED_PEAK", "LevelMeter", "ScaledSums", "dbfs"]

#: A block row whose peak is at most this (full-scale units) is summed as it is; beyond it, the row is first
#: scaled by ``2**-k`` (``2**(k-1) <= peak < 2**k``), which is exact, so that no square overflows float64.
UNSCALED_PEAK = 2.0**400


def dbfs(value: float) -> float:
    """``20·log10(value)`` with 1.0 = 0 dBFS; ``-inf`` for 0."""
    return 20.0 * math.log10(value) if value > 0 else -math.inf


class ScaledSums:
    """Per-row ``Σx`` and ``Σx²`` of blocks ``(rows, n)``, finite for every finite sample.

    The sums are kept as ``total · 2**exponent`` and ``energy · 4**exponent`` (``exponent`` per row, 0 until a
    row's block peak exceeds :data:`UNSCALED_PEAK`), so a sample of 1e307, whose square overflows float64, is
    summed like any other; up to that peak the sums are the plain float64 ones, bit for bit.

    Parameters
    ----------
    rows : int
        Rows (channels) of every block.
    """

    def __init__(self, rows: int):
        self.total = np.zeros(rows)
        self.energy = np.zeros(rows)
        self.exponent = np.zeros(rows, dtype=np.int64)

    def add(self, block: np.ndarray, peak: np.ndarray | None = None) -> None:
        """Add a float64 block ``(rows, n)``; ``peak``: its per-row ``max |x|`` (shape ``(rows,)``) if known."""
        if block.shape[1] == 0:
            return
        if peak is None:
            peak = np.abs(block).max(axis=1)
        k = np.where(peak > UNSCALED_PEAK, np.frexp(peak)[1], 0).astype(np.int64)
        scaled = np.ldexp(block, -k[:, None]) if k.any() else block
        exponent = np.maximum(self.exponent, k)
        self.total = np.ldexp(self.total, self.exponent - exponent) + np.ldexp(scaled.sum(axis=1), k - exponent)
        energy = np.einsum("ij,ij->i", scaled, scaled)
        self.energy = np.ldexp(self.energy, 2 * (self.exponent - exponent)) + np.ldexp(energy, 2 * (k - exponent))
        self.exponent = exponent

    def mean(self, count: int) -> np.ndarray:
        """``Σx / count`` per row (finite: at most the peak in magnitude)."""
        return np.ldexp(self.total / max(count, 1), self.exponent)

    def rms(self, count: int) -> np.ndarray:
        """``sqrt(Σx² / count)`` per row (finite: at most the peak)."""
        return np.ldexp(np.sqrt(self.energy / max(count, 1)), self.exponent)

    def energy_db(self) -> np.ndarray:
        """``10·log10(Σx²)`` per row, ``-inf`` where the sum is 0 (finite where the float64 sum would overflow)."""
        with np.errstate(divide="ignore"):
            return 10.0 * np.log10(self.energy) + self.exponent * (20.0 * math.log10(2.0))


@dataclass
class LevelMeter:
    """Accumulate per-channel levels over blocks shaped ``(channels, n)``.

    Parameters
    ----------
    channels : int
        Channel count.
    clip_level : float
        A sample with ``|x| >= clip_level`` counts as clipped: the largest
        positive code ``1 - 2**-(B-1)`` for B-bit PCM, ``1.0`` for float.

    Notes
    -----
    Sums are kept in float64 (pairwise within a block), so the RMS of an hour
    of audio is exact to ~1e-12 relative; they are scaled by powers of two
    (:class:`ScaledSums`) where squares would overflow, so the RMS of a DOUBLE
    file with a 1e307 sample is its true value (``1e307 / sqrt(n)``).
    """

    channels: int
    clip_level: float = 1.0
    count: int = 0
    peak: np.ndarray = field(init=False)
    clipped: np.ndarray = field(init=False)
    sums: ScaledSums = field(init=False)

    def __post_init__(self) -> None:
        self.peak = np.zeros(self.channels)
        self.clipped = np.zeros(self.channels, dtype=np.int64)
        self.sums = ScaledSums(self.channels)

    def update(self, block: np.ndarray) -> None:
        """Add a block of samples shaped ``(channels, n)``."""
        if block.shape[1] == 0:
            return
        as64 = block.astype(np.float64, copy=False)
        magnitude = np.abs(as64)
        block_peak = magnitude.max(axis=1)
        np.maximum(self.peak, block_peak, out=self.peak)
        self.sums.add(as64, block_peak)
        self.clipped += np.count_nonzero(magnitude >= self.clip_level, axis=1)
        self.count += block.shape[1]

    @property
    def rms(self) -> np.ndarray:
        """Root mean square per channel, ``sqrt(sum x² / n)``."""
        return self.sums.rms(self.count)

    @property
    def dc_offset(self) -> np.ndarray:
        """Mean per channel, ``sum x / n`` (full-scale units)."""
        return self.sums.mean(self.count)

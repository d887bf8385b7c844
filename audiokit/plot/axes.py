"""The axes of the time-frequency pictures: where each frame is drawn, the y scale, the ticks, cell-to-pixel pooling.

=========================  ===============================================================================
:func:`frame_time_edges`   the time span each pooled column covers: the whole picture spans ``[0, duration]``
:class:`Axis`              a value range on a linear or log scale, mapped to a pixel span
:func:`nice_ticks`         ticks at steps of 1, 2, 2.5, 5 x 10^k (``MaxNLocator``'s), :func:`integer_ticks`,
                           :func:`log_ticks` (1, 2, 5 x 10^k)
:func:`pool_cells`         an image whose cells have edges ``src`` max-pooled / repeated onto the cells ``dst``
=========================  ===============================================================================

The time rule (docs/conventions.md, "Pictures"): frame ``m``'s window is centred at ``t_m = t_0 + m·H/sr``;
each instant of the file is drawn with the frame whose centre is nearest, so frame ``m`` covers
``[t_m - H/(2 sr), t_m + H/(2 sr))``, the first frame from 0 and the last to the file's end.  The picture's time
axis is ``[0, n_samples/sr]`` whatever the framing (centred or not, Kaldi's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["Axis", "frame_time_edges", "integer_ticks", "log_ticks", "nice_ticks", "pool_cells", "tick_label"]

Scale = Literal["linear", "log"]


def frame_time_edges(frame_edges: np.ndarray, *, first_centre: float, hop: float, duration: float) -> np.ndarray:
    """Time edges (s) of pooled columns: column ``j`` holds frames ``[frame_edges[j], frame_edges[j+1])``.

    Parameters
    ----------
    frame_edges : np.ndarray of int, shape (columns + 1,)
        Frame index edges of the columns (:attr:`~audiokit.plot.pooling.ColumnPooler.edges`); the last is ``n_frames``.
    first_centre : float
        Centre of frame 0's window in s (``n_fft/(2 sr)`` uncentred, 0 centred).
    hop : float
        Seconds between frames, ``H/sr``.
    duration : float
        The file's length in s, ``n_samples/sr``.

    Returns
    -------
    np.ndarray, shape (columns + 1,)
        ``[0, t_0 + (e_1 - 1/2)·hop, ..., t_0 + (e_{J-1} - 1/2)·hop, duration]``, clipped to ``[0, duration]``
        and non-decreasing: the boundary between frames ``m - 1`` and ``m`` is the midpoint of their centres.
    """
    edges = first_centre + (np.asarray(frame_edges, dtype=np.float64) - 0.5) * hop
    edges[0], edges[-1] = 0.0, max(duration, 0.0)
    return np.maximum.accumulate(np.clip(edges, 0.0, edges[-1]))


@dataclass(frozen=True)
class Axis:
    """A value range ``[low, high]`` on a linear or log scale; :meth:`frac` places a value (0 at ``low``)."""

    low: float
    high: float
    scale: Scale = "linear"

    def __post_init__(self) -> None:
        if self.scale == "log" and not 0 < self.low < self.high:
            raise ValueError(f"a log axis needs 0 < low < high, got {self.low}, {self.high}")

    def frac(self, value: float | np.ndarray) -> float | np.ndarray:
        """Fraction of the axis at ``value``: ``(v - low)/(high - low)``, on log values for a log axis."""
        if self.scale == "log":
            return (np.log(value) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (np.asarray(value) - self.low) / (self.high - self.low)

    def pixel(self, value: float, start: int, stop: int) -> int:
        """The pixel of ``value`` on an axis drawn over pixels ``start .. stop-1`` (``low`` at ``start``), clamped."""
        return min(stop - 1, max(start, math.floor(start + float(self.frac(value)) * (stop - start))))

    def cell_edges(self, n: int) -> np.ndarray:
        """Values at the edges of ``n`` equal pixel cells along the axis, shape ``(n + 1,)``."""
        if self.scale == "log":
            return np.exp(np.linspace(math.log(self.low), math.log(self.high), n + 1))
        return np.linspace(self.low, self.high, n + 1)


def nice_ticks(low: float, high: float, max_bins: int) -> tuple[list[float], int]:
    """Ticks inside ``[low, high]`` at a step of 1, 2, 2.5 or 5 x 10^k giving at most ``max_bins`` intervals.

    Returns the tick values and the number of decimals their labels need.
    """
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return [low], 0
    raw = span / max(1, max_bins)
    scale = 10.0 ** math.floor(math.log10(raw))
    for mult in (1.0, 2.0, 2.5, 5.0, 10.0):
        if mult * scale >= raw * (1 - 1e-9):
            break
    step = mult * scale
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    ticks = [k * step for k in range(first, last + 1)]
    decimals = max(0, -math.floor(math.log10(step) + 1e-9) + (1 if mult == 2.5 else 0))
    return ticks, decimals


def integer_ticks(low: float, high: float, max_bins: int) -> list[int]:
    """Integers inside ``[low, high]`` at a step of 1, 2, 5 x 10^k (at least 1) giving at most ``max_bins`` intervals."""
    first, last = math.ceil(low - 1e-9), math.floor(high + 1e-9)
    if last < first:
        return []
    step = 1
    while (last - first) / step > max(1, max_bins):
        step = _next_step(step)
    return list(range(math.ceil(first / step) * step, last + 1, step))


def _next_step(step: int) -> int:
    """1 -> 2 -> 5 -> 10 -> 20 -> 50 -> 100 ..."""
    digits = 10 ** (len(str(step)) - 1)
    lead = step // digits
    return (2 if lead == 1 else 5 if lead == 2 else 10) * digits


def log_ticks(low: float, high: float, max_ticks: int) -> list[float]:
    """Round values inside ``[low, high]`` (``low > 0``) for a log axis: 1, 2, 5 x 10^k, else 10^k, else every 10^(2k).

    At most ``max_ticks`` (at least one decade mark or the two ends' round neighbours when the range is short)."""
    lo_k, hi_k = math.floor(math.log10(low)), math.ceil(math.log10(high))
    for mults, every in (((1, 2, 5), 1), ((1,), 1), ((1,), 2), ((1,), 3)):
        ticks = [m * 10.0**k for k in range(lo_k, hi_k + 1) if k % every == 0 for m in mults]
        ticks = [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]
        if len(ticks) <= max(1, max_ticks):
            return ticks
    return ticks[:: math.ceil(len(ticks) / max(1, max_ticks))]


def tick_label(value: float, decimals: int = 0, *, kilo: bool = False) -> str:
    """``value`` with ``decimals`` decimals, matplotlib's minus sign (U+2212), no ``-0``; ``kilo``: 2000 as ``2k``."""
    if kilo and abs(value) >= 1000 and value % 1000 == 0:
        return f"{value / 1000:.0f}k".replace("-", "\u2212")
    if kilo and abs(value) >= 1000 and (value % 100) == 0:
        return f"{value / 1000:.1f}k".replace("-", "\u2212")
    text = f"{value:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "\u2212")


def pool_cells(image: np.ndarray, src: np.ndarray, dst: np.ndarray, axis: int) -> np.ndarray:
    """``image``'s cells (edges ``src`` along ``axis``) drawn on the cells with edges ``dst``.

    Each destination cell ``[dst[i], dst[i+1])`` takes the maximum of every source cell it overlaps (by a
    positive length), so a narrow line or a short click is never dropped; where source cells are wider than
    destination cells this repeats the covering cell.  ``src`` and ``dst`` are non-decreasing; ``dst`` lies
    inside ``[src[0], src[-1]]``.

    Returns
    -------
    np.ndarray
        ``image`` with ``len(dst) - 1`` cells along ``axis``.
    """
    n = image.shape[axis]
    src, dst = np.asarray(src, dtype=np.float64), np.asarray(dst, dtype=np.float64)
    starts = np.clip(np.searchsorted(src, dst[:-1], side="right") - 1, 0, n - 1)  # the cell covering each left edge
    ends = np.clip(np.searchsorted(src, dst[1:], side="left") - 1, starts, n - 1)  # the last cell starting before dst[i+1]
    if starts.size == n and np.array_equal(starts, np.arange(n)) and np.array_equal(ends, starts):
        return image
    longest = int((ends - starts).max()) if starts.size else 0
    if longest <= _GATHERS:  # a few cells per pixel (the figure's own pooling): gathers, ~5x faster than reduceat
        out = np.take(image, starts, axis=axis)
        for offset in range(1, longest + 1):
            np.maximum(out, np.take(image, np.minimum(starts + offset, ends), axis=axis), out=out)
        return out
    trimmed = np.take(image, np.arange(ends[-1] + 1), axis=axis) if ends[-1] + 1 < n else image
    pooled = np.maximum.reduceat(trimmed, starts, axis=axis)
    # reduceat gives cells [starts[i], starts[i+1]); the cell covering dst[i+1] also meets cell i when it starts before
    partial = np.flatnonzero(ends[:-1] >= starts[1:])
    if partial.size:
        moved = np.moveaxis(pooled, axis, -1)
        extra = np.moveaxis(np.take(image, starts[partial + 1], axis=axis), axis, -1)
        moved[..., partial] = np.maximum(moved[..., partial], extra)
    return pooled


#: Most extra cells per pixel that :func:`pool_cells` gathers one by one (beyond, one ``reduceat``).
_GATHERS = 6

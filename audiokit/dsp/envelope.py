"""The min/max envelope of a signal per display column, accumulated block by block (the waveform view).

Column ``c`` of ``n_columns`` over ``n_samples`` samples covers the samples ``[e[c], e[c+1])`` with the integer
edges ``e[c] = (c * n_samples) // n_columns`` -- every sample in exactly one column, every column non-empty when
``n_columns <= n_samples``.  Its envelope is the minimum and the maximum of those samples, and its clipped count
the samples with ``|x| >= clip_level``.  Memory is ``O(channels * n_columns)`` whatever the length: the blocks
are reduced as they arrive (:meth:`ColumnEnvelope.push`), in any sizes, with the same result.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ColumnEnvelope", "column_edges"]


def column_edges(n_samples: int, n_columns: int) -> np.ndarray:
    """The integer sample edges of the columns, ``(arange(n_columns + 1) * n_samples) // n_columns``, int64."""
    if n_columns < 1 or n_samples < n_columns:
        raise ValueError(f"need 1 <= n_columns ({n_columns}) <= n_samples ({n_samples})")
    return (np.arange(n_columns + 1, dtype=np.int64) * n_samples) // n_columns


class ColumnEnvelope:
    """Per-column minimum, maximum and clipped-sample count of ``(channels, n)`` blocks pushed in order.

    Parameters
    ----------
    channels : int
        Rows of every block.
    n_samples : int
        Samples per channel that will be pushed in all.
    n_columns : int
        Columns of the envelope, ``1 <= n_columns <= n_samples``.
    clip_level : float
        A sample with ``|x| >= clip_level`` counts as clipped (full scale of the input's subtype: the largest code
        ``1 - 2**-(B-1)`` of B-bit PCM, 1.0 for float, as ``audiokit info`` counts).

    Attributes
    ----------
    low, high : np.ndarray, shape (channels, n_columns), float64
        Minimum and maximum per column (``+inf``/``-inf`` until a column has samples).
    clipped : np.ndarray, shape (channels, n_columns), int64
        Clipped samples per column.
    """

    def __init__(self, channels: int, n_samples: int, n_columns: int, clip_level: float) -> None:
        self.edges = column_edges(n_samples, n_columns)
        self.channels, self.n_samples, self.clip_level = channels, n_samples, clip_level
        self.low = np.full((channels, n_columns), np.inf)
        self.high = np.full((channels, n_columns), -np.inf)
        self.clipped = np.zeros((channels, n_columns), dtype=np.int64)
        self.position = 0

    @property
    def n_columns(self) -> int:
        """Columns of the envelope."""
        return self.edges.size - 1

    @property
    def peak(self) -> np.ndarray:
        """``max |x|`` per channel over what was pushed (0 before anything)."""
        seen = np.isfinite(self.low)  # the columns that have samples (low and high alike)
        magnitude = np.maximum(np.abs(np.where(seen, self.low, 0.0)), np.abs(np.where(seen, self.high, 0.0)))
        return magnitude.max(axis=1, initial=0.0)

    def push(self, block: np.ndarray) -> None:
        """Add the next samples, shape ``(channels, b)``; raises ValueError past ``n_samples``."""
        b = block.shape[1]
        if b == 0:
            return
        first, stop = self.position, self.position + b
        if stop > self.n_samples:
            raise ValueError(f"pushed {stop} samples, more than the {self.n_samples} declared")
        # columns met by this block: the one holding its first sample to the one holding its last
        c0 = int(np.searchsorted(self.edges, first, side="right")) - 1
        c1 = int(np.searchsorted(self.edges, stop - 1, side="right")) - 1
        starts = np.maximum(self.edges[c0 : c1 + 1], first) - first
        span = slice(c0, c1 + 1)
        # a minimum or maximum is one of the samples: exact in the block's own dtype
        low, high = np.minimum.reduceat(block, starts, axis=1), np.maximum.reduceat(block, starts, axis=1)
        np.minimum(self.low[:, span], low, out=self.low[:, span])
        np.maximum(self.high[:, span], high, out=self.high[:, span])
        if (high >= self.clip_level).any() or (low <= -self.clip_level).any():  # count only where a sample can clip
            over = np.abs(block) >= self.clip_level
            self.clipped[:, span] += np.add.reduceat(over, starts, axis=1, dtype=np.int64)
        self.position = stop

"""Display max-pooling: a long time-frequency image reduced, column by column as it streams, to the figure's width.

This is the one reduction ``plot`` applies to data: the maximum over the frames each pixel column covers, so a short
click or a narrow line is never dropped.  Memory is the pooled image's, whatever the length of the input.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ColumnPooler", "max_pool_columns"]


class ColumnPooler:
    """Max-pool the columns of a streamed image down to a display width.

    Parameters
    ----------
    rows : int
        Rows of the image (frequency bins or mel bands).
    n_columns : int
        Total columns that will be added (frames).
    max_columns : int > 0
        Display width; the pooled image has ``min(n_columns, max_columns)`` columns.
    start : int, optional
        The first column this pooler is fed (0): poolers fed consecutive ranges of one image, on threads,
        give the whole image by :meth:`merge` (a maximum: the same values in any order).

    Notes
    -----
    Output column j is the maximum of input columns ``[edges[j], edges[j+1])``
    with ``edges = round(linspace(0, n_columns, m + 1))``.  Memory is
    ``rows × m`` whatever the length of the input.
    """

    def __init__(self, rows: int, n_columns: int, max_columns: int, *, start: int = 0) -> None:
        width = max(1, min(n_columns, max_columns))
        self.edges = np.linspace(0, n_columns, width + 1).round().astype(np.int64)
        self.image = np.full((rows, width), -np.inf)
        self._seen = start

    def merge(self, other: ColumnPooler) -> None:
        """Take the maximum with ``other``, a pooler of the same image fed another range of columns (``start``)."""
        np.maximum(self.image, other.image, out=self.image)
        self._seen = max(self._seen, other._seen)

    def add(self, chunk: np.ndarray) -> None:
        """Add the next columns, ``chunk`` shaped (rows, k)."""
        start, stop = self._seen, self._seen + chunk.shape[1]
        if stop == start:
            return
        first = int(np.searchsorted(self.edges, start, side="right")) - 1
        last = int(np.searchsorted(self.edges, stop - 1, side="right")) - 1
        cuts = np.clip(self.edges[first : last + 1], start, stop) - start
        cuts[0] = 0
        frames = chunk.T
        if frames.flags.c_contiguous and chunk.shape[1] >= 4 * cuts.size:
            # frames contiguous (the STFT's layout), several per column: a SIMD maximum over whole frames per
            # column is ~9x faster than reduceat along the strided axis (10 min at 44.1 kHz, 2048/512: 400 -> 45 ms)
            pooled = np.empty((cuts.size, chunk.shape[0]), dtype=chunk.dtype)
            ends = [*cuts[1:].tolist(), chunk.shape[1]]
            for j, (a, b) in enumerate(zip(cuts.tolist(), ends, strict=True)):
                np.maximum.reduce(frames[a:b], axis=0, out=pooled[j])
            pooled = pooled.T
        else:
            pooled = np.maximum.reduceat(chunk, cuts, axis=1)
        np.maximum(self.image[:, first : last + 1], pooled, out=self.image[:, first : last + 1])
        self._seen = stop


def max_pool_columns(image: np.ndarray, max_columns: int) -> np.ndarray:
    """Reduce ``image`` (rows, n) to at most ``max_columns`` columns by max-pooling (see :class:`ColumnPooler`)."""
    pooler = ColumnPooler(image.shape[0], image.shape[1], max_columns)
    pooler.add(image)
    return pooler.image

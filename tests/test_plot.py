"""Tests of audiokit.plot: the display max-pooling of long images (ColumnPooler, max_pool_columns)."""

from __future__ import annotations

import numpy as np
import pytest

from audiokit.plot import ColumnPooler, max_pool_columns


@pytest.mark.parametrize("rows, n_columns, width", [(3, 1000, 37), (5, 405, 400), (2, 50, 800), (4, 7, 7), (1, 1, 200)])
def test_column_pooler_equals_a_naive_max_over_column_groups(rng, rows, n_columns, width):
    image = rng.standard_normal((rows, n_columns))
    m = min(n_columns, width)
    edges = np.round(np.linspace(0, n_columns, m + 1)).astype(int)
    naive = np.empty((rows, m))
    for j in range(m):
        assert edges[j + 1] > edges[j]
        for r in range(rows):
            naive[r, j] = max(image[r, c] for c in range(edges[j], edges[j + 1]))
    pooler = ColumnPooler(rows, n_columns, width)
    start = 0
    while start < n_columns:  # streamed in uneven chunks, as the CLI does
        stop = min(n_columns, start + int(rng.integers(1, 60)))
        pooler.add(image[:, start:stop])
        start = stop
    assert np.array_equal(pooler.image, naive)
    assert np.array_equal(max_pool_columns(image, width), naive)

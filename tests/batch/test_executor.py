"""The backends behind one interface: in-process and local pool (Dask: test_dask.py)."""

from __future__ import annotations

import os

import pytest

from audiokit.batch.executor import InlineBackend, PoolBackend, make_backend
from audiokit.batch.tasks import THREAD_VARS, chunked


def _thread_env() -> dict[str, str | None]:
    return {name: os.environ.get(name) for name in THREAD_VARS}


@pytest.mark.slow
def test_pool_workers_run_with_one_thread_each():
    backend = make_backend(2, None)
    assert isinstance(backend, PoolBackend) and backend.slots == 4
    try:
        futures = {backend.submit(_thread_env) for _ in range(4)}
        done: set = set()
        while futures - done:
            done |= backend.wait_first(futures - done)
        assert all(f.result() == THREAD_VARS for f in futures)
    finally:
        backend.close(cancel=False)


def test_inline_backend_runs_at_submit_and_hands_exceptions_over():
    backend = make_backend(1, None)
    assert isinstance(backend, InlineBackend) and backend.slots == 1
    future = backend.submit(int, "12")
    assert backend.wait_first({future}) == {future} and future.result() == 12
    with pytest.raises(ValueError):
        backend.submit(int, "x").result()


def test_chunked():
    assert chunked(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert chunked([], 3) == []

"""``audiokit batch``: the single-file pipelines over a whole corpus — resumable, failure-tolerant, parallel.

=============  ==============================================================
module         owns
=============  ==============================================================
``inputs``     files, folders, ``@list``, stdin, ``--manifest`` segments → items and their ids
``jobs``       the job (command + options), its fingerprint, output names, one input run
``manifest``   ``manifest.jsonl`` / ``results.jsonl``, the folder lock, stale temp files
``tasks``      what a worker runs (a task of several inputs) and its thread environment
``executor``   in-process, local process pool and Dask backends behind one interface
``runner``     :func:`run_batch`: plan, resume, run, record, summary
``corpus``     reading an ``--out`` folder back (``audiokit.corpus.open(DIR)``): ids, memory-mapped arrays
=============  ==============================================================

Nothing here imports Typer or prints.  Names are loaded lazily so that a
spawned worker imports only :mod:`audiokit.batch.tasks` before its thread
environment is set.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BatchRequest", "BatchStats", "Job", "InputItem", "run_batch"]

_LAZY = {
    "BatchRequest": "runner",
    "BatchStats": "runner",
    "run_batch": "runner",
    "Job": "jobs",
    "InputItem": "inputs",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

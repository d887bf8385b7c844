"""What runs in a worker: a task is a few inputs of one job; the worker returns their records.

Workers (local processes or Dask workers) only compute and write outputs
(atomically, into the shared output folder); they never touch the manifest.
A task's result is small: one record per input (no arrays).  This module
imports nothing heavy at import time, so :func:`init_worker` can set the
thread environment before numpy and FFTW load in a spawned process.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from typing import Any

from ..errors import ExitStatus

__all__ = ["THREAD_VARS", "single_thread_env", "init_worker", "run_task", "chunked"]

#: One BLAS/OpenMP/FFTW thread per worker: the batch's parallelism is its processes.
THREAD_VARS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "AUDIOKIT_FFT_THREADS": "1",
}


def single_thread_env() -> dict[str, str | None]:
    """Set :data:`THREAD_VARS` in ``os.environ``; return the previous values (None: unset) for restoring."""
    previous = {name: os.environ.get(name) for name in THREAD_VARS}
    os.environ.update(THREAD_VARS)
    return previous


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(ExitStatus.TERMINATED)


def init_worker() -> None:
    """Initializer of a local pool worker: one thread each; Ctrl-C is the parent's; SIGTERM unwinds.

    SIGINT is ignored (the parent stops the workers itself); SIGTERM raises
    SystemExit so that atomic writes in progress remove their temp file.
    """
    os.environ.update(THREAD_VARS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)


def run_task(job: Any, items: Sequence[Any], out_dir: str) -> list[dict[str, Any]]:
    """Run each input of one task in turn; a bad input is recorded and the next one runs.

    Parameters
    ----------
    job : Job
        The batch job (:class:`audiokit.batch.jobs.Job`).
    items : sequence of InputItem
        The inputs of this task.
    out_dir : str
        The output folder (absolute; shared with the client).

    Returns
    -------
    list of dict
        One record per input (:func:`audiokit.batch.jobs.run_item`).
    """
    for name, value in THREAD_VARS.items():  # a Dask worker started without them: at least FFTW obeys
        os.environ.setdefault(name, value)
    from .jobs import run_item

    made_dirs: set[str] = set()
    return [run_item(job, item, out_dir, made_dirs) for item in items]


def chunked(items: Sequence[Any], size: int) -> list[list[Any]]:
    """``items`` in consecutive tasks of ``size`` (the last may be shorter)."""
    return [list(items[i : i + size]) for i in range(0, len(items), size)]

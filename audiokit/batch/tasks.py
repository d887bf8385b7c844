"""What runs in a worker: a task is a few inputs of one job; the worker returns their records.

Workers (local processes or Dask workers) only compute and write outputs
(atomically, into the shared output folder); they never touch the manifest.
A task's result is small: one record per input (no arrays).  This module
imports nothing heavy at import time, so :func:`init_worker` can set the
thread environment before numpy and FFTW load in a spawned process.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ExitStatus
from ..held import HELD_SIGNALS

__all__ = ["THREAD_VARS", "single_thread_env", "init_worker", "watch_parent", "in_worker", "run_task", "chunked"]

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


#: In a pool worker: whether a task runs (:func:`in_worker`), and whether SIGTERM came (:func:`_terminated`).
_state = {"task": False, "stopping": False}


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM in a pool worker: unwind the task (its atomic writes remove their temp files), then end the process.

    Between tasks nothing is to unwind: the worker ends at once.  In a task,
    SystemExit interrupts it and a finisher thread ends the process as soon
    as no task runs, whichever way the task ends (the pool would otherwise
    catch the SystemExit and wait for the next task).  Later signals are
    ignored: the kernel sends the parent-death signal once per thread of the
    dying parent, and a second SystemExit must not interrupt the unwinding.
    """
    if _state["stopping"]:
        return
    if not _state["task"]:
        os._exit(ExitStatus.TERMINATED)
    _state["stopping"] = True
    threading.Thread(target=_exit_after_task, name="audiokit-worker-exit", daemon=True).start()
    raise SystemExit(ExitStatus.TERMINATED)


def _exit_after_task(poll: float = 0.01) -> None:
    while _state["task"]:
        time.sleep(poll)
    os._exit(ExitStatus.TERMINATED)


#: ``prctl(2)`` option: the signal this process gets when its parent thread ends (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _set_parent_death_signal(signum: int) -> bool:
    """Ask Linux to send ``signum`` when the parent ends (``prctl(PR_SET_PDEATHSIG)``); False where that is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    return bool(prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0)


def watch_parent(parent_pid: int, *, interval: float = 0.5) -> threading.Thread:
    """Start a daemon thread that sends SIGTERM to this process once its parent is no longer ``parent_pid``.

    The portable stand-in for the parent-death signal: an orphan is re-parented
    (to init or a subreaper), so :func:`os.getppid` changes when the parent dies.

    Parameters
    ----------
    parent_pid : int
        The pid of the parent this process must not outlive.
    interval : float
        Seconds between two looks at the parent pid.

    Returns
    -------
    threading.Thread
        The started watchdog.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=watch, name="audiokit-parent-watchdog", daemon=True)
    thread.start()
    return thread


def _end_with_parent(parent_pid: int) -> None:
    """Get SIGTERM when the parent ``parent_pid`` dies; exit now if it died already (the race before arming)."""
    if not _set_parent_death_signal(signal.SIGTERM):
        watch_parent(parent_pid)
    if os.getppid() != parent_pid:  # it died between our spawn and the prctl: no signal will ever come
        os._exit(ExitStatus.TERMINATED)


def init_worker(parent_pid: int | None = None) -> None:
    """Initializer of a local pool worker: one thread each; Ctrl-C is the parent's; SIGTERM ends it; no orphans.

    SIGINT is ignored (the parent stops the workers itself); SIGTERM ends the
    worker, after unwinding a task in progress so that its atomic writes
    remove their temp files (:func:`_terminated`).  With ``parent_pid``, the
    worker gets that SIGTERM when its parent dies, even by SIGKILL: on Linux
    the kernel sends it (``prctl(PR_SET_PDEATHSIG)``, armed here, then the
    parent pid checked again for a death in between); elsewhere
    :func:`watch_parent` polls.  The kernel signal fires when the parent
    *thread* that spawned the worker ends: :class:`~concurrent.futures.ProcessPoolExecutor`
    spawns in ``submit()``, which the runner calls from the thread that owns
    the pool for the pool's whole life.

    Parameters
    ----------
    parent_pid : int or None
        The pid of the process that owns the pool (None: do not watch it).
    """
    os.environ.update(THREAD_VARS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also drops a Ctrl-C that came while the worker started
    signal.signal(signal.SIGTERM, _terminated)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)  # spawned with them held (PoolBackend.submit)
    if parent_pid is not None:
        _end_with_parent(parent_pid)


def in_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a pool worker, marked as a task for :func:`_terminated`.

    When SIGTERM stopped the task, the worker ends once the task's frames are
    released and collected: a writer that the signal caught between two
    context managers (entered, its exit not yet registered) is then closed
    by the collector and removes its temp file.
    """
    _state["task"] = True
    try:
        result = fn(*args)
    except SystemExit:
        pass
    else:
        _state["task"] = False
        return result
    gc.collect()
    from ..io.atomic import discard_live_temps

    discard_live_temps()  # what the collector could not reach (a temp file no frame refers to any more)
    os._exit(ExitStatus.TERMINATED)


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

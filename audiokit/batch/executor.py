"""Where tasks run: in this process, in a local process pool, or on a Dask cluster — one interface.

Every backend offers ``submit(fn, *args) -> future``, ``wait_first(pending)
-> done``, ``slots`` (how many tasks to keep in flight) and ``close(cancel)``;
futures answer ``result()`` (raising the task's exception).  The runner's
loop is the same for all three:

* :class:`InlineBackend` (``--jobs 1``): ``submit`` runs the task at once and
  returns a finished :class:`concurrent.futures.Future`; one slot.
* :class:`PoolBackend` (``--jobs N``): a :class:`~concurrent.futures.ProcessPoolExecutor`
  of spawned processes (no inherited locks or threads), each started with
  one BLAS/FFT thread (:func:`~audiokit.batch.tasks.init_worker`); stopping
  it cancels queued tasks and terminates the workers (SIGTERM: their atomic
  writes remove their temp files; SIGKILL after 5 s).  A worker also gets
  SIGTERM when this process dies, even by SIGKILL, so none outlives it; the
  resource tracker multiprocessing starts with the pool (a child that owns
  the pool's named semaphores) ends once the last worker has closed its pipe.
* :class:`DaskBackend` (``--scheduler tcp://HOST:PORT``): the
  ``concurrent.futures``-style API of :class:`distributed.Client`.  The
  scheduler reruns the tasks of a worker that dies on another worker; the
  client only ever records a task once, from its future.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from ..errors import OutputError, ParameterError
from ..held import signals_held
from .tasks import in_worker, init_worker

__all__ = ["Backend", "InlineBackend", "PoolBackend", "DaskBackend", "make_backend", "CLUSTER_EXTRA_HINT"]

CLUSTER_EXTRA_HINT = "pip install 'audiokit[cluster]' (it adds dask and distributed)"


class Backend(Protocol):
    """What the runner needs from an executor (see the module docstring)."""

    name: str
    slots: int

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def wait_first(self, pending: set[Any]) -> set[Any]: ...

    def close(self, *, cancel: bool, pending: AbstractSet[Any] = ...) -> None: ...


class InlineBackend:
    """Run each task in this process when it is submitted (``--jobs 1``)."""

    name = "in-process"
    slots = 1

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future:
        future: cf.Future = cf.Future()
        try:
            future.set_result(fn(*args))
        except Exception as exc:  # noqa: BLE001 - handed to the runner through the future, like the pools
            future.set_exception(exc)
        return future

    def wait_first(self, pending: set[Any]) -> set[Any]:
        return set(pending)

    def close(self, *, cancel: bool, pending: AbstractSet[Any] = frozenset()) -> None:
        """Nothing to stop."""


class PoolBackend:
    """A local pool of ``workers`` spawned processes."""

    name = "process pool"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.slots = 2 * workers
        with signals_held():  # see submit()
            self._pool = cf.ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=init_worker,
                initargs=(os.getpid(),),  # a worker ends with this process, even after its kill -9
            )

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future:
        # The pool spawns its workers in submit(); a spawned process inherits the signal mask, so with Ctrl-C and
        # SIGTERM held here a worker starts with them blocked until init_worker has its handlers (a terminal's
        # Ctrl-C reaches the whole process group: a worker still importing printed a KeyboardInterrupt traceback).
        # multiprocessing's resource tracker is started the same way (resource_tracker.ensure_running).
        with signals_held():
            return self._pool.submit(in_worker, fn, *args)

    def wait_first(self, pending: set[Any]) -> set[Any]:
        done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
        return done

    def close(self, *, cancel: bool, pending: AbstractSet[Any] = frozenset()) -> None:
        if not cancel:
            self._pool.shutdown(wait=True)
            return
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join(1)


class DaskBackend:
    """Tasks on an existing Dask distributed cluster (shared storage for inputs and outputs)."""

    name = "dask"

    def __init__(self, address: str, *, timeout: float = 30.0) -> None:
        try:
            import distributed
        except ImportError:
            raise ParameterError(f"--scheduler needs Dask: {CLUSTER_EXTRA_HINT}") from None
        self._distributed = distributed
        try:
            self._client = distributed.Client(address, timeout=timeout, set_as_default=False)
        except OSError as exc:
            raise OutputError(f"cannot reach the Dask scheduler: {exc}", address) from None
        threads = sum(self._client.nthreads().values())
        if threads == 0:
            self._client.wait_for_workers(1, timeout=timeout)
            threads = sum(self._client.nthreads().values())
        self.slots = max(2, 2 * threads)
        # This client's futures as they finish (distributed.wait would look for a default client).
        self._completed = distributed.as_completed(loop=self._client.loop)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        future = self._client.submit(fn, *args, pure=False)
        self._completed.add(future)
        return future

    def wait_first(self, pending: set[Any]) -> set[Any]:
        done = {next(self._completed), *self._completed.next_batch(block=False)}
        return done & pending

    def close(self, *, cancel: bool, pending: AbstractSet[Any] = frozenset()) -> None:
        try:
            if cancel and pending:
                self._client.cancel(list(pending))
        finally:
            self._client.close()


def make_backend(jobs: int, scheduler: str | None) -> Backend:
    """The backend for ``--jobs``/``--scheduler``."""
    if scheduler is not None:
        return DaskBackend(scheduler)
    if jobs <= 1:
        return InlineBackend()
    return PoolBackend(jobs)

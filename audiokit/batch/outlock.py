"""The lock of a batch whose ``--out`` is in object storage: one lock object, created only if none exists.

A local ``--out`` is locked with ``flock`` (:class:`audiokit.batch.manifest.DirLock`), which the kernel releases
when its process dies.  Object storage has no such lock, so :class:`ObjectLock` writes
``PREFIX/.audiokit-batch.lock`` with a conditional request (S3 ``If-None-Match: *``: the write fails when the
object exists, atomically on the server) holding ``{"run", "host", "pid", "started"}``, and deletes it when the
run ends (only if it still names this run).  A second batch on the same prefix finds the object and is refused
(exit 4, as the local lock refuses).

A lock left by a run that died (``kill -9``, the machine lost, the server unreachable when it ended) is *stale*:

* on the host that wrote it, a lock whose pid no longer runs -- or this very process, when the run it names is not
  one this process still holds -- is taken over (deleted, then created again conditionally; a warning on stderr
  says so), so a resume after ``kill -9`` needs nothing more;
* a lock of another host cannot be checked from here: the refusal names its run, host, pid and start, and the
  user deletes the lock object once that run is known to be gone (``aws s3 rm PREFIX/.audiokit-batch.lock``).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import time
from typing import Any

from ..errors import OutputError
from ..io.atomic import pid_alive
from ..io.outdir import ObjectStoreError, RemoteOut
from .manifest import LOCK

__all__ = ["ObjectLock", "run_id"]

#: The runs this process holds a lock for (their run ids).
_HELD: set[str] = set()


def run_id() -> str:
    """A new run's id: UTC time (sortable, so manifest parts sort in run order) and 8 random hex digits."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(4)


class ObjectLock:
    """Take the lock object of ``target`` for run ``run`` (see the module docstring); :meth:`release` at the end.

    Raises
    ------
    OutputError
        Another batch holds the prefix (its run, host, pid and start named), or the lock cannot be written.
    """

    def __init__(self, target: RemoteOut, run: str) -> None:
        self.target, self.run = target, run
        self.body = json.dumps(
            {
                "run": run,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        ).encode("utf-8")
        try:
            taken = target.create(LOCK, self.body)
        except ObjectStoreError as exc:  # the first request of the run: name the prefix (no bucket, no credentials ...)
            raise ObjectStoreError(exc.reason, target.root) from None
        if not taken:
            holder = self._holder()
            if holder is None or not self._stale(holder):
                raise OutputError(self._refusal(holder), target.root)
            print(
                f"warning: {target.url_of(LOCK)}: taking over the lock of run {holder.get('run')} (pid "
                f"{holder.get('pid')} of this host no longer runs it)",
                file=sys.stderr,
            )
            target.remove([LOCK])
            if not target.create(LOCK, self.body):  # another run took it meanwhile
                raise OutputError(self._refusal(self._holder()), target.root)
        _HELD.add(run)
        self.held = True

    def _holder(self) -> dict[str, Any] | None:
        data = self.target.read(LOCK)
        if data is None:
            return None
        try:
            holder = json.loads(data)
        except ValueError:
            return {}
        return holder if isinstance(holder, dict) else {}

    @staticmethod
    def _stale(holder: dict[str, Any]) -> bool:
        pid = holder.get("pid")
        if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
            return False
        if pid == os.getpid():
            return holder.get("run") not in _HELD
        return not pid_alive(pid)

    def _refusal(self, holder: dict[str, Any] | None) -> str:
        who = ""
        if holder:
            who = (
                f" (run {holder.get('run')} on host {holder.get('host')}, pid {holder.get('pid')}, since {holder.get('started')})"
            )
        return (
            f"another audiokit batch is writing this prefix{who}: wait for it, or give another --out; if that run is "
            f"gone, delete {self.target.url_of(LOCK)}"
        )

    def release(self) -> None:
        """Delete the lock object if it still names this run (errors ignored: a dead server leaves a stale lock)."""
        if not self.held:
            return
        self.held = False
        _HELD.discard(self.run)
        try:
            holder = self._holder()
            if holder is not None and holder.get("run") == self.run:
                self.target.remove([LOCK])
        except OutputError:
            pass

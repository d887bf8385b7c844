"""Peak resident memory of a whole command, measured as the kernel counts it.

:func:`peak_rss_mib` runs one ``python -m audiokit …`` process and reads its ``ru_maxrss`` from ``os.wait4`` (the
rusage of that child and the descendants it waited for, KiB on Linux), so tests in one pytest process never see each
other's peaks (``RUSAGE_CHILDREN`` would report the maximum over every child so far).  It does so from a small
launcher interpreter (``python -S``, ~10 MiB): Linux carries the high-water mark of the address space a process
replaces at ``exec`` into its ``ru_maxrss``, and a child forked from a pytest process that once held 400 MiB would
report 400 MiB for ``audiokit --version``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .batch import audiokit_cmd

#: The bound the guide sets for any input length, channel count and rate (MiB).
RSS_LIMIT_MIB = 300.0


@dataclass(frozen=True)
class Measured:
    """One finished command: exit status, peak RSS (MiB), stderr text."""

    returncode: int
    peak_rss_mib: float
    stderr: str


def peak_rss_mib(*args: object, cwd: Path | None = None, stdin: object = None, timeout: float = 600.0) -> Measured:
    """Run ``audiokit ARGS`` in a fresh interpreter and return its exit status and peak RSS.

    Parameters
    ----------
    *args
        The command line after ``audiokit``.
    cwd : Path, optional
        Working folder of the child.
    stdin : file object, optional
        Its standard input (default: ``/dev/null``).
    timeout : float
        Seconds before the child is killed (the test then fails).

    Returns
    -------
    Measured
        ``peak_rss_mib = ru_maxrss / 1024`` (Linux reports KiB).
    """
    with open(os.devnull, "rb") as devnull, tempfile.TemporaryFile() as err:
        done = subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, json.dumps([audiokit_cmd(*args), timeout])],
            cwd=cwd,
            stdin=stdin if stdin is not None else devnull,
            stdout=subprocess.PIPE,
            stderr=err,
            timeout=timeout + 30,
        )
        err.seek(0)
        text = err.read().decode(errors="replace")
    if done.returncode != 0:
        raise AssertionError(f"audiokit {' '.join(map(str, args))}: {done.stdout.decode(errors='replace')}{text}")
    returncode, maxrss_kib = json.loads(done.stdout)
    return Measured(returncode, maxrss_kib / 1024.0, text)


#: The launcher: runs the command (its stdin/stderr are the launcher's), prints ``[exit status, ru_maxrss KiB]``.
_LAUNCHER = """
import json, os, subprocess, sys, time
argv, timeout = json.loads(sys.argv[1])
proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
deadline = time.monotonic() + timeout
while True:
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid:
        break
    if time.monotonic() > deadline:
        proc.kill()
        os.wait4(proc.pid, 0)
        sys.exit("still running after %s s" % timeout)
    time.sleep(0.05)
proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
print(json.dumps([proc.returncode, usage.ru_maxrss]))
"""

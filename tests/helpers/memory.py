"""Peak resident memory of a whole command, measured as the kernel counts it.

:func:`peak_rss_mib` runs one ``python -m audiokit …`` process and reads its ``ru_maxrss`` from ``os.wait4`` (the
rusage of that child and the descendants it waited for, KiB on Linux), so tests in one pytest process never see each
other's peaks (``RUSAGE_CHILDREN`` would report the maximum over every child so far).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
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
        proc = subprocess.Popen(
            audiokit_cmd(*args), cwd=cwd, stdin=stdin if stdin is not None else devnull, stdout=subprocess.DEVNULL, stderr=err
        )
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise AssertionError(f"audiokit {' '.join(map(str, args))} still running after {timeout} s")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
        err.seek(0)
        text = err.read().decode(errors="replace")
    return Measured(proc.returncode, usage.ru_maxrss / 1024.0, text)

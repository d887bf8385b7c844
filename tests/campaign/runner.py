"""One campaign run: a :class:`Case` executed in its own folder, then checked against the invariants.

Invariants (issue 20), checked by :func:`check` for every run:

* exit status in {0, 2, 3, 4, 130, 141, 143} (usage, input, output, SIGINT, closed pipe, SIGTERM);
* no ``Traceback`` nor ``Exception ignored`` on stderr, no ``error: internal error``;
* on failure exactly one ``error:`` line (a batch: one line per failed input, each on its own line);
* no output on failure (a batch that ran, exit 3, keeps its store and manifest), no audiokit temp file left;
* every file that was there before is byte for byte unchanged (inputs are never overwritten);
* every written ``.npy``/``.wav`` and the JSON on stdout hold only finite numbers at exit 0;
* the command ends within the case's timeout (else it is killed and counted as a hang).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

#: Exit statuses a run may end with.
ALLOWED_EXITS = frozenset({0, 2, 3, 4, 130, 141, 143})
#: audiokit's temp-file marker (audiokit/io/atomic.py).
TEMP_MARKER = ".audiokit-tmp-"
#: The batch's lock file, which stays in its --out folder by design.
BATCH_LOCK = ".audiokit-batch.lock"


@dataclass
class Case:
    """One command line to run in ``folder`` (every path in ``argv`` relative to it).

    ``outputs``: the names (relative to ``folder``) a successful run may create, or None for "any" (a batch);
    ``overwrite``: the run tries to write over one of its inputs and must be refused; ``stdin``: a file in
    ``folder`` to read standard input from; ``signal_at``: ``(signum, seconds)`` to send after starting;
    ``reference``: for a signal run, the outputs of the undisturbed run (``{name: bytes}``); ``watch``: inputs
    outside ``folder`` that must not change either.
    """

    kind: str
    label: str
    folder: Path
    argv: list[str]
    outputs: set[str] | None = None
    batch: bool = False
    overwrite: bool = False
    stdin: str | None = None
    timeout: float = 60.0
    signal_at: tuple[int, float] | None = None
    reference: dict[str, bytes] | None = None
    watch: tuple[Path, ...] = ()


@dataclass
class Result:
    """How a run ended: exit status (``-N``: killed by signal N), stdout, stderr text, and whether it hung."""

    code: int
    stdout: bytes
    stderr: str
    hung: bool = False


@dataclass
class Verdict:
    """What :func:`check` found for one run: the counters it adds to (see :data:`COUNTERS`) and its problems."""

    case: Case
    result: Result
    counts: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def bad(self, counter: str, text: str) -> None:
        self.counts[counter] += 1
        self.problems.append(text)


#: The summary's counters, in the order of issue 20's text; the first group are violations.
VIOLATIONS = (
    "inputs changed",
    "overwrites accepted",
    "partial outputs / temp files",
    "tracebacks",
    "exit 1",
    "other bad exits",
    "not one error line",
    "NaN/Inf at exit 0",
    "hangs",
    "wrong results",
    "killed silently by a signal",
)
#: Signals that land while the interpreter starts, before audiokit runs: Python's traceback or the default action.
STARTUP = "signals during start-up"
INFO = ("runs", "overwrite attempts", "overwrites refused", STARTUP)
COUNTERS = INFO + VIOLATIONS


def snapshot(folder: Path, watch: tuple[Path, ...] = ()) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``folder`` (symlinks and FIFOs by kind), and of ``watch``."""
    out = {f"watch:{p}": hashlib.sha256(p.read_bytes()).hexdigest() for p in watch}
    for root, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            if os.path.islink(path):
                out[rel] = "link:" + os.readlink(path)
            elif not os.path.isfile(path):
                out[rel] = "special"
            else:
                with open(path, "rb") as f:
                    out[rel] = hashlib.sha256(f.read()).hexdigest()
    return out


def execute(case: Case, *, inproc: bool = False) -> Result:
    """Run ``python -m audiokit ARGV`` in ``case.folder`` (or, with ``inproc``, ``audiokit.cli.app.main``)."""
    if inproc:
        return _in_process(case)
    with open(case.folder / case.stdin if case.stdin else os.devnull, "rb") as stdin:
        proc = subprocess.Popen(
            [sys.executable, "-m", "audiokit", *case.argv],
            cwd=case.folder,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "COLUMNS": "200", "AUDIOKIT_FFT_THREADS": "1", "OMP_NUM_THREADS": "1"},
            start_new_session=True,
        )
        if case.signal_at is not None:
            time.sleep(case.signal_at[1])
            proc.send_signal(case.signal_at[0])
        try:
            out, err = proc.communicate(timeout=case.timeout)
            hung = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            hung = True
    return Result(proc.returncode, out, err.decode("utf-8", "replace"), hung)


def _in_process(case: Case) -> Result:
    """``main(argv)`` with ``sys.stdout``/``sys.stderr`` (and stdin) replaced, in ``case.folder``."""
    from audiokit.cli.app import main

    saved = sys.stdin, sys.stdout, sys.stderr, os.getcwd()
    out_buf, err_buf = io.BytesIO(), io.BytesIO()
    wrappers = (
        io.TextIOWrapper(open(case.folder / case.stdin, "rb") if case.stdin else open(os.devnull, "rb")),
        io.TextIOWrapper(out_buf, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err_buf, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    sys.stdin, sys.stdout, sys.stderr = wrappers
    try:
        os.chdir(case.folder)
        try:
            code = main(list(case.argv))
        except SystemExit as exc:  # main returns its status; a stray exit is still a status
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # what would be a traceback in a real process
            import traceback

            err_buf.write(traceback.format_exc().encode())
            code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved[:3]
        os.chdir(saved[3])
        wrappers[0].close()
        for w in wrappers[1:]:
            w.flush()
            w.detach()  # keep the BytesIO open when the wrapper goes
    return Result(int(code or 0), out_buf.getvalue(), err_buf.getvalue().decode("utf-8", "replace"))


def _nonfinite_json(text: bytes) -> bool:
    def refuse(name: str) -> float:
        raise ValueError(name)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError as exc:
        return str(exc) in ("NaN", "Infinity", "-Infinity")
    return False


def finite_file(path: Path) -> bool:
    """Whether an ``.npy`` or audio output holds only finite numbers (other files: True)."""
    if path.suffix == ".npy":
        a = np.load(path, allow_pickle=False)
        return bool(np.isfinite(a).all()) if a.dtype.kind in "fc" else True
    if path.suffix in (".wav", ".flac"):
        return bool(np.isfinite(sf.read(path, dtype="float64", always_2d=True)[0]).all())
    return True


def check(case: Case, result: Result, before: dict[str, str]) -> Verdict:
    """Check one finished run against the invariants (module docstring); ``before``: :func:`snapshot` of the folder."""
    v = Verdict(case, result)
    v.counts["runs"] += 1
    after = snapshot(case.folder, case.watch)
    code, err = result.code, result.stderr
    if result.hung:
        v.bad("hangs", f"still running after {case.timeout} s (killed)")
    changed = [p for p, h in before.items() if after.get(p) != h]
    if changed:
        v.bad("inputs changed", f"changed or removed: {changed}")
    if "Traceback" in err or "Exception ignored" in err:
        if _startup_interrupt(case, code, err):
            v.counts[STARTUP] += 1
        else:
            v.bad("tracebacks", "traceback on stderr")
    elif "error: internal error" in err or code == 1:
        v.bad("exit 1", "exit 1 / internal error")
    elif not result.hung and code not in ALLOWED_EXITS and not (case.signal_at and code == -case.signal_at[0]):
        v.bad("other bad exits", f"exit {code}")
    if case.signal_at and code == -case.signal_at[0] and "KeyboardInterrupt" not in err:
        v.counts[STARTUP] += 1
    new = sorted(p for p in after if p not in before)
    temps = [p for p in new if TEMP_MARKER in p]
    if temps:
        v.bad("partial outputs / temp files", f"temp files left: {temps}")
    failed = code != 0 or result.hung
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    if failed and not result.hung and code > 0 and not v.counts["tracebacks"] and not v.counts[STARTUP]:
        if not errors or ((not case.batch or code == 2) and len(errors) != 1):
            v.bad("not one error line", f"{len(errors)} 'error:' lines on exit {code}")
    if case.overwrite:
        v.counts["overwrite attempts"] += 1
        if code == 0:
            v.bad("overwrites accepted", "wrote over its input and exited 0")
        elif not changed:
            v.counts["overwrites refused"] += 1
    if case.reference is not None:
        _check_signal_outputs(v, after, before)
    elif failed:
        kept = [p for p in new if not (case.batch and code == 3) and os.path.basename(p) != BATCH_LOCK]
        if kept:
            v.bad("partial outputs / temp files", f"left on exit {code}: {kept}")
    else:
        stray = [p for p in new if case.outputs is not None and p not in case.outputs and p not in temps]
        if stray:
            v.bad("partial outputs / temp files", f"unexpected files: {stray}")
        nonfinite = []
        for p in new:
            try:
                if TEMP_MARKER not in p and not finite_file(case.folder / p):
                    nonfinite.append(p)
            except (OSError, ValueError, RuntimeError) as exc:  # a torn output
                v.bad("partial outputs / temp files", f"unreadable output {p}: {exc}")
        if nonfinite or _nonfinite_json(result.stdout):
            v.bad("NaN/Inf at exit 0", f"non-finite values in {nonfinite or 'stdout JSON'}")
    return v


def comparable(path: str) -> bool:
    """Whether an output must equal the undisturbed run's (a batch's lock and manifest hold times and pids)."""
    return os.path.basename(path) not in (BATCH_LOCK, "manifest.jsonl")


def _startup_interrupt(case: Case, code: int, err: str) -> bool:
    """A Ctrl-C while the interpreter starts (runpy, site: before audiokit runs) is Python's own traceback."""
    if not case.signal_at or "KeyboardInterrupt" not in err:
        return False
    return code in (1, -case.signal_at[0]) and not any(
        f"/audiokit/{d}/" in err for d in ("cli", "pipelines", "io", "dsp", "engine")
    )


def _check_signal_outputs(v: Verdict, after: dict[str, str], before: dict[str, str]) -> None:
    """A signalled run leaves the undisturbed run's outputs, all of them, or none (exit 0: all of them)."""
    ref = {p: b for p, b in (v.case.reference or {}).items() if comparable(p)}
    new = {p: h for p, h in after.items() if p not in before and comparable(p)}
    expected = {p: hashlib.sha256(b).hexdigest() for p, b in ref.items()}
    if v.result.code == 0 and new != expected:
        v.bad("wrong results", "exit 0 after a signal, outputs differ from the undisturbed run")
    elif v.result.code != 0 and new not in ({}, expected):
        v.bad("partial outputs / temp files", f"signalled run left {sorted(new)}")
    code, signum = v.result.code, v.case.signal_at[0] if v.case.signal_at else 0
    if code == -signum and new:
        v.bad("killed silently by a signal", "a signal after the outputs were committed killed the process silently")
    if code in (130, 143):
        lines = v.result.stderr.splitlines()
        word = "interrupted" if code == 130 else "terminated"
        # a batch says how far it got ("error: terminated: 3 of 5 done; run ... again to resume")
        last = f"error: {word}" if v.case.batch else f"error: {word} after writing " if new else f"error: {word}"
        if code != (130 if signum == signal.SIGINT else 143):
            v.bad("other bad exits", f"exit {code} for {signal.Signals(signum).name}")
        if not lines or not (lines[-1].startswith(last) if new or v.case.batch else lines[-1] == last):
            v.bad("not one error line", f"exit {code} without {last!r} last")

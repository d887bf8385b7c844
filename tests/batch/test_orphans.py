"""No orphans: ``kill -9`` of the batch parent ends its pool workers and multiprocessing's resource tracker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.batch import audiokit_cmd, manifest_lines, temp_files, write_tone_noise

#: Seconds the descendants of a killed batch have to end (the figure of issue 20).
GRACE = 5.0


def _stat(pid: int) -> tuple[int, str, int] | None:
    """``(ppid, state, start time in clock ticks)`` of ``pid`` from ``/proc/<pid>/stat``; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) ", which may hold spaces
    return int(fields[1]), fields[0], int(fields[19])


def _descendants(root: int) -> dict[int, int]:
    """``{pid: start time}`` of every living descendant of ``root`` (one scan of ``/proc``)."""
    parents: dict[int, int] = {}
    starts: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _stat(int(entry))) is not None and info[1] != "Z":
            parents[int(entry)], starts[int(entry)] = info[0], info[2]
    found: dict[int, int] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = starts[pid]
                frontier.append(pid)
    return found


def _alive(pid: int, start: int) -> bool:
    """Whether the process ``pid`` that started at ``start`` still runs (a zombie waiting for init is over)."""
    info = _stat(pid)
    return info is not None and info[2] == start and info[1] != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _wait_for_pool(proc: subprocess.Popen, out: Path, records: int, timeout: float = 120) -> dict[int, int]:
    """Wait for the two workers (and ``records`` manifest lines); return the batch's descendants then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the batch ended before it could be killed"
        found = _descendants(proc.pid)
        workers = [pid for pid in found if "spawn_main" in _cmdline(pid)]
        manifest = out / "manifest.jsonl"
        done = manifest.read_bytes().count(b"\n") if manifest.exists() else 0
        if len(workers) == 2 and done >= records:
            return found
        time.sleep(0.02)
    raise AssertionError("the pool did not start in time")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
@pytest.mark.parametrize("records", [0, 1, 2], ids=["workers-started", "one-recorded", "two-recorded"])
def test_kill_9_of_the_batch_leaves_no_process_and_no_temp_file(tmp_path, records):
    """Killed as the workers start (the re-check after arming), or mid-task: every descendant ends within 5 s."""
    data = tmp_path / "data"
    for i in range(8):  # ten seconds each: a worker spends a second or more on every input
        write_tone_noise(data / f"u{i}.wav", 10.0, seed=i, hum=0.05)
    out = tmp_path / "out"
    args = audiokit_cmd("batch", "dehum", "--freq", "50", data, "--out", out, "-j", "2", "--chunk", "1", "-q")
    log = tmp_path / "stderr.txt"  # the batch's and its workers'
    with log.open("wb") as stderr:
        proc = subprocess.Popen(args, cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    before: dict[int, int] = {}
    survivors: list[str] = []
    try:
        before = _wait_for_pool(proc, out, records)
        assert any("resource_tracker" in _cmdline(pid) for pid in before), before  # the pool started one
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + GRACE
        while (alive := [pid for pid, start in before.items() if _alive(pid, start)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [f"{pid}: {_cmdline(pid)}" for pid in alive]
    finally:
        proc.kill()
        for pid, start in before.items():
            if _alive(pid, start):
                os.kill(pid, signal.SIGKILL)  # never leave this test's orphans behind
    assert survivors == [], f"alive {GRACE} s after kill -9 of the batch: {survivors}"
    assert temp_files(out) == [], log.read_text()  # the workers' atomic writes unwound
    from audiokit import read

    assert not (out / "manifest.jsonl").exists() or len(manifest_lines(out)) < 8
    for path in out.glob("*.wav"):  # committed whole (also those whose record died with the parent), or absent
        assert read(path).samples.shape == (1, 160000)


def test_a_worker_whose_parent_is_already_gone_exits_at_once():
    """The re-check after arming the parent-death signal: a worker whose parent died before it is not left running."""
    code = "from audiokit.batch.tasks import init_worker; init_worker(parent_pid=1); print('still running')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (143, "", "")


_GRANDCHILD = """
import os, signal, sys, time
from audiokit.batch.tasks import watch_parent
marker = sys.argv[1]
signal.signal(signal.SIGTERM, lambda *_: (open(marker, "w").close(), os._exit(143)))
watch_parent(os.getppid(), interval=0.05)
print(os.getpid(), flush=True)
time.sleep(120)
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table from /proc")
def test_the_portable_watchdog_sends_sigterm_when_the_parent_dies(tmp_path):
    marker = tmp_path / "got-sigterm"
    middle = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {_GRANDCHILD!r}, {str(marker)!r}]).wait()"
    with subprocess.Popen([sys.executable, "-c", middle], stdout=subprocess.PIPE, text=True, start_new_session=True) as proc:
        grandchild = 0
        try:
            assert proc.stdout is not None
            grandchild = int(proc.stdout.readline())
            start = _stat(grandchild)
            assert start is not None and start[0] == proc.pid
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            deadline = time.monotonic() + GRACE
            while _alive(grandchild, start[2]) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _alive(grandchild, start[2])
            assert marker.exists()  # it ended by the SIGTERM the watchdog sent
        finally:
            proc.kill()
            if grandchild and (info := _stat(grandchild)) is not None and info[1] != "Z":
                os.kill(grandchild, signal.SIGKILL)

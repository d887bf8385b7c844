"""Signals outside a run, and the temp files a signal could strand (issue 20, "Hangs and processes").

* Before the CLI is imported and after ``main`` committed the outputs, a SIGTERM/SIGINT prints its one line
  (``error: terminated after writing out.npy``) and exits 143/130: :func:`audiokit.cli.signals.install_for_process`.
* A temp file whose context manager never registered its exit (a signal inside ``contextlib``) is removed when the
  run ends: :func:`audiokit.io.atomic.discard_live_temps`.
* A Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while a ``--jobs 2`` pool starts: no worker
  prints a traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiokit.io.atomic import TEMP_MARKER, atomic_output, discard_live_temps, outputs_together

_PROBE = """
import os, signal, sys, time
from audiokit.cli.signals import install_for_process
install_for_process()
if sys.argv[2] != "-":
    from audiokit.io.atomic import write_bytes_atomic
    for name in sys.argv[2:]:
        write_bytes_atomic(name, b"x")
os.kill(os.getpid(), getattr(signal, sys.argv[1]))
time.sleep(30)
"""


def _probe(tmp_path: Path, signame: str, *written: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _PROBE, signame, *(written or ("-",))], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(("signame", "code", "word"), [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted")])
def test_a_signal_before_the_run_prints_its_line(tmp_path, signame, code, word):
    done = _probe(tmp_path, signame)
    assert (done.returncode, done.stderr) == (code, f"error: {word}\n")


def test_a_signal_after_the_outputs_names_them(tmp_path):
    one = _probe(tmp_path, "SIGTERM", "a.npy")
    assert (one.returncode, one.stderr) == (143, "error: terminated after writing a.npy\n")
    two = _probe(tmp_path, "SIGINT", "a.npy", "b.json")
    assert (two.returncode, two.stderr) == (130, "error: interrupted after writing a.npy, b.json\n")
    many = _probe(tmp_path, "SIGTERM", *(f"{i}.npy" for i in range(5)))
    assert (many.returncode, many.stderr) == (143, "error: terminated after writing 5 outputs (the last: 4.npy)\n")


@pytest.mark.slow
def test_sigterm_once_the_outputs_exist_is_never_silent(tmp_path):
    """SIGTERM as soon as the .npy appears (the run is committing, printing, or exiting): one line, never a silent
    death, and the outputs whole."""
    src = tmp_path / "in.wav"
    sf.write(src, (0.1 * np.random.default_rng(3).standard_normal(16000)).astype(np.float32), 16000)
    for run in range(12):
        out = tmp_path / f"m{run}.npy"
        proc = subprocess.Popen(
            [sys.executable, "-m", "audiokit", "mel", str(src), "--nfft", "1024", "--npy", str(out)],  # 400: a band warning
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        while not out.exists() and proc.poll() is None:
            time.sleep(0.0005)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode in (0, 143), (proc.returncode, err)
        assert out.exists() and out.with_suffix(".json").exists()
        if proc.returncode == 143:
            assert err == f"error: terminated after writing {out.with_suffix('.json')}, {out}\n", err
        else:
            assert err == "", err


def test_a_stranded_temp_file_is_discarded(tmp_path):
    stranded = atomic_output(tmp_path / "out.npy")
    tmp = stranded.__enter__()  # entered, its exit never registered (a signal inside contextlib)
    assert tmp.exists()
    assert discard_live_temps() == [tmp]
    assert not tmp.exists() and list(tmp_path.iterdir()) == []


def test_a_signal_between_the_block_and_its_commit_leaves_nothing(tmp_path):
    """outputs_together: an exception after the block's body ended, before the renames, removes the temp files."""

    class Late(BaseException):
        pass

    with pytest.raises(Late), outputs_together():
        with atomic_output(tmp_path / "a.npy") as tmp:
            tmp.write_bytes(b"a")
        raise Late  # stands for the signal's exception at the block's last bytecode
    assert list(tmp_path.iterdir()) == []


def test_standard_output_spool_is_removed(tmp_path):
    """A staged ``-o -`` (spectrum's PNG on stdout) left its spooled temp file in the temp folder."""
    spool = tmp_path / "tmpdir"
    spool.mkdir()
    src = tmp_path / "in.wav"
    sf.write(src, np.sin(np.arange(8000) * 0.3).astype(np.float32) * 0.5, 8000)
    done = subprocess.run(
        [sys.executable, "-m", "audiokit", "spectrum", str(src), "-o", "-"],
        capture_output=True,
        env={**os.environ, "TMPDIR": str(spool)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"\x89PNG")
    assert [p.name for p in spool.iterdir() if TEMP_MARKER in p.name] == []


def _pool_children(pid: int) -> list[int]:
    """The multiprocessing children of ``pid`` (from /proc: parent pid in ``stat``, the command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and b"multiprocessing" in command:
            found.append(int(entry))
    return found


@pytest.mark.slow
def test_ctrl_c_while_the_pool_starts_prints_no_worker_traceback(tmp_path):
    """SIGINT to the process group just after the first spawned worker exists (it is still starting)."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(4):
        sf.write(inputs / f"a{i}.wav", np.zeros(16000, np.float32), 16000)
    for run, delay in enumerate((0.0, 0.02, 0.05, 0.1, 0.2)):  # 0.05 s: the worker is in site (3 of 6 printed one)
        proc = subprocess.Popen(
            [sys.executable, "-m", "audiokit", "batch", "mel", str(inputs), "--out", str(tmp_path / f"o{run}"), "--jobs", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not _pool_children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        assert proc.returncode in (0, 130), (proc.returncode, err)

"""Resume, failures and interruption: kill -9 and re-run, bad inputs, --max-failures, SIGINT/SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.batch import audiokit_cmd, manifest_lines, temp_files, write_tone_noise


def _slow_corpus(root: Path, n: int) -> Path:
    """``n`` one-second files: ``dehum`` takes a good fraction of a second on each."""
    for i in range(n):
        write_tone_noise(root / f"g{i % 3}" / f"u{i:02d}.wav", 1.0, seed=i, hum=0.05)
    return root


def _wait_for_lines(manifest: Path, count: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if manifest.exists() and manifest.read_bytes().count(b"\n") >= count:
            return
        assert proc.poll() is None, "the batch ended before it could be interrupted"
        time.sleep(0.02)
    raise AssertionError("the batch wrote no manifest line in time")


def test_rerun_skips_what_is_done_and_force_recomputes(cli, corpus, tmp_path):
    out = tmp_path / "out"
    assert cli("batch", "mel", "--store", "files", corpus, "--out", out, "-j", "1")[0] == 0
    mtimes = {p: p.stat().st_mtime_ns for p in out.rglob("*.npy")}
    code, _, err = cli("batch", "mel", "--store", "files", corpus, "--out", out, "-j", "1")
    assert code == 0 and "0 ok, 0 failed, 6 already done" in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.npy")} == mtimes
    assert len(manifest_lines(out)) == 6
    # A changed input, a changed option, a deleted output: recomputed.
    os.utime(corpus / "f.flac", ns=(1, 1))
    (out / "spk1" / "a.mel.npy").unlink()
    code, _, err = cli("batch", "mel", "--store", "files", corpus, "--out", out, "-j", "1")
    assert code == 0 and "2 ok, 0 failed, 4 already done" in err
    code, _, err = cli("batch", "mel", "--store", "files", corpus, "--out", out, "-j", "1", "--n-mels", "40")
    assert code == 0 and "6 ok, 0 failed, 0 already done" in err
    assert np.load(out / "spk1" / "b.mel.npy").shape[0] == 40
    code, _, err = cli("batch", "mel", "--store", "files", corpus, "--out", out, "-j", "1", "--n-mels", "40", "--force")
    assert code == 0 and "6 ok, 0 failed, 0 already done" in err


def test_bad_inputs_are_recorded_and_the_batch_goes_on(cli, corpus, tmp_path):
    (corpus / "spk1" / "empty.wav").write_bytes(b"")
    (corpus / "spk1" / "junk.flac").write_bytes(b"fLaC this is not a stream")
    (corpus / "spk2" / "text.wav").write_text("hello")
    out = tmp_path / "out"
    listing = tmp_path / "list.txt"  # a path named on the command line must exist (test_reporting); one in a list may not
    listing.write_text(f"{corpus / 'missing.wav'}\n")
    code, stdout, err = cli("batch", "mel", "--store", "files", corpus, f"@{listing}", "--out", out, "-j", "1", "--json")
    assert code == 3
    summary = json.loads(stdout)
    assert (summary["ok"], summary["failed"]) == (6, 4)
    failed = {r["id"]: r for r in manifest_lines(out) if r["status"] == "failed"}
    assert set(failed) == {"spk1/empty", "spk1/junk", "spk2/text", "missing"}
    assert failed["spk1/empty"]["error"] == f"{corpus / 'spk1' / 'empty.wav'}: empty file (0 bytes)"
    assert failed["missing"]["error"] == f"{corpus / 'missing.wav'}: no such file"
    assert "not a recognised audio file" in failed["spk2/text"]["error"]
    assert f"error: {failed['spk1/empty']['error']}" in err  # the line the single-file command prints
    # The same message as the single-file command.
    code, _, single_err = cli("mel", corpus / "spk1" / "empty.wav", "--npy", tmp_path / "x.npy")
    assert code == 3 and single_err.strip() == f"error: {failed['spk1/empty']['error']}"
    # A re-run retries the failures only.
    code, _, err = cli("batch", "mel", "--store", "files", corpus, f"@{listing}", "--out", out, "-j", "1")
    assert code == 3 and "0 ok, 4 failed, 6 already done" in err


def test_max_failures_stops_early(cli, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for i in range(8):
        (data / f"bad{i}.wav").write_bytes(b"RIFF....WAVEjunk")
    out = tmp_path / "out"
    code, stdout, err = cli("batch", "info", data, "--out", out, "-j", "1", "--chunk", "1", "--max-failures", "3", "--json")
    assert code == 3
    summary = json.loads(stdout)
    assert summary["failed"] == 3 and summary["stopped_early"] is True
    assert len(manifest_lines(out)) == 3
    assert "stopped early" in err


@pytest.mark.slow
def test_kill_9_then_rerun_finishes(tmp_path):
    data = _slow_corpus(tmp_path / "data", 10)
    out = tmp_path / "out"
    args = audiokit_cmd("batch", "dehum", "--freq", "50", data, "--out", out, "-j", "1", "--chunk", "1", "-q")
    proc = subprocess.Popen(args, cwd=tmp_path, stdin=subprocess.DEVNULL)
    try:
        _wait_for_lines(out / "manifest.jsonl", 2, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        proc.kill()
    done_before = len(manifest_lines(out))
    assert 2 <= done_before < 10
    rerun = subprocess.run(args, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    records = manifest_lines(out)
    ok = {r["id"] for r in records if r["status"] == "ok"}
    assert len(ok) == 10 and all(r["status"] == "ok" for r in records)
    assert len(records) <= 10 + 1  # at most the input in flight redone (and a torn line skipped)
    assert temp_files(out) == []
    from audiokit import read

    for record in records:
        assert read(out / record["outputs"]["wav"]).samples.shape == (1, 16000)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "jobs"), [(signal.SIGINT, 130, 2), (signal.SIGTERM, 143, 2), (signal.SIGTERM, 143, 1)])
def test_interrupt_keeps_finished_outputs_and_leaves_no_temp_files(tmp_path, sig, code, jobs):
    data = _slow_corpus(tmp_path / "data", 8)
    out = tmp_path / "out"
    args = audiokit_cmd("batch", "dehum", "--freq", "50", data, "--out", out, "-j", jobs, "--chunk", "1")
    proc = subprocess.Popen(args, cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lines(out / "manifest.jsonl", 1, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    records = manifest_lines(out)
    assert 1 <= len(records) < 8 and all(r["status"] == "ok" for r in records)
    # How far it got: exactly the inputs recorded (lines are written and counted with the signals held back).
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert err.splitlines()[-1] == f"error: {word}: {len(records)} of 8 done; run the same command again to resume", err
    assert err.count("error:") == 1, err
    for record in records:
        assert (out / record["outputs"]["wav"]).exists()
    assert temp_files(out) == []
    # An input a worker finished just as it was stopped may have its output without its line: complete, and
    # recomputed by the next run.
    from audiokit import read

    for path in out.rglob("*.wav"):
        assert read(path).samples.shape == (1, 16000)


def test_torn_last_line_is_tolerated(cli, corpus, tmp_path):
    out = tmp_path / "out"
    assert cli("batch", "info", corpus, "--out", out, "-j", "1")[0] == 0
    manifest = out / "manifest.jsonl"
    text = manifest.read_text()
    lines = text.splitlines(keepends=True)
    manifest.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # kill -9 mid-write
    code, _, err = cli("batch", "info", corpus, "--out", out, "-j", "1")
    assert code == 0 and "1 ok, 0 failed, 5 already done" in err
    assert len(manifest_lines(out)) == 6
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in results) == sorted({r["id"] for r in results})  # each input once
    assert len(results) == 6


@pytest.mark.slow
def test_a_pool_worker_killed_mid_run_its_tasks_are_retried(tmp_path):
    psutil = pytest.importorskip("psutil")
    data = _slow_corpus(tmp_path / "data", 10)
    out = tmp_path / "out"
    args = audiokit_cmd("batch", "dehum", "--freq", "50", data, "--out", out, "-j", "2", "--chunk", "1", "-q")
    proc = subprocess.Popen(args, cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lines(out / "manifest.jsonl", 1, proc)
        workers = [c for c in psutil.Process(proc.pid).children() if "spawn_main" in " ".join(c.cmdline())]
        assert workers and len(manifest_lines(out)) < 10
        workers[0].kill()
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    records = manifest_lines(out)
    assert sorted(r["id"] for r in records) == sorted(f"g{i % 3}/u{i:02d}" for i in range(10))  # each once
    assert all(r["status"] == "ok" for r in records)
    assert temp_files(out) == []

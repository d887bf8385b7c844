"""``--scheduler``: the same batch on a real Dask cluster (a scheduler and two workers started here).

Skipped only when ``distributed`` is not importable (the ``test`` extra installs it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from audiokit.batch.tasks import THREAD_VARS
from tests.helpers.batch import (
    audiokit_cmd,
    batch_options,
    batch_outputs,
    manifest_lines,
    reference_outputs,
    temp_files,
    write_tone_noise,
)

# A real Dask cluster: a scheduler and two worker processes.
pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install '.[cluster]')")

DASK = str(Path(sys.executable).with_name("dask"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, stopped by :meth:`stop`."""

    def __init__(self, log_dir: Path) -> None:
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.log_dir = log_dir
        self.env = {**os.environ, **THREAD_VARS}
        self.scheduler = self._start(
            "scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard"]
        )
        self.workers: list[subprocess.Popen] = []

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        with open(self.log_dir / f"{name}-{time.monotonic_ns()}.log", "wb") as log:  # the child keeps its own descriptor
            return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env)

    def add_worker(self) -> subprocess.Popen:
        worker = self._start(
            "worker", [DASK, "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"]
        )
        self.workers.append(worker)
        return worker

    def wait_for_workers(self, n: int) -> None:
        with distributed.Client(self.address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=60)

    def stop(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            if proc.poll() is None:
                proc.terminate()
        for proc in [*self.workers, self.scheduler]:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("dask-logs"))
    try:
        cluster.add_worker()
        cluster.add_worker()
        cluster.wait_for_workers(2)
        yield cluster
    finally:
        cluster.stop()


@pytest.mark.parametrize("command", ["mel", "resample", "info"])
def test_dask_outputs_equal_single_file_commands(cli, corpus, tmp_path, cluster, command):
    expected = reference_outputs(cli, command, corpus, tmp_path / "ref")
    out = tmp_path / "out"
    code, _, err = cli(
        "batch", command, *batch_options(command), corpus, "--out", out, "--scheduler", cluster.address, "--chunk", "2"
    )
    assert code == 0, err
    assert "(dask, 2 worker(s))" in err
    assert batch_outputs(command, out, expected) == expected
    assert sorted(r["id"] for r in manifest_lines(out)) == ["f", "spk1/a", "spk1/b", "spk2/e", "spk2/sess/c", "spk2/sess/d"]


@pytest.mark.parametrize("store", ["shards", "kaldi", "parquet", "npy"])
def test_dask_stores_equal_a_local_run_byte_for_byte(cli, corpus, tmp_path, cluster, store):
    """Workers write the shards straight into --out; the same plan gives the same bytes as --jobs 1."""
    runs = {}
    for name, extra in (("local", ["-j", "1"]), ("dask", ["--scheduler", cluster.address])):
        out = tmp_path / name
        code, _, err = cli("batch", "mel", "--mix", "--store", store, "--shard-size", "2u", corpus, "--out", out, *extra)
        assert code == 0, err
        skip = {
            "manifest.jsonl",
            "index.sqlite",
            "stats.journal",
            "feats.scp",
            "cuts.jsonl.gz",
            "features.jsonl.gz",
        }  # paths inside
        runs[name] = {
            p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name not in skip
        }
    assert runs["dask"].keys() == runs["local"].keys() and len(runs["local"]) > 4
    assert runs["dask"] == runs["local"]


def test_a_worker_killed_mid_run_its_tasks_run_elsewhere(tmp_path, cluster):
    data = tmp_path / "data"
    n = 12
    for i in range(n):
        write_tone_noise(data / f"u{i:02d}.wav", 1.0, seed=i, hum=0.05)
    out = tmp_path / "out"
    args = audiokit_cmd(
        "batch", "dehum", "--freq", "50", data, "--out", out, "--scheduler", cluster.address, "--chunk", "1", "-q"
    )
    proc = subprocess.Popen(args, cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    victim = cluster.workers[0]
    try:
        deadline = time.monotonic() + 60
        while not (out / "manifest.jsonl").exists() or not manifest_lines(out):
            assert time.monotonic() < deadline and proc.poll() is None, "no input finished"
            time.sleep(0.02)
        assert proc.poll() is None and len(manifest_lines(out)) < n
        victim.send_signal(signal.SIGKILL)  # busy: two tasks in flight per worker
        victim.wait(10)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        cluster.workers.remove(victim)
        cluster.add_worker()  # leave the module's cluster with two workers
    assert proc.returncode == 0, err
    records = manifest_lines(out)
    assert len(records) == n and sorted(r["id"] for r in records) == [f"u{i:02d}" for i in range(n)]  # each once
    assert all(r["status"] == "ok" for r in records)
    from audiokit import read

    for record in records:
        assert read(out / record["outputs"]["wav"]).samples.shape == (1, 16000)
    assert temp_files(out) == []
    cluster.wait_for_workers(2)


def test_ctrl_c_on_a_dask_batch_keeps_what_finished(tmp_path, cluster):
    data = tmp_path / "data"
    for i in range(12):
        write_tone_noise(data / f"u{i:02d}.wav", 1.0, seed=i, hum=0.05)
    out = tmp_path / "out"
    args = audiokit_cmd("batch", "dehum", "--freq", "50", data, "--out", out, "--scheduler", cluster.address, "--chunk", "1")
    proc = subprocess.Popen(args, cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (out / "manifest.jsonl").exists() or not manifest_lines(out):
            assert time.monotonic() < deadline and proc.poll() is None, "no input finished"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    records = manifest_lines(out)
    assert 1 <= len(records) < 12 and all(r["status"] == "ok" for r in records)
    # A task a worker was running when it was cancelled ends on its own (Dask cannot stop a running function):
    # its atomic writes finish or clean up, so no temp file stays.
    deadline = time.monotonic() + 20
    while temp_files(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert temp_files(out) == []


def test_unreachable_scheduler_is_an_output_error():
    from audiokit.batch.executor import DaskBackend
    from audiokit.errors import OutputError

    with pytest.raises(OutputError, match="cannot reach the Dask scheduler"):
        DaskBackend(f"tcp://127.0.0.1:{_free_port()}", timeout=1)

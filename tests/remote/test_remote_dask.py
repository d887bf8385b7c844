"""Dask with no shared file system (issue 22, part 2b): ``batch --scheduler tcp://... s3://in --out s3://out``.

A real ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1.  The workers share nothing with the
client but the S3 server: each runs in its own working, temp and cache folder, and -- where ``unshare --mount``
is allowed (root, as in CI's container) -- in a mount namespace where the test session's temp folder (the client's
temp folder with the batch's bookkeeping shadow, the local inputs and stores) is an empty tmpfs: a worker that
wrote or read a path of the client's would fail the batch.  The store in the bucket must hold the local batch's arrays, its tar shards byte
for byte.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import audiokit.corpus
from audiokit.batch.tasks import THREAD_VARS
from tests.helpers.batch import write_tone_noise
from tests.helpers.remote import run_audiokit

pytestmark = pytest.mark.slow  # a cluster of processes

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install '.[cluster]')")

DASK = str(Path(sys.executable).with_name("dask"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _hiding(folder: Path) -> list[str]:
    """The command prefix that runs a worker in a mount namespace of its own where ``folder`` is an empty tmpfs
    (needs ``unshare`` and the right to mount, as root in CI's container; else nothing is hidden)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        return []
    script = 'mount -t tmpfs audiokit-hidden "$1" && shift && exec "$@"'
    return [unshare, "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(folder)]


@pytest.fixture
def cluster(tmp_path, tmp_path_factory, s3_env):
    """A scheduler and two workers, each worker in a folder of its own (cwd, TMPDIR, HOME, XDG_CACHE_HOME)."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs = tmp_path / "logs"
    logs.mkdir()
    base = {**os.environ, **THREAD_VARS, **s3_env.env}
    hidden = tmp_path_factory.getbasetemp()  # every folder of this test session: the client's temp, data, stores
    prefix = _hiding(hidden)

    def start(name: str, args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
        with open(logs / f"{name}.log", "wb") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
        procs.append(proc)
        return proc

    start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], tmp_path, base)
    workers = []
    for n in range(2):
        home = Path(f"/tmp/audiokit-dask-worker-{os.getpid()}-{n}-{time.monotonic_ns()}")  # outside the client's tmp
        home.mkdir(mode=0o700)
        env = {**base, "HOME": str(home), "TMPDIR": str(home), "XDG_CACHE_HOME": str(home / "cache")}
        args = [*prefix, DASK, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"]
        workers.append((start(f"worker{n}", args, home, env), home))
    try:
        with distributed.Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=90)
        yield address, workers, prefix, hidden
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        for _, home in workers:
            shutil.rmtree(home, ignore_errors=True)


def test_dask_batch_from_s3_to_s3_with_no_shared_folder(cluster, s3_env, tmp_path, cli):
    address, workers, prefix, hidden = cluster
    data = tmp_path / "data"
    for i, duration in enumerate((0.6, 0.9, 1.1, 0.5, 0.7, 1.3, 0.8, 1.0)):
        write_tone_noise(data / f"spk{i % 2 + 1}" / f"u{i}.flac", duration, seed=30 + i)
    client = s3_env.server.client()
    for path in sorted(data.rglob("*.flac")):
        client.upload_file(str(path), s3_env.bucket, f"dask-in/{path.relative_to(data).as_posix()}")
    store = ["--store", "shards", "--shard-size", "40KB"]
    code, _, err = cli("batch", "mel", data, "--out", tmp_path / "local", *store, "--jobs", "1", "-q")
    assert code == 0, err

    client_tmp = tmp_path / "client-tmp"
    client_tmp.mkdir(mode=0o700)
    env = {**os.environ, **s3_env.env, "TMPDIR": str(client_tmp)}
    out = s3_env.url("dask-out")
    proc = run_audiokit(
        "batch", "mel", s3_env.url("dask-in/"), "--out", out, *store, "--scheduler", address, "-q", env=env, cwd=client_tmp
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    if prefix:  # the workers really did not see the client's folders
        for worker, _ in workers:
            mounts = Path(f"/proc/{worker.pid}/mounts").read_text()
            assert f"audiokit-hidden {hidden} tmpfs" in mounts
    assert all(worker.poll() is None for worker, _ in workers)
    assert list(client_tmp.iterdir()) == []  # the client's shadow is gone

    local = audiokit.corpus.open(tmp_path / "local")
    remote = audiokit.corpus.open(out)
    assert remote.ids == local.ids and len(remote) == 8
    for item_id in local.ids:
        assert np.array_equal(remote[item_id].array, local[item_id].array)
    shards = sorted(p.relative_to(tmp_path / "local").as_posix() for p in (tmp_path / "local" / "shar").glob("features.*.tar"))
    assert len(shards) >= 2
    for name in shards:
        body = client.get_object(Bucket=s3_env.bucket, Key=f"dask-out/{name}")["Body"].read()
        assert body == (tmp_path / "local" / name).read_bytes(), name

"""The ``--scale`` rows of ``bench_batch.py`` (issue 10): a Dask cluster of 2 local workers, a shell loop.

* :func:`dask_batch` -- ``dask scheduler`` + 2 x ``dask worker --nthreads 1 --no-nanny`` on 127.0.0.1 (started
  here, not timed), then the batch argv with ``--scheduler``; CPU = the client's process tree + the workers' CPU
  time during the run (psutil), peak RSS = the largest worker, sampled every 50 ms.
* :func:`shell_loop` -- ``audiokit mel FILE --npy OUT`` once per file from a bash script (a fresh process each).
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

from batch_corpus import Measured, env1, measure


class _RssSampler:
    """Peak RSS (MiB) of the given pids, sampled every 50 ms until :meth:`stop`."""

    def __init__(self, pids: list[int]) -> None:
        import psutil

        self._psutil, self.pids, self.peak = psutil, pids, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.pids:
                try:
                    self.peak = max(self.peak, self._psutil.Process(pid).memory_info().rss / 2**20)
                except (self._psutil.NoSuchProcess, self._psutil.AccessDenied):
                    pass
            time.sleep(0.05)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def _cpu(pids: list[int]) -> float:
    import psutil

    return sum(t.user + t.system for t in (psutil.Process(pid).cpu_times() for pid in pids))


def dask_batch(argv: list[str], work: Path, workers: int = 2) -> Measured | None:
    """Run ``argv + ["--scheduler", ADDRESS]`` on a fresh local cluster; None when dask.distributed is missing."""
    try:
        import distributed
    except ImportError:
        print("dask.distributed not installed: no Dask row (pip install '.[cluster]')")
        return None
    import sys

    dask = str(Path(sys.executable).with_name("dask"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    log = open(work / "dask.log", "wb")

    def start(argv: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env1())

    scheduler = start([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"])
    nodes = [
        start([dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"])
        for _ in range(workers)
    ]
    try:
        with distributed.Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=120)
        pids = [w.pid for w in nodes]
        before = _cpu(pids)
        sampler = _RssSampler(pids)
        run = measure([*argv, "--scheduler", address], log_dir=work / "logs" / "dask")
        run.rss_mib = sampler.stop()
        run.cpu_s += _cpu(pids) - before
        return run
    finally:
        for proc in [*nodes, scheduler]:  # workers first: they would wait to reconnect
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def shell_loop(audiokit: list[str], paths: list[Path], out: Path) -> Measured:
    """``audiokit mel PATH --npy OUT/uN.npy -q`` for each path, from one bash script."""
    out.mkdir(parents=True, exist_ok=True)
    script = out / "loop.sh"
    lines = ["set -e", *(f"{' '.join(audiokit)} mel '{p}' --npy '{out}/u{i}.npy' -q" for i, p in enumerate(paths))]
    script.write_text("\n".join(lines) + "\n")
    return measure(["bash", str(script)], log_dir=out / "logs")

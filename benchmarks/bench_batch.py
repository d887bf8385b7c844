"""Benchmark: ``audiokit batch mel`` over a generated corpus against the ways people do it today.

Run ``python benchmarks/bench_batch.py`` (2000 utterances); ``--files N`` for a
quicker run.  The corpus is generated into a temporary folder: utterances of
2–15 s (uniform, seeded), 16 kHz mono PCM_16, half FLAC and half WAV, in
nested folders ``spkNN/sessN/uttNNNNN.{flac,wav}`` (tilted noise plus tones).
Every contender computes the log-mel spectrogram with audiokit's defaults
(80 HTK bands, 25 ms Hann window, 10 ms hop, not centred, dB re max, 80 dB
floor) and saves one ``.npy`` per utterance:

* ``audiokit batch mel CORPUS --out DIR --jobs 1`` (in-process),
* ``--jobs 2`` (local process pool),
* ``--scheduler tcp://127.0.0.1:PORT`` on a Dask cluster of 2 local workers
  (``dask scheduler`` + 2 x ``dask worker --nthreads 1``, started here; not timed),
* a shell loop ``for f in ...; do audiokit mel "$f" --npy ...; done`` on the
  first ``--shell-files`` (100) utterances, extrapolated per file,
* a Python loop of ``librosa.load(sr=None)`` + ``librosa.feature.melspectrogram``
  (n_fft=400, hop 160, htk, norm=None, center=False) + ``power_to_db(ref=np.max,
  top_db=80)`` + ``np.save`` on the first ``--loop-files`` (300) utterances,
* the same loop with kaldi-native-fbank's ``OnlineFbank`` (80 bins, dither 0)
  when it imports.

Wall time is end to end (process start, decode, compute, write).  "x real
time per core" is audio seconds / wall seconds / processes computing; "x real
time per CPU s" is audio seconds / CPU seconds (user + sys of every process
of the contender: ``getrusage(RUSAGE_CHILDREN)``, psutil for the Dask
workers), which other load on the machine changes much less than the wall
time -- compare contenders on it when the load average exceeds the cores.  Peak
RSS per worker is sampled every 50 ms with psutil (the batch process for
``--jobs 1`` and the loops, the largest pool/Dask worker otherwise).  Every
process runs with one BLAS/FFT thread.  The machine line gives the load
average, which matters: other processes share the cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import fmt_ratio, limit_threads, machine_line, print_table, target_status, temp_dir  # noqa: E402

limit_threads(1)

SR = 16000
AUDIOKIT = [sys.executable, "-m", "audiokit"]
DASK = str(Path(sys.executable).with_name("dask"))


@dataclass
class Result:
    name: str
    files: int
    audio_s: float
    wall_s: float
    cores: int
    peak_rss_mib: float | None
    cpu_s: float = float("nan")

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall_s

    @property
    def rt_per_cpu_s(self) -> float:
        """Audio seconds per CPU second (user + sys of every process of the contender)."""
        return self.audio_s / self.cpu_s

    @property
    def rt_per_core(self) -> float:
        return self.audio_s / self.wall_s / self.cores


# ---------------------------------------------------------------------- corpus


def make_corpus(root: Path, n: int, seed: int = 0) -> list[tuple[Path, float]]:
    """``n`` utterances of 2–15 s, half FLAC half WAV, nested; return (path, seconds) in walk order."""
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(seed)
    files = []
    for i in range(n):
        seconds = float(rng.uniform(2.0, 15.0))
        count = int(seconds * SR)
        t = np.arange(count) / SR
        noise = rng.standard_normal(count).astype(np.float32)
        noise = np.convolve(noise, np.ones(4, np.float32) / 4, mode="same")
        x = 0.1 * noise + 0.1 * np.sin(2 * np.pi * (200 + 50 * (i % 17)) * t)
        ext = "flac" if i % 2 == 0 else "wav"
        path = root / f"spk{i % 40:02d}" / f"sess{i % 3}" / f"utt{i:05d}.{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(path, x.astype(np.float32), SR, subtype="PCM_16")
        files.append((path, count / SR))
    files.sort()
    return files


# ---------------------------------------------------------------------- measuring


class RssSampler:
    """Peak RSS (MiB) of processes, sampled every 50 ms: ``of='tree'`` (the root and its descendants, max of
    each) or explicit pids; :attr:`peak` is the largest single process among ``select``."""

    def __init__(self, pids: list[int], *, children: bool) -> None:
        import psutil

        self._psutil = psutil
        self.pids, self.children = pids, children
        self.peaks: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.pids:
                try:
                    root = self._psutil.Process(pid)
                    procs = root.children(recursive=True) if self.children else [root]
                    for proc in procs:
                        rss = proc.memory_info().rss / 2**20
                        self.peaks[proc.pid] = max(self.peaks.get(proc.pid, 0.0), rss)
                except (self._psutil.NoSuchProcess, self._psutil.AccessDenied):
                    pass
            time.sleep(0.05)

    def stop(self) -> float | None:
        self._stop.set()
        self._thread.join()
        return max(self.peaks.values()) if self.peaks else None


def children_cpu() -> float:
    """User + sys seconds of the reaped children of this process (and theirs)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pids_cpu(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def env1() -> dict[str, str]:
    return {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "AUDIOKIT_FFT_THREADS": "1",
    }


def run_batch(
    name: str, corpus: Path, out: Path, extra: list[str], audio_s: float, n: int, cores: int, worker_pids: list[int] | None = None
) -> Result:
    shutil.rmtree(out, ignore_errors=True)
    argv = [*AUDIOKIT, "batch", "mel", str(corpus), "--out", str(out), "-q", "--json", *extra]
    cpu0, workers0 = children_cpu(), pids_cpu(worker_pids or [])
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env1(), text=True)
    if worker_pids is not None:
        sampler = RssSampler(worker_pids, children=False)
    else:
        sampler = RssSampler([proc.pid], children=cores > 1)
        if cores == 1:
            sampler.children = False
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - start
    peak = sampler.stop()
    cpu = children_cpu() - cpu0 + pids_cpu(worker_pids or []) - workers0
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed ({proc.returncode}): {stderr}")
    import json

    summary = json.loads(stdout)
    assert summary["ok"] == n, summary
    return Result(name, n, audio_s, wall, cores, peak, cpu)


def run_shell_loop(files: list[tuple[Path, float]], out: Path) -> Result:
    out.mkdir(parents=True, exist_ok=True)
    script = out / "loop.sh"
    lines = ["set -e"]
    for i, (path, _) in enumerate(files):
        lines.append(f"{' '.join(AUDIOKIT)} mel '{path}' --npy '{out}/u{i}.npy' -q")
    script.write_text("\n".join(lines) + "\n")
    cpu0 = children_cpu()
    start = time.perf_counter()
    proc = subprocess.Popen(["bash", str(script)], env=env1(), stdout=subprocess.DEVNULL)
    sampler = RssSampler([proc.pid], children=True)
    proc.wait()
    wall = time.perf_counter() - start
    peak = sampler.stop()
    if proc.returncode:
        raise SystemExit("the shell loop failed")
    return Result(
        f"shell loop of `audiokit mel` ({len(files)} files)",
        len(files),
        sum(s for _, s in files),
        wall,
        1,
        peak,
        children_cpu() - cpu0,
    )


LIBROSA_LOOP = """
import sys, numpy as np, librosa
out = sys.argv[1]
for i, path in enumerate(sys.stdin.read().split("\\n")):
    if not path:
        continue
    y, sr = librosa.load(path, sr=None)
    S = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=400, hop_length=160, win_length=400, window="hann",
                                       center=False, power=2.0, n_mels=80, htk=True, norm=None)
    np.save(f"{out}/u{i}.npy", librosa.power_to_db(S, ref=np.max, top_db=80.0).astype(np.float32))
"""

KALDI_LOOP = """
import sys, numpy as np, soundfile as sf, kaldi_native_fbank as knf
out = sys.argv[1]
opts = knf.FbankOptions()
opts.frame_opts.dither = 0.0
opts.frame_opts.samp_freq = 16000
opts.mel_opts.num_bins = 80
for i, path in enumerate(sys.stdin.read().split("\\n")):
    if not path:
        continue
    x, sr = sf.read(path, dtype="float32")
    fbank = knf.OnlineFbank(opts)
    fbank.accept_waveform(sr, (x * 32768).tolist())
    fbank.input_finished()
    feats = np.stack([fbank.get_frame(k) for k in range(fbank.num_frames_ready)])
    np.save(f"{out}/u{i}.npy", feats)
"""


def run_python_loop(name: str, code: str, files: list[tuple[Path, float]], out: Path) -> Result:
    out.mkdir(parents=True, exist_ok=True)
    cpu0 = children_cpu()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdin=subprocess.PIPE, env=env1(), text=True)
    sampler = RssSampler([proc.pid], children=False)
    proc.communicate("\n".join(str(p) for p, _ in files) + "\n")
    wall = time.perf_counter() - start
    peak = sampler.stop()
    if proc.returncode:
        raise SystemExit(f"{name} failed")
    return Result(f"{name} ({len(files)} files)", len(files), sum(s for _, s in files), wall, 1, peak, children_cpu() - cpu0)


# ---------------------------------------------------------------------- Dask


class DaskCluster:
    def __init__(self, workers: int, log_dir: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        log = open(log_dir / "dask.log", "wb")
        common = dict(stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env1())
        self.procs = [
            subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **common)
        ]
        self.workers = [
            subprocess.Popen(
                [DASK, "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"], **common
            )
            for _ in range(workers)
        ]
        self.procs += self.workers
        import distributed

        with distributed.Client(self.address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=120)

    def stop(self) -> None:
        for proc in [*self.workers, self.procs[0]]:  # workers first: they would wait to reconnect
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ---------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="utterances in the corpus (default 2000)")
    parser.add_argument("--shell-files", type=int, default=100, help="utterances for the shell loop (default 100)")
    parser.add_argument("--loop-files", type=int, default=300, help="utterances for the Python loops (default 300)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    print(machine_line({"uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}))
    with temp_dir(keep=args.keep) as tmp:
        t0 = time.perf_counter()
        files = make_corpus(tmp / "corpus", args.files)
        audio = sum(s for _, s in files)
        print(f"corpus: {len(files)} utterances, {audio / 3600:.2f} h, made in {time.perf_counter() - t0:.1f} s")
        results: dict[str, Result] = {}
        results["jobs1"] = run_batch("audiokit batch --jobs 1", tmp / "corpus", tmp / "o1", ["--jobs", "1"], audio, len(files), 1)
        results["jobs2"] = run_batch("audiokit batch --jobs 2", tmp / "corpus", tmp / "o2", ["--jobs", "2"], audio, len(files), 2)
        try:
            import distributed  # noqa: F401
        except ImportError:
            print("dask.distributed not installed: no Dask row (pip install '.[cluster]')")
        else:
            cluster = DaskCluster(2, tmp)
            try:
                results["dask"] = run_batch(
                    "audiokit batch --scheduler (2 Dask workers)",
                    tmp / "corpus",
                    tmp / "o3",
                    ["--scheduler", cluster.address],
                    audio,
                    len(files),
                    2,
                    worker_pids=[w.pid for w in cluster.workers],
                )
            finally:
                cluster.stop()
        results["shell"] = run_shell_loop(files[: args.shell_files], tmp / "shell")
        results["librosa"] = run_python_loop("librosa loop", LIBROSA_LOOP, files[: args.loop_files], tmp / "librosa")
        try:
            import kaldi_native_fbank  # noqa: F401
        except ImportError:
            print("kaldi-native-fbank not installed: no kaldi row")
        else:
            results["kaldi"] = run_python_loop("kaldi-native-fbank loop", KALDI_LOOP, files[: args.loop_files], tmp / "kaldi")
    base = results["jobs1"]
    rows = []
    names = {"jobs1": "audiokit batch --jobs 1", "jobs2": "audiokit batch --jobs 2", "dask": "audiokit batch, Dask 2 workers"}
    for key, r in results.items():
        rows.append(
            [
                names.get(key, r.name),
                r.files,
                f"{r.audio_s / 3600:.2f}",
                f"{r.wall_s:.1f}",
                f"{r.files_per_s:.1f}",
                f"{r.rt_per_core:.0f}",
                f"{r.cpu_s:.1f}",
                f"{r.rt_per_cpu_s:.0f}",
                f"{r.peak_rss_mib:.0f}" if r.peak_rss_mib else "-",
                fmt_ratio(base.rt_per_cpu_s / r.rt_per_cpu_s) if key != "jobs1" else "1.00x",
            ]
        )
    print_table(
        [
            "contender",
            "files",
            "audio h",
            "wall s",
            "files/s",
            "x real time per core (wall)",
            "CPU s",
            "x real time per CPU s",
            "peak RSS/worker MiB",
            "--jobs 1 per CPU s ÷ this",
        ],
        rows,
        title="log-mel 80, .npy per utterance",
    )
    checks = [
        ("--jobs 1 x real time per core (wall)", base.rt_per_core, 1500.0, True),
        ("--jobs 1 x real time per CPU second", base.rt_per_cpu_s, 1500.0, True),
        ("--jobs 1 / librosa loop (wall, per core)", base.rt_per_core / results["librosa"].rt_per_core, 5.0, True),
        ("--jobs 1 / librosa loop (per CPU second)", base.rt_per_cpu_s / results["librosa"].rt_per_cpu_s, 5.0, True),
        ("--jobs 1 / shell loop (files/s, wall)", base.files_per_s / results["shell"].files_per_s, 50.0, True),
        ("--jobs 1 / shell loop (per CPU second)", base.rt_per_cpu_s / results["shell"].rt_per_cpu_s, 50.0, True),
        ("--jobs 2 / --jobs 1 (files/s, wall)", results["jobs2"].files_per_s / base.files_per_s, 1.7, True),
    ]
    if "dask" in results:
        checks.append(("--jobs 2 / Dask (files/s, wall)", results["jobs2"].files_per_s / results["dask"].files_per_s, 1.3, False))
    peak = max(r.peak_rss_mib or 0 for k, r in results.items() if k in ("jobs1", "jobs2", "dask"))
    checks.append(("peak RSS per batch worker (MiB)", peak, 300.0, False))
    rows = [
        [what, f"{'>=' if higher else '<='} {target:g}", f"{value:.2f}", target_status(value, target, higher_is_better=higher)]
        for what, value, target, higher in checks
    ]
    print_table(["target", "goal", "measured", "status"], rows, title="targets (issue 10)")
    print(machine_line({"uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}))


if __name__ == "__main__":
    main()

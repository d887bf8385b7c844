"""Benchmark: corpora in object storage (issue 22) -- a batch s3 -> s3 against the same batch on local disk, single
utterances read from a remote shard against downloading the object, and Ctrl-C on a stalled read.

::

    python benchmarks/bench_remote.py                          # 1000 FLAC utterances of 2-8 s, 3 rounds: ~5 min
    python benchmarks/bench_remote.py --files 200 --repeats 1  # a quick look
    python benchmarks/bench_remote.py --cache /tmp/akremote    # keep the generated corpus between runs

The S3 server is moto's (``moto[server]``, the test extra) on 127.0.0.1, run in this process and counting every
request it answers (``tests/helpers/remote.py``); its CPU time is this process's (``os.times``) while a contender
runs, reported beside the contender's own.  The corpus: ``--files`` FLAC utterances (16 kHz mono PCM_16, lengths
uniform in ``--seconds``, seeded: low-passed noise plus a tone) in 40 speaker folders, on disk and uploaded to
``s3://bench-in/corpus/``.

1. **Batch** -- ``audiokit batch mel IN --out OUT --store shards --jobs 2 -q``, local folder to local folder against
   ``s3://bench-in/corpus/`` to ``s3://bench-out/run-N`` (a new prefix each round), contenders alternated over
   ``--repeats`` rounds; medians of wall seconds and CPU seconds (user + sys of the process tree,
   ``getrusage(RUSAGE_CHILDREN)``), the server's CPU seconds, requests per utterance; the ratio of wall times
   against the issue's target (s3 within 1.5x of local).  The stores' arrays are checked equal, every one.
2. **Single-utterance reads** of the last s3 store -- ``audiokit.corpus.open("s3://...")[id].array`` (one ranged GET
   of the member) against downloading the shard object whole and reading the member from it, and the local store;
   ``--reads`` ids drawn at random (seeded; the first ``--download-reads`` of them downloaded), median seconds per
   utterance, requests and bytes per utterance.  The stores are packed in ``--shard-size`` shards (32 MiB).
3. **Ctrl-C on a stalled read** -- ``audiokit resample s3://... -o out.wav`` whose GET from 1 MiB on stalls
   mid-body (``tests/remote/stall.py``); SIGINT 0.3 s into the stall; seconds from the signal to the exit, exit
   status, stderr; 5 runs.  (Before issue 22 part 2b the signal waited for botocore's read timeout: 60 s.)

Numbers are informative: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from batch_corpus import children_cpu  # noqa: E402
from common import fmt_ratio, fmt_s, limit_threads, machine_line, print_table, target_status, temp_dir  # noqa: E402

SR = 16000
SPEAKERS = 40
#: ``python -m audiokit`` with SIGINT's default action (a benchmark started with ``&`` or nohup hands its children
#: SIGINT ignored, which audiokit keeps ignored).
DEFAULT_SIGINT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'audiokit', *sys.argv[1:]])",
]


def make_corpus(root: Path, n: int, seconds: tuple[float, float], seed: int = 0) -> list[Path]:
    """``n`` FLAC utterances under ``root`` (made once: ``done`` is written last)."""
    import numpy as np
    import soundfile as sf

    done = root / "done"
    if not done.exists():
        rng = np.random.default_rng(seed)
        for i in range(n):
            count = int(float(rng.uniform(*seconds)) * SR)
            t = np.arange(count) / SR
            noise = np.convolve(rng.standard_normal(count).astype(np.float32), np.ones(4, np.float32) / 4, mode="same")
            x = 0.1 * noise + 0.1 * np.sin(2 * np.pi * (200 + 50 * (i % 17)) * t)
            path = root / f"spk{i % SPEAKERS:02d}" / f"utt{i:05d}.flac"
            path.parent.mkdir(parents=True, exist_ok=True)
            sf.write(path, x.astype(np.float32), SR, subtype="PCM_16")
        done.write_text("ok\n")
    return sorted(root.rglob("*.flac"))


def upload(client, files: list[Path], root: Path, bucket: str, prefix: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def put(path: Path) -> None:
        client.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(root).as_posix()}")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, files))


def run_batch(argv: list[str], env: dict[str, str], server) -> dict[str, float]:
    """One batch: wall, CPU-s of its process tree, the server's CPU-s (this process) and its requests."""
    server.log.clear()
    cpu0, own0, start = children_cpu(), os.times(), time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    cpu, own = children_cpu() - cpu0, os.times()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr[-800:]}")
    server_cpu = (own.user - own0.user) + (own.system - own0.system)
    return {"wall": wall, "cpu": cpu, "server_cpu": server_cpu, "requests": len(server.log.requests)}


def bench_batch(args, corpus_root: Path, n: int, tmp: Path, server, env: dict[str, str]) -> tuple[Path, str]:
    from audiokit.corpus import open as open_corpus

    base = [sys.executable, "-m", "audiokit", "batch", "mel"]
    store = ["--store", args.store, "--shard-size", args.shard_size, "--jobs", str(args.jobs), "-q"]
    results: dict[str, list[dict[str, float]]] = {"local -> local": [], "s3 -> s3": []}
    local_out = remote_out = None
    for r in range(args.repeats):
        order = list(results) if r % 2 == 0 else list(results)[::-1]
        for name in order:
            if name == "local -> local":
                local_out = tmp / f"local-{r}"
                argv = [*base, str(corpus_root), "--out", str(local_out), *store]
            else:
                remote_out = f"s3://bench-out/run-{r}"
                argv = [*base, "s3://bench-in/corpus/", "--out", remote_out, *store]
            results[name].append(run_batch(argv, env, server))
        print(f"#   batch round {r + 1}/{args.repeats} done", file=sys.stderr)
    assert local_out is not None and remote_out is not None
    local, remote = open_corpus(local_out), open_corpus(remote_out)
    assert remote.ids == local.ids and len(local) == n, (len(remote), len(local), n)
    for item_id in local.ids:  # every array of the s3 store is the local store's
        if not (remote[item_id].array == local[item_id].array).all():
            raise SystemExit(f"{item_id}: the s3 store differs from the local store")
    med = {name: {k: statistics.median(run[k] for run in runs) for k in runs[0]} for name, runs in results.items()}
    ratio = med["s3 -> s3"]["wall"] / med["local -> local"]["wall"]
    rows = []
    for name, m in med.items():
        rows.append(
            [
                name,
                fmt_s(m["wall"]),
                f"{m['cpu']:.1f}",
                f"{m['server_cpu']:.1f}" if name != "local -> local" else "-",
                f"{m['requests'] / n:.2f}" if name != "local -> local" else "-",
                fmt_ratio(m["wall"] / med["local -> local"]["wall"]),
            ]
        )
    print_table(
        [
            "batch mel --store " + args.store + f" --jobs {args.jobs}, {n} FLAC",
            "wall",
            "CPU-s",
            "server CPU-s",
            "requests / utt",
            "wall vs local",
        ],
        rows,
        title=f"Batch s3 -> s3 against local -> local (medians of {args.repeats}; s3 target <= 1.5x local: "
        f"{target_status(ratio, 1.5, higher_is_better=False)})",
    )
    return local_out, remote_out


def bench_reads(args, local_out: Path, remote_out: str, server) -> None:
    import boto3  # noqa: F401 (the test extra; the server's client)
    import numpy as np

    from audiokit.corpus import open as open_corpus

    server.log.clear()
    t0 = time.perf_counter()
    remote = open_corpus(remote_out)
    open_s, open_requests = time.perf_counter() - t0, len(server.log.requests)
    local = open_corpus(local_out)
    ids = random.Random(22).sample(local.ids, min(args.reads, len(local)))
    client = server.client()
    bucket, _, prefix = remote_out.removeprefix("s3://").partition("/")

    def ranged(item_id: str) -> np.ndarray:
        return remote[item_id].array

    def downloaded(item_id: str) -> np.ndarray:  # the whole shard object (one GET), then the member in it
        row = remote[item_id].record
        body = client.get_object(Bucket=bucket, Key=f"{prefix}/{row['file']}")["Body"].read()
        data = body[row["offset"] : row["offset"] + row["nbytes"]]  # the member's bytes (tar: after its header)
        return np.frombuffer(data, dtype=remote.dtype.newbyteorder("<")).reshape(row["n_frames"], row["n_feats"])

    def on_disk(item_id: str) -> np.ndarray:
        return np.array(local[item_id].array)

    rows = []
    contenders = (
        ("corpus.open(s3://...)[id].array: ranged GET", ranged, ids),
        ("download the shard object, read the member", downloaded, ids[: args.download_reads]),
        ("local store (reference)", on_disk, ids),
    )
    for name, read, chosen in contenders:
        times, requests, sent = [], 0, 0
        for item_id in chosen:
            server.log.clear()
            start = time.perf_counter()
            array = read(item_id)
            times.append(time.perf_counter() - start)
            requests += len(server.log.requests)
            sent += server.log.bytes_sent()
            if not np.array_equal(array, local[item_id].array):
                raise SystemExit(f"{name}: {item_id} differs from the local store")
        n = len(chosen)
        rows.append([name, n, fmt_s(statistics.median(times)), f"{requests / n:.2f}", f"{sent / n / 1e3:.0f}"])
    print_table(
        ["one utterance of " + remote_out, "reads", "median s / utt", "requests / utt", "kB sent / utt"],
        rows,
        title=f"Single-utterance reads (random ids; shards of {args.shard_size}; opening the store: {open_requests} requests, "
        f"{fmt_s(open_s)})",
    )


def bench_signal(tmp: Path, server, env: dict[str, str], runs: int = 5) -> None:
    import numpy as np
    import soundfile as sf

    from tests.remote.stall import Stall

    path = tmp / "two-minutes.wav"
    sf.write(path, 0.1 * np.random.default_rng(7).standard_normal(120 * SR), SR, subtype="PCM_16")
    server.client().upload_file(str(path), "bench-in", "stall/two-minutes.wav")
    rows = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        latencies, codes, lines = [], set(), set()
        for _ in range(runs):
            with Stall(server.log, "stall/two-minutes.wav", from_byte=1 << 20) as stall:
                argv = [
                    *DEFAULT_SIGINT,
                    "resample",
                    "s3://bench-in/stall/two-minutes.wav",
                    "--to",
                    "8k",
                    "-o",
                    str(tmp / "r.wav"),
                ]
                proc = subprocess.Popen(
                    argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
                )
                stall.stalled.wait(120)
                time.sleep(0.3)
                start = time.perf_counter()
                proc.send_signal(signum)
                _, err = proc.communicate(timeout=120)
                latencies.append(time.perf_counter() - start)
            codes.add(proc.returncode)
            lines.add(err.decode().strip())
        rows.append(
            [signum.name, fmt_s(statistics.median(latencies)), fmt_s(max(latencies)), sorted(codes), " / ".join(sorted(lines))]
        )
    print_table(
        ["signal on a read stalled at 1 MiB", "median to exit", "max", "exit", "stderr"],
        rows,
        title=f"Ctrl-C / SIGTERM on a stalled connection ({runs} runs)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--seconds", type=float, nargs=2, default=(2.0, 8.0), metavar=("MIN", "MAX"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--store", default="shards", choices=["shards", "npy", "kaldi", "parquet"])
    parser.add_argument("--shard-size", default="32MiB", help="the stores' --shard-size")
    parser.add_argument("--reads", type=int, default=200, help="random utterances read in part 2 (ranged, local)")
    parser.add_argument("--download-reads", type=int, default=10, help="of them, read by downloading the shard")
    parser.add_argument("--cache", type=Path, help="keep the generated corpus here")
    parser.add_argument("--no-signals", action="store_true", help="skip part 3")
    args = parser.parse_args()
    limit_threads(1)
    from tests.helpers.remote import CountingMotoServer, server_environment

    print(machine_line({"files": str(args.files), "seconds": f"{args.seconds[0]}-{args.seconds[1]}"}))
    with temp_dir("audiokit-bench-remote-") as tmp:
        corpus_root = (args.cache or tmp) / f"flac-{args.files}-{args.seconds[0]}-{args.seconds[1]}"
        files = make_corpus(corpus_root, args.files, (args.seconds[0], args.seconds[1]))
        server = CountingMotoServer()
        try:
            env = {**os.environ, **server_environment(server.endpoint)}
            os.environ.update(server_environment(server.endpoint))  # for audiokit.corpus.open in this process
            client = server.client()
            client.create_bucket(Bucket="bench-in")
            client.create_bucket(Bucket="bench-out")
            upload(client, files, corpus_root, "bench-in", "corpus")
            local_out, remote_out = bench_batch(args, corpus_root, args.files, tmp, server, env)
            bench_reads(args, local_out, remote_out, server)
            if not args.no_signals:
                bench_signal(tmp, server, env)
        finally:
            server.stop()


if __name__ == "__main__":
    main()

"""``audiokit batch mel`` into a local folder vs into ``s3://`` (issue 22, part 2a), side by side in one run.

A moto S3 server runs in this process on 127.0.0.1 (its CPU is this process's, not the batch's); N FLAC utterances
are written locally and uploaded to it.  Each round runs, in alternating order, the same batch (``--store STORE
-j JOBS``) local -> local, s3 -> local, local -> s3 and s3 -> s3, each into a fresh ``--out``; the table gives the
median wall time, the median CPU-seconds of the batch (``os.wait4``: the parent and its pool workers), their ratio
to local -> local, and the requests the server answered for one run (PUT / GET / other).

    python benchmarks/bench_remote_out.py --utterances 200 --store shards --jobs 2 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.helpers.remote: the counting moto server

from benchmarks.common import limit_threads, machine_line, print_table, run_wait4, temp_dir  # noqa: E402

BUCKET = "bench"


def _corpus(folder: Path, n: int, seconds: float) -> list[Path]:
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(22)
    paths = []
    for i in range(n):
        path = folder / f"spk{i % 10}" / f"utt{i:05d}.flac"
        path.parent.mkdir(parents=True, exist_ok=True)
        t = np.arange(int(seconds * 16000)) / 16000
        x = 0.3 * np.sin(2 * np.pi * (200 + 7 * i) * t) + 0.02 * rng.standard_normal(t.size)
        sf.write(path, x, 16000, subtype="PCM_16")
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each utterance")
    parser.add_argument("--store", default="shards", choices=("npy", "shards", "kaldi", "parquet"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    limit_threads(1)
    from tests.helpers.remote import CountingMotoServer, server_environment

    server = CountingMotoServer()
    try:
        client = server.client()
        client.create_bucket(Bucket=BUCKET)
        with temp_dir() as tmp:
            corpus = tmp / "corpus"
            for path in _corpus(corpus, args.utterances, args.seconds):
                client.upload_file(str(path), BUCKET, f"corpus/{path.relative_to(corpus).as_posix()}")
            env = dict(os.environ, **server_environment(server.endpoint))
            inputs = {"local": str(corpus), "s3": f"s3://{BUCKET}/corpus/"}

            def out_of(kind: str) -> str:
                name = uuid.uuid4().hex[:8]
                return str(tmp / "outs" / name) if kind == "local" else f"s3://{BUCKET}/outs/{name}"

            cases = [(src, dst) for src in ("local", "s3") for dst in ("local", "s3")]
            walls: dict[tuple[str, str], list[float]] = {c: [] for c in cases}
            cpus: dict[tuple[str, str], list[float]] = {c: [] for c in cases}
            requests: dict[tuple[str, str], tuple[int, int, int]] = {}
            for round_ in range(args.repeats):
                for case in cases if round_ % 2 == 0 else cases[::-1]:
                    argv = [sys.executable, "-m", "audiokit", "batch", "mel", inputs[case[0]], "--out", out_of(case[1])]
                    argv += ["--store", args.store, "-j", str(args.jobs), "-q"]
                    server.log.clear()
                    run = run_wait4(argv, env=env)
                    if run.returncode != 0:
                        raise SystemExit(f"{case}: exit {run.returncode}: {run.stderr}")
                    walls[case].append(run.wall)
                    cpus[case].append(run.cpu or 0.0)
                    log = server.log.requests
                    puts = sum(r.method == "PUT" for r in log)
                    gets = sum(r.method == "GET" for r in log)
                    requests[case] = (puts, gets, len(log) - puts - gets)
            base_wall = statistics.median(walls["local", "local"])
            base_cpu = statistics.median(cpus["local", "local"])
            rows = []
            for case in cases:
                wall, cpu = statistics.median(walls[case]), statistics.median(cpus[case])
                puts, gets, other = requests[case]
                rows.append(
                    [f"{case[0]} -> {case[1]}", f"{wall:.2f}", f"{wall / base_wall:.2f}x", f"{cpu:.2f}", f"{cpu / base_cpu:.2f}x"]
                    + [f"{puts} / {gets} / {other}"]
                )
            print(machine_line({"utterances": str(args.utterances), "store": args.store, "jobs": str(args.jobs)}))
            print_table(
                ["batch", "wall s (median)", "vs local", "CPU s (median)", "vs local", "requests PUT / GET / other"],
                rows,
                title=f"batch mel, {args.utterances} x {args.seconds:g} s FLAC, --store {args.store} -j {args.jobs}, "
                f"medians of {args.repeats}",
            )
    finally:
        server.stop()


if __name__ == "__main__":
    main()

"""Throughput of batched real FFTs: audiokit's engine against numpy.fft and scipy.fft.

Every implementation transforms the same generated batch of frames
(``frames x n_fft``, float32 and float64) in the same run; calls are
interleaved round-robin so that load changes on a shared machine hit all of
them alike.  Reported per implementation:

* median wall time of one batched call (ms),
* frames/s = frames / median,
* GFLOP/s  = frames * 2.5 * n_fft * log2(n_fft) / median / 1e9
  (the conventional flop count of a real FFT),
* speed-up against scipy.fft (workers=1) and numpy.fft: competitor median
  divided by this implementation's median (> 1 means faster),
* peak MB: peak memory traced by ``tracemalloc`` during one call (numpy
  allocations, which include pyFFTW's aligned buffers; not C++ temporaries).

Usage::

    python benchmarks/bench_fft.py                  # 400, 512, 2048; 4000 frames
    python benchmarks/bench_fft.py --quick          # fewer repeats
    python benchmarks/bench_fft.py --inverse        # irfft rows too
    python benchmarks/bench_fft.py --threads 2 4 --nfft 512 --frames 6000

The first audiokit call per shape (planning, or loading wisdom) is timed
separately and excluded from the medians.  Multi-threaded FFTW is timed
last, in separate blocks against FFTW with one thread (see
``_sequential_blocks``), and reported as a speed ratio.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.fft

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audiokit.engine import available_backends, get_backend  # noqa: E402


def _median_times(funcs: dict, repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in funcs}
    for _ in range(repeats):
        for key, func in funcs.items():
            t0 = time.perf_counter()
            func()
            times[key].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def _peak_mb(func) -> float:
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _sequential_blocks(funcs: dict, repeats: int, rounds: int = 3) -> dict[str, float]:
    """Medians from blocks of consecutive calls per implementation, ``rounds`` times.

    Used for multi-threaded FFTW: its OpenMP workers keep spinning for a
    moment after each call, which would steal the CPU from whatever is timed
    next in a round-robin.  A pause separates the blocks.
    """
    times: dict[str, list[float]] = {k: [] for k in funcs}
    per_block = max(1, repeats // rounds)
    for _ in range(rounds):
        for key, func in funcs.items():
            time.sleep(0.05)
            for _ in range(per_block):
                t0 = time.perf_counter()
                func()
                times[key].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nfft", type=int, nargs="+", default=[400, 512, 2048])
    parser.add_argument("--frames", type=int, default=4000)
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument(
        "--threads", type=int, nargs="+", default=[2], help="extra FFTW thread counts compared with 1 thread (default: 2)"
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="6 repeats")
    parser.add_argument("--inverse", action="store_true", help="also time irfft")
    args = parser.parse_args(argv)
    repeats = 6 if args.quick else args.repeats

    have_fftw = "fftw" in available_backends()
    print(
        f"# numpy {np.__version__}, scipy {scipy.__version__}, backends {available_backends()}, "
        f"cpus {os.cpu_count()}, load avg {os.getloadavg()[0]:.2f}, repeats {repeats}, "
        f"frames {args.frames}"
    )
    header = (
        f"{'op':5} {'n_fft':>5} {'dtype':7} {'implementation':22} {'median ms':>9} "
        f"{'frames/s':>10} {'GFLOP/s':>7} {'x scipy':>7} {'x numpy':>7} {'peak MB':>7}"
    )
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(0)
    notes, thread_rows = [], []
    ops = ["rfft"] + (["irfft"] if args.inverse else [])
    for op in ops:
        for n_fft in args.nfft:
            for dtype in args.dtypes:
                frames = rng.standard_normal((args.frames, n_fft)).astype(dtype)
                data = frames if op == "rfft" else scipy.fft.rfft(frames, axis=-1)
                ref = scipy.fft.rfft(data, axis=-1) if op == "rfft" else scipy.fft.irfft(data, n_fft, axis=-1)

                def engine_call(name, threads, d=data, n=n_fft, forward=op == "rfft"):
                    be = get_backend(name, threads=threads)
                    if forward:
                        return lambda: be.rfft(d)
                    return lambda: be.irfft(d, n)

                if op == "rfft":
                    funcs = {
                        "numpy.fft": lambda d=data: np.fft.rfft(d, axis=-1),
                        "scipy.fft (workers=1)": lambda d=data: scipy.fft.rfft(d, axis=-1, workers=1),
                    }
                else:
                    funcs = {
                        "numpy.fft": lambda d=data, n=n_fft: np.fft.irfft(d, n, axis=-1),
                        "scipy.fft (workers=1)": lambda d=data, n=n_fft: scipy.fft.irfft(d, n, axis=-1, workers=1),
                    }
                engines = [("scipy", 1)] + ([("fftw", 1)] if have_fftw else [])
                first = {}
                for name, threads in engines + [("fftw", t) for t in args.threads if have_fftw]:
                    call = engine_call(name, threads)
                    t0 = time.perf_counter()
                    result = call()
                    first[(name, threads)] = time.perf_counter() - t0
                    err = np.linalg.norm(result - ref) / np.linalg.norm(ref)
                    if not err < 1e3 * np.finfo(dtype).eps:
                        raise SystemExit(f"{name} t={threads} disagrees with scipy: {err:.2e}")
                for name, threads in engines:
                    funcs[f"audiokit {name}"] = engine_call(name, threads)
                med = _median_times(funcs, repeats)
                flop = args.frames * 2.5 * n_fft * math.log2(n_fft)
                for label, t in med.items():
                    print(
                        f"{op:5} {n_fft:5d} {dtype:7} {label:22} {t * 1e3:9.3f} "
                        f"{args.frames / t:10.0f} {flop / t / 1e9:7.2f} "
                        f"{med['scipy.fft (workers=1)'] / t:7.2f} {med['numpy.fft'] / t:7.2f} "
                        f"{_peak_mb(funcs[label]):7.1f}"
                    )
                print()
                if have_fftw:
                    notes.append(
                        f"{op} {n_fft} {dtype}: first call (planning or wisdom) "
                        + ", ".join(f"{k[0]} t={k[1]} {v * 1e3:.1f} ms" for k, v in first.items())
                    )
                    extra = [t for t in args.threads if t != 1]
                    if extra:
                        tf = {f"t={t}": engine_call("fftw", t) for t in [1] + extra}
                        tm = _sequential_blocks(tf, repeats)
                        thread_rows.append(
                            f"{op} {n_fft} {dtype}: fftw t=1 {tm['t=1'] * 1e3:.3f} ms; "
                            + "; ".join(
                                f"t={t} {tm[f't={t}'] * 1e3:.3f} ms (speed {tm['t=1'] / tm[f't={t}']:.2f}x of t=1)" for t in extra
                            )
                        )
    print("\n".join(notes))
    if thread_rows:
        print(f"\n# FFTW threads (sequential blocks, load avg now {os.getloadavg()[0]:.2f})")
        print("\n".join(thread_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

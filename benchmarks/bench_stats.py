"""Benchmark: ``audiokit stats`` against ``sox FILE -n stats`` on the same file, CPU-seconds and peak memory.

Run ``python benchmarks/bench_stats.py`` (1 h of 16 kHz mono PCM_16: Gaussian noise at -20 dBFS RMS, and a steady
997 Hz sine at -6 dBFS, 3 runs each, alternating: about 30 s of CPU) or ``--minutes 10`` for shorter files.  The
two signals are audiokit's two cases: noise lets the RMS peak/trough skip most samples by their segment bounds, a
steady level makes it evaluate every sample (:mod:`audiokit.dsp.stats`).  Each tool is a fresh process measured with
``os.wait4`` (``common.run_wait4``): CPU = user + system seconds, the median of the runs; the target is audiokit
within 3x of SoX's CPU time (issue 21).  ``audiokit stats`` includes its start-up (Python, numpy: ~0.3 s); ``audiokit info`` on the same
file is the floor under any audiokit command that reads it (start-up, block reads, one level pass).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import fmt_mib, limit_threads, machine_line, print_table, run_wait4, temp_dir  # noqa: E402

limit_threads(1)  # before numpy: the audiokit child inherits the one-thread environment too

import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402

SR = 16000


def _write(path: Path, minutes: float, kind: str) -> None:
    """``minutes`` of ``kind`` (``noise``: Gaussian at -20 dBFS RMS; ``sine``: 997 Hz at -6 dBFS), PCM_16, written in
    1-minute pieces (bounded memory)."""
    rng = np.random.default_rng(0)
    with sf.SoundFile(path, "w", SR, 1, subtype="PCM_16") as out:
        done, total = 0, int(minutes * 60 * SR)
        while done < total:
            n = min(total - done, 60 * SR)
            t = (done + np.arange(n)) / SR
            out.write(np.clip(0.1 * rng.standard_normal(n), -1, 1) if kind == "noise" else 0.5 * np.sin(2 * np.pi * 997 * t))
            done += n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="length of the test file (default 60)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sox = shutil.which("sox")
    if sox is None:
        print("sox is not installed", file=sys.stderr)
        return 1
    print(machine_line())
    worst = 0.0
    for kind in ("noise", "sine"):
        with temp_dir() as tmp:
            path = tmp / f"{kind}.wav"
            _write(path, args.minutes, kind)
            commands = {
                "sox stats": [sox, path, "-n", "stats"],
                "audiokit stats": [sys.executable, "-m", "audiokit", "stats", path],
                # the floor under any audiokit reading command: start-up + reading the blocks + peak/RMS/DC
                "audiokit info": [sys.executable, "-m", "audiokit", "info", path],
            }
            runs: dict[str, list] = {name: [] for name in commands}
            for i in range(args.repeats):
                for name in list(commands) if i % 2 == 0 else list(commands)[::-1]:
                    done = run_wait4(commands[name])
                    if done.returncode != 0:
                        print(f"{name} failed: {done.stderr}", file=sys.stderr)
                        return 1
                    runs[name].append(done)
        cpu = {name: statistics.median(r.cpu for r in rs) for name, rs in runs.items()}
        audio_s = args.minutes * 60
        rows = [
            [name, f"{cpu[name]:.2f}", f"{audio_s / cpu[name]:,.0f}x", fmt_mib(max(r.rss_mib for r in rs))]
            for name, rs in runs.items()
        ]
        title = f"{args.minutes:g} min, {SR} Hz mono, {kind}"
        print_table(["tool", "CPU s (median)", "real time / CPU", "peak RSS"], rows, title=title)
        ratio = cpu["audiokit stats"] / cpu["sox stats"]
        worst = max(worst, ratio)
        print(f"{kind}: audiokit / sox CPU = {ratio:.2f}x")
    print(f"worst audiokit / sox CPU: {worst:.2f}x (target <= 3x: {'met' if worst <= 3 else 'missed'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: ``audiokit spectrum`` on many short channels (issue 20: 128 channels x 535 samples, 61.6 s before).

Run ``python benchmarks/bench_spectrum.py`` (5 rounds) or ``--rounds N``.  The input is generated into a temporary
folder: 128 channels x 535 samples at 48 kHz, PCM_16, a different tone per channel plus a little noise, one channel
in four pure noise (many candidate peaks; ``--noise`` makes every channel noise).  Each round runs, alternating:

* ``audiokit spectrum F --json`` (the default 5 peaks per channel, kernel fits);
* ``audiokit spectrum F --json --peaks 0``: read, DFT and report without the fits (the floor of the command);
* a numpy script: ``soundfile.read``, a periodic Hann window, ``np.fft.rfft`` of every channel and its 5 largest
  bins (no interpolation, no model subtraction: far less work; the cost of start-up, read and DFT in plain numpy).

Every process is timed as a whole (``os.wait4``: wall, CPU-seconds = user + sys, peak RSS); the table gives medians,
min - max of the wall time, and each row's ratio to the full command's median (> 1: the row is slower).  The fits'
share is the difference between the first two rows.  Never a timing assertion.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import fmt_ratio, machine_line, print_table, run_wait4, temp_dir  # noqa: E402

SR = 48000
N = 535
CHANNELS = 128

_NUMPY_SCRIPT = (
    "import sys, json, numpy as np, soundfile as sf\n"
    "x, sr = sf.read(sys.argv[1], dtype='float64', always_2d=True)\n"
    "n = x.shape[0]; w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)\n"
    "amp = np.abs(np.fft.rfft(x * w[:, None], axis=0)) * 2 / w.sum()\n"
    "top = np.argsort(-amp, axis=0, kind='stable')[:5]\n"
    "print(json.dumps([[float(k * sr / n) for k in col] for col in top.T]))\n"
)


def write_input(path: Path, *, noise: bool) -> None:
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(3)
    t = np.arange(N) / SR
    x = 0.5 * np.sin(2 * np.pi * np.outer(t, 100.0 + 37.3 * np.arange(CHANNELS))) + 0.01 * rng.standard_normal((N, CHANNELS))
    x[:, 1::4] = 0.1 * rng.standard_normal((N, x[:, 1::4].shape[1]))
    if noise:
        x = 0.3 * rng.standard_normal((N, CHANNELS))
    sf.write(path, np.clip(x, -1, 1).astype(np.float32), SR, subtype="PCM_16")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--noise", action="store_true", help="every channel noise (the most candidate peaks)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    audiokit = str(Path(sys.executable).with_name("audiokit"))
    print(machine_line())
    with temp_dir(keep=args.keep) as tmp:
        path = tmp / "wide.wav"
        write_input(path, noise=args.noise)
        rows = {
            "audiokit spectrum F --json (5 peaks/channel)": [audiokit, "spectrum", str(path), "--json"],
            "audiokit spectrum F --json --peaks 0": [audiokit, "spectrum", str(path), "--json", "--peaks", "0"],
            "numpy: rfft + 5 largest bins": [sys.executable, "-c", _NUMPY_SCRIPT, str(path)],
        }
        runs: dict[str, list] = {name: [] for name in rows}
        for r in range(args.rounds):
            order = list(rows) if r % 2 == 0 else list(reversed(rows))
            for name in order:
                done = run_wait4(rows[name])
                if done.returncode != 0:
                    raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr}")
                runs[name].append(done)
    full = statistics.median(w.wall for w in runs[next(iter(rows))])
    table = []
    for name, waited in runs.items():
        walls = [w.wall for w in waited]
        wall = statistics.median(walls)
        table.append(
            [
                name,
                f"{wall:.2f}",
                f"{min(walls):.2f} - {max(walls):.2f}",
                f"{statistics.median(w.cpu for w in waited):.2f}",
                f"{max(w.rss_mib for w in waited):.0f}",
                fmt_ratio(wall / full),
            ]
        )
    kind = "noise" if args.noise else "tones + noise"
    print_table(
        ["command", "wall s (median)", "wall min - max", "CPU s (median)", "peak RSS MiB", "wall / full command"],
        table,
        title=f"spectrum, {CHANNELS} channels x {N} samples ({kind}), {args.rounds} rounds",
    )


if __name__ == "__main__":
    main()

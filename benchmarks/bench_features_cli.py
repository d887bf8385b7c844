"""Benchmark: the feature commands through the CLI on a long file -- wall time and peak RSS (flat memory).

Run ``python benchmarks/bench_features_cli.py`` (4 hours of 16 kHz 16-bit mono, written block by block into a
temporary folder: 461 MB; ``--hours 1`` for less).  Each command runs as a subprocess under GNU time
(``/usr/bin/time -f %M``: the peak resident set of the process), ``--repeats`` times, one thread
(``AUDIOKIT_FFT_THREADS=1``, ``OMP_NUM_THREADS=1``).  Target (issue 11): peak RSS <= 300 MiB for a 4 h file
through ``audiokit mfcc --compat kaldi --npy``.

Commands: ``mfcc --compat kaldi``, with ``--deltas 2 --cmvn sliding`` and ``--cmvn utterance`` (second pass over the
``.npy``), ``mel --compat kaldi`` (fbank), ``mfcc --compat librosa`` (two passes: the top_db peak first), ``mfcc``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CmdResult, machine_line, run_measured, temp_dir  # noqa: E402

COMMANDS = [
    ("mfcc --compat kaldi", ["mfcc", "--compat", "kaldi"]),
    ("mfcc --compat kaldi --deltas 2 --cmvn sliding", ["mfcc", "--compat", "kaldi", "--deltas", "2", "--cmvn", "sliding"]),
    ("mfcc --compat kaldi --deltas 2 --cmvn utterance", ["mfcc", "--compat", "kaldi", "--deltas", "2", "--cmvn", "utterance"]),
    ("mel --compat kaldi (fbank)", ["mel", "--compat", "kaldi"]),
    ("mfcc --compat librosa", ["mfcc", "--compat", "librosa"]),
    ("mfcc (audiokit defaults)", ["mfcc"]),
]


def write_long_wav(path: Path, hours: float, sr: int = 16000) -> None:
    """Speech-like test input, written a minute at a time (the generator's memory stays small)."""
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(0)
    total, block = int(hours * 3600 * sr), 60 * sr
    t = np.arange(block) / sr
    with sf.SoundFile(path, "w", samplerate=sr, channels=1, subtype="PCM_16") as f:
        done = 0
        while done < total:
            n = min(block, total - done)
            tone = 0.3 * np.sin(2 * np.pi * (200 + 50 * np.sin(2 * np.pi * 0.5 * t[:n])) * t[:n])
            f.write((tone + 0.05 * rng.standard_normal(n)).astype(np.float32))
            done += n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args(argv)
    env = dict(os.environ, AUDIOKIT_FFT_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    print(machine_line({"input": f"{args.hours:g} h, 16 kHz, PCM_16 mono"}))
    with temp_dir(keep=args.keep) as tmp:
        wav = tmp / "long.wav"
        write_long_wav(wav, args.hours)
        print("| command | median wall (s) | peak RSS (MiB) | .npy (MB) |\n|---|---|---|---|")
        worst = 0.0
        for label, cmd in COMMANDS:
            res = CmdResult(label)
            npy = tmp / "out.npy"
            for _ in range(args.repeats):
                res.runs.append(
                    run_measured([sys.executable, "-m", "audiokit", *cmd, str(wav), "--npy", str(npy), "--quiet"], env=env)
                )
            if res.failed:
                print(f"| {label} | failed: {res.failed[0].stderr.strip()[-200:]} | | |")
                continue
            rss = res.peak_rss_mib or float("nan")
            worst = max(worst, rss) if label.startswith("mfcc --compat kaldi") else worst
            print(f"| `audiokit {label} --npy` | {res.median:.1f} | {rss:.0f} | {npy.stat().st_size / 1e6:.0f} |")
        print(f"\ntarget: peak RSS <= 300 MiB for mfcc --compat kaldi: {'met' if worst <= 300 else 'NOT met'} ({worst:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

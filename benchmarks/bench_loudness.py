"""EBU R128 loudness meters on the same generated files: audiokit vs ffmpeg's ``ebur128`` filter, libebur128
(``pyebur128``) and pyloudnorm, in CPU-seconds (medians of the repeats, contenders alternated round by round).

    python benchmarks/bench_loudness.py                   # 1 h 48 kHz stereo and 1 h 16 kHz mono, 3 repeats
    python benchmarks/bench_loudness.py --minutes 10 --repeats 1
    python benchmarks/bench_loudness.py --rss-hours 4     # also audiokit's peak RSS on a 4 h 48 kHz stereo file

Modes: "I+M/S+LRA" (audiokit ``--no-true-peak``, ffmpeg ``ebur128``, pyebur128 modes I|S|LRA) and "+ true peak"
(audiokit default, ffmpeg ``ebur128=peak=true``, pyebur128 + TRUE_PEAK).  pyloudnorm measures the integrated
loudness only, of the whole file in memory.  Every contender reads the WAV itself (each process's CPU time, from
``os.wait4``, start-up included).  The input is ``common.write_test_wav``'s: tilted noise and three steady tones, PCM_16
-- near its peak everywhere, the costly case for audiokit's true peak (which skips only the chunks that cannot raise
the peak).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import fmt_mib, machine_line, print_table, run_wait4, temp_dir, write_test_wav  # noqa: E402

PYEBUR128 = """
import sys, numpy as np, soundfile as sf, pyebur128
path, peak = sys.argv[1], sys.argv[2] == "1"
m = pyebur128.MeasurementMode
mode = m.MODE_I | m.MODE_S | m.MODE_LRA | (m.MODE_TRUE_PEAK if peak else 0)
with sf.SoundFile(path) as f:
    state = pyebur128.R128State(f.channels, f.samplerate, mode)
    for block in f.blocks(65536, dtype="float32", always_2d=True):
        state.add_frames(np.ascontiguousarray(block).ravel(), block.shape[0])
print(pyebur128.get_loudness_global(state), pyebur128.get_loudness_range(state))
"""
PYLOUDNORM = """
import sys, soundfile as sf, pyloudnorm
x, sr = sf.read(sys.argv[1])
print(pyloudnorm.Meter(sr).integrated_loudness(x))
"""


def contenders(path: Path, peak: bool, with_pyloudnorm: bool) -> dict[str, list[str]]:
    py = sys.executable
    out = {
        "audiokit": [py, "-m", "audiokit", "loudness", str(path), "--json"] + ([] if peak else ["--no-true-peak"]),
        "ffmpeg ebur128" + ("=peak=true" if peak else ""): [
            "ffmpeg",
            "-nostats",
            "-hide_banner",
            "-i",
            str(path),
            "-af",
            "ebur128=peak=true" if peak else "ebur128",
            "-f",
            "null",
            "-",
        ],
        "pyebur128": [py, "-c", PYEBUR128, str(path), "1" if peak else "0"],
    }
    if with_pyloudnorm and not peak:
        out["pyloudnorm (I only)"] = [py, "-c", PYLOUDNORM, str(path)]
    if shutil.which("ffmpeg") is None:
        out = {k: v for k, v in out.items() if not k.startswith("ffmpeg")}
    return out


def measure(commands: dict[str, list[str]], repeats: int) -> dict[str, list[float]]:
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for i in range(repeats):
        for name in names if i % 2 == 0 else names[::-1]:
            run = run_wait4(commands[name])
            if run.returncode != 0 or run.cpu is None:
                print(f"# {name} failed ({run.returncode}): {run.stderr[-400:]}", file=sys.stderr)
                continue
            cpu[name].append(run.cpu)
        print(f"#   round {i + 1}/{repeats} done", file=sys.stderr)
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rss-hours", type=float, default=0.0, help="also audiokit's peak RSS on a file this long")
    parser.add_argument("--no-pyloudnorm", action="store_true", help="skip pyloudnorm (it holds the whole file)")
    parser.add_argument("--only", choices=["stereo48", "mono16", "none"], help="one of the two files (none: --rss-hours alone)")
    args = parser.parse_args()
    print(f"# {machine_line()}")
    with temp_dir("audiokit-bench-loudness-") as tmp:
        files = {"stereo48": (48000, 2), "mono16": (16000, 1)}
        for key, (sr, channels) in files.items():
            if args.only is not None and key != args.only:
                continue
            path = write_test_wav(tmp / f"in-{sr}-{channels}.wav", args.minutes * 60, sr, channels=channels)
            label = f"{args.minutes:g} min, {sr / 1000:g} kHz, {'stereo' if channels == 2 else 'mono'}"
            rows = []
            for peak in (False, True):
                cpu = measure(contenders(path, peak, not args.no_pyloudnorm), args.repeats)
                med = {name: statistics.median(v) for name, v in cpu.items() if v}
                ours = med.get("audiokit")
                for name, value in med.items():
                    ratio = "" if ours is None or name == "audiokit" else f"{value / ours:.2f}x"
                    rt = args.minutes * 60 / value
                    rows.append(["+ true peak" if peak else "I+M/S+LRA", name, f"{value:.2f}", f"{rt:.0f}x", ratio])
            print_table(["mode", "meter", "CPU-s (median)", "real time", "its CPU / audiokit's"], rows, title=f"{label}, PCM_16")
            path.unlink()
        if args.rss_hours:
            path = write_test_wav(tmp / "long.wav", args.rss_hours * 3600, 48000, channels=2)
            run = run_wait4([sys.executable, "-m", "audiokit", "loudness", str(path), "--json"])
            print(
                f"\naudiokit loudness, {args.rss_hours:g} h 48 kHz stereo PCM_16: peak RSS {fmt_mib(run.rss_mib)}, "
                f"CPU {run.cpu:.1f} s, exit {run.returncode}"
            )


if __name__ == "__main__":
    main()

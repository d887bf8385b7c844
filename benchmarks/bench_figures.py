"""Benchmark: drawing speed of the spectrogram PNG (issue 23), whole processes and what stands between us and SoX.

Run ``python benchmarks/bench_figures.py`` (``--repeats N``, default 7; ``--keep`` keeps the inputs).  Inputs are
generated into a temporary folder: a 10-minute 44.1 kHz mono PCM_16 WAV and a 12 s 16 kHz one (the test signal of
``common.py``: tilted noise plus tones).  audiokit runs from a byte-compiled copy of the package (as a wheel
install has it; see ``bench_cli.compiled_copy``).

Rows (medians of the repeats, min - max, CPU seconds of the process and its children, peak RSS; the commands
alternate round by round, so the machine's load is shared by numerator and denominator):

1. The 10-minute PNG (``--nfft 2048 --win 2048 --hop 512``, 1200x600): audiokit as shipped (two frame ranges on
   two threads), audiokit in one pass (a launcher that sets the split threshold out of reach), ``sox F -n
   spectrogram -o x.png`` (800x257 of averaged DFTs; the target is wall <= 1.5x SoX).
2. The 12 s PNG against ``python -c "import numpy, soundfile"`` (target <= 2.5x).
3. The breakdown of the one-pass job, in-process CPU seconds (``time.process_time``, medians): CLI start-up and
   one small figure (``audiokit spectrogram`` of a 0.1 s file minus ``python -c pass``), reading the file in blocks
   (int16 -> float32), the STFT front end (FFT, window, |X|^2), the display pooling, the PNG (dB, pixel pooling,
   text, zlib).  These are what a 1.0x would have to shrink: SoX computes one DFT per pixel column (800 of them),
   audiokit all 51 677 frames, max-pooled (a click between two of SoX's columns is lost; here it stays).

Targets are printed as met / MISSED, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine_line, print_table, run_wait4, target_status, temp_dir, write_test_wav  # noqa: E402

SPECTROGRAM = ["--nfft", "2048", "--win", "2048", "--hop", "512"]

#: A helper that runs the CLI in one pass (the frame-range split disabled), for the "one pass" row.
ONE_PASS = (
    "import sys\n"
    "import audiokit.pipelines.timefreq_split as split\n"
    "split.SPLIT_MIN_FRAMES = 1 << 62\n"
    "from audiokit.cli.app import run\n"
    "sys.exit(run())\n"
)


def compiled_copy(tmp: Path) -> tuple[list[str], list[str]]:
    """Launchers (as shipped, and in one pass) of a byte-compiled copy of the package, as a wheel install has it.

    Each launcher sits beside the copy, so the copy is first on ``sys.path`` whatever the working folder.
    """
    import compileall

    import audiokit

    site = tmp / "site"
    shutil.copytree(Path(audiokit.__file__).parent, site / "audiokit", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(str(site), quiet=1)
    shipped = site / "audiokit_cli.py"
    shipped.write_text("import sys\nfrom audiokit.cli.app import run\nsys.exit(run())\n")
    one_pass = site / "audiokit_one_pass.py"
    one_pass.write_text(ONE_PASS)
    return [sys.executable, str(shipped)], [sys.executable, str(one_pass)]


def alternate(commands: dict[str, list[str]], repeats: int, env: dict[str, str]) -> dict[str, list]:
    """Each command ``repeats`` times (after one warm-up each), alternating; the :class:`common.Waited` runs."""
    for argv in commands.values():
        subprocess.run(argv, env=env, capture_output=True, check=False)
    runs: dict[str, list] = {name: [] for name in commands}
    names = list(commands)
    for i in range(repeats):
        for name in names if i % 2 == 0 else names[::-1]:
            done = run_wait4(commands[name], env=env)
            if done.returncode != 0:
                print(f"# {name} exited {done.returncode}: {done.stderr.strip()[-400:]}", file=sys.stderr)
            runs[name].append(done)
    return runs


def row(name: str, runs: list, base: list | None) -> list[str]:
    wall = [r.wall for r in runs]
    cpu = [r.cpu for r in runs if r.cpu is not None]
    ratio = "" if base is None else f"{statistics.median(wall) / statistics.median([r.wall for r in base]):.2f}x"
    cpu_ratio = "" if base is None else f"{statistics.median(cpu) / statistics.median([r.cpu for r in base]):.2f}x"
    rss = max((r.rss_mib for r in runs if r.rss_mib is not None), default=None)
    return [
        name,
        f"{statistics.median(wall):.3f} ({min(wall):.3f} - {max(wall):.3f})",
        ratio,
        f"{statistics.median(cpu):.3f}" if cpu else "-",
        cpu_ratio,
        f"{rss:.0f}" if rss is not None else "-",
    ]


def breakdown(path: Path, repeats: int) -> list[list[str]]:
    """In-process CPU seconds of the one-pass job's stages on ``path`` (medians)."""
    from audiokit.dsp.scaling import to_db
    from audiokit.io.reader import BLOCK_SAMPLES
    from audiokit.pipelines.params import InputOptions
    from audiokit.pipelines.stft_frontend import StftFrontEnd
    from audiokit.pipelines.timefreq import StftOptions, TimeFreqOptions
    from audiokit.plot import ColumnPooler
    from audiokit.plot.picture import TimeFreqPicture
    from audiokit.plot.raster import spectrogram_png

    parsed = TimeFreqOptions(stft=StftOptions(win="2048", hop="512", nfft="2048")).check()
    stages: dict[str, list[float]] = {
        "read (blocks, int16 -> float32)": [],
        "STFT front end": [],
        "display pooling": [],
        "PNG": [],
    }
    for _ in range(repeats):
        with InputOptions().open(str(path)) as source:
            t = time.process_time()
            blocks = list(source.blocks(BLOCK_SAMPLES, dtype="float32"))
            stages["read (blocks, int16 -> float32)"].append(time.process_time() - t)
            front = StftFrontEnd(parsed, source, "float32")
            front.start()
            t = time.process_time()
            chunks = [front.push(b) for b in blocks] + [front.finish()]
            stages["STFT front end"].append(time.process_time() - t)
            pooler = ColumnPooler(front.rows, front.n_frames, 1200)
            t = time.process_time()
            for chunk in chunks:
                if chunk.shape[-1]:
                    pooler.add(chunk[0])
            stages["display pooling"].append(time.process_time() - t)
            del blocks, chunks
            t = time.process_time()
            db = to_db(pooler.image[None], kind="power", ref="max", top_db=80.0)
            picture = TimeFreqPicture(t_start=0.0, t_end=600.0, f_low=0.0, f_high=22050.0, title=f"{path.name} — spectrogram")
            spectrogram_png(db, picture)
            stages["PNG"].append(time.process_time() - t)
    return [[name, f"{statistics.median(v):.3f}", f"{min(v):.3f} - {max(v):.3f}"] for name, v in stages.items()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    print(machine_line())
    sox = shutil.which("sox")
    with temp_dir(keep=args.keep) as tmp:
        long_wav = write_test_wav(tmp / "long.wav", 600.0, 44100)
        short_wav = write_test_wav(tmp / "short.wav", 12.0, 16000)
        tiny_wav = write_test_wav(tmp / "tiny.wav", 0.1, 16000)
        ak, one_pass = compiled_copy(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        png = str(tmp / "out.png")
        commands = {
            "audiokit spectrogram (2 ranges)": [*ak, "spectrogram", str(long_wav), *SPECTROGRAM, "-o", png, "-q"],
            "audiokit spectrogram (one pass)": [
                *one_pass,
                "spectrogram",
                str(long_wav),
                *SPECTROGRAM,
                "-o",
                png,
                "-q",
            ],
        }
        if sox:
            commands["sox spectrogram"] = [sox, str(long_wav), "-n", "spectrogram", "-o", str(tmp / "sox.png")]
        runs = alternate(commands, args.repeats, env)
        base = runs.get("sox spectrogram")
        headers = ["command", "wall s median (min - max)", "wall / sox", "CPU s", "CPU / sox", "peak MiB"]
        print_table(headers, [row(n, r, base) for n, r in runs.items()], title="10 min 44.1 kHz spectrogram PNG, 1200x600")
        if base:
            ratio = statistics.median([r.wall for r in runs["audiokit spectrogram (2 ranges)"]]) / statistics.median(
                [r.wall for r in base]
            )
            print(f"target wall <= 1.5x sox: {ratio:.2f}x {target_status(ratio, 1.5, higher_is_better=False)}")
        small = {
            "audiokit spectrogram 12 s PNG": [*ak, "spectrogram", str(short_wav), "-o", str(tmp / "s.png"), "-q"],
            "python -c 'import numpy, soundfile'": [sys.executable, "-c", "import numpy, soundfile"],
            "audiokit spectrogram 0.1 s PNG": [*ak, "spectrogram", str(tiny_wav), "-o", str(tmp / "t.png"), "-q"],
            "python -c pass": [sys.executable, "-c", "pass"],
        }
        runs = alternate(small, args.repeats, env)
        base = runs["python -c 'import numpy, soundfile'"]
        headers[2], headers[4] = "wall / numpy+sf", "CPU / numpy+sf"
        print_table(headers, [row(n, r, base) for n, r in runs.items()], title="12 s 16 kHz PNG and start-up")
        ratio = statistics.median([r.wall for r in runs["audiokit spectrogram 12 s PNG"]]) / statistics.median(
            [r.wall for r in base]
        )
        print(
            f"target 12 s PNG <= 2.5x import numpy, soundfile: {ratio:.2f}x {target_status(ratio, 2.5, higher_is_better=False)}"
        )
        startup = statistics.median([r.cpu for r in runs["audiokit spectrogram 0.1 s PNG"]]) - statistics.median(
            [r.cpu for r in runs["python -c pass"]]
        )
        rows = [["start-up + one small PNG beyond the interpreter (0.1 s file)", f"{startup:.3f}", ""], *breakdown(long_wav, 3)]
        print_table(
            ["stage (one pass, in-process)", "CPU s median", "min - max"], rows, title="what stands between 1.5x and 1.0x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

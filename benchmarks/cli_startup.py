"""Whole-process start-up of short ``audiokit`` commands against ``python -c "import numpy, soundfile"``.

Run ``python benchmarks/cli_startup.py`` (or ``python benchmarks/bench_cli.py --only commands``); ``--against REV``
also runs a byte-compiled copy of the package at git revision ``REV`` (``git archive``) in the same alternating
rounds, so before/after ratios share the machine's load; ``--now REV`` times a revision instead of the working tree.

Every command runs on generated input (a 12 s 16 kHz mono PCM_16 WAV; a folder of two 1 s files for batch):
``--version``, ``--help``, ``info --json``, ``spectrum --json``, ``pitch --json``, ``spectrogram -o PNG``,
``mel --npy``, ``waveform -o PNG``, ``stats``, ``loudness``, ``batch info`` over the folder, and the same batch
resumed with nothing left to do (what audiokit has instead of a dry run: it reads the manifest, checks the inputs,
runs nothing).  Each audiokit is a byte-compiled copy of the package (as a wheel installs it: an editable tree run
with ``PYTHONDONTWRITEBYTECODE=1`` compiles every module again in every process), started by a launcher script.

For each command: the median wall time (and min - max) over ``--repeats`` rounds (default 7, commands alternating,
order reversed every other round), the median CPU seconds of the child (user + system, from the difference of
``resource.getrusage(RUSAGE_CHILDREN)`` around it: this script runs one child at a time), both as ratios to the
baseline's medians of the same rounds, and the heavy modules the command imports (one extra
``python -X importtime`` run).  Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import fmt_s, machine_line, print_table, temp_dir, versions, write_test_wav  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BASELINE = "numpy+soundfile"
#: Modules whose import a short command would rather avoid (shown when a command imports them).
HEAVY = (
    "typer",
    "rich",
    "rich.table",
    "rich.progress",
    "scipy",
    "scipy.fft",
    "scipy.special",
    "scipy.signal",
    "matplotlib",
    "PIL",
    "soxr",
    "pyfftw",
    "pydantic",
    "multiprocessing",
    "sqlite3",
)


def compiled_copy(tmp: Path, name: str, revision: str | None = None) -> list[str]:
    """A launcher of a byte-compiled copy of the audiokit package: the imported one, or ``revision``'s (git)."""
    site = tmp / name
    if revision is None:
        import audiokit

        shutil.copytree(Path(audiokit.__file__).parent, site / "audiokit", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        site.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "audiokit"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(site)], input=archive.stdout, check=True)
    compileall.compile_dir(str(site), quiet=1)
    launcher = site / "audiokit-cli"
    launcher.write_text(f"#!{sys.executable}\nimport sys\nfrom audiokit.cli.app import run\nsys.exit(run())\n")
    launcher.chmod(0o755)
    return [str(launcher)]


def commands(ak: list[str], utt: Path, folder: Path, fresh: Callable[[str], str]) -> dict[str, Callable[[], list[str]]]:
    """The start-up rows' argvs (callables: fresh output names every run); ``batch`` resumes its own first output."""
    done = fresh("")
    return {
        "--version": lambda: ak + ["--version"],
        "--help": lambda: ak + ["--help"],
        "info --json": lambda: ak + ["info", str(utt), "--json"],
        "spectrum --json": lambda: ak + ["spectrum", str(utt), "--json"],
        "pitch --json": lambda: ak + ["pitch", str(utt), "--json"],
        "spectrogram -o PNG": lambda: ak + ["spectrogram", str(utt), "-o", fresh(".png"), "-q"],
        "mel --npy": lambda: ak + ["mel", str(utt), "--npy", fresh(".npy"), "-q"],
        "waveform -o PNG": lambda: ak + ["waveform", str(utt), "-o", fresh(".png"), "-q"],
        "stats": lambda: ak + ["stats", str(utt)],
        "loudness": lambda: ak + ["loudness", str(utt)],
        "batch info (2 files)": lambda: ak + ["batch", "info", str(folder), "--out", fresh(""), "-j", "1", "-q"],
        "batch info (resumed: nothing to do)": lambda: ak + ["batch", "info", str(folder), "--out", done, "-j", "1", "-q"],
    }


def measure(argv: Sequence[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) of the child, exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        print(f"# {' '.join(map(str, argv))} exited {proc.returncode}: {proc.stderr.decode()[-500:]}", file=sys.stderr)
    return wall, cpu, proc.returncode


def imported(argv: Sequence[str], cwd: Path) -> list[str]:
    """Which of :data:`HEAVY` ``python -X importtime ARGV`` imports (``argv[0]`` a launcher script)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, capture_output=True, text=True)
    names = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", proc.stderr, re.MULTILINE))
    return [name for name in HEAVY if name in names]


def run(repeats: int, against: str | None, tmp: Path, now: str | None = None) -> None:
    """Print the start-up table (and, with ``against``, the before/after one); ``now``: a git revision instead of the
    imported package (the working tree, other uncommitted work included)."""
    counter = itertools.count()

    def fresh(suffix: str) -> str:
        return str(tmp / f"out{next(counter)}{suffix}")

    utt = write_test_wav(tmp / "utt12s.wav", 12.0, 16000)
    folder = tmp / "corpus"
    folder.mkdir()
    for name in ("a", "b"):
        write_test_wav(folder / f"{name}.wav", 1.0, 16000, seed=ord(name))
    copies = {"now": compiled_copy(tmp, "site-now", now)}
    if against:
        copies[against] = compiled_copy(tmp, "site-before", against)
    rows: dict[str, dict[str, Callable[[], list[str]]]] = {k: commands(ak, utt, folder, fresh) for k, ak in copies.items()}
    baseline = [sys.executable, "-c", "import numpy, soundfile"]
    for ak in copies.values():  # first runs (and the resumed batch's finished store) before timing
        for make in commands(ak, utt, folder, fresh).values():
            measure(make(), tmp)
    for rowset in rows.values():
        measure(rowset["batch info (resumed: nothing to do)"](), tmp)
    names = list(rows["now"])
    order = [("baseline", "")] + [(copy, name) for name in names for copy in copies]
    times: dict[tuple[str, str], list[tuple[float, float, int]]] = {key: [] for key in order}
    load_start = os.getloadavg()[0]
    for i in range(repeats):
        for copy, name in order if i % 2 == 0 else order[::-1]:
            argv = baseline if copy == "baseline" else rows[copy][name]()
            times[(copy, name)].append(measure(argv, tmp))
        print(f"#   start-up: round {i + 1}/{repeats} done", file=sys.stderr)
    load_end = os.getloadavg()[0]

    def med(key: tuple[str, str], what: int) -> float:
        return statistics.median(t[what] for t in times[key])

    base_wall, base_cpu = med(("baseline", ""), 0), med(("baseline", ""), 1)
    spread = lambda key: f"{fmt_s(min(t[0] for t in times[key]))} - {fmt_s(max(t[0] for t in times[key]))}"  # noqa: E731
    table = [
        [
            "python -c 'import numpy, soundfile'",
            fmt_s(base_wall),
            spread(("baseline", "")),
            f"{base_cpu:.3f}",
            "1.00x",
            "1.00x",
            "",
        ]
    ]
    for name in names:
        key = ("now", name)
        failed = " (FAILED)" if any(t[2] for t in times[key]) else ""
        table.append(
            [
                f"audiokit {name}{failed}",
                fmt_s(med(key, 0)),
                spread(key),
                f"{med(key, 1):.3f}",
                f"{med(key, 0) / base_wall:.2f}x",
                f"{med(key, 1) / base_cpu:.2f}x",
                ", ".join(imported(rows["now"][name](), tmp)) or "-",
            ]
        )
    title = (
        f"start-up: {repeats} alternating rounds, medians; load avg (1 min) {load_start:.2f} at the start, "
        f"{load_end:.2f} at the end, {os.cpu_count()} cores; 12 s 16 kHz mono input; audiokit "
        + (f"at {now}" if now else "as imported (the working tree)")
    )
    print_table(["command", "wall", "min - max", "CPU-s", "wall / baseline", "CPU / baseline", "imports"], table, title=title)
    if against:
        pairs = []
        for name in names:
            new, old = ("now", name), (against, name)
            pairs.append(
                [
                    f"audiokit {name}",
                    f"{fmt_s(med(old, 0))} / {med(old, 1):.3f}",
                    f"{fmt_s(med(new, 0))} / {med(new, 1):.3f}",
                    f"{med(new, 0) / med(old, 0):.2f}x",
                    f"{med(new, 1) / med(old, 1):.2f}x",
                    f"{med(old, 0) / base_wall:.2f}x -> {med(new, 0) / base_wall:.2f}x",
                ]
            )
        print_table(
            ["command", f"{against}: wall / CPU-s", "now: wall / CPU-s", "wall now/before", "CPU now/before", "wall / baseline"],
            pairs,
            title=f"before ({against}) and now, the same rounds",
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7, help="alternating rounds (default 7)")
    ap.add_argument("--against", metavar="REV", help="also time the package at this git revision, in the same rounds")
    ap.add_argument("--now", metavar="REV", help="time the package at this git revision instead of the working tree")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (prints its path)")
    args = ap.parse_args(argv)
    print("# " + machine_line({"threads": "as found (no limits)"}))
    print("# " + ", ".join(f"{k} {v}" for k, v in versions("numpy", "soundfile", "typer", "audiokit").items()))
    with temp_dir(keep=args.keep) as tmp:
        run(args.repeats, args.against, tmp, args.now)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

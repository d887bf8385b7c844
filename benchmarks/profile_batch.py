"""Where ``audiokit batch mel --jobs 1`` spends its CPU time: cProfile of whole runs, grouped by kind of work.

::

    python benchmarks/profile_batch.py --cache /tmp/akbench                   # shards + npy, log-mel, 1500 utterances
    python benchmarks/profile_batch.py --cache /tmp/akbench --feature fbank --store shards npy kaldi

For each store: one run without the profiler (its CPU seconds, as in ``bench_batch.py``), then the same
``audiokit batch mel CORPUS --out OUT --store STORE --jobs 1`` under cProfile (``--timer wall``, the default:
``python -m cProfile``'s clock, so waiting for ``fsync`` or for a core counts; ``--timer cpu``:
``cProfile.Profile(time.process_time)``, which charges CPU time only but roughly doubles the cost of every call, so
call-heavy code looks larger) on the same corpus (:mod:`batch_corpus`, made or reused under ``--cache``; one thread).  Printed: the top ``--top`` entries by
cumulative and by own time, the own time of every function summed into groups (decode, STFT/FFT, mel, Kaldi
kernel, the chain, store writes, manifest/journal/index, plan/inputs/header reads, stat/path work, imports, CLI,
runner, other), and the call counts of the system calls behind the per-file bookkeeping.  A function of the
standard library, numpy or a builtin (``write``, ``open``, ``json.dumps``, ``ndarray.astype`` ...) is charged to
the group of whoever called it (split by its callers' shares, up the call graph to the first audiokit or library
function); ``stat``/``lstat``/``realpath``/path joins always count as stat/path work.  cProfile's own overhead
inflates code of many small Python calls (the bookkeeping) more than numpy-heavy code: compare the groups'
shares with that in mind, and the unprofiled CPU seconds for the totals.
"""

from __future__ import annotations

import argparse
import pstats
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from batch_corpus import corpus, measure, warm  # noqa: E402
from common import limit_threads, machine_line, print_table  # noqa: E402

limit_threads(1)

FEATURE_FLAGS = {"log-mel": [], "fbank": ["--compat", "kaldi", "--n-mels", "80"]}
Func = tuple[str, int, str]

#: ``python -c PROFILE cpu|wall OUT.prof ARGS...``: ``audiokit ARGS`` under cProfile, stats dumped however it exits.
PROFILE = """
import cProfile, runpy, sys, time
clock, out = sys.argv[1], sys.argv[2]
sys.argv = ["audiokit", *sys.argv[3:]]
profile = cProfile.Profile(time.process_time) if clock == "cpu" else cProfile.Profile()
profile.enable()
try:
    runpy.run_module("audiokit", run_name="__main__", alter_sys=True)
finally:
    profile.disable()
    profile.dump_stats(out)
"""

#: (group, substrings of the file path), first match wins.
FILE_GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("imports", ("<frozen importlib", "importlib/", "<frozen zipimport")),
    ("decode", ("audiokit/io/reader.py", "audiokit/io/flac.py", "audiokit/io/wavheader.py", "audiokit/io/signal.py")),
    ("decode", ("audiokit/io/raw.py", "audiokit/io/signature.py", "soundfile.py", "_soundfile", "soxr")),
    ("STFT/FFT", ("audiokit/dsp/stft/", "audiokit/engine/", "pyfftw", "scipy/fft", "numpy/fft", "audiokit/dsp/windows.py")),
    ("mel", ("audiokit/dsp/mel.py", "audiokit/dsp/sparse.py")),
    ("Kaldi kernel", ("audiokit/dsp/kaldi/",)),
    ("chain (log, features)", ("audiokit/pipelines/features.py", "audiokit/dsp/scaling.py", "audiokit/dsp/features.py")),
    ("store write", ("audiokit/io/npy.py", "audiokit/io/tar_shard.py", "audiokit/io/ark.py", "audiokit/io/parquet.py")),
    ("store write", ("audiokit/io/members.py", "audiokit/io/atomic.py", "audiokit/batch/stores/work.py", "pyarrow")),
    ("store write", ("audiokit/batch/stores/layout.py", "kaldiio")),
    ("manifest/journal/index", ("audiokit/batch/manifest.py", "audiokit/batch/stores/index.py", "sqlite3")),
    ("manifest/journal/index", ("audiokit/batch/stores/views.py", "audiokit/batch/stores/lhotse.py", "gzip.py")),
    ("plan/inputs/header reads", ("audiokit/batch/inputs.py", "audiokit/batch/stores/plan.py", "audiokit/batch/jobs.py")),
    ("plan/inputs/header reads", ("audiokit/batch/stores/session.py", "audiokit/batch/stores/description.py")),
    ("plan/inputs/header reads", ("audiokit/batch/stores/options.py",)),
    ("stat/path work", ("posixpath", "genericpath", "pathlib.py", "fnmatch", "<frozen os>")),
    ("pipeline glue", ("audiokit/pipelines/",)),
    ("runner", ("audiokit/batch/",)),
    ("CLI", ("audiokit/cli/", "typer/", "click/", "rich/", "audiokit/__main__.py")),
]
#: Builtins that are stat/path work wherever they are called from.
PATH_BUILTINS = ("posix.stat", "posix.lstat", "posix.fspath", "posix.scandir", "posix.listdir", "posix.access", "_path_normpath")
#: The system calls counted per utterance.
COUNTED: tuple[str, ...] = ("posix.stat", "posix.lstat", "io.open", "posix.open", "posix.rename", "posix.replace")
COUNTED += ("posix.fsync", "posix.mkdir", "posix.unlink", "posix.scandir", "posix.getcwd", "dumps", "posix.utime", "posix.close")


def own_group(func: Func) -> str | None:
    """The group of a function by its file, or None for a generic one (stdlib, numpy, builtins): its callers decide."""
    filename, _, name = func
    if filename == "~":
        return None
    if name == "<module>":
        return "imports"
    path = filename.replace("\\", "/")
    for group, parts in FILE_GROUPS:
        if any(p in path for p in parts):
            return group
    return None


class Grouper:
    """Own time of every function of a profile, charged to groups (see the module docstring)."""

    def __init__(self, stats: pstats.Stats) -> None:
        self.stats = stats.stats  # type: ignore[attr-defined]
        self._memo: dict[Func, dict[str, float]] = {}

    def share(self, func: Func, depth: int = 0) -> dict[str, float]:
        """``{group: fraction}`` of ``func``'s own time."""
        group = own_group(func)
        if group is not None:
            return {group: 1.0}
        if func not in self._memo:
            self._memo[func] = {"other": 1.0}  # a cycle ends here
            self._memo[func] = self._by_callers(func, depth)
        return self._memo[func]

    def _by_callers(self, func: Func, depth: int) -> dict[str, float]:
        callers = self.stats[func][4]
        by = 2 if sum(v[2] for v in callers.values()) > 0 else 1  # own time from each caller, else call counts
        total = sum(v[by] for v in callers.values())
        if not callers or depth > 40 or not total:
            return {"other": 1.0}
        path_call = func[0] == "~" and any(b in func[2] for b in PATH_BUILTINS)
        out: dict[str, float] = defaultdict(float)
        for caller, value in callers.items():
            for g, f in self.share(caller, depth + 1).items():
                # stat/lstat/listdir are stat/path work wherever they are called from, but an import's
                out["stat/path work" if path_call and g != "imports" else g] += value[by] / total * f
        return dict(out)

    def groups(self) -> tuple[dict[str, float], dict[str, list[tuple[float, Func]]]]:
        seconds: dict[str, float] = defaultdict(float)
        members: dict[str, list[tuple[float, Func]]] = defaultdict(list)
        for func, (_, _, tt, _, _) in self.stats.items():
            for g, f in self.share(func).items():
                seconds[g] += tt * f
                members[g].append((tt * f, func))
        return dict(seconds), members


def label(func: Func) -> str:
    filename, line, name = func
    if filename == "~":
        return name
    parts = Path(filename).parts
    short = "/".join(parts[parts.index("audiokit") :]) if "audiokit" in parts else "/".join(parts[-2:])
    return f"{short}:{line}({name})"


def report(prof: Path, n: int, unprofiled: float, top: int) -> None:
    stats = pstats.Stats(str(prof))
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = stats.stats  # type: ignore[attr-defined]
    for key, title in (("ct", "cumulative"), ("tt", "own (tottime)")):
        index = 3 if key == "ct" else 2
        ranked = sorted(entries.items(), key=lambda kv: kv[1][index], reverse=True)[:top]
        rows = [[label(f), str(v[1]), f"{v[2]:.3f}", f"{v[3]:.3f}", f"{v[index] / total:.1%}"] for f, v in ranked]
        print_table(["function", "calls", "own s", "cumulative s", "% of profile"], rows, title=f"top {top}, {title}")
    seconds, members = Grouper(stats).groups()
    rows = []
    for g, s in sorted(seconds.items(), key=lambda kv: kv[1], reverse=True):
        biggest = sorted(members[g], reverse=True)[:3]
        rows.append(
            [
                g,
                f"{s:.3f}",
                f"{s / total:.1%}",
                f"{s / total * unprofiled:.2f}",
                f"{s / n * 1e3:.2f}",
                "; ".join(f"{label(f)} {t:.2f}" for t, f in biggest),
            ]
        )
    print_table(
        ["group", "profiled s", "share", "unprofiled s (share x CPU)", "ms / utt (profiled)", "largest own times"],
        rows,
        title=f"groups (profile total {total:.2f} s; unprofiled run {unprofiled:.2f} CPU s)",
    )
    rows = []
    for func, (_, nc, _, ct, callers) in entries.items():
        if func[0] == "~" and any(c in func[2] for c in COUNTED):
            top_callers = sorted(callers.items(), key=lambda kv: kv[1][1], reverse=True)[:3]
            who = "; ".join(f"{label(c)} {v[1]}" for c, v in top_callers)
            rows.append([func[2], nc, f"{nc / n:.1f}", f"{ct:.3f}", who])
    rows.sort(key=lambda r: int(r[1]), reverse=True)
    headers = ["builtin", "calls", "per utterance", "cumulative s", "main callers (calls)"]
    print_table(headers, rows[:16], title="system calls of the bookkeeping (imports included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="folder holding (or to hold) the generated corpus")
    parser.add_argument("--files", type=int, default=1500, help="utterances (default 1500)")
    parser.add_argument("--store", nargs="+", default=["shards", "npy"], help="stores to profile (default shards npy)")
    parser.add_argument("--feature", choices=sorted(FEATURE_FLAGS), default="log-mel")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", type=Path, help="keep the .prof files in this folder")
    parser.add_argument(
        "--timer", choices=["cpu", "wall"], default="wall", help="the profiler's clock (default wall: python -m cProfile's)"
    )
    args = parser.parse_args()
    print(machine_line())
    root, utts = corpus(args.cache, args.files)
    warm(utts)
    audio = sum(u.seconds for u in utts)
    with tempfile.TemporaryDirectory(dir=args.cache) as tmp:
        work = Path(tmp)
        for store in args.store:
            argv = ["batch", "mel", str(root), "--out", "OUT", "--store", store, "--jobs", "1", "-q"]
            argv += FEATURE_FLAGS[args.feature]
            plain = measure(
                [sys.executable, "-m", "audiokit", *[str(work / store) if a == "OUT" else a for a in argv]], log_dir=work / "logs"
            )
            prof = (args.keep or work) / f"batch-{args.feature}-{store}.prof"
            prof.parent.mkdir(parents=True, exist_ok=True)
            profiled_argv = [str(work / f"{store}-prof") if a == "OUT" else a for a in argv]
            run = measure([sys.executable, "-c", PROFILE, args.timer, str(prof), *profiled_argv], log_dir=work / "logs")
            print(
                f"\n## {args.feature}, --store {store}: {len(utts)} utterances, {audio / 3600:.2f} h; "
                f"unprofiled {plain.cpu_s:.2f} CPU s ({audio / plain.cpu_s:.0f}x real time per CPU s), "
                f"under cProfile ({args.timer} clock) {run.cpu_s:.2f} CPU s"
            )
            report(prof, len(utts), plain.cpu_s, args.top)


if __name__ == "__main__":
    main()

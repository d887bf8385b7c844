"""Benchmark: whole ``audiokit`` commands as subprocesses against a librosa script and sox.

Run ``python benchmarks/bench_cli.py`` (10-minute / 1-hour / 4-hour files,
medians of 3); ``--quick`` uses 1-minute files and skips the 4-hour run.
All inputs are generated into a temporary folder (mono PCM_16 WAV of AR(1)
low-pass noise plus tones) and deleted at the end.  Every process runs with
the environment as found (no thread limits; ``OPENBLAS_CORETYPE`` printed).

Sections:

1. Start-up: ``audiokit --version`` and ``audiokit info tiny.wav`` (1 s file)
   against ``python -c pass``; the entry-point script next to ``sys.executable``
   is run directly (a pyenv shim on PATH adds its own overhead, measured in a
   separate row when present).  If ``--version`` takes more than 0.3 s, the
   top offenders of ``python -X importtime -m audiokit --version`` follow.
2. Spectrogram PNG of a 10-minute 44.1 kHz file (mono PCM_16):
   * ``audiokit spectrogram F --nfft 2048 --win 2048 --hop 512 -o out.png -q``
     (1200x600 PNG, frames not centred, max-pooled columns);
   * a librosa script: ``librosa.load(F, sr=None)``, ``stft(n_fft=2048,
     hop_length=512)`` (centred), ``amplitude_to_db(|S|, ref=np.max)``,
     ``librosa.display.specshow(..., x_axis='time', y_axis='hz')`` on a 12x6 in,
     100 dpi figure (1200x600) with a colorbar, ``savefig``;
   * ``sox F -n spectrogram -o out.png`` (sox defaults: 800 px wide, its own DFT
     size from the 257-row height, columns averaged -- less work, different
     picture; the reference point for "within 2x").
3. Peak RSS of ``audiokit mel`` on a 1-hour 16 kHz file, ``--npy out.npy -q``
   (no PNG) and ``--npy out.npy -o out.png -q``, plus, for context, a librosa
   script computing the same log-mel (``load(sr=None)``, ``melspectrogram(n_fft=400,
   hop_length=160, n_mels=80, htk=True, norm=None, center=False)``,
   ``power_to_db(ref=np.max, top_db=80)``, ``np.save``).
4. The same two ``audiokit mel`` variants on a 4-hour 16 kHz file (460 MB),
   ``--repeats-4h`` runs each (default 1).
5. Issue 13 targets, all in one alternating run (``--target-repeats``, default 7; medians, min - max, load at
   the start and end): ``audiokit --version`` and ``--help`` against ``python -c "import numpy"`` (<= 1.3x);
   ``info`` of a 1 s file (<= 1.5x), ``mel --npy`` and ``spectrogram --npy`` of a 12 s 16 kHz file,
   ``resample --to 8k`` and ``quantize --bits 8`` of the 1 s file (<= 1.6x) and the spectrogram PNG of the
   12 s file (<= 3.5x) against ``python -c "import numpy, soundfile"``; the spectrogram PNG of the 10-minute
   44.1 kHz file (2048/512) against ``sox F -n spectrogram -o x.png`` (<= 2x).  Ratios are of medians taken
   in the same rounds, so the machine's load is shared by numerator and denominator.  audiokit runs from a
   byte-compiled copy of the package (as installed from a wheel; ``--as-found`` runs the script found), and
   ``mel --npy`` of the audiokit found is shown too.
6. Start-up rows (``--only commands``, :mod:`cli_startup`): ``--version``, ``--help``, ``info``/``spectrum``/``pitch
   --json``, ``spectrogram``/``waveform -o PNG``, ``mel --npy``, ``stats``, ``loudness``, ``batch info`` (and
   resumed with nothing to do) on a 12 s 16 kHz file: median wall and child CPU seconds (``RUSAGE_CHILDREN``) of
   ``--startup-repeats`` alternating rounds, as ratios to ``python -c "import numpy, soundfile"``, and the heavy
   modules each imports; ``--startup-against REV`` adds the package at a git revision in the same rounds.
7. Profile of one ``audiokit spectrogram`` run of section 2 (cProfile, in a
   helper process): import of the CLI, import of matplotlib (which audiokit
   does lazily; here done before profiling so that rendering is shown without
   it), read, STFT (of which FFT, windowing and the power reducer), dB
   conversion of the chunks, max-pooling, PNG rendering.

Wall time is measured around the subprocess; peak RSS is GNU time's ``%M``
(kB; else ``getrusage(RUSAGE_CHILDREN)`` in a fresh helper).  Contenders
alternate within each round.  Ratio = contender median / audiokit median
(> 1: audiokit faster).  Targets are printed as met / MISSED, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    fmt_mib,
    fmt_ratio,
    fmt_s,
    machine_line,
    print_table,
    target_status,
    temp_dir,
    time_commands,
    versions,
    write_test_wav,
)

STARTUP_TARGET_S = 0.3
RSS_TARGET_MIB = 300.0

LIBROSA_SPECTROGRAM = r"""
import sys
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import librosa
import librosa.display

path, out = sys.argv[1], sys.argv[2]
y, sr = librosa.load(path, sr=None)
S_db = librosa.amplitude_to_db(np.abs(librosa.stft(y, n_fft=2048, hop_length=512)), ref=np.max)
fig, ax = plt.subplots(figsize=(12, 6), dpi=100)
img = librosa.display.specshow(S_db, sr=sr, hop_length=512, x_axis="time", y_axis="hz", ax=ax)
fig.colorbar(img, ax=ax, format="%+2.0f dB")
ax.set_title(path)
fig.savefig(out)
"""

LIBROSA_LOGMEL = r"""
import sys
import numpy as np
import librosa

path, out = sys.argv[1], sys.argv[2]
y, sr = librosa.load(path, sr=None)
M = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=400, hop_length=160, n_mels=80, htk=True, norm=None,
                                   center=False)
np.save(out, librosa.power_to_db(M, ref=np.max, top_db=80.0).astype(np.float32))
"""

PROFILE_HELPER = r"""
import cProfile, json, pstats, sys, time
t0 = time.perf_counter()
from audiokit.cli.app import main
t_import = time.perf_counter() - t0
t_mpl = 0.0  # the spectrogram PNG no longer imports matplotlib (audiokit.plot.raster)
prof = cProfile.Profile()
t1 = time.perf_counter()
prof.enable()
code = main(sys.argv[2:])
prof.disable()
t_run = time.perf_counter() - t1
stats = pstats.Stats(prof)
rows = []
for (fname, line, func), (cc, nc, tt, ct, callers) in stats.stats.items():
    rows.append([fname, line, func, nc, tt, ct])
with open(sys.argv[1], "w") as fh:
    json.dump({"import_s": t_import, "mpl_s": t_mpl, "run_s": t_run, "code": code, "rows": rows}, fh)
"""

# (label, file suffix, function name(s)[, "own"]): cumulative (or own) time of the functions in the profile.
# ufuncs (np.multiply, np.log10, ...) are not profiled separately: their time is the caller's own time.
PROFILE_STAGES = [
    ("imports inside the run (lazy; overlaps the rows below)", "importlib._bootstrap", "_find_and_load"),
    ("run_timefreq (the job)", "audiokit/pipelines/timefreq.py", "run_timefreq"),
    ("  read blocks (soundfile + checks)", "audiokit/io/reader.py", "blocks"),
    ("  STFT stream push/finish", "audiokit/dsp/stft/", ("push", "finish")),
    ("    FFT (engine plans)", "audiokit/engine/fftw.py", "execute"),
    ("    windowing (own time of _segment: np.multiply)", "audiokit/dsp/stft/forward.py", "_segment", "own"),
    ("    power reducer (|X|^2)", "audiokit/dsp/stft/forward.py", "__call__"),
    ("  max-pooling (ColumnPooler.add)", "audiokit/plot/pooling.py", "add"),
    ("  render (draw_timefreq)", "audiokit/plot/timefreq.py", "draw_timefreq"),
    ("    spectrogram_png (numpy + Pillow, PNG encode)", "audiokit/plot/raster.py", "spectrogram_png"),
]


def duration_label(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"


def audiokit_exe() -> list[str]:
    """The installed entry-point script next to this interpreter (no pyenv shim), else ``python -m audiokit``."""
    script = Path(sys.executable).parent / "audiokit"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "audiokit"]


def importtime_offenders(top: int = 15) -> list[list[str]]:
    """Top ``top`` imports of ``python -X importtime -m audiokit --version`` by cumulative time."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "audiokit", "--version"], capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S.*)$", line)
        if m:
            rows.append((int(m.group(2)), int(m.group(1)), len(m.group(3)) // 2, m.group(4)))
    rows.sort(reverse=True)
    return [[f"{'. ' * depth}{name}", f"{cum / 1000:.0f} ms", f"{self_ / 1000:.0f} ms"] for cum, self_, depth, name in rows[:top]]


def profile_spectrogram(exe_args: list[str], json_path: Path) -> tuple[list[list[str]], list[list[str]], float, float]:
    """cProfile one audiokit run in a helper; return (stage rows, top tottime rows, import s, run s)."""
    proc = subprocess.run([sys.executable, "-c", PROFILE_HELPER, str(json_path), *exe_args], capture_output=True, text=True)
    if proc.returncode != 0 or not json_path.exists():
        raise RuntimeError(f"profile helper failed: {proc.stderr[-1500:]}")
    data = json.loads(json_path.read_text())
    if data["code"] != 0:
        raise RuntimeError(f"audiokit exited {data['code']} under the profiler: {proc.stderr[-1500:]}")
    rows = data["rows"]
    run_s = data["run_s"]

    def cum(suffix, funcs):
        funcs = (funcs,) if isinstance(funcs, str) else funcs
        return sum(r[5] for r in rows if suffix in r[0].replace("\\", "/") and r[2] in funcs)

    def own(suffix, funcs):
        funcs = (funcs,) if isinstance(funcs, str) else funcs
        return sum(r[4] for r in rows if suffix in r[0].replace("\\", "/") and r[2] in funcs)

    stage_rows = [
        ["import audiokit.cli.app (not profiled)", fmt_s(data["import_s"]), ""],
    ]
    for label, suffix, funcs, *how in PROFILE_STAGES:
        t = own(suffix, funcs) if how else cum(suffix, funcs)
        stage_rows.append([label, fmt_s(t), f"{t / run_s:.0%}"])
    stage_rows.append(["total profiled run (main)", fmt_s(run_s), "100%"])
    top = sorted(rows, key=lambda r: -r[4])[:12]
    top_rows = [[f"{Path(r[0]).name}:{r[1]}({r[2]})" if r[0] != "~" else r[2], str(r[3]), fmt_s(r[4]), fmt_s(r[5])] for r in top]
    return stage_rows, top_rows, data["import_s"], run_s


#: (row label, command key, baseline key, target ratio <=)
TARGETS = [
    ("audiokit --version", "version", "numpy", 1.3),
    ("audiokit --help", "help", "numpy", 1.3),
    ("audiokit info 1 s", "info", "numpy+soundfile", 1.5),
    ("audiokit mel --npy 12 s 16 kHz", "mel_npy", "numpy+soundfile", 1.6),
    ("audiokit spectrogram --npy 12 s", "spec_npy", "numpy+soundfile", 1.6),
    ("audiokit resample --to 8k 1 s", "resample", "numpy+soundfile", 1.6),
    ("audiokit quantize --bits 8 1 s", "quantize", "numpy+soundfile", 1.6),
    ("audiokit spectrogram PNG 12 s", "spec_png", "numpy+soundfile", 3.5),
    ("audiokit spectrogram PNG 10 min 44.1 kHz", "long_png", "sox", 2.0),
]


def compiled_copy(tmp: Path) -> list[str]:
    """A launcher of a byte-compiled copy of the audiokit package, as a wheel install has it.

    The source tree may run without bytecode (``PYTHONDONTWRITEBYTECODE=1``, an editable install in a
    read-only or shared tree): every run then compiles each audiokit module again (~50-90 ms here), which
    numpy and soundfile, installed with their .pyc, never pay.
    """
    import compileall

    import audiokit

    site = tmp / "site"
    shutil.copytree(Path(audiokit.__file__).parent, site / "audiokit", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(str(site), quiet=1)
    launcher = site / "audiokit-cli"
    launcher.write_text(f"#!{sys.executable}\nimport sys\nfrom audiokit.cli.app import run\nsys.exit(run())\n")
    launcher.chmod(0o755)
    return [str(launcher)]


def target_rows(ak: list[str], sox: str | None, tmp: Path, fresh, repeats: int, *, as_found: bool) -> None:
    """Issue 13: every target command and its baseline in one alternating run; print ratios of medians."""
    ak_found = ak
    if not as_found:
        ak = compiled_copy(tmp)
    print("# generating inputs for the targets ...", file=sys.stderr)
    small = write_test_wav(tmp / "t_small.wav", 1.0, 16000)
    utt = write_test_wav(tmp / "t_utt.wav", 12.0, 16000)
    long = write_test_wav(tmp / "t_long44k.wav", 600.0, 44100)
    cmds = {
        "numpy": [sys.executable, "-c", "import numpy"],
        "numpy+soundfile": [sys.executable, "-c", "import numpy, soundfile"],
        "version": ak + ["--version"],
        "help": ak + ["--help"],
        "info": ak + ["info", str(small)],
        "mel_npy": lambda: ak + ["mel", str(utt), "--npy", fresh(".npy"), "-q"],
        "spec_npy": lambda: ak + ["spectrogram", str(utt), "--npy", fresh(".npy"), "-q"],
        "resample": lambda: ak + ["resample", str(small), "--to", "8k", "-o", fresh(".wav"), "-q"],
        "quantize": lambda: ak + ["quantize", str(small), "--bits", "8", "-o", fresh(".wav"), "-q"],
        "spec_png": lambda: ak + ["spectrogram", str(utt), "-o", fresh(".png"), "-q"],
        "long_png": lambda: (
            ak + ["spectrogram", str(long), "--nfft", "2048", "--win", "2048", "--hop", "512", "-o", fresh(".png"), "-q"]
        ),
    }
    if sox:
        cmds["sox"] = lambda: [sox, str(long), "-n", "spectrogram", "-o", fresh(".png")]
    if not as_found:
        cmds["mel_npy_found"] = lambda: ak_found + ["mel", str(utt), "--npy", fresh(".npy"), "-q"]
    load_start = os.getloadavg()[0]
    print("# issue 13 targets ...", file=sys.stderr)
    res = time_commands(cmds, repeats, label="targets")
    load_end = os.getloadavg()[0]

    def spread(r) -> str:
        return f"{fmt_s(min(x.wall for x in r.runs))} - {fmt_s(max(x.wall for x in r.runs))}"

    rows = [
        [f"baseline: {name}", fmt_s(res[name].median), spread(res[name]), "", "", fmt_mib(res[name].peak_rss_mib), ""]
        for name in ("numpy", "numpy+soundfile", "sox")
        if name in res
    ]
    targets = TARGETS + (
        [("(as found: " + " ".join(ak_found) + ") mel --npy", "mel_npy_found", "numpy+soundfile", 1.6)] if not as_found else []
    )
    for label, key, base, target in targets:
        if base not in res:
            continue
        r = res[key]
        ratio = r.median / res[base].median
        rows.append(
            [
                label,
                fmt_s(r.median),
                spread(r),
                f"{ratio:.2f}x {base}",
                f"<= {target}x",
                fmt_mib(r.peak_rss_mib),
                target_status(ratio, target, higher_is_better=False) + (" (FAILED)" if r.failed else ""),
            ]
        )
    print_table(
        ["command", "median", "min - max", "ratio (medians, same rounds)", "target", "peak RSS MiB", "status"],
        rows,
        title=f"issue 13 targets: {repeats} alternating rounds; load avg (1 min) {load_start:.2f} at the "
        f"start, {load_end:.2f} at the end, {os.cpu_count()} cores; audiokit = "
        + ("as found" if as_found else "a byte-compiled copy of the package"),
    )
    for f in tmp.glob("out*"):
        f.unlink()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1-minute files, no 4-hour run")
    ap.add_argument("--repeats", type=int, default=3, help="runs per long command (default 3)")
    ap.add_argument("--startup-repeats", type=int, default=7, help="runs per start-up command (default 7)")
    ap.add_argument("--repeats-4h", type=int, default=1, help="runs per command on the 4-hour file (default 1)")
    ap.add_argument("--no-4h", action="store_true", help="skip the 4-hour file")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile breakdown")
    ap.add_argument(
        "--as-found",
        action="store_true",
        help="targets: run the audiokit found (maybe without .pyc) instead of a byte-compiled copy",
    )
    ap.add_argument("--target-repeats", type=int, default=7, help="alternating rounds of the issue 13 targets (default 7)")
    ap.add_argument(
        "--only",
        nargs="+",
        choices=["startup", "spectrogram", "mel", "mel4h", "targets", "commands", "profile"],
        default=["startup", "spectrogram", "mel", "mel4h", "targets", "commands", "profile"],
    )
    ap.add_argument("--startup-against", metavar="REV", help="commands: also time the package at this git revision")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (prints its path)")
    args = ap.parse_args(argv)
    only = set(args.only)
    if args.quick or args.no_4h:
        only.discard("mel4h")
    if args.no_profile:
        only.discard("profile")
    spec_seconds = 60.0 if args.quick else 600.0
    mel_seconds = 60.0 if args.quick else 3600.0

    ak = audiokit_exe()
    sox = shutil.which("sox")
    shim = shutil.which("audiokit")
    ver = versions("numpy", "scipy", "librosa", "matplotlib", "soundfile", "audiokit")
    sox_ver = subprocess.run([sox, "--version"], capture_output=True, text=True).stdout.strip() if sox else "not installed"
    print("# " + machine_line({"threads": "as found (no limits)"}))
    print("# " + ", ".join(f"{k} {v}" for k, v in ver.items()) + f"; {sox_ver}; audiokit = {' '.join(ak)}")
    print(
        f"# files: spectrogram {spec_seconds:g} s at 44.1 kHz, mel {mel_seconds:g} s at 16 kHz"
        + ("" if "mel4h" not in only else ", 14400 s at 16 kHz")
        + "; all mono PCM_16 WAV"
    )

    with temp_dir(keep=args.keep) as tmp:
        counter = iter(range(10**9))

        def fresh(suffix: str) -> str:
            return str(tmp / f"out{next(counter)}{suffix}")

        # ------------------------------------------------------------- start-up
        if "startup" in only:
            tiny = write_test_wav(tmp / "tiny.wav", 1.0, 16000)
            cmds = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "audiokit --version": ak + ["--version"],
                "audiokit info tiny.wav": ak + ["info", str(tiny)],
            }
            if shim and Path(shim).resolve() != Path(ak[0]).resolve():
                cmds["audiokit --version (PATH: " + shim + ")"] = [shim, "--version"]
            print("# start-up ...", file=sys.stderr)
            res = time_commands(cmds, args.startup_repeats)
            rows = []
            for name, r in res.items():
                status = ""
                if name.startswith("audiokit"):
                    status = target_status(r.median, STARTUP_TARGET_S, higher_is_better=False)
                rows.append(
                    [
                        name,
                        fmt_s(r.median),
                        f"{fmt_s(min(x.wall for x in r.runs))} - {fmt_s(max(x.wall for x in r.runs))}",
                        fmt_mib(r.peak_rss_mib),
                        status + (" (FAILED)" if r.failed else ""),
                    ]
                )
            print_table(
                ["command", "median", "min - max", "peak RSS MiB", f"target <= {STARTUP_TARGET_S} s"],
                rows,
                title=f"start-up, medians of {args.startup_repeats}",
            )
            if res["audiokit --version"].median > STARTUP_TARGET_S:
                print_table(
                    ["module (python -X importtime -m audiokit --version)", "cumulative", "self"],
                    importtime_offenders(),
                    title="import-time offenders (top by cumulative time)",
                )

        # ------------------------------------------------------------- spectrogram PNG
        spec_wav = None
        if "spectrogram" in only or "profile" in only:
            print(f"# generating {spec_seconds:g} s at 44.1 kHz ...", file=sys.stderr)
            spec_wav = write_test_wav(tmp / "spec44k.wav", spec_seconds, 44100)
        if "spectrogram" in only:
            lib_script = tmp / "librosa_spectrogram.py"
            lib_script.write_text(LIBROSA_SPECTROGRAM)
            cmds = {
                "audiokit spectrogram": lambda: (
                    ak
                    + ["spectrogram", str(spec_wav), "--nfft", "2048", "--win", "2048", "--hop", "512", "-o", fresh(".png"), "-q"]
                ),
                "librosa script": lambda: [sys.executable, str(lib_script), str(spec_wav), fresh(".png")],
            }
            if sox:
                cmds["sox spectrogram"] = lambda: [sox, str(spec_wav), "-n", "spectrogram", "-o", fresh(".png")]
            print("# spectrogram ...", file=sys.stderr)
            res = time_commands(cmds, args.repeats, label="spectrogram")
            base = res["audiokit spectrogram"].median
            targets = {"librosa script": (10.0, ">= 10x"), "sox spectrogram": (0.5, ">= 0.5x (within 2x)")}
            rows = []
            for name, r in res.items():
                ratio = r.median / base
                tgt = targets.get(name)
                rows.append(
                    [
                        name,
                        fmt_s(r.median),
                        f"{fmt_s(min(x.wall for x in r.runs))} - {fmt_s(max(x.wall for x in r.runs))}",
                        fmt_ratio(ratio),
                        fmt_mib(r.peak_rss_mib),
                        (f"{tgt[1]}: {target_status(ratio, tgt[0])}" if tgt else "") + (" (FAILED)" if r.failed else ""),
                    ]
                )
            print_table(
                ["command", "median", "min - max", "ratio vs audiokit", "peak RSS MiB", "target"],
                rows,
                title=f"spectrogram PNG of {spec_seconds:g} s at 44.1 kHz, medians of {args.repeats}",
            )

        # ------------------------------------------------------------- mel RSS
        def mel_rows(wav: Path, repeats: int, with_librosa: bool, label: str):
            cmds = {
                "audiokit mel --npy": lambda: ak + ["mel", str(wav), "--npy", fresh(".npy"), "-q"],
                "audiokit mel --npy -o PNG": lambda: ak + ["mel", str(wav), "--npy", fresh(".npy"), "-o", fresh(".png"), "-q"],
            }
            if with_librosa:
                script = tmp / "librosa_logmel.py"
                script.write_text(LIBROSA_LOGMEL)
                cmds["librosa log-mel script (context)"] = lambda: [sys.executable, str(script), str(wav), fresh(".npy")]
            res = time_commands(cmds, repeats, label=label)
            base = res["audiokit mel --npy"].median
            rows = []
            for name, r in res.items():
                rss = r.peak_rss_mib
                status = target_status(rss, RSS_TARGET_MIB, higher_is_better=False) if name.startswith("audiokit") else ""
                rows.append(
                    [
                        label,
                        name,
                        fmt_s(r.median),
                        fmt_ratio(r.median / base),
                        fmt_mib(rss),
                        status + (" (FAILED)" if r.failed else ""),
                    ]
                )
            for f in tmp.glob("out*.npy"):
                f.unlink()
            return rows

        mel_table = []
        if "mel" in only:
            print(f"# generating {mel_seconds:g} s at 16 kHz ...", file=sys.stderr)
            wav = write_test_wav(tmp / "mel16k.wav", mel_seconds, 16000)
            mel_table += mel_rows(wav, args.repeats, True, duration_label(mel_seconds))
            wav.unlink()
        if "mel4h" in only:
            print("# generating 4 h at 16 kHz (460 MB) ...", file=sys.stderr)
            t0 = time.perf_counter()
            wav = write_test_wav(tmp / "mel16k_4h.wav", 4 * 3600.0, 16000)
            print(f"#   generated in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            mel_table += mel_rows(wav, args.repeats_4h, False, "4 h")
            wav.unlink()
        if mel_table:
            print_table(
                [
                    "file",
                    "command",
                    "median wall",
                    "ratio vs audiokit --npy",
                    "peak RSS MiB",
                    f"target <= {RSS_TARGET_MIB:g} MiB",
                ],
                mel_table,
                title=f"audiokit mel peak RSS, 16 kHz mono (medians of {args.repeats}; 4 h: {args.repeats_4h} run)",
            )

        # ------------------------------------------------------------- issue 13 targets
        if "targets" in only:
            target_rows(ak, sox, tmp, fresh, args.target_repeats, as_found=args.as_found)

        # ------------------------------------------------------------- start-up rows
        if "commands" in only:
            import cli_startup

            (tmp / "commands").mkdir()
            cli_startup.run(args.startup_repeats, args.startup_against, tmp / "commands")

        # ------------------------------------------------------------- profile
        if "profile" in only:
            print("# profiling audiokit spectrogram ...", file=sys.stderr)
            stage_rows, top_rows, _, _ = profile_spectrogram(
                ["spectrogram", str(spec_wav), "--nfft", "2048", "--win", "2048", "--hop", "512", "-o", fresh(".png"), "-q"],
                tmp / "profile.json",
            )
            print_table(
                ["stage (cProfile cumulative)", "time", "share of run"],
                stage_rows,
                title=f"profile: audiokit spectrogram, {spec_seconds:g} s at 44.1 kHz -> PNG",
            )
            print_table(["function", "calls", "own", "cumulative"], top_rows, title="top functions by own time")
            print(
                "\n(cProfile adds overhead per Python call, which inflates matplotlib's Python-heavy drawing code;\n"
                " shares are indicative.  The imports are timed without the profiler.)"
            )
    print(f"\n# load avg at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

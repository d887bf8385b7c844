"""Pitch trackers side by side: audiokit.pyin/yin vs librosa 0.11 pyin/yin (and Praat's autocorrelation pitch
through parselmouth, when a separate venv has it), on the same inputs in one run.

    python benchmarks/bench_pitch.py                       # speed on 60 s and 5 min of 16 kHz speech + accuracy
    python benchmarks/bench_pitch.py --minutes 1 60        # 1 h for audiokit; librosa's 1 h extrapolated from 5 min
    python benchmarks/bench_pitch.py --parselmouth /tmp/pm-venv/bin/python
    python benchmarks/bench_pitch.py --methods yin --minutes 1 5 60 --no-accuracy   # the yin rows only
    python benchmarks/bench_pitch.py --no-speed --no-accuracy --cli   # only the whole-process CLI rows

Speed: CPU-seconds (``resource.getrusage``, user + system, of this process; one BLAS/FFT thread) per call, the
median of ``--repeats`` rounds (contenders alternated), with the wall-clock median beside; ratio = librosa / audiokit.
Both get the same float32 array, ``sr=16000, fmin=65.4 (C2), fmax=2093 (C7), frame_length=1024, hop_length=256``
(audiokit pitch's defaults: 64 ms / 16 ms).  The speech is espeak-ng (voices at pitches 20..80, resampled to 16 kHz
by sox), concatenated to length.  librosa runs on inputs up to ``--librosa-max`` minutes; beyond, its time is
extrapolated linearly from the longest measured (its cost is per frame) and marked so.

CLI (``--cli``): ``audiokit pitch FILE --json`` and ``-o PNG`` on a 12 s 16 kHz WAV of the same speech, each a whole
process (start-up, imports, reading, analysis, output), against ``python -c "import numpy, soundfile"``: medians of
``--repeats`` rounds (commands alternated) of wall seconds and of the child's CPU-seconds
(``getrusage(RUSAGE_CHILDREN)`` before and after each run).

Accuracy (``--accuracy``): synthetic signals with known f0 -- harmonic complexes (1/k amplitudes, 10 harmonics)
with 6 Hz vibrato of ±3 % around a glide 60 -> 1000 Hz, alternating 0.5 s voiced / 0.3 s unvoiced (silence or
noise), white or pink noise at 20/10/0 dB SNR over the voiced parts -- scored per frame against the truth: gross
pitch error (voiced in truth and estimate, off by > 20 %), fine error (median |cents| of the others), voicing
decision error (frames whose voiced/unvoiced decision differs).  espeak-ng speech has no exact truth: there the
table gives each tracker's agreement with audiokit's pyin (and pyin's with librosa's, which is exact).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import limit_threads, machine_line, print_table  # noqa: E402

limit_threads(1)

import numpy as np  # noqa: E402

SR = 16000
FMIN, FMAX = 65.4, 2093.0
FRAME, HOP = 1024, 256
SENTENCES = [
    "The quick brown fox jumps over the lazy dog while the band plays on.",
    "Pitch tracking is the next thing speech and music users compute after a spectrogram.",
    "Prosody features, text to speech data checks and singing analysis all start from it.",
    "She sells sea shells by the sea shore, and the shells she sells are surely sea shells.",
]

PARSELMOUTH = """
import sys, json, time, resource, numpy as np, soundfile as sf, parselmouth
x, sr = sf.read(sys.argv[1], dtype="float64")
hop = float(sys.argv[2])
snd = parselmouth.Sound(x, sampling_frequency=sr)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, w0 = cpu(), time.perf_counter()
p = snd.to_pitch_ac(time_step=hop, pitch_floor=65.4, pitch_ceiling=2093.0)
c1, w1 = cpu(), time.perf_counter()
f0 = p.selected_array["frequency"]
print(json.dumps({"cpu": c1 - c0, "wall": w1 - w0, "t": list(p.xs()), "f0": list(f0)}))
"""


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def speech(seconds: float, workdir: Path) -> np.ndarray:
    """espeak-ng sentences at several pitches, 16 kHz float32, concatenated (and cut) to ``seconds``."""
    import soundfile as sf

    parts = []
    for i, pitch in enumerate((20, 35, 50, 65, 80)):
        for j, text in enumerate(SENTENCES):
            raw, out = workdir / f"s{i}{j}.wav", workdir / f"s{i}{j}_16k.wav"
            if not out.exists():
                subprocess.run(["espeak-ng", "-p", str(pitch), "-w", str(raw), text], check=True)
                subprocess.run(["sox", str(raw), "-r", str(SR), str(out)], check=True)
            x, _ = sf.read(out, dtype="float32")
            parts.append(x)
    one = np.concatenate(parts)
    reps = int(np.ceil(seconds * SR / one.size))
    return np.tile(one, reps)[: int(seconds * SR)]


def seconds_text(s: float) -> str:
    """Seconds with 3 significant digits under 1 s (yin's 60 s takes ~0.04 CPU-s), else 2 decimals."""
    return f"{s:.3f}" if s < 1 else f"{s:.2f}"


def measure(fn, repeats: int) -> tuple[float, float, object]:
    """Median CPU-seconds and wall seconds of ``fn()`` over ``repeats`` calls, and its last result."""
    cpus, walls, out = [], [], None
    for _ in range(repeats):
        c0, w0 = cpu_seconds(), time.perf_counter()
        out = fn()
        cpus.append(cpu_seconds() - c0)
        walls.append(time.perf_counter() - w0)
    return statistics.median(cpus), statistics.median(walls), out


def parselmouth_run(python: str | None, y: np.ndarray, workdir: Path) -> dict | None:
    if not python:
        return None
    import soundfile as sf

    path = workdir / f"pm_{y.size}.wav"
    sf.write(path, y, SR, subtype="FLOAT")
    done = subprocess.run([python, "-c", PARSELMOUTH, str(path), str(HOP / SR)], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"# parselmouth failed: {done.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout)


def speed(
    minutes: list[float],
    repeats: int,
    librosa_max: float,
    pm_python: str | None,
    workdir: Path,
    methods: tuple[str, ...] = ("pyin", "yin"),
) -> None:
    import librosa

    import audiokit

    common = dict(sr=SR, fmin=FMIN, fmax=FMAX, frame_length=FRAME, hop_length=HOP)
    warm = speech(2, workdir)
    audiokit.pyin(warm, **common), librosa.pyin(warm, **common), audiokit.yin(warm, **common), librosa.yin(warm, **common)
    rows = []
    measured: dict[str, tuple[float, float]] = {}  # librosa's longest measured (minutes, cpu) per method
    for m in minutes:
        y = speech(60 * m, workdir)
        seconds = y.size / SR
        for method in methods:
            ours = getattr(audiokit, method)
            theirs = getattr(librosa, method)
            a_cpu, a_wall, a_out = measure(lambda f=ours, x=y: f(x, **common), repeats)
            if m <= librosa_max:
                l_cpu, _, l_out = measure(lambda f=theirs, x=y: f(x, **common), repeats)
                measured[method] = (m, l_cpu)
                if method == "pyin":
                    same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(a_out, l_out))
                    note = "identical" if same else "DIFFERENT"
                else:  # yin: librosa's f0 to float rounding (tests/dsp/test_yin_fast.py bounds it per frame)
                    rel = float(np.max(np.abs(a_out - l_out) / l_out))
                    note = "identical" if rel == 0 else f"max |rel diff| {rel:.1e}"
                l_text = seconds_text(l_cpu)
            else:
                base_m, base_cpu = measured[method]
                l_cpu = base_cpu * m / base_m
                l_text, note = f"~{l_cpu:.1f} (extrapolated from {base_m:g} min)", "-"
            rows.append(
                [
                    f"{m:g} min",
                    method,
                    seconds_text(a_cpu),
                    seconds_text(a_wall),
                    l_text,
                    f"{l_cpu / a_cpu:.1f}x",
                    f"{seconds / a_cpu:.0f}x",
                    f"{seconds / l_cpu:.0f}x",
                    note,
                ]
            )
        for row in rows[-len(methods) :]:
            print("# " + " | ".join(row), file=sys.stderr, flush=True)
        pm = parselmouth_run(pm_python, y, workdir) if m <= librosa_max else None
        if pm:
            rows.append(
                [
                    f"{m:g} min",
                    "parselmouth to_pitch_ac",
                    "",
                    "",
                    "",
                    "",
                    "",
                    f"{seconds / pm['cpu']:.0f}x",
                    f"{pm['cpu']:.2f} CPU-s",
                ]
            )
        print(f"# {m:g} min done", file=sys.stderr)
    print_table(
        [
            "speech",
            "method",
            "audiokit CPU-s",
            "audiokit wall s",
            "librosa CPU-s",
            "librosa / audiokit",
            "audiokit x real time",
            "librosa (or other) x real time",
            "outputs",
        ],
        rows,
        title="Speed: 16 kHz speech, fmin 65.4 Hz, fmax 2093 Hz, 1024/256 samples (medians of CPU-seconds)",
    )


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cli(repeats: int, workdir: Path) -> None:
    """Whole-process rows: ``audiokit pitch`` on 12 s (``--json``, ``-o PNG``) vs importing numpy and soundfile."""
    import soundfile as sf

    wav, png = workdir / "cli12.wav", workdir / "cli12.png"
    sf.write(wav, speech(12, workdir), SR, subtype="PCM_16")
    exe = Path(sys.executable).parent / "audiokit"
    ak = [str(exe)] if exe.exists() else [sys.executable, "-m", "audiokit"]
    commands = {
        "audiokit pitch 12 s --json": [*ak, "pitch", str(wav), "--json"],
        "audiokit pitch 12 s -o PNG": [*ak, "pitch", str(wav), "-o", str(png)],
        'python -c "import numpy, soundfile"': [sys.executable, "-c", "import numpy, soundfile"],
    }
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for i in range(repeats + 1):  # round 0 warms the page cache and the .pyc files, untimed
        for name in commands if i % 2 else list(commands)[::-1]:
            c0, w0 = children_cpu(), time.perf_counter()
            subprocess.run(commands[name], check=True, stdout=subprocess.DEVNULL)
            if i:
                runs[name].append((time.perf_counter() - w0, children_cpu() - c0))
    base_wall, base_cpu = (statistics.median(x[k] for x in runs['python -c "import numpy, soundfile"']) for k in (0, 1))
    rows = []
    for name, measured in runs.items():
        wall, cpu = (statistics.median(x[k] for x in measured) for k in (0, 1))
        rows.append([name, f"{wall:.3f}", f"{wall / base_wall:.2f}x", f"{cpu:.3f}", f"{cpu / base_cpu:.2f}x"])
    print_table(
        ["command (whole process)", "wall s", "wall / numpy+soundfile", "CPU-s (child)", "CPU / numpy+soundfile"],
        rows,
        title=f"CLI: 12 s of 16 kHz speech, medians of {repeats}",
    )


# ---------------------------------------------------------------------- accuracy


def pink(n: int, rng: np.random.Generator) -> np.ndarray:
    """Pink (1/f power) noise by shaping white noise's spectrum by 1/sqrt(f)."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(spec.size)
    spec[1:] /= np.sqrt(f[1:])
    spec[0] = 0
    return np.fft.irfft(spec, n)


def synthetic(seconds: float, snr_db: float | None, noise: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, f0_true per sample (0 = unvoiced), voiced per sample)``: glide 60 -> 1000 Hz with vibrato, 0.5 s
    voiced / 0.3 s unvoiced, noise at ``snr_db`` relative to the voiced power (None: clean)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    glide = 60 * (1000 / 60) ** (t / seconds)
    f0 = glide * (1 + 0.03 * np.sin(2 * np.pi * 6 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SR
    x = np.zeros_like(t)
    for k in range(1, 11):
        x += np.where(k * f0 < SR / 2 - 200, np.sin(k * phase) / k, 0.0)
    voiced = (t % 0.8) < 0.5
    x *= voiced
    x *= 0.3 / np.abs(x).max()
    if snr_db is not None:
        n = rng.standard_normal(t.size) if noise == "white" else pink(t.size, rng)
        n *= np.sqrt(np.mean(x[voiced] ** 2) / np.mean(n**2)) * 10 ** (-snr_db / 20)
        x = x + n
    return x.astype(np.float32), np.where(voiced, f0, 0.0), voiced


def score(times: np.ndarray, f0: np.ndarray, voiced_est: np.ndarray, truth_f0: np.ndarray, truth_v: np.ndarray) -> list[str]:
    """GPE %, fine error (median |cents|), VDE % of a track sampled at ``times`` (frames within 20 ms of a
    voicing boundary are skipped: the truth is ambiguous there)."""
    idx = np.clip(np.round(times * SR).astype(int), 0, truth_f0.size - 1)
    tv, tf = truth_v[idx], truth_f0[idx]
    edge = np.zeros(truth_v.size, dtype=bool)
    change = np.flatnonzero(np.diff(truth_v.astype(int))) + 1
    for c in change:
        edge[max(0, c - int(0.02 * SR)) : c + int(0.02 * SR)] = True
    keep = ~edge[idx]
    tv, tf, ev, ef = tv[keep], tf[keep], voiced_est[keep], f0[keep]
    both = tv & ev
    ratio = np.abs(ef[both] / tf[both] - 1)
    gross = ratio > 0.2
    cents = 1200 * np.abs(np.log2(ef[both][~gross] / tf[both][~gross]))
    return [
        f"{100 * gross.mean():.1f}" if both.any() else "-",
        f"{np.median(cents):.1f}" if cents.size else "-",
        f"{100 * np.mean(tv != ev):.1f}",
    ]


def accuracy(pm_python: str | None, workdir: Path) -> None:
    import librosa

    import audiokit

    common = dict(sr=SR, fmin=FMIN, fmax=FMAX, frame_length=FRAME, hop_length=HOP)
    cases = [("clean", None, "white")] + [(f"{k} {s} dB", s, k) for k in ("white", "pink") for s in (20, 10, 0)]
    rows = []
    for label, snr, kind in cases:
        y, tf, tv = synthetic(12.0, snr, kind, seed=1)
        f0, flag, _ = audiokit.pyin(y, **common, fill_na=None)
        times = np.arange(f0.size) * HOP / SR
        lf0, lflag, _ = librosa.pyin(y, **common, fill_na=None)
        same = np.array_equal(f0, lf0) and np.array_equal(flag, lflag)
        yf = audiokit.yin(y, **common)
        row = [label, *score(times, f0, flag, tf, tv), "yes" if same else "NO"]
        row += score(times, yf, np.ones(yf.size, dtype=bool), tf, tv)[:2]
        pm = parselmouth_run(pm_python, y, workdir)
        if pm:
            pf = np.asarray(pm["f0"])
            row += score(np.asarray(pm["t"]), np.where(pf > 0, pf, 1.0), pf > 0, tf, tv)
        rows.append(row)
    headers = ["signal", "pyin GPE %", "pyin fine (cents)", "pyin VDE %", "librosa pyin identical"]
    headers += ["yin GPE % (voiced frames)", "yin fine (cents)"]
    if pm_python:
        headers += ["praat GPE %", "praat fine (cents)", "praat VDE %"]
    print_table(headers, rows, title="Accuracy: glide 60-1000 Hz with vibrato, 0.5 s voiced / 0.3 s unvoiced")

    y = speech(60, workdir)
    f0, flag, _ = audiokit.pyin(y, **common, fill_na=None)
    times = np.arange(f0.size) * HOP / SR
    lf0, lflag, _ = librosa.pyin(y, **common, fill_na=None)
    agree = np.mean(lflag == flag) * 100
    rows = [["librosa pyin", f"{agree:.1f}", f"{np.median(np.abs(1200 * np.log2(lf0[flag & lflag] / f0[flag & lflag]))):.1f}"]]
    pm = parselmouth_run(pm_python, y, workdir)
    if pm:
        pt, pf = np.asarray(pm["t"]), np.asarray(pm["f0"])
        ours_at = np.interp(pt, times, f0)
        ours_v = np.interp(pt, times, flag.astype(float)) > 0.5
        both = ours_v & (pf > 0)
        cents = 1200 * np.abs(np.log2(pf[both] / ours_at[both]))
        rows.append(
            [
                "praat to_pitch_ac",
                f"{100 * np.mean(ours_v == (pf > 0)):.1f}",
                f"{np.median(cents):.1f} (>20 %: {100 * np.mean(cents > 315.6):.1f} %)",
            ]
        )
    print_table(["vs audiokit pyin, 60 s espeak-ng speech", "voicing agreement %", "median |cents| where both voiced"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, nargs="+", default=[1, 5])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", nargs="+", choices=["pyin", "yin"], default=["pyin", "yin"])
    parser.add_argument("--librosa-max", type=float, default=5.0, help="longest input (minutes) librosa runs on")
    parser.add_argument("--parselmouth", default=None, help="python of a venv with praat-parselmouth")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-accuracy", action="store_true")
    parser.add_argument("--cli", action="store_true", help="also the whole-process CLI rows on a 12 s file")
    args = parser.parse_args()
    import librosa

    print(machine_line({"librosa": librosa.__version__}))
    workdir = Path(tempfile.mkdtemp(prefix="bench-pitch-"))
    try:
        if not args.no_speed:
            speed(args.minutes, args.repeats, args.librosa_max, args.parselmouth, workdir, tuple(args.methods))
        if not args.no_accuracy:
            accuracy(args.parselmouth, workdir)
        if args.cli:
            cli(args.repeats, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

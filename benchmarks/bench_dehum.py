"""Benchmark: audiokit dehum (subtract, erase) against a known-phase oracle and notch-filter chains.

Run ``python benchmarks/bench_dehum.py`` (5 seeds, every case: 2.5 min on 2 idle CPUs, 20 min on a busy machine) or
``--quick`` (2 seeds, 16 kHz with 50 Hz and 48 kHz with 60 Hz: 30 s idle, under 2 min busy).

Cases (every combination)
-------------------------
* **material** (clean signal, 8 s, -20 dBFS RMS):

  - ``speech``: espeak-ng, a different voice, pitch and speed per seed
    (examples/data/speech.wav, from a random offset, when espeak-ng is missing);
  - ``music``: three overlapping held notes (30 ms attack, slow decay, 15
    partials of random amplitudes around 1/p), each with one low partial
    1.5-6 Hz from a hum harmonic (2nd-8th): the steady partials beside the
    lines that a hum estimator must not take for hum;
  - ``speech+music``: both, the music at half the speech's RMS;

* **sample rate** 16 and 48 kHz; **mains** 50 and 60 Hz;
* **hum**: 12 harmonics of amplitude ``(1/k)·10^(U(-3, 3)/20)`` and random
  phases; the fundamental does a random walk (Gaussian-smoothed over 1 s: a
  grid's frequency has inertia) over a random span of 0.1-0.3 Hz inside
  ``nominal ± 0.15 Hz`` (the phase is the integral of the frequency);
* **hum-to-signal ratio (HSR)**: -40, -20 and 0 dB (powers over the file).

Contenders, all on the same mixtures
------------------------------------
* ``oracle``: knows the TRUE phase trajectory ``φ(t)`` of the hum and fits
  the amplitude and phase of every harmonic (cos/sin of ``k·φ``, k = 1..12)
  by least squares over the whole file, then subtracts the fit.  A perfect
  tracker with a plain fit: no estimator that must find f0 and its drift
  can expect to beat it by more than what shrinkage or robust weighting give;
* ``subtract``: ``audiokit.dsp.hum.dehum(x, sr=sr, freq=nominal)`` (the default method);
* ``erase``: the same with ``method="erase"`` (1 s STFT, line bins zeroed);
* ``sox``: ``sox in.wav out.wav bandreject f 2h`` for the 12 nominal harmonics;
* ``notch``: ``scipy.signal.iirnotch(f, Q=f/2)`` + ``filtfilt`` per nominal harmonic.

Metrics
-------
* ``hum``: the error ``output - clean`` projected by least squares onto the
  true hum's harmonic regressors (cos/sin of ``k·φ``, k = 1..12) in 0.5 s
  frames, its energy relative to the same measure of the hum itself (dB;
  the input reads 0 dB);
* ``SDR``: ``10·log10(Σclean² / Σ(output - clean)²)`` (dB); the input's SDR
  is minus the HSR;
* per case the median over seeds and the worst seed (hum: the highest; SDR:
  the lowest);
* ``clean``: how many clean inputs ``dehum`` returned bit for bit;
* speed: ``subtract`` on 30 s of speech+music plus -20 dB hum at 16 kHz mono,
  audio seconds per wall-clock second (median of 3, warm).

Targets (issue 14) are checked at the end: HSR -20 dB within 2 dB of the
oracle (hum and SDR, median seed) and never below the input's SDR; HSR 0 dB
hum <= -30 dB, SDR >= 30 dB and within 1 dB of the oracle; HSR -40 dB never
below the input's SDR; >= 100x real time.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import limit_threads  # noqa: E402

if "numpy" not in sys.modules:  # imported by a script that loaded numpy first: its threads stay as they are
    limit_threads(int(os.environ.get("BENCH_THREADS", "1")))  # before numpy: BLAS threads thrash on a busy machine

import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402
from scipy import signal  # noqa: E402
from scipy.ndimage import gaussian_filter1d  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audiokit.dsp.hum import dehum  # noqa: E402
from audiokit.dsp.resample import resample  # noqa: E402

SECONDS = 8.0  # clean signal length (s)
HARMONICS = 12  # hum harmonics (all below 8 kHz at 16 kHz)
CLEAN_RMS = 0.1  # clean signal RMS (-20 dBFS)
DRIFT_MAX_HZ = 0.15  # the fundamental stays within nominal ± this (Hz)
DRIFT_SPAN_HZ = (0.1, 0.3)  # range of the random walk (Hz)
WALK_RATE_HZ = 100.0  # the random walk's step rate (Hz), smoothed by a Gaussian of ...
WALK_SMOOTH_STEPS = 100  # ... this many steps (1 s: a grid's frequency has inertia)
HUM_SPREAD_DB = 3.0  # each harmonic's amplitude 1/k times 10^(U(-x, x)/20)
FRAME_SECONDS = 0.5  # frame of the hum metric (s)
NOTCH_WIDTH_HZ = 2.0  # sox bandreject and iirnotch bandwidth (Hz)
MUSIC_NOTES = 3  # held notes in the music material
MUSIC_PARTIALS = 15
MUSIC_OFFSET_HZ = (1.5, 6.0)  # a low partial of each note sits this far from a hum harmonic (Hz)
MUSIC_LEVEL = 0.5  # music RMS re speech RMS in speech+music
SPEED_SECONDS = 30.0  # length of the speed test (s)
MATERIALS = ("speech", "music", "speech+music")
HSRS = (-40.0, -20.0, 0.0)
TEXTS = (
    "The quick brown fox jumps over the lazy dog. Hum removal should leave speech untouched.",
    "Please call Stella and ask her to bring these things with her from the store.",
    "A recording whose hum is audible in the pauses but twenty decibels under the voice.",
    "She sells sea shells by the sea shore, and the shells she sells are surely sea shells.",
    "Six spoons of fresh snow peas, five thick slabs of blue cheese, and maybe a snack for her brother.",
)
VOICES = ("en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-us+f3", "en-gb+f2")
BUNDLED = Path(__file__).resolve().parents[1] / "examples" / "data" / "speech.wav"
CONTENDERS = ("oracle", "subtract", "erase", "sox", "notch")


# ----------------------------------------------------------------------------- signals


def _espeak(rng: np.random.Generator) -> tuple[np.ndarray, int] | None:
    exe = shutil.which("espeak-ng")
    if not exe:
        return None
    voice = VOICES[rng.integers(len(VOICES))]
    pitch, speed = int(rng.integers(25, 75)), int(rng.integers(135, 175))
    text = " ".join(TEXTS[i] for i in rng.permutation(len(TEXTS))[:2])
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "speech.wav"
        done = subprocess.run([exe, "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", str(wav), text], capture_output=True)
        if done.returncode != 0 or not wav.exists():
            return None
        x, sr = sf.read(wav, dtype="float64", always_2d=True)
    return x[:, 0], sr


def speech(n: int, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """Speech at ``sr``, cut or zero-padded to ``n`` samples; and where it came from."""
    got = _espeak(rng)
    if got is None:
        x, sr_in = sf.read(BUNDLED, dtype="float64", always_2d=True)
        x = np.roll(x[:, 0], int(rng.integers(len(x))))
        origin = "examples/data/speech.wav"
    else:
        (x, sr_in), origin = got, "espeak-ng"
    y = resample(x[None], sr_in=sr_in, sr_out=sr)[0]
    out = np.zeros(n)
    out[: min(n, len(y))] = y[:n]
    return out, origin


def music(n: int, sr: int, nominal: float, rng: np.random.Generator) -> np.ndarray:
    """Held notes, each with a low partial 1.5-6 Hz from a hum harmonic."""
    t = np.arange(n) / sr
    out = np.zeros(n)
    length = SECONDS / MUSIC_NOTES * 1.6
    for i in range(MUSIC_NOTES):
        while True:
            k, p = int(rng.integers(2, 9)), int(rng.integers(1, 4))
            off = rng.choice((-1, 1)) * rng.uniform(*MUSIC_OFFSET_HZ)
            f = (k * nominal + off) / p
            if 70.0 <= f <= 400.0:
                break
        t0 = max(0.0, i * SECONDS / MUSIC_NOTES - 0.3)
        t1 = min(SECONDS, t0 + length)
        env = np.clip((t - t0) / 0.03, 0, 1) * np.clip((t1 - t) / 0.2, 0, 1) * np.exp(-np.maximum(t - t0, 0) / 4.0)
        for q in range(1, MUSIC_PARTIALS + 1):
            if q * f < sr / 2 - 100:
                amp = 10 ** (rng.uniform(-6, 0) / 20) / q
                out += env * amp * np.sin(2 * np.pi * q * f * t + rng.uniform(0, 2 * np.pi))
    return out


def hum_phase(n: int, sr: int, nominal: float, rng: np.random.Generator) -> np.ndarray:
    """Phase (rad) of a fundamental doing a smoothed random walk inside nominal ± DRIFT_MAX_HZ."""
    span = rng.uniform(*DRIFT_SPAN_HZ)
    centre = rng.uniform(-(DRIFT_MAX_HZ - span / 2), DRIFT_MAX_HZ - span / 2)
    steps = np.cumsum(rng.standard_normal(int(n / sr * WALK_RATE_HZ) + 2))
    walk = gaussian_filter1d(steps, WALK_SMOOTH_STEPS)
    walk = (walk - walk.min()) / (walk.max() - walk.min())
    f = nominal + centre + span * (np.interp(np.arange(n) * WALK_RATE_HZ / sr, np.arange(len(walk)), walk) - 0.5)
    return 2 * np.pi * np.concatenate([[0.0], np.cumsum(f[:-1])]) / sr


@dataclass
class Case:
    clean: np.ndarray
    hum: np.ndarray  # at 0 dB HSR
    phase: np.ndarray
    origin: str


def make_case(material: str, sr: int, nominal: float, seed: int) -> Case:
    rng = np.random.default_rng([seed, sr, int(nominal), MATERIALS.index(material)])
    n = int(SECONDS * sr)
    origin = "synthetic"
    if material == "speech":
        clean, origin = speech(n, sr, rng)
    elif material == "music":
        clean = music(n, sr, nominal, rng)
    else:
        s, origin = speech(n, sr, rng)
        m = music(n, sr, nominal, rng)
        clean = s / np.sqrt(np.mean(s**2)) + MUSIC_LEVEL * m / np.sqrt(np.mean(m**2))
    clean *= CLEAN_RMS / np.sqrt(np.mean(clean**2))
    phase = hum_phase(n, sr, nominal, rng)
    amps = 10 ** (rng.uniform(-HUM_SPREAD_DB, HUM_SPREAD_DB, HARMONICS) / 20) / np.arange(1, HARMONICS + 1)
    thetas = rng.uniform(0, 2 * np.pi, HARMONICS)
    hum = sum(a * np.cos(k * phase + th) for k, a, th in zip(range(1, HARMONICS + 1), amps, thetas, strict=True))
    hum *= np.sqrt(np.mean(clean**2) / np.mean(hum**2))
    return Case(clean, hum, phase, origin)


# ----------------------------------------------------------------------------- metrics


def basis(phase: np.ndarray) -> np.ndarray:
    """cos/sin of ``k·phase``, k = 1..HARMONICS, shape (n, 2·HARMONICS)."""
    return np.stack([f(k * phase) for k in range(1, HARMONICS + 1) for f in (np.cos, np.sin)], axis=1)


class HumProjector:
    """Least squares on the true harmonic regressors per 0.5 s frame (normal equations, factored once).

    ``energy(e)`` = ``Σ_frames bᵀ G⁻¹ b`` with ``G = BᵀB``, ``b = Bᵀe`` for the
    frame's regressors ``B`` (cos/sin of ``k·φ``): the energy of ``e``
    explained by the hum's harmonics, frame by frame.
    """

    def __init__(self, phase: np.ndarray, sr: int):
        self.size = int(FRAME_SECONDS * sr)
        self.frames = len(phase) // self.size
        self.b = np.stack([basis(phase[i * self.size : (i + 1) * self.size]) for i in range(self.frames)])
        self.ginv = np.linalg.inv(np.einsum("fli,flj->fij", self.b, self.b))

    def energy(self, e: np.ndarray) -> float:
        rhs = np.einsum("fl,fli->fi", e[: self.frames * self.size].reshape(self.frames, self.size), self.b)
        return float(np.einsum("fi,fij,fj->", rhs, self.ginv, rhs))


def sdr(ref: np.ndarray, est: np.ndarray) -> float:
    err = np.sum((est - ref) ** 2)
    return math.inf if err == 0 else 10 * math.log10(np.sum(ref**2) / err)


# ----------------------------------------------------------------------------- contenders


def run_oracle(x: np.ndarray, sr: int, nominal: float, phase: np.ndarray, tmp: Path) -> np.ndarray:
    b = basis(phase)
    coef = np.linalg.solve(b.T @ b, b.T @ x)  # least squares over the whole file
    return x - b @ coef


def run_subtract(x, sr, nominal, phase, tmp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dehum(x, sr=sr, freq=nominal).output


def run_erase(x, sr, nominal, phase, tmp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dehum(x, sr=sr, freq=nominal, method="erase").output


def run_sox(x, sr, nominal, phase, tmp):
    src, dst = tmp / "in.wav", tmp / "out.wav"
    sf.write(src, x.astype(np.float32), sr, subtype="FLOAT")
    chain = [a for k in range(1, HARMONICS + 1) for a in ("bandreject", f"{nominal * k:g}", f"{NOTCH_WIDTH_HZ:g}h")]
    subprocess.run(["sox", "-D", str(src), "-e", "floating-point", "-b", "32", str(dst), *chain], check=True, capture_output=True)
    return sf.read(dst, dtype="float64")[0]


def run_notch(x, sr, nominal, phase, tmp):
    y = x
    for k in range(1, HARMONICS + 1):
        f = nominal * k
        b, a = signal.iirnotch(f, f / NOTCH_WIDTH_HZ, fs=sr)
        y = signal.filtfilt(b, a, y)
    return y


RUNNERS = {"oracle": run_oracle, "subtract": run_subtract, "erase": run_erase, "sox": run_sox, "notch": run_notch}


def speed(seed: int = 0) -> tuple[float, float]:
    """Audio seconds per second of ``dehum`` (subtract) at 16 kHz mono, median of 3: (wall clock, process CPU)."""
    sr, nominal = 16000, 50.0
    rng = np.random.default_rng(seed)
    n = int(SPEED_SECONDS * sr)
    reps = int(math.ceil(SPEED_SECONDS / SECONDS))
    case = make_case("speech+music", sr, nominal, seed)
    clean = np.tile(case.clean, reps)[:n]
    hum = np.tile(case.hum, reps)[:n]  # phase jumps at the joins do not matter for timing
    x = clean + 0.1 * hum + 1e-4 * rng.standard_normal(n)
    run_subtract(x, sr, nominal, None, None)  # warm
    wall, cpu = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        run_subtract(x, sr, nominal, None, None)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return SPEED_SECONDS / statistics.median(wall), SPEED_SECONDS / statistics.median(cpu)


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds; 16 kHz with 50 Hz and 48 kHz with 60 Hz")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per case (default 5, --quick 2)")
    parser.add_argument("--only", nargs="*", default=None, help="contenders to run (default all)")
    args = parser.parse_args(argv)
    seeds = range(args.seeds if args.seeds is not None else (2 if args.quick else 5))
    grid = [(16000, 50.0), (48000, 60.0)] if args.quick else [(sr, f) for sr in (16000, 48000) for f in (50.0, 60.0)]
    names = [c for c in CONTENDERS if args.only is None or c in args.only]
    if "sox" in names and shutil.which("sox") is None:
        print("sox not found: skipped (apt-get install -y sox)")
        names.remove("sox")
    origins: set[str] = set()
    rows = []  # (material, sr, nominal, hsr, input SDRs, {name: [(hum, sdr) per seed]})
    clean_same, clean_total = 0, 0
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for material in MATERIALS:
            for sr, nominal in grid:
                per_hsr = {h: ([], {n: [] for n in names}) for h in HSRS}
                for seed in seeds:
                    case = make_case(material, sr, nominal, seed)
                    origins.add(case.origin)
                    if "subtract" in names:
                        clean_total += 1
                        clean_same += bool(np.array_equal(run_subtract(case.clean, sr, nominal, None, tmp), case.clean))
                    proj = HumProjector(case.phase, sr)
                    for hsr in HSRS:
                        h = case.hum * 10 ** (hsr / 20)
                        x = case.clean + h
                        ref = proj.energy(h)
                        inputs, results = per_hsr[hsr]
                        inputs.append(sdr(case.clean, x))
                        for name in names:
                            y = RUNNERS[name](x, sr, nominal, case.phase, tmp)
                            rem = 10 * math.log10(max(proj.energy(y - case.clean), 1e-300) / ref)
                            results[name].append((rem, sdr(case.clean, y)))
                for hsr in HSRS:
                    rows.append((material, sr, nominal, hsr, *per_hsr[hsr]))
    elapsed = time.perf_counter() - t_start
    print(
        f"clean: {', '.join(sorted(origins))}; {SECONDS:g} s; hum {HARMONICS} harmonics, drift within "
        f"±{DRIFT_MAX_HZ} Hz; {len(seeds)} seeds per case; hum = remaining hum re the hum (dB, median / worst seed);"
        f" SDR (dB, median / worst seed)"
    )
    head = f"| {'material':12s} | {'sr':>5s} | {'f':>3s} | {'HSR':>4s} | {'in SDR':>6s} |"
    head += "".join(f" {n + ' hum':>14s} | {n + ' SDR':>14s} |" for n in names)
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    med = {}
    for material, sr, nominal, hsr, inputs, results in rows:
        line = f"| {material:12s} | {sr // 1000:>4d}k | {nominal:3.0f} | {hsr:4.0f} | {statistics.median(inputs):6.1f} |"
        for n in names:
            hums = [r[0] for r in results[n]]
            sdrs = [r[1] for r in results[n]]
            med[(material, sr, nominal, hsr, n)] = (
                statistics.median(hums),
                statistics.median(sdrs),
                max(hums),
                min(sdrs),
                min(s - i for s, i in zip(sdrs, inputs, strict=True)),
            )
            line += f" {statistics.median(hums):6.1f} / {max(hums):5.1f} | {statistics.median(sdrs):6.1f} / {min(sdrs):5.1f} |"
        print(line)
    if "subtract" in names:
        print(f"\nclean inputs returned bit for bit by subtract: {clean_same} of {clean_total}")
    if {"subtract", "oracle"} <= set(names):
        print("\ntargets (subtract vs oracle; d = subtract - oracle, dB):")
        misses = 0
        for material, sr, nominal, hsr, _, _ in rows:
            h, s, _, _, worst_gain = med[(material, sr, nominal, hsr, "subtract")]
            oh, os_, _, _, _ = med[(material, sr, nominal, hsr, "oracle")]
            checks = []
            if hsr == -20:
                checks = [
                    ("hum d<=2", h - oh <= 2, h - oh),
                    ("SDR d>=-2", s - os_ >= -2, s - os_),
                    ("worst SDR-in>=0", worst_gain >= 0, worst_gain),
                ]
            elif hsr == 0:
                checks = [
                    ("hum<=-30", h <= -30, h),
                    ("SDR>=30", s >= 30, s),
                    ("hum d<=1", h - oh <= 1, h - oh),
                    ("SDR d>=-1", s - os_ >= -1, s - os_),
                ]
            elif hsr == -40:
                checks = [("worst SDR-in>=0", worst_gain >= 0, worst_gain)]
            bad = [f"{name} {value:+.1f}" for name, ok, value in checks if not ok]
            misses += bool(bad)
            status = "ok" if not bad else "MISS " + "; ".join(bad)
            print(f"  {material:12s} {sr // 1000:>2d}k {nominal:3.0f} Hz HSR {hsr:+4.0f}: {status}")
        print(f"  {misses} of {len(rows)} cases miss a target")
    if "subtract" in names:
        wall, cpu = speed()
        print(
            f"\nspeed: subtract at 16 kHz mono, {SPEED_SECONDS:g} s, one thread: {wall:.0f}x real time by the wall clock, "
            f"{cpu:.0f}x by process CPU time (target >= 100; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
        )
    print(f"(benchmark ran {elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

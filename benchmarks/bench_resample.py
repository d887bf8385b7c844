"""Benchmark: audiokit resample vs soxr and scipy on one generated 44.1 kHz file.

Run ``python benchmarks/bench_resample.py`` (``--seconds 60`` for a quick look).
One run times every contender on the same generated signal (low-pass tilted
noise plus tones, float32, mono, 44.1 kHz -> 16 kHz by default), prints the median wall time of
``--repeats`` runs and the ratio to soxr HQ called directly, and measures on
1-second tones what each achieves:

* alias: the worst residue (dB re the tone) of tones at 1.002, 1.05, 1.1 and
  1.5 x the new Nyquist, which must vanish (target <= -120 dB);
* ripple: the worst passband gain error (dB) of tones up to 0.9 x the new Nyquist
  (target <= 0.01 dB).

Timing runs go round-robin over the contenders so that load from other
processes (2 shared cores) spreads over all of them.

Both are read with one joint least-squares sine fit, which has no window
leakage, so residues near -180 dB are measurable.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from math import gcd
from pathlib import Path

import numpy as np
import soxr
from scipy import signal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audiokit.dsp.resample import Resampler, kaiser_lowpass, resample  # noqa: E402


def generate(seconds: float, sr: int, channels: int, seed: int = 0) -> np.ndarray:
    """Test signal shaped (channels, n), float32: low-pass tilted noise at -20 dBFS RMS plus three tones."""
    rng = np.random.default_rng(seed)
    n = int(seconds * sr)
    noise = signal.lfilter([1.0], [1.0, -0.9], rng.standard_normal((channels, n)), axis=1)
    noise *= 0.1 / np.std(noise)
    t = np.arange(n) / sr
    tones = sum(0.1 * np.sin(2 * np.pi * f * t) for f in (440.0, 5000.0, 12000.0))
    return (noise + tones).astype(np.float32)


def fit_amplitudes(y: np.ndarray, freqs: list[float], sr: int, trim: int) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)[trim : len(y) - trim]
    n = np.arange(trim, trim + len(y))
    cols = []
    for f in freqs:
        w = 2 * np.pi * f / sr
        cols += [np.cos(w * n), np.sin(w * n)]
    coef, *_ = np.linalg.lstsq(np.stack(cols, axis=1), y, rcond=None)
    return np.hypot(coef[0::2], coef[1::2])


def quality(fn, sr_in: int, sr_out: int) -> tuple[float, float]:
    """(worst alias dB, worst passband gain error dB) of ``fn(x (1, n) float32) -> (1, m)``."""
    t = np.arange(sr_in) / sr_in
    trim = sr_out // 20
    worst_alias = -np.inf
    for r in (1.002, 1.05, 1.1, 1.5):
        f = r * sr_out / 2
        if f >= 0.99 * sr_in / 2:
            continue
        y = fn(np.sin(2 * np.pi * f * t).astype(np.float32)[None])[0]
        alias = sr_out - f % sr_out if f % sr_out > sr_out / 2 else f % sr_out
        worst_alias = max(worst_alias, 20 * np.log10(fit_amplitudes(y, [alias], sr_out, trim)[0]))
    freqs = list(np.linspace(0.01, 0.9, 8) * min(sr_in, sr_out) / 2)
    x = sum(0.1 * np.sin(2 * np.pi * f * t + i) for i, f in enumerate(freqs)).astype(np.float32)[None]
    gains = 20 * np.log10(fit_amplitudes(fn(x)[0], freqs, sr_out, trim) / 0.1)
    return float(worst_alias), float(np.max(np.abs(gains)))


def time_round_robin(contenders: list, x: np.ndarray) -> dict[str, tuple[float, int]]:
    """Median wall time (s) and run count per contender ``(name, fn, repeats[, quality_fn])``.

    Runs go round-robin (one call of each contender per round, after one
    untimed warm-up round), so a change in machine load hits all of them alike.
    """
    times: dict[str, list[float]] = {name: [] for name, *_ in contenders}
    for _name, fn, repeats, *_ in contenders:
        if repeats > 1:
            fn(x)
    for round_ in range(max(c[2] for c in contenders)):
        for name, fn, repeats, *_ in contenders:
            if round_ < repeats:
                start = time.perf_counter()
                fn(x)
                times[name].append(time.perf_counter() - start)
        print(f"  round {round_ + 1} done", file=sys.stderr)
    return {name: (statistics.median(t), len(t)) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="signal length (default 600 = 10 min)")
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--sr-in", type=int, default=44100)
    parser.add_argument("--sr-out", type=int, default=16000)
    parser.add_argument("--repeats", type=int, default=5, help="runs per fast contender (median)")
    parser.add_argument("--slow-repeats", type=int, default=1, help="runs of the long-filter scipy path")
    parser.add_argument("--block", type=int, default=1 << 16, help="block size of the streaming run")
    args = parser.parse_args()
    sr_in, sr_out = args.sr_in, args.sr_out
    g = gcd(sr_in, sr_out)
    up, down = sr_out // g, sr_in // g
    h = kaiser_lowpass(up, down)

    def stream_blocks(x: np.ndarray) -> list[np.ndarray]:
        # Blocks as a pipeline would write them; timed without joining them.
        rs = Resampler(sr_in=sr_in, sr_out=sr_out, channels=x.shape[0], dtype=x.dtype)
        parts = [rs.process(x[:, i : i + args.block]) for i in range(0, x.shape[1], args.block)]
        parts.append(rs.flush())
        return parts

    def stream(x: np.ndarray) -> np.ndarray:
        return np.concatenate(stream_blocks(x), axis=1)

    contenders = [
        ("audiokit resample (high)", lambda x: resample(x, sr_in=sr_in, sr_out=sr_out), args.repeats),
        (f"audiokit Resampler, {args.block}-sample blocks", stream_blocks, args.repeats, stream),
        ("audiokit resample (very-high)", lambda x: resample(x, sr_in=sr_in, sr_out=sr_out, quality="very-high"), args.repeats),
        # soxr takes (n, channels); x.T is a view of the (channels, n) array.
        ("soxr.resample HQ (direct)", lambda x: soxr.resample(x.T, sr_in, sr_out, quality="HQ").T, args.repeats),
        ("soxr.resample VHQ (direct)", lambda x: soxr.resample(x.T, sr_in, sr_out, quality="VHQ").T, args.repeats),
        (
            "scipy resample_poly, default filter",
            lambda x: signal.resample_poly(x, up, down, axis=1).astype(np.float32),
            args.repeats,
        ),
        (
            f"scipy resample_poly, Kaiser {len(h)} taps",
            lambda x: signal.resample_poly(x, up, down, axis=1, window=h).astype(np.float32),
            args.slow_repeats,
        ),
    ]

    x = generate(args.seconds, sr_in, args.channels)
    print(
        f"input: {args.seconds:g} s, {args.channels} channel(s) float32, {sr_in} Hz -> {sr_out} Hz "
        f"({x.shape[1]} -> {round(x.shape[1] * sr_out / sr_in)} samples); soxr {soxr.__version__}"
    )
    timed = time_round_robin(contenders, x)
    rows = []
    for name, fn, _, *measured_fn in contenders:
        alias, ripple = quality(measured_fn[0] if measured_fn else fn, sr_in, sr_out)
        rows.append((name, *timed[name], alias, ripple))
    reference = next(r[1] for r in rows if r[0].startswith("soxr.resample HQ"))
    print(f"{'contender':44s} {'median s':>9s} {'runs':>4s} {'x soxr HQ':>9s} {'alias dB':>9s} {'ripple dB':>10s}")
    for name, seconds, repeats, alias, ripple in rows:
        print(f"{name:44s} {seconds:9.4f} {repeats:4d} {seconds / reference:9.2f} {alias:9.1f} {ripple:10.5f}")
    print("targets: alias <= -120 dB, ripple <= 0.01 dB up to 0.9 x new Nyquist; speed <= 1.5 x soxr HQ")


if __name__ == "__main__":
    main()

"""Benchmark: audiokit Griffin-Lim against librosa.griffinlim on the same magnitude, one run, interleaved.

Run ``python benchmarks/bench_griffinlim.py`` (30 s of the generated test signal at 16 kHz, 32 iterations,
momentum 0.99, 3 timed rounds) or ``--quick`` (10 s, 1 round).  Threads are limited to 1 (BLAS, FFTW).

Cases: librosa's default framing (n_fft 2048, hop 512) and a speech framing (n_fft 512, hop 128), float32
and float64 magnitudes, both with ``center=True``, constant padding, periodic Hann and the same seed, so the
two programs compute the same thing.  Columns: median seconds, the speed-up (librosa / audiokit), the
relative difference of the outputs (max |a - b| / max |b|) and the spectral convergence of each output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import limit_threads, machine_line, print_table, test_signal, time_interleaved, versions  # noqa: E402

limit_threads(1)

import numpy as np  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--iters", type=int, default=32)
    args = parser.parse_args()
    import librosa

    from audiokit.dsp.griffinlim import griffinlim, spectral_convergence
    from audiokit.dsp.stft import StftPlan

    seconds, repeats = (10.0, 1) if args.quick else (30.0, 3)
    sr = 16000
    print(machine_line(versions("numpy", "scipy", "librosa", "pyfftw")))
    rows = []
    x64 = np.asarray(test_signal(seconds, sr), dtype=np.float64).reshape(-1)
    for dtype in (np.float32, np.float64):
        for n_fft, hop in ((2048, 512), (512, 128)):
            x = x64.astype(dtype)
            S = np.abs(librosa.stft(x, n_fft=n_fft, hop_length=hop))
            plan = StftPlan(sr=sr, win_length=n_fft, hop_length=hop, n_fft=n_fft, center=True)
            funcs = {
                "librosa": lambda S=S, n_fft=n_fft, hop=hop: librosa.griffinlim(
                    S, n_iter=args.iters, hop_length=hop, n_fft=n_fft, random_state=0
                ),
                "audiokit": lambda S=S, plan=plan: griffinlim(S, plan, n_iter=args.iters, random_state=0).y,
            }
            t = time_interleaved(funcs, repeats)
            a, b = t["audiokit"].result, t["librosa"].result
            diff = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
            sc = [spectral_convergence(S, librosa.stft(y, n_fft=n_fft, hop_length=hop)) for y in (a, b)]
            lib, ours = t["librosa"].median, t["audiokit"].median
            rows.append(
                [
                    np.dtype(dtype).name,
                    f"{n_fft}/{hop}",
                    S.shape[-1],
                    f"{lib:.3f}",
                    f"{ours:.3f}",
                    f"{lib / ours:.2f}x",
                    f"{diff:.1e}",
                    f"{sc[0]:.5f}",
                    f"{sc[1]:.5f}",
                ]
            )
    print_table(
        ["dtype", "n_fft/hop", "frames", "librosa s", "audiokit s", "speed-up", "rel. diff", "SC audiokit", "SC librosa"],
        rows,
        title=f"Griffin-Lim, {args.iters} iterations, momentum 0.99, {seconds:g} s at {sr} Hz",
    )


if __name__ == "__main__":
    main()

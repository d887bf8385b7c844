"""Benchmark: audiokit STFT power, log-mel and istft against librosa (and scipy, numpy), one thread.

Run ``python benchmarks/bench_stft.py`` (1 hour of 16 kHz audio, 5 repeats;
``--quick`` for 60 s).  Every contender gets the same generated float32 signal
(AR(1) low-pass noise plus tones at 440, 1000 and 3000 Hz) in the same run.

Threads: ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` and
``AUDIOKIT_FFT_THREADS`` are set to 1 before numpy is imported, for every
contender (numpy.fft/pocketfft and scipy.fft with the default ``workers=1``
are single-threaded anyway; librosa's mel product goes through BLAS).
``OPENBLAS_CORETYPE`` is left as found and printed.

Sections (25 ms / 10 ms at 16 kHz: win_length 400, hop 160, n_fft 512, the
periodic Hann window centred in the 512-sample frame; ``center=True`` with
zero padding, ``pad_mode='constant'``, on every side):

1. STFT power ``|X|**2`` (257 x n_frames):
   * audiokit ``spectrogram(x, StftPlan(sr=16000, win_length=400, hop_length=160,
     n_fft=512, center=True))`` (float32 in, float32 out; default FFT backend, i.e. FFTW),
     and the same with ``backend=get_backend("scipy")`` for context;
   * librosa ``np.abs(librosa.stft(x, n_fft=512, hop_length=160, win_length=400,
     center=True, pad_mode="constant"))**2``;
   * scipy ``ShortTimeFFT(hann(400, periodic) float32, hop=160, fs=16000, mfft=512,
     scale_to=None).spectrogram(x, p0=0, p1=n_frames)`` (same frames: window
     centred on sample m*hop; float64 output);
   * numpy: ``np.pad`` by 256, ``sliding_window_view`` frames, multiply by the
     padded window, ``np.fft.rfft``, ``np.abs(.)**2``, all frames at once.
2. Log-mel, 80 bands, Slaney mel scale and Slaney area normalisation on both
   sides (librosa's defaults), ``power_to_db`` defaults (ref 1, amin 1e-10,
   top_db 80):
   * audiokit ``log_melspectrogram(x, plan, n_mels=80, scale="slaney", norm="slaney",
     ref=1.0, top_db=80.0)``;
   * librosa ``power_to_db(feature.melspectrogram(y=x, sr=16000, n_fft=512,
     hop_length=160, win_length=400, n_mels=80, center=True, pad_mode="constant",
     htk=False, norm="slaney"))``.
3. istft of one complex64 STFT (audiokit's, of the same plan), ``length=len(x)``:
   audiokit ``plan.istft(X, length=n)`` vs ``librosa.istft(X, hop_length=160,
   win_length=400, n_fft=512, center=True, length=n)``.

Reported per contender: median wall time over ``--repeats`` (contenders
alternate within each round), min-max, the first (untimed) call separately
(FFTW planning or wisdom loading), ratio = contender median / audiokit median
(> 1: audiokit is faster), peak memory traced by ``tracemalloc`` during one
call (numpy buffers incl. the result; not FFTW's internal plan memory), and
the accuracy against librosa computed from the warm-up results of the same
run.  Targets from the issue are shown as met / MISSED; nothing asserts.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import limit_threads  # noqa: E402

limit_threads(1)  # before numpy is imported, for every contender

import argparse  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.signal  # noqa: E402
from common import (  # noqa: E402
    fmt_mib,
    fmt_ratio,
    fmt_s,
    machine_line,
    print_table,
    target_status,
    test_signal,
    time_interleaved,
    traced_peak_mb,
    versions,
)

SR = 16000
WIN, HOP, NFFT, N_MELS = 400, 160, 512, 80
TARGETS = {"stft": 4.0, "mel": 3.0, "istft": 5.0}


def max_rel(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b| (relative to the reference's peak; elementwise ratios near 0 are noise)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return float("nan")
    return float(np.max(np.abs(a.astype(np.float64) - b)) / np.max(np.abs(b)))


def measured_plans(fn):
    """``fn`` with the FFTW plans it makes chosen by ``FFTW_MEASURE`` (timing), as before 0.2.0; for the cost figure.

    ``audiokit.engine.fftw.new_fftw`` reads the planner flag when it plans (on a backend's first call for a
    shape); later calls run the plans made then.  FFTW_MEASURE overwrites the arrays it plans on, so the first call
    (planning) is run twice and the second result returned.  Not deterministic across processes: the point of 0.2.0.
    """
    import audiokit.engine.fftw as fftw_module

    planned = []

    def call():
        saved, fftw_module.PLANNER_FLAG = fftw_module.PLANNER_FLAG, "FFTW_MEASURE"
        try:
            if not planned:
                fn()
                planned.append(True)
            return fn()
        finally:
            fftw_module.PLANNER_FLAG = saved

    return call


def section(
    title: str, funcs: dict, repeats: int, audiokit_key: str, target_key: str, librosa_key: str, compare, memory: bool
) -> list[list[str]]:
    """Warm up (first calls, accuracy against librosa's result), time ``funcs`` interleaved; return table rows.

    ``compare(result, reference) -> str`` describes the accuracy of one result.
    """
    print(f"# {title}: first calls ...", file=sys.stderr)
    first, acc, dtypes = {}, {}, {}
    order = [librosa_key] + [k for k in funcs if k != librosa_key]
    ref = None
    for name in order:
        gc.collect()
        t0 = time.perf_counter()
        out = funcs[name]()
        first[name] = time.perf_counter() - t0
        dtypes[name] = str(out.dtype) if isinstance(out, np.ndarray) else ""
        if name == librosa_key:
            ref = out
        else:
            acc[name] = compare(out, ref)
        del out
    del ref
    gc.collect()
    print(f"# {title}: {repeats} rounds ...", file=sys.stderr)
    res = time_interleaved(funcs, repeats, warmup=False, label=title)
    peaks = {}
    for name, fn in funcs.items():
        gc.collect()
        peaks[name] = traced_peak_mb(fn) if memory else None
    base = res[audiokit_key].median
    rows = []
    for name, t in res.items():
        ratio = t.median / base
        rows.append(
            [
                title,
                name,
                fmt_s(t.median),
                t.spread,
                fmt_s(first[name]),
                fmt_ratio(ratio),
                fmt_mib(peaks[name]),
                dtypes[name],
                acc.get(name, "(reference)"),
                target_status(ratio, TARGETS[target_key]) if name == librosa_key else "",
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="60 s of audio (unless --seconds), 3 repeats (unless --repeats)")
    ap.add_argument("--seconds", type=float, default=None, help="signal length (default 3600, --quick 60)")
    ap.add_argument("--repeats", type=int, default=None, help="timed rounds (default 5, --quick 3)")
    ap.add_argument("--only", nargs="+", choices=["stft", "mel", "istft"], default=["stft", "mel", "istft"])
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc peak (one extra call each)")
    ap.add_argument(
        "--measured-plans",
        action="store_true",
        help="add audiokit with FFTW_MEASURE plans (the engine before 0.2.0, timing-chosen): the cost of deterministic plans",
    )
    args = ap.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (60.0 if args.quick else 3600.0)
    repeats = args.repeats if args.repeats is not None else (3 if args.quick else 5)
    memory = not args.no_memory

    import librosa

    from audiokit.dsp.mel import log_melspectrogram, melspectrogram
    from audiokit.dsp.stft import StftPlan, spectrogram
    from audiokit.engine import get_backend
    from audiokit.engine.fftw import FftwBackend

    ver = versions("numpy", "scipy", "librosa", "pyfftw", "audiokit")
    print("# " + machine_line({"threads": "1 (OMP/OPENBLAS/MKL/AUDIOKIT_FFT_THREADS=1)"}))
    print("# " + ", ".join(f"{k} {v}" for k, v in ver.items()) + f"; audiokit FFT backend {get_backend().name}")
    print(
        f"# input: {seconds:g} s at {SR} Hz float32 mono ({int(seconds * SR)} samples); "
        f"win {WIN}, hop {HOP}, n_fft {NFFT}, periodic hann, center=True (zeros); repeats {repeats}; "
        "torchaudio: not measured (not installed)"
    )

    t0 = time.perf_counter()
    x = test_signal(seconds, SR)
    n = x.size
    print(f"# signal generated in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    plan = StftPlan(sr=SR, win_length=WIN, hop_length=HOP, n_fft=NFFT, center=True, pad_mode="constant")
    m = plan.n_frames(n)
    scipy_be = get_backend("scipy")
    measure_be = FftwBackend()  # its plans are made inside measured_plans(), with FFTW_MEASURE

    headers = [
        "section",
        "contender",
        "median",
        "min-max",
        "first call",
        "ratio vs audiokit",
        "peak MiB",
        "dtype",
        "accuracy vs librosa",
        "target",
    ]
    rows: list[list[str]] = []

    if "stft" in args.only:
        w32 = scipy.signal.get_window("hann", WIN, fftbins=True).astype(np.float32)
        sft = scipy.signal.ShortTimeFFT(w32, hop=HOP, fs=SR, mfft=NFFT, scale_to=None)
        vwin = np.zeros(NFFT, np.float32)
        off = (NFFT - WIN) // 2
        vwin[off : off + WIN] = w32

        def numpy_power():
            p = np.pad(x, NFFT // 2)
            frames = np.lib.stride_tricks.sliding_window_view(p, NFFT)[::HOP][:m]
            spec = np.fft.rfft(frames * vwin, axis=-1)
            return (np.abs(spec) ** 2).T

        funcs = {
            "audiokit spectrogram": lambda: spectrogram(x, plan),
            "audiokit (scipy backend)": lambda: spectrogram(x, plan, backend=scipy_be),
            "librosa |stft|**2": lambda: (
                np.abs(librosa.stft(x, n_fft=NFFT, hop_length=HOP, win_length=WIN, center=True, pad_mode="constant")) ** 2
            ),
            "scipy ShortTimeFFT": lambda: sft.spectrogram(x, p0=0, p1=m),
            "numpy frames+rfft": numpy_power,
        }
        if args.measured_plans:
            funcs["audiokit, FFTW_MEASURE plans"] = measured_plans(lambda: spectrogram(x, plan, backend=measure_be))
        rows += section(
            "STFT power",
            funcs,
            repeats,
            "audiokit spectrogram",
            "stft",
            "librosa |stft|**2",
            lambda a, b: f"max rel {max_rel(a, b):.1e}",
            memory,
        )
        gc.collect()

    if "mel" in args.only:
        mel_kw = dict(
            sr=SR,
            n_fft=NFFT,
            hop_length=HOP,
            win_length=WIN,
            n_mels=N_MELS,
            center=True,
            pad_mode="constant",
            htk=False,
            norm="slaney",
        )
        funcs = {
            "audiokit log_melspectrogram": lambda: log_melspectrogram(
                x, plan, n_mels=N_MELS, scale="slaney", norm="slaney", ref=1.0, top_db=80.0
            ),
            "librosa power_to_db(melspectrogram)": lambda: librosa.power_to_db(librosa.feature.melspectrogram(y=x, **mel_kw)),
        }
        if args.measured_plans:
            funcs["audiokit, FFTW_MEASURE plans"] = measured_plans(
                lambda: log_melspectrogram(
                    x, plan, n_mels=N_MELS, scale="slaney", norm="slaney", ref=1.0, top_db=80.0, backend=measure_be
                )
            )
        print("# mel: linear mel accuracy ...", file=sys.stderr)
        lin_err = max_rel(
            melspectrogram(x, plan, n_mels=N_MELS, scale="slaney", norm="slaney"), librosa.feature.melspectrogram(y=x, **mel_kw)
        )
        gc.collect()
        rows += section(
            "log-mel 80 (slaney)",
            funcs,
            repeats,
            "audiokit log_melspectrogram",
            "mel",
            "librosa power_to_db(melspectrogram)",
            lambda a, b: f"mel max rel {lin_err:.1e}; dB max abs {np.max(np.abs(a.astype(np.float64) - b)):.1e}",
            memory,
        )
        gc.collect()

    if "istft" in args.only:
        X = plan.stft(x)  # complex64, (257, m)
        funcs = {
            "audiokit plan.istft": lambda: plan.istft(X, length=n),
            "librosa.istft": lambda: librosa.istft(X, hop_length=HOP, win_length=WIN, n_fft=NFFT, center=True, length=n),
        }
        rows += section(
            "istft",
            funcs,
            repeats,
            "audiokit plan.istft",
            "istft",
            "librosa.istft",
            lambda a, b: f"max rel {max_rel(a, b):.1e}; vs x {max_rel(a, x):.1e} (librosa vs x {max_rel(b, x):.1e})",
            memory,
        )
        del X
        gc.collect()

    print_table(headers, rows, title=f"bench_stft: {seconds:g} s of 16 kHz audio, one thread, medians of {repeats}")
    print(
        "\nratio = contender median / audiokit median (> 1: audiokit faster); target applies to the librosa row "
        f"(STFT >= {TARGETS['stft']:g}x, log-mel >= {TARGETS['mel']:g}x, istft >= {TARGETS['istft']:g}x)."
    )
    print("accuracy: max |a - ref| / max |ref| against librosa's result of the same run (dB: max absolute difference).")
    print("peak MiB: tracemalloc peak of one call, result included; first call: untimed warm-up (FFTW planning).")
    print(f"# load avg at the end {__import__('os').getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

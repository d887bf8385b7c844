"""Benchmark: Kaldi fbank and MFCC (audiokit.dsp.kaldi) against kaldi-native-fbank and librosa, one thread.

Run ``python benchmarks/bench_features.py`` (1 hour of 16 kHz audio, 3 repeats; ``--quick``
for 60 s).  Every contender gets the same generated float32 signal (AR(1) low-pass noise plus
tones, :func:`common.test_signal`) in the same run.  ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``AUDIOKIT_FFT_THREADS`` are 1 before numpy
is imported.

Sections:

1. **Kaldi fbank** (``compute-fbank-feats`` defaults: 25 ms / 10 ms, povey, 23 bins,
   ``snip_edges``, dither 0), frames x 23:
   * audiokit ``kaldi_fbank(x, sr=16000)`` (float64, the library default) and ``dtype=np.float32`` (what ``mel
     --compat kaldi`` computes); ``--fbank-bins 80`` for the bands of ``mel --compat kaldi --n-mels 80``;
   * kaldi-native-fbank ``OnlineFbank``: one ``accept_waveform(16000, x * 32768)`` over the
     whole signal + ``input_finished()`` (its computation), and the same followed by the
     ``get_frame`` loop that gathers the frames into one array (what a caller needs).
2. **Kaldi MFCC** (``compute-mfcc-feats`` defaults: 13 cepstra, lifter 22, energy), same
   contenders with ``kaldi_mfcc`` / ``OnlineMfcc``, plus ``librosa.feature.mfcc`` at the same
   framing (n_fft 512, hop 160, win 400, 23 mels, 13 cepstra; librosa's own mel/dB pipeline).
3. **librosa-style MFCC** (``librosa.feature.mfcc(y, sr=16000, n_fft=512, hop_length=160,
   win_length=400)``: 128 Slaney mels, power_to_db, 20 cepstra, DCT-II ortho): audiokit
   ``features.mfcc(log_melspectrogram(x, plan, n_mels=128, scale="slaney", norm="slaney"))``
   vs librosa, with the accuracy against librosa.

Reported: median wall time over ``--repeats`` (contenders alternate in each round), min-max,
the first call, ratio = contender median / audiokit (float64) median, peak memory traced by
``tracemalloc`` during one call (numpy buffers; not C++ heaps: kaldi-native-fbank keeps its
frames in its own memory), and the accuracy of section 1/2 against kaldi-native-fbank.
Targets (issue 11): >= 3x kaldi-native-fbank (its computation alone), >= 5x librosa.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import limit_threads  # noqa: E402

limit_threads(1)  # before numpy is imported, for every contender

import argparse  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
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
TARGET_KNF, TARGET_LIBROSA = 3.0, 5.0


def knf_run(x: np.ndarray, mfcc: bool, gather: bool, bins: int = 23):
    import kaldi_native_fbank as knf

    opts = knf.MfccOptions() if mfcc else knf.FbankOptions()
    opts.frame_opts.dither = 0.0
    if not mfcc:
        opts.mel_opts.num_bins = bins
    comp = knf.OnlineMfcc(opts) if mfcc else knf.OnlineFbank(opts)
    comp.accept_waveform(SR, x)
    comp.input_finished()
    if not gather:
        return comp
    return np.stack([comp.get_frame(i) for i in range(comp.num_frames_ready)])


def section(title: str, funcs: dict, repeats: int, base: str, targets: dict, acc: dict, memory: bool) -> list[list[str]]:
    print(f"# {title}: {repeats} rounds ...", file=sys.stderr)
    res = time_interleaved(funcs, repeats, warmup=True, keep_first_result=False, label=title)
    rows = []
    for name, t in res.items():
        gc.collect()
        peak = traced_peak_mb(funcs[name]) if memory else None
        ratio = t.median / res[base].median
        target = targets.get(name)
        rows.append(
            [
                title,
                name,
                fmt_s(t.median),
                t.spread,
                fmt_s(t.first),
                fmt_ratio(ratio),
                fmt_mib(peak),
                acc.get(name, ""),
                target_status(ratio, target) if target else "",
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="60 s of audio (unless --seconds), 3 repeats")
    ap.add_argument("--seconds", type=float, default=None, help="signal length (default 3600, --quick 60)")
    ap.add_argument("--repeats", type=int, default=3, help="timed rounds (default 3)")
    ap.add_argument("--only", nargs="+", choices=["fbank", "mfcc", "librosa"], default=["fbank", "mfcc", "librosa"])
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc peak (one extra call each)")
    ap.add_argument("--fbank-bins", type=int, default=23, help="mel bands of the fbank section (default 23, Kaldi's)")
    args = ap.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (60.0 if args.quick else 3600.0)
    memory = not args.no_memory

    import librosa

    from audiokit.dsp.features import mfcc as ak_mfcc
    from audiokit.dsp.kaldi import kaldi_fbank, kaldi_mfcc, lifter_coeffs
    from audiokit.dsp.mel import log_melspectrogram
    from audiokit.dsp.stft import StftPlan
    from audiokit.engine import get_backend

    ver = versions("numpy", "scipy", "librosa", "pyfftw", "kaldi_native_fbank", "audiokit")
    print("# " + machine_line({"threads": "1 (OMP/OPENBLAS/MKL/AUDIOKIT_FFT_THREADS=1)"}))
    print("# " + ", ".join(f"{k} {v}" for k, v in ver.items()) + f"; audiokit FFT backend {get_backend().name}")
    print(f"# input: {seconds:g} s at {SR} Hz float32 mono ({int(seconds * SR)} samples); repeats {args.repeats}")
    x = test_signal(seconds, SR)
    x16 = (x * 32768.0).astype(np.float32)  # kaldi-native-fbank takes int16-scale samples
    headers = ["section", "contender", "median", "min-max", "first call", "ratio vs audiokit", "peak MiB", "accuracy", "target"]
    rows: list[list[str]] = []

    def kaldi_acc(ours: np.ndarray, ref: np.ndarray, mfcc: bool) -> str:
        if ours.shape != ref.shape:
            return f"shape {ours.shape} vs {ref.shape}"
        d = np.abs(ours - ref)
        text = f"max |diff| {d.max():.1e}, p99.9 {np.quantile(d, 0.999):.1e}"
        if mfcc:
            lift = lifter_coeffs(ours.shape[1], 22.0)
            text += f"; unliftered {np.max(d / lift):.1e}"
        return text

    for kind in ("fbank", "mfcc"):
        if kind not in args.only:
            continue
        is_mfcc = kind == "mfcc"
        bins = 23 if is_mfcc else args.fbank_bins
        func = kaldi_mfcc if is_mfcc else functools.partial(kaldi_fbank, num_mel_bins=bins)
        print(f"# {kind}: accuracy vs kaldi-native-fbank ...", file=sys.stderr)
        ref = knf_run(x16, is_mfcc, True, bins)
        acc = {
            "audiokit float64": kaldi_acc(func(x, sr=SR), ref, is_mfcc),
            "audiokit float32": kaldi_acc(func(x, sr=SR, dtype=np.float32), ref, is_mfcc),
            "kaldi-native-fbank compute": "(reference)",
        }
        del ref
        funcs = {
            "audiokit float64": lambda f=func: f(x, sr=SR),
            "audiokit float32": lambda f=func: f(x, sr=SR, dtype=np.float32),
            "kaldi-native-fbank compute": lambda m=is_mfcc, b=bins: knf_run(x16, m, False, b),
            "kaldi-native-fbank + get_frame loop": lambda m=is_mfcc, b=bins: knf_run(x16, m, True, b),
        }
        targets = {"kaldi-native-fbank compute": TARGET_KNF}
        if is_mfcc:
            funcs["librosa mfcc (same framing, 23 mels)"] = lambda: librosa.feature.mfcc(
                y=x, sr=SR, n_mfcc=13, n_fft=512, hop_length=160, win_length=400, n_mels=23
            )
            targets["librosa mfcc (same framing, 23 mels)"] = TARGET_LIBROSA
        title = f"Kaldi {kind}" + (f" ({bins} bands)" if not is_mfcc else "")
        rows += section(title, funcs, args.repeats, "audiokit float64", targets, acc, memory)
        gc.collect()

    if "librosa" in args.only:
        plan = StftPlan(sr=SR, win_length=400, hop_length=160, n_fft=512, center=True, pad_mode="constant")

        def ours():
            lm = log_melspectrogram(x, plan, n_mels=128, scale="slaney", norm="slaney", ref=1.0, top_db=80.0)
            return ak_mfcc(lm, n_mfcc=20)

        def theirs():
            return librosa.feature.mfcc(y=x, sr=SR, n_fft=512, hop_length=160, win_length=400)

        print("# librosa-style mfcc: accuracy ...", file=sys.stderr)
        a, b = ours(), theirs()
        acc = {
            "audiokit log_melspectrogram + features.mfcc": f"max rel {np.max(np.abs(a - b)) / np.max(np.abs(b)):.1e} (shape {a.shape} vs {b.shape})",
            "librosa.feature.mfcc": "(reference)",
        }
        del a, b
        funcs = {"audiokit log_melspectrogram + features.mfcc": ours, "librosa.feature.mfcc": theirs}
        rows += section(
            "librosa-style MFCC",
            funcs,
            args.repeats,
            "audiokit log_melspectrogram + features.mfcc",
            {"librosa.feature.mfcc": TARGET_LIBROSA},
            acc,
            memory,
        )

    print_table(headers, rows)
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    rc = main()
    print(f"# total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    sys.exit(rc)

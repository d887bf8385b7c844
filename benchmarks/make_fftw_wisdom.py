"""Write ``audiokit/engine/fftw_wisdom.json``: the canonical FFTW plans of audiokit's default jobs.

Run ``python benchmarks/make_fftw_wisdom.py`` (about a minute) on the machine type the release targets, then
commit the file: it is part of the version (``audiokit/engine/canonical.py`` says why and how it is used).

How: every command below runs in this one process, with the engine's planner flag set to ``FFTW_PATIENT`` and
the canonical reset disabled, so FFTW searches (by timing) the best plan for each transform those jobs make and
remembers it; the wisdom is exported at the end.  Timing chooses the plans *here*, once; every later process
imports the same file and so runs the same plans.  The outputs written meanwhile are not meant to be right
(FFTW_PATIENT overwrites the arrays it plans on) and go to a temporary folder.

The jobs: the default ``mel``/``spectrogram``/``mfcc`` (25 ms / 10 ms, n_fft = window = 400, float32, the
polyphase batches and the row-by-row tail) and the same with ``--nfft 512`` (the benchmarks' librosa-comparable
framing, centred or not), ``--compat kaldi|lhotse|librosa|torchaudio|whisper``, ``spectrogram --nfft 2048``,
``--complex`` + ``istft``, ``griffinlim`` and ``dehum --method erase``, on a 12 s input at 16 kHz (the batch
shapes do not depend on the length).
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "audiokit" / "engine" / "fftw_wisdom.json"


def main() -> int:
    import audiokit.engine.fftw as fftw_module
    from audiokit.cli.app import main as cli
    from audiokit.engine import canonical, pyfftw_core

    core = pyfftw_core.load()
    core.forget_wisdom()
    fftw_module.PLANNER_FLAG = "FFTW_PATIENT"
    canonical.restore = lambda pyfftw: None  # keep what each search learns
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        rng = np.random.default_rng(0)
        x = (0.1 * rng.standard_normal(12 * 16000)).astype(np.float32)
        wav = d / "x.wav"
        sf.write(wav, x, 16000, subtype="PCM_16")
        runs = [
            ["mel", wav, "--npy", d / "a.npy"],
            ["spectrogram", wav, "--npy", d / "b.npy"],
            ["mfcc", wav, "--npy", d / "c.npy"],
            ["mel", wav, "--compat", "kaldi", "--npy", d / "d.npy"],
            ["mfcc", wav, "--compat", "kaldi", "--npy", d / "e.npy"],
            ["mel", wav, "--compat", "lhotse", "--npy", d / "f.npy"],
            ["mel", wav, "--compat", "librosa", "--npy", d / "g.npy"],
            ["mel", wav, "--compat", "torchaudio", "--npy", d / "h.npy"],
            ["mel", wav, "--compat", "whisper", "--npy", d / "i.npy"],
            ["spectrogram", wav, "--nfft", "2048", "--win", "2048", "--hop", "512", "--npy", d / "j.npy"],
            ["mel", wav, "--nfft", "512", "--npy", d / "a5.npy"],
            ["spectrogram", wav, "--nfft", "512", "--center", "--pad-mode", "constant", "--npy", d / "b5.npy"],
            ["spectrogram", wav, "--nfft", "512", "--center", "--complex", "--npy", d / "k5.npy"],
            ["istft", d / "k5.npy", "-o", d / "k5.wav"],
            ["spectrogram", wav, "--center", "--complex", "--npy", d / "k.npy"],
            ["istft", d / "k.npy", "-o", d / "k.wav"],
            ["spectrogram", wav, "--center", "--scale", "magnitude", "--npy", d / "l.npy"],
            ["griffinlim", d / "l.npy", "--iters", "2", "-o", d / "l.wav"],
            ["dehum", wav, "--freq", "50", "--method", "erase", "-o", d / "m.wav"],
        ]
        for args in runs:
            with contextlib.redirect_stdout(sys.stderr):  # the commands print the paths they wrote
                code = cli([str(a) for a in args] + ["-q"])
            print(f"{code}  audiokit {' '.join(str(a) for a in args)}", file=sys.stderr)
    double, single, longdouble = core.export_wisdom()
    text = json.dumps(
        {"double": double.decode("ascii"), "single": single.decode("ascii"), "longdouble": longdouble.decode("ascii")},
        indent=1,
    )
    OUT.write_text(text + "\n", encoding="ascii")
    print(f"{OUT}: {len(single)} bytes single, {len(double)} bytes double precision wisdom")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Lhotse's ``Fbank``/``Mfcc`` reference arrays for ``--compat lhotse`` (tests/data/lhotse/), and a check against audiokit.

Lhotse needs torch, which is not a test dependency: run this in a separate virtual environment, not audiokit's::

    python3 -m venv /tmp/lhotse-venv
    /tmp/lhotse-venv/bin/pip install torch==2.13.0 lhotse soundfile urllib3
    /tmp/lhotse-venv/bin/python benchmarks/interop_lhotse.py                       # write tests/data/lhotse/
    /tmp/lhotse-venv/bin/python benchmarks/interop_lhotse.py --check \\
        --audiokit /work/venv/bin/audiokit                                         # compare, lhotse.qa.validate

Inputs (16-bit PCM, so both sides read the same int16 codes; ``soundfile.read(..., dtype="float32")`` = code/32768):

* ``speech``: the first 48100 samples (3.006 s) of ``examples/data/speech.wav`` (16 kHz), written by the test
  itself from the example (not stored here);
* ``noise16k.wav``: 32037 samples at 16 kHz: ``numpy.random.default_rng(19)`` Gaussian noise at 0.05 RMS plus a
  0.4-amplitude 440 Hz tone and a 0.1 DC offset for the first half (so DC removal matters);
* ``noise22k.wav``: 44250 samples at 22.05 kHz: the same recipe, seed 20, a 1234.5 Hz tone;
* ``noise8k.wav``: 8050 samples at 8 kHz: seed 21, a 300 Hz tone, the second half 60 dB quieter (floored cells).

Outputs, float32, Lhotse's ``(n_frames, n_feats)`` layout: ``fbank_<name>.npy`` =
``Fbank(FbankConfig(sampling_rate=sr)).extract(x, sr)`` (80 bins) and ``mfcc_<name>.npy`` =
``Mfcc(MfccConfig(sampling_rate=sr)).extract(x, sr)`` (13 coefficients), every other option at Lhotse's default;
``versions.txt`` names the lhotse, torch and numpy versions.

``--check`` also runs ``audiokit mel|mfcc --compat lhotse --npy`` on each input, prints the worst difference from
Lhotse's own features, stores audiokit's (transposed) array through Lhotse's ``NumpyFilesWriter`` into a
``MonoCut`` whose ``Features`` declare audiokit's frame count, and runs ``lhotse.qa.validate(cut, read_data=True)``
(frame count = ``compute_num_frames(duration, frame_shift, sr)``, the array read back has that many frames).  The
cut declares ``frame_shift`` = the hop audiokit used / sr (220/22050 s at 22.05 kHz: ``lhotse.qa`` refuses 0.01 s
there, a fractional 220.5-sample hop, though Lhotse's own ``Fbank`` frames with ``floor(0.01*sr)``).

Lhotse 1.33 imports ``urllib3`` without declaring it: ``pip install urllib3`` too if ``import lhotse`` says so.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "lhotse"
SPEECH = ROOT / "examples" / "data" / "speech.wav"
SPEECH_SAMPLES = 48100  # 3.006 s: 48100 % 160 = 100 >= 80, so Lhotse's rule rounds the last frame up


def _noise_tone(seed: int, sr: int, n: int, tone_hz: float, *, dc: bool = False, quiet_tail: bool = False) -> np.ndarray:
    """The seeded noise + tone recipe of the module docstring, as int16 codes."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / sr
    x = 0.05 * rng.standard_normal(n) + 0.4 * np.sin(2 * np.pi * tone_hz * t)
    if dc:
        x[: n // 2] += 0.1
    if quiet_tail:
        x[n // 2 :] *= 1e-3
    return np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)


def write_inputs() -> dict[str, Path]:
    """The three generated WAVs (written once into tests/data/lhotse/) and the speech crop (in a temporary file)."""
    OUT.mkdir(parents=True, exist_ok=True)
    signals = {
        "noise16k": (16000, _noise_tone(19, 16000, 32037, 440.0, dc=True)),
        "noise22k": (22050, _noise_tone(20, 22050, 44250, 1234.5, dc=True)),
        "noise8k": (8000, _noise_tone(21, 8000, 8050, 300.0, quiet_tail=True)),
    }
    paths = {}
    for name, (sr, codes) in signals.items():
        paths[name] = OUT / f"{name}.wav"
        sf.write(paths[name], codes, sr, subtype="PCM_16")
    speech, sr = sf.read(SPEECH, dtype="int16")
    paths["speech"] = Path(tempfile.mkdtemp()) / "speech.wav"
    sf.write(paths["speech"], speech[:SPEECH_SAMPLES], sr, subtype="PCM_16")
    return paths


def lhotse_features(path: Path) -> dict[str, np.ndarray]:
    """``{"fbank": (n_frames, 80), "mfcc": (n_frames, 13)}``: Lhotse's extractors with their defaults at the file's rate."""
    from lhotse import Fbank, FbankConfig, Mfcc, MfccConfig

    x, sr = sf.read(path, dtype="float32")
    return {
        "fbank": np.asarray(Fbank(FbankConfig(sampling_rate=sr)).extract(x, sr), dtype=np.float32),
        "mfcc": np.asarray(Mfcc(MfccConfig(sampling_rate=sr)).extract(x, sr), dtype=np.float32),
    }


def make_reference() -> None:
    import lhotse
    import torch

    for name, path in write_inputs().items():
        for kind, feats in lhotse_features(path).items():
            np.save(OUT / f"{kind}_{name}.npy", feats)
            print(f"{kind}_{name}.npy {feats.shape}")
    versions = f"lhotse {lhotse.__version__}\ntorch {torch.__version__}\nnumpy {np.__version__}\n"
    (OUT / "versions.txt").write_text(versions)
    print(versions, end="")


def check(audiokit: str) -> int:
    """Compare ``audiokit mel|mfcc --compat lhotse`` with Lhotse and validate a cut holding audiokit's features."""
    from lhotse import Fbank, FbankConfig, Features, MonoCut, NumpyFilesWriter, Recording
    from lhotse.qa import validate
    from lhotse.utils import compute_num_frames

    worst = 0
    paths = write_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in paths.items():
            ref = lhotse_features(path)
            rec = Recording.from_file(path, recording_id=name)
            for kind, command in (("fbank", "mel"), ("mfcc", "mfcc")):
                npy = Path(tmp) / f"{kind}_{name}.npy"
                subprocess.run([audiokit, command, str(path), "--compat", "lhotse", "--npy", str(npy)], check=True)
                ours = np.load(npy).T  # audiokit (rows, frames) -> Lhotse (frames, rows)
                # the hop audiokit used (sidecar): 0.01 s is 220.5 samples at 22.05 kHz, which lhotse.qa refuses
                frame_shift = json.loads(npy.with_suffix(".json").read_text())["hop_length"] / rec.sampling_rate
                rule = compute_num_frames(rec.duration, frame_shift, rec.sampling_rate)
                diff = float(np.max(np.abs(ours - ref[kind]))) if ours.shape == ref[kind].shape else float("inf")
                print(f"{kind:5s} {name:8s} ours {ours.shape} lhotse {ref[kind].shape} rule {rule} max|diff| {diff:.3g}")
                worst += ours.shape[0] != rule or ours.shape != ref[kind].shape
                if kind != "fbank":
                    continue
                with NumpyFilesWriter(Path(tmp) / "store") as writer:
                    key = writer.write(name, ours)
                features = Features(
                    type=Fbank.name,
                    num_frames=ours.shape[0],
                    num_features=ours.shape[1],
                    frame_shift=frame_shift,
                    sampling_rate=rec.sampling_rate,
                    start=0.0,
                    duration=rec.duration,
                    storage_type=NumpyFilesWriter.name,
                    storage_path=str(Path(tmp) / "store"),
                    storage_key=key,
                    recording_id=name,
                    channels=0,
                )
                cut = MonoCut(name, 0.0, rec.duration, 0, recording=rec, features=features)
                validate(cut, read_data=True)
                assert np.array_equal(cut.load_features(), ours)
                assert FbankConfig().snip_edges is False
                print(f"      {name:8s} lhotse.qa.validate(cut, read_data=True): ok")
    return int(worst > 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with audiokit instead of writing the arrays")
    parser.add_argument("--audiokit", default="audiokit", help="the audiokit executable (audiokit's own venv)")
    args = parser.parse_args()
    if args.check:
        return check(args.audiokit)
    make_reference()
    return 0


if __name__ == "__main__":
    sys.exit(main())

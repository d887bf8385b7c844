"""Generate the torchaudio reference arrays of tests/cli/test_features_cli.py (run once; torch is not a test dependency).

How they were made (2026-12-01): a separate virtual environment, not audiokit's::

    python -m venv /tmp/ta
    /tmp/ta/bin/pip install torch==2.9.1 'torchaudio==2.9.*' numpy soundfile
    /tmp/ta/bin/python tests/data/torchaudio/make_reference.py

Input: the first 2 s of ``examples/data/speech.wav`` (16 kHz), float32, saved as ``speech16k.npy`` so the test reads
exactly the samples torchaudio saw.  Outputs (float32, torchaudio's ``(n_rows, n_frames)`` layout, every transform
with its defaults but ``sample_rate``):

* ``spectrogram.npy``       ``torchaudio.transforms.Spectrogram()(x)``                       (201, 161): power, n_fft 400, hop 200
* ``melspectrogram.npy``    ``torchaudio.transforms.MelSpectrogram(sample_rate=16000)(x)``   (128, 161)
* ``melspectrogram_db.npy`` ``torchaudio.transforms.AmplitudeToDB("power")(mel)``            (128, 161), top_db None
* ``mfcc.npy``              ``torchaudio.transforms.MFCC(sample_rate=16000)(x)``             (40, 161): log_mels False, top_db 80
* ``versions.txt``          torch / torchaudio versions used
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio

HERE = Path(__file__).resolve().parent
SPEECH = HERE.parents[2] / "examples" / "data" / "speech.wav"


def main() -> None:
    x, sr = sf.read(SPEECH, dtype="float32")
    assert sr == 16000
    x = np.ascontiguousarray(x[: 2 * sr])
    np.save(HERE / "speech16k.npy", x)
    t = torch.from_numpy(x)
    T = torchaudio.transforms
    spec = T.Spectrogram()(t)
    mel = T.MelSpectrogram(sample_rate=sr)(t)
    outputs = {
        "spectrogram": spec,
        "melspectrogram": mel,
        "melspectrogram_db": T.AmplitudeToDB("power")(mel),
        "mfcc": T.MFCC(sample_rate=sr)(t),
    }
    for name, value in outputs.items():
        np.save(HERE / f"{name}.npy", value.numpy().astype(np.float32))
        print(name, tuple(value.shape))
    (HERE / "versions.txt").write_text(f"torch {torch.__version__}\ntorchaudio {torchaudio.__version__}\n")


if __name__ == "__main__":
    main()

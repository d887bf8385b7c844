#!/usr/bin/env bash
# The inputs today's speech models are trained on, from the bundled speech example: Whisper's log-mel (its 30 s
# window, 80 bands; --n-mels 128 for large-v3), Lhotse's Fbank (time-major after .T, Lhotse's frame count), and one
# channel of a multichannel recording (--channel).  Compared with transformers' WhisperFeatureExtractor when it is
# installed (pip install ".[test]").
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out
audiokit mel examples/data/speech.wav --compat whisper --pad-or-trim 30s --npy examples/out/speech.whisper.npy > /dev/null
audiokit mel examples/data/speech.wav --compat lhotse --npy examples/out/speech.lhotse.npy > /dev/null
python3 - <<'PY'
import numpy as np
import soundfile as sf
x, sr = sf.read("examples/data/speech.wav", dtype="float32")
t = np.arange(x.size) / sr
quad = np.stack([x, 0.5 * x, np.sin(2 * np.pi * 440 * t).astype(np.float32) * 0.1, 0 * x], axis=1)
sf.write("examples/out/speech.4ch.wav", quad, sr, subtype="FLOAT")
PY
audiokit mel examples/out/speech.4ch.wav --channel 1 --npy examples/out/speech.ch1.mel.npy > /dev/null
audiokit mel examples/data/speech.wav --npy examples/out/speech.mel.npy > /dev/null
python3 - <<'PY'
import json
import numpy as np
w = np.load("examples/out/speech.whisper.npy")
lh = np.load("examples/out/speech.lhotse.npy").T  # Lhotse's (n_frames, 80)
n = json.load(open("examples/out/speech.lhotse.json"))["source_frames"]
print(f"Whisper log-mel {w.shape} (80 x 3000: the 30 s window), range {w.min():.3f} .. {w.max():.3f}")
print(f"Lhotse fbank {lh.shape}: {lh.shape[0]} frames = (n + hop//2) // hop = ({n} + 80) // 160 = {(n + 80) // 160}")
ch1, mono = np.load("examples/out/speech.ch1.mel.npy"), np.load("examples/out/speech.mel.npy")
print(f"--channel 1 of a 4-channel file (the speech at half amplitude): {ch1.shape}; "
      f"{np.median(mono - ch1):.2f} dB below the mono file's features (absolute dB: 20 log10 2 = 6.02)")
try:
    from transformers import WhisperFeatureExtractor
except ImportError:
    print("transformers is not installed: no comparison")
else:
    import soundfile as sf
    y, _ = sf.read("examples/data/speech.wav", dtype="float32")
    ref = WhisperFeatureExtractor()(y, sampling_rate=16000, return_tensors="np")["input_features"][0]
    print(f"transformers WhisperFeatureExtractor {ref.shape}: max |difference| {np.max(np.abs(w - ref)):.1e}")
PY

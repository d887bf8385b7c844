#!/usr/bin/env bash
# Analysis and resynthesis: complex STFT to .npy, then back to a WAV by overlap-add; compare with the input.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

audiokit spectrogram examples/data/speech.wav --win 25ms --hop 10ms --center --complex \
  --npy examples/out/speech.stft.npy -o examples/out/speech.stft.png
audiokit istft examples/out/speech.stft.npy -o examples/out/speech.rebuilt.wav
python3 - <<'PY'
import audiokit, numpy as np
a = audiokit.read("examples/data/speech.wav")
b = audiokit.read("examples/out/speech.rebuilt.wav")
codes = np.abs(a.samples - b.samples).max() * 2**15
print(f"input {a.samples.shape} {a.subtype}, rebuilt {b.samples.shape} {b.subtype}: max difference {codes:g} PCM_16 codes")
PY

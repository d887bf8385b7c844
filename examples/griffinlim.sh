#!/usr/bin/env bash
# Phase retrieval: save only the magnitude (or a mel spectrogram), rebuild a waveform by fast Griffin-Lim,
# and watch the spectral convergence ||S - |STFT(x)| ||_F / ||S||_F fall iteration by iteration.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

# magnitude only (the phase is thrown away), centred frames as librosa
audiokit spectrogram examples/data/speech.wav --win 32ms --hop 8ms --center --scale magnitude \
  --npy examples/out/speech.mag.npy
audiokit griffinlim examples/out/speech.mag.npy --iters 64 -o examples/out/speech.gl.wav --json \
  > examples/out/speech.gl.json

# a mel power spectrogram: the filter bank is undone by its pseudo-inverse (or --mel-inverse nnls) first
audiokit mel examples/data/speech.wav --win 32ms --hop 8ms --center --scale power \
  --npy examples/out/speech.melpow.npy
audiokit griffinlim examples/out/speech.melpow.npy --iters 64 -o examples/out/speech.mel.gl.wav

python3 - <<'PY'
import json
sc = json.load(open("examples/out/speech.gl.json"))["spectral_convergence"]["per_iteration"]
print("spectral convergence by iteration:", " ".join(f"{i}:{sc[i]:.3f}" for i in (0, 1, 2, 4, 8, 16, 32, 64)))
PY

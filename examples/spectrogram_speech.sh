#!/usr/bin/env bash
# The article's speech pictures: a spectrogram with the typical speech numbers
# (25 ms window, 10 ms hop, periodic Hann) and the same frames as an 80-band
# log-mel spectrogram (HTK mel scale, triangles peaking at 1, dB re the max).
# Writes into examples/out/ (git-ignored).
#
#   bash examples/spectrogram_speech.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

echo "== spectrogram: win 25 ms, hop 10 ms (at 16 kHz: 400 / 160 samples, 201 rows 40 Hz apart)"
audiokit spectrogram examples/data/speech.wav --win 25ms --hop 10ms -o examples/out/speech.spectrogram.png

echo
echo "== log-mel: the same frames through 80 mel triangles"
audiokit mel examples/data/speech.wav --win 25ms --hop 10ms --n-mels 80 \
    -o examples/out/speech.mel.png --npy examples/out/speech.mel.npy

python3 - <<'PY'
import json
import numpy as np
meta = json.load(open("examples/out/speech.mel.json"))
mel = np.load("examples/out/speech.mel.npy")
print(f"mel array {mel.shape} {mel.dtype}: {meta['mel']['n_mels']} bands x {mel.shape[1]} frames, "
      f"{meta['win_length']}/{meta['hop_length']} samples at {meta['sr']} Hz, "
      f"{mel.min():.1f} .. {mel.max():.1f} dB re {meta['ref']:g} (the PNG: re its loudest cell)")
PY

#!/usr/bin/env bash
# The article's mel filter bank F: 80 HTK triangles over the 257 bins of a
# 512-point DFT at 16 kHz, drawn as a PNG and saved as an 80 x 257 matrix
# (M = F @ S turns a 257-row power spectrogram into 80 mel rows).
# Writes into examples/out/ (git-ignored).
#
#   bash examples/mel_filterbank.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

audiokit mel examples/data/speech.wav --nfft 512 --win 512 --filterbank \
    -o examples/out/melfb.png --npy examples/out/melfb.npy

python3 - <<'PY'
import numpy as np
F = np.load("examples/out/melfb.npy")
peaks = F.argmax(axis=1) * 16000 / 512
print(f"filter bank {F.shape} {F.dtype}: first centres {peaks[:4]} Hz, last {peaks[-2:]} Hz; "
      f"bins per filter {np.count_nonzero(F, axis=1).min()}..{np.count_nonzero(F, axis=1).max()}")
PY

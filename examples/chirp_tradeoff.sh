#!/usr/bin/env bash
# The time-frequency trade-off on the article's chirp (200 -> 3600 Hz in 2 s at
# 8 kHz): a 32 ms window (256 samples, 129 rows 31.25 Hz apart) draws a thin
# line; a 256 ms window (2048 samples, 1025 rows 3.9 Hz apart) has a finer grid
# but each frame sweeps ~435 Hz, so the line is a wide smear.  Hop = window / 4.
# Writes into examples/out/ (git-ignored).
#
#   bash examples/chirp_tradeoff.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

audiokit generate "chirp:200:3600" --rate 8k --dur 2s -o examples/out/chirp8k.wav >/dev/null

for ms in 32 256; do
    samples=$((ms * 8))          # 8 samples per ms at 8 kHz
    hop=$((samples / 4))
    audiokit spectrogram examples/out/chirp8k.wav --win "$samples" --hop "$hop" \
        -o "examples/out/chirp.win${ms}ms.png" --npy "examples/out/chirp.win${ms}ms.npy" >/dev/null
done

python3 - <<'PY'
import json
for ms in (32, 256):
    m = json.load(open(f"examples/out/chirp.win{ms}ms.json"))
    rows, frames = m["shape"]
    drift = 1700 * m["win_length"] / m["sr"]  # the chirp climbs 1700 Hz/s
    print(f"window {ms:3d} ms = {m['win_length']:4d} samples: {rows:4d} rows, delta_f {m['delta_f_hz']:6.2f} Hz, "
          f"{frames:3d} columns every {1000 * m['hop_length'] / m['sr']:g} ms; "
          f"the chirp moves {drift:5.1f} Hz = {drift / m['delta_f_hz']:5.1f} bins within one frame")
PY
echo "pictures: examples/out/chirp.win32ms.png examples/out/chirp.win256ms.png"

#!/usr/bin/env bash
# Streaming check: one hour of 16 kHz audio to an 80-band log-mel .npy.  The
# file is read in blocks and the array is appended frame by frame, so peak
# memory stays flat whatever the length.  Prints peak RSS, wall time and the
# array shape.  Writes ~230 MB of WAV and ~115 MB of .npy into examples/out/.
#
#   bash examples/features_1h.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

wav=examples/out/noise_1h.wav
npy=examples/out/noise_1h.mel.npy
if [ ! -f "$wav" ]; then
    echo "== generating 1 hour of pink noise + 440 Hz at 16 kHz"
    audiokit generate "pink:0.1 + sine:440:0.1" --rate 16k --dur 3600s -o "$wav" >/dev/null
fi
ls -l "$wav"

echo "== audiokit mel (25 ms / 10 ms, 80 bands) under /usr/bin/time -v"
/usr/bin/time -v -o examples/out/features_1h.time audiokit mel "$wav" --win 25ms --hop 10ms --npy "$npy" >/dev/null
awk -F': ' '/Maximum resident set size/ {printf "peak RSS:  %.1f MiB\n", $2 / 1024}
            /Elapsed \(wall clock\)/     {print "wall time: " $2}' examples/out/features_1h.time

python3 - "$npy" <<'PY'
import sys
import numpy as np
a = np.load(sys.argv[1], mmap_mode="r")
print(f"array:     {a.shape} {a.dtype} ({a.nbytes / 2**20:.0f} MiB on disk; 80 bands x 100 frames/s x 3600 s)")
PY

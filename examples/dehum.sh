#!/usr/bin/env bash
# Mains hum: add a 50 Hz hum with 10 harmonics to speech, remove it with
# `audiokit dehum` (the default subtraction, and the STFT erase method for
# comparison), and draw spectrograms before / after / of what was removed.
# Writes into examples/out/ (git-ignored).
#
#   bash examples/dehum.sh
#
# Needs audiokit on PATH and the Python that has it installed (PYTHON, default python3).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
out="$here/out"
mkdir -p "$out"
PYTHON="${PYTHON:-python3}"
speech="$here/data/speech.wav"

# One field of a JSON object read on stdin.
field() { "$PYTHON" -c "import json, sys; print(json.load(sys.stdin)$1)"; }

echo "== 1. A hum: 50 Hz, amplitude 0.1, 10 harmonics of amplitude 0.1/k, as long as the speech"
frames=$("$PYTHON" -c "import soundfile as sf; print(sf.info('$speech').frames)")
audiokit generate "hum:50:0.1:10" --rate 16k --dur "$frames" -o "$out/hum50.wav" >/dev/null

echo "== 2. Speech + hum (sample by sample, float WAV)"
"$PYTHON" - "$speech" "$out/hum50.wav" "$out/speech_hum.wav" <<'EOF'
import sys
import audiokit
speech, hum = audiokit.read(sys.argv[1]), audiokit.read(sys.argv[2])
audiokit.write(sys.argv[3], speech.samples + hum.samples, speech.sr, subtype="FLOAT")
EOF
audiokit info "$out/speech_hum.wav"

echo
echo "== 3. audiokit dehum (default: estimate f0, fit and subtract the hum model)"
audiokit dehum "$out/speech_hum.wav" --freq auto -o "$out/speech_dehum.wav" \
    --residual "$out/speech_hum_removed.wav" --json > "$out/dehum.json"
echo "   estimated f0: $(field "['f0_hz']" < "$out/dehum.json") Hz (nominal $(field "['nominal_hz']" < "$out/dehum.json") Hz)"
echo "   harmonics treated: $(field "['treated']" < "$out/dehum.json")"
"$PYTHON" - "$out/dehum.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
print("    k   freq Hz   before dB   after dB   floor dB")
for h in report["harmonics"][:12]:
    fmt = lambda v: "    -inf" if v is None else f"{v:8.1f}"
    print(f"   {h['k']:2d}  {h['freq_hz']:8.2f}  {fmt(h['level_db'][0])}   {fmt(h['after_db'][0])}   {fmt(h['floor_db'][0])}"
          + ("" if h["treated"][0] else "   (not treated)"))
EOF

echo
echo "== 4. The STFT method for comparison: erase the hum's bins of a 1 s STFT, overlap-add"
audiokit dehum "$out/speech_hum.wav" --freq 50 --method erase -o "$out/speech_erase.wav" >/dev/null

echo
echo "== 5. How close to the original speech (SDR, dB)"
"$PYTHON" - "$speech" "$out/speech_hum.wav" "$out/speech_dehum.wav" "$out/speech_erase.wav" <<'EOF'
import sys
import numpy as np
import audiokit
ref = audiokit.read(sys.argv[1]).samples[0]
for label, path in zip(("with hum", "dehum (subtract)", "dehum --method erase"), sys.argv[2:]):
    y = audiokit.read(path).samples[0]
    print(f"   {label:22s} {10 * np.log10(np.sum(ref**2) / np.sum((y - ref)**2)):6.1f}")
EOF

echo
echo "== 6. Spectrograms up to 1 kHz with a 1 s window (1 Hz bins: the hum lines are thin and sharp)"
echo "   one colour scale for the series: --vmin/--vmax in dB re 1 (absolute), so the same level is the same colour"
echo "   in every picture (each scaled to its own maximum, 'after' would look brighter once the hum is gone)"
for name in speech_hum speech_dehum speech_hum_removed speech_erase; do
    audiokit spectrogram "$out/$name.wav" --win 1s --hop 50ms --fmax 1kHz --vmin -40 --vmax 55 -o "$out/$name.png"
done

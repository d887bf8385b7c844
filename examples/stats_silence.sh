#!/usr/bin/env bash
# Levels and silence: `audiokit stats` beside `sox stats`, then the pauses of a file as a segments manifest that
# `audiokit batch --manifest` turns into log-mel features, and the file trimmed of its leading/trailing silence.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

echo "== a clipped 100 Hz tone beside a -6 dBFS 440 Hz tone (stereo, 24-bit): SoX's stats fields, and more"
audiokit generate "sine:440:0.5" --dur 2s --subtype PCM_24 -o examples/out/left.wav
audiokit generate "sine:100:1.5" --dur 2s --subtype PCM_24 -o examples/out/right.wav 2>/dev/null  # clipped: warned
python3 - <<'PY'
import soundfile as sf, numpy as np
left, sr = sf.read("examples/out/left.wav"); right, _ = sf.read("examples/out/right.wav")
sf.write("examples/out/stereo_stats.wav", np.stack([left, np.clip(right, -1, 1)], axis=1), sr, subtype="PCM_24")
PY
audiokit stats examples/out/stereo_stats.wav
if command -v sox > /dev/null; then
  echo "== the same file through sox (its stats are text on stderr)"
  sox examples/out/stereo_stats.wav -n stats
fi
audiokit stats examples/out/stereo_stats.wav --json | jq -c '[.overall.peak_level_db, .levels[1].flat_factor, .levels[0].bit_depth]'

echo "== a float file holding NaN and Inf: refused, unless --fix-nonfinite, which counts them (and reads them as 0)"
python3 - <<'PY'
import numpy as np, soundfile as sf
x = 0.25 * np.sin(np.arange(16000) / 8)
x[[100, 2000, 9000]] = np.nan
x[[500, 7000]] = [np.inf, -np.inf]
sf.write("examples/out/nonfinite.wav", x.astype(np.float32), 16000, subtype="FLOAT")
PY
audiokit stats examples/out/nonfinite.wav || echo "(exit $?)"
audiokit stats examples/out/nonfinite.wav --fix-nonfinite --json | jq -c '[.overall.nan_count, .overall.inf_count]'

echo "== the speech example: pauses below -40 dB re its loudest 10 ms frame, at least 0.3 s"
audiokit silence examples/data/speech.wav --threshold -40dB --relative --min-silence 0.3s --hangover 50ms \
  -m examples/out/speech_segments.jsonl
head -3 examples/out/speech_segments.jsonl

echo "== the manifest's segments (sound between the pauses) as log-mel features"
rm -rf examples/out/speech_segments
audiokit batch mel --manifest examples/out/speech_segments.jsonl --out examples/out/speech_segments --store files -j 1
jq -c '[.id, .shape]' examples/out/speech_segments/manifest.jsonl

echo "== the file without its leading and trailing silence"
audiokit silence examples/data/speech.wav --threshold -40dB --relative --min-silence 0.3s --trim \
  -o examples/out/speech_trimmed.wav --json | jq -c '.trimmed'
audiokit info examples/out/speech_trimmed.wav

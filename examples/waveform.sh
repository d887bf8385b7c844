#!/usr/bin/env bash
# The waveform view: the speech example as a min/max envelope per pixel column (linear and dBFS), a stereo file
# pushed 6 dB into clipping (the clipped stretch in red, counted as info counts), a 10 s segment of a long file.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

echo "== the speech example, linear and dBFS"
audiokit waveform examples/data/speech.wav -o examples/out/speech.waveform.png
audiokit waveform examples/data/speech.wav --scale dbfs -o examples/out/speech.waveform.dbfs.png

echo "== a stereo PCM_16 file whose left channel is driven 6 dB into clipping for a second"
python3 - <<'PY'
import numpy as np, soundfile as sf
x, sr = sf.read("examples/data/speech.wav")
left = x.copy()
left[sr : 2 * sr] = np.clip(2 * left[sr : 2 * sr] / np.abs(x).max(), -1, 1)   # +6 dB over full scale
sf.write("examples/out/clipped.wav", np.stack([left, 0.5 * x], axis=1), sr, subtype="PCM_16")
PY
audiokit waveform examples/out/clipped.wav -o examples/out/clipped.waveform.png
audiokit waveform examples/out/clipped.wav --json | jq -c '[.levels[] | {channel, clipped, clipped_columns, peak_dbfs}]'
audiokit info examples/out/clipped.wav --json | jq -c '[.levels[] | {channel, clipped}]'   # the same counts

echo "== 10 s from the middle of a 10-minute file, one panel, 800x300"
audiokit generate "chirp:100:3000:0.3 + pink:0.03" --rate 44.1k --dur 600s --subtype PCM_16 -o examples/out/long.wav
audiokit waveform examples/out/long.wav --start 300s --dur 10s --size 800x300 -o examples/out/long.segment.png

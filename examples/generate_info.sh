#!/usr/bin/env bash
# Test signals and levels: generate a few signals, pipe one through `info`, read raw PCM from stdin.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

echo "== a 440 Hz tone with 50 Hz mains hum (2 s, 16 kHz, FLOAT), then its levels"
audiokit generate "sine:440 + hum:50" --dur 2s -o examples/out/tone_hum.wav
audiokit info examples/out/tone_hum.wav

echo "== generate | info - (WAV through a pipe), as JSON"
audiokit generate "square:1k:1" --rate 8k --dur 0.5s --subtype PCM_16 | audiokit info - --json

echo "== raw headerless PCM from stdin: 16-bit stereo at 16 kHz written by a python one-liner"
python3 -c "import sys, numpy as np; t=np.arange(16000)/16000; x=(0.25*np.sin(2*np.pi*300*t)*32767).astype('<i2'); sys.stdout.buffer.write(np.repeat(x, 2).tobytes())" \
  | audiokit info - --format s16le --rate 16k --channels 2

echo "== the bundled speech example"
audiokit info examples/data/speech.wav

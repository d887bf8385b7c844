#!/usr/bin/env bash
# Pitch (f0) by pYIN and YIN: espeak-ng speech (a low and a high voice) and a sung-like glide, tracked, drawn over
# their spectrograms and saved as rows [time_s, f0_hz, voiced_flag, voiced_prob]; then the same numbers from the
# library, and a corpus through `audiokit batch pitch` (per-file outputs, then a --store shards corpus store).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

echo "== two espeak-ng voices (pitch 25 and 75), 16 kHz"
for p in 25 75; do
  espeak-ng -p "$p" -w examples/out/voice_$p.raw.wav "Pitch tracking follows the voice as it rises and falls."
  sox examples/out/voice_$p.raw.wav -r 16000 examples/out/voice_$p.wav
done

echo "== pYIN (default 65-2093 Hz, 64 ms frames every 16 ms): table, PNG, rows"
audiokit pitch examples/out/voice_25.wav -o examples/out/voice_25.pitch.png --npy examples/out/voice_25.pitch.npy
audiokit pitch examples/out/voice_75.wav --json | python3 -c "import json,sys; r=json.load(sys.stdin); print(r['f0_median_hz'], r['voiced_fraction'])"

echo "== a glide 110 -> 440 Hz with vibrato and a pause, log-frequency PNG, pYIN and YIN"
python3 - <<'PY'
import numpy as np, soundfile as sf
sr = 16000
t = np.arange(4 * sr) / sr
f0 = 110 * 4 ** (t / 4) * (1 + 0.02 * np.sin(2 * np.pi * 5 * t))
phase = 2 * np.pi * np.cumsum(f0) / sr
x = sum(np.sin(k * phase) / k for k in range(1, 9)) * ((t < 1.8) | (t > 2.2))
sf.write("examples/out/glide.wav", 0.3 * x / np.abs(x).max(), sr, subtype="PCM_16")
PY
audiokit pitch examples/out/glide.wav --fmin 80Hz --fmax 1kHz -o examples/out/glide.pitch.png --log-freq
audiokit pitch examples/out/glide.wav --method yin --fmin 80Hz --fmax 1kHz --npy examples/out/glide.yin.npy

echo "== the library gives the same rows (librosa's names and defaults; here the CLI's framing)"
python3 - <<'PY'
import numpy as np, soundfile as sf, audiokit
y, sr = sf.read("examples/out/voice_25.wav", dtype="float32")
f0, voiced, prob = audiokit.pyin(y, sr=sr, fmin=65, fmax=2093, frame_length=1024, hop_length=256)
rows = np.load("examples/out/voice_25.pitch.npy")
print("rows equal:", np.array_equal(rows[1], np.where(voiced, f0, 0.0)) and np.array_equal(rows[3], prob))
PY

echo "== a corpus: one .pitch.npy + sidecar per input and the reports in results.jsonl"
audiokit batch pitch examples/out/voice_25.wav examples/out/voice_75.wav --out examples/out/pitch_corpus --force
head -c 300 examples/out/pitch_corpus/results.jsonl; echo

echo "== the same corpus into a corpus store: one (n_frames, 3) float32 array per utterance, [f0_hz, voiced_flag, voiced_prob]"
audiokit batch pitch examples/out/voice_25.wav examples/out/voice_75.wav examples/out/glide.wav --out examples/out/pitch_shards --store shards --force
python3 - <<'PY'
import json, numpy as np, audiokit.corpus
corpus = audiokit.corpus.open("examples/out/pitch_shards")
rows = np.load("examples/out/voice_25.pitch.npy")  # the single-file rows [time_s, f0_hz, voiced_flag, voiced_prob]
print(corpus, corpus.description["plan"]["columns"], "frame_shift", corpus.description["frame_shift"])
print("store = --npy rows 1..3 as float32:", np.array_equal(corpus["voice_25"].array, rows[1:].T.astype(np.float32)))
PY

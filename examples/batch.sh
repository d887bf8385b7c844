#!/usr/bin/env bash
# A corpus in one command: log-mel features for 24 files in nested folders (FLAC and WAV), on two worker
# processes; a re-run skips what is done; a corrupt file is recorded with its reason (exit 3) and the rest goes on.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=examples/out/corpus
feats=examples/out/corpus.feats
rm -rf "$corpus" "$feats"
mkdir -p "$corpus"/spk1 "$corpus"/spk2
for i in $(seq 1 12); do
  audiokit generate "chirp:200:3k:0.3 + noise:0.01" --dur "$((i % 5 + 2))s" --seed "$i" --subtype PCM_16 \
    -o "$corpus/spk1/utt$i.wav" > /dev/null
  audiokit generate "sine:$((200 + 50 * i)):0.4 + pink:0.02" --dur 3s --seed "$i" --subtype PCM_16 \
    -o "$corpus/spk2/utt$i.flac" > /dev/null
done
printf 'not audio\n' > "$corpus/spk2/broken.wav"

status=0
audiokit batch mel "$corpus" --out "$feats" --jobs 2 --n-mels 40 -q --json || status=$?
echo "first run: exit $status (3: some inputs failed)"
audiokit batch mel "$corpus" --out "$feats" --jobs 2 --n-mels 40 -q --json || true   # everything is skipped now
grep '"failed"' "$feats/manifest.jsonl" | python3 -c 'import json,sys; [print("failed:", r["path"], "-", r["error"]) for r in map(json.loads, sys.stdin)]'
python3 - <<PY
import audiokit
corpus = audiokit.corpus.open("$feats")
first = corpus.ids[0]
print(f"{len(corpus.ids)} feature arrays; {first}: shape {corpus[first].array.shape} (n_frames, n_mels)")
PY

#!/usr/bin/env bash
# Feed your trainer: one corpus of log-mel/fbank features written as each training stack opens it, read back by the
# real consumer libraries (kaldiio, webdataset, Hugging Face datasets) and by audiokit.corpus (padded batches).
# Needs the test/stores extras for the readers: pip install 'audiokit[stores]' kaldiio webdataset datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=examples/out/trainer.corpus
out=examples/out/trainer
rm -rf "$corpus" "$out"
mkdir -p "$corpus"/spk1 "$corpus"/spk2
for i in $(seq 1 6); do
  audiokit generate "chirp:200:3k:0.3 + noise:0.01" --dur "$((i % 4 + 2))s" --seed "$i" --subtype PCM_16 \
    -o "$corpus/spk1/utt$i.wav" > /dev/null
  audiokit generate "sine:$((200 + 50 * i)):0.4 + pink:0.02" --dur 3s --seed "$i" --subtype PCM_16 \
    -o "$corpus/spk2/utt$i.flac" > /dev/null
done

# Kaldi: feats.ark/scp, utt2spk, spk2utt, utt2num_frames, cmvn.ark (global CMVN stats, same pass)
audiokit batch mel "$corpus" --out "$out/kaldi" --store kaldi --compat kaldi --n-mels 80 --speaker-from parent -q
# WebDataset / HF datasets / Lhotse Shar: tar shards of ~6 utterances (default: ~1 GiB) + Lhotse cuts beside each
audiokit batch mel "$corpus" --out "$out/shards" --store shards --shard-size 6u --compat lhotse --speaker-from parent -q
# Hugging Face datasets: Parquet with Array2D((None, 80), "float32")
audiokit batch mel "$corpus" --out "$out/parquet" --store parquet -q
# one time-major .npy per utterance (the default store), float16 to halve the size
audiokit batch mel "$corpus" --out "$out/npy" --dtype float16 -q

python3 - "$out" <<'PY'
import glob
import sys

import numpy as np

import audiokit

out = sys.argv[1]
import kaldiio

feats = kaldiio.load_scp(f"{out}/kaldi/feats.scp")
key = sorted(feats)[0]
cmvn = kaldiio.load_mat(f"{out}/kaldi/cmvn.ark")
print(f"kaldiio: {len(feats)} utterances, {key} {feats[key].shape}; cmvn.ark counts {cmvn[0, -1]:.0f} frames")

import webdataset as wds

sample = next(iter(wds.WebDataset(sorted(glob.glob(f"{out}/shards/shar/features.*.tar")), shardshuffle=False).decode()))
print(f"webdataset: key {sample['__key__']}, npy {sample['npy'].shape}, json keys {sorted(sample['json'])[:3]}...")

import datasets

ds = datasets.load_dataset("parquet", data_files=glob.glob(f"{out}/parquet/feats.*.parquet"), split="train",
                           cache_dir=f"{out}/hf-cache").with_format("numpy")
print(f"HF datasets: {len(ds)} rows, feats {ds[0]['feats'].shape} {ds[0]['feats'].dtype}")

corpus = audiokit.corpus.open(f"{out}/npy")
batch = next(corpus.batches(max_frames=2000))
print(f"audiokit.corpus: {len(corpus)} utterances ({corpus.dtype}); a batch {batch.features.shape}, "
      f"lengths {batch.lengths.tolist()}, padding {1 - batch.mask.mean():.1%}")
PY

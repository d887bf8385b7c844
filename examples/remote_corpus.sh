#!/usr/bin/env bash
# Reading a corpus store where it lives: a local S3 server (moto, from `pip install 'audiokit[test]'`), a 12-file
# corpus uploaded to s3://audio/corpus/, batched from s3 to s3 (tar shards), then opened in place with
# audiokit.corpus.open("s3://feats/shards", storage_options=...): the index is fetched, each utterance is one ranged
# GET of its tar member -- the arrays of the same batch on local disk, bit for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
out=examples/out/remote_corpus
rm -rf "$out" && mkdir -p "$out/corpus"
source examples/lib/moto.sh
moto_start "$out" audio feats  # the server, its endpoint and credentials in AWS_* (for s3fs), two buckets
python3 - "$out/corpus" <<'PY'
import pathlib, sys, boto3, numpy as np, soundfile as sf
root = pathlib.Path(sys.argv[1])
s3 = boto3.client("s3")
for i in range(12):  # 12 short utterances of 3 speakers
    t = np.arange(16000 + 800 * i) / 16000
    (root / f"spk{i % 3}").mkdir(exist_ok=True)
    path = root / f"spk{i % 3}" / f"utt{i:02d}.flac"
    sf.write(path, 0.3 * np.sin(2 * np.pi * (200 + 40 * i) * t), 16000)
    s3.upload_file(str(path), "audio", f"corpus/spk{i % 3}/utt{i:02d}.flac")
PY

audiokit batch mel s3://audio/corpus/ --out s3://feats/shards --store shards --shard-size 4u -j 2 -q
audiokit batch mel "$out/corpus" --out "$out/local" --store shards --shard-size 4u -j 2 -q
python3 - "$out/local" "$AWS_ENDPOINT_URL" <<'PY'
import sys
import numpy as np
import audiokit.corpus
# storage_options= as in Hugging Face datasets (here the endpoint; the credentials come from AWS_* variables)
remote = audiokit.corpus.open("s3://feats/shards", storage_options={"endpoint_url": sys.argv[2]})
local = audiokit.corpus.open(sys.argv[1])
print(remote)
entry = remote["spk1/utt04"]
print("spk1/utt04:", entry.array.shape, entry.array.dtype, "from", entry.record["file"], "bytes",
      entry.record["offset"], "+", entry.record["nbytes"])
assert remote.ids == local.ids
assert all(np.array_equal(remote[i].array, local[i].array) for i in local.ids)
print(f"all {len(remote)} arrays read from s3 = the local store's, bit for bit")
batch = next(remote.batches(batch_size=4))
print("first batch:", batch.features.shape, "ids", batch.ids)
PY

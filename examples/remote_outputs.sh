#!/usr/bin/env bash
# Corpus stores written to object storage: a local S3 server (moto, from `pip install 'audiokit[test]'`), a 12-file
# corpus batched into s3://feats/shards (tar shards + Lhotse cuts, index, store.json, manifest), the same batch into
# a local folder, every shard object equal to its local file byte for byte; a re-run skips everything, and a second
# batch on a prefix whose lock object another host holds is refused (exit 4).
set -euo pipefail
cd "$(dirname "$0")/.."
out=examples/out/remote_outputs
rm -rf "$out" && mkdir -p "$out/corpus"
source examples/lib/moto.sh
moto_start "$out" feats  # the server, its endpoint and credentials in AWS_* (for s3fs), bucket "feats"
python3 - "$out/corpus" <<'PY'
import sys, numpy as np, soundfile as sf
root = sys.argv[1]
for i in range(12):  # 12 short utterances of 3 speakers
    t = np.arange(16000 + 800 * i) / 16000
    sf.write(f"{root}/spk{i % 3}_utt{i:02d}.flac", 0.3 * np.sin(2 * np.pi * (200 + 40 * i) * t), 16000)
PY

audiokit batch mel "$out/corpus" --out s3://feats/shards --store shards --shard-size 4u -j 2
audiokit batch mel "$out/corpus" --out "$out/local" --store shards --shard-size 4u -j 2 -q
python3 - "$out/local" <<'PY'
import pathlib, sys, boto3
local = pathlib.Path(sys.argv[1])
s3 = boto3.client("s3")
names = sorted(o["Key"][len("shards/"):] for o in s3.list_objects_v2(Bucket="feats", Prefix="shards/")["Contents"])
print("objects:", ", ".join(names))
for name in (n for n in names if n.startswith("shar/")):
    assert s3.get_object(Bucket="feats", Key=f"shards/{name}")["Body"].read() == (local / name).read_bytes(), name
print("every shard and cuts object = the local batch's file, byte for byte")
s3.put_object(Bucket="feats", Key="shards/.audiokit-batch.lock",
              Body=b'{"run": "20260101T000000Z-0000beef", "host": "node7", "pid": 4242, "started": "2026-01-01T00:00:00Z"}')
PY
# A re-run finds the store done; here another host's lock object is in the way: refused, exit 4
audiokit batch mel "$out/corpus" --out s3://feats/shards --store shards --shard-size 4u || echo "exit $?"

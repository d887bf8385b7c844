#!/usr/bin/env bash
# Inputs in object storage: a local S3 server (moto, from `pip install 'audiokit[test]'`), the speech example
# uploaded to it, then `info` and `mel` straight from s3:// with ranged reads -- the same features as from the local
# file, byte for byte -- a 1 s segment of the object, and the one-line errors (no such object, no credentials).
set -euo pipefail
cd "$(dirname "$0")/.."
out=examples/out/remote
rm -rf "$out" && mkdir -p "$out"
source examples/lib/moto.sh
moto_start "$out" corpus  # the server, its endpoint and credentials in AWS_* (for s3fs), bucket "corpus"
python3 -c 'import boto3; boto3.client("s3").upload_file("examples/data/speech.wav", "corpus", "speech/speech.wav")'

audiokit info s3://corpus/speech/speech.wav
audiokit mel s3://corpus/speech/speech.wav --npy "$out/remote.mel.npy" > /dev/null
audiokit mel examples/data/speech.wav --npy "$out/local.mel.npy" > /dev/null
cmp "$out/remote.mel.npy" "$out/local.mel.npy" && echo "mel from s3:// = mel from the local file, byte for byte"
python3 -c "import json; print('sidecar source:', json.load(open('$out/remote.mel.json'))['source'])"
audiokit spectrum s3://corpus/speech/speech.wav --start 1s --dur 1s --peaks 3
# Errors are one line naming the URL (never the credentials), exit 3:
audiokit info s3://corpus/speech/missing.wav || echo "exit $?"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_CONFIG_FILE=/dev/null \
  audiokit info s3://corpus/speech/speech.wav || echo "exit $?"

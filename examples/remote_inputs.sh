#!/usr/bin/env bash
# Inputs in object storage: a local S3 server (moto, from `pip install 'audiokit[test]'`), the speech example
# uploaded to it, then `info` and `mel` straight from s3:// with ranged reads -- the same features as from the local
# file, byte for byte -- a 1 s segment of the object, and the one-line errors (no such object, no credentials).
set -euo pipefail
cd "$(dirname "$0")/.."
out=examples/out/remote
rm -rf "$out" && mkdir -p "$out"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
moto_server -H 127.0.0.1 -p "$port" > "$out/moto.log" 2>&1 &
server=$!
trap 'kill "$server"' EXIT
# Credentials and endpoint for s3fs (any key works against moto); --storage-option endpoint_url=... would do too.
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=example-key AWS_SECRET_ACCESS_KEY=example-secret
export AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
python3 - <<'PY'
import time, boto3, botocore
s3 = boto3.client("s3")
for _ in range(100):  # the server is up within a second or two
    try:
        s3.create_bucket(Bucket="corpus")
        break
    except botocore.exceptions.EndpointConnectionError:
        time.sleep(0.1)
s3.upload_file("examples/data/speech.wav", "corpus", "speech/speech.wav")
PY

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

# Sourced by the examples that need an S3 server (examples/remote_*.sh), from the repository's root:
#
#   source examples/lib/moto.sh
#   moto_start "$out" bucket ...
#
# starts moto's S3 server (`moto_server`, from `pip install 'audiokit[test]'`) on a free port of 127.0.0.1, its log in
# "$out/moto.log", stopped when the script exits; exports the endpoint and example credentials that s3fs and boto3
# read (any key works against moto; --storage-option endpoint_url=... would do too); waits until the server answers
# and creates the buckets named.

moto_start() {
  local log_dir=$1
  shift
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  moto_server -H 127.0.0.1 -p "$port" > "$log_dir/moto.log" 2>&1 &
  MOTO_PID=$!
  trap 'kill "$MOTO_PID"' EXIT
  export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=example-key AWS_SECRET_ACCESS_KEY=example-secret
  export AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
  python3 - "$@" <<'PY'
import sys, time, boto3, botocore
s3 = boto3.client("s3")
for _ in range(300):  # the server is up within a second or two (more on a loaded machine)
    try:
        s3.list_buckets()
        break
    except botocore.exceptions.EndpointConnectionError:
        time.sleep(0.1)
for bucket in sys.argv[1:]:
    s3.create_bucket(Bucket=bucket)
PY
}

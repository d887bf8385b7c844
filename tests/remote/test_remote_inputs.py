"""URL inputs (issue 22): every single-file command on ``s3://`` and ``http://`` against a real server.

The servers are real (moto's S3 on 127.0.0.1, a ranged HTTP server: tests/remote/conftest.py); the client is
audiokit's own path through fsspec/s3fs.  Outputs must be byte for byte those of the local copy (the sidecar's
``source`` aside, which names the URL); the counts of requests and bytes come from the servers' own logs.
"""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.remote import FAKE_KEY, FAKE_SECRET

MiB = 1 << 20

#: (command, arguments after the input, output files written into the folder given as {out}).
COMMANDS = {
    "info": (["--json"], []),
    "spectrum": (["--npy", "{out}/s.npy", "-o", "{out}/s.png", "--peaks", "3"], ["s.npy", "s.json", "s.png"]),
    "spectrogram": (["--npy", "{out}/g.npy", "-o", "{out}/g.png"], ["g.npy", "g.json", "g.png"]),
    "mel": (["--npy", "{out}/m.npy"], ["m.npy", "m.json"]),
    "mfcc": (["--npy", "{out}/c.npy", "--compat", "kaldi"], ["c.npy", "c.json"]),
    "resample": (["--to", "8k", "-o", "{out}/r.wav"], ["r.wav"]),
    "quantize": (["--bits", "8", "-o", "{out}/q.wav", "--json"], ["q.wav"]),
    "dehum": (["-o", "{out}/d.wav"], ["d.wav"]),
    "stats": (["--json"], []),
    "silence": (["--json"], []),
    "loudness": (["--json"], []),
}


def _args(template: list[str], out: Path) -> list[str]:
    return [a.replace("{out}", str(out)) for a in template]


def _without_source(meta: dict) -> dict:
    return {k: v for k, v in meta.items() if k not in ("source", "path", "input", "output")}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_on_s3_gives_the_local_bytes(command, s3_env, cli, tmp_path):
    template, outputs = COMMANDS[command]
    name = "mono.flac" if command == "dehum" else "stereo.flac"
    local_out, remote_out = tmp_path / "local", tmp_path / "remote"
    local_out.mkdir(), remote_out.mkdir()
    code, local_stdout, err = cli(command, s3_env.local / name, *_args(template, local_out))
    assert code == 0, err
    code, remote_stdout, err = cli(command, s3_env.url(name), *_args(template, remote_out))
    assert code == 0, err
    assert s3_env.server.log.gets(name), "the input was not read from the server"
    for output in outputs:
        local, remote = local_out / output, remote_out / output
        if output.endswith(".json"):
            remote_meta, local_meta = json.loads(remote.read_text()), json.loads(local.read_text())
            if "source" in local_meta:
                assert remote_meta["source"] == s3_env.url(name)  # the URL is the recorded source
            assert _without_source(remote_meta) == _without_source(local_meta)
        else:
            assert remote.read_bytes() == local.read_bytes(), output
    if "--json" in template:
        local_report, remote_report = json.loads(local_stdout), json.loads(remote_stdout)
        assert remote_report.get("path", s3_env.url(name)) == s3_env.url(name)
        assert _without_source(remote_report) == _without_source(local_report)


def test_wav_input_on_s3(s3_env, cli, tmp_path):
    code, local, _ = cli("info", s3_env.local / "stereo.wav", "--json")
    code2, remote, err = cli("info", s3_env.url("stereo.wav"), "--json")
    assert (code, code2) == (0, 0), err
    assert _without_source(json.loads(remote)) == _without_source(json.loads(local))


def test_http_input_reads_ranges_and_records_the_url(http_server, cli, tmp_path):
    url = f"{http_server.url}/stereo.wav"
    code, _, err = cli("mel", url, "--npy", tmp_path / "m.npy")
    assert code == 0, err
    assert http_server.log.gets("/stereo.wav")
    assert all(r.range for r in http_server.log.gets("/stereo.wav")), "every read should be a ranged request"
    assert json.loads((tmp_path / "m.json").read_text())["source"] == url


def test_http_matches_local(http_server, s3, cli, tmp_path):
    code, _, err = cli("mel", f"{http_server.url}/stereo.flac", "--npy", tmp_path / "h.npy")
    assert code == 0, err
    code, _, err = cli("mel", s3.local / "stereo.flac", "--npy", tmp_path / "l.npy")
    assert code == 0, err
    assert (tmp_path / "h.npy").read_bytes() == (tmp_path / "l.npy").read_bytes()


@pytest.mark.parametrize("where", ["s3", "http"])
def test_segment_of_a_long_flac_reads_ranges_not_the_object(where, s3_env, http_server, cli, tmp_path):
    """1 s from minute 15 of a 20-minute FLAC (36 MB): at most 1 MiB leaves the server, in a few requests."""
    size = (s3_env.local / "long.flac").stat().st_size
    assert size > 30 * MiB
    log = s3_env.server.log if where == "s3" else http_server.log
    url = s3_env.url("long.flac") if where == "s3" else f"{http_server.url}/long.flac"
    log.clear()
    code, remote, err = cli("spectrum", url, "--start", "900s", "--dur", "1s", "--peaks", "2", "--json")
    assert code == 0, err
    sent, requests = log.bytes_sent("long.flac"), len(log.gets("long.flac"))
    assert sent <= MiB, f"{sent} bytes in {requests} requests"
    code, local, err = cli("spectrum", s3_env.local / "long.flac", "--start", "900s", "--dur", "1s", "--peaks", "2", "--json")
    assert code == 0, err
    assert _without_source(json.loads(remote)) == _without_source(json.loads(local))


def test_opening_a_long_flac_reads_one_block(s3_env):
    from audiokit.io.reader import open_audio

    with open_audio(s3_env.url("long.flac")) as source:
        assert source.n_samples == 20 * 60 * 16000
        assert s3_env.server.log.bytes_sent("long.flac") <= MiB
        s3_env.server.log.clear()
        block = next(source.blocks(16000, start=10 * 60 * 16000))
        assert block.shape == (1, 16000)
        assert s3_env.server.log.bytes_sent("long.flac") <= MiB


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("s3://audio/missing.flac", "no such object or bucket"),
        ("s3://no-such-bucket/a.flac", "no such object or bucket"),
        ("s3://audio", "is a bucket or a folder (a prefix), not an audio object"),
    ],
)
def test_missing_object_or_bucket(url, reason, s3_env, cli):
    code, out, err = cli("info", url)
    assert code == 3 and out == ""
    assert _one_line(err) == f"error: {url}: {reason}"


def test_http_missing_object(http_server, cli):
    code, _, err = cli("info", f"{http_server.url}/missing.wav")
    assert code == 3
    assert _one_line(err) == f"error: {http_server.url}/missing.wav: no such object or bucket"


@pytest.mark.parametrize("scheme", ["s3", "http"])
def test_server_unreachable(scheme, s3_env, cli):
    port = _free_port()
    if scheme == "s3":
        code, _, err = cli("info", "s3://audio/stereo.flac", "--storage-option", f"endpoint_url=http://127.0.0.1:{port}")
        url = "s3://audio/stereo.flac"
    else:
        url = f"http://127.0.0.1:{port}/stereo.flac"
        code, _, err = cli("info", url)
    assert code == 3
    line = _one_line(err)
    assert line.startswith(f"error: {url}: cannot reach the server (")


def test_no_credentials(s3_env, cli, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code, _, err = cli("info", s3_env.url("stereo.flac"), "--storage-option", "skip_instance_cache=true")
    assert code == 3
    assert _one_line(err).startswith(f"error: {s3_env.url('stereo.flac')}: no credentials found: give --storage-option key=")


@pytest.fixture
def denied_user(s3_env):
    """An IAM user whose policy denies every S3 action, with moto's authorization switched on for the test."""
    import boto3

    iam = boto3.client("iam", endpoint_url=s3_env.server.endpoint, region_name="us-east-1")
    iam.create_user(UserName="denied")
    key = iam.create_access_key(UserName="denied")["AccessKey"]
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="denied", PolicyName="deny-all", PolicyDocument=json.dumps(policy))

    def auth(count: str) -> None:
        request = urllib.request.Request(
            f"{s3_env.server.endpoint}/moto-api/reset-auth",
            data=count.encode(),
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(request, timeout=30).read()

    auth("0")
    try:
        yield key["AccessKeyId"], key["SecretAccessKey"]
    finally:
        auth("inf")
        iam_cleanup = boto3.client("iam", endpoint_url=s3_env.server.endpoint, region_name="us-east-1")
        iam_cleanup.delete_user_policy(UserName="denied", PolicyName="deny-all")
        iam_cleanup.delete_access_key(UserName="denied", AccessKeyId=key["AccessKeyId"])
        iam_cleanup.delete_user(UserName="denied")


def test_access_denied_names_no_secret(denied_user, s3_env, cli, tmp_path):
    key, secret = denied_user
    code, out, err = cli(
        "mel",
        s3_env.url("stereo.flac"),
        "--npy",
        tmp_path / "m.npy",
        "--storage-option",
        f"key={key}",
        "--storage-option",
        f"secret={secret}",
    )
    assert code == 3 and out == ""
    assert _one_line(err) == f"error: {s3_env.url('stereo.flac')}: access denied (check the credentials and the bucket's policy)"
    assert secret not in err
    assert list(tmp_path.iterdir()) == []  # nothing partial


def test_credentials_never_printed_or_recorded(s3_env, cli, tmp_path, monkeypatch):
    """A run given the secret on the command line and in AUDIOKIT_STORAGE_OPTIONS: it appears in no output."""
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AUDIOKIT_STORAGE_OPTIONS", json.dumps({"secret": FAKE_SECRET}))
    given = [
        "--storage-option",
        f"key={FAKE_KEY}",
        "--storage-option",
        f"secret={FAKE_SECRET}",
        "--storage-option",
        "skip_instance_cache=true",
    ]
    texts = []
    for argv in (
        ["mel", s3_env.url("stereo.flac"), "--npy", tmp_path / "m.npy", "-o", tmp_path / "m.png"],
        ["info", s3_env.url("stereo.flac"), "--json"],
        ["info", s3_env.url("missing.flac")],
        ["info", "s3://audio/stereo.flac", "--storage-option", f"endpoint_url=http://127.0.0.1:{_free_port()}"],
        ["mel", s3_env.url("stereo.flac"), "--npy", tmp_path / "x.npy", "--storage-option", "region_name"],
        ["mel", s3_env.url("stereo.flac"), "--debug", "--npy", tmp_path / "y.npy", "--storage-option", "no_such_option=1"],
    ):
        code, out, err = cli(*argv, *given)
        texts += [out, err]
    assert code == 2 or code == 3
    files = [p.read_bytes() for p in tmp_path.iterdir()]
    assert (tmp_path / "m.json").exists()
    assert not any(FAKE_SECRET in t for t in texts)
    assert not any(FAKE_SECRET.encode() in b for b in files)


def test_output_beside_a_url_is_refused(s3_env, cli):
    code, _, err = cli("mel", s3_env.url("stereo.flac"))
    assert code == 2
    assert "the input is a URL: give a local output path" in _one_line(err)


def test_storage_options_from_the_environment(s3_env, cli, monkeypatch):
    """AUDIOKIT_STORAGE_OPTIONS gives the endpoint; --storage-option wins per key."""
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    port = _free_port()
    monkeypatch.setenv("AUDIOKIT_STORAGE_OPTIONS", json.dumps({"endpoint_url": f"http://127.0.0.1:{port}"}))
    code, _, err = cli("info", s3_env.url("stereo.flac"))
    assert code == 3 and "cannot reach the server" in err
    code, _, err = cli("info", s3_env.url("stereo.flac"), "--storage-option", f"endpoint_url={s3_env.server.endpoint}")
    assert code == 0, err
    monkeypatch.setenv("AUDIOKIT_STORAGE_OPTIONS", "[1, 2]")
    code, _, err = cli("info", s3_env.url("stereo.flac"))
    assert code == 2
    assert (
        _one_line(err) == "error: AUDIOKIT_STORAGE_OPTIONS must hold a JSON object of storage options (as --storage-option gives)"
    )

"""``audiokit batch ... --out s3://bucket/prefix`` (issue 22, part 2a): every store written to a real S3 server
(moto on 127.0.0.1) equals, object for object and byte for byte, the same batch written to a local folder; the
lock object, the errors (missing bucket, no credentials, the server stopped mid-batch) and ``kill -9`` + resume.

How the stores are compared (:func:`assert_equals_local`): the set of object names is the set of local file names
(nothing more: no manifest part, temp file or lock left), every array, shard, index and view is the same bytes,
except that the views naming the store's location (``feats.scp``, the Lhotse manifests of ``npy``) hold the
prefix's URL where the local ones hold the folder's path; ``manifest.jsonl`` holds the same records but for their
``finished`` time, ``seconds`` and ``warnings`` (:data:`_PER_RUN`); ``stats.journal`` the same fixed-size records (in the order tasks finished; a record of a task redone after a kill
may be there twice, as on disk: the journal is appended before the manifest, and the latest record counts).
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers.remote import AUDIOKIT, FAKE_KEY, FAKE_SECRET, run_audiokit
from tests.helpers.stores import SPEAKER_REGEX, kill_when, make_corpus
from tests.remote.test_remote_inputs import denied_user  # noqa: F401 (a fixture: moto's IAM user denied every S3 action)

pytestmark = pytest.mark.slow  # each test runs batches (subprocesses, worker pools)

OUT_BUCKET = "outs"
#: The views whose paths start with the store's location (``--out``), per store.
ROOTED = {"npy": ("feats.scp", "cuts.jsonl.gz", "features.jsonl.gz"), "kaldi": ("feats.scp",)}
#: The options of every batch here (``--shard-size 2u``: the sharded stores have 3 shards of the 5 utterances).
OPTIONS = ["--speaker-from", SPEAKER_REGEX]


def _store_args(store: str, shard_size: str = "2u") -> list[str]:
    return ["--store", store, *OPTIONS, *(["--shard-size", shard_size] if store != "npy" else [])]


@pytest.fixture(scope="module")
def inputs(s3, tmp_path_factory):
    """The five utterances of :data:`tests.helpers.stores.CORPUS` under ``s3://audio/outcorpus/``; the output bucket."""
    root = tmp_path_factory.mktemp("outcorpus")
    paths = make_corpus(root)
    client = s3.server.client()
    for path in paths.values():
        client.upload_file(str(path), s3.bucket, f"outcorpus/{path.relative_to(root).as_posix()}")
    client.create_bucket(Bucket=OUT_BUCKET)
    return s3.url("outcorpus/")


@pytest.fixture(scope="module")
def local_store(inputs, s3, tmp_path_factory):
    """``local_store(store, shard_size) -> Path``: the batch of :func:`inputs` into a local folder (made once)."""
    made: dict[tuple[str, str], Path] = {}

    def make(store: str, shard_size: str = "2u") -> Path:
        if (store, shard_size) not in made:
            out = tmp_path_factory.mktemp(f"local-{store}") / "out"
            env = dict(os.environ, **s3.env)
            proc = run_audiokit("batch", "mel", inputs, "--out", out, *_store_args(store, shard_size), "-j", "1", "-q", env=env)
            assert proc.returncode == 0, proc.stderr
            made[store, shard_size] = out
        return made[store, shard_size]

    return make


def _prefix() -> str:
    return f"run-{uuid.uuid4().hex[:8]}"


def bucket_objects(client, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix/`` of the output bucket: name relative to the prefix -> bytes."""
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=OUT_BUCKET, Prefix=prefix + "/"):
        for obj in page.get("Contents", []):
            body = client.get_object(Bucket=OUT_BUCKET, Key=obj["Key"])["Body"].read()
            found[obj["Key"][len(prefix) + 1 :]] = body
    return found


#: Manifest fields that differ between two runs of one batch: when and how long, and the warnings (a warning given
#: once per process, as mel's duplicate-bands warning, lands on whichever input a process ran first).
_PER_RUN = ("finished", "seconds", "warnings")


def _records(data: bytes) -> list[dict]:
    lines = [json.loads(line) for line in data.splitlines() if line.strip()]
    return sorted(({k: v for k, v in r.items() if k not in _PER_RUN} for r in lines), key=lambda r: r["id"])


def _journal_records(data: bytes, n_feats: int = 80) -> list[bytes]:
    size = 16 + 8 + 2 * 8 * n_feats
    assert len(data) % size == 0
    return sorted({data[i : i + size] for i in range(0, len(data), size)})


def _text(data: bytes, name: str) -> bytes:
    return gzip.decompress(data) if name.endswith(".gz") else data


def assert_equals_local(objects: dict[str, bytes], local: Path, url: str, store: str) -> None:
    """See the module docstring."""
    files = {
        p.relative_to(local).as_posix(): p.read_bytes()
        for p in sorted(local.rglob("*"))
        if p.is_file() and p.name != ".audiokit-batch.lock"
    }
    assert sorted(objects) == sorted(files)
    for name, want in files.items():
        got = objects[name]
        if name == "manifest.jsonl":
            pairs = zip(_records(got), _records(want), strict=True)
            assert not [(a["id"], k) for a, b in pairs for k in a.keys() | b.keys() if a.get(k) != b.get(k)], name
        elif name == "stats.journal":
            assert _journal_records(got) == _journal_records(want), name
        elif name in ROOTED.get(store, ()):
            assert _text(got, name) == _text(want, name).replace(str(local).encode(), url.encode()), name
            assert url.encode() in _text(got, name)
        else:
            assert got == want, name


def no_multipart_uploads(client) -> bool:
    return not client.list_multipart_uploads(Bucket=OUT_BUCKET).get("Uploads")


@pytest.mark.parametrize(("store", "jobs"), [("npy", 2), ("shards", 2), ("parquet", 1)])  # kaldi: the next test
def test_s3_to_s3_equals_the_local_batch_byte_for_byte(store, jobs, inputs, local_store, s3_env, cli):
    client = s3_env.server.client()
    prefix = _prefix()
    url = f"s3://{OUT_BUCKET}/{prefix}"
    code, out, err = cli("batch", "mel", inputs, "--out", url, *_store_args(store), "-j", jobs, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["ok"] == 5 and summary["out"] == url and summary["manifest"] == f"{url}/manifest.jsonl"
    requests = s3_env.server.log.requests
    objects = bucket_objects(client, prefix)
    assert_equals_local(objects, local_store(store), url, store)
    # each array or shard is put once, in one request (no multipart upload), and the client never reads one back:
    # the workers put them, only their records come back
    containers = [n for n in objects if n.endswith((".npy", ".tar", ".ark", ".parquet")) and n != "cmvn.ark"]
    assert len(containers) == (5 if store == "npy" else 3)
    for name in containers:
        on_it = [r for r in requests if r.path == f"/{OUT_BUCKET}/{prefix}/{name}"]
        assert [r.method for r in on_it] == ["PUT"], name
    assert not [r for r in requests if r.method == "POST" and "uploads" in r.path]
    assert no_multipart_uploads(client)
    # a second run finds everything done: it reads the bookkeeping, no array, and puts no array again
    s3_env.server.log.clear()
    code, out, err = cli("batch", "mel", inputs, "--out", url, *_store_args(store), "-j", jobs, "--json")
    assert code == 0, err
    assert json.loads(out)["skipped"] == 5
    touched = {r.path for r in s3_env.server.log.requests}
    assert not touched & {f"/{OUT_BUCKET}/{prefix}/{name}" for name in containers}
    assert_equals_local(bucket_objects(client, prefix), local_store(store), url, store)


def test_credentials_given_as_storage_options_are_written_nowhere(inputs, local_store, s3_env, cli, monkeypatch):
    """The kaldi store from s3 to s3 with the credentials on the command line: the local batch's bytes, no secret."""
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    prefix = _prefix()
    url = f"s3://{OUT_BUCKET}/{prefix}"
    given = ["--storage-option", f"key={FAKE_KEY}", "--storage-option", f"secret={FAKE_SECRET}"]
    code, out, err = cli("batch", "mel", inputs, "--out", url, *_store_args("kaldi"), "-j", 2, *given, "--json")
    assert code == 0, err
    objects = bucket_objects(s3_env.server.client(), prefix)
    assert_equals_local(objects, local_store("kaldi"), url, "kaldi")
    for text in [out.encode(), err.encode(), *objects.values()]:
        assert FAKE_SECRET.encode() not in text and FAKE_KEY.encode() not in text


def test_a_missing_bucket_is_one_line_exit_4_and_nothing_written(s3_env, cli, tmp_path):
    make_corpus(tmp_path / "data")
    code, out, err = cli("batch", "mel", tmp_path / "data", "--out", "s3://no-such-bucket-22/feats", "--store", "npy", "-j", 1)
    assert code == 4 and out == ""
    assert err.strip().splitlines() == ["error: s3://no-such-bucket-22/feats: cannot write: no such bucket"]
    assert [(r.method, r.status) for r in s3_env.server.log.requests] == [("PUT", 404)]  # the lock, refused


def test_no_credentials_is_one_line_exit_4(s3_env, cli, tmp_path, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    make_corpus(tmp_path / "data")
    url = f"s3://{OUT_BUCKET}/{_prefix()}"
    fresh = ["--storage-option", "skip_instance_cache=true"]  # not the filesystem of an earlier test, with its keys
    code, out, err = cli("batch", "mel", tmp_path / "data", "--out", url, "--store", "shards", "-j", 1, *fresh)
    assert code == 4 and out == ""
    assert err.strip().splitlines() == [
        f"error: {url}: cannot write: no credentials found: give --storage-option key=... --storage-option secret=..., "
        "or set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile (anonymous access: --storage-option anon=true)"
    ]
    assert not s3_env.server.log.requests  # refused before any request


def test_access_denied_is_one_line_exit_4_naming_no_secret(denied_user, s3_env, cli, tmp_path):  # noqa: F811
    key, secret = denied_user
    make_corpus(tmp_path / "data")
    url = f"s3://{OUT_BUCKET}/{_prefix()}"
    given = ["--storage-option", f"key={key}", "--storage-option", f"secret={secret}"]
    code, out, err = cli("batch", "mel", tmp_path / "data", "--out", url, "--store", "npy", "-j", 1, *given)
    assert code == 4 and out == ""
    assert err.strip().splitlines() == [
        f"error: {url}: cannot write: access denied (check the credentials and the bucket's policy)"
    ]
    assert secret not in err


def test_a_second_batch_on_the_prefix_is_refused_and_a_dead_runs_lock_taken_over(inputs, s3_env, cli, tmp_path):
    client = s3_env.server.client()
    prefix = _prefix()
    url = f"s3://{OUT_BUCKET}/{prefix}"
    lock = f"{prefix}/.audiokit-batch.lock"
    other = {"run": "20260101T000000Z-0000beef", "host": "another-host", "pid": 4242, "started": "2026-01-01T00:00:00Z"}
    client.put_object(Bucket=OUT_BUCKET, Key=lock, Body=json.dumps(other).encode())
    code, _, err = cli("batch", "mel", inputs, "--out", url, "--store", "npy", "-j", 1)
    assert code == 4
    assert err.strip().splitlines() == [
        f"error: {url}: another audiokit batch is writing this prefix (run 20260101T000000Z-0000beef on host "
        f"another-host, pid 4242, since 2026-01-01T00:00:00Z): wait for it, or give another --out; if that run is "
        f"gone, delete {url}/.audiokit-batch.lock"
    ]
    assert sorted(bucket_objects(client, prefix)) == [".audiokit-batch.lock"]
    # the lock of a run of this host whose process is gone (a reaped child's pid) is taken over
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = dict(other, host=socket.gethostname(), pid=child.pid)
    client.put_object(Bucket=OUT_BUCKET, Key=lock, Body=json.dumps(dead).encode())
    code, _, err = cli("batch", "mel", inputs, "--out", url, "--store", "npy", "-j", 1)
    assert code == 0, err
    assert f"warning: {url}/.audiokit-batch.lock: taking over the lock of run {other['run']}" in err
    assert ".audiokit-batch.lock" not in bucket_objects(client, prefix)  # released at the end


def _dead_staging_folders() -> list[str]:
    """The local staging folders (``<tmp>/audiokit-out-<pid>-*``) of processes that no longer run."""
    import tempfile

    from audiokit.io.atomic import pid_alive

    found = []
    for path in Path(tempfile.gettempdir()).glob("audiokit-out-*-*"):
        pid = path.name.split("-")[2]
        if pid.isdigit() and not pid_alive(int(pid)):
            found.append(str(path))
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _parts(client, prefix: str) -> list[dict]:
    """The records in the manifest parts under ``prefix`` (what a killed run committed)."""
    found = []
    listing = client.list_objects_v2(Bucket=OUT_BUCKET, Prefix=f"{prefix}/manifest.d/").get("Contents", [])
    for obj in listing:
        body = client.get_object(Bucket=OUT_BUCKET, Key=obj["Key"])["Body"].read()
        found.extend(json.loads(line) for line in body.splitlines() if line.strip())
    return found


def test_the_server_stopped_mid_batch_is_exit_4_and_the_resume_completes(inputs, local_store, s3_env, tmp_path):
    """A second moto server on its own port (moto's state is this process's: it serves the same buckets) is stopped
    once the batch has committed a task, and started again on the same port for the resume."""
    from moto.server import ThreadedMotoServer

    client = s3_env.server.client()
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")
    prefix = _prefix()
    url = f"s3://{OUT_BUCKET}/{prefix}"
    args = [*AUDIOKIT, "batch", "mel", inputs, "--out", url, *_store_args("npy"), "-j", "1"]
    fail_fast = ["--storage-option", 'config_kwargs={"retries": {"max_attempts": 1}}']
    proc = subprocess.Popen([*args, "--chunk", "1", *fail_fast], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _parts(client, prefix) and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        server.stop()
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode == 0:  # it finished before the server stopped (a loaded machine): nothing to check
        pytest.skip("the batch ended before the server was stopped")
    assert proc.returncode == 4, err
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith(f"error: {url}/") and "cannot reach the server" in lines[0], err
    assert no_multipart_uploads(client)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        proc2 = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.stop()
    assert proc2.returncode == 0, proc2.stderr
    assert "taking over the lock" in proc2.stderr  # the stopped run could not delete its lock; its pid is gone
    assert_equals_local(bucket_objects(client, prefix), local_store("npy"), url, "npy")


@pytest.mark.parametrize("store", ["npy", "shards"])
def test_kill_9_then_resume_redoes_only_what_was_in_flight(store, inputs, local_store, s3_env, cli, tmp_path):
    client = s3_env.server.client()
    prefix = _prefix()
    url = f"s3://{OUT_BUCKET}/{prefix}"
    args = ["batch", "mel", inputs, "--out", url, *_store_args(store, "1u"), "-j", 2, "--chunk", 1]
    killed = kill_when(args, lambda: len(_parts(client, prefix)) >= 2, cwd=tmp_path)
    if not killed:
        pytest.skip("the batch ended before it was killed")
    committed = {r["id"] for r in _parts(client, prefix) if r["status"] == "ok"}
    assert 2 <= len(committed) < 5
    # an upload a killed run left open (one whose file passed s3fs's multipart threshold): the resume aborts it
    client.create_multipart_upload(Bucket=OUT_BUCKET, Key=f"{prefix}/shar/features.000009.tar")
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    assert json.loads(out)["skipped"] == len(committed)  # what the parts list is not computed again
    assert no_multipart_uploads(client)
    assert _dead_staging_folders() == []  # the killed client's shadow and its workers' staging folders: swept
    assert_equals_local(bucket_objects(client, prefix), local_store(store, "1u"), url, store)


@pytest.mark.parametrize("args", [["mel", "--store", "files"], ["info"]])
def test_single_file_outputs_to_a_url_are_refused_exit_2(args, s3_env, cli, tmp_path):
    make_corpus(tmp_path / "data")
    url = f"s3://{OUT_BUCKET}/{_prefix()}"
    code, out, err = cli("batch", args[0], tmp_path / "data", "--out", url, *args[1:], "-j", 1)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"error: --out {url}: only the corpus stores (--store npy, shards, kaldi, parquet) are written to object storage; "
        "--store files and the WAV/report jobs need a local --out"
    ]
    assert not s3_env.server.log.requests


def test_other_options_are_refused_naming_the_prefix_and_force_rebuilds_it(inputs, s3_env, cli):
    client = s3_env.server.client()
    prefix = _prefix()
    url = f"s3://{OUT_BUCKET}/{prefix}"
    code, _, err = cli("batch", "mel", inputs, "--out", url, *_store_args("kaldi"), "-j", 1, "-q")
    assert code == 0, err
    before = bucket_objects(client, prefix)
    code, _, err = cli("batch", "mel", inputs, "--out", url, *_store_args("kaldi"), "--n-mels", 40, "-j", 1)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(f"error: the store in {url} was made with other options")
    assert bucket_objects(client, prefix) == before
    code, _, err = cli("batch", "mel", inputs, "--out", url, *_store_args("kaldi"), "--n-mels", 40, "-j", 1, "--force", "-q")
    assert code == 0, err
    after = bucket_objects(client, prefix)
    assert sorted(after) == sorted(before)  # the same names, rewritten (no part, lock or stale shard left)
    assert json.loads(after["store.json"])["n_feats"] == 40
    assert len(_records(after["manifest.jsonl"])) == 5

"""``audiokit.corpus.open("s3://...")`` (issue 22, part 2b): a corpus store read from object storage.

Each store kind is made by ``audiokit batch`` on local disk and uploaded to the moto server (its index last, as a
run writes it); the remote store must give the local store's ids, arrays (dtype and values, exactly), metadata,
statistics and batches.  Requests are counted at the server: opening is a listing and two GETs (``store.json``,
``index.sqlite``), one utterance one ranged GET (Parquet: the file's footer once, then one GET per row group).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import audiokit.corpus
from audiokit.errors import InputError, ParameterError
from tests.helpers.batch import write_tone_noise
from tests.helpers.remote import FAKE_KEY, FAKE_SECRET

BUCKET = "stores"
#: name -> the batch's store options.
STORES = {
    "npy": ["--store", "npy"],
    "shards": ["--store", "shards"],
    "shards-f16": ["--store", "shards", "--dtype", "float16"],
    "kaldi": ["--store", "kaldi"],
    "kaldi-compressed": ["--store", "kaldi", "--compress"],
    "parquet": ["--store", "parquet"],
}


def _upload(client, folder: Path, prefix: str) -> None:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    files.sort(key=lambda p: p.name == "index.sqlite")  # as a run commits: the index after the manifest
    for path in files:
        client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(folder).as_posix()}")


@pytest.fixture(scope="module")
def stores(s3, tmp_path_factory) -> dict[str, Path]:
    """Every store kind of one small corpus (6 utterances, 2 speakers), local and under ``s3://stores/<name>``."""
    from audiokit.cli.app import main

    root = tmp_path_factory.mktemp("store-corpus")
    data = root / "data"
    for i, duration in enumerate((0.6, 0.9, 1.1, 0.5, 0.7, 1.3)):
        write_tone_noise(data / f"spk{i % 2 + 1}" / f"u{i}.flac", duration, seed=i + 1)
    client = s3.server.client()
    client.create_bucket(Bucket=BUCKET)
    out = {}
    for name, options in STORES.items():
        folder = root / name
        code = main(["batch", "mel", str(data), "--out", str(folder), *options, "--shard-size", "40KB", "--jobs", "1", "-q"])
        assert code == 0
        _upload(client, folder, name)
        out[name] = folder
    return out


def _gets(log) -> list:
    return [r for r in log.requests if r.method == "GET"]


@pytest.mark.parametrize("name", sorted(STORES))
def test_remote_store_equals_the_local_store(name, stores, s3_env):
    local = audiokit.corpus.open(stores[name])
    s3_env.server.log.clear()
    remote = audiokit.corpus.open(f"s3://{BUCKET}/{name}")
    opened = s3_env.server.log.requests
    assert [r.method for r in opened] == ["GET", "GET", "GET"], opened  # listing, store.json, index.sqlite
    assert opened[1].path.endswith("/store.json") and opened[2].path.endswith("/index.sqlite")
    assert remote.kind == local.kind and remote.description == local.description
    assert remote.ids == local.ids and len(remote) == len(local) == 6
    assert remote.failed == local.failed and remote.stats == local.stats
    files = set()
    for item_id in remote.ids:
        s3_env.server.log.clear()
        entry = remote[item_id]
        array = entry.array
        requests = s3_env.server.log.requests
        expected = local[item_id].array
        assert array.dtype == expected.dtype and array.shape == expected.shape
        assert np.array_equal(array, expected), item_id  # the same stored values, bit for bit
        assert entry.metadata == local[item_id].metadata
        assert all(r.method == "GET" and r.range for r in requests), requests  # ranged reads only, no HEAD
        first_of_its_file = entry.record["file"] not in files
        files.add(entry.record["file"])
        if local.kind == "parquet":  # the footer once per file, then the row group
            assert len(requests) <= (2 if first_of_its_file else 1), requests
        else:
            assert len(requests) == 1, requests
            offset, nbytes = entry.record["offset"], entry.record["nbytes"]
            assert requests[0].range == f"bytes={offset}-{offset + nbytes - 1}"
    assert len(files) >= (1 if local.kind == "npy" else 2)  # several shards (--shard-size 40KB); npy: a file each


@pytest.mark.parametrize("name", ["shards", "parquet"])
def test_remote_batches_equal_the_local_batches(name, stores, s3_env):
    local = audiokit.corpus.open(stores[name])
    remote = audiokit.corpus.open(f"s3://{BUCKET}/{name}")
    pairs = zip(remote.batches(batch_size=4), local.batches(batch_size=4), strict=True)
    for got, expected in pairs:
        assert got.ids == expected.ids
        assert np.array_equal(got.features, expected.features) and np.array_equal(got.mask, expected.mask)


def test_storage_options_keyword(stores, s3_env, monkeypatch):
    """The endpoint and credentials as ``storage_options=`` (HF datasets' keyword), none from the environment."""
    for key in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(key)
    options = {"endpoint_url": s3_env.server.endpoint, "key": FAKE_KEY, "secret": FAKE_SECRET}
    remote = audiokit.corpus.open(f"s3://{BUCKET}/shards", storage_options=options)
    local = audiokit.corpus.open(stores["shards"])
    assert np.array_equal(remote[local.ids[0]].array, local[local.ids[0]].array)


def test_unreachable_server_is_one_line_without_the_secret(s3_env, monkeypatch):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = {"endpoint_url": f"http://127.0.0.1:{port}", "key": FAKE_KEY, "secret": FAKE_SECRET,
               "config_kwargs": {"connect_timeout": 1, "retries": {"max_attempts": 1}}}  # fmt: skip
    with pytest.raises(InputError) as caught:
        audiokit.corpus.open(f"s3://{BUCKET}/shards", storage_options=options)
    text = str(caught.value)
    assert text.startswith(f"s3://{BUCKET}/shards: cannot reach the server") and "\n" not in text
    assert FAKE_SECRET not in text


def test_a_prefix_without_a_store_is_refused(s3_env):
    with pytest.raises(InputError, match=rf"^s3://{BUCKET}/nothing-here: no store.json here: not an audiokit corpus store$"):
        audiokit.corpus.open(f"s3://{BUCKET}/nothing-here")
    with pytest.raises(InputError, match="no such object or bucket|no store.json"):
        audiokit.corpus.open("s3://no-such-bucket-22/feats")


def test_an_http_store_is_refused_with_the_reason(http_server):
    with pytest.raises(ParameterError, match="an HTTP server gives no listing"):
        audiokit.corpus.open(f"{http_server.url}/feats")


@pytest.mark.parametrize("case", ["no index", "parts"])
def test_an_unfinished_store_is_read_from_its_manifest_and_parts(case, stores, s3_env):
    """An unfinished run's store, as a batch writing to object storage leaves it: no ``index.sqlite`` yet (a first
    run killed), or ``manifest.d/`` parts listing tasks the index does not hold.  Read from ``manifest.jsonl`` and the
    parts, with a warning; every utterance they list is there."""
    client = s3_env.server.client()
    prefix = f"kaldi-{case.replace(' ', '-')}"
    _upload(client, stores["kaldi"], prefix)
    lines = (stores["kaldi"] / "manifest.jsonl").read_bytes().splitlines(keepends=True)
    if case == "no index":
        client.delete_object(Bucket=BUCKET, Key=f"{prefix}/index.sqlite")
    else:  # the last three records only in parts, as a run killed before its finish leaves them
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/manifest.jsonl", Body=b"".join(lines[:-3]))
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/manifest.d/run1-000001.jsonl", Body=b"".join(lines[-3:-1]))
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/manifest.d/run1-000002.jsonl", Body=lines[-1])
    with pytest.warns(UserWarning, match=r"index.sqlite is missing, or a run is unfinished \(manifest.d/ holds"):
        remote = audiokit.corpus.open(f"s3://{BUCKET}/{prefix}")
    local = audiokit.corpus.open(stores["kaldi"])
    assert remote.ids == local.ids
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for item_id in local.ids:
            assert np.array_equal(remote[item_id].array, local[item_id].array)


def test_a_finished_store_with_no_parts_is_not_rebuilt(stores, s3_env):
    """The index is put before the whole manifest (the ledger's order), so a manifest newer than the index is the
    normal case in object storage: no warning, the index is used."""
    client = s3_env.server.client()
    _upload(client, stores["npy"], "npy-order")
    manifest = (stores["npy"] / "manifest.jsonl").read_bytes()
    client.put_object(Bucket=BUCKET, Key="npy-order/manifest.jsonl", Body=manifest)  # newest object of the store
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        remote = audiokit.corpus.open(f"s3://{BUCKET}/npy-order")
    assert remote.ids == audiokit.corpus.open(stores["npy"]).ids


@pytest.mark.slow
def test_a_store_written_to_s3_by_a_batch_reads_back(stores, s3_env, cli):
    """``batch ... --out s3://`` (part 2a) then ``audiokit.corpus.open`` of it: the local store's arrays."""
    client = s3_env.server.client()
    data = stores["shards"].parent / "data"
    for path in sorted(data.rglob("*.flac")):
        client.upload_file(str(path), BUCKET, f"audio-in/{path.relative_to(data).as_posix()}")
    out = f"s3://{BUCKET}/written"
    code, _, err = cli(
        "batch", "mel", f"s3://{BUCKET}/audio-in/", "--out", out, "--store", "shards", "--shard-size", "40KB", "-q"
    )
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        remote = audiokit.corpus.open(out)
    local = audiokit.corpus.open(stores["shards"])
    assert remote.ids == local.ids
    for item_id in local.ids:
        assert np.array_equal(remote[item_id].array, local[item_id].array)


def test_a_member_beyond_the_object_is_one_line(stores, s3_env):
    """A shard shorter than its index says (a store changed under its index): the read names the object."""
    client = s3_env.server.client()
    _upload(client, stores["shards"], "shards-cut")
    remote = audiokit.corpus.open(f"s3://{BUCKET}/shards-cut")
    last = remote[remote.ids[-1]]
    client.put_object(Bucket=BUCKET, Key=f"shards-cut/{last.record['file']}", Body=b"\0" * 1024)
    with pytest.raises(InputError) as caught:
        _ = last.array
    assert str(caught.value).startswith(f"s3://{BUCKET}/shards-cut/{last.record['file']}: ")

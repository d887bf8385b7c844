"""``audiokit batch`` over URL inputs (issue 22, part 1): a prefix listed like a folder, ``@list`` files of URLs;
outputs local.  The features must be the bytes the same batch writes from the local copies."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from audiokit.batch.jobs import Job
from audiokit.pipelines.info import InfoOptions
from audiokit.pipelines.params import InputOptions
from tests.helpers.remote import FAKE_KEY, FAKE_SECRET

pytestmark = pytest.mark.slow  # every test runs a batch (worker processes)


@pytest.fixture(scope="module")
def corpus(s3, tmp_path_factory):
    """Two speakers' FLAC utterances on disk and under ``s3://audio/corpus/`` (plus a text file and a hidden one)."""
    import numpy as np
    import soundfile as sf

    root = tmp_path_factory.mktemp("corpus")
    client = s3.server.client()
    for spk in ("spk1", "spk2"):
        (root / spk).mkdir()
        for i in range(2):
            t = np.arange(16000 + 1600 * i) / 16000
            path = root / spk / f"utt{i}.flac"
            sf.write(path, 0.3 * np.sin(2 * np.pi * (300 + 100 * i) * t), 16000, subtype="PCM_16")
            client.upload_file(str(path), "audio", f"corpus/{spk}/utt{i}.flac")
    client.put_object(Bucket="audio", Key="corpus/notes.txt", Body=b"not audio")
    client.put_object(Bucket="audio", Key="corpus/.cache/x.flac", Body=b"hidden")
    return root


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.npy"))}


def _manifest(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("store", ["files", "npy"])
def test_batch_from_a_prefix_equals_the_local_batch(store, corpus, s3_env, cli, tmp_path):
    code, _, err = cli("batch", "mel", corpus, "--out", tmp_path / "local", "--store", store, "-q")
    assert code == 0, err
    code, _, err = cli("batch", "mel", s3_env.url("corpus/"), "--out", tmp_path / "remote", "--store", store, "-q")
    assert code == 0, err
    local, remote = _tree(tmp_path / "local"), _tree(tmp_path / "remote")
    assert len(remote) == 4 and remote == local
    records = _manifest(tmp_path / "remote")
    assert sorted(r["id"] for r in records) == ["spk1/utt0", "spk1/utt1", "spk2/utt0", "spk2/utt1"]
    assert {r["path"] for r in records} == {s3_env.url(f"corpus/{r['id']}.flac") for r in records}


def test_batch_prefix_with_glob_and_without_trailing_slash(corpus, s3_env, cli, tmp_path):
    code, _, err = cli("batch", "info", s3_env.url("corpus"), "--glob", "utt1*", "--out", tmp_path / "o", "-q")
    assert code == 0, err
    assert sorted(r["id"] for r in _manifest(tmp_path / "o")) == ["spk1/utt1", "spk2/utt1"]


def test_batch_list_of_urls_with_a_missing_object(corpus, s3_env, cli, tmp_path):
    listing = tmp_path / "urls.txt"
    listing.write_text(f"{s3_env.url('corpus/spk1/utt0.flac')}\n# a comment\n{s3_env.url('corpus/spk1/gone.flac')}\n")
    code, _, err = cli("batch", "mel", f"@{listing}", "--out", tmp_path / "o", "-q")
    assert code == 3
    records = {r["id"]: r for r in _manifest(tmp_path / "o")}
    assert records["utt0"]["status"] == "ok"
    assert records["gone"]["status"] == "failed"
    assert records["gone"]["error"] == f"{s3_env.url('corpus/spk1/gone.flac')}: no such object or bucket"


def test_batch_of_a_missing_prefix_is_refused(s3_env, cli, tmp_path):
    code, _, err = cli("batch", "mel", s3_env.url("nothing-here/"), "--out", tmp_path / "o")
    assert code == 3
    assert err.strip() == f"error: {s3_env.url('nothing-here/')}: no such object or bucket"
    assert not (tmp_path / "o").exists()  # refused before the batch creates anything


def test_storage_options_are_not_recorded_nor_fingerprinted(corpus, s3_env, cli, tmp_path, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    given = [
        "--storage-option",
        f"key={FAKE_KEY}",
        "--storage-option",
        f"secret={FAKE_SECRET}",
        "--storage-option",
        "skip_instance_cache=true",
    ]
    code, out, err = cli("batch", "mel", s3_env.url("corpus/spk2/"), "--out", tmp_path / "o", *given, "--json")
    assert code == 0, err
    assert FAKE_SECRET not in out + err
    for path in (tmp_path / "o").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert FAKE_SECRET.encode() not in data, path
            if path.suffix == ".gz":
                import gzip

                assert FAKE_SECRET.encode() not in gzip.decompress(data), path
    with_secret = Job(command="info", options=InfoOptions(), inputs=InputOptions(storage_options={"secret": FAKE_SECRET}))
    assert with_secret.fingerprint() == Job(command="info", options=InfoOptions()).fingerprint()


def test_url_user_info_is_never_shown_or_recorded(http_server, cli, tmp_path):
    """``http://user:pw@host/x.wav`` is read (the server ignores the auth) but shown and recorded without ``pw``."""
    host = http_server.url.removeprefix("http://")
    url = f"http://reader:pw-Hx81q@{host}/stereo.wav"
    code, out, err = cli("info", url, "--json")
    assert code == 0, err
    assert json.loads(out)["path"] == f"http://{host}/stereo.wav"
    code, out, err = cli("batch", "info", url, "--out", tmp_path / "o", "-q")
    assert code == 0, err
    assert "pw-Hx81q" not in out + err
    assert not any(b"pw-Hx81q" in p.read_bytes() for p in (tmp_path / "o").rglob("*") if p.is_file())
    code, out, err = cli("mel", f"http://reader:pw-Hx81q@{host}/missing.wav", "--npy", tmp_path / "m.npy")
    assert code == 3 and "pw-Hx81q" not in err
    assert os.path.exists(tmp_path / "o" / "manifest.jsonl")


@pytest.mark.parametrize("store", ["npy", "shards"])
def test_resume_skips_unchanged_objects_and_redoes_a_rewritten_one(store, corpus, s3_env, cli, tmp_path):
    """Records of URL inputs hold size, mtime and ETag (one HEAD): a re-run reads no object; a rewritten one is redone."""
    import numpy as np
    import soundfile as sf

    client = s3_env.server.client()
    prefix = f"resume-{store}"
    client.copy_object(Bucket="audio", Key=f"{prefix}/a.flac", CopySource={"Bucket": "audio", "Key": "corpus/spk1/utt0.flac"})
    client.copy_object(Bucket="audio", Key=f"{prefix}/b.flac", CopySource={"Bucket": "audio", "Key": "corpus/spk1/utt1.flac"})
    out = tmp_path / "o"
    code, _, err = cli("batch", "mel", s3_env.url(f"{prefix}/"), "--out", out, "--store", store, "-q")
    assert code == 0, err
    first = _manifest(out)
    assert all(r["size"] and r["mtime_ns"] and str(r["digest"]).startswith("etag:") for r in first)
    s3_env.server.log.clear()
    code, _, err = cli("batch", "mel", s3_env.url(f"{prefix}/"), "--out", out, "--store", store, "-q")
    assert code == 0, err
    assert len(_manifest(out)) == len(first)  # nothing recomputed
    assert s3_env.server.log.gets(f"{prefix}/a.flac") == [] and s3_env.server.log.gets(f"{prefix}/b.flac") == []  # no body
    rewritten = tmp_path / "a.flac"
    sf.write(rewritten, 0.2 * np.cos(np.arange(16000) * 0.05), 16000, subtype="PCM_16")
    client.upload_file(str(rewritten), "audio", f"{prefix}/a.flac")
    code, _, err = cli("batch", "mel", s3_env.url(f"{prefix}/"), "--out", out, "--store", store, "-q")
    assert code == 0, err
    redone = _manifest(out)[len(first) :]
    # npy: the rewritten input alone; shards: its shard, which also holds b (a changed member makes it stale)
    assert sorted(r["id"] for r in redone) == (["a"] if store == "npy" else ["a", "b"])
    code, _, err = cli("mel", rewritten, "--npy", tmp_path / "a.npy")
    assert code == 0, err
    import audiokit

    stored = audiokit.corpus.open(out)["a"].array
    assert np.array_equal(stored, np.load(tmp_path / "a.npy").T)  # the store is (n_frames, n_mels)

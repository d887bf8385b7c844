"""Resume and ``--verify``: an input rewritten with the same size and its mtime restored (``touch -r``, ``cp -p``,
``rsync -t``) is computed again by default (``head-tail``) and by ``hash``, kept by ``stat``; ``hash`` also catches
a change in the middle of a file that ``head-tail`` does not read; an unchanged re-run computes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from audiokit.batch.manifest import DIGEST_SPAN, content_digest, head_tail_digest
from audiokit.batch.stores.layout import shard_file
from tests.helpers.batch import manifest_lines, write_tone_noise

MODES = ("head-tail", "hash", "stat")
NAMES = ("a", "b", "c", "d")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """``data/``: four 0.5 s mono PCM_16 WAVs of the same size (16 044 bytes each)."""
    for i, name in enumerate(NAMES):
        write_tone_noise(tmp_path / "data" / f"{name}.wav", 0.5, seed=i)
    return tmp_path / "data"


def _rewrite_same_size(path: Path, seed: int, seconds: float = 0.5) -> None:
    """Write another signal of the same length over ``path`` and put its old mtime back (``touch -r``)."""
    st = path.stat()
    before = path.read_bytes()
    write_tone_noise(path, seconds, seed=seed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert path.read_bytes() != before


def _flip_middle(path: Path) -> None:
    """Change one byte in the middle of ``path`` (beyond 64 KiB of either end) and put its old mtime back."""
    st = path.stat()
    assert st.st_size > 2 * DIGEST_SPAN + 2
    with open(path, "r+b") as fh:
        fh.seek(st.st_size // 2)
        byte = fh.read(1)
        fh.seek(st.st_size // 2)
        fh.write(bytes([byte[0] ^ 0x55]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _batch(cli, data: Path, out: Path, *extra) -> str:
    code, _, err = cli("batch", "mel", data, "--out", out, "-j", "1", *extra)
    assert code == 0, err
    return err


def test_digests_are_recorded_and_do_not_change_the_fingerprint(cli, data, tmp_path):
    out = tmp_path / "out"
    _batch(cli, data, out, "--store", "files")
    lines = manifest_lines(out)
    assert {line["digest"] for line in lines} == {head_tail_digest(str(data / f"{n}.wav")) for n in NAMES}
    assert all(line["digest"].startswith("blake2b:") and line["content_digest"] is None for line in lines)
    hashed = tmp_path / "hashed"
    _batch(cli, data, hashed, "--store", "files", "--verify", "hash")
    lines_hash = manifest_lines(hashed)
    assert {line["content_digest"] for line in lines_hash} == {content_digest(str(data / f"{n}.wav")) for n in NAMES}
    assert {line["fingerprint"] for line in lines + lines_hash} == {lines[0]["fingerprint"]}


def test_head_tail_digest_reads_both_ends_only(tmp_path):
    big = write_tone_noise(tmp_path / "big.wav", 5.0, seed=1)  # 160 044 bytes
    small = write_tone_noise(tmp_path / "small.wav", 0.5, seed=1)
    digests = (head_tail_digest(str(big)), content_digest(str(big)), head_tail_digest(str(small)))
    _flip_middle(big)
    assert head_tail_digest(str(big)) == digests[0] and content_digest(str(big)) != digests[1]
    with open(big, "r+b") as fh:  # a byte in the last 64 KiB
        fh.seek(-10, os.SEEK_END)
        fh.write(b"\x7f")
    assert head_tail_digest(str(big)) != digests[0]
    with open(small, "r+b") as fh:  # a small file is read whole
        fh.seek(small.stat().st_size // 2)
        fh.write(b"\x7f\x7f")
    assert head_tail_digest(str(small)) != digests[2]
    assert head_tail_digest(str(tmp_path / "missing.wav")) is None and content_digest(str(tmp_path / "x")) is None


@pytest.mark.parametrize("store", ["files", "npy"])
def test_same_size_rewrite_with_mtime_restored(cli, data, tmp_path, store):
    out = tmp_path / "out"
    _batch(cli, data, out, "--store", store)
    arrays = {p: p.read_bytes() for p in out.rglob("*.npy")}
    _rewrite_same_size(data / "b.wav", seed=9)
    err = _batch(cli, data, out, "--store", store, "--verify", "stat")
    assert "0 ok, 0 failed, 4 already done" in err  # today's behaviour: the stale output is kept
    assert {p: p.read_bytes() for p in out.rglob("*.npy")} == arrays
    err = _batch(cli, data, out, "--store", store)
    assert "1 ok, 0 failed, 3 already done" in err
    changed = {p for p in out.rglob("*.npy") if p.read_bytes() != arrays.get(p)}
    assert len(changed) == 1 and "b." in changed.pop().name
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, "--store", store)


def test_sharded_store_redoes_the_shard_of_a_rewritten_member(cli, data, tmp_path):
    out = tmp_path / "out"
    args = ("--store", "shards", "--shard-size", "2u")
    _batch(cli, data, out, *args)
    shards = [out / shard_file("shards", n) for n in (0, 1)]
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in shards]
    _rewrite_same_size(data / "c.wav", seed=9)  # ids a, b | c, d: shard 1
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, *args, "--verify", "stat")
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in shards] == before
    assert "2 ok, 0 failed, 2 already done" in _batch(cli, data, out, *args)
    assert (shards[0].read_bytes(), shards[0].stat().st_mtime_ns) == before[0]
    assert shards[1].read_bytes() != before[1][0]
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, *args)


@pytest.mark.parametrize("store", ["files", "shards"])
def test_hash_catches_a_change_in_the_middle(cli, tmp_path, store):
    data = tmp_path / "data"
    for i, name in enumerate(NAMES):
        write_tone_noise(data / f"{name}.wav", 5.0, seed=i)  # 160 044 bytes > 128 KiB
    out = tmp_path / "out"
    args = ("--store", store, *(("--shard-size", "2u") if store == "shards" else ()))
    _batch(cli, data, out, *args, "--verify", "hash")
    _flip_middle(data / "a.wav")
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, *args)  # head-tail misses it (documented)
    redone = 2 if store == "shards" else 1
    assert f"{redone} ok, 0 failed, {4 - redone} already done" in _batch(cli, data, out, *args, "--verify", "hash")
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, *args, "--verify", "hash")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("store", ["files", "npy", "shards"])
def test_an_unchanged_rerun_computes_nothing(cli, data, tmp_path, mode, store):
    out = tmp_path / "out"
    assert "4 ok, 0 failed, 0 already done" in _batch(cli, data, out, "--store", store, "--verify", mode)
    lines = len(manifest_lines(out))
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, "--store", store, "--verify", mode)
    assert len(manifest_lines(out)) == lines


def test_hash_recomputes_records_made_without_it_once(cli, data, tmp_path):
    out = tmp_path / "out"
    _batch(cli, data, out, "--store", "files")
    first = {p: p.read_bytes() for p in out.rglob("*.npy")}
    assert "4 ok, 0 failed, 0 already done" in _batch(cli, data, out, "--store", "files", "--verify", "hash")
    assert {p: p.read_bytes() for p in out.rglob("*.npy")} == first  # the same numbers, now with full digests
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, "--store", "files", "--verify", "hash")
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, "--store", "files")


def test_a_record_without_a_digest_is_taken_on_size_and_mtime(cli, data, tmp_path):
    """Manifests of an older audiokit have no ``digest``: the default resumes them (it does not recompute all)."""
    import json

    out = tmp_path / "out"
    _batch(cli, data, out, "--store", "files")
    lines = manifest_lines(out)
    for line in lines:
        del line["digest"], line["content_digest"]
    (out / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert "0 ok, 0 failed, 4 already done" in _batch(cli, data, out, "--store", "files")


def test_an_unknown_mode_is_a_usage_error(cli, data, tmp_path):
    code, _, err = cli("batch", "mel", data, "--out", tmp_path / "out", "--verify", "md5")
    assert code == 2 and "--verify: 'md5' is not one of stat, head-tail, hash" in err
    assert not (tmp_path / "out").exists()


def test_arrays_after_a_verified_rewrite_are_the_new_files(cli, data, tmp_path):
    """The recomputed output is the rewritten file's (the single-file command's bytes)."""
    out = tmp_path / "out"
    _batch(cli, data, out, "--store", "files")
    _rewrite_same_size(data / "d.wav", seed=7)
    _batch(cli, data, out, "--store", "files")
    code, _, err = cli("mel", data / "d.wav", "--npy", tmp_path / "ref.npy")
    assert code == 0, err
    assert np.array_equal(np.load(out / "d.mel.npy"), np.load(tmp_path / "ref.npy"))

"""audiokit.io.tar_shard: deterministic tar shards read by tarfile, webdataset and Hugging Face datasets."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audiokit.errors import InputError, OutputError, ParameterError
from audiokit.io.tar_shard import TarShardWriter, item_id_of, member_header, read_member, shard_key

#: Ids that need every rule of shard_key: dots, spaces, "/", "%", empty parts, "__" parts, controls, non-ASCII, long.
IDS = [
    "spk1/utt.0001",
    "a b.c d",
    "dir/sub/x.y.z",
    "100%",
    "%2E",
    "/abs",
    "trail/",
    "a//b",
    "__meta__",
    "x/__init__.py",
    "ünï.cödé",
    "tab\there",
    "back\\slash",
    "L" * 150 + ".long",
]


def members(rng: np.random.Generator, ids=IDS, n_feats: int = 5) -> list[tuple[str, np.ndarray, dict]]:
    """``(id, (n_frames, n_feats) float32 array, record)`` per id, of different lengths (one of 0 frames)."""
    out = []
    for i, item_id in enumerate(ids):
        frames = (i * 7) % 23
        out.append((item_id, rng.standard_normal((frames, n_feats)).astype(np.float32), {"id": item_id, "n": i}))
    return out


def write_shard(path: Path, items, *, dtype: str = "float32", block: int = 4) -> dict[str, dict]:
    """Write ``items`` through TarShardWriter, ``block`` rows per write; return the locations by id."""
    locations = {}
    with TarShardWriter(path, dtype=dtype) as writer:
        for item_id, array, meta in items:
            sink = writer.begin(shard_key(item_id), array.shape[0], array.shape[1])
            for first in range(0, array.shape[0], block):
                sink.write(array[first : first + block])
            locations[item_id] = writer.end(meta)
    return locations


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def json_bytes(meta: dict) -> bytes:
    return (json.dumps(meta, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


def tarfile_reference(items, dtype: str = "float32") -> bytes:
    """The same members written by the standard library's tarfile (PAX format, TarInfo's defaults)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for item_id, array, meta in items:
            for name, data in ((".npy", npy_bytes(array.astype(dtype))), (".json", json_bytes(meta))):
                info = tarfile.TarInfo(shard_key(item_id) + name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# --- keys ---------------------------------------------------------------------------------------------------------


def webdataset_split(name: str) -> tuple[str | None, str | None]:
    from webdataset.tariterators import base_plus_ext

    return base_plus_ext(name)


def assert_legal_key(item_id: str) -> None:
    """The key maps back, and every consumer's rule takes ``<key>.npy`` to the key (not skipped, no dot)."""
    key = shard_key(item_id)
    assert item_id_of(key) == item_id
    assert "." not in key
    name = key + ".npy"
    assert webdataset_split(name) == (key, "npy")
    # webdataset's metadata skip (tar_file_iterator's default skip_meta) and datasets' hidden-file skip
    import re

    assert not re.match(r"__[^/]*__($|/)", name)
    assert not os.path.basename(name).startswith((".", "__"))
    # Lhotse Shar: str(Path(member).parent / Path(member).stem) == cut.id
    assert str(Path(name).parent / Path(name).stem) == key


@pytest.mark.parametrize("item_id", [*IDS, "\udcff\udc80.raw", "\x85c1", "_x/_y", "a.", ".hidden", "..", "%%"])
def test_shard_key_is_reversible_and_legal(item_id):
    assert_legal_key(item_id)


def test_shard_key_examples():
    assert shard_key("spk1/utt.0001") == "spk1/utt%2E0001"
    assert shard_key("100%") == "100%25"
    assert shard_key("a//b/") == "a%2F%2Fb%2F"
    assert shard_key("__meta__/x/__y") == "%5F_meta__/x/%5F_y"
    assert shard_key("a b/ünï") == "a b/ünï"


@given(st.text(min_size=1))
def test_every_text_id_has_a_legal_key(item_id):
    assert_legal_key(item_id)


@given(st.text(min_size=1), st.text(min_size=1))
def test_distinct_ids_have_distinct_keys(a, b):
    assert (shard_key(a) == shard_key(b)) == (a == b)


@pytest.mark.parametrize("item_id", ["", "\ud800x"])
def test_shard_key_refuses(item_id):
    with pytest.raises(ParameterError):
        shard_key(item_id)


@pytest.mark.parametrize("key", ["", "a.b", "%zz", "%2e", "a//b", "/a", "__x", "100%"])
def test_item_id_of_refuses_what_shard_key_never_writes(key):
    with pytest.raises(ParameterError, match="not a shard key"):
        item_id_of(key)


# --- bytes --------------------------------------------------------------------------------------------------------


def test_file_equals_tarfile_and_npy_members_equal_np_save(tmp_path, rng):
    items = members(rng)
    path = tmp_path / "features.000000.tar"
    write_shard(path, items)
    data = path.read_bytes()
    assert data == tarfile_reference(items)
    assert len(data) % 10240 == 0
    with tarfile.open(path) as tar:
        for item_id, array, meta in items:
            assert tar.extractfile(shard_key(item_id) + ".npy").read() == npy_bytes(array)
            assert tar.extractfile(shard_key(item_id) + ".json").read() == json_bytes(meta)


@pytest.mark.parametrize(
    "name,size", [("a.npy", 188), ("x" * 100 + ".npy", 5), ("é.npy", 0), ("big.npy", 8**11), ("é" * 80 + ".npy", 8**11 + 3)]
)
def test_member_header_equals_tarfile(name, size):
    info = tarfile.TarInfo(name)
    info.size = size
    assert member_header(name, size) == info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")


@pytest.mark.slow
def test_same_bytes_in_a_fresh_process(tmp_path, rng):
    items = members(rng)
    np.savez(tmp_path / "arrays.npz", *[array for _, array, _ in items])
    (tmp_path / "records.json").write_text(json.dumps([[item_id, meta] for item_id, _, meta in items]))
    script = f"""
import json, sys
import numpy as np
sys.path.insert(0, {str(Path(__file__).parents[2])!r})
from tests.io.test_tar_shard import write_shard
arrays = np.load({str(tmp_path / "arrays.npz")!r})
records = json.load(open({str(tmp_path / "records.json")!r}))
items = [(item_id, arrays[f"arr_{{i}}"], meta) for i, (item_id, meta) in enumerate(records)]
write_shard({str(tmp_path / "child.tar")!r}, items, block=9)
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    write_shard(tmp_path / "parent.tar", items, block=2)
    assert (tmp_path / "child.tar").read_bytes() == (tmp_path / "parent.tar").read_bytes()


# --- consumers ----------------------------------------------------------------------------------------------------


def test_tarfile_lists_members_in_order_and_locations_read_them(tmp_path, rng):
    items = members(rng)
    path = tmp_path / "shard.tar"
    locations = write_shard(path, items)
    with tarfile.open(path) as tar:
        infos = tar.getmembers()
    assert [info.name for info in infos] == [shard_key(i) + ext for i, _, _ in items for ext in (".npy", ".json")]
    for (item_id, array, _), info in zip(items, infos[::2]):
        location = locations[item_id]
        assert location["member"] == info.offset
        assert location["nbytes"] == array.nbytes
        assert location["offset"] == info.offset_data + len(npy_bytes(array)) - array.nbytes
        assert location["offset"] % 64 == 0
        assert json.loads(json.dumps(location)) == location
        shape = array.shape
        if array.size:
            mapped = np.memmap(path, np.float32, "r", location["offset"], shape)
            np.testing.assert_array_equal(mapped, array)
        read = read_member(path, location, *shape)
        assert read.shape == shape and read.dtype == np.float32 and read.flags.c_contiguous
        np.testing.assert_array_equal(read, array)
        np.testing.assert_array_equal(read_member(path, location, *shape, mmap=True), array)


# webdataset 1.0.2 opens a local shard with open() in gopen and never closes it (tar_file_iterator only deletes
# the TarFile): the file object's ResourceWarning, from webdataset, not from our code.
@pytest.mark.filterwarnings("ignore:unclosed file <_io.BufferedReader:ResourceWarning")
@pytest.mark.parametrize("decode", [True, False])
def test_webdataset_reads_every_member(tmp_path, rng, decode):
    import webdataset

    items = members(rng)
    path = tmp_path / "shard.tar"
    write_shard(path, items)
    dataset = webdataset.WebDataset(str(path), shardshuffle=False)
    samples = list(dataset.decode() if decode else dataset)
    assert [item_id_of(sample["__key__"]) for sample in samples] == [item_id for item_id, _, _ in items]
    for sample, (_, array, meta) in zip(samples, items):
        assert set(sample) >= {"npy", "json"}
        got = sample["npy"] if decode else np.load(io.BytesIO(sample["npy"]))
        record = sample["json"] if decode else json.loads(sample["json"])
        assert got.dtype == np.float32 and got.shape == array.shape
        np.testing.assert_array_equal(got, array)
        assert record == meta


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_hugging_face_datasets_reads_every_member(tmp_path, rng, dtype):
    import datasets

    # every member has frames: a list of no rows has no row length, so datasets returns a (0, n_feats) member
    # as an empty object array
    items = [item for item in members(rng) if len(item[1])]
    path = tmp_path / "shard.tar"
    write_shard(path, items, dtype=dtype)
    ds = datasets.load_dataset("webdataset", data_files={"train": [str(path)]}, split="train", cache_dir=str(tmp_path / "hf"))
    # datasets' webdataset builder decodes "<key>.npy" with numpy.lib.format.read_array (allow_pickle=False) and
    # "<key>.json" with json.loads; the arrays are stored as Arrow lists of lists of the array's dtype and the
    # records as a struct.  Its numpy format returns float32 arrays for every float column (its default dtype).
    assert ds.features["npy"] == datasets.List(datasets.List(datasets.Value(dtype)))
    assert [item_id_of(key) for key in ds["__key__"]] == [item_id for item_id, _, _ in items]
    rows = ds.with_format("numpy")
    for row, (_, array, _) in zip(rows, items):
        got = row["npy"]
        assert got.shape == array.shape and got.dtype == np.float32
        np.testing.assert_array_equal(got, array.astype(dtype).astype(np.float32))
    assert list(ds["json"]) == [meta for _, _, meta in items]


# --- writing rules ------------------------------------------------------------------------------------------------


def test_drop_leaves_the_file_as_if_never_begun(tmp_path, rng):
    items = members(rng)
    dropped = rng.standard_normal((17, 5)).astype(np.float32)
    path = tmp_path / "with_drop.tar"
    with TarShardWriter(path) as writer:
        for i, (item_id, array, meta) in enumerate(items):
            if i in (0, 5):
                sink = writer.begin(shard_key(item_id), 17, 5)
                sink.write(dropped[:9])
                size = writer.size
                writer.drop()
                assert writer.size < size
            sink = writer.begin(shard_key(item_id), *array.shape)
            sink.write(array)
            writer.end(meta)
        writer.begin(shard_key("last"), 3, 5).write(dropped[:2])
        writer.drop()
    write_shard(tmp_path / "plain.tar", items)
    assert path.read_bytes() == (tmp_path / "plain.tar").read_bytes()


def test_an_exception_in_the_block_leaves_no_file(tmp_path, rng):
    with pytest.raises(RuntimeError, match="input failed"):
        with TarShardWriter(tmp_path / "shard.tar") as writer:
            writer.begin(shard_key("a"), 4, 5).write(rng.standard_normal((4, 5)))
            writer.end({})
            writer.begin(shard_key("b"), 4, 5).write(rng.standard_normal((2, 5)))
            raise RuntimeError("input failed")
    assert list(tmp_path.iterdir()) == []


def test_a_short_member_is_an_output_error_and_leaves_no_file(tmp_path, rng):
    with pytest.raises(OutputError, match="got 3 frames, expected 4"):
        with TarShardWriter(tmp_path / "shard.tar") as writer:
            writer.begin(shard_key("a"), 4, 5).write(rng.standard_normal((3, 5)))
            writer.end({})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "misuse,match",
    [
        (lambda w, s: s.write(np.zeros((2, 5))), "more than the 4 frames"),
        (lambda w, s: s.write(np.zeros((1, 6))), "of 5 values"),
        (lambda w, s: w.begin(shard_key("b"), 1, 5), "begun before"),
        (lambda w, s: (s.write(np.zeros((1, 5))), w.end({"x": object()})), "not JSON"),
        (lambda w, s: None, "neither ended nor dropped"),
        (lambda w, s: (s.write(np.zeros((1, 5))), w.end({}), w.begin(shard_key("a"), 1, 5)), "twice in one shard"),
        (lambda w, s: (s.write(np.zeros((1, 5))), w.end({}), w.end({})), "no member begun"),
        (lambda w, s: (s.write(np.zeros((1, 5))), w.end({}), s.write(np.zeros((1, 5)))), "after it ended"),
        (lambda w, s: w.drop() or w.begin("a.b", 1, 5), "not a shard key"),
    ],
)
def test_misuse_is_refused_and_leaves_no_file(tmp_path, misuse, match):
    with pytest.raises((OutputError, ParameterError), match=match):
        with TarShardWriter(tmp_path / "shard.tar") as writer:
            sink = writer.begin(shard_key("a"), 4, 5)
            sink.write(np.zeros((3, 5)))
            misuse(writer, sink)
    assert list(tmp_path.iterdir()) == []


def test_float16(tmp_path, rng):
    items = members(rng)
    path = tmp_path / "shard.tar"
    locations = write_shard(path, items, dtype="float16")
    assert path.read_bytes() == tarfile_reference(items, "float16")
    for item_id, array, _ in items:
        got = read_member(path, locations[item_id], *array.shape, dtype="float16")
        assert got.dtype == np.float16 and locations[item_id]["nbytes"] == array.size * 2
        np.testing.assert_array_equal(got, array.astype(np.float16))


def test_refuses_other_dtypes():
    with pytest.raises(ParameterError, match="float64"):
        TarShardWriter("x.tar", dtype="float64")


def test_fsync_before_the_rename(tmp_path, rng, monkeypatch):
    path = tmp_path / "shard.tar"
    seen: list[tuple[bool, int]] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        seen.append((path.exists(), os.fstat(fd).st_size))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    write_shard(path, members(rng)[:3])
    assert seen == [(False, path.stat().st_size)]


def test_read_member_refuses_a_truncated_shard_or_a_wrong_shape(tmp_path, rng):
    items = members(rng)[:3]
    path = tmp_path / "shard.tar"
    locations = write_shard(path, items)
    item_id, array, _ = items[-1]
    with pytest.raises(InputError, match="no \\(2, 5\\) float32"):
        read_member(path, locations[item_id], 2, 5)
    with open(path, "r+b") as fh:
        fh.truncate(locations[item_id]["offset"] + 8)
    for mmap in (False, True):
        with pytest.raises(InputError, match="shard ends before byte"):
            read_member(path, locations[item_id], *array.shape, mmap=mmap)
    with pytest.raises(InputError, match="No such file"):
        read_member(tmp_path / "missing.tar", locations[item_id], *array.shape)

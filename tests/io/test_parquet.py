"""audiokit.io.parquet: files read by pyarrow and by Hugging Face datasets as Array2D, deterministic bytes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audiokit.errors import InputError, OutputError, ParameterError
from audiokit.io import parquet as parquet_module
from audiokit.io.parquet import ParquetWriter, hf_features, read_row
from tests.helpers.paths import ROOT

N_FEATS = 6
LENGTHS = (12, 0, 1, 40, 7, 3, 25)


def members(seed: int = 7) -> list[tuple[np.ndarray, dict]]:
    """Members and their records: varying lengths (one empty), a speaker and a segment start on some."""
    rng = np.random.default_rng(seed)
    out = []
    for i, n in enumerate(LENGTHS):
        frames = (rng.standard_normal((n, N_FEATS)) * 10 - 30).astype(np.float32)
        record = {
            "id": f"spk{i % 2}/utt.{i}",
            "duration": n / 100 + 0.015,
            "sr": 16000,
            "source": f"corpus/spk{i % 2}/utt.{i}.flac",
            "speaker": f"spk{i % 2}" if i != 4 else None,
            "start": 1.5 * i if i % 3 == 0 else None,
        }
        out.append((frames, record))
    return out


def write_members(path, items, *, dtype="float32", row_group_rows=None, block=5) -> list[dict]:
    """Write ``items`` (frames given in blocks of ``block`` rows, as float64) and return the locations."""
    locations = []
    with ParquetWriter(path, dtype=dtype, n_feats=N_FEATS, row_group_rows=row_group_rows) as writer:
        for i, (frames, record) in enumerate(items):
            sink = writer.begin(f"key{i}", frames.shape[0], N_FEATS)
            for first in range(0, frames.shape[0], block):
                sink.write(frames[first : first + block].astype(np.float64))
            locations.append(writer.end(record))
    return locations


def write_sample(path: str) -> None:
    """The file the determinism test writes in this process and in a fresh one."""
    write_members(path, members(), row_group_rows=3)


def load_hf(path, cache, **format_kwargs):
    import datasets

    dataset = datasets.load_dataset("parquet", data_files=[str(path)], split="train", cache_dir=str(cache))
    return dataset, dataset.with_format("numpy", **format_kwargs)


def test_pyarrow_reads_every_column_and_read_row_every_array(tmp_path):
    items = members()
    path = tmp_path / "feats.000000.parquet"
    locations = write_members(path, items, row_group_rows=3)
    assert locations == [{"row": i} for i in range(len(items))]
    assert pq.ParquetFile(path).metadata.num_row_groups == 3  # 3 + 3 + 1 rows
    table = pq.read_table(path)
    feats_type = table.schema.field("feats").type  # datasets' Array2D extension type once datasets is imported
    assert getattr(feats_type, "storage_type", feats_type) == pa.list_(pa.list_(pa.float32()))
    assert [table.schema.field(name).type for name in ("n_frames", "duration", "sr", "start")] == [
        pa.int32(),
        pa.float64(),
        pa.int32(),
        pa.float64(),
    ]
    rows = table.to_pylist()
    for i, (frames, record) in enumerate(items):
        row = rows[i]
        assert row["id"] == record["id"] and row["source"] == record["source"]
        assert row["n_frames"] == frames.shape[0] and row["sr"] == 16000 and row["duration"] == record["duration"]
        assert row["speaker"] == record["speaker"] and row["start"] == record["start"]
        assert np.array_equal(np.array(row["feats"], dtype=np.float32).reshape(-1, N_FEATS), frames)
        got = read_row(path, i)
        assert got["id"] == record["id"]
        assert got["feats"].dtype == np.float32 and got["feats"].shape == frames.shape
        assert np.array_equal(got["feats"], frames)


def test_schema_metadata_is_the_one_datasets_writes_for_array2d(tmp_path):
    import datasets

    path = tmp_path / "f.parquet"
    write_members(path, members())
    metadata = json.loads(pq.read_schema(path).metadata[b"huggingface"])
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "feats": datasets.Array2D((None, N_FEATS), "float32"),
            "n_frames": datasets.Value("int32"),
            "duration": datasets.Value("float64"),
            "sr": datasets.Value("int32"),
            "speaker": datasets.Value("string"),
            "source": datasets.Value("string"),
            "start": datasets.Value("float64"),
        }
    )
    assert metadata == json.loads(features.arrow_schema.metadata[b"huggingface"])
    assert metadata == {"info": {"features": hf_features(N_FEATS, "float32")}}
    # the field is the Arrow type datasets itself writes for Array2D (read with datasets' types registered)
    assert pq.read_schema(path).field("feats") == features.arrow_schema.field("feats")


def test_datasets_with_format_numpy_gives_time_major_float32_arrays(tmp_path):
    items = members()
    path = tmp_path / "feats.parquet"
    write_members(path, items, row_group_rows=2)
    dataset, numpy_view = load_hf(path, tmp_path / "hf-cache")
    assert str(dataset.features["feats"]) == f"Array2D(shape=(None, {N_FEATS}), dtype='float32')"
    assert dataset.num_rows == len(items)
    for i, (frames, record) in enumerate(items):
        row = numpy_view[i]
        assert isinstance(row["feats"], np.ndarray) and row["feats"].dtype == np.float32
        assert row["feats"].shape == frames.shape
        assert np.array_equal(row["feats"], frames)
        assert row["id"] == record["id"] and row["n_frames"] == frames.shape[0]
        assert np.array_equal(read_row(path, i)["feats"], row["feats"])  # read_row with datasets' type registered


def test_float16_is_stored_as_half_floats(tmp_path):
    items = members()
    path = tmp_path / "half.parquet"
    write_members(path, items, dtype="float16")
    assert pq.read_schema(path).field("feats").type.storage_type == pa.list_(pa.list_(pa.float16()))
    assert json.loads(pq.read_schema(path).metadata[b"huggingface"])["info"]["features"]["feats"]["dtype"] == "float16"
    _, half_view = load_hf(path, tmp_path / "hf-cache", dtype=np.float16)
    _, default_view = load_hf(path, tmp_path / "hf-cache")
    for i, (frames, _) in enumerate(items):
        expected = frames.astype(np.float16)
        got = read_row(path, i)["feats"]
        assert got.dtype == np.float16 and np.array_equal(got, expected)
        assert half_view[i]["feats"].dtype == np.float16 and np.array_equal(half_view[i]["feats"], expected)
        # datasets' numpy formatter up-casts floats to float32 unless asked for a dtype
        assert default_view[i]["feats"].dtype == np.float32 and np.array_equal(default_view[i]["feats"], expected)


def test_row_groups_follow_the_byte_target(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_module, "ROW_GROUP_BYTES", 40 * N_FEATS * 4)  # 40 frames of features
    path = tmp_path / "f.parquet"
    items = members()
    write_members(path, items)
    metadata = pq.ParquetFile(path).metadata
    counts = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
    assert counts == [4, 3]  # 12+0+1+40 frames reach 40; then 7+3+25 are flushed at the end
    for i, (frames, _) in enumerate(items):
        assert np.array_equal(read_row(path, i)["feats"], frames)
    with pytest.raises(InputError, match="no row 7"):
        read_row(path, 7)


def test_drop_then_more_members_equals_a_file_without_the_dropped_one(tmp_path):
    items = members()
    with ParquetWriter(tmp_path / "dropped.parquet", n_feats=N_FEATS, row_group_rows=3) as writer:
        for i, (frames, record) in enumerate(items):
            if i in (0, 4):
                writer.begin("broken", 30, N_FEATS).write(np.ones((10, N_FEATS)))
                writer.drop()
            writer.begin(f"key{i}", frames.shape[0], N_FEATS).write(frames)
            assert writer.end(record) == {"row": i}
    write_members(tmp_path / "clean.parquet", items, row_group_rows=3)
    assert (tmp_path / "dropped.parquet").read_bytes() == (tmp_path / "clean.parquet").read_bytes()


def test_the_same_members_give_the_same_bytes_in_one_process(tmp_path):
    write_sample(str(tmp_path / "a.parquet"))
    write_members(tmp_path / "b.parquet", members(), row_group_rows=3, block=1)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    write_members(tmp_path / "c.parquet", members(seed=8), row_group_rows=3)
    assert (tmp_path / "a.parquet").read_bytes() != (tmp_path / "c.parquet").read_bytes()


@pytest.mark.slow
def test_the_same_members_give_the_same_bytes_in_a_fresh_process(tmp_path):
    write_sample(str(tmp_path / "here.parquet"))
    code = "import sys; from tests.io.test_parquet import write_sample; write_sample(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "there.parquet")], check=True, cwd=ROOT, timeout=300)
    assert (tmp_path / "there.parquet").read_bytes() == (tmp_path / "here.parquet").read_bytes()


def test_an_exception_leaves_no_file_and_no_temp(tmp_path):
    with pytest.raises(RuntimeError, match="input failed"):
        with ParquetWriter(tmp_path / "f.parquet", n_feats=N_FEATS, row_group_rows=1) as writer:
            for i, (frames, record) in enumerate(members()):
                writer.begin(f"k{i}", frames.shape[0], N_FEATS).write(frames)
                writer.end(record)
            raise RuntimeError("input failed")
    assert list(tmp_path.iterdir()) == []


def test_short_members_wrong_widths_and_incomplete_records_are_output_errors(tmp_path):
    frames, record = members()[0]
    with pytest.raises(OutputError, match="got 11 frames, expected 12"):
        with ParquetWriter(tmp_path / "f.parquet", n_feats=N_FEATS) as writer:
            writer.begin("a", 12, N_FEATS).write(frames[:11])
            writer.end(record)
    with pytest.raises(OutputError, match="has 5 features; this file holds 6"):
        with ParquetWriter(tmp_path / "f.parquet", n_feats=N_FEATS) as writer:
            writer.begin("a", 12, 5)
    with pytest.raises(OutputError, match="lacks 'source'"):
        with ParquetWriter(tmp_path / "f.parquet", n_feats=N_FEATS) as writer:
            writer.begin("a", 12, N_FEATS).write(frames)
            writer.end({k: v for k, v in record.items() if k != "source"})
    with pytest.raises(OutputError, match="begun but not ended"):
        with ParquetWriter(tmp_path / "f.parquet", n_feats=N_FEATS) as writer:
            writer.begin("a", 12, N_FEATS).write(frames)
    assert list(tmp_path.iterdir()) == []


def test_bad_parameters_and_a_missing_pyarrow(monkeypatch):
    with pytest.raises(ParameterError, match="float64"):
        ParquetWriter("f.parquet", dtype="float64", n_feats=3)
    with pytest.raises(ParameterError, match="n_feats"):
        ParquetWriter("f.parquet", n_feats=0)
    with pytest.raises(ParameterError, match="row_group_rows"):
        ParquetWriter("f.parquet", n_feats=3, row_group_rows=0)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # what `import pyarrow` meets when it is not installed
    with pytest.raises(ParameterError, match=r"--store parquet needs pyarrow: pip install 'audiokit\[stores\]'"):
        ParquetWriter("f.parquet", n_feats=3)


def test_an_empty_file_has_the_schema(tmp_path):
    path = tmp_path / "empty.parquet"
    with ParquetWriter(path, n_feats=N_FEATS):
        pass
    table = pq.read_table(path)
    assert table.num_rows == 0 and table.schema.names == [
        "id",
        "feats",
        "n_frames",
        "duration",
        "sr",
        "speaker",
        "source",
        "start",
    ]

"""audiokit.batch.stores.lhotse against what Lhotse 1.33 itself writes for the same utterances (tests/data/lhotse_views/).

Lhotse is not a test dependency: the references were written by Lhotse's own writers (``SharWriter`` with
``ArrayTarWriter`` + its cut writer, ``DataCut.compute_and_store_features`` with ``NumpyFilesWriter``,
``FeatureExtractor.extract_from_recording_and_store``); ``make_references.py --check`` beside them reads our views
with the real Lhotse (``CutSet.from_shar``/``from_file``, ``qa.validate``, ``collate_features``).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from audiokit.batch.stores import lhotse as views
from audiokit.errors import OutputError, ParameterError

DATA = Path(__file__).resolve().parents[1] / "data" / "lhotse_views"
CASES = ("whole", "segment", "mix", "resampled")
WHOLE = ("whole", "mix", "resampled")


def reference(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Every field (path) where two JSON values differ: value, type (0 vs 0.0 changes the bytes) or key order."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out = [] if list(ours) == list(theirs) else [f"{where or '.'}: keys {list(ours)} != {list(theirs)}"]
        for key in ours.keys() & theirs.keys():
            out += differences(ours[key], theirs[key], f"{where}.{key}")
        return out
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in differences(a, b, f"{where}[{i}]")]
    if ours != theirs or type(ours) is not type(theirs):
        return [f"{where}: {ours!r} != Lhotse's {theirs!r}"]
    return []


def with_start(d: dict[str, Any], start: float) -> dict[str, Any]:
    out = json.loads(json.dumps(d))
    out["start"] = start
    if "features" in out:
        out["features"]["start"] = start
    return out


@pytest.mark.parametrize("name", CASES)
def test_numpy_files_cut_is_lhotses(name: str) -> None:
    ref = reference(name)
    lh = ref["lhotse"]
    ours = views.numpy_files_cut(ref["record"], ref["facts"], lh["storage_path"], lh["storage_key"])
    assert differences(ours, lh["numpy_files_cut"]) == []
    assert json.dumps(ours, ensure_ascii=False) == lh["numpy_files_cut_text"]  # the jsonl line, byte for byte


@pytest.mark.parametrize("name", WHOLE)
def test_shar_member_and_cut_are_lhotses(name: str) -> None:
    ref = reference(name)
    lh = ref["lhotse"]
    assert differences(views.shar_member(ref["record"], ref["facts"]), lh["shar_member"]) == []
    assert views.shar_member_bytes(ref["record"], ref["facts"]) == lh["shar_member_text"].encode("utf-8")
    ours = views.shar_cut(ref["record"], ref["facts"])
    assert differences(ours, lh["shar_cut"]) == []
    assert json.dumps(ours, ensure_ascii=False) + "\n" == lh["shar_cut_text"]


def test_shar_segment_keeps_its_start() -> None:
    """Lhotse's SharWriter moves a cut to start 0 (right when it also writes the audio); ours keep the segment's."""
    ref = reference("segment")
    lh, start = ref["lhotse"], ref["record"]["start"]
    member, cut = views.shar_member(ref["record"], ref["facts"]), views.shar_cut(ref["record"], ref["facts"])
    assert member["start"] == cut["start"] == cut["features"]["start"] == start == 0.5
    assert lh["shar_member"]["start"] == lh["shar_cut"]["start"] == 0
    assert differences(with_start(member, 0), lh["shar_member"]) == []
    assert differences(with_start(cut, 0), lh["shar_cut"]) == []
    # the numpy_files cut, which Lhotse writes with the segment's start, agrees on it
    assert lh["numpy_files_cut"]["start"] == lh["numpy_files_cut"]["features"]["start"] == start


@pytest.mark.parametrize("name", CASES)
def test_shar_cut_features_are_the_member(name: str) -> None:
    ref = reference(name)
    assert views.shar_cut(ref["record"], ref["facts"])["features"] == views.shar_member(ref["record"], ref["facts"])


@pytest.mark.parametrize("name", WHOLE)
def test_features_line_is_lhotses(name: str) -> None:
    ref = reference(name)
    lh = ref["lhotse"]
    theirs = lh["features_line"]  # written by a second NumpyFilesWriter.write: a file of its own
    ours = views.features_line(ref["record"], ref["facts"], theirs["storage_path"], theirs["storage_key"])
    assert differences(ours, theirs) == []


def test_features_line_of_a_segment() -> None:
    """Lhotse 1.33 cannot write this line (it declares the recording's 2 s and its own check refuses); ours is the
    cut's features with the recording id, and its duration gives its frame count by Lhotse's rule."""
    ref = reference("segment")
    lh, record, facts = ref["lhotse"], ref["record"], ref["facts"]
    assert lh["features_line"] is None and "declared num_frames is 100" in lh["features_line_error"]
    ours = views.features_line(record, facts, lh["storage_path"], lh["storage_key"])
    expected = dict(lh["numpy_files_cut"]["features"])
    channels = expected.pop("channels")
    assert ours == {**expected, "recording_id": record["source"], "channels": channels}
    assert list(ours)[-2:] == ["recording_id", "channels"]  # Features' field order
    assert views.lhotse_num_frames(ours["duration"], ours["frame_shift"], ours["sampling_rate"]) == ours["num_frames"] == 100


@pytest.mark.parametrize("name", CASES)
def test_member_names_give_the_cut_id(name: str) -> None:
    """Lhotse pairs tar members as <key>.npy then <key>.json and asserts parent/stem of the data member == cut id."""
    ref = reference(name)
    key = ref["record"]["key"]
    assert ref["lhotse"]["tar_members"] == [f"{key}.npy", f"{key}.json"]
    member = PurePosixPath(f"{key}.npy")
    assert str(member.parent / member.stem) == views.shar_cut(ref["record"], ref["facts"])["id"] == key


def test_keys_with_a_slash_and_original_ids() -> None:
    ref = reference("whole")
    cut = views.shar_cut(ref["record"], ref["facts"])
    assert ref["record"]["key"] == "spk1/utt_1" and cut["id"] == "spk1/utt_1"
    assert cut["custom"] == {"audiokit_id": "spk1/utt.1"}
    assert cut["supervisions"][0]["speaker"] == "spk1"
    assert "speaker" not in views.shar_cut(reference("segment")["record"], reference("segment")["facts"])["supervisions"][0]


@pytest.mark.parametrize(
    ("n_samples", "hop", "frames"),
    [(25700, 160, 161), (25679, 160, 160), (25680, 160, 161), (16000, 160, 100), (9876, 80, 123), (159, 160, 1), (79, 160, 0)],
)
def test_lhotse_num_frames(n_samples: int, hop: int, frames: int) -> None:
    """(n + hop//2) // hop: Lhotse's compute_num_frames (closed form)."""
    assert views.lhotse_num_frames(n_samples / 16000, hop / 16000, 16000) == frames


@pytest.mark.parametrize("name", CASES)
def test_reference_frame_counts_pass_the_framing_check(name: str) -> None:
    ref = reference(name)  # n_frames there is lhotse.utils.compute_num_frames'
    record = ref["record"]
    assert views.lhotse_num_frames(record["duration"], ref["facts"]["frame_shift"], record["sr"]) == record["n_frames"]
    views.check_lhotse_framing(record, ref["facts"])


def test_framing_check_refuses_other_framings() -> None:
    ref = reference("whole")
    short = {**ref["record"], "n_frames": ref["record"]["n_frames"] - 2}  # Kaldi's snip-edges count
    with pytest.raises(ParameterError, match=r"has 159 frames, Lhotse's rule gives 161 .*--compat lhotse"):
        views.check_lhotse_framing(short, ref["facts"])
    at_22k = {**ref["record"], "sr": 22050}
    with pytest.raises(ParameterError, match="220.5 samples at 22050 Hz"):
        views.check_lhotse_framing(at_22k, ref["facts"])
    views.check_lhotse_framing({**at_22k, "n_frames": 161}, {**ref["facts"], "frame_shift": 220 / 22050})


def test_refusals() -> None:
    seg, mix = reference("segment"), reference("mix")
    with pytest.raises(ParameterError, match="2 channels and the store's channel is None"):
        views.shar_cut(mix["record"], {**mix["facts"], "channel": None})
    with pytest.raises(ParameterError, match="channel is 2"):
        views.shar_cut(mix["record"], {**mix["facts"], "channel": 2})
    with pytest.raises(ParameterError, match="holds a '.'"):
        views.shar_member({**seg["record"], "key": "b.seg"}, seg["facts"])
    no_length = {k: v for k, v in seg["record"].items() if k != "source_n_samples"}
    with pytest.raises(ParameterError, match="needs source_n_samples"):
        views.shar_cut(no_length, seg["facts"])
    with pytest.raises(ParameterError, match="channel count, got None"):
        views.numpy_files_cut({**seg["record"], "channels": None}, seg["facts"], "/store", "b_seg_1.npy")
    with pytest.raises(ParameterError, match="empty features"):
        views.shar_member({**seg["record"], "n_frames": 0}, seg["facts"])


def test_mono_input_of_a_channel_store_is_channel_0() -> None:
    ref = reference("whole")
    for channel in (None, 0):
        cut = views.shar_cut(ref["record"], {**ref["facts"], "channel": channel})
        assert cut["channel"] == cut["features"]["channels"] == cut["supervisions"][0]["channel"] == 0
        assert cut["type"] == "MonoCut"


def test_mono_input_of_a_mix_store_is_a_one_channel_multicut() -> None:
    """One schema per store: with --mix every member's "channels" is a list (HF datasets' webdataset builder infers
    one schema from the first members; 0 beside [0, 1] failed).  Lhotse 1.33 reads it: from_shar, qa.validate
    (read_data=True) and collate_features pass on such a store (checked in /tmp/lhotse-venv for this change)."""
    ref = reference("whole")
    cut = views.shar_cut(ref["record"], {**ref["facts"], "channel": "mix"})
    assert cut["type"] == "MultiCut"
    assert cut["channel"] == cut["features"]["channels"] == cut["supervisions"][0]["channel"] == [0]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("url", ["s3://audio/corpus/spk1/utt.1.wav", "https://host/corpus/a.flac"])
def test_an_input_read_from_a_url_is_a_url_source(name: str, url: str) -> None:
    """A batch over ``s3://`` inputs records the URL as the source: Lhotse reads an ``AudioSource`` of type ``url``
    through ``open_best`` (smart_open), but hands a ``file`` one to soundfile, so ``load_audio`` and
    ``qa.validate(read_data=True)`` failed on such a store (Lhotse 1.33 + moto, benchmarks/interop_lhotse.py
    --s3).  Lhotse's ``Recording(sources=[AudioSource("url", [0], url)], ...).to_dict()`` is the reference recording
    with ``type`` and ``source`` replaced; every other field and the features are unchanged."""
    ref = reference(name)
    lh = ref["lhotse"]
    record = {**ref["record"], "source": url}
    ours = views.numpy_files_cut(record, ref["facts"], lh["storage_path"], lh["storage_key"])
    theirs = json.loads(json.dumps(lh["numpy_files_cut"]))
    recording = theirs["recording"]
    recording["sources"] = [{**source, "type": "url", "source": url} for source in recording["sources"]]
    if ref["record"].get("start") is not None:  # a segment's recording id is its source
        recording["id"] = theirs["supervisions"][0]["recording_id"] = url
    assert differences(ours, theirs) == []
    shar = views.shar_cut(record, ref["facts"])
    assert shar["recording"] == ours["recording"] and shar["recording"]["sources"][0]["type"] == "url"
    # a local path stays a file source
    assert views.shar_cut(ref["record"], ref["facts"])["recording"]["sources"][0]["type"] == "file"


def test_write_jsonl_gz_reproducible(tmp_path: Path) -> None:
    lines = [views.shar_cut(reference(n)["record"], reference(n)["facts"]) for n in CASES]
    lines.append({"id": "ünïcode", "custom": {"audiokit_id": "日本.wav"}})
    first, second = tmp_path / "cuts.000000.jsonl.gz", tmp_path / "other" / "cuts.000000.jsonl.gz"
    second.parent.mkdir()
    assert views.write_jsonl_gz(first, lines) == len(lines)
    os.utime(first, (0, 0))
    views.write_jsonl_gz(second, iter(lines))
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert data[:4] == b"\x1f\x8b\x08\x00"  # gzip, deflate, no FNAME: no file name in the header
    assert data[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    text = gzip.decompress(data).decode("utf-8")
    assert text == "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    assert "日本.wav" in text  # UTF-8, as Lhotse's SequentialJsonlWriter (ensure_ascii=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cuts.000000.jsonl.gz", "other"]


def test_write_jsonl_gz_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "cuts.jsonl.gz"
    views.write_jsonl_gz(path, [{"id": "a"}])
    before = path.read_bytes()

    def failing():
        yield {"id": "b"}
        raise OutputError("the store failed midway", path)

    with pytest.raises(OutputError, match="midway"):
        views.write_jsonl_gz(path, failing())
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["cuts.jsonl.gz"]  # no temp file left

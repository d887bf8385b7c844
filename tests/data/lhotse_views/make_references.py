"""What Lhotse itself writes for four utterances of an audiokit store (tests/data/lhotse_views/<case>.json), and a check
of :mod:`audiokit.batch.stores.lhotse` against the real Lhotse.

Lhotse needs torch, which is not a test dependency: run this in the separate venv of ``benchmarks/interop_lhotse.py``::

    /tmp/lhotse-venv/bin/python tests/data/lhotse_views/make_references.py          # write the references
    /tmp/lhotse-venv/bin/python tests/data/lhotse_views/make_references.py --check  # audiokit's views, read by Lhotse

The README beside this file says what each reference holds and how it was made.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import io
import json
import platform
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
#: What the temporary folders are renamed to in the stored references.
AUDIO, STORE = "/audio", "/store"

#: name: (file, sr of the file, samples, channels, seed, record fields, store facts)
CASES: dict[str, dict[str, Any]] = {
    "whole": {
        "file": "a.wav",
        "file_sr": 16000,
        "n": 25700,
        "channels": 1,
        "seed": 1,
        "record": {"id": "spk1/utt.1", "key": "spk1/utt_1", "start": None, "sr": 16000, "speaker": "spk1"},
        "facts": {"frame_shift": 0.01, "n_feats": 80, "dtype": "float32", "feature_type": "kaldi-fbank", "channel": None},
    },
    "segment": {
        "file": "b.flac",
        "file_sr": 16000,
        "n": 32000,
        "channels": 2,
        "seed": 2,
        "record": {"id": "b.seg.1", "key": "b_seg_1", "start": 0.5, "duration": 1.0, "sr": 16000, "speaker": None},
        "facts": {"frame_shift": 0.01, "n_feats": 64, "dtype": "float32", "feature_type": "audiokit-mel", "channel": 1},
    },
    "mix": {
        "file": "c.wav",
        "file_sr": 8000,
        "n": 9876,
        "channels": 2,
        "seed": 3,
        "record": {"id": "c", "key": "c", "start": None, "sr": 8000, "speaker": "spk2"},
        "facts": {"frame_shift": 0.01, "n_feats": 13, "dtype": "float16", "feature_type": "audiokit-mfcc", "channel": "mix"},
    },
    "resampled": {
        "file": "d.wav",
        "file_sr": 22050,
        "n": 33075,
        "channels": 1,
        "seed": 4,
        "record": {"id": "d", "key": "d", "start": None, "sr": 16000, "speaker": None, "source_sr": 22050},
        "facts": {"frame_shift": 0.01, "n_feats": 80, "dtype": "float32", "feature_type": "kaldi-fbank", "channel": None},
    },
}


def _lhotse_num_frames(duration: float, frame_shift: float, sr: int) -> int:
    from lhotse.utils import compute_num_frames

    return int(compute_num_frames(duration, frame_shift, sr))


def make_inputs(audio: Path) -> dict[str, dict[str, Any]]:
    """Write the four input files; return each case's record (as the batch side would give it) and facts."""
    out = {}
    for name, case in CASES.items():
        rng = np.random.default_rng(case["seed"])
        codes = np.clip(rng.standard_normal((case["n"], case["channels"])) * 3000, -32768, 32767).astype(np.int16)
        path = audio / case["file"]
        sf.write(path, codes, case["file_sr"], subtype="PCM_16")
        record = dict(case["record"])
        record["source"] = str(path)
        record["channels"] = case["channels"]
        if record["start"] is None:  # the whole file at the features' rate
            record["duration"] = round(case["n"] * record["sr"] / case["file_sr"]) / record["sr"]
        else:
            record["source_n_samples"] = case["n"]
        record["n_frames"] = _lhotse_num_frames(record["duration"], case["facts"]["frame_shift"], record["sr"])
        out[name] = {"record": record, "facts": dict(case["facts"])}
    return out


def array_of(name: str, record: dict[str, Any], facts: dict[str, Any]) -> np.ndarray:
    """The stored (n_frames, n_feats) array of a case (seeded values; Lhotse never looks at them)."""
    rng = np.random.default_rng(100 + CASES[name]["seed"])
    return rng.standard_normal((record["n_frames"], facts["n_feats"])).astype(facts["dtype"])


def _extractor(name: str, facts: dict[str, Any], array: np.ndarray) -> Any:
    """A Lhotse FeatureExtractor whose features are ``array`` (named and framed as the store says)."""
    from lhotse.features.base import FeatureExtractor

    @dataclasses.dataclass
    class Config:
        pass

    class Stored(FeatureExtractor):
        config_type = Config

        @property
        def frame_shift(self) -> float:
            return float(facts["frame_shift"])

        def feature_dim(self, sampling_rate: int) -> int:
            return int(facts["n_feats"])

        def extract(self, samples: np.ndarray, sampling_rate: int) -> np.ndarray:
            return array

    Stored.name = facts["feature_type"]
    return Stored()


def lhotse_cut(record: dict[str, Any], facts: dict[str, Any]) -> Any:
    """The cut Lhotse's own API builds for the utterance: Recording.from_file (+ resample), one supervision."""
    from lhotse import MonoCut, Recording, SupervisionSegment, fastcopy

    rec = Recording.from_file(record["source"], recording_id=record["key"] if record["start"] is None else record["source"])
    if record.get("source_sr", record["sr"]) != record["sr"]:
        rec = rec.resample(record["sr"])
    if record["start"] is None:
        cut = rec.to_cut()  # MonoCut of channel 0, or a MultiCut of every channel (the --mix view)
    else:
        cut = MonoCut(
            id=record["key"], start=record["start"], duration=record["duration"], channel=facts["channel"], recording=rec
        )
    sup = SupervisionSegment(
        id=record["key"], recording_id=rec.id, start=0.0, duration=cut.duration, channel=cut.channel, speaker=record["speaker"]
    )
    return fastcopy(cut, id=record["key"], supervisions=[sup], custom={"audiokit_id": record["id"]})


def lhotse_views(name: str, case: dict[str, Any], work: Path) -> dict[str, Any]:
    """What Lhotse writes for one case: its numpy_files cut and FeatureSet line, its Shar member and cuts line."""
    from lhotse import CutSet
    from lhotse.features.io import NumpyFilesWriter
    from lhotse.shar import SharWriter

    record, facts = case["record"], case["facts"]
    array = array_of(name, record, facts)
    extractor = _extractor(name, facts, array)
    cut = lhotse_cut(record, facts)
    writer = NumpyFilesWriter(work / "store")
    with_feats = cut.compute_and_store_features(extractor, writer)  # DataCut.compute_and_store_features
    try:  # FeatureExtractor.extract_from_recording_and_store: how Lhotse writes a FeatureSet line
        feature_line, feature_error = (
            extractor.extract_from_recording_and_store(
                cut.recording, writer, offset=cut.start, duration=record["duration"], channels=cut.channel
            ).to_dict(),
            None,
        )
    except AssertionError as exc:  # Lhotse 1.33 declares the whole recording's duration for a segment
        feature_line, feature_error = None, str(exc)
    shar_dir = work / f"shar_{name}"
    shar_dir.mkdir()
    with SharWriter(shar_dir, fields={"features": "numpy"}, shard_size=1000, warn_unused_fields=False) as w:
        w.write(with_feats)
    with tarfile.open(shar_dir / "features.000000.tar") as tar:
        names = tar.getnames()
        member_text = tar.extractfile(names[1]).read().decode("utf-8")
    cut_text = gzip.open(shar_dir / "cuts.000000.jsonl.gz", "rt", encoding="utf-8").read()
    # the round trip Lhotse's own output makes (so the references are known to load)
    loaded = next(
        iter(
            CutSet.from_shar(fields={"cuts": [shar_dir / "cuts.000000.jsonl.gz"], "features": [shar_dir / "features.000000.tar"]})
        )
    )
    assert np.array_equal(loaded.load_features(), array)
    return {
        "storage_path": str(writer.storage_path),
        "storage_key": with_feats.features.storage_key,
        "tar_members": names,
        "shar_member_text": member_text,
        "shar_member": json.loads(member_text),
        "shar_cut_text": cut_text,
        "shar_cut": json.loads(cut_text),
        "numpy_files_cut_text": json.dumps(with_feats.to_dict(), ensure_ascii=False),
        "numpy_files_cut": with_feats.to_dict(),
        "features_line": feature_line,
        "features_line_error": feature_error,
    }


def _versions() -> dict[str, str]:
    import lhotse
    import torch

    return {
        "lhotse": lhotse.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def _relabel(value: Any, work: Path) -> Any:
    """The JSON value with the temporary folders renamed to /audio and /store."""
    text = json.dumps(value, ensure_ascii=False)
    text = text.replace(str(work / "audio"), AUDIO).replace(str(work / "store"), STORE)
    return json.loads(text)


def write_references() -> None:
    from lhotse.utils import fix_random_seed

    fix_random_seed(19)  # NumpyFilesWriter's storage keys are lhotse.utils.uuid4()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "audio").mkdir()
        cases = make_inputs(work / "audio")
        for name, case in cases.items():
            ref = {"made_with": _versions(), **case, "lhotse": lhotse_views(name, case, work)}
            (HERE / f"{name}.json").write_text(json.dumps(_relabel(ref, work), indent=1, ensure_ascii=False) + "\n")
            print(f"wrote {HERE / (name + '.json')}")


# ---- --check: audiokit's views, written by hand into stores, read by the real Lhotse ----------------------------


def _npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _expected_audio(record: dict[str, Any], facts: dict[str, Any], cut: Any) -> np.ndarray | None:
    """The samples the cut covers, read with soundfile (None after resampling: Lhotse's own resampler decides)."""
    if record.get("source_sr", record["sr"]) != record["sr"]:
        return None
    x, _ = sf.read(record["source"], dtype="float32", always_2d=True)
    first = round((record["start"] or 0.0) * record["sr"])
    x = x[first : first + cut.num_samples].T
    return x if isinstance(cut.channel, list) else x[[cut.channel]]


def _with_start(d: dict[str, Any], start: float) -> dict[str, Any]:
    """A copy of a cut (its features too) or a features dict with ``start`` replaced."""
    out = json.loads(json.dumps(d))
    out["start"] = start
    if "features" in out:
        out["features"]["start"] = start
    return out


def _lhotse_shar_segment_audio(ref: Path, name: str) -> float:
    """Where the audio of a segment cut read back from Lhotse's own SharWriter output starts (s), from a correlation."""
    from lhotse import CutSet

    shar = ref / f"shar_{name}"
    cut = next(
        iter(CutSet.from_shar(fields={"cuts": [shar / "cuts.000000.jsonl.gz"], "features": [shar / "features.000000.tar"]}))
    )
    x, sr = sf.read(cut.recording.sources[0].source, dtype="float32", always_2d=True)
    audio = cut.load_audio()[0]
    hits = [i for i in range(0, x.shape[0] - audio.size + 1, 400) if np.array_equal(x[i : i + audio.size, cut.channel], audio)]
    assert hits and hits[0] != round(CASES[name]["record"]["start"] * sr)
    return hits[0] / sr


def check() -> None:
    """Build a shar store and an npy store with audiokit's functions; Lhotse must read, validate and collate them."""
    sys.path.insert(0, str(ROOT))
    import torch
    from lhotse import CutSet, FeatureSet
    from lhotse.dataset import K2SpeechRecognitionDataset, SimpleCutSampler
    from lhotse.dataset.collation import collate_features
    from lhotse.qa import validate

    from audiokit.batch.stores import lhotse as views

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "audio").mkdir()
        cases = make_inputs(work / "audio")
        arrays = {c["record"]["key"]: array_of(n, c["record"], c["facts"]) for n, c in cases.items()}
        # the reference dicts of Lhotse, live, against ours
        (work / "ref").mkdir()
        for name, case in cases.items():
            ref = lhotse_views(name, case, work / "ref")
            ours = views.numpy_files_cut(case["record"], case["facts"], ref["storage_path"], ref["storage_key"])
            assert ours == ref["numpy_files_cut"], (name, ours, ref["numpy_files_cut"])
            shar_cut, member = (
                views.shar_cut(case["record"], case["facts"]),
                views.shar_member_bytes(case["record"], case["facts"]),
            )
            if case["record"]["start"] is None:
                assert shar_cut == ref["shar_cut"] and member == ref["shar_member_text"].encode(), name
                print(f"{name}: numpy_files cut, shar cut and member bytes = Lhotse's")
            else:  # SharWriter moved the segment to start 0 (cut and features); we keep its start
                start = case["record"]["start"]
                assert shar_cut["start"] == shar_cut["features"]["start"] == start
                assert _with_start(shar_cut, 0) == ref["shar_cut"], name
                assert _with_start(json.loads(member), 0) == ref["shar_member"], name
                print(f"{name}: numpy_files cut = Lhotse's; shar cut and member = Lhotse's but start {start} (Lhotse: 0)")
                wrong = _lhotse_shar_segment_audio(work / "ref", name)
                print(f"{name}: Lhotse's own shar of this segment loads the audio from {wrong:.2f} s of the file, not {start} s")
        # shar: one tar of <key>.npy + <key>.json pairs and its cuts
        shar = work / "shar"
        shar.mkdir()
        with tarfile.open(shar / "features.000000.tar", "w") as tar:
            for case in cases.values():
                record, facts = case["record"], case["facts"]
                _add(tar, record["key"] + ".npy", _npy_bytes(arrays[record["key"]]))
                _add(tar, record["key"] + ".json", views.shar_member_bytes(record, facts))
        views.write_jsonl_gz(shar / "cuts.000000.jsonl.gz", (views.shar_cut(c["record"], c["facts"]) for c in cases.values()))
        # npy: <store>/<key>.npy and a cuts.jsonl.gz / features.jsonl.gz beside them
        store = work / "npystore"
        for key, array in arrays.items():
            (store / key).parent.mkdir(parents=True, exist_ok=True)
            np.save(store / f"{key}.npy", array)
        views.write_jsonl_gz(
            store / "cuts.jsonl.gz",
            (views.numpy_files_cut(c["record"], c["facts"], str(store), c["record"]["key"] + ".npy") for c in cases.values()),
        )
        views.write_jsonl_gz(
            store / "features.jsonl.gz",
            (views.features_line(c["record"], c["facts"], str(store), c["record"]["key"] + ".npy") for c in cases.values()),
        )
        opened = {
            "from_shar(fields=...)": CutSet.from_shar(
                fields={"cuts": [shar / "cuts.000000.jsonl.gz"], "features": [shar / "features.000000.tar"]}
            ),
            "from_shar(in_dir=...)": CutSet.from_shar(in_dir=shar),
            "from_file(cuts.jsonl.gz)": CutSet.from_file(store / "cuts.jsonl.gz"),
        }
        for how, cuts in opened.items():
            cuts = cuts.to_eager()
            validate(cuts, read_data=True)
            for cut in cuts:
                record = next(c["record"] for c in cases.values() if c["record"]["key"] == cut.id)
                facts = next(c["facts"] for c in cases.values() if c["record"]["key"] == cut.id)
                feats = cut.load_features()
                want = arrays[cut.id]
                assert feats.dtype == want.dtype and np.array_equal(feats, want), (how, cut.id)
                assert cut.custom["audiokit_id"] == record["id"] and cut.num_frames == record["n_frames"]
                assert cut.supervisions[0].speaker == record["speaker"]
                audio = cut.load_audio()
                expected = _expected_audio(record, facts, cut)
                assert audio.shape == (len(cut.recording.channel_ids) if isinstance(cut.channel, list) else 1, cut.num_samples)
                if expected is not None:
                    assert np.array_equal(audio, expected), (how, cut.id)
            same_sr = cuts.filter(lambda c: c.sampling_rate == 16000 and c.num_features == 80)
            batch, lens = collate_features(same_sr)
            assert tuple(batch.shape) == (len(same_sr), max(lens).item(), 80), batch.shape
            n_batches = sum(1 for _ in SimpleCutSampler(cuts, max_duration=2.0))
            print(
                f"{how}: {len(cuts)} cuts, qa.validate(read_data=True) passed, arrays and audio equal, "
                f"collate_features {tuple(batch.shape)} lens {lens.tolist()}, SimpleCutSampler {n_batches} batches"
            )
        features = FeatureSet.from_file(store / "features.jsonl.gz")
        validate(features.filter(lambda f: f.sampling_rate == 16000 and f.num_features == 80), read_data=True)
        for f in features:
            assert np.array_equal(f.load(), arrays[f.storage_key[: -len(".npy")]])
        print(f"FeatureSet.from_file(features.jsonl.gz): {len(features)} lines, load() equal, qa.validate passed (16 kHz, 80)")
        a = (shar / "cuts.000000.jsonl.gz").read_bytes()
        views.write_jsonl_gz(shar / "again.jsonl.gz", (views.shar_cut(c["record"], c["facts"]) for c in cases.values()))
        assert (shar / "again.jsonl.gz").read_bytes() == a
        print("write_jsonl_gz: the same cuts give the same bytes")
        half = CutSet.from_file(store / "cuts.jsonl.gz").filter(lambda c: c.features.sampling_rate == 8000).to_eager()
        batch, _ = collate_features(half)
        assert batch.dtype == torch.float32 and np.array_equal(batch[0].numpy(), arrays[half[0].id].astype(np.float32))
        print(f"collate_features of the float16 cut: {batch.dtype} {tuple(batch.shape)}, values exact")
        asr = CutSet.from_file(store / "cuts.jsonl.gz").filter(lambda c: c.num_features == 80).to_eager()
        try:
            K2SpeechRecognitionDataset()[asr]
        except TypeError as exc:  # its collate needs supervision.text, which a feature store does not know
            print(f"K2SpeechRecognitionDataset without transcripts: TypeError: {str(exc).splitlines()[0][:100]}")
        for cut in asr:
            cut.supervisions[0].text = "a transcript"
        got = K2SpeechRecognitionDataset()[asr]
        print(
            f"K2SpeechRecognitionDataset with transcripts attached: inputs {tuple(got['inputs'].shape)}, "
            f"num_frames {got['supervisions']['num_frames'].tolist()}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="read audiokit's views with Lhotse instead of writing references")
    args = parser.parse_args()
    check() if args.check else write_references()


if __name__ == "__main__":
    main()

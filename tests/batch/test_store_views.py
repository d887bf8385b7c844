"""The npy store's Lhotse ``features.jsonl.gz`` (a ``FeatureSet``): one line per utterance, pointing at its ``.npy``
(``storage_path`` + ``storage_key``) with its frame count; Lhotse 1.33 reads it (``FeatureSet.from_file`` then
``load()``, checked in benchmarks/interop_lhotse.py's venv when this was written)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from tests.helpers.cli import SR, write


def test_npy_store_features_jsonl_points_at_every_array(cli, tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    for i, seconds in enumerate((0.5, 1.0, 1.5)):
        write(corpus / f"u.{i}.wav", (np.sin(np.arange(int(SR * seconds)) * 0.03) * 0.2).astype(np.float32))
    out = tmp_path / "out"
    code, _, err = cli("batch", "mel", corpus, "--out", out, "--compat", "lhotse", "-j", "1")
    assert code == 0, err
    with gzip.open(out / "features.jsonl.gz", "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    assert len(lines) == 3
    for line in lines:
        array = np.load(out / line["storage_key"])
        assert line["storage_type"] == "numpy_files" and line["storage_path"] == str(out.resolve())
        assert (line["num_frames"], line["num_features"]) == array.shape
        assert line["type"] == "kaldi-fbank" and line["sampling_rate"] == SR and abs(line["frame_shift"] - 0.01) < 1e-12


def _lhotse_rule(n_samples: int, hop: int) -> int:
    """Lhotse's compute_num_frames for a whole recording, written out: ``(n + hop // 2) // hop``."""
    return (n_samples + hop // 2) // hop


def _manifest(out):
    with open(out / "manifest.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.mark.parametrize(
    ("args", "store", "hop", "noted"),
    [
        (("mel", "--nfft", "1024"), "npy", 512, True),  # audiokit's uncentred frames: always fewer than Lhotse's
        (("mel", "--compat", "lhotse"), "npy", 160, False),  # Lhotse's framing: never a note
        (("pitch",), "shards", 256, True),  # centred 1 + n // hop: off where n % hop < hop / 2
        (("mel", "--nfft", "1024"), "kaldi", 512, False),  # no Lhotse manifests: no note
    ],
    ids=["mel-npy", "lhotse-npy", "pitch-shards", "mel-kaldi"],
)
def test_a_store_off_lhotses_frame_rule_says_how_many_utterances_once(cli, tmp_path, args, store, hop, noted):
    corpus = tmp_path / "in"
    corpus.mkdir()
    lengths = (16048, 40000, 51200, 16000 + 200)
    for i, n in enumerate(lengths):
        write(corpus / f"u{i}.wav", (np.sin(np.arange(n) * 0.09) * 0.3).astype(np.float32))
    out = tmp_path / "out"
    code, stdout, err = cli("batch", args[0], corpus, "--out", out, "--store", store, "-j", "1", *args[1:], "--json")
    assert code == 0, err
    frames = {r["id"]: r["shape"][0] for r in _manifest(out)}  # a store's arrays are (n_frames, n_feats)
    expected_off = sum(frames[f"u{i}"] != _lhotse_rule(n, hop) for i, n in enumerate(lengths))
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    summary = json.loads(stdout)
    if not noted:
        assert notes == [] and summary["notes"] == []
        assert store == "kaldi" or expected_off == 0
        return
    assert 0 < expected_off < len(lengths) if args[0] == "pitch" else expected_off == len(lengths)
    text = f"the Lhotse manifests hold {expected_off} of {len(lengths)} utterances whose frame count is not Lhotse's rule"
    assert len(notes) == 1 and notes[0].startswith(f"note: {out}: {text}") and "--compat lhotse" in notes[0]
    assert summary["notes"] == [notes[0][len("note: ") :]]

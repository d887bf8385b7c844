"""The npy store's Lhotse ``features.jsonl.gz`` (a ``FeatureSet``): one line per utterance, pointing at its ``.npy``
(``storage_path`` + ``storage_key``) with its frame count; Lhotse 1.33 reads it (``FeatureSet.from_file`` then
``load()``, checked in benchmarks/interop_lhotse.py's venv when this was written)."""

from __future__ import annotations

import gzip
import json

import numpy as np

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

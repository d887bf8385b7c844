"""The index files other toolkits read, written at the end of a run from the store's records (sorted, so the same
store gives the same bytes):

* every store: ``stats.json`` -- the corpus statistics of the stored values (frame count, per-dimension sum, sum of
  squares, mean, standard deviation: global CMVN without a second pass);
* ``kaldi``: ``feats.scp`` (``key /abs/feats.J.ark:offset``), ``utt2num_frames``, ``utt2dur``, ``frame_shift``,
  ``cmvn.ark`` (Kaldi's global ``compute-cmvn-stats`` matrix), and with speakers ``utt2spk``/``spk2utt``;
* ``npy``: Lhotse's ``cuts.jsonl.gz`` (features ``storage_type`` ``numpy_files``, ``CutSet.from_file``) and
  ``features.jsonl.gz`` (its ``FeatureSet``), ESPnet's
  ``feats.scp`` (``key /abs/feats/hh/key.npy``) and ``feats_shape`` (``key n_frames,n_feats``);
* ``shards``: their Lhotse cuts are written beside each shard by its task; ``parquet``: nothing more.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ...io.atomic import write_text_atomic
from .layout import absolute, utf8_text

__all__ = ["STATS", "write_views", "view_files"]

STATS = "stats.json"


def view_files(kind: str) -> tuple[str, ...]:
    """The files :func:`write_views` writes for store ``kind`` (what ``--force`` removes)."""
    files = {
        "kaldi": ("feats.scp", "utt2num_frames", "utt2dur", "frame_shift", "cmvn.ark", "utt2spk", "spk2utt"),
        "npy": ("cuts.jsonl.gz", "features.jsonl.gz", "feats.scp", "feats_shape"),
    }
    return (STATS, *files.get(kind, ()))


def write_views(
    kind: str,
    out_dir: str,
    description: dict[str, Any],
    records: list[dict[str, Any]],
    stats: tuple[float, np.ndarray, np.ndarray],
    facts: dict[str, Any],
    root: str | None = None,
) -> None:
    """Write the views of ``records`` (the ``ok`` manifest records, any order) for store ``kind`` into ``out_dir``;
    the paths they hold start with ``root`` (default: ``out_dir`` made absolute; a remote ``--out``: its URL)."""
    records = sorted(records, key=lambda r: r["key"])
    root = root or os.path.abspath(out_dir)
    _write_stats(out_dir, stats)
    if kind == "kaldi":
        _kaldi(out_dir, description, records, stats, root)
    elif kind == "npy":
        _npy(out_dir, records, facts, root)


def _write_stats(out_dir: str, stats: tuple[float, np.ndarray, np.ndarray]) -> None:
    count, sums, squares = stats
    mean = sums / count if count else np.zeros_like(sums)
    var = np.maximum(squares / count - mean**2, 0.0) if count else np.zeros_like(sums)
    payload = {
        "count": count,
        "sum": sums.tolist(),
        "sum_squares": squares.tolist(),
        "mean": mean.tolist(),
        "std": np.sqrt(var).tolist(),
        "formula": "mean = sum / count; std = sqrt(max(sum_squares / count - mean^2, 0)); per dimension, float64",
    }
    write_text_atomic(os.path.join(out_dir, STATS), json.dumps(payload) + "\n")


def _kaldi(out_dir: str, description: dict[str, Any], records: list[dict[str, Any]], stats: Any, root: str) -> None:
    from ...io.ark import cmvn_stats, write_matrix, write_text_table

    scp = [(r["key"], f"{absolute(root, r['outputs']['shard'])}:{int(r['location']['offset'])}") for r in records]
    write_text_table(os.path.join(out_dir, "feats.scp"), scp)
    write_text_table(os.path.join(out_dir, "utt2num_frames"), [(r["key"], r["shape"][0]) for r in records])
    write_text_table(os.path.join(out_dir, "utt2dur"), [(r["key"], _seconds(r["duration"])) for r in records])
    write_text_atomic(os.path.join(out_dir, "frame_shift"), f"{description['frame_shift']:g}\n")
    write_matrix(os.path.join(out_dir, "cmvn.ark"), cmvn_stats(*stats))
    speakers = [(r["key"], str(utf8_text(r["speaker"]))) for r in records if r.get("speaker")]
    if speakers:
        write_text_table(os.path.join(out_dir, "utt2spk"), speakers)
        by_speaker: dict[str, list[str]] = {}
        for key, speaker in speakers:
            by_speaker.setdefault(speaker, []).append(key)
        write_text_table(os.path.join(out_dir, "spk2utt"), [(s, sorted(u)) for s, u in by_speaker.items()])


def _npy(out_dir: str, records: list[dict[str, Any]], facts: dict[str, Any], root: str) -> None:
    from .lhotse import features_line, numpy_files_cut, write_jsonl_gz
    from .work import lhotse_record

    lhotse = [(lhotse_record(r), r["outputs"]["npy"]) for r in records]
    write_jsonl_gz(os.path.join(out_dir, "cuts.jsonl.gz"), [numpy_files_cut(r, facts, root, key) for r, key in lhotse])
    write_jsonl_gz(os.path.join(out_dir, "features.jsonl.gz"), [features_line(r, facts, root, key) for r, key in lhotse])
    write_text_atomic(
        os.path.join(out_dir, "feats.scp"), "".join(f"{r['key']} {absolute(root, r['outputs']['npy'])}\n" for r in records)
    )
    write_text_atomic(
        os.path.join(out_dir, "feats_shape"), "".join(f"{r['key']} {r['shape'][0]},{r['shape'][1]}\n" for r in records)
    )


def _seconds(value: float) -> str:
    """Seconds as Kaldi's ``utt2dur`` writes them (up to 6 decimals, no trailing zeros)."""
    return f"{value:.6f}".rstrip("0").rstrip(".")

"""Where a store puts things: file names per store, the container writer of a shard, utterance keys.

Names (relative to ``--out``):

* ``npy``: ``feats/<hh>/<name>.npy`` -- ``hh`` the first two hex digits of SHA-1 of the key, so 256 folders share
  the files (a million utterances: ~3 900 per folder, whatever the input tree; :func:`member_path`);
* ``shards``: ``shar/features.NNNNNN.tar`` and its Lhotse Shar cuts ``shar/cuts.NNNNNN.jsonl.gz`` (6 digits from 0,
  as Lhotse names shards; the folder holds nothing else, so ``CutSet.from_shar(in_dir=...)`` reads it);
* ``kaldi``: ``feats.J.ark`` (``J`` from 1, Kaldi's ``JOB`` numbering);
* ``parquet``: ``feats.NNNNNN.parquet``.

Keys: :func:`audiokit.io.tar_shard.shard_key` of the id, in every store (WebDataset's rule: no ``.``; reversible,
the id itself is kept in the index).
"""

from __future__ import annotations

import hashlib
import os

from ...io.members import ContainerWriter

__all__ = ["utf8_text", "member_path", "shard_file", "cuts_file", "open_container", "key_of"]


#: The folder of the ``shards`` store's tar shards and their cuts: only they, so that Lhotse's
#: ``CutSet.from_shar(in_dir=DIR/shar)`` takes every file there as a field.
SHAR = "shar"


def key_of(item_id: str) -> str:
    """The key an utterance has in every store (:func:`audiokit.io.tar_shard.shard_key`)."""
    from ...io.tar_shard import shard_key

    return shard_key(item_id)


def utf8_text(text: str | None) -> str | None:
    """``text`` as the stores write it (SQLite, JSON manifests, Parquet, Kaldi tables hold valid UTF-8): a lone
    surrogate -- a file name that is not UTF-8, as ``os.fsdecode`` gives it -- becomes its ``\\udcXX`` escape;
    the index is looked up in the same form."""
    return None if text is None else text.encode("utf-8", "backslashreplace").decode("utf-8")


def member_path(key: str) -> str:
    """``feats/<hh>/<name>.npy``: the ``npy`` store's file of one utterance (POSIX, relative to ``--out``).

    ``name`` is the key with ``%`` and ``/`` percent-encoded again (``spk1/utt%2E1`` -> ``spk1%2Futt%252E1``): every
    file of the store sits in one of the 256 folders, whatever the input tree (one ``mkdir`` per folder, not per
    input folder), and distinct keys keep distinct names.
    """
    bucket = hashlib.sha1(key.encode("utf-8")).hexdigest()[:2]
    return f"feats/{bucket}/{key.replace('%', '%25').replace('/', '%2F')}.npy"


def shard_file(kind: str, number: int) -> str:
    """The container file of shard ``number`` (from 0) of a sharded store."""
    if kind == "shards":
        return f"{SHAR}/features.{number:06d}.tar"
    if kind == "kaldi":
        return f"feats.{number + 1}.ark"
    if kind == "parquet":
        return f"feats.{number:06d}.parquet"
    raise ValueError(f"not a sharded store: {kind!r}")


def shard_number(kind: str, name: str) -> int | None:
    """The shard number of a container file name of store ``kind`` (None: not one)."""
    name = name.rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    head, _, digits = stem.rpartition(".")
    expected = {"shards": ("features", "tar"), "kaldi": ("feats", "ark"), "parquet": ("feats", "parquet")}[kind]
    if (head, ext) != expected or not digits.isdigit() or not dot:
        return None
    return int(digits) - 1 if kind == "kaldi" else int(digits)


def cuts_file(number: int) -> str:
    """The Lhotse Shar cuts of shard ``number``: ``shar/cuts.NNNNNN.jsonl.gz``."""
    return f"{SHAR}/cuts.{number:06d}.jsonl.gz"


def open_container(kind: str, path: str, *, dtype: str, compress: bool, n_feats: int) -> ContainerWriter:
    """The container writer of a shard file (``npy``: the one-member ``.npy`` of an utterance)."""
    if kind == "npy":
        from ...io.npy import TimeMajorNpy

        return TimeMajorNpy(path, dtype=dtype)
    if kind == "shards":
        from ...io.tar_shard import TarShardWriter

        return TarShardWriter(path, dtype=dtype)
    if kind == "kaldi":
        from ...io.ark import ArkWriter

        return ArkWriter(path, dtype=dtype, compress=compress)
    if kind == "parquet":
        from ...io.parquet import ParquetWriter

        return ParquetWriter(path, dtype=dtype, n_feats=n_feats)
    raise ValueError(f"unknown store {kind!r}")


def absolute(out_dir: str, name: str) -> str:
    """``name`` (POSIX, relative) under ``out_dir``."""
    return os.path.join(out_dir, *name.split("/"))

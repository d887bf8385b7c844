"""What ``audiokit batch --store …`` was asked: the store kind and its options, parsed once, rate-free.

==========  ==================================================================  =================  ============
store       files                                                               per utterance      resume unit
==========  ==================================================================  =================  ============
``files``   the single-file command's outputs mirrored (``.npy`` + sidecar …)   2 (npy + json)     utterance
``npy``     ``feats/<hh>/<name>.npy``, 256 hashed folders (``layout``)         1                  utterance
``shards``  ``features.NNNNNN.tar`` + ``cuts.NNNNNN.jsonl.gz`` (Lhotse Shar)    ~0 (2 per shard)   shard
``kaldi``   ``feats.NNNNNN.ark`` + ``feats.scp``, ``utt2num_frames``, ...       ~0 (1 per shard)   shard
``parquet`` ``feats.NNNNNN.parquet`` (Hugging Face ``Array2D``)                 ~0 (1 per shard)   shard
==========  ==================================================================  =================  ============

Every store but ``files`` holds time-major ``(n_frames, n_feats)`` arrays whose values are the single-file
command's ``.npy`` transposed (float32, or float16 with ``--dtype float16``), and describes how they were made once
(``store.json``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ...errors import ParameterError
from ...io.members import STORE_DTYPES

__all__ = ["STORES", "ARRAY_STORES", "SHARDED_STORES", "StoreOptions", "parse_shard_size", "DEFAULT_SHARD_SIZE"]

#: ``--store`` choices.
STORES = ("files", "npy", "shards", "kaldi", "parquet")
#: The stores of time-major arrays (the feature jobs only).
ARRAY_STORES = ("npy", "shards", "kaldi", "parquet")
#: The stores that pack many utterances into one file (resumed per file).
SHARDED_STORES = ("shards", "kaldi", "parquet")
#: ``--shard-size`` default: about 1 GiB of array bytes per shard.
DEFAULT_SHARD_SIZE = "1GiB"

_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$", re.IGNORECASE)


def parse_shard_size(text: str) -> tuple[Literal["bytes", "utterances"], int]:
    """``--shard-size``: ``"1GiB"``/``"500MB"`` (array bytes per shard) or ``"1000u"`` (utterances per shard).

    Returns
    -------
    (unit, value)
        ``("bytes", n)`` or ``("utterances", n)``, ``n >= 1``.
    """
    raw = text.strip()
    if raw.lower().endswith("u") and raw[:-1].strip().isdigit():
        count = int(raw[:-1])
        if count >= 1:
            return "utterances", count
    match = _SIZE.match(raw)
    if match is not None:
        value = float(match.group(1)) * _UNITS[(match.group(2) or "").lower()]
        if value >= 1:
            return "bytes", int(value)
    raise ParameterError(f"--shard-size: {text!r} is not a size (e.g. 1GiB, 500MB) or a count of utterances (e.g. 1000u)")


@dataclass(frozen=True)
class StoreOptions:
    """The ``--store`` options of a batch (values as typed; :meth:`check` parses them).

    Attributes
    ----------
    kind : str
        One of :data:`STORES`.
    dtype : {"float32", "float16"}
        Stored values (float16: lossy, relative error <= 2**-11, values beyond 65504 refused).
    shard_size : str
        Target size of a shard (:func:`parse_shard_size`); sharded stores only.
    compress : bool
        Kaldi compressed matrices (``--store kaldi``).
    speaker_from : str or None
        ``"parent"`` (the input's folder name) or a regular expression searched in the id (its group ``speaker``,
        else its first group, else the whole match).
    sr : int or None
        Resample every input to this rate on read (soxr, as ``audiokit resample`` does).
    """

    kind: str = "npy"
    dtype: str = "float32"
    shard_size: str = DEFAULT_SHARD_SIZE
    compress: bool = False
    speaker_from: str | None = None
    sr: int | None = None

    @property
    def sharded(self) -> bool:
        """True for the stores resumed per shard file."""
        return self.kind in SHARDED_STORES

    @property
    def arrays(self) -> bool:
        """True for the stores of time-major arrays (not ``files``)."""
        return self.kind in ARRAY_STORES

    def check(self) -> None:
        """ParameterError (exit 2) for a bad value or a combination the store cannot hold."""
        if self.kind not in STORES:
            raise ParameterError(f"--store: {self.kind!r} is not one of {', '.join(STORES)}")
        if self.dtype not in STORE_DTYPES:
            raise ParameterError(f"--dtype: {self.dtype!r} is not one of {', '.join(STORE_DTYPES)}")
        if not self.arrays:
            for name, value, default in (
                ("--dtype", self.dtype, "float32"),
                ("--compress", self.compress, False),
                ("--speaker-from", self.speaker_from, None),
                ("--sr", self.sr, None),
            ):
                if value != default:
                    raise ParameterError(f"{name} applies to the corpus stores (--store npy|shards|kaldi|parquet)")
        if self.compress and self.kind != "kaldi":
            raise ParameterError("--compress applies to --store kaldi (Kaldi compressed matrices)")
        if self.compress and self.dtype != "float32":
            raise ParameterError("--compress stores Kaldi's own 8-bit code: not with --dtype float16")
        if self.kind == "kaldi" and self.dtype == "float16":
            raise ParameterError("--store kaldi: Kaldi matrices have no float16 (use --compress for a smaller ark)")
        if self.sharded:
            parse_shard_size(self.shard_size)
        if self.speaker_from not in (None, "parent"):
            try:
                re.compile(self.speaker_from)
            except re.error as exc:
                raise ParameterError(f"--speaker-from: {self.speaker_from!r} is not a regular expression: {exc}") from None
        if self.sr is not None and not 1 <= self.sr <= 10**7:
            raise ParameterError(f"--sr: {self.sr} Hz is not a sample rate")

    def numbers(self) -> dict[str, object]:
        """What of these options shapes the stored numbers (the batch fingerprint's part)."""
        return {"dtype": self.dtype, "compress": self.compress, "sr": self.sr}

    def speaker_of(self, item_id: str, path: str) -> str | None:
        """The speaker of an utterance (None without ``--speaker-from``); ParameterError when the regex misses."""
        if self.speaker_from is None:
            return None
        if self.speaker_from == "parent":
            import os

            return os.path.basename(os.path.dirname(path)) or None
        match = re.search(self.speaker_from, item_id)
        if match is None:
            raise ParameterError(f"--speaker-from: {self.speaker_from!r} does not match the id {item_id!r}", path)
        if "speaker" in match.groupdict():
            return match.group("speaker")
        return match.group(1) if match.groups() else match.group(0)

"""Lhotse views of a corpus store: the JSON manifests that let Lhotse open our shards and ``.npy`` files as they are.

Pure functions (stdlib only; Lhotse is never imported): one utterance record of a store in, the dict Lhotse 1.33
would have written for it out.  ``tests/data/lhotse_views/`` holds what Lhotse itself writes for the same facts and
``tests/batch/test_lhotse_views.py`` compares field by field.

Inputs
------
``record`` (one utterance, from the batch side)::

    {"id": str,             # original id (may hold "." and "/"); kept in the cut's custom["audiokit_id"]
     "key": str,            # WebDataset-safe key (no "."): the member / file name, and the Lhotse cut id
     "source": str,         # absolute input path or URL (the Recording's AudioSource, type "file" or "url")
     "start": float | None, # segment start in the input (s), None for a whole file
     "duration": float,     # seconds of audio the features cover (n_samples / sr)
     "sr": int,             # rate of the features' audio (Hz; after --sr resampling)
     "n_frames": int, "speaker": str | None,
     "channels": int,       # channels of the input
     # optional:
     "source_sr": int,      # the file's own rate when --sr resampled it (default: sr)
     "source_n_samples": int,  # samples per channel of the whole file at source_sr (required for a segment)
     "recording_id": str}   # the Lhotse Recording id (default: key for a whole file, source for a segment)

``facts`` (the store)::

    {"frame_shift": float,  # hop / sr (s)
     "n_feats": int, "dtype": "float32" | "float16", "feature_type": str,
     "channel": int | "mix" | None}  # --channel N, --mix, or neither (then every input must be mono)

What the views are
------------------
* A mono input or ``--channel N``: a ``MonoCut`` (``channel`` N); ``--mix`` of a multi-channel input: a ``MultiCut``
  over all channels (``load_audio()`` gives every channel, the features are of their mix).
* The cut's Recording is the input file (``AudioSource`` type ``file``, all its channels; an input read from a URL,
  ``s3://bucket/a.flac``: type ``url``, which Lhotse reads through ``smart_open``, as a ``file`` source it would hand
  the URL to soundfile and fail); after ``--sr`` it carries Lhotse's ``Resample`` transform (``Recording.resample``),
  so ``cut.load_audio()`` gives audio at ``sr``.
* One supervision per cut, spanning it, with the speaker when known (samplers and ASR collation expect one).
* Features as ``DataCut.compute_and_store_features`` writes them: ``start`` = the cut's start, ``duration`` =
  ``round(duration, 8)``, ``channels`` = the cut's channel, no ``recording_id``.  The shard member is that manifest
  through ``to_shar_placeholder`` (storage fields empty, type ``shar``, ``duration`` = the cut's).

One deliberate difference from Lhotse's ``SharWriter``: it rewrites every cut (and the features placeholder) to
``start`` 0, which is right only when the audio is written into the shard too.  Our shards hold features only and
the recording stays the input file, so a segment keeps its ``start`` in both (``cut.load_audio()`` then reads the
segment, not the file's first seconds; Lhotse's own output for that case does not).  Whole files are identical.

Lhotse's ``qa.validate`` requires ``n_frames == (round(duration*sr) + hop//2) // hop`` (``--compat lhotse`` framing);
:func:`check_lhotse_framing` says when a store's framing does not give that.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ...errors import ParameterError
from ...io.atomic import atomic_output
from ...io.remote import is_url

__all__ = [
    "check_lhotse_framing",
    "features_line",
    "lhotse_num_frames",
    "numpy_files_cut",
    "shar_cut",
    "shar_member",
    "shar_member_bytes",
    "write_jsonl_gz",
]

#: Lhotse's Features storage type of a directory of ``.npy`` files (``lhotse.features.io.NumpyFilesReader.name``).
NUMPY_FILES = "numpy_files"
#: The placeholder storage type of a Shar member (``lhotse.shar.utils.to_shar_placeholder``).
SHAR = "shar"
#: gzip level of the JSONL manifests (fixed, so the bytes are too).
GZIP_LEVEL = 6

Record = Mapping[str, Any]


def lhotse_num_frames(duration: float, frame_shift: float, sr: int) -> int:
    """Lhotse's frame count of ``duration`` seconds: ``(round(duration*sr) + hop//2) // hop``, hop = ``round(frame_shift*sr)``.

    The rule of ``lhotse.utils.compute_num_frames``, which ``lhotse.qa.validate`` and ``Cut.num_frames`` apply
    (collation allocates ``Cut.num_frames`` rows; ``load_features`` forgives one row either way).
    """
    hop = round(frame_shift * sr)
    return int((round(duration * sr) + hop // 2) // hop)


def check_lhotse_framing(record: Record, facts: Mapping[str, Any]) -> None:
    """ParameterError unless the utterance's manifests pass ``lhotse.qa.validate`` (frame shift and frame count).

    Raises
    ------
    ParameterError
        When ``frame_shift * sr`` is not a whole number of samples, or ``n_frames`` differs from
        :func:`lhotse_num_frames` (the reason names both counts and ``--compat lhotse``).
    """
    sr, shift = int(record["sr"]), float(facts["frame_shift"])
    hop = round(shift * sr, 12)
    if hop != int(hop):
        raise ParameterError(f"Lhotse view: a frame shift of {shift} s is {hop} samples at {sr} Hz; Lhotse needs whole samples")
    expected = lhotse_num_frames(float(record["duration"]), shift, sr)
    if int(record["n_frames"]) != expected:
        raise ParameterError(
            f"Lhotse view: {record['id']!r} has {record['n_frames']} frames, Lhotse's rule gives {expected} for "
            f"{record['duration']} s at a {int(hop)}-sample hop (frame with --compat lhotse)"
        )


def framing_note(records: Sequence[Record], facts: Mapping[str, Any]) -> str | None:
    """What to tell a store's maker when some utterances' frame counts are not Lhotse's rule; None if all are.

    Lhotse recomputes a cut's frame count from its duration (:func:`lhotse_num_frames`): a store framed otherwise
    (audiokit's uncentred frames, pitch's centred ``1 + n // hop``) has manifests ``lhotse.qa.validate`` refuses and
    batches Lhotse's collation cannot pad; ``--compat lhotse`` frames as Lhotse does.
    """
    off = 0
    for record in records:
        try:
            check_lhotse_framing(record, facts)
        except ParameterError:
            off += 1
    if not off:
        return None
    return (
        f"the Lhotse manifests hold {off} of {len(records)} utterances whose frame count is not Lhotse's rule "
        "((samples + hop // 2) // hop): lhotse.qa.validate refuses those cuts and Lhotse's collation fails on them "
        "(mel and mfcc --compat lhotse frame as Lhotse does)"
    )


def shar_member(record: Record, facts: Mapping[str, Any]) -> dict[str, Any]:
    """The ``<key>.json`` member after ``<key>.npy`` in a tar shard: Lhotse's Features placeholder.

    What ``lhotse.shar.writers.array.ArrayTarWriter.write`` stores for the features of the cut
    :func:`shar_cut` describes (``to_shar_placeholder``: ``storage_type`` ``shar``, empty path and key).
    ``CutSet.from_shar`` reads it, fills in the array from the ``.npy`` member before it and attaches it to the
    cut whose id is ``key``.  It must hold exactly these fields: Lhotse builds ``Features(**member)``.
    """
    features = _cut_features(record, facts, SHAR, "", "")
    # to_shar_placeholder: the cut's duration; start 0 (an int), a segment's start kept (module docstring)
    features.update(start=_shar_start(record), duration=float(record["duration"]))
    return features


def shar_member_bytes(record: Record, facts: Mapping[str, Any]) -> bytes:
    """The bytes of :func:`shar_member` as ``ArrayTarWriter`` writes them: ``json.dumps`` (ASCII) and a newline."""
    return (json.dumps(shar_member(record, facts)) + "\n").encode("utf-8")


def shar_cut(record: Record, facts: Mapping[str, Any]) -> dict[str, Any]:
    """One line of ``cuts.NNNNNN.jsonl.gz`` beside ``features.NNNNNN.tar``: the cut with its features placeholder.

    A ``MonoCut`` (``MultiCut`` for ``--mix``) with id ``key``, the input file as its Recording, one supervision
    and ``custom={"audiokit_id": id}``; its features are :func:`shar_member` (Lhotse replaces them with the
    member's manifest when it reads the shard).  The lines must follow the members' order, one per member pair.
    """
    return _cut(record, facts, shar_member(record, facts), _shar_start(record))


def numpy_files_cut(record: Record, facts: Mapping[str, Any], storage_path: str, storage_key: str) -> dict[str, Any]:
    """One cut of a ``cuts.jsonl.gz`` for the ``npy`` store (``CutSet.from_file`` then ``cut.load_features()``).

    Parameters
    ----------
    storage_path : str
        The store folder (Lhotse opens ``storage_path/storage_key``; a relative path is relative to the
        reader's working directory, ``CutSet.with_features_path_prefix`` changes it).
    storage_key : str
        The ``.npy`` file of the utterance relative to ``storage_path`` (``/``-separated).
    """
    return _cut(record, facts, _cut_features(record, facts, NUMPY_FILES, storage_path, storage_key), _start(record))


def features_line(record: Record, facts: Mapping[str, Any], storage_path: str, storage_key: str) -> dict[str, Any]:
    """One line of a ``features.jsonl.gz`` (Lhotse's ``FeatureSet``) for the ``npy`` store.

    As ``FeatureExtractor.extract_from_recording_and_store`` describes features of a recording: with its
    ``recording_id`` and channels (``FeatureSet.find`` looks them up by recording, channel and time), ``start`` =
    the segment start and ``duration`` that of the features (Lhotse 1.33 writes the whole recording's duration
    there even for an offset read; we write the segment's, which ``qa.validate`` checks against ``num_frames``).
    """
    features = _cut_features(record, facts, NUMPY_FILES, storage_path, storage_key)
    channel = features.pop("channels")
    features["recording_id"] = _recording_id(record)
    features["channels"] = channel
    return features


def write_jsonl_gz(path: str | os.PathLike[str], dicts: Iterable[Mapping[str, Any]]) -> int:
    """Write ``dicts`` as gzipped JSON lines, atomically and reproducibly; return the number of lines.

    Each line is ``json.dumps(d, ensure_ascii=False)`` and a newline (as Lhotse's ``SequentialJsonlWriter``); the
    gzip header has mtime 0 and no file name and the level is fixed (:data:`GZIP_LEVEL`), so the same dicts give
    the same bytes.  The file appears only complete (:func:`audiokit.io.atomic.atomic_output`).
    """
    count = 0
    with atomic_output(path) as tmp, open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL, mtime=0) as gz:
            for item in dicts:
                gz.write((json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8"))
                count += 1
        raw.flush()
        os.fsync(raw.fileno())
    return count


def _channel(record: Record, facts: Mapping[str, Any]) -> int | list[int]:
    """The cut's channel: an int for one channel (a MonoCut), every channel for a mix (a MultiCut, also of a mono
    input: one store's members then have one JSON schema, which HF datasets' webdataset builder needs)."""
    channels, chosen = _input_channels(record), facts.get("channel")
    if chosen == "mix":
        return list(range(channels))
    if channels == 1:
        return 0
    if isinstance(chosen, int) and not isinstance(chosen, bool) and 0 <= chosen < channels:
        return chosen
    raise ParameterError(
        f"Lhotse view: {record['id']!r} has {channels} channels and the store's channel is {chosen!r}; "
        f"a cut needs one channel (--channel N) or their mix (--mix)"
    )


def _input_channels(record: Record) -> int:
    """The input's channel count (the Recording's channel ids are ``0..channels-1``)."""
    channels = record.get("channels")
    if not isinstance(channels, int) or isinstance(channels, bool) or channels < 1:
        raise ParameterError(f"internal: Lhotse view of {record['id']!r} needs the input's channel count, got {channels!r}")
    return channels


def _recording_id(record: Record) -> str:
    """The Lhotse Recording id: given, else the key (whole file) or the source path (shared by its segments)."""
    given = record.get("recording_id")
    if given is not None:
        return str(given)
    return str(record["key"] if record.get("start") is None else record["source"])


def _num_samples(duration: float, sr: int) -> int:
    """``lhotse.utils.compute_num_samples``: ``duration * sr`` rounded to 8 decimals, then half up."""
    return int(Decimal(round(duration * sr, 8)).quantize(0, rounding=ROUND_HALF_UP))


def _recording(record: Record) -> dict[str, Any]:
    """``Recording.from_file(source).to_dict()`` (then ``.resample(sr)`` when ``source_sr`` differs); a URL source is
    an ``AudioSource`` of type ``url`` (Lhotse reads it with ``open_best``), a path one of type ``file``."""
    sr = int(record["sr"])
    source_sr = int(record.get("source_sr") or sr)
    n_samples = record.get("source_n_samples")
    if n_samples is None:
        if record.get("start") is not None:
            raise ParameterError(f"internal: Lhotse view of segment {record['id']!r} needs source_n_samples", record["source"])
        n_samples = _num_samples(float(record["duration"]), source_sr)
    channels = list(range(_input_channels(record)))
    recording: dict[str, Any] = {
        "id": _recording_id(record),
        "sources": [{"type": _source_type(record["source"]), "channels": channels, "source": str(record["source"])}],
        "sampling_rate": source_sr,
        "num_samples": int(n_samples),
        "duration": int(n_samples) / source_sr,
        "channel_ids": channels,
    }
    if source_sr != sr:
        resampled = _num_samples(recording["duration"], sr)
        recording.update(sampling_rate=sr, num_samples=resampled, duration=resampled / sr)
        recording["transforms"] = [
            {"name": "Resample", "kwargs": {"source_sampling_rate": source_sr, "target_sampling_rate": sr}}
        ]
    return recording


def _source_type(source: str) -> str:
    """Lhotse's ``AudioSource.type`` of an input: ``url`` for ``scheme://...`` (``s3://``, ``https://``), else ``file``."""
    return "url" if is_url(str(source)) else "file"


def _start(record: Record) -> float:
    """The cut's start in its recording (s): 0.0 for a whole file (``Recording.to_cut``)."""
    start = record.get("start")
    return 0.0 if start is None else float(start)


def _shar_start(record: Record) -> float | int:
    """The start of a Shar cut and its features: ``SharWriter``'s integer 0 for a whole file, else the segment's."""
    start = record.get("start")
    return 0 if start is None else float(start)


def _cut_features(
    record: Record, facts: Mapping[str, Any], storage_type: str, storage_path: str, storage_key: str
) -> dict[str, Any]:
    """The Features of the cut as ``FeatureExtractor.extract_from_samples_and_store`` writes them (field order kept)."""
    key = str(record["key"])
    if not key or "." in key:
        raise ParameterError(f"internal: store key {key!r} of {record['id']!r} is empty or holds a '.'")
    n_frames, n_feats = int(record["n_frames"]), int(facts["n_feats"])
    shift, duration = float(facts["frame_shift"]), float(record["duration"])
    if n_frames <= 0 or n_feats <= 0 or not shift > 0 or not (duration > 0 and math.isfinite(duration)):
        raise ParameterError(f"internal: Lhotse view of {record['id']!r}: empty features or bad duration/frame shift")
    return {
        "type": str(facts["feature_type"]),
        "num_frames": n_frames,
        "num_features": n_feats,
        "frame_shift": shift,
        "sampling_rate": int(record["sr"]),
        "start": _start(record),
        "duration": round(duration, 8),
        "storage_type": storage_type,
        "storage_path": storage_path,
        "storage_key": storage_key,
        "channels": _channel(record, facts),
    }


def _cut(record: Record, facts: Mapping[str, Any], features: dict[str, Any], start: float | int) -> dict[str, Any]:
    """``MonoCut``/``MultiCut.to_dict()`` of the utterance with ``features`` attached."""
    channel = _channel(record, facts)
    recording = _recording(record)
    duration = float(record["duration"])
    supervision: dict[str, Any] = {
        "id": str(record["key"]),
        "recording_id": recording["id"],
        "start": 0.0,
        "duration": duration,
        "channel": channel,
    }
    if record.get("speaker") is not None:
        supervision["speaker"] = str(record["speaker"])
    return {
        "id": str(record["key"]),
        "start": start,
        "duration": duration,
        "channel": channel,
        "supervisions": [supervision],
        "features": features,
        "recording": recording,
        "custom": {"audiokit_id": str(record["id"])},
        "type": "MultiCut" if isinstance(channel, list) else "MonoCut",
    }

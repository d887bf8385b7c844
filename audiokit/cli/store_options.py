"""The corpus-store options of ``audiokit batch mel|mfcc|spectrogram`` (``--store``, ``--shard-size``, ``--dtype``,
``--compress``, ``--speaker-from``, ``--sr``) and the :class:`~audiokit.batch.stores.StoreOptions` they give."""

from __future__ import annotations

from typing import Any, Optional

from .batch_options import batch_option

__all__ = ["STORE_PANEL", "STORE_PARAMS", "store_from"]

STORE_PANEL = "Corpus store"

#: The corpus-store options, for the jobs whose output is one feature array per input (``JobSpec.run_member``).
STORE_PARAMS = [
    batch_option(
        "store",
        str,
        "npy",
        "--store",
        help="Where the arrays go: npy (one time-major (n_frames, n_feats) .npy per utterance), shards (tar shards "
        "for WebDataset, HF datasets and Lhotse Shar), kaldi (ark + scp), parquet (HF datasets), or files (the "
        "single-file command's (rows, frames) .npy + sidecar, mirroring the input tree). See README 'Feed your trainer'.",
        panel=STORE_PANEL,
    ),
    batch_option(
        "shard_size",
        str,
        "1GiB",
        "--shard-size",
        help="Target array bytes per shard/ark/parquet file (e.g. 1GiB, 200MB), or utterances per shard (e.g. 1000u).",
        panel=STORE_PANEL,
    ),
    batch_option(
        "store_dtype",
        str,
        "float32",
        "--dtype",
        help="Stored values: float32 (the single-file values exactly) or float16 (lossy: relative error <= 2^-11, "
        "i.e. <= 0.06 dB on a 120 dB log-mel; absolute <= 2^-25 below 6.1e-5; values beyond 65504 are refused).",
        panel=STORE_PANEL,
    ),
    batch_option(
        "compress",
        bool,
        False,
        "--compress",
        help="--store kaldi: Kaldi compressed matrices (kaldiio compression_method=2, ~1 byte per value; error "
        "<= (max - min)/126 of each utterance's matrix, see README).",
        panel=STORE_PANEL,
    ),
    batch_option(
        "speaker_from",
        Optional[str],
        None,
        "--speaker-from",
        help="Speakers for utt2spk and the manifests: 'parent' (the input's folder name) or a regular expression "
        "searched in the id (group 'speaker', else group 1), e.g. '^(\\d+)-'.",
        panel=STORE_PANEL,
    ),
    batch_option(
        "sr",
        Optional[str],
        None,
        "--sr",
        help="Resample every input to this rate on read (soxr, as 'audiokit resample'); without it, inputs at "
        "another rate than the store's fail.",
        panel=STORE_PANEL,
    ),
]


def store_from(params: dict[str, Any]) -> Any:
    """The :class:`~audiokit.batch.stores.StoreOptions` of a batch subcommand's values (``files`` without them)."""
    from ..batch.stores import StoreOptions
    from ..pipelines.params import rate_hz

    if "store" not in params:
        return StoreOptions(kind="files")
    return StoreOptions(
        kind=params["store"],
        dtype=params["store_dtype"],
        shard_size=params["shard_size"],
        compress=params["compress"],
        speaker_from=params["speaker_from"],
        sr=rate_hz("--sr", params["sr"]) if params["sr"] is not None else None,
    )

"""``store.json``: how a store's arrays were made, written once per store (not per utterance).

It holds the store kind, the layout ``(n_frames, n_feats)``, dtype, rate and framing, the command, its options and
the batch fingerprint, and ``plan``: the sidecar a single-file ``.npy`` of the same job has, without the keys that
describe one input (``source``, ``source_frames``, ``source_subtype``, ``shape``; ``layout`` is the store's).  A run
writes it when it takes the folder (``plan`` null until an utterance is done) and again at the end.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from ... import __version__
from ..._version import NUMBERS_VERSION
from ...errors import InputError
from ...io.atomic import write_text_atomic

__all__ = ["DESCRIPTION", "FORMAT", "describe", "read_description", "write_description", "store_plan", "LAYOUT"]

DESCRIPTION = "store.json"
FORMAT = "audiokit-corpus-store"
#: Every array store's layout.
LAYOUT = "(n_frames, n_feats)"
#: Sidecar keys that describe one input, not the store.
_PER_INPUT = ("source", "source_frames", "source_subtype", "shape")


def store_plan(sidecar: dict[str, Any]) -> dict[str, Any]:
    """The utterance-independent part of a sidecar (see the module docstring)."""
    plan = {key: value for key, value in sidecar.items() if key not in _PER_INPUT}
    plan["layout"] = LAYOUT
    if isinstance(plan.get("pad_or_trim"), dict):
        plan["pad_or_trim"] = {k: v for k, v in plan["pad_or_trim"].items() if k not in ("input_samples", "input_frames")}
    return plan


def describe(job: Any, fingerprint: str, *, sr: int | None, n_feats: int, hop_length: int, plan: dict | None) -> dict[str, Any]:
    """The ``store.json`` object of a run of ``job`` (see the module docstring)."""
    store = job.store
    inputs = dataclasses.asdict(job.inputs)
    for key in ("start", "duration", "resample_to", "storage_options"):  # storage options hold credentials
        inputs.pop(key, None)
    return {
        "format": FORMAT,
        "format_version": 1,
        "store": store.kind,
        "command": job.command,
        "fingerprint": fingerprint,
        "layout": LAYOUT,
        "dtype": store.dtype,
        "n_feats": n_feats,
        "sr": sr,
        "hop_length": hop_length,
        "frame_shift": hop_length / sr if sr else None,
        "resampled_to": store.sr,
        "shard_size": store.shard_size if store.sharded else None,
        "compress": store.compress,
        "speaker_from": store.speaker_from,
        "options": dataclasses.asdict(job.options),
        "inputs": inputs,
        "plan": plan,
        "audiokit_version": __version__,
        "numbers_version": NUMBERS_VERSION,
    }


def read_description(out_dir: str) -> dict[str, Any] | None:
    """``store.json`` of ``out_dir`` (None when there is none); InputError when it is not one."""
    path = os.path.join(out_dir, DESCRIPTION)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the store description: {exc}", path) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"not an audiokit store description (format {FORMAT!r} expected)", path)
    return data


def write_description(out_dir: str, description: dict[str, Any]) -> None:
    """Write ``store.json`` atomically (keys in order, indented)."""
    write_text_atomic(os.path.join(out_dir, DESCRIPTION), json.dumps(description, indent=1, default=str) + "\n")

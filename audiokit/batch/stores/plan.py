"""Which inputs a store run computes, and in which task: per utterance (``npy``) or per shard (the others).

Shards are the resume unit of ``shards``/``kaldi``/``parquet``, and which utterances go into which shard depends
only on the sorted inputs, their lengths and ``--shard-size`` -- not on ``--jobs``, the scheduler or where a killed
run stopped:

* the inputs no shard holds yet are sorted by id and packed greedily: a shard takes the next input unless its
  estimated bytes (``ceil(n_samples / hop_length) * n_feats * itemsize``, ``n_samples`` from the file's header at
  the store's rate) would pass ``--shard-size`` (a shard always takes one), or it holds that many utterances
  (``--shard-size 1000u``); shards are numbered from the lowest number not planned yet;
* the plan is kept in ``shards.plan.jsonl`` (one line per shard: its number and members), written before any
  shard is computed, so a shard keeps its members and number across runs;
* a shard is done when every member is recorded in the manifest with this store's fingerprint and that shard, its
  input unchanged (same size and mtime, and content as ``--verify`` asks:
  :func:`~audiokit.batch.manifest.input_unchanged`), and its file exists (a shard whose inputs all failed has none); otherwise it
  is computed again, whole, with the same members.

After a ``kill -9`` the committed shards are done and the others are computed again from the same plan: the result
equals an uninterrupted run byte for byte.  An input that failed inside a done shard is not retried (the manifest
says why; fix the file -- its new mtime or content makes the shard stale -- or rebuild with ``--force``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from typing import Any

from ..inputs import InputItem
from ..manifest import input_unchanged, record_key
from .layout import absolute, shard_file
from .options import parse_shard_size

__all__ = ["PLAN", "array_bytes", "pack", "read_plan", "shard_plan", "write_plan"]


#: The shard plan of a sharded store (see the module docstring).
PLAN = "shards.plan.jsonl"


def _unchanged(record: dict[str, Any], fingerprint: str, verify: str, storage_options: Mapping[str, Any] | None) -> bool:
    """The fingerprint of ``record`` is this one and its input is as recorded (size, mtime and the ``verify``
    digest: :func:`~audiokit.batch.manifest.input_unchanged`; missing then and now counts as unchanged)."""
    return record.get("fingerprint") == fingerprint and input_unchanged(
        record, record["path"], verify=verify, storage_options=storage_options
    )


def _member(item: InputItem) -> list[Any]:
    return [item.id, item.path, item.start, item.duration]


def _item(member: list[Any]) -> InputItem:
    return InputItem(id=member[0], path=member[1], start=member[2], duration=member[3])


def read_plan(out_dir: str) -> dict[int, list[InputItem]]:
    """The shards planned so far: number -> members (torn or invalid lines skipped)."""
    plan: dict[int, list[InputItem]] = {}
    try:
        fh = open(os.path.join(out_dir, PLAN), encoding="utf-8")
    except FileNotFoundError:
        return plan
    with fh:
        for line in fh:
            try:
                entry = json.loads(line)
                plan[int(entry["shard"])] = [_item(m) for m in entry["members"]]
            except (ValueError, KeyError, TypeError, IndexError):
                continue
    return plan


def write_plan(out_dir: str, plan: dict[int, list[InputItem]]) -> None:
    """Write ``shards.plan.jsonl`` atomically, shards in number order."""
    from ...io.atomic import write_text_atomic

    lines = (json.dumps({"shard": n, "members": [_member(i) for i in plan[n]]}, separators=(",", ":")) for n in sorted(plan))
    write_text_atomic(os.path.join(out_dir, PLAN), "".join(line + "\n" for line in lines))


def shard_plan(
    items: list[InputItem],
    latest: dict[tuple[str, str, str], dict[str, Any]],
    *,
    kind: str,
    fingerprint: str,
    out_dir: str,
    shard_size: str,
    estimate: Callable[[InputItem], int],
    verify: str = "head-tail",
    storage_options: Mapping[str, Any] | None = None,
    exists: Callable[[str], bool] | None = None,
) -> tuple[list[tuple[int, list[InputItem]]], list[InputItem], dict[int, list[InputItem]] | None]:
    """``([(shard number, its inputs), ...], inputs already done, the plan to write)`` for this run's ``items``: the
    plan with the new shards, for :func:`write_plan` before any shard is computed (None: unchanged).

    ``latest`` maps :func:`~audiokit.batch.manifest.record_key` to the last manifest record of each input;
    ``estimate(item)`` is an input's array bytes; ``verify`` how a member's input is compared
    (:data:`~audiokit.batch.manifest.VERIFY_MODES`): a changed member makes its shard stale; ``storage_options``
    reach URL inputs; ``exists(name)`` whether a shard file is there (default: a file under ``out_dir``).
    """
    if exists is None:
        exists = lambda name: os.path.exists(absolute(out_dir, name))  # noqa: E731
    plan = read_plan(out_dir)
    planned = {record_key(m.id, m.path, m.segment): n for n, members in plan.items() for m in members}
    todo: list[tuple[int, list[InputItem]]] = []
    for number, members in sorted(plan.items()):
        records = [latest.get(record_key(m.id, m.path, m.segment)) for m in members]
        complete = all(
            r is not None and r.get("shard") == number and _unchanged(r, fingerprint, verify, storage_options) for r in records
        )
        has_ok = any(r is not None and r.get("status") == "ok" for r in records)
        if not complete or (has_ok and not exists(shard_file(kind, number))):
            todo.append((number, members))
    stale = {n for n, _ in todo}
    done = [i for i in items if planned.get(record_key(i.id, i.path, i.segment)) not in (None, *stale)]
    new = sorted((i for i in items if record_key(i.id, i.path, i.segment) not in planned), key=lambda i: i.id)
    packed = pack(new, used=set(plan), shard_size=shard_size, estimate=estimate)
    if packed:
        plan.update(packed)
    return todo + packed, done, plan if packed else None


def pack(
    items: list[InputItem], *, used: set[int], shard_size: str, estimate: Callable[[InputItem], int]
) -> list[tuple[int, list[InputItem]]]:
    """Greedy packing of ``items`` (in order) into shards numbered from the lowest number not in ``used``."""
    unit, limit = parse_shard_size(shard_size)
    shards: list[tuple[int, list[InputItem]]] = []
    number, size = -1, 0
    current: list[InputItem] = []

    def next_number(after: int) -> int:
        n = after + 1
        while n in used:
            n += 1
        return n

    for item in items:
        cost = 1 if unit == "utterances" else estimate(item)
        if current and size + cost > limit:
            shards.append((number, current))
            current, size = [], 0
        if not current:
            number = next_number(number)
        current.append(item)
        size += cost
    if current:
        shards.append((number, current))
    return shards


def array_bytes(n_samples: int, hop_length: int, n_feats: int, itemsize: int) -> int:
    """Estimated bytes of one array: ``ceil(n_samples / hop_length) * n_feats * itemsize``."""
    return math.ceil(max(n_samples, 0) / hop_length) * n_feats * itemsize

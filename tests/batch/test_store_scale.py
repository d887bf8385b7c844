"""Corpus stores at scale: opening a store of a million utterances (a synthetic index beside a real store) is small
and quick in a fresh process, and the manifest stays bounded over re-runs, retries and ``--force``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import audiokit.corpus
from audiokit.batch.stores.description import read_description
from audiokit.batch.stores.index import COLUMNS, INDEX, fill_index
from tests.helpers.batch import manifest_lines, write_tone_noise
from tests.helpers.stores import STORES, assert_bits_equal, make_corpus, reference_arrays

#: Synthetic utterances added to the index of a real 5-utterance store.
SYNTHETIC = 1_000_000
#: The issue's bounds for opening such a store: <= 1 s (here: of CPU time, not wall time) and <= 200 MB.
OPEN_CPU_SECONDS = 1.0
OPEN_RSS_MB = 200.0

#: The head of the probes run in a fresh interpreter: ``rss_kib()`` is the peak RSS so far (``ru_maxrss``, KiB on
#: Linux); a probe prints its figures (CPU seconds, peak RSS growth) as JSON.
_HEAD = """
import json, resource, sys, time
import numpy as np
import audiokit.corpus

def rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

root, item_id, npy = sys.argv[1], sys.argv[2], sys.argv[3]
rss0, cpu0 = rss_kib(), time.process_time()
corpus = audiokit.corpus.open(root)
"""
#: Open, count, look one real id up and load its array; np.load of its file for comparison.
_OPEN_PROBE = _HEAD + textwrap.dedent(
    """
    n = len(corpus)
    cpu1, rss1 = time.process_time(), rss_kib()
    array = np.array(corpus[item_id].array)
    cpu2, rss2 = time.process_time(), rss_kib()
    direct = np.load(npy)
    cpu3 = time.process_time()
    print(json.dumps({
        "n": n, "rss_before_kib": rss0, "rss_after_kib": rss2, "open_cpu": cpu1 - cpu0, "open_rss_kib": rss1 - rss0,
        "lookup_cpu": cpu2 - cpu1, "lookup_rss_kib": rss2 - rss1, "np_load_cpu": cpu3 - cpu2,
        "shape": list(array.shape), "equal": bool(np.array_equal(array, direct)),
        "synthetic_in": "syn/0999999" in corpus, "missing_in": "syn/x" in corpus,
    }))
    """
)
#: Open, then the first padded batch of 4 (the 4 shortest utterances: real ones, the synthetic rows are longer).
_BATCH_PROBE = _HEAD + textwrap.dedent(
    """
    cpu1, rss1 = time.process_time(), rss_kib()
    batch = next(corpus.batches(batch_size=4))
    cpu2, rss2 = time.process_time(), rss_kib()
    print(json.dumps({"ids": batch.ids, "shape": list(batch.features.shape), "batch_cpu": cpu2 - cpu1,
                      "batch_rss_kib": rss2 - rss1}))
    """
)

#: The synthetic rows, made by SQLite itself (a recursive CTE: seconds, not minutes, for a million): utterances with
#: no array (never loaded), ids ``syn/0000000``..., 200-1699 frames (longer than every real one), 997 speakers.
_SYNTHETIC_COLUMNS = {
    "id": "printf('syn/%07d', i)",
    "key": "printf('syn/%07d', i)",
    "source": "printf('/corpus/syn/%07d.flac', i)",
    "duration": "(200 + (i * 7919) % 1500) / 100.0",
    "sr": "16000",
    "n_frames": "200 + (i * 7919) % 1500",
    "n_feats": ":n_feats",
    "speaker": "'s' || (i % 997)",
    "file": "printf('feats/00/syn/%07d.npy', i)",
}


def _add_synthetic_rows(db: sqlite3.Connection, n: int, n_feats: int) -> None:
    """Insert ``n`` synthetic utterances into an index made by :func:`fill_index` (its secondary indexes dropped
    during the insert and made again after: 3x faster)."""
    assert set(_SYNTHETIC_COLUMNS) <= set(COLUMNS)
    indexes = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").fetchall()
    for name, _ in indexes:
        db.execute(f"DROP INDEX {name}")
    db.execute(
        f"WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < :last) "
        f"INSERT INTO utterances ({', '.join(_SYNTHETIC_COLUMNS)}) SELECT {', '.join(_SYNTHETIC_COLUMNS.values())} FROM seq",
        {"last": n - 1, "n_feats": n_feats},
    )
    for _, sql in indexes:
        db.execute(sql)


@pytest.fixture(scope="module")
def million(tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    """A real ``npy`` store of :data:`~tests.helpers.stores.CORPUS` whose index also lists :data:`SYNTHETIC`
    utterances, in the store's own schema (:func:`fill_index`), written after the manifest (so ``corpus.open`` takes
    it as current); its ``ok`` manifest records by id."""
    from audiokit.cli.app import main

    root = tmp_path_factory.mktemp("million")
    make_corpus(root / "data")
    out = root / "out"
    assert main(["batch", "mel", str(root / "data"), "--out", str(out), "--store", "npy", "-j", "1", "-q"]) == 0
    description = read_description(str(out))
    ok = {r["id"]: r for r in manifest_lines(out) if r["status"] == "ok"}
    tmp = out / "index.building"
    db = sqlite3.connect(tmp)
    try:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        fill_index(db, description, list(ok.values()), [])
        _add_synthetic_rows(db, SYNTHETIC, description["n_feats"])
        db.commit()
    finally:
        db.close()
    os.replace(tmp, out / INDEX)
    return out, ok


def _probe(script: str, out: Path, ok: dict[str, dict], item_id: str = "spk2/c") -> dict:
    npy = out / ok[item_id]["outputs"]["npy"]
    proc = subprocess.run(
        [sys.executable, "-c", script, str(out), item_id, str(npy)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    print(f"store of {SYNTHETIC + len(ok)} utterances: {json.dumps(figures)}")  # the measured figures, with -s
    return figures


@pytest.mark.slow
def test_opening_a_store_of_a_million_utterances_is_small_and_quick(million):
    out, ok = million
    figures = _probe(_OPEN_PROBE, out, ok)
    assert figures["n"] == SYNTHETIC + len(ok)
    assert figures["synthetic_in"] and not figures["missing_in"]
    assert figures["open_cpu"] < OPEN_CPU_SECONDS
    assert figures["open_rss_kib"] / 1024 <= OPEN_RSS_MB
    assert figures["lookup_cpu"] < 0.25 and figures["lookup_rss_kib"] / 1024 <= 20  # one row, one small array
    assert figures["equal"] and figures["shape"] == [108, 80]


@pytest.mark.slow
def test_the_first_padded_batch_of_a_million_utterance_store_is_small_and_quick(million):
    out, ok = million
    figures = _probe(_BATCH_PROBE, out, ok)
    shortest = sorted(ok, key=lambda i: (ok[i]["shape"][0], i))[:4]
    assert figures["ids"] == shortest
    assert figures["batch_cpu"] < OPEN_CPU_SECONDS
    assert figures["batch_rss_kib"] / 1024 <= OPEN_RSS_MB


@pytest.mark.parametrize("kind", STORES)
def test_the_manifest_stays_bounded_over_reruns_retries_and_force(cli, tmp_path, kind):
    data = tmp_path / "data"
    good = make_corpus(data)
    bad = []
    for i in range(5):  # failures: retried by every npy run; each run below also touches every input
        bad.append(data / "bad" / f"x{i}.wav")
        bad[-1].parent.mkdir(parents=True, exist_ok=True)
        bad[-1].write_bytes(b"RIFF....WAVEjunk" * (i + 1))
    args = ["batch", "mel", data, "--out", tmp_path / "out", "--store", kind, "--shard-size", "2u", "-j", 1, "--json"]
    manifest = tmp_path / "out" / "manifest.jsonl"
    lengths = []
    n_inputs = len(good) + len(bad)
    for run in range(7):
        extra: list[str] = []
        if run == 2:  # new inputs
            for j in range(3):
                good[f"new/n{j}"] = write_tone_noise(data / "new" / f"n{j}.wav", 0.3 + 0.1 * j, seed=30 + j)
            n_inputs += 3
        if run == 6:
            extra = ["--force"]
        for path in [*good.values(), *bad]:  # every input changed since the last run: all of it is computed again
            os.utime(path, ns=(run * 10**9, run * 10**9))
        code, stdout, err = cli(*args, *extra)
        assert code == 3, err
        summary = json.loads(stdout)
        assert (summary["ok"], summary["failed"]) == (len(good), len(bad))
        lines = manifest.read_bytes().count(b"\n")
        lengths.append(lines)
        # compaction at the start of a run keeps what the runs before left within 2 x inputs + 16 lines; this run's
        # own lines come on top of that
        assert lines - summary["ok"] - summary["failed"] <= 2 * n_inputs + 16, (run, lengths)
        corpus = audiokit.corpus.open(tmp_path / "out")
        assert corpus.ids == sorted(good) and set(corpus.failed) == {f"bad/x{i}" for i in range(5)}
    assert max(lengths) <= 3 * n_inputs + 16
    assert any(b < a for a, b in zip(lengths, lengths[1:-1])), f"never compacted: {lengths}"
    assert lengths[-1] == n_inputs  # --force starts the store (and its manifest) again
    ref = reference_arrays(cli, "mel", [], good, tmp_path / "ref")
    corpus = audiokit.corpus.open(tmp_path / "out")
    for item_id, want in ref.items():
        assert_bits_equal(np.asarray(corpus[item_id].array), want, item_id)

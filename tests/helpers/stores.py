"""Helpers of the corpus-store tests (``audiokit batch --store npy|shards|kaldi|parquet``): a small corpus, the
single-file command's arrays it must equal, each store read back by its real consumer (numpy + the ESPnet views,
kaldiio, webdataset, Hugging Face ``datasets``, pyarrow), the files a run leaves, and a run killed with SIGKILL.

Import them with ``from tests.helpers.stores import ...``.
"""

from __future__ import annotations

import glob
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np

from audiokit.io.tar_shard import item_id_of
from tests.helpers.batch import audiokit_cmd, write_tone_noise

__all__ = [
    "CORPUS",
    "FEATURES",
    "SPEAKER_REGEX",
    "STORES",
    "assert_bits_equal",
    "bookkeeping",
    "container_files",
    "float64_stats",
    "kill_when",
    "make_corpus",
    "read_hf_parquet",
    "read_hf_webdataset",
    "read_kaldi",
    "read_npy_views",
    "read_parquet_pyarrow",
    "read_webdataset",
    "reference_arrays",
    "stats_tolerance",
    "store_bytes",
    "table",
]

#: The four array stores.
STORES = ("npy", "shards", "kaldi", "parquet")

#: The corpus :func:`make_corpus` writes: id -> (relative file, seconds, subtype).  ``spk1/b.take2`` holds a ``.``
#: (its key in every store is ``spk1/b%2Etake2``), ``spk2/sess/d`` sits one folder deeper, WAV and FLAC mixed.
CORPUS = {
    "spk1/a": ("spk1/a.wav", 0.6, "PCM_16"),
    "spk1/b.take2": ("spk1/b.take2.flac", 0.9, "PCM_16"),
    "spk2/c": ("spk2/c.wav", 1.1, "FLOAT"),
    "spk2/sess/d": ("spk2/sess/d.flac", 0.5, "PCM_24"),
    "spk3/e": ("spk3/e.wav", 0.35, "PCM_16"),
}
#: ``--speaker-from``: the top folder of the id (``spk1``, ``spk2``, ``spk3``).
SPEAKER_REGEX = r"^(?P<speaker>spk\d)/"

#: The features every store is checked with: name -> (command, options given to the single-file command and the
#: batch alike).  ``spectrogram`` runs on a corpus with one stereo file (``--mix``).
FEATURES = {
    "mel": ("mel", []),
    "mfcc-kaldi": ("mfcc", ["--compat", "kaldi"]),
    "spectrogram-mix": ("spectrogram", ["--win", "512", "--hop", "256", "--scale", "power", "--mix"]),
}

#: Files of a store that are the run's bookkeeping, not its content (timestamps, per-run append order).
_BOOKKEEPING = ("manifest.jsonl", "stats.journal", ".audiokit-batch.lock")


def make_corpus(root: Path, *, stereo: bool = False, seconds: float | None = None) -> dict[str, Path]:
    """Write :data:`CORPUS` under ``root`` (``stereo``: plus ``spk3/st.wav``, 2 channels); return id -> path.

    ``seconds`` overrides every duration.
    """
    paths = {}
    entries = dict(CORPUS)
    if stereo:
        entries["spk3/st"] = ("spk3/st.wav", 0.8, "PCM_16")
    for seed, (item_id, (name, length, subtype)) in enumerate(sorted(entries.items()), start=1):
        channels = 2 if item_id == "spk3/st" else 1
        paths[item_id] = write_tone_noise(root / name, seconds or length, seed=seed, subtype=subtype, channels=channels)
    return paths


def reference_arrays(cli, command: str, options: list[str], paths: dict[str, Path], ref: Path) -> dict[str, np.ndarray]:
    """The single-file command's ``.npy`` of every input, transposed to ``(n_frames, n_feats)`` (C order, float32)."""
    arrays = {}
    for item_id, path in paths.items():
        target = ref / f"{item_id.replace('/', '_')}.npy"
        target.parent.mkdir(parents=True, exist_ok=True)
        code, _, err = cli(command, path, *options, "--npy", target)
        assert code == 0, err
        rows = np.load(target)
        assert rows.dtype == np.float32 and rows.ndim == 2
        arrays[item_id] = np.ascontiguousarray(rows.T)
    return arrays


def assert_bits_equal(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Same shape, dtype and bytes (bit for bit: -0.0 is not 0.0, a NaN is not a number)."""
    got = np.asarray(got)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes(), what


def float64_stats(arrays: dict[str, np.ndarray]) -> tuple[float, np.ndarray, np.ndarray]:
    """``(frames, per-dimension sum, sum of squares)`` of ``arrays`` (rows are frames), in float64."""
    stacked = np.concatenate([a.astype(np.float64) for a in arrays.values()])
    return float(stacked.shape[0]), stacked.sum(axis=0), (stacked**2).sum(axis=0)


def stats_tolerance(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per-dimension bounds on the difference of two float64 summations of the same values (any order).

    A recursive float64 sum of ``n`` terms is within ``(n - 1) * 2**-53 * sum|x|`` of the exact sum (Higham, 2002,
    eq. 4.4), so two summations differ by at most twice that; the products ``x * x`` of float32 values are exact in
    float64.  Returned for the sums and for the sums of squares.
    """
    stacked = np.concatenate([a.astype(np.float64) for a in arrays.values()])
    n = stacked.shape[0]
    unit = 2.0 * n * 2.0**-53
    return unit * np.abs(stacked).sum(axis=0), unit * (stacked**2).sum(axis=0)


# ---------------------------------------------------------------------------------------------------- consumers
def table(path: Path) -> dict[str, str]:
    """A Kaldi text table (``key value...`` per line) as ``{key: rest of the line}``."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(" ")
        rows[key] = value
    return rows


def read_npy_views(out: Path) -> dict[str, np.ndarray]:
    """The ``npy`` store through its ESPnet views: ``feats.scp`` (``key /abs/path.npy``) loaded with ``np.load``,
    each shape checked against ``feats_shape`` (``key n_frames,n_feats``); keyed by id."""
    shapes = table(out / "feats_shape")
    arrays = {}
    for key, path in table(out / "feats.scp").items():
        assert os.path.isabs(path), path
        array = np.load(path)
        assert shapes[key] == f"{array.shape[0]},{array.shape[1]}", key
        arrays[item_id_of(key)] = array
    assert len(shapes) == len(arrays)
    return arrays


def read_kaldi(out: Path) -> dict[str, np.ndarray]:
    """``kaldiio.load_scp(OUT/feats.scp)``, keyed by id."""
    import kaldiio

    feats = kaldiio.load_scp(str(out / "feats.scp"))
    return {item_id_of(key): np.asarray(feats[key]) for key in feats}


def read_webdataset(out: Path) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
    """Every ``OUT/shar/features.*.tar`` through ``webdataset.WebDataset`` (no shuffling): arrays and ``.json``
    records keyed by id, in the shards' order (dict order)."""
    import webdataset

    shards = sorted(glob.glob(str(out / "shar" / "features.*.tar")))
    arrays, records = {}, {}
    for sample in webdataset.WebDataset(shards, shardshuffle=False):
        assert set(sample) >= {"npy", "json"}, sorted(sample)
        item_id = item_id_of(sample["__key__"])
        arrays[item_id] = np.load(io.BytesIO(sample["npy"]), allow_pickle=False)
        records[item_id] = json.loads(sample["json"])
    return arrays, records


def read_hf_webdataset(out: Path, cache: Path) -> dict[str, np.ndarray]:
    """``datasets.load_dataset("webdataset", data_files=OUT/shar/features.*.tar).with_format("numpy")``, by id."""
    import datasets

    shards = sorted(glob.glob(str(out / "shar" / "features.*.tar")))
    ds = datasets.load_dataset("webdataset", data_files={"train": shards}, split="train", cache_dir=str(cache))
    return {item_id_of(row["__key__"]): row["npy"] for row in ds.with_format("numpy")}


def read_hf_parquet(out: Path, cache: Path, **format_kwargs) -> dict[str, dict]:
    """``datasets.load_dataset("parquet", data_files=OUT/feats.*.parquet).with_format("numpy")``: rows by id."""
    import datasets

    files = sorted(glob.glob(str(out / "feats.*.parquet")))
    ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(cache))
    return {str(row["id"]): row for row in ds.with_format("numpy", **format_kwargs)}


def read_parquet_pyarrow(out: Path) -> dict[str, dict]:
    """Every ``OUT/feats.*.parquet`` with ``pyarrow.parquet.read_table(...).to_pylist()``: rows by id."""
    import pyarrow.parquet as pq

    rows = {}
    for path in sorted(glob.glob(str(out / "feats.*.parquet"))):
        for row in pq.read_table(path).to_pylist():
            rows[row["id"]] = row
    return rows


# ---------------------------------------------------------------------------------------------------- files of a run
def container_files(out: Path) -> list[str]:
    """The array files of a store (``.npy``, ``.tar``, ``.ark`` but ``cmvn.ark``, ``.parquet``), relative to ``out``, sorted."""
    return sorted(
        p.relative_to(out).as_posix()
        for p in out.rglob("*")
        if p.is_file() and p.suffix in (".npy", ".tar", ".ark", ".parquet") and p.name != "cmvn.ark"
    )


def store_bytes(out: Path) -> dict[str, bytes]:
    """Every file of a store but its bookkeeping (``manifest.jsonl``'s times, the journal's append order): relative
    name -> bytes.  Two runs compared with it wrote into the same ``--out`` path (the views hold absolute paths)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name not in _BOOKKEEPING
    }


def bookkeeping() -> tuple[str, ...]:
    """The file names :func:`store_bytes` leaves out."""
    return _BOOKKEEPING


def kill_when(args: list, ready, *, cwd: Path, timeout: float = 120) -> bool:
    """Start ``python -m audiokit ARGS`` in its own session, wait until ``ready()`` is true, then SIGKILL the batch
    process (its pool workers, if any, after it: every process of the session) and reap it.

    Returns True when the batch was killed, False when it had ended by itself first (exit 0: the caller may try
    again).  AssertionError when it failed, or did not get there before the timeout.
    """
    proc = subprocess.Popen(
        audiokit_cmd(*args),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready() and proc.poll() is None:
            assert time.monotonic() < deadline, "the batch did not get far enough in time"
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)  # a batch that has just ended is a zombie until reaped: no error
        proc.wait(timeout=60)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the session's other processes (pool workers): ours
        except ProcessLookupError:
            pass
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr is not None else ""
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode in (0, -signal.SIGKILL), f"exit {proc.returncode}: {err}"
    return proc.returncode == -signal.SIGKILL

"""Corpus stores under faults: ``kill -9`` and resume (byte for byte an uninterrupted run), re-runs that compute
nothing, corrupt inputs, id clashes, other options / store kinds / shard sizes on the same ``--out``, mixed sample
rates and ``--sr``, channels, speakers that do not match."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import audiokit.corpus
from audiokit.batch.stores.layout import shard_file
from audiokit.io.tar_shard import shard_key
from tests.helpers.batch import manifest_lines, temp_files, write_tone_noise
from tests.helpers.stores import (
    CORPUS,
    STORES,
    assert_bits_equal,
    container_files,
    float64_stats,
    kill_when,
    make_corpus,
    read_kaldi,
    read_npy_views,
    read_parquet_pyarrow,
    read_webdataset,
    reference_arrays,
    stats_tolerance,
    store_bytes,
    table,
)

SHARDED = ("shards", "kaldi", "parquet")
#: webdataset 1.0.2 never closes the local shards it opens (see tests/batch/test_stores.py).
WEBDATASET_UNCLOSED = pytest.mark.filterwarnings("ignore:unclosed file <_io.BufferedReader:ResourceWarning")


def _consumer_arrays(kind: str, out: Path) -> dict[str, np.ndarray]:
    """The store read by its real consumer (npy: ESPnet feats.scp; kaldi: kaldiio; shards: webdataset; parquet:
    pyarrow), by id."""
    if kind == "npy":
        return read_npy_views(out)
    if kind == "kaldi":
        return read_kaldi(out)
    if kind == "shards":
        return read_webdataset(out)[0]
    rows = read_parquet_pyarrow(out)
    return {i: np.array(r["feats"], dtype=np.float32).reshape(r["n_frames"], -1) for i, r in rows.items()}


def _store_args(kind: str, data: Path, out: Path, *extra) -> list:
    shard = ["--shard-size", "3u"] if kind in SHARDED else []
    return ["batch", "mel", data, "--out", out, "--store", kind, *shard, "-j", 1, *extra]


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


# ------------------------------------------------------------------------------------------------- kill -9, resume
#: The slow corpus of the kill tests: 8 inputs of 2 s; the options make each input cost ~70 ms of CPU (a 2048-point
#: STFT every 4 samples), so that a run of 8 shards is still running when its first shard appears.
SLOW_OPTIONS = ["--win", "2048", "--hop", "4", "--n-mels", "40"]


def _slow_corpus(root: Path) -> Path:
    for i in range(8):
        write_tone_noise(root / f"g{i % 2}" / f"u{i}.{'flac' if i % 3 else 'wav'}", 2.0, seed=i)
    return root


def _ready(kind: str, out: Path, moment: str):
    """``ready()`` of :func:`kill_when`: ``first-array``: a committed array file exists (the first .npy, or shard 0's
    file), maybe before its manifest line; ``recorded``: two inputs are recorded done in the manifest."""
    if moment == "recorded":
        manifest = out / "manifest.jsonl"
        return lambda: manifest.exists() and manifest.read_bytes().count(b'"status": "ok"') >= 2
    if kind == "npy":
        return lambda: (out / "feats").is_dir() and any(not p.name.startswith(".") for p in (out / "feats").rglob("*.npy"))
    return (out / shard_file(kind, 0)).exists


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "jobs", "moment"),
    [
        ("npy", 1, "recorded"),
        ("shards", 1, "recorded"),
        ("kaldi", 1, "recorded"),
        ("parquet", 1, "recorded"),
        ("shards", 2, "recorded"),
        ("npy", 2, "recorded"),
        ("kaldi", 1, "first-array"),
        ("parquet", 2, "first-array"),
    ],
)
def test_kill_9_then_resume_equals_an_uninterrupted_run_byte_for_byte(cli, tmp_path, kind, jobs, moment):
    data = _slow_corpus(tmp_path / "data")
    out = tmp_path / "out"
    args = ["batch", "mel", data, *SLOW_OPTIONS, "--out", out, "--store", kind, "-j", jobs, "--chunk", 1]
    if kind in SHARDED:
        args += ["--shard-size", "1u"]
    code, _, err = cli(*args)
    assert code == 0, err
    reference = store_bytes(out)
    shutil.move(out, tmp_path / "reference")

    # The killed run: SIGKILL at that moment.  Should the run finish first (a very slow poll), it is started again
    # from an empty folder: the test needs one run that was really interrupted.
    for _attempt in range(3):
        shutil.rmtree(out, ignore_errors=True)
        killed = kill_when(args, _ready(kind, out, moment), cwd=tmp_path)
        done = [r for r in manifest_lines(out) if r["status"] == "ok"]
        if killed and len(done) < 8:
            break
    assert killed and len(done) < 8, "no run was interrupted"
    if moment == "recorded":
        assert len(done) >= 2
    # What a killed run leaves: no index lists bytes that are not on disk (corpus.open rebuilds it from the manifest,
    # and says so), and every array it lists equals the uninterrupted run's
    with pytest.warns(UserWarning, match="interrupted run"):
        partial = audiokit.corpus.open(out)
    assert set(partial.ids) == {r["id"] for r in done}
    finished = audiokit.corpus.open(tmp_path / "reference")
    for item_id in partial.ids:
        assert_bits_equal(np.asarray(partial[item_id].array), np.asarray(finished[item_id].array), item_id)

    # The re-run redoes what was not committed, and the store equals the uninterrupted one byte for byte
    code, _, err = cli(*args)
    assert code == 0, err
    assert f"{8 - len(done)} ok, 0 failed, {len(done)} already done, 8 inputs" in err
    resumed = store_bytes(out)
    assert sorted(resumed) == sorted(reference)
    for name, data_bytes in reference.items():
        assert resumed[name] == data_bytes, name
    assert temp_files(out) == []
    arrays = {i: np.asarray(e.array) for i, e in audiokit.corpus.open(out).items()}
    stats = json.loads((out / "stats.json").read_text())
    count, sums, squares = float64_stats(arrays)
    tol_sum, tol_sq = stats_tolerance(arrays)
    assert stats["count"] == count and np.all(np.abs(np.array(stats["sum"]) - sums) <= tol_sum)
    assert np.all(np.abs(np.array(stats["sum_squares"]) - squares) <= tol_sq)

    # A re-run of the finished store computes nothing and rewrites no array
    mtimes = {name: (out / name).stat().st_mtime_ns for name in container_files(out)}
    code, _, err = cli(*args)
    assert code == 0 and "0 ok, 0 failed, 8 already done, 8 inputs" in err
    assert {name: (out / name).stat().st_mtime_ns for name in container_files(out)} == mtimes
    assert store_bytes(out) == reference


# ------------------------------------------------------------------------------------------------- corrupt inputs
def _bad_corpus(root: Path) -> tuple[dict[str, Path], dict[str, Path]]:
    """:data:`CORPUS` plus a truncated WAV (``spk1/broken``: its header cut at 30 bytes) and a ``.flac`` of garbage
    (``spk2/junk``), sorted among the good ones (so a shard holds good and bad inputs)."""
    good = make_corpus(root)
    broken = write_tone_noise(root / "spk1" / "broken.wav", 0.5, seed=9)
    with open(broken, "r+b") as fh:
        fh.truncate(30)
    junk = root / "spk2" / "junk.flac"
    junk.write_bytes(b"fLaC" + bytes(range(256)) * 4)
    return good, {"spk1/broken": broken, "spk2/junk": junk}


@WEBDATASET_UNCLOSED
@pytest.mark.parametrize("kind", STORES)
def test_a_corrupt_input_fails_alone_and_the_store_holds_the_others(cli, tmp_path, kind):
    good, bad = _bad_corpus(tmp_path / "data")
    out = tmp_path / "out"
    code, _, err = cli(*_store_args(kind, tmp_path / "data", out))
    assert code == 3
    lines = _error_lines(err)
    assert len(lines) == 2, err
    for line, path in zip(lines, bad.values()):
        assert line.startswith(f"error: {path}: "), line
    ref = reference_arrays(cli, "mel", [], good, tmp_path / "ref")
    stored = _consumer_arrays(kind, out)
    assert sorted(stored) == sorted(ref)
    for item_id, want in ref.items():
        assert_bits_equal(stored[item_id], want, item_id)
    corpus = audiokit.corpus.open(out)
    assert corpus.ids == sorted(ref)
    assert set(corpus.failed) == set(bad)
    for item_id, path in bad.items():
        assert corpus.failed[item_id]["path"] == str(path)
        assert f"error: {corpus.failed[item_id]['error']}" in lines
        with pytest.raises(KeyError, match="it failed"):
            corpus[item_id]
    assert temp_files(out) == []


@pytest.mark.parametrize("kind", STORES)
def test_a_fixed_input_joins_the_store_as_if_it_had_never_failed(cli, tmp_path, kind):
    good, bad = _bad_corpus(tmp_path / "data")
    out = tmp_path / "out"
    assert cli(*_store_args(kind, tmp_path / "data", out))[0] == 3
    # the broken files replaced by valid ones (new mtime: their shards are stale); the re-run completes the store
    write_tone_noise(bad["spk1/broken"], 0.5, seed=9)
    bad["spk2/junk"].unlink()
    fixed = write_tone_noise(tmp_path / "data" / "spk2" / "junk.flac", 0.4, seed=10)
    code, _, err = cli(*_store_args(kind, tmp_path / "data", out))
    assert code == 0, err
    corpus = audiokit.corpus.open(out)
    assert corpus.failed == {}
    assert corpus.ids == sorted([*good, "spk1/broken", "spk2/junk"])
    ref = reference_arrays(cli, "mel", [], {**good, "spk1/broken": bad["spk1/broken"], "spk2/junk": fixed}, tmp_path / "ref")
    for item_id, want in ref.items():
        assert_bits_equal(np.asarray(corpus[item_id].array), want, item_id)
    # byte for byte the store a clean run of the same files makes (in the same --out path)
    resumed = store_bytes(out)
    shutil.move(out, tmp_path / "resumed")
    assert cli(*_store_args(kind, tmp_path / "data", out))[0] == 0
    clean = store_bytes(out)
    assert sorted(resumed) == sorted(clean)
    for name, data in clean.items():
        assert resumed[name] == data, name


# ------------------------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("kind", STORES)
def test_an_id_that_belongs_to_another_source_is_refused_naming_both_paths(cli, tmp_path, kind):
    make_corpus(tmp_path / "data")
    other = make_corpus(tmp_path / "other", seconds=0.3)  # the same relative names, other files
    out = tmp_path / "out"
    assert cli(*_store_args(kind, tmp_path / "data", out))[0] == 0
    before = store_bytes(out), (out / "manifest.jsonl").read_bytes()
    for force in ([], ["--force"]):  # --force rebuilds a store, it never gives an id to another source
        code, stdout, err = cli(*_store_args(kind, tmp_path / "other", out, *force))
        assert code == 2 and stdout == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        first = sorted(CORPUS)[0]
        assert lines[0].startswith(
            f"error: {other[first]}: id {first!r} already belongs to {tmp_path / 'data' / CORPUS[first][0]}"
        )
        assert f"(and {len(CORPUS) - 1} more of these inputs' ids)" in lines[0]
        assert (store_bytes(out), (out / "manifest.jsonl").read_bytes()) == before


@pytest.mark.parametrize("kind", STORES)
def test_other_options_are_refused_unless_force_which_rebuilds_the_store(cli, tmp_path, kind):
    make_corpus(tmp_path / "data")
    out = tmp_path / "out"
    assert cli(*_store_args(kind, tmp_path / "data", out))[0] == 0
    before = store_bytes(out)
    code, _, err = cli(*_store_args(kind, tmp_path / "data", out, "--n-mels", "40"))
    assert code == 2
    assert err.startswith(f"error: the store in {out} was made with other options")
    assert "--force" in err and len(err.strip().splitlines()) == 1
    assert store_bytes(out) == before
    # --force with other options and other inputs: a new store, the old ids (and their arrays) gone
    new = {"x/one": write_tone_noise(tmp_path / "new" / "x" / "one.wav", 0.4, seed=21)}
    new["x/two"] = write_tone_noise(tmp_path / "new" / "x" / "two.flac", 0.7, seed=22)
    code, _, err = cli(*_store_args(kind, tmp_path / "new", out, "--n-mels", "40", "--force"))
    assert code == 0, err
    corpus = audiokit.corpus.open(out)
    assert corpus.ids == ["x/one", "x/two"] and corpus.failed == {}
    assert {r["id"] for r in manifest_lines(out)} == {"x/one", "x/two"}
    ref = reference_arrays(cli, "mel", ["--n-mels", "40"], new, tmp_path / "ref")
    for item_id, want in ref.items():
        assert_bits_equal(np.asarray(corpus[item_id].array), want, item_id)
    assert sorted(_consumer_arrays(kind, out)) == ["x/one", "x/two"]
    n_files = 2 if kind == "npy" else 1  # two utterances: two .npy, or one shard of 3u
    assert len(container_files(out)) == n_files
    assert json.loads((out / "store.json").read_text())["n_feats"] == 40


@pytest.mark.parametrize(("kind", "other"), [("npy", "kaldi"), ("shards", "npy"), ("kaldi", "parquet"), ("parquet", "shards")])
def test_another_store_kind_on_the_same_out_is_refused(cli, tmp_path, kind, other):
    make_corpus(tmp_path / "data")
    out = tmp_path / "out"
    assert cli(*_store_args(kind, tmp_path / "data", out))[0] == 0
    before = store_bytes(out)
    code, _, err = cli(*_store_args(other, tmp_path / "data", out))
    assert code == 2
    assert err.strip() == f"error: {out} holds a --store {kind} store; this run asks --store {other} (give another --out)"
    assert store_bytes(out) == before


@pytest.mark.parametrize("kind", SHARDED)
def test_another_shard_size_is_refused_unless_force(cli, tmp_path, kind):
    make_corpus(tmp_path / "data")
    out = tmp_path / "out"
    assert cli(*_store_args(kind, tmp_path / "data", out))[0] == 0  # 3u: 2 shards
    before = store_bytes(out)
    args = ["batch", "mel", tmp_path / "data", "--out", out, "--store", kind, "--shard-size", "1u", "-j", 1]
    code, _, err = cli(*args)
    assert code == 2
    assert err.strip() == (
        f"error: the store in {out} was packed with --shard-size 3u; this run asks 1u (give the same, or --force to rebuild it)"
    )
    assert store_bytes(out) == before
    assert cli(*args, "--force")[0] == 0
    assert len(container_files(out)) == len(CORPUS)


# ------------------------------------------------------------------------------------------------- rates, channels, speakers
@pytest.mark.parametrize("kind", ["npy", "kaldi"])
def test_mixed_rates_are_refused_naming_the_odd_file_and_sr_resamples_it_as_resample_does(cli, tmp_path, kind):
    data = tmp_path / "data"
    paths = {
        "a": write_tone_noise(data / "a.wav", 0.6, seed=1),
        "b": write_tone_noise(data / "b.wav", 0.7, seed=2, sr=22050),
        "c": write_tone_noise(data / "c.flac", 0.5, seed=3),
    }
    out = tmp_path / "out"
    code, _, err = cli(*_store_args(kind, data, out))
    assert code == 3
    assert _error_lines(err) == [
        f"error: {paths['b']}: 22050 Hz, but the store's rate is 16000 Hz: a store holds one rate (give --sr 16000 to "
        "resample every input on read)"
    ]  # refused before any work: the store's rate is the inputs' most common one
    assert not (out / "store.json").exists() and not (out / "manifest.jsonl").exists()
    # --sr 16k: b resampled on read.  Its array equals `audiokit resample --to 16k --subtype FLOAT` (the float32
    # samples resample writes before quantisation, exact in a FLOAT WAV) then `mel` of that file, bit for bit; the
    # 16 kHz files are not touched (their arrays are the plain single-file command's).
    out16 = tmp_path / "out16"
    code, _, err = cli(*_store_args(kind, data, out16, "--sr", "16k"))
    assert code == 0, err
    resampled = tmp_path / "b.16k.wav"
    code, _, err = cli("resample", paths["b"], "--to", "16k", "--subtype", "FLOAT", "-o", resampled)
    assert code == 0, err
    ref = reference_arrays(cli, "mel", [], {**paths, "b": resampled}, tmp_path / "ref")
    corpus = audiokit.corpus.open(out16)
    assert corpus.ids == ["a", "b", "c"] and corpus.failed == {}
    for item_id, want in ref.items():
        assert_bits_equal(np.asarray(corpus[item_id].array), want, item_id)
    assert corpus["b"].record["sr"] == 16000
    assert json.loads((out16 / "store.json").read_text())["resampled_to"] == 16000


def test_a_multichannel_input_needs_channel_or_mix(cli, tmp_path):
    data = tmp_path / "data"
    paths = {"three": write_tone_noise(data / "three.wav", 0.6, seed=2, channels=3)}
    paths["two"] = write_tone_noise(data / "two.flac", 0.5, seed=1, channels=2)
    code, _, err = cli(*_store_args("npy", data, tmp_path / "out"))
    assert code == 3
    assert _error_lines(err) == [
        f"error: {paths[name]}: the input has {n} channels; a corpus store holds one per utterance (give --channel N or --mix)"
        for name, n in (("three", 3), ("two", 2))
    ]
    assert audiokit.corpus.open(tmp_path / "out").ids == []
    for option in (["--channel", "1"], ["--mix"]):
        out = tmp_path / f"out{option[0]}"
        code, _, err = cli(*_store_args("shards", data, out, *option))
        assert code == 0, err
        ref = reference_arrays(cli, "mel", option, paths, tmp_path / f"ref{option[0]}")
        corpus = audiokit.corpus.open(out)
        assert corpus.ids == ["three", "two"]
        for item_id, want in ref.items():
            assert_bits_equal(np.asarray(corpus[item_id].array), want, item_id)


@pytest.mark.parametrize("kind", ["npy", "kaldi"])
def test_a_speaker_regex_that_does_not_match_fails_that_input(cli, tmp_path, kind):
    paths = make_corpus(tmp_path / "data")
    out = tmp_path / "out"
    regex = r"^(spk[12])/"
    code, _, err = cli(*_store_args(kind, tmp_path / "data", out, "--speaker-from", regex))
    assert code == 3
    assert _error_lines(err) == [f"error: {paths['spk3/e']}: --speaker-from: {regex!r} does not match the id 'spk3/e'"]
    corpus = audiokit.corpus.open(out)
    assert set(corpus.failed) == {"spk3/e"}
    assert {i: corpus[i].speaker for i in corpus.ids} == {i: i[:4] for i in paths if i != "spk3/e"}
    if kind == "kaldi":
        assert table(out / "utt2spk") == {shard_key(i): i[:4] for i in paths if i != "spk3/e"}
    # --speaker-from parent: the input's folder
    out = tmp_path / "parent"
    assert cli(*_store_args(kind, tmp_path / "data", out, "--speaker-from", "parent"))[0] == 0
    corpus = audiokit.corpus.open(out)
    assert {i: corpus[i].speaker for i in corpus.ids} == {i: Path(p).parent.name for i, p in paths.items()}


def test_an_id_that_is_no_kaldi_key_fails_naming_its_input(cli, tmp_path):
    data = tmp_path / "data"
    spaced = write_tone_noise(data / "a b.wav", 0.4, seed=1)
    write_tone_noise(data / "c.flac", 0.5, seed=2)
    out = tmp_path / "out"
    code, _, err = cli(*_store_args("kaldi", data, out))
    assert code == 3
    assert audiokit.corpus.open(out).ids == ["c"] and list(table(out / "feats.scp")) == ["c"]
    lines = _error_lines(err)
    assert len(lines) == 1 and lines[0].startswith(f"error: {spaced}: "), lines

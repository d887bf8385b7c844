"""``audiokit batch --store npy|shards|kaldi|parquet``, end to end: every store read back by its real consumer equals
the single-file command's ``.npy`` transposed, bit for bit; lossy storage within its stated bound; the corpus
statistics; the same bytes whatever ``--jobs`` and process.

References: the single-file command (``audiokit mel FILE --npy X``) with the same options, transposed to
``(n_frames, n_feats)``; the consumers are numpy (+ the ESPnet ``feats.scp``/``feats_shape``), kaldiio, webdataset,
Hugging Face ``datasets`` and pyarrow -- no mocks.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

import audiokit.corpus
from audiokit.batch.stores.layout import member_path
from audiokit.batch.stores.reader import StoreCorpus
from audiokit.cli.app import main
from audiokit.io.tar_shard import item_id_of, shard_key
from tests.helpers.batch import audiokit_cmd, write_tone_noise
from tests.helpers.stores import (
    FEATURES,
    SPEAKER_REGEX,
    STORES,
    assert_bits_equal,
    container_files,
    float64_stats,
    make_corpus,
    read_hf_parquet,
    read_hf_webdataset,
    read_kaldi,
    read_npy_views,
    read_parquet_pyarrow,
    read_webdataset,
    reference_arrays,
    stats_tolerance,
    store_bytes,
    table,
)

#: webdataset 1.0.2 opens a local shard with open() in gopen and never closes it (tar_file_iterator only deletes the
#: TarFile): the file object's ResourceWarning comes from webdataset, not from our code (as in tests/io/test_tar_shard.py).
WEBDATASET_UNCLOSED = pytest.mark.filterwarnings("ignore:unclosed file <_io.BufferedReader:ResourceWarning")
#: Utterances per shard in these tests: the 5-6 inputs fill 3 shards, one of them partly.
SHARD_SIZE = "2u"
EPS32 = float(np.finfo(np.float32).eps)


def _call(*args) -> int:
    """``audiokit ARGS`` in this process (its output goes to pytest's capture); the exit code."""
    return main([str(a) for a in args])


class Workspace:
    """The corpora, single-file references and stores of this module, each built once (tests only read them)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._refs: dict[str, dict[str, np.ndarray]] = {}
        self._stores: dict[tuple, Path] = {}
        self.paths = {
            "mono": make_corpus(root / "mono"),
            "stereo": make_corpus(root / "stereo", stereo=True),
        }

    def corpus_of(self, feature: str) -> str:
        return "stereo" if feature == "spectrogram-mix" else "mono"

    def reference(self, feature: str) -> dict[str, np.ndarray]:
        if feature not in self._refs:
            command, options = FEATURES[feature]

            def cli(*args):
                return _call(*args), "", ""

            self._refs[feature] = reference_arrays(
                cli, command, options, self.paths[self.corpus_of(feature)], self.root / "ref" / feature
            )
        return self._refs[feature]

    def store(self, feature: str, kind: str, *extra: str) -> Path:
        """The store of ``feature`` (speakers from :data:`SPEAKER_REGEX`, ``--shard-size 2u``) with ``extra`` options."""
        key = (feature, kind, extra)
        if key not in self._stores:
            command, options = FEATURES[feature]
            out = self.root / "stores" / f"{feature}-{kind}-{len(self._stores)}"
            corpus = self.root / self.corpus_of(feature)
            code = _call(
                "batch", command, *options, corpus, "--out", out, "--store", kind, "--speaker-from", SPEAKER_REGEX,
                *(["--shard-size", SHARD_SIZE] if kind != "npy" else []), *extra, "-j", "1", "-q",
            )  # fmt: skip
            assert code == 0
            self._stores[key] = out
        return self._stores[key]


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("stores"))


def _speaker(item_id: str) -> str:
    return item_id.split("/")[0]


def _seconds(ws: Workspace, feature: str, item_id: str) -> float:
    import soundfile as sf

    info = sf.info(ws.paths[ws.corpus_of(feature)][item_id])
    return info.frames / info.samplerate


# ------------------------------------------------------------------------------------------------- the consumers
@pytest.mark.parametrize("feature", FEATURES)
def test_npy_store_opens_with_numpy_through_the_espnet_views(ws, feature):
    ref = ws.reference(feature)
    out = ws.store(feature, "npy")
    arrays = read_npy_views(out)
    assert sorted(arrays) == sorted(ref)
    for item_id, array in arrays.items():
        assert_bits_equal(array, ref[item_id], item_id)
        assert array.flags.c_contiguous
    # one file per utterance, nothing else per utterance: feats/<hh>/<key, % and / escaped>.npy, 256 folders at most
    files = container_files(out)
    assert len(files) == len(ref) and all(name.startswith("feats/") and name.count("/") == 2 for name in files)
    assert sorted(files) == sorted(member_path(shard_key(item_id)) for item_id in ref)


@pytest.mark.parametrize("feature", FEATURES)
def test_kaldi_store_opens_with_kaldiio(ws, feature):
    import kaldiio

    ref = ws.reference(feature)
    out = ws.store(feature, "kaldi")
    arrays = read_kaldi(out)
    assert sorted(arrays) == sorted(ref)
    for item_id, array in arrays.items():
        assert_bits_equal(array, ref[item_id], item_id)
    keys = list(table(out / "feats.scp"))
    assert keys == sorted(keys, key=lambda k: k.encode()), "Kaldi tables are sorted in byte order (LC_ALL=C)"
    assert keys == sorted((shard_key(i) for i in ref), key=lambda k: k.encode())
    assert table(out / "utt2num_frames") == {shard_key(i): str(a.shape[0]) for i, a in ref.items()}
    utt2dur = {item_id_of(k): float(v) for k, v in table(out / "utt2dur").items()}
    assert utt2dur == pytest.approx({i: _seconds(ws, feature, i) for i in ref}, abs=5e-7)  # 6 decimals
    hop = 256 if feature == "spectrogram-mix" else 160
    assert float((out / "frame_shift").read_text()) == hop / 16000
    assert table(out / "utt2spk") == {shard_key(i): _speaker(i) for i in ref}
    spk2utt = {s: v.split() for s, v in table(out / "spk2utt").items()}
    assert spk2utt == {s: sorted(shard_key(i) for i in ref if _speaker(i) == s) for s in ("spk1", "spk2", "spk3")}
    # cmvn.ark: Kaldi's global compute-cmvn-stats matrix, (2, D + 1): sums and the count, sums of squares and 0
    cmvn = kaldiio.load_mat(str(out / "cmvn.ark"))
    count, sums, squares = float64_stats(ref)
    tol_sum, tol_sq = stats_tolerance(ref)
    n_feats = next(iter(ref.values())).shape[1]
    assert cmvn.shape == (2, n_feats + 1) and cmvn.dtype == np.float64
    assert cmvn[0, -1] == count and cmvn[1, -1] == 0
    assert np.all(np.abs(cmvn[0, :-1] - sums) <= tol_sum)
    assert np.all(np.abs(cmvn[1, :-1] - squares) <= tol_sq)


@WEBDATASET_UNCLOSED
@pytest.mark.parametrize("feature", FEATURES)
def test_shards_store_opens_with_webdataset(ws, feature):
    ref = ws.reference(feature)
    out = ws.store(feature, "shards")
    arrays, records = read_webdataset(out)
    assert list(arrays) == sorted(ref)  # the shards hold the inputs sorted by id
    for item_id, array in arrays.items():
        assert_bits_equal(array, ref[item_id], item_id)
        assert records[item_id]["num_frames"] == array.shape[0] and records[item_id]["num_features"] == array.shape[1]
    # --shard-size 2u: ceil(n / 2) shards of members <key>.npy then <key>.json, each with its Lhotse cuts beside it
    ids = sorted(ref)
    n_shards = math.ceil(len(ids) / 2)
    assert sorted(p.name for p in (out / "shar").iterdir()) == sorted(
        [f"features.{n:06d}.tar" for n in range(n_shards)] + [f"cuts.{n:06d}.jsonl.gz" for n in range(n_shards)]
    )
    for n in range(n_shards):
        keys = [shard_key(i) for i in ids[2 * n : 2 * n + 2]]
        with tarfile.open(out / "shar" / f"features.{n:06d}.tar") as tar:
            assert tar.getnames() == [f"{k}.{ext}" for k in keys for ext in ("npy", "json")]
        with gzip.open(out / "shar" / f"cuts.{n:06d}.jsonl.gz", "rt", encoding="utf-8") as fh:
            assert [json.loads(line)["id"] for line in fh] == keys  # Lhotse's from_shar: cut id == member key


@pytest.mark.slow
@WEBDATASET_UNCLOSED
@pytest.mark.parametrize("feature", FEATURES)
def test_shards_store_opens_with_hf_datasets(ws, feature, tmp_path):
    ref = ws.reference(feature)
    arrays = read_hf_webdataset(ws.store(feature, "shards"), tmp_path / "hf")
    assert sorted(arrays) == sorted(ref)
    for item_id, array in arrays.items():
        assert_bits_equal(array, ref[item_id], item_id)


@pytest.mark.parametrize("feature", FEATURES)
def test_parquet_store_opens_with_pyarrow(ws, feature):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ref = ws.reference(feature)
    out = ws.store(feature, "parquet")
    rows = read_parquet_pyarrow(out)
    assert sorted(rows) == sorted(ref)
    for item_id, row in rows.items():
        array = np.array(row["feats"], dtype=np.float32).reshape(-1, ref[item_id].shape[1])
        assert_bits_equal(array, ref[item_id], item_id)
        assert (row["n_frames"], row["sr"], row["speaker"]) == (ref[item_id].shape[0], 16000, _speaker(item_id))
        assert row["duration"] == pytest.approx(_seconds(ws, feature, item_id), abs=1e-12)
    files = sorted(out.glob("feats.*.parquet"))
    assert [p.name for p in files] == [f"feats.{n:06d}.parquet" for n in range(math.ceil(len(ref) / 2))]
    schema = pq.read_schema(files[0])
    assert schema.names[:6] == ["id", "feats", "n_frames", "duration", "sr", "speaker"]
    feats = schema.field("feats").type  # an extension type once `datasets` (which registers Array2D) is imported
    assert getattr(feats, "storage_type", feats) == pa.list_(pa.list_(pa.float32()))
    assert b"huggingface" in schema.metadata


@pytest.mark.slow
@pytest.mark.parametrize("feature", FEATURES)
def test_parquet_store_opens_with_hf_datasets_as_2d_arrays(ws, feature, tmp_path):
    ref = ws.reference(feature)
    rows = read_hf_parquet(ws.store(feature, "parquet"), tmp_path / "hf")
    assert sorted(rows) == sorted(ref)
    for item_id, row in rows.items():
        assert isinstance(row["feats"], np.ndarray)  # Array2D: (T, D) with no list conversion
        assert_bits_equal(row["feats"], ref[item_id], item_id)
        assert (int(row["n_frames"]), int(row["sr"]), str(row["speaker"])) == (ref[item_id].shape[0], 16000, _speaker(item_id))


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("feature", FEATURES)
def test_corpus_open_reads_every_store_the_same_way(ws, feature, kind):
    ref = ws.reference(feature)
    out = ws.store(feature, kind)
    corpus = audiokit.corpus.open(out)
    assert isinstance(corpus, StoreCorpus) and corpus.kind == kind
    assert corpus.ids == sorted(ref) and len(corpus) == len(ref) and list(corpus) == sorted(ref)
    assert corpus.failed == {}
    assert "spk9/none" not in corpus and "spk1/a" in corpus
    with pytest.raises(KeyError, match="spk9/none"):
        corpus["spk9/none"]
    for item_id, want in ref.items():
        entry = corpus[item_id]
        assert_bits_equal(entry.array, want, item_id)
        assert entry.speaker == _speaker(item_id)
        assert entry.duration == pytest.approx(_seconds(ws, feature, item_id), abs=1e-12)
        assert entry.metadata["layout"] == "(n_frames, n_feats)"
        assert entry.metadata["n_frames"] == want.shape[0]
    # padded batches: every utterance once, zeros after its length, the mask and lengths saying where
    seen = []
    previous_longest = 0
    for batch in corpus.batches(batch_size=2):
        assert batch.features.dtype == np.float32 and batch.features.shape[0] == len(batch.ids) <= 2
        assert batch.features.shape[1] == batch.lengths.max()
        assert min(batch.lengths) >= previous_longest  # order="length": sorted by n_frames
        previous_longest = int(batch.lengths.max())
        for b, item_id in enumerate(batch.ids):
            n = ref[item_id].shape[0]
            assert batch.lengths[b] == n
            assert_bits_equal(batch.features[b, :n], ref[item_id], item_id)
            assert not batch.features[b, n:].any()
            assert list(batch.mask[b]) == [t < n for t in range(batch.features.shape[1])]
        seen += batch.ids
    assert sorted(seen) == sorted(ref) and len(seen) == len(ref)
    longest = max(a.shape[0] for a in ref.values())
    for batch in corpus.batches(max_frames=2 * longest):
        assert len(batch.ids) == 1 or batch.features.shape[0] * batch.features.shape[1] <= 2 * longest
    shuffled = [b.ids for b in corpus.batches(batch_size=2, order="bucket", bucket=3, seed=5)]
    assert shuffled == [b.ids for b in corpus.batches(batch_size=2, order="bucket", bucket=3, seed=5)]
    assert sorted(i for ids in shuffled for i in ids) == sorted(ref)


# ------------------------------------------------------------------------------------------------- lossy storage
@pytest.mark.parametrize("feature", ["mel", "mfcc-kaldi"])
def test_kaldi_compress_is_kaldiio_method_2_and_decodes_within_the_stated_bound(ws, feature):
    import kaldiio

    ref = ws.reference(feature)
    out = ws.store(feature, "kaldi", "--compress")
    # byte for byte what kaldiio.save_ark(..., compression_method=2) writes for the same arrays, shard by shard
    ids = sorted(ref)
    arks = sorted(out.glob("feats.*.ark"), key=lambda p: int(p.name.split(".")[1]))
    assert [p.name for p in arks] == [f"feats.{n + 1}.ark" for n in range(math.ceil(len(ids) / 2))]
    for n, ark in enumerate(arks):
        expected = io.BytesIO()
        for item_id in ids[2 * n : 2 * n + 2]:
            kaldiio.save_ark(expected, {shard_key(item_id): ref[item_id]}, compression_method=2)
        assert ark.read_bytes() == expected.getvalue(), ark.name
    # audiokit/io/ark.py: within half a code step, never more than (max - min)/126 of the utterance's matrix, plus
    # float32 rounding (here 4 eps32 * max|x|)
    decoded = read_kaldi(out)
    corpus = audiokit.corpus.open(out)
    for item_id, want in ref.items():
        got = decoded[item_id]
        assert got.shape == want.shape and got.dtype == np.float32
        err = np.abs(got.astype(np.float64) - want).max()
        assert err <= (want.max() - want.min()) / 126 + 4 * EPS32 * np.abs(want).max(), item_id
        assert err > 0  # lossy indeed: the test can tell stored from decoded values
        assert_bits_equal(np.asarray(corpus[item_id].array), got, item_id)  # corpus.open decodes as kaldiio does


@WEBDATASET_UNCLOSED
@pytest.mark.parametrize("kind", ["npy", "shards", "parquet"])
@pytest.mark.parametrize("feature", FEATURES)
def test_float16_stores_hold_the_float32_values_cast_to_float16(ws, feature, kind):
    ref = {i: a.astype(np.float16) for i, a in ws.reference(feature).items()}
    out = ws.store(feature, kind, "--dtype", "float16")
    if kind == "npy":
        stored = read_npy_views(out)
    elif kind == "shards":
        stored = read_webdataset(out)[0]
    else:
        stored = {i: np.array(r["feats"], dtype=np.float16) for i, r in read_parquet_pyarrow(out).items()}
    corpus = audiokit.corpus.open(out)
    assert sorted(stored) == sorted(ref) == corpus.ids
    for item_id, want in ref.items():
        assert_bits_equal(stored[item_id], want, item_id)
        assert_bits_equal(np.asarray(corpus[item_id].array), want, item_id)
    assert json.loads((out / "store.json").read_text())["dtype"] == "float16"


@pytest.mark.parametrize("kind", ["npy", "shards", "parquet"])
def test_float16_of_a_float64_chain_is_the_float32_store_cast(cli, tmp_path, kind):
    # --compat kaldi computes in float64: rounding those values straight to float16 differs from float32-then-float16
    # in a few cells in 10^5 (double rounding); ~100 000 cells here
    paths = {f"u{i}": write_tone_noise(tmp_path / "data" / f"u{i}.wav", 4.0, seed=50 + i) for i in range(3)}
    options = ["--compat", "kaldi", "--n-mels", "80"]
    ref = reference_arrays(cli, "mel", options, paths, tmp_path / "ref")
    out = tmp_path / "out"
    code, _, err = cli("batch", "mel", *options, tmp_path / "data", "--out", out, "--store", kind, "--dtype", "float16")
    assert code == 0, err
    corpus = audiokit.corpus.open(out)
    assert sum(a.size for a in ref.values()) > 90_000
    for item_id, want in ref.items():
        assert_bits_equal(np.asarray(corpus[item_id].array), want.astype(np.float16), item_id)


@pytest.mark.slow
def test_float16_parquet_opens_in_hf_datasets_as_float16_when_asked(ws, tmp_path):
    ref = ws.reference("mel")
    rows = read_hf_parquet(ws.store("mel", "parquet", "--dtype", "float16"), tmp_path / "hf", dtype=np.float16)
    for item_id, want in ref.items():
        assert_bits_equal(rows[item_id]["feats"], want.astype(np.float16), item_id)


def test_kaldi_float16_is_refused_before_anything_is_written(cli, ws, tmp_path):
    out = tmp_path / "k16"
    code, _, err = cli("batch", "mel", ws.root / "mono", "--out", out, "--store", "kaldi", "--dtype", "float16", "-j", 1)
    assert code == 2
    assert err.strip() == "error: --store kaldi: Kaldi matrices have no float16 (use --compress for a smaller ark)"
    assert not out.exists()


# ------------------------------------------------------------------------------------------------- statistics
def _assert_stats(out: Path, arrays: dict[str, np.ndarray]) -> None:
    """``stats.json`` of ``out`` against the float64 statistics of ``arrays`` (the values the store holds)."""
    stats = json.loads((out / "stats.json").read_text())
    count, sums, squares = float64_stats(arrays)
    tol_sum, tol_sq = stats_tolerance(arrays)
    assert stats["count"] == count
    assert np.all(np.abs(np.array(stats["sum"]) - sums) <= tol_sum)
    assert np.all(np.abs(np.array(stats["sum_squares"]) - squares) <= tol_sq)
    # mean = sum / count and std = sqrt(max(sum_squares / count - mean^2, 0)) (stats.json's formula), with the
    # bounds above carried through: |d var| <= (d sumsq + 2 |mean| d sum) / count + the subtraction's rounding, and
    # |sqrt(v + d) - sqrt(v)| <= min(sqrt(d), d / (2 sqrt(v)))
    mean = sums / count
    var = np.maximum(squares / count - mean**2, 0)
    d_var = (tol_sq + 2 * np.abs(mean) * tol_sum) / count + 4 * 2.0**-53 * squares / count
    d_std = np.minimum(np.sqrt(d_var), d_var / (2 * np.sqrt(np.maximum(var, 1e-300))))
    assert np.all(np.abs(np.array(stats["mean"]) - mean) <= tol_sum / count + 2.0**-52 * np.abs(mean))
    assert np.all(np.abs(np.array(stats["std"]) - np.sqrt(var)) <= 2 * d_std)
    assert audiokit.corpus.open(out).stats == stats


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("feature", FEATURES)
def test_stats_json_equals_the_statistics_of_the_arrays(ws, feature, kind):
    _assert_stats(ws.store(feature, kind), ws.reference(feature))


@pytest.mark.parametrize("kind", ["npy", "shards", "parquet"])
@pytest.mark.parametrize("feature", FEATURES)
def test_stats_json_of_a_float16_store_are_those_of_the_stored_values(ws, feature, kind):
    # audiokit/batch/stores/views.py: "stats.json -- the corpus statistics of the stored values"
    stored = {i: a.astype(np.float16) for i, a in ws.reference(feature).items()}
    _assert_stats(ws.store(feature, kind, "--dtype", "float16"), stored)


@pytest.mark.parametrize("kind", STORES)
def test_stats_follow_a_changed_input_and_new_inputs(cli, tmp_path, kind):
    paths = make_corpus(tmp_path / "data")
    out = tmp_path / "out"
    args = ["batch", "mel", tmp_path / "data", "--out", out, "--store", kind, "--shard-size", SHARD_SIZE, "-j", 1]
    assert cli(*args)[0] == 0
    # one input rewritten (other samples, other length), one added: the statistics follow the new arrays
    write_tone_noise(paths["spk2/c"], 0.75, seed=42)
    paths["spk4/f"] = write_tone_noise(tmp_path / "data" / "spk4" / "f.wav", 0.45, seed=43)
    code, _, err = cli(*args)
    assert code == 0, err
    ref = reference_arrays(cli, "mel", [], paths, tmp_path / "ref")
    assert audiokit.corpus.open(out).ids == sorted(ref)
    _assert_stats(out, ref)


# ------------------------------------------------------------------------------------------------- determinism
def _build(cli_args: list, out: Path, *, subprocess_run: bool = False, cwd: Path) -> None:
    if subprocess_run:
        proc = subprocess.run(audiokit_cmd(*cli_args), cwd=cwd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    else:
        assert _call(*cli_args) == 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", STORES)
def test_store_bytes_are_the_same_for_any_jobs_and_process(ws, tmp_path, kind):
    out = tmp_path / "out"
    base = ["batch", "mel", ws.root / "mono", "--out", out, "--store", kind, "--speaker-from", SPEAKER_REGEX, "-q"]
    if kind != "npy":
        base += ["--shard-size", SHARD_SIZE]
    runs = {}
    for name, extra, fresh in (
        ("jobs 1", ["-j", 1], False),
        ("jobs 2", ["-j", 2, "--chunk", 1], False),
        ("fresh", ["-j", 1], True),
    ):
        _build([*base, *extra], out, subprocess_run=fresh, cwd=tmp_path)
        runs[name] = store_bytes(out)
        shutil.move(out, tmp_path / name.replace(" ", ""))  # the next run writes the same --out path
    first = runs["jobs 1"]
    assert "store.json" in first and "index.sqlite" in first and "stats.json" in first
    assert any(name.endswith((".npy", ".tar", ".ark", ".parquet")) for name in first)
    if kind in ("npy", "kaldi"):
        assert "feats.scp" in first
    for name, files in runs.items():
        assert sorted(files) == sorted(first), name
        for file, data in files.items():
            assert data == first[file], f"{name}: {file}"


@pytest.mark.parametrize("kind", ["shards", "kaldi", "parquet"])
def test_shard_size_in_bytes_bounds_every_shard_of_several_members(cli, ws, tmp_path, kind):
    ref = ws.reference("mel")
    limit = 60_000  # bytes of float32 arrays: 80 x 4 x ~187 frames, about 1.9 s of these inputs
    out = tmp_path / "out"
    code, _, err = cli("batch", "mel", ws.root / "mono", "--out", out, "--store", kind, "--shard-size", "60kB", "-j", 1)
    assert code == 0, err
    corpus = audiokit.corpus.open(out)
    by_file: dict[str, list[str]] = {}
    for item_id, entry in corpus.items():
        by_file.setdefault(entry.record["file"], []).append(item_id)
    assert len(by_file) > 1
    ids = sorted(ref)
    position = 0
    for _file, members in sorted(by_file.items()):
        assert members == ids[position : position + len(members)]  # consecutive inputs in id order
        position += len(members)
        assert len(members) == 1 or sum(ref[i].nbytes for i in members) <= limit
    assert position == len(ids)

"""``audiokit batch pitch --store npy|shards|kaldi|parquet``: one ``(n_frames, 3)`` float32 array per utterance.

Reference: the single-file command, ``audiokit pitch FILE --npy X`` with the same options: its rows 1..3
(``f0_hz``, ``voiced_flag``, ``voiced_prob``) transposed and cast to float32 must be the stored array bit for bit,
read back with :func:`audiokit.corpus.open` and by each store's consumer (numpy + the ESPnet views, kaldiio,
webdataset, pyarrow; Hugging Face ``datasets`` in the slow tests), and ``--json``'s report the manifest line's
``result``.  Ground truth besides: harmonic complexes at 150, 220 and 320 Hz (median f0 within 1 %: pYIN's grid is
10 cents, 0.58 %) and a silent input with no voiced frame.  The corpus: 16 kHz, one stereo input (mixed by the mean,
as the single-file command does), one FLOAT input, and one file that is not audio (it fails alone).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import audiokit.corpus
from audiokit.cli.app import main
from audiokit.io.tar_shard import item_id_of
from tests.helpers.stores import (
    STORES,
    assert_bits_equal,
    float64_stats,
    read_hf_parquet,
    read_hf_webdataset,
    read_kaldi,
    read_npy_views,
    read_parquet_pyarrow,
    read_webdataset,
    stats_tolerance,
    store_bytes,
    table,
)

#: webdataset 1.0.2 leaves a local shard's file object open (as in tests/batch/test_stores.py).
WEBDATASET_UNCLOSED = pytest.mark.filterwarnings("ignore:unclosed file <_io.BufferedReader:ResourceWarning")
SR = 16000
#: pitch's default framing at 16 kHz: --win 64ms = 1024 samples, hop a quarter of it.
HOP = 256
#: id -> (f0 Hz or None for silence, seconds, channels, subtype)
INPUTS = {
    "spk1/low": (150.0, 1.0, 1, "PCM_16"),
    "spk1/high": (320.0, 0.7, 2, "PCM_16"),
    "spk2/mid": (220.0, 0.6, 1, "FLOAT"),
    "spk2/silent": (None, 0.5, 1, "PCM_16"),
}
BROKEN = "spk2/broken"
SPEAKERS = r"^(?P<speaker>spk\d)/"


def _harmonic(path: Path, f0: float | None, seconds: float, channels: int, subtype: str) -> Path:
    """A 10-harmonic complex at ``f0`` Hz (amplitudes 1/k, peak 0.3), or silence for ``f0`` None."""
    t = np.arange(round(seconds * SR)) / SR
    x = np.zeros_like(t)
    if f0 is not None:
        x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 11))
        x = 0.3 * x / np.abs(x).max()
    if channels == 2:  # the second channel quieter: the mean of the two is what is analysed
        x = np.stack([x, 0.5 * x], axis=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, x, SR, subtype=subtype)
    return path


def _call(*args) -> int:
    return main([str(a) for a in args])


class Pitch:
    """The corpus, the single-file references and the stores of this module, each made once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.paths = {i: _harmonic(self.data / f"{i}.wav", *spec) for i, spec in INPUTS.items()}
        broken = self.data / f"{BROKEN}.wav"
        broken.write_bytes(b"RIFF, but not a WAV file at all")
        self._refs: dict[tuple[str, ...], dict[str, np.ndarray]] = {}
        self._reports: dict[str, dict] = {}
        self._stores: dict[tuple[str, ...], Path] = {}

    def reference(self, *options: str) -> dict[str, np.ndarray]:
        """The single-file ``--npy`` rows 1..3 of every good input, ``(n_frames, 3)`` float32, C order."""
        if options not in self._refs:
            refs = {}
            for item_id, path in self.paths.items():
                target = self.root / "ref" / "-".join(options or ("default",)) / f"{item_id.replace('/', '_')}.npy"
                target.parent.mkdir(parents=True, exist_ok=True)
                assert _call("pitch", path, *options, "--npy", target) == 0
                rows = np.load(target)
                assert rows.dtype == np.float64 and rows.shape[0] == 4
                refs[item_id] = np.ascontiguousarray(rows[1:4].T.astype(np.float32))
            self._refs[options] = refs
        return self._refs[options]

    def report(self, item_id: str, capsys) -> dict:
        """``audiokit pitch FILE --json`` of one input."""
        if item_id not in self._reports:
            capsys.readouterr()
            assert _call("pitch", self.paths[item_id], "--json") == 0
            self._reports[item_id] = json.loads(capsys.readouterr().out)
        return self._reports[item_id]

    def store(self, kind: str, *options: str) -> Path:
        """``batch pitch DATA --store KIND`` (speakers from the top folder, 2 utterances a shard): exit 3, the
        broken input failed."""
        key = (kind, *options)
        if key not in self._stores:
            out = self.root / "stores" / f"{kind}-{len(self._stores)}"
            shards = ["--shard-size", "2u"] if kind != "npy" else []
            code = _call(
                "batch", "pitch", *options, self.data, "--out", out, "--store", kind, "--speaker-from", SPEAKERS,
                *shards, "-j", "1", "-q",
            )  # fmt: skip
            assert code == 3  # the broken input
            self._stores[key] = out
        return self._stores[key]


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Pitch:
    return Pitch(tmp_path_factory.mktemp("pitch-stores"))


# ------------------------------------------------------------------------------------------------- the arrays
@pytest.mark.parametrize("kind", STORES)
def test_corpus_open_reads_the_single_file_rows_as_float32(ws, kind):
    ref = ws.reference()
    out = ws.store(kind)
    corpus = audiokit.corpus.open(out)
    assert corpus.kind == kind and corpus.ids == sorted(ref)
    assert list(corpus.failed) == [BROKEN]
    assert corpus.failed[BROKEN]["error"].startswith(f"{ws.data / BROKEN}.wav: unreadable or corrupt audio file")
    for item_id, want in ref.items():
        entry = corpus[item_id]
        assert_bits_equal(np.asarray(entry.array), want, item_id)
        assert entry.speaker == item_id.split("/")[0]
        assert entry.metadata["n_feats"] == 3 and entry.metadata["n_frames"] == want.shape[0]
        # centred frames: 1 + n_samples // hop of them
        assert want.shape[0] == 1 + round(INPUTS[item_id][1] * SR) // HOP
    description = json.loads((out / "store.json").read_text())
    assert (description["n_feats"], description["hop_length"], description["frame_shift"]) == (3, HOP, HOP / SR)
    plan = description["plan"]
    assert plan["columns"] == ["f0_hz", "voiced_flag", "voiced_prob"] and plan["layout"] == "(n_frames, n_feats)"
    assert plan["dtype"] == "float32" and plan["method"] == "pyin" and plan["frame_length"] == 1024
    assert plan["frame_time_s"]["step"] == HOP / SR and "path" not in plan and "rows" not in plan


def test_the_arrays_hold_the_known_f0_and_silence_unvoiced(ws):
    corpus = audiokit.corpus.open(ws.store("npy"))
    for item_id, (f0, *_) in INPUTS.items():
        array = np.asarray(corpus[item_id].array)
        hz, flag, prob = array.T
        assert set(np.unique(flag)) <= {0.0, 1.0} and np.all((prob >= 0) & (prob <= 1))
        assert np.all(hz[flag == 0] == 0)  # unvoiced frames hold 0 Hz, never NaN
        if f0 is None:
            assert not flag.any() and not hz.any()
        else:
            assert flag.mean() > 0.9 and np.median(hz[flag == 1]) == pytest.approx(f0, rel=0.01)


def test_yin_stores_the_single_file_yin_rows(ws):
    options = ("--method", "yin", "--fmin", "100Hz", "--fmax", "1kHz")
    ref = ws.reference(*options)
    out = ws.store("shards", *options)
    corpus = audiokit.corpus.open(out)
    for item_id, want in ref.items():
        assert_bits_equal(np.asarray(corpus[item_id].array), want, item_id)
    with gzip.open(out / "shar" / "cuts.000000.jsonl.gz", "rt", encoding="utf-8") as fh:
        assert json.loads(fh.readline())["features"]["type"] == "audiokit-pitch-yin"
    assert json.loads((out / "store.json").read_text())["plan"]["method"] == "yin"


# ------------------------------------------------------------------------------------------------- the consumers
def test_npy_store_through_numpy_and_the_espnet_views(ws):
    ref = ws.reference()
    arrays = read_npy_views(ws.store("npy"))
    assert sorted(arrays) == sorted(ref)
    for item_id, array in arrays.items():
        assert_bits_equal(array, ref[item_id], item_id)


def test_kaldi_store_through_kaldiio(ws):
    ref = ws.reference()
    out = ws.store("kaldi")
    arrays = read_kaldi(out)
    assert sorted(arrays) == sorted(ref)
    for item_id, array in arrays.items():
        assert_bits_equal(array, ref[item_id], item_id)
    assert float((out / "frame_shift").read_text()) == HOP / SR
    assert {item_id_of(k): int(v) for k, v in table(out / "utt2num_frames").items()} == {i: a.shape[0] for i, a in ref.items()}


@WEBDATASET_UNCLOSED
def test_shards_store_through_webdataset(ws):
    ref = ws.reference()
    arrays, records = read_webdataset(ws.store("shards"))
    assert list(arrays) == sorted(ref)
    for item_id, array in arrays.items():
        assert_bits_equal(array, ref[item_id], item_id)
        record = records[item_id]  # Lhotse's Features placeholder beside each array
        assert (record["num_frames"], record["num_features"]) == array.shape
        assert record["frame_shift"] == HOP / SR and record["type"] == "audiokit-pitch-pyin"


def test_parquet_store_through_pyarrow(ws):
    ref = ws.reference()
    rows = read_parquet_pyarrow(ws.store("parquet"))
    assert sorted(rows) == sorted(ref)
    for item_id, row in rows.items():
        assert_bits_equal(np.array(row["feats"], dtype=np.float32), ref[item_id], item_id)
        assert (row["n_frames"], row["sr"], row["speaker"]) == (ref[item_id].shape[0], SR, item_id.split("/")[0])


@pytest.mark.slow
@WEBDATASET_UNCLOSED
def test_shards_and_parquet_through_hf_datasets(ws, tmp_path):
    ref = ws.reference()
    shards = read_hf_webdataset(ws.store("shards"), tmp_path / "hf-wds")
    rows = read_hf_parquet(ws.store("parquet"), tmp_path / "hf-parquet")
    assert sorted(shards) == sorted(rows) == sorted(ref)
    for item_id, want in ref.items():
        assert_bits_equal(shards[item_id], want, item_id)
        assert_bits_equal(rows[item_id]["feats"], want, item_id)


@pytest.mark.parametrize("kind", ["npy", "shards"])
def test_lhotse_manifests_say_frame_shift_hop_over_sr(ws, kind):
    out = ws.store(kind)
    ref = ws.reference()
    files = [out / "cuts.jsonl.gz"] if kind == "npy" else sorted((out / "shar").glob("cuts.*.jsonl.gz"))
    cuts = [json.loads(line) for f in files for line in gzip.open(f, "rt", encoding="utf-8")]
    assert sorted(item_id_of(c["id"]) for c in cuts) == sorted(ref)
    for cut in cuts:
        features = cut["features"]
        assert features["frame_shift"] == HOP / SR == 0.016
        assert features["type"] == "audiokit-pitch-pyin" and features["num_features"] == 3
        assert features["num_frames"] == ref[item_id_of(cut["id"])].shape[0]
        assert cut["type"] == "MultiCut"  # the channels are mixed (the stereo input's cut spans both)
        assert features["channels"] == list(range(INPUTS[item_id_of(cut["id"])][2]))


# ------------------------------------------------------------------------------------------------- statistics, report
@pytest.mark.parametrize("kind", STORES)
def test_stats_are_those_of_the_stored_columns(ws, kind):
    ref = ws.reference()
    out = ws.store(kind)
    stats = json.loads((out / "stats.json").read_text())
    count, sums, squares = float64_stats(ref)
    tol_sum, tol_sq = stats_tolerance(ref)  # two float64 summation orders (tests/helpers/stores.py)
    assert stats["count"] == count and len(stats["sum"]) == 3
    assert np.all(np.abs(np.array(stats["sum"]) - sums) <= tol_sum)
    assert np.all(np.abs(np.array(stats["sum_squares"]) - squares) <= tol_sq)
    assert audiokit.corpus.open(out).stats == stats
    assert json.loads((out / "store.json").read_text())["frames"] == count


def test_the_report_is_the_manifest_lines_result(ws, capsys):
    out = ws.store("parquet")
    lines = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    by_id = {line["id"]: line for line in lines}
    assert sorted(by_id) == sorted([*INPUTS, BROKEN])
    assert by_id[BROKEN]["status"] == "failed" and by_id[BROKEN]["result"] is None
    for item_id in INPUTS:
        want = {k: v for k, v in ws.report(item_id, capsys).items() if k != "path"}
        got = {k: v for k, v in by_id[item_id]["result"].items() if k != "path"}
        assert got == want, item_id
    assert not (out / "results.jsonl").exists()


def test_png_with_a_store_is_refused_before_anything_is_written(ws, tmp_path, capsys):
    out = tmp_path / "out"
    assert _call("batch", "pitch", ws.data, "--out", out, "--store", "shards", "--png") == 2
    assert capsys.readouterr().err.strip() == "error: --png draws the single-file outputs: give --store files with it"
    assert not out.exists()


def test_options_that_do_not_fit_the_stores_rate_are_refused_before_any_work(ws, tmp_path, capsys):
    out = tmp_path / "out"
    assert _call("batch", "pitch", ws.data, "--out", out, "--store", "npy", "--fmax", "9kHz", "-q") == 2
    assert "--fmax: 9000 Hz is above the Nyquist frequency" in capsys.readouterr().err
    assert not any(out.rglob("*.npy"))


def test_a_framing_warning_is_each_inputs_not_a_bare_warning_of_the_client(ws, tmp_path, capsys):
    # --fmin 50Hz in a 40 ms frame: fewer than two periods fit (librosa's warning): every input records it once, the
    # client (which makes the store's geometry from the same options) prints no warning of its own
    out = tmp_path / "out"
    assert _call("batch", "pitch", ws.data, "--out", out, "--store", "npy", "--fmin", "50Hz", "--win", "40ms", "-j", 1) == 3
    err = capsys.readouterr().err
    assert err.count("warning: ") == len(INPUTS) and "fewer than two periods of fmin" in err and "Warning:" not in err
    lines = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert all(len(line["warnings"]) == 1 for line in lines if line["status"] == "ok")


# ------------------------------------------------------------------------------------------------- resume, determinism
@pytest.mark.parametrize("kind", ["npy", "kaldi"])
def test_a_second_run_computes_nothing(ws, tmp_path, kind, capsys):
    # the npy store retries the failed input (it fails again); a sharded store does not retry an input that failed
    # inside a done shard (audiokit/batch/stores/plan.py): it is skipped with the rest
    out = tmp_path / "out"
    args = ["batch", "pitch", ws.data, "--out", out, "--store", kind, "-j", "1", "-q", "--json"]
    assert _call(*args) == 3
    first = store_bytes(out)
    capsys.readouterr()
    retried = kind == "npy"
    assert _call(*args) == (3 if retried else 0)
    summary = json.loads(capsys.readouterr().out)
    assert (summary["ok"], summary["failed"]) == (0, int(retried))
    assert summary["skipped"] == len(INPUTS) + (0 if retried else 1)
    assert store_bytes(out) == first


@pytest.mark.slow
@pytest.mark.parametrize("kind", STORES)
def test_jobs_2_writes_the_bytes_of_jobs_1(ws, tmp_path, kind):
    out = tmp_path / "out"
    base = ["batch", "pitch", ws.data, "--out", out, "--store", kind, "--speaker-from", SPEAKERS, "-q"]
    if kind != "npy":
        base += ["--shard-size", "2u"]
    runs = {}
    for name, extra in (("jobs1", ["-j", "1"]), ("jobs2", ["-j", "2", "--chunk", "1"])):
        assert _call(*base, *extra) == 3
        runs[name] = store_bytes(out)
        shutil.move(out, tmp_path / name)  # the next run writes the same --out path (the views hold it)
    assert any(name.endswith((".npy", ".tar", ".ark", ".parquet")) for name in runs["jobs1"])
    assert sorted(runs["jobs2"]) == sorted(runs["jobs1"])
    for file, data in runs["jobs1"].items():
        assert runs["jobs2"][file] == data, file


# ------------------------------------------------------------------------------------------------- the registry hook
def test_member_geometry_of_pitch_and_a_spec_without_one():
    from audiokit.pipelines import registry
    from audiokit.pipelines.pitch import PitchOptions

    spec = registry.spec("pitch")
    assert spec.member_geometry is not None
    options = PitchOptions(method="yin", win="64ms", hop="10ms")
    geometry = spec.member_geometry(options, 22050)
    # 10 ms at 22.05 kHz is 220.5 samples: the single-file command's hop, whatever the rounding (audiokit.units)
    hop = options.model(22050).geometry.hop_length
    assert hop in (220, 221) and (geometry.n_feats, geometry.hop_length, geometry.sr) == (3, hop, 22050)
    assert geometry.frame_shift == hop / 22050
    assert (geometry.feature_type, geometry.channel) == ("audiokit-pitch-yin", "mix")
    with pytest.raises(TypeError, match="run_member and member_geometry go together"):
        registry.JobSpec(
            name="x", options=PitchOptions, check=spec.check, outputs=spec.outputs, run=spec.run, run_member=spec.run_member
        )

"""Lhotse's ``Fbank``/``Mfcc`` reference arrays for ``--compat lhotse`` (tests/data/lhotse/), and checks that audiokit's
features and corpus stores open in Lhotse with no glue.

Lhotse needs torch, which is not a test dependency: run this in a separate virtual environment, not audiokit's.
audiokit is *not* installed there: the script runs audiokit's own CLI (``--audiokit``, default ``$AUDIOKIT`` or
``audiokit`` on PATH; a command line, e.g. ``"/work/venv/bin/python -m audiokit"``) as a subprocess and reads what
it writes with numpy, tarfile, sqlite3 and Lhotse only, so nothing of audiokit is imported on the Lhotse side::

    python3 -m venv /tmp/lhotse-venv
    /tmp/lhotse-venv/bin/pip install torch==2.13.0  # the CPU wheel (+cpu), where an index or wheel folder has it
    /tmp/lhotse-venv/bin/pip install lhotse lilcom soundfile urllib3 scipy "smart_open[s3]" boto3
    /tmp/lhotse-venv/bin/python benchmarks/interop_lhotse.py                       # write tests/data/lhotse/
    /tmp/lhotse-venv/bin/python benchmarks/interop_lhotse.py --check \\
        --audiokit /work/venv/bin/audiokit                                         # single files vs Lhotse
    /tmp/lhotse-venv/bin/python benchmarks/interop_lhotse.py --stores \\
        --audiokit /work/venv/bin/audiokit                                         # corpus stores in Lhotse (~1 min)
    /tmp/lhotse-venv/bin/python benchmarks/interop_lhotse.py --stores --s3 \\
        --moto-server /work/venv/bin/moto_server --audiokit /work/venv/bin/audiokit  # + stores in a bucket (~3 min)

Lhotse 1.33 imports ``urllib3`` without declaring it: ``pip install urllib3`` too if ``import lhotse`` says so
(scipy: Lhotse's ``Resample`` of a recording read at another rate; lilcom: its ``LilcomChunkyWriter``, no longer a
dependency of lhotse 1.33, without which ``--stores`` stops at Lhotse's own lilcom store; ``smart_open[s3]`` and
boto3: ``--s3``, Lhotse opens ``s3://`` URLs through smart_open).

Reference arrays and ``--check``
--------------------------------
Inputs (16-bit PCM, so both sides read the same int16 codes; ``soundfile.read(..., dtype="float32")`` = code/32768):

* ``speech``: the first 48100 samples (3.006 s) of ``examples/data/speech.wav`` (16 kHz), written by the test
  itself from the example (not stored here);
* ``noise16k.wav``: 32037 samples at 16 kHz: ``numpy.random.default_rng(19)`` Gaussian noise at 0.05 RMS plus a
  0.4-amplitude 440 Hz tone and a 0.1 DC offset for the first half (so DC removal matters);
* ``noise22k.wav``: 44250 samples at 22.05 kHz: the same recipe, seed 20, a 1234.5 Hz tone;
* ``noise8k.wav``: 8050 samples at 8 kHz: seed 21, a 300 Hz tone, the second half 60 dB quieter (floored cells).

Outputs, float32, Lhotse's ``(n_frames, n_feats)`` layout: ``fbank_<name>.npy`` =
``Fbank(FbankConfig(sampling_rate=sr)).extract(x, sr)`` (80 bins) and ``mfcc_<name>.npy`` =
``Mfcc(MfccConfig(sampling_rate=sr)).extract(x, sr)`` (13 coefficients), every other option at Lhotse's default;
``versions.txt`` names the lhotse, torch and numpy versions.

``--check`` also runs ``audiokit mel|mfcc --compat lhotse --npy`` on each input, prints the worst difference from
Lhotse's own features, stores audiokit's (transposed) array through Lhotse's ``NumpyFilesWriter`` into a
``MonoCut`` whose ``Features`` declare audiokit's frame count, and runs ``lhotse.qa.validate(cut, read_data=True)``
(frame count = ``compute_num_frames(duration, frame_shift, sr)``, the array read back has that many frames).  The
cut declares ``frame_shift`` = the hop audiokit used / sr (220/22050 s at 22.05 kHz: ``lhotse.qa`` refuses 0.01 s
there, a fractional 220.5-sample hop, though Lhotse's own ``Fbank`` frames with ``floor(0.01*sr)``).

``--stores``: ``audiokit batch`` stores read by Lhotse
------------------------------------------------------
A corpus in a temporary folder (``make_corpus``): 20 utterances of 2-6 s at 16 kHz (``default_rng(19)``: an
excerpt of ``examples/data/speech.wav`` from a random offset, wrapped around, at a random gain of -30..-6 dB, plus
white noise at -66 dBFS RMS; int16), ``spkA/`` and ``spkB/`` alternately, the first 10 WAV and the last 10 FLAC,
``utt07`` named ``utt.07`` (an id with a ``.``, so its key is ``utt%2E07``); and ``mixed/``: two of them again
plus ``spkC/tel.8k.wav``, 3.3 s of the speech at 8 kHz (``scipy.signal.resample_poly(x, 1, 2)``).

Runs, all ``audiokit batch mel DIR --compat lhotse --speaker-from parent --jobs 1``:
``--store shards --shard-size 8u`` (3 shards: 8 + 8 + 4), ``--store npy``, both again with ``--dtype float16``,
and on ``mixed/``: without ``--sr`` (must refuse the 8 kHz file, exit 3) and with ``--sr 16k --store shards``;
plus ``audiokit mel FILE --compat lhotse --npy`` per utterance.  Each store is opened as a trainer would, with
``CutSet.from_shar(in_dir=OUT/shar)`` / ``CutSet.from_jsonl_lazy(OUT/cuts.jsonl.gz)`` (``CutSet.from_file`` reads
the same file eagerly), and:

* ``lhotse.qa.validate(cuts, read_data=True)``;
* ``cut.load_features()`` bit-equal (values and dtype) to the array in the store, read without Lhotse (``np.load``
  of ``OUT/feats/<hh>/<name>.npy``; the ``<key>.npy`` member of the tar; and the raw bytes at ``index.sqlite``'s
  ``(file, offset, nbytes)``), and, for float32, to the single-file ``.npy`` transposed; a float16 store equal to
  the float32 store cast (``.astype(np.float16)``: one rounding of the values the single-file command gives);
* Lhotse's own ``cut.compute_features(Fbank())`` on the same audio: max and median ``|difference|`` in nats, and
  every cell within the bound ``tests/cli/test_lhotse.py`` asserts for single files (``2 ulp + 64 eps sqrt(S/m)``:
  Lhotse computes in float32; float16 stores: ``+ 2^-11 |value|``).  After ``--sr 16k`` the 8 kHz file is compared
  with ``Fbank().extract`` of ``audiokit resample --to 16k --subtype FLOAT`` (the soxr resampling ``--sr`` does),
  and, for information, with Lhotse's own resampling of the recording (its ``Resample`` transform), below and
  above 3.6 kHz (soxr's passband edge: the two filters' transition bands differ);
* ``cut.load_audio()`` equal to ``soundfile.read`` of the source; ``cut.supervisions[0].speaker`` the folder name;
  ``custom["audiokit_id"]`` the id (the cut id is the key, without ``.``); ``cut.num_frames`` Lhotse's
  ``compute_num_frames``;
* ``collate_features`` of all cuts (rows equal to ``load_features``, padding ``LOG_EPSILON``); one epoch of
  ``SimpleCutSampler(max_duration=20)`` and ``DynamicBucketingSampler(max_duration=20, num_buckets=2)`` on the lazy
  CutSet (each cut exactly once, every batch collated); ``K2SpeechRecognitionDataset(return_cuts=True)`` on a
  sampled batch (with a transcript attached to each supervision: a feature store knows none).

Then Lhotse's own ``CutSet.compute_and_store_features(Fbank(), storage_type=NumpyFilesWriter | LilcomChunkyWriter)``
on the same 20 recordings, and a table: files per utterance (every file in the output folder / utterances; for
Lhotse its storage plus the ``cuts.jsonl.gz`` it is saved to), bytes per element (bytes of the array files / stored
elements; and of every file) and lilcom's error.

Stores in a framing of their own (no ``--compat lhotse``): ``batch mel`` at its defaults (not centred, 25 ms /
10 ms: ``1 + (n - 400) // 160`` frames, always 2 fewer than Lhotse's ``(n + 80) // 160``) and ``batch pitch``
(pYIN, centred, hop 256: ``1 + n // 256``, one more than ``(n + 128) // 256`` when ``n % 256 < 128``), npy and
shards: opened as above; checks: the declared frame count against ``compute_num_frames(duration, frame_shift,
sr)``, ``qa.validate``, ``load_features`` bit-equal to the stored array, ``collate_features`` rows equal to it.
These fail today (the cuts declare the stored count beside the audio's duration, which Lhotse's rule contradicts:
Lhotse refuses the cut, trims or repeats one row in ``load_features`` and cannot collate a two-row gap); they are
in the table so that the exit status says so until the views handle other framings.

``--s3`` (with ``--stores``): stores in object storage.  ``--moto-server`` (a command; audiokit's test extra has it)
is started on a free port of 127.0.0.1 and stopped at the end; ``AWS_ENDPOINT_URL`` and fake keys point boto3,
smart_open and audiokit at it.  The corpus is uploaded to ``s3://audio/corpus/`` and ``audiokit batch mel
s3://audio/corpus/ --out s3://feats/npy --store npy`` and ``... --out s3://feats/shards --store shards --shard-size
8u`` (same options) run; Lhotse opens each from the bucket, ``CutSet.from_jsonl_lazy("s3://feats/npy/cuts.jsonl.gz")``
and ``CutSet.from_shar(fields={"cuts": [...], "features": [...]})`` with the shards' URLs (``in_dir`` takes a local
folder only), and every check above runs on them: ``load_features`` bit-equal to the objects (boto3 + ``np.load`` /
tarfile) and to the local store; ``load_audio`` (the Recording is an ``AudioSource`` of type ``url``, read with
smart_open) equal to ``soundfile.read`` of the uploaded file; plus the sources' type and the npy features'
``storage_path`` (the store's URL).  Last, the table of every check (PASS/FAIL with its figure); exit
status 1 if any failed.  To test a commit rather than an editable checkout others are editing, point ``--audiokit``
at a launcher that imports ``git archive`` of it (``PYTHONPATH`` alone does not: an editable install's finder on
``sys.meta_path`` comes first; the launcher removes it, puts the archive first on ``sys.path`` and runs
``runpy.run_module("audiokit", run_name="__main__")``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "lhotse"
SPEECH = ROOT / "examples" / "data" / "speech.wav"
SPEECH_SAMPLES = 48100  # 3.006 s: 48100 % 160 = 100 >= 80, so Lhotse's rule rounds the last frame up


def _noise_tone(seed: int, sr: int, n: int, tone_hz: float, *, dc: bool = False, quiet_tail: bool = False) -> np.ndarray:
    """The seeded noise + tone recipe of the module docstring, as int16 codes."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / sr
    x = 0.05 * rng.standard_normal(n) + 0.4 * np.sin(2 * np.pi * tone_hz * t)
    if dc:
        x[: n // 2] += 0.1
    if quiet_tail:
        x[n // 2 :] *= 1e-3
    return np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)


def write_inputs() -> dict[str, Path]:
    """The three generated WAVs (written once into tests/data/lhotse/) and the speech crop (in a temporary file)."""
    OUT.mkdir(parents=True, exist_ok=True)
    signals = {
        "noise16k": (16000, _noise_tone(19, 16000, 32037, 440.0, dc=True)),
        "noise22k": (22050, _noise_tone(20, 22050, 44250, 1234.5, dc=True)),
        "noise8k": (8000, _noise_tone(21, 8000, 8050, 300.0, quiet_tail=True)),
    }
    paths = {}
    for name, (sr, codes) in signals.items():
        paths[name] = OUT / f"{name}.wav"
        sf.write(paths[name], codes, sr, subtype="PCM_16")
    speech, sr = sf.read(SPEECH, dtype="int16")
    paths["speech"] = Path(tempfile.mkdtemp()) / "speech.wav"
    sf.write(paths["speech"], speech[:SPEECH_SAMPLES], sr, subtype="PCM_16")
    return paths


def lhotse_features(path: Path) -> dict[str, np.ndarray]:
    """``{"fbank": (n_frames, 80), "mfcc": (n_frames, 13)}``: Lhotse's extractors with their defaults at the file's rate."""
    from lhotse import Fbank, FbankConfig, Mfcc, MfccConfig

    x, sr = sf.read(path, dtype="float32")
    return {
        "fbank": np.asarray(Fbank(FbankConfig(sampling_rate=sr)).extract(x, sr), dtype=np.float32),
        "mfcc": np.asarray(Mfcc(MfccConfig(sampling_rate=sr)).extract(x, sr), dtype=np.float32),
    }


def make_reference() -> None:
    import lhotse
    import torch

    for name, path in write_inputs().items():
        for kind, feats in lhotse_features(path).items():
            np.save(OUT / f"{kind}_{name}.npy", feats)
            print(f"{kind}_{name}.npy {feats.shape}")
    versions = f"lhotse {lhotse.__version__}\ntorch {torch.__version__}\nnumpy {np.__version__}\n"
    (OUT / "versions.txt").write_text(versions)
    print(versions, end="")


def check(audiokit: list[str]) -> int:
    """Compare ``audiokit mel|mfcc --compat lhotse`` with Lhotse and validate a cut holding audiokit's features."""
    from lhotse import Fbank, FbankConfig, Features, MonoCut, NumpyFilesWriter, Recording
    from lhotse.qa import validate
    from lhotse.utils import compute_num_frames

    worst = 0
    paths = write_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in paths.items():
            ref = lhotse_features(path)
            rec = Recording.from_file(path, recording_id=name)
            for kind, command in (("fbank", "mel"), ("mfcc", "mfcc")):
                npy = Path(tmp) / f"{kind}_{name}.npy"
                subprocess.run([*audiokit, command, str(path), "--compat", "lhotse", "--npy", str(npy)], check=True)
                ours = np.load(npy).T  # audiokit (rows, frames) -> Lhotse (frames, rows)
                # the hop audiokit used (sidecar): 0.01 s is 220.5 samples at 22.05 kHz, which lhotse.qa refuses
                frame_shift = json.loads(npy.with_suffix(".json").read_text())["hop_length"] / rec.sampling_rate
                rule = compute_num_frames(rec.duration, frame_shift, rec.sampling_rate)
                diff = float(np.max(np.abs(ours - ref[kind]))) if ours.shape == ref[kind].shape else float("inf")
                print(f"{kind:5s} {name:8s} ours {ours.shape} lhotse {ref[kind].shape} rule {rule} max|diff| {diff:.3g}")
                worst += ours.shape[0] != rule or ours.shape != ref[kind].shape
                if kind != "fbank":
                    continue
                with NumpyFilesWriter(Path(tmp) / "store") as writer:
                    key = writer.write(name, ours)
                features = Features(
                    type=Fbank.name,
                    num_frames=ours.shape[0],
                    num_features=ours.shape[1],
                    frame_shift=frame_shift,
                    sampling_rate=rec.sampling_rate,
                    start=0.0,
                    duration=rec.duration,
                    storage_type=NumpyFilesWriter.name,
                    storage_path=str(Path(tmp) / "store"),
                    storage_key=key,
                    recording_id=name,
                    channels=0,
                )
                cut = MonoCut(name, 0.0, rec.duration, 0, recording=rec, features=features)
                validate(cut, read_data=True)
                assert np.array_equal(cut.load_features(), ours)
                assert FbankConfig().snip_edges is False
                print(f"      {name:8s} lhotse.qa.validate(cut, read_data=True): ok")
    return int(worst > 0)


# ---- --stores: audiokit batch stores, opened by Lhotse ---------------------------------------------------------

SPEAKERS = ("spkA", "spkB")
N_UTTERANCES = 20
EPS32 = 2.0**-23
BOUND_K = 64  # the per-cell bound of tests/cli/test_lhotse.py
FLOAT16_REL = 2.0**-11  # --dtype float16: round to nearest, relative error <= 2^-11


@dataclass(frozen=True)
class Utterance:
    """One input of the generated corpus: its batch id, file, folder (speaker) and rate."""

    id: str
    path: Path
    speaker: str
    sr: int


def _speech_excerpt(speech: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` samples of the speech from a random offset (wrapped around), peak normalised, at -30..-6 dB."""
    x = np.resize(np.roll(speech, -int(rng.integers(0, speech.size))), n) / np.abs(speech).max()
    return x * 10 ** (rng.uniform(-30.0, -6.0) / 20)


def _pcm16(x: np.ndarray) -> np.ndarray:
    return np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)


def make_corpus(root: Path) -> tuple[dict[str, Utterance], dict[str, Utterance]]:
    """Write the corpus of the module docstring under ``root``: ``(corpus/ by id, mixed/ by id)``."""
    import shutil

    from scipy.signal import resample_poly

    speech, sr = sf.read(SPEECH, dtype="float64")
    rng = np.random.default_rng(19)
    corpus: dict[str, Utterance] = {}
    for i in range(N_UTTERANCES):
        speaker = SPEAKERS[i % 2]
        name = "utt.07" if i == 7 else f"utt{i:02d}"
        n = int(rng.integers(2 * sr, 6 * sr + 1))
        x = _speech_excerpt(speech, rng, n) + 10 ** (-66 / 20) * rng.standard_normal(n)
        path = root / "corpus" / speaker / f"{name}.{'wav' if i < N_UTTERANCES // 2 else 'flac'}"
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(path, _pcm16(x), sr, subtype="PCM_16")
        corpus[f"{speaker}/{name}"] = Utterance(f"{speaker}/{name}", path, speaker, sr)
    mixed: dict[str, Utterance] = {}
    for uid in ("spkA/utt00", "spkB/utt11"):
        path = root / "mixed" / corpus[uid].path.relative_to(root / "corpus")
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus[uid].path, path)
        mixed[uid] = Utterance(uid, path, corpus[uid].speaker, sr)
    path = root / "mixed" / "spkC" / "tel.8k.wav"
    path.parent.mkdir(parents=True)
    sf.write(path, _pcm16(resample_poly(speech[: round(3.3 * sr)], 1, 2) / np.abs(speech).max() / 4), 8000, subtype="PCM_16")
    mixed["spkC/tel.8k"] = Utterance("spkC/tel.8k", path, "spkC", 8000)
    return corpus, mixed


def _run(audiokit: list[str], *args: object, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """Run one audiokit command; RuntimeError (with its stderr) unless it exits with ``expect``."""
    done = subprocess.run([*audiokit, *map(str, args)], capture_output=True, text=True)
    if done.returncode != expect:
        raise RuntimeError(f"{' '.join(map(str, args))}: exit {done.returncode}, expected {expect}: {done.stderr.strip()}")
    return done


def npy_store_arrays(out: Path) -> dict[str, np.ndarray]:
    """``key -> array`` of an npy store, by walking ``OUT/feats/<hh>/<name>.npy`` (no index, no Lhotse): ``name`` is
    the key with ``%`` and ``/`` percent-encoded (``audiokit.batch.stores.layout.member_path``)."""
    feats = out / "feats"
    return {_unescape(p.name[: -len(".npy")]): np.load(p) for p in sorted(feats.glob("*/*.npy"))}


def _unescape(name: str) -> str:
    return re.sub(r"%(25|2F)", lambda m: {"25": "%", "2F": "/"}[m.group(1)], name)


def shar_store_arrays(out: Path) -> tuple[dict[str, np.ndarray], list[list[str]]]:
    """``key -> array`` of the ``<key>.npy`` members of ``OUT/shar/features.*.tar`` (tarfile, np.load) and the
    member names of each shard."""
    arrays: dict[str, np.ndarray] = {}
    names: list[list[str]] = []
    for tar_path in sorted((out / "shar").glob("features.*.tar")):
        with tarfile.open(tar_path) as tar:
            names.append(tar.getnames())
            for member in tar:
                data = tar.extractfile(member)
                if member.name.endswith(".npy") and data is not None:
                    arrays[member.name[: -len(".npy")]] = np.load(io.BytesIO(data.read()))
    return arrays, names


def index_arrays(out: Path) -> dict[str, np.ndarray]:
    """``key -> array`` read where ``OUT/index.sqlite`` says: the raw bytes at (file, offset, nbytes) of a shard, or the
    ``.npy`` file it names."""
    import sqlite3

    dtype = json.loads((out / "store.json").read_text())["dtype"]
    con = sqlite3.connect(f"file:{out / 'index.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT key, file, offset, nbytes, n_frames, n_feats FROM utterances").fetchall()
    finally:
        con.close()
    arrays = {}
    for key, file, offset, nbytes, n_frames, n_feats in rows:
        if offset is None:
            arrays[key] = np.load(out / file)
        else:
            assert nbytes == n_frames * n_feats * np.dtype(dtype).itemsize, (key, nbytes)
            arrays[key] = np.fromfile(out / file, dtype=dtype, count=n_frames * n_feats, offset=offset).reshape(n_frames, n_feats)
    return arrays


def log_mel_bound(reference: np.ndarray, *, float16: bool = False) -> np.ndarray:
    """Per-cell bound on ``|ours - Lhotse|`` of log band energies: ``2 ulp + 64 eps sqrt(S/m)`` (tests/cli/
    test_lhotse.py), plus ``2^-11 |value|`` for a float16 store."""
    ref = reference.astype(np.float64)
    m = np.exp(ref)
    bound = 2 * np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    bound += BOUND_K * EPS32 * np.sqrt(m.sum(axis=1, keepdims=True) / m)
    return bound + FLOAT16_REL * np.abs(ref) * 1.001 if float16 else bound


class Checks:
    """The PASS/FAIL table: one row per check, its figure; an exception inside a check is its FAIL."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, bool, str]] = []

    def run(self, store: str, what: str, check: Callable[[], tuple[bool, str]]) -> None:
        try:
            ok, figure = check()
        except Exception as exc:  # noqa: BLE001 - the table shows what failed and why
            ok, figure = False, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:160]
        self.rows.append((store, what, ok, figure))
        print(f"  {'PASS' if ok else 'FAIL'}  {store}: {what}: {figure}", flush=True)

    @property
    def failed(self) -> int:
        return sum(not ok for *_, ok, _ in self.rows)

    def table(self) -> str:
        header = ("store / run", "check", "result", "figure")
        body = [(s, w, "PASS" if ok else "FAIL", f) for s, w, ok, f in self.rows]
        return _markdown([header, *body])


def _markdown(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


@dataclass
class Store:
    """One batch run's output as read here: its cuts (eager, and a lazy opener), the arrays by key from each reader."""

    name: str
    out: Path
    lazy: Callable[[], Any]  # opens the store's CutSet lazily (from_shar / from_jsonl_lazy), as a trainer would
    arrays: dict[str, np.ndarray]
    utterances: dict[str, Utterance]
    dtype: str
    also: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # other arrays the cuts must equal, by key
    fbank_of: Callable[[Any], np.ndarray] | None = None  # Lhotse's Fbank of a cut's audio (default compute_features)
    audio_of: Callable[[Any], np.ndarray | None] | None = None  # the samples load_audio must give (None: not checked)
    cuts: Any = field(init=False)  # lazy().to_eager()

    def __post_init__(self) -> None:
        self.cuts = self.lazy().to_eager()


def _source_audio(store: Store, cut: Any) -> np.ndarray | None:
    x, sr = sf.read(store.utterances[cut.custom["audiokit_id"]].path, dtype="float32", always_2d=True)
    return x.T if sr == cut.sampling_rate else None


def check_store(checks: Checks, store: Store) -> None:
    """Every check of the module docstring on one store's CutSet."""
    from lhotse import Fbank
    from lhotse.dataset import DynamicBucketingSampler, K2SpeechRecognitionDataset, SimpleCutSampler
    from lhotse.dataset.collation import collate_features
    from lhotse.qa import validate
    from lhotse.utils import LOG_EPSILON, compute_num_frames

    cuts, name = store.cuts, store.name
    by_key = {cut.id: cut for cut in cuts}

    def opened() -> tuple[bool, str]:
        ids = sorted(cut.custom["audiokit_id"] for cut in cuts)
        return ids == sorted(store.utterances) and sorted(by_key) == sorted(store.arrays), f"{len(cuts)} cuts, ids = inputs"

    def validated() -> tuple[bool, str]:
        validate(cuts, read_data=True)
        return True, f"lhotse.qa.validate(cuts, read_data=True) on {len(cuts)} cuts"

    def features_equal() -> tuple[bool, str]:
        readers = {"store": store.arrays, **store.also}
        compared, differ = [], []
        for label, arrays in readers.items():
            held = [cut for cut in cuts if cut.id in arrays]  # a reference may hold some of the cuts only
            compared.append(label if len(held) == len(cuts) else f"{label} ({len(held)} of them)")
            mismatch = _mismatch([(cut.load_features(), arrays[cut.id]) for cut in held], store.dtype)
            if mismatch:
                differ.append(f"{label}: {mismatch}")
        full = all(cut.id in store.arrays for cut in cuts)
        figure = f"{len(cuts)} x load_features() == {' == '.join(compared)} (bit-equal, {store.dtype})"
        return full and not differ, figure + "".join(f"; NOT {d}" for d in differ)

    def lhotse_fbank() -> tuple[bool, str]:
        worst, medians, over, cells = 0.0, [], 0, 0
        for cut in cuts:
            ref = store.fbank_of(cut) if store.fbank_of else cut.compute_features(Fbank())
            ours = cut.load_features().astype(np.float64)
            if ours.shape != ref.shape:
                return False, f"{cut.id}: shape {ours.shape} vs Fbank {ref.shape}"
            diff = np.abs(ours - ref)
            worst, cells = max(worst, float(diff.max())), cells + diff.size
            medians.append(float(np.median(diff)))
            over += int((diff > log_mel_bound(ref, float16=store.dtype == "float16")).sum())
        bound = "2ulp+64eps*sqrt(S/m)" + (" + 2^-11 abs(x)" if store.dtype == "float16" else "")
        return over == 0, f"max abs diff {worst:.2g} nats, median {np.median(medians):.2g}; {over}/{cells} cells over {bound}"

    def metadata() -> tuple[bool, str]:
        bad = []
        for cut in cuts:
            utt = store.utterances[cut.custom["audiokit_id"]]
            rule = compute_num_frames(cut.duration, cut.frame_shift, cut.sampling_rate)
            if cut.supervisions[0].speaker != utt.speaker or cut.num_frames != rule or cut.num_features != 80:
                bad.append(cut.id)
            expected = (store.audio_of or (lambda c: _source_audio(store, c)))(cut)
            if expected is not None and not np.array_equal(cut.load_audio(), expected):
                bad.append(f"audio:{cut.id}")
        dotted = [c for c in cuts if "." in c.custom["audiokit_id"]]
        figure = f"speaker = folder, num_frames = compute_num_frames, load_audio = soundfile for {len(cuts)} cuts"
        figure += "; " + ", ".join(f"{c.custom['audiokit_id']!r} -> cut id {c.id!r}" for c in dotted)
        return not bad and all("." not in c.id for c in cuts), figure + (f"; bad: {bad[:3]}" if bad else "")

    def collated() -> tuple[bool, str]:
        batch, lens = collate_features(cuts)
        ok = all(
            np.array_equal(batch[i, : lens[i]].numpy(), cut.load_features().astype(np.float32))
            and bool((batch[i, lens[i] :] == np.float32(LOG_EPSILON)).all())
            for i, cut in enumerate(cuts)
        )
        return ok and tuple(batch.shape) == (len(cuts), int(lens.max()), 80), (
            f"collate_features: {tuple(batch.shape)} {batch.dtype}, rows = load_features, padding LOG_EPSILON"
        )

    def sampled(kind: str) -> tuple[bool, str]:
        if kind == "simple":
            sampler = SimpleCutSampler(cuts, max_duration=20.0, shuffle=True, seed=0)
        else:
            sampler = DynamicBucketingSampler(store.lazy(), max_duration=20.0, num_buckets=2, shuffle=True, seed=0)
        seen: list[str] = []
        shapes = []
        for batch_cuts in sampler:
            feats, _ = collate_features(batch_cuts)
            seen += [cut.id for cut in batch_cuts]
            shapes.append(tuple(feats.shape[:2]))
        ok = sorted(seen) == sorted(by_key)
        return ok, f"{type(sampler).__name__}(max_duration=20): {len(shapes)} batches, each cut once, (B, T) {shapes[:4]}..."

    def k2() -> tuple[bool, str]:
        first = next(iter(SimpleCutSampler(cuts, max_duration=20.0)))
        for cut in first:
            cut.supervisions[0].text = "a transcript"
        got = K2SpeechRecognitionDataset(return_cuts=True)[first]
        frames = got["supervisions"]["num_frames"].tolist()
        want = [first[got["supervisions"]["cut"][i].id].num_frames for i in range(len(frames))]
        return frames == want, f"K2SpeechRecognitionDataset: inputs {tuple(got['inputs'].shape)}, num_frames = cuts'"

    checks.run(name, "open", opened)
    checks.run(name, "qa.validate", validated)
    checks.run(name, "load_features", features_equal)
    checks.run(name, "vs Lhotse Fbank()", lhotse_fbank)
    checks.run(name, "manifest fields", metadata)
    checks.run(name, "collate", collated)
    checks.run(name, "sampler", lambda: sampled("simple"))
    checks.run(name, "sampler", lambda: sampled("bucketing"))
    checks.run(name, "dataset", k2)


def _mismatch(pairs: list[tuple[np.ndarray, np.ndarray]], dtype: str) -> str:
    """How ``(loaded, reference)`` pairs differ in ``dtype`` (a float32 reference of a float16 store is cast first);
    empty when every pair is bit-equal with ``loaded`` of that dtype."""
    cuts = cells = total = 0
    worst = 0.0
    for loaded, reference in pairs:
        want = reference.astype(dtype)
        if loaded.dtype != want.dtype or loaded.shape != want.shape:
            return f"{loaded.dtype}{loaded.shape} loaded, {want.dtype}{want.shape} expected"
        diff = loaded != want
        cuts, cells, total = cuts + bool(diff.any()), cells + int(diff.sum()), total + diff.size
        if diff.any():
            gap = np.abs(loaded[diff].astype(np.float64) - want[diff]) / np.spacing(np.abs(want[diff]))
            worst = max(worst, float(gap.max()))
    return f"{cells} of {total} cells in {cuts} cuts differ (max {worst:.3g} ulp of {dtype})" if cells else ""


def _batch(
    audiokit: list[str], inputs: Path | str, out: Path | str, *args: object, expect: int = 0
) -> subprocess.CompletedProcess[str]:
    common = ("--compat", "lhotse", "--speaker-from", "parent", "--jobs", "1")
    return _run(audiokit, "batch", "mel", inputs, "--out", out, *common, *args, expect=expect)


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def footprint(label: str, folder: Path, array_files: list[Path], elements: int, n: int) -> tuple[str, ...]:
    """A row of the storage table: files per utterance, bytes per element (array files, and everything)."""
    files = _files(folder)
    arrays = sum(p.stat().st_size for p in array_files)
    total = sum(p.stat().st_size for p in files)
    return (label, str(len(files)), f"{len(files) / n:.2f}", f"{arrays / elements:.3f}", f"{total / elements:.3f}")


def lhotse_compute_and_store(corpus: dict[str, Utterance], work: Path, ours: dict[str, np.ndarray]) -> list[tuple[str, ...]]:
    """Lhotse's own ``compute_and_store_features`` (numpy_files, lilcom) on the corpus: storage rows + error figures."""
    from lhotse import CutSet, Fbank, Recording, RecordingSet
    from lhotse.features.io import LilcomChunkyWriter, NumpyFilesWriter

    from_key = {_key(uid): uid for uid in corpus}
    recordings = RecordingSet.from_recordings(
        Recording.from_file(corpus[uid].path, recording_id=key) for key, uid in from_key.items()
    )
    cuts = CutSet.from_manifests(recordings=recordings)
    rows, loaded = [], {}
    for writer in (NumpyFilesWriter, LilcomChunkyWriter):
        folder = work / f"lhotse_{writer.name}"
        folder.mkdir()
        stored = cuts.compute_and_store_features(
            Fbank(), storage_path=folder / "feats", storage_type=writer, num_jobs=1, progress_bar=False
        )
        stored.to_file(folder / "cuts.jsonl.gz")
        loaded[writer.name] = {cut.recording_id: cut.load_features() for cut in stored}
        elements = sum(a.size for a in loaded[writer.name].values())
        arrays = [p for p in _files(folder) if p.name != "cuts.jsonl.gz"]
        rows.append(footprint(f"Lhotse compute_and_store_features, {writer.name}", folder, arrays, elements, len(corpus)))
    numpy_files, lilcom = loaded[NumpyFilesWriter.name], loaded[LilcomChunkyWriter.name]
    lilcom_err = max(float(np.abs(lilcom[k].astype(np.float64) - numpy_files[k]).max()) for k in numpy_files)
    ours_err = max(float(np.abs(ours[k].astype(np.float64) - numpy_files[k]).max()) for k in numpy_files)
    rows.append(("(Lhotse lilcom - Lhotse numpy_files, max abs diff)", "", "", f"{lilcom_err:.3g} nats", ""))
    rows.append(("(audiokit npy - Lhotse numpy_files, max abs diff)", "", "", f"{ours_err:.3g} nats", ""))
    return rows


def _key(uid: str) -> str:
    """The store key of a corpus id (only ``.`` occurs among the characters shard_key escapes)."""
    return uid.replace("%", "%25").replace(".", "%2E")


def check_stores(audiokit: list[str], moto: list[str] | None = None) -> int:
    """Build the corpus, run every store, open each with Lhotse, print the storage table and the check table."""
    import lhotse
    import torch
    from lhotse import CutSet

    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus, mixed = make_corpus(work)
        seconds = sum(sf.info(u.path).duration for u in corpus.values())
        version = _run(audiokit, "--version").stdout.strip()
        print(f"lhotse {lhotse.__version__}, torch {torch.__version__}, numpy {np.__version__}; {version}")
        print(f"corpus: {len(corpus)} utterances, {seconds:.1f} s at 16 kHz (10 WAV, 10 FLAC, spkA/spkB); mixed/: +8 kHz file")
        singles = {}
        for uid, utt in corpus.items():
            npy = work / "single" / f"{_key(uid)}.npy"
            npy.parent.mkdir(parents=True, exist_ok=True)
            _run(audiokit, "mel", utt.path, "--compat", "lhotse", "--npy", npy, "-q")
            singles[_key(uid)] = np.load(npy).T
        stores: dict[str, Store] = {}
        storage: list[tuple[str, ...]] = []
        for kind, dtype in (("shards", "float32"), ("npy", "float32"), ("shards", "float16"), ("npy", "float16")):
            out = work / f"{kind}_{dtype}"
            extra = ("--shard-size", "8u") if kind == "shards" else ()
            done = _batch(audiokit, work / "corpus", out, "--store", kind, "--dtype", dtype, *extra)
            print(f"{kind} {dtype}: {done.stderr.strip().splitlines()[-1]}")
            if kind == "shards":
                arrays, members = shar_store_arrays(out)
                lazy = partial(CutSet.from_shar, in_dir=out / "shar")
                array_files = sorted((out / "shar").glob("features.*.tar"))
            else:
                arrays, members = npy_store_arrays(out), []
                lazy = partial(CutSet.from_jsonl_lazy, out / "cuts.jsonl.gz")
                array_files = sorted((out / "feats").rglob("*.npy"))
            name = f"{kind} {dtype}"
            also = {"index.sqlite": index_arrays(out), **({"single-file mel --npy .T": singles} if dtype == "float32" else {})}
            stores[name] = Store(name, out, lazy, arrays, corpus, dtype, also=also)
            if kind == "shards":
                checks.run(name, "layout", partial(_shar_layout, out, members))
            check_store(checks, stores[name])
            if dtype == "float16":
                checks.run(name, "float16 = float32 cast", partial(_cast_of, stores[f"{kind} float32"], stores[name]))
            elements = sum(a.size for a in arrays.values())
            storage.append(footprint(f"audiokit --store {kind} --dtype {dtype}", out, array_files, elements, len(corpus)))
        check_mixed(checks, audiokit, work, mixed, stores["shards float32"].arrays)
        check_own_framings(checks, audiokit, work, corpus)
        if moto is not None:
            check_s3(checks, audiokit, moto, corpus, stores)
        storage += lhotse_compute_and_store(corpus, work, stores["npy float32"].arrays)
    print("\nStorage (the 20-utterance corpus; elements = stored values):\n")
    header = ("store", "files", "files/utt", "bytes/element (arrays)", "bytes/element (all files)")
    print(_markdown([header, *storage]))
    print(f"\nChecks ({len(checks.rows) - checks.failed} PASS, {checks.failed} FAIL):\n")
    print(checks.table())
    return int(checks.failed > 0)


def _mel_upper_edges(n_mels: int, low: float, high: float) -> np.ndarray:
    """Upper edges (Hz) of Kaldi's/Lhotse's triangular mel bands (``1127 ln(1 + f/700)``, equally spaced)."""
    mel_low, mel_high = (1127.0 * np.log1p(f / 700.0) for f in (low, high))
    mel = mel_low + (np.arange(n_mels) + 2) * (mel_high - mel_low) / (n_mels + 1)
    return 700.0 * np.expm1(mel / 1127.0)


def _cast_of(wide: Store, narrow: Store) -> tuple[bool, str]:
    """The float16 store holds the float32 store's values cast to float16 (round to nearest even), bit for bit."""
    mismatch = _mismatch([(narrow.arrays[key], wide.arrays[key]) for key in wide.arrays], "float16")
    n = sum(a.size for a in wide.arrays.values())
    return not mismatch, f"store == float32 store .astype(float16): {mismatch or f'all {n} cells'}"


def _shar_layout(out: Path, members: list[list[str]]) -> tuple[bool, str]:
    """OUT/shar holds only features.NNNNNN.tar + cuts.NNNNNN.jsonl.gz; --shard-size 8u: 8 + 8 + 4, .npy then .json."""
    names = sorted(p.name for p in (out / "shar").iterdir())
    want = sorted(f"{kind}.{i:06d}.{ext}" for i in range(3) for kind, ext in (("features", "tar"), ("cuts", "jsonl.gz")))
    sizes = [len(m) // 2 for m in members]
    pairs = all(
        m[i][: -len(".npy")] + ".json" == m[i + 1] and m[i].endswith(".npy") for m in members for i in range(0, len(m), 2)
    )
    return names == want and sizes == [
        8,
        8,
        4,
    ] and pairs, f"shar/: {len(names)} files ({names[0]} ...), utterances per shard {sizes}"


def check_mixed(
    checks: Checks, audiokit: list[str], work: Path, mixed: dict[str, Utterance], shards16k: dict[str, np.ndarray]
) -> None:
    """mixed/ without --sr (refused 8 kHz file) and with --sr 16k (--store shards)."""
    from lhotse import CutSet, Fbank

    def refused() -> tuple[bool, str]:
        done = _batch(audiokit, work / "mixed", work / "mixed_nosr", "--store", "shards", expect=3)
        lines = [line for line in done.stderr.splitlines() if "tel.8k.wav" in line]
        return len(lines) >= 1 and "--sr" in lines[0], f"exit 3: {lines[0].strip() if lines else done.stderr.strip()}"

    checks.run("mixed/ no --sr", "mixed rates", refused)
    out = work / "mixed_sr16k"
    done = _batch(audiokit, work / "mixed", out, "--store", "shards", "--sr", "16k")
    print(f"shards --sr 16k: {done.stderr.strip().splitlines()[-1]}")
    upsampled = work / "tel.16k.wav"
    _run(audiokit, "resample", mixed["spkC/tel.8k"].path, "--to", "16k", "--subtype", "FLOAT", "-o", upsampled, "-q")
    soxr_audio, _ = sf.read(upsampled, dtype="float32")

    def fbank_of(cut: Any) -> np.ndarray:
        if cut.custom["audiokit_id"] == "spkC/tel.8k":
            return np.asarray(Fbank().extract(soxr_audio, 16000))
        return cut.compute_features(Fbank())

    def audio_of(cut: Any) -> np.ndarray | None:
        x, sr = sf.read(mixed[cut.custom["audiokit_id"]].path, dtype="float32", always_2d=True)
        return x.T if sr == 16000 else None

    arrays, _ = shar_store_arrays(out)
    same16k = {k: shards16k[k] for k in arrays if k in shards16k}
    also = {"index.sqlite": index_arrays(out), "the 16 kHz files' without --sr": same16k}
    lazy = partial(CutSet.from_shar, in_dir=out / "shar")
    store = Store("shards --sr 16k", out, lazy, arrays, mixed, "float32", also=also, fbank_of=fbank_of, audio_of=audio_of)
    check_store(checks, store)
    cuts = store.cuts

    def lhotse_resampler() -> tuple[bool, str]:
        """Lhotse resamples the 8 kHz recording itself (its Resample transform) for load_audio/compute_features:
        another filter than soxr's, so its features are compared for information, apart below and above 3.6 kHz
        (soxr's passband edge, 0.9 x the 4 kHz Nyquist: its transition band and Lhotse's differ)."""
        cut = next(c for c in cuts if c.custom["audiokit_id"] == "spkC/tel.8k")
        transforms = [t if isinstance(t, dict) else t.to_dict() for t in cut.recording.transforms or []]
        resample = [t for t in transforms if t.get("name") == "Resample"]
        audio = cut.load_audio()[0]
        diff = np.abs(cut.load_features() - cut.compute_features(Fbank()))
        below = _mel_upper_edges(80, 20.0, 7600.0) <= 3600.0
        ok = bool(resample) and resample[0]["kwargs"]["source_sampling_rate"] == 8000 and audio.shape == soxr_audio.shape
        return ok, (
            f"Recording 8 kHz + Resample(8000 -> 16000): load_audio {audio.size} samples as soxr's, max abs diff "
            f"{np.abs(audio - soxr_audio).max():.2g}; features max abs diff {diff[:, below].max():.2g} nats in the "
            f"{below.sum()} bands below 3.6 kHz, {diff[:, ~below].max():.2g} above (other filter: information)"
        )

    checks.run("shards --sr 16k", "Lhotse's own resampler", lhotse_resampler)


def check_own_framings(checks: Checks, audiokit: list[str], work: Path, corpus: dict[str, Utterance]) -> None:
    """Stores in a framing of their own, not ``--compat lhotse``'s: ``batch mel`` at its defaults (n_fft 400 / hop
    160, frames not centred: ``1 + (n - 400) // 160``) and ``batch pitch`` (pYIN, hop 256, centred: ``1 + n // 256``),
    npy and shards.  Their Lhotse cuts declare the stored frame count beside the audio's duration; Lhotse derives a
    cut's frame count from the duration (``compute_num_frames``: ``(n + hop // 2) // hop``), so where the two differ
    ``qa.validate`` refuses the cut, ``load_features`` trims or repeats one row and collation fails beyond one."""
    from lhotse import CutSet
    from lhotse.dataset.collation import collate_features
    from lhotse.qa import validate
    from lhotse.utils import compute_num_frames

    for command, kind in (("mel", "npy"), ("mel", "shards"), ("pitch", "npy"), ("pitch", "shards")):
        out = work / f"own_{command}_{kind}"
        extra = ("--shard-size", "8u") if kind == "shards" else ()
        _run(
            audiokit,
            "batch",
            command,
            work / "corpus",
            "--out",
            out,
            "--store",
            kind,
            "--speaker-from",
            "parent",
            "--jobs",
            "1",
            "-q",
            *extra,
        )
        if kind == "npy":
            arrays, cuts = npy_store_arrays(out), CutSet.from_jsonl_lazy(out / "cuts.jsonl.gz").to_eager()
        else:
            arrays, cuts = shar_store_arrays(out)[0], CutSet.from_shar(in_dir=out / "shar").to_eager()
        name = f"{kind} batch {command} (own framing)"

        def opened(cuts: Any = cuts, arrays: dict[str, np.ndarray] = arrays) -> tuple[bool, str]:
            ids = sorted(cut.custom["audiokit_id"] for cut in cuts)
            first = cuts[0].features
            ok = ids == sorted(corpus) and sorted(cut.id for cut in cuts) == sorted(arrays)
            return (
                ok,
                f"{len(cuts)} cuts, ids = inputs; {first.type}, {first.num_features} features, frame shift {first.frame_shift} s",
            )

        def rule(cuts: Any = cuts) -> tuple[bool, str]:
            gaps: dict[int, int] = {}
            for cut in cuts:
                gap = cut.features.num_frames - compute_num_frames(cut.duration, cut.frame_shift, cut.sampling_rate)
                gaps[gap] = gaps.get(gap, 0) + 1
            ok = set(gaps) == {0}
            spread = ", ".join(f"{n} cuts {g:+d}" for g, n in sorted(gaps.items()))
            return ok, f"stored frames - compute_num_frames(duration, frame_shift, sr): {spread}"

        def validated(cuts: Any = cuts) -> tuple[bool, str]:
            validate(cuts, read_data=True)
            return True, f"lhotse.qa.validate(cuts, read_data=True) on {len(cuts)} cuts"

        def features_equal(cuts: Any = cuts, arrays: dict[str, np.ndarray] = arrays) -> tuple[bool, str]:
            loaded = {cut.id: cut.load_features() for cut in cuts}
            same = sum(a.shape == arrays[k].shape and np.array_equal(a, arrays[k]) for k, a in loaded.items())
            rows = sorted({a.shape[0] - arrays[k].shape[0] for k, a in loaded.items()})
            return same == len(
                cuts
            ), f"{same} of {len(cuts)} x load_features() == the store's array (rows loaded - stored: {rows})"

        def collated(cuts: Any = cuts, arrays: dict[str, np.ndarray] = arrays) -> tuple[bool, str]:
            batch, lens = collate_features(cuts)
            same = sum(np.array_equal(batch[i, : lens[i]].numpy(), arrays[cut.id]) for i, cut in enumerate(cuts))
            return same == len(cuts), f"collate_features {tuple(batch.shape)}: {same} of {len(cuts)} rows = the store's array"

        for what, check in (
            ("open", opened),
            ("num_frames rule", rule),
            ("qa.validate", validated),
            ("load_features", features_equal),
            ("collate", collated),
        ):
            checks.run(name, what, check)


# ---- --s3: stores written to object storage (moto on 127.0.0.1), opened by Lhotse from the bucket ---------------

S3_AUDIO, S3_FEATS = "audio", "feats"  # buckets: the corpus's objects, the stores


class MotoServer:
    """``moto_server`` on a free port of 127.0.0.1 (started here, terminated by :meth:`close`), and the ``AWS_*``
    variables that point boto3, smart_open and audiokit's subprocesses at it (set in this process's environment)."""

    def __init__(self, command: list[str]) -> None:
        import socket
        import time

        import boto3
        import botocore.exceptions

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.process = subprocess.Popen(
            [*command, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        os.environ.update(
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
            AWS_ACCESS_KEY_ID="example-key",
            AWS_SECRET_ACCESS_KEY="example-secret",
            AWS_DEFAULT_REGION="us-east-1",
            AWS_EC2_METADATA_DISABLED="true",
        )
        self.client = boto3.client("s3")
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client.list_buckets()
                break
            except botocore.exceptions.EndpointConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{' '.join(command)} did not start (exit {self.process.poll()})") from None
                time.sleep(0.2)

    def keys(self, bucket: str, prefix: str) -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def read(self, bucket: str, key: str) -> bytes:
        return self.client.get_object(Bucket=bucket, Key=key)["Body"].read()

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def s3_store_arrays(server: MotoServer, kind: str, prefix: str) -> dict[str, np.ndarray]:
    """``key -> array`` of a store in the bucket, read with boto3 + numpy/tarfile (no Lhotse): the ``.npy`` objects
    under ``feats/`` (npy), the ``<key>.npy`` members of ``shar/features.*.tar`` (shards)."""
    arrays: dict[str, np.ndarray] = {}
    if kind == "npy":
        for key in server.keys(S3_FEATS, f"{prefix}/feats/"):
            arrays[_unescape(key.rsplit("/", 1)[1][: -len(".npy")])] = np.load(io.BytesIO(server.read(S3_FEATS, key)))
        return arrays
    for key in server.keys(S3_FEATS, f"{prefix}/shar/features."):
        with tarfile.open(fileobj=io.BytesIO(server.read(S3_FEATS, key))) as tar:
            for member in tar:
                data = tar.extractfile(member)
                if member.name.endswith(".npy") and data is not None:
                    arrays[member.name[: -len(".npy")]] = np.load(io.BytesIO(data.read()))
    return arrays


def check_s3(
    checks: Checks, audiokit: list[str], moto: list[str], corpus: dict[str, Utterance], stores: dict[str, Store]
) -> None:
    """The corpus uploaded to ``s3://audio/corpus/``; ``batch mel s3://audio/corpus/ --out s3://feats/KIND`` for
    npy and shards; each opened by Lhotse from the bucket (``CutSet.from_jsonl_lazy("s3://.../cuts.jsonl.gz")``,
    ``CutSet.from_shar(fields=...)`` with the shards' URLs: ``in_dir`` takes a local folder only) and checked as a
    local store, its arrays equal to the objects' and to the local float32 store's."""
    from lhotse import CutSet

    server = MotoServer(moto)
    try:
        for bucket in (S3_AUDIO, S3_FEATS):
            server.client.create_bucket(Bucket=bucket)
        root = next(iter(corpus.values())).path.parents[1]  # corpus/<speaker>/<file>
        for utt in corpus.values():
            server.client.upload_file(str(utt.path), S3_AUDIO, f"corpus/{utt.path.relative_to(root).as_posix()}")
        for kind in ("npy", "shards"):
            name, url = f"s3 -> s3 {kind}", f"s3://{S3_FEATS}/{kind}"
            extra = ("--shard-size", "8u") if kind == "shards" else ()
            done = _batch(audiokit, f"s3://{S3_AUDIO}/corpus/", url, "--store", kind, *extra)
            print(f"{name}: {done.stderr.strip().splitlines()[-1]}")
            if kind == "npy":
                lazy = partial(CutSet.from_jsonl_lazy, f"{url}/cuts.jsonl.gz")
            else:
                keys = server.keys(S3_FEATS, f"{kind}/shar/")
                fields = {
                    field: [f"s3://{S3_FEATS}/{k}" for k in keys if k.rsplit("/", 1)[1].startswith(field + ".")]
                    for field in ("cuts", "features")
                }
                lazy = partial(CutSet.from_shar, fields=fields)
            local = stores[f"{kind} float32"]
            store = Store(
                name,
                Path(url),
                lazy,
                s3_store_arrays(server, kind, kind),
                corpus,
                "float32",
                also={f"local --store {kind}": local.arrays},
            )
            check_store(checks, store)
            checks.run(name, "URLs", partial(_s3_urls, store, kind, url))
    finally:
        server.close()


def _s3_urls(store: Store, kind: str, url: str) -> tuple[bool, str]:
    """Every cut's Recording is a ``url`` AudioSource of its object (Lhotse reads it with smart_open); an npy
    store's features ``storage_path`` is the store's URL."""
    sources = {source.type for cut in store.cuts for source in cut.recording.sources}
    objects = all(cut.recording.sources[0].source.startswith(f"s3://{S3_AUDIO}/corpus/") for cut in store.cuts)
    paths = {cut.features.storage_path for cut in store.cuts}
    ok = sources == {"url"} and objects and (paths == {url} if kind == "npy" else paths == {""})
    return ok, f"AudioSource types {sorted(sources)} (s3://{S3_AUDIO}/corpus/...), features storage_path {sorted(paths)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare single files with audiokit instead of writing the arrays")
    mode.add_argument("--stores", action="store_true", help="check audiokit batch stores in Lhotse (module docstring)")
    parser.add_argument(
        "--audiokit",
        default=os.environ.get("AUDIOKIT", "audiokit"),
        help="the audiokit command of audiokit's own venv (split like a shell line) [$AUDIOKIT or audiokit]",
    )
    parser.add_argument(
        "--s3",
        action="store_true",
        help="with --stores: also batch s3:// -> s3:// npy and shards stores on a local moto server, opened from the bucket",
    )
    parser.add_argument(
        "--moto-server",
        default=os.environ.get("MOTO_SERVER", "moto_server"),
        help="the moto_server command for --s3 (e.g. /work/venv/bin/moto_server) [$MOTO_SERVER or moto_server]",
    )
    args = parser.parse_args()
    audiokit = shlex.split(args.audiokit)
    if args.s3 and not args.stores:
        parser.error("--s3 goes with --stores")
    if args.check:
        return check(audiokit)
    if args.stores:
        return check_stores(audiokit, shlex.split(args.moto_server) if args.s3 else None)
    make_reference()
    return 0


if __name__ == "__main__":
    sys.exit(main())

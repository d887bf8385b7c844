"""Benchmark: ``audiokit batch mel`` with each corpus store against the peers, per CPU second (issue 19).

::

    python benchmarks/bench_batch.py                          # 1500 utterances (~3.5 h), 3 rounds: ~12 min
    python benchmarks/bench_batch.py --cache /tmp/akbench     # keep the generated corpus there between runs
    python benchmarks/bench_batch.py --files 300 --repeats 1  # a quick look
    python benchmarks/bench_batch.py --scale                  # also --jobs 2, a Dask cluster, a shell loop

The corpus (:mod:`batch_corpus`): utterances of 2-15 s, 16 kHz PCM_16, half FLAC half WAV, nested folders, seeded;
made once under ``--cache`` (default: a temporary folder, removed afterwards) and read once before timing so the
page cache holds it for everyone.  Two features, every contender one utterance at a time, one thread
(``OMP/OPENBLAS/MKL_NUM_THREADS=1``, ``AUDIOKIT_FFT_THREADS=1``, one torch thread):

* **log-mel** -- audiokit's default ``batch mel`` (80 HTK bands, 25 ms Hann, 10 ms hop, n_fft 400, not centred,
  dB re 1, no clip), with ``--store files|npy|shards|kaldi|parquet``, and the *librosa loop*:
  ``soundfile.read`` + ``librosa.feature.melspectrogram(n_fft=400, hop_length=160, win_length=400, window="hann",
  center=False, power=2, n_mels=80, htk=True, norm=None)`` + ``power_to_db(ref=1, amin=1e-10, top_db=None)`` +
  ``np.save`` (librosa's ``(n_mels, n_frames)``) per utterance;
* **fbank** -- ``batch mel --compat kaldi --n-mels 80`` (Kaldi's compute-fbank-feats: povey, n_fft 512, snip-edges,
  dither 0, ln) with the same stores and ``--store kaldi --compress``; the *kaldi-native-fbank loop*
  (``OnlineFbank``, 80 bins, dither 0, samples x 32768, ``np.save``); and, when ``--lhotse-python`` exists,
  *Lhotse 1.33* ``CutSet.compute_and_store_features(Fbank(), num_jobs=1)`` with ``NumpyFilesWriter`` and
  ``LilcomChunkyWriter`` in its own virtual environment (:mod:`lhotse_batch`; Lhotse's framing: no snip-edges).

Every contender runs as one fresh process over the whole corpus, ``--repeats`` rounds (contenders alternated,
forward then backward).  CPU seconds = user + sys of the process tree (``getrusage(RUSAGE_CHILDREN)`` before and
after), median of the rounds; "x RT / CPU s" = audio seconds / CPU seconds, end to end (start-up, imports,
decode, features, writes); "start-up" is the same contender on a one-utterance corpus (once), so "x RT excl.
start-up" = audio / (CPU - start-up).  Peak RSS = ``ru_maxrss`` of the child (``wait4``), the largest over the
rounds.  Files per utterance and bytes per element count every file the contender left (manifest, index, views
included) over ``sum(n_frames * n_feats)``.  Then, on the fbank outputs of the last round (page cache warm): read
throughput of each store with its consumer (``np.load``, ``webdataset``, ``kaldiio.load_scp``, ``pyarrow``,
Lhotse's ``load_features``) and with ``audiokit.corpus.open``, every array checked against the npy store; and write
throughput of the container writers alone on ``--io-utts`` of those arrays beside ``np.save``,
``kaldiio.save_ark`` and Lhotse's writers.  MB = 10^6 bytes of array data.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from batch_corpus import SR, Measured, Utterance, corpus, env1, measure, tree_files_bytes, warm  # noqa: E402
from common import fmt_ratio, limit_threads, machine_line, print_table, target_status  # noqa: E402

limit_threads(1)

HERE = Path(__file__).resolve().parent
AUDIOKIT = [sys.executable, "-m", "audiokit"]
LOGMEL, FBANK = "log-mel", "fbank"
FEATURE_FLAGS = {LOGMEL: [], FBANK: ["--compat", "kaldi", "--n-mels", "80"]}
N_FEATS = 80
#: Targets of issue 19 ("Speed").
TARGET_RT, TARGET_PEER, TARGET_FILES, TARGET_RSS = 3000.0, 1.3, 0.01, 300.0

LIBROSA_LOOP = """
import sys, numpy as np, soundfile as sf, librosa
out = sys.argv[1]
for i, path in enumerate(sys.stdin.read().splitlines()):
    y, sr = sf.read(path, dtype="float32")
    S = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=400, hop_length=160, win_length=400, window="hann",
                                       center=False, power=2.0, n_mels=80, htk=True, norm=None)
    np.save(f"{out}/u{i}.npy", librosa.power_to_db(S, ref=1.0, amin=1e-10, top_db=None))
"""

KALDI_LOOP = """
import sys, numpy as np, soundfile as sf, kaldi_native_fbank as knf
out = sys.argv[1]
opts = knf.FbankOptions()
opts.frame_opts.dither = 0.0
opts.frame_opts.samp_freq = 16000
opts.mel_opts.num_bins = 80
for i, path in enumerate(sys.stdin.read().splitlines()):
    x, sr = sf.read(path, dtype="float32")
    fbank = knf.OnlineFbank(opts)
    fbank.accept_waveform(sr, (x * 32768).tolist())
    fbank.input_finished()
    np.save(f"{out}/u{i}.npy", np.stack([fbank.get_frame(k) for k in range(fbank.num_frames_ready)]))
"""


# ---------------------------------------------------------------------- contenders


@dataclass(frozen=True)
class Contender:
    """One way to turn the corpus into stored features: ``command(corpus_dir, paths, out) -> (argv, stdin)``."""

    key: str
    label: str
    feature: str
    peer: bool
    command: Callable[[Path, list[Utterance], Path], tuple[list[str], str | None]]
    #: Lhotse's framing (no snip-edges): its element count comes from its own JSON line.
    reports_values: bool = False
    #: How its output is read back in the read-throughput table (None: not read).
    reader: str | None = None


def audiokit_contender(feature: str, store: str, *extra: str) -> Contender:
    name = f"--store {store}{' ' + ' '.join(extra) if extra else ''}"

    def command(root: Path, _: list[Utterance], out: Path) -> tuple[list[str], str | None]:
        argv = [*AUDIOKIT, "batch", "mel", str(root), "--out", str(out), "--jobs", "1", "-q", "--json", "--store", store]
        return [*argv, *extra, *FEATURE_FLAGS[feature]], None

    reader = {"files": "files", "npy": "npy", "shards": "shards", "kaldi": "kaldi", "parquet": "parquet"}[store]
    key = f"ak-{feature}-{store}{'-c' if extra else ''}"
    return Contender(key, f"audiokit batch {name}", feature, False, command, reader=reader if feature == FBANK else None)


def loop_contender(key: str, label: str, feature: str, code: str) -> Contender:
    def command(_: Path, utts: list[Utterance], out: Path) -> tuple[list[str], str | None]:
        out.mkdir(parents=True, exist_ok=True)
        return [sys.executable, "-c", code, str(out)], "\n".join(str(u.path) for u in utts) + "\n"

    return Contender(key, label, feature, True, command, reader="loop" if feature == FBANK else None)


def lhotse_contender(python: str, storage: str) -> Contender:
    def command(_: Path, utts: list[Utterance], out: Path) -> tuple[list[str], str | None]:
        out.mkdir(parents=True, exist_ok=True)
        argv = [python, str(HERE / "lhotse_batch.py"), "compute", storage, str(out)]
        return argv, "\n".join(str(u.path) for u in utts) + "\n"

    return Contender(f"lhotse-{storage}", f"Lhotse Fbank, {storage}", FBANK, True, command, True, f"lhotse:{storage}")


def contenders(lhotse_python: str | None) -> list[Contender]:
    out = [audiokit_contender(f, s) for f in (LOGMEL, FBANK) for s in ("files", "npy", "shards", "kaldi", "parquet")]
    out.append(audiokit_contender(FBANK, "kaldi", "--compress"))
    out.append(loop_contender("librosa", "librosa loop (sf.read + melspectrogram + np.save)", LOGMEL, LIBROSA_LOOP))
    try:
        import kaldi_native_fbank  # noqa: F401
    except ImportError:
        print("# kaldi-native-fbank not installed: no kaldi-native-fbank row", file=sys.stderr)
    else:
        out.append(loop_contender("knf", "kaldi-native-fbank loop (OnlineFbank + np.save)", FBANK, KALDI_LOOP))
    if lhotse_python:
        out += [lhotse_contender(lhotse_python, s) for s in ("numpy_files", "lilcom_chunky")]
    return out


# ---------------------------------------------------------------------- running


@dataclass
class Outcome:
    """The runs of one contender."""

    contender: Contender
    runs: list[Measured] = field(default_factory=list)
    startups: list[float] = field(default_factory=list)
    files: int = 0
    nbytes: int = 0
    values: int = 0

    @property
    def cpu_s(self) -> float:
        return statistics.median(r.cpu_s for r in self.runs)

    @property
    def startup_cpu_s(self) -> float:
        return statistics.median(self.startups)

    @property
    def wall_s(self) -> float:
        return statistics.median(r.wall_s for r in self.runs)

    @property
    def rss_mib(self) -> float:
        return max(r.rss_mib for r in self.runs)

    def spread(self) -> str:
        cpus = [r.cpu_s for r in self.runs]
        return f"{min(cpus):.2f}-{max(cpus):.2f}"


def frames_snip(n_samples: int) -> int:
    """Frames of a 400-sample window every 160 samples inside the signal (both audiokit features, the loops)."""
    return 0 if n_samples < 400 else 1 + (n_samples - 400) // 160


def run_once(c: Contender, root: Path, utts: list[Utterance], out: Path, logs: Path) -> Measured:
    shutil.rmtree(out, ignore_errors=True)
    argv, stdin = c.command(root, utts, out)
    env = env1(PYTHONWARNINGS="ignore") if c.key.startswith("lhotse") else env1()
    run = measure(argv, stdin=stdin, env=env, log_dir=logs / c.key)
    if c.key.startswith("ak-"):
        summary = json.loads(run.stdout)
        if summary["ok"] != len(utts):
            raise SystemExit(f"{c.label}: {summary}")
    return run


def run_all(
    cs: list[Contender], root: Path, utts: list[Utterance], tiny: Path, work: Path, repeats: int
) -> tuple[dict[str, Outcome], list[float]]:
    """``repeats`` rounds: each contender on ``tiny`` (its one utterance: the start-up), then on the corpus; also the
    1-minute load average after each run."""
    outcomes = {c.key: Outcome(c) for c in cs}
    loads = []
    tiny_utts = [Utterance(next(tiny.rglob("*.flac")), 0)]
    expected = sum(frames_snip(u.n_samples) for u in utts) * N_FEATS
    for r in range(repeats):
        order = cs if r % 2 == 0 else cs[::-1]
        for c in order:
            outcomes[c.key].startups.append(run_once(c, tiny, tiny_utts, work / "tiny-out", work / "logs").cpu_s)
            out = work / c.key
            run = run_once(c, root, utts, out, work / "logs")
            outcome = outcomes[c.key]
            outcome.runs.append(run)
            outcome.files, outcome.nbytes = tree_files_bytes(out)
            outcome.values = int(json.loads(run.stdout)["values"]) if c.reports_values else expected
            if r < repeats - 1 or c.reader is None:
                shutil.rmtree(out, ignore_errors=True)
            loads.append(os.getloadavg()[0])
            print(f"#   round {r + 1}/{repeats} {c.key}: {run.cpu_s:.2f} CPU s, {run.wall_s:.2f} s", file=sys.stderr)
    return outcomes, loads


# ---------------------------------------------------------------------- reading the stores back


def npy_keys(root: Path) -> Iterator[tuple[str, Path]]:
    """``(key, path)`` of the npy store's files: ``feats/<hh>/<key>.npy``."""
    for path in sorted((root / "feats").rglob("*.npy")):
        rel = path.relative_to(root / "feats")
        yield str(Path(*rel.parts[1:]))[: -len(".npy")], path


def read_npy_files(root: Path) -> Iterator[Any]:
    import numpy as np

    for path in sorted(root.rglob("*.npy")):
        yield np.load(path)


def read_shards(root: Path) -> Iterator[Any]:
    import webdataset as wds

    urls = [str(p) for p in sorted((root / "shar").glob("features.*.tar"))]
    for sample in wds.WebDataset(urls, shardshuffle=False).decode():
        yield sample["npy"]


def read_kaldi(root: Path) -> Iterator[Any]:
    import kaldiio

    for _, array in kaldiio.load_scp(str(root / "feats.scp")).items():
        yield array


def read_parquet(root: Path) -> Iterator[Any]:
    import pyarrow.parquet as pq

    for path in sorted(root.glob("feats.*.parquet")):
        parquet = pq.ParquetFile(path)
        for group in range(parquet.num_row_groups):
            feats = parquet.read_row_group(group, columns=["feats"]).column("feats").combine_chunks()
            rows = feats.offsets.to_numpy()
            values = feats.values.values.to_numpy().reshape(-1, N_FEATS)
            for first, last in zip(rows[:-1], rows[1:]):
                yield values[first:last]


def read_corpus(root: Path) -> Iterator[Any]:
    import numpy as np

    import audiokit.corpus

    store = audiokit.corpus.open(root)
    for _, entry in store.items():
        yield np.array(entry.array)


READERS: dict[str, tuple[str, Callable[[Path], Iterator[Any]]]] = {
    "files": ("np.load of each (n_mels, n_frames) .npy", read_npy_files),
    "npy": ("np.load of each feats/hh/key.npy", read_npy_files),
    "shards": ("webdataset.WebDataset(tars).decode()", read_shards),
    "kaldi": ("kaldiio.load_scp(feats.scp)", read_kaldi),
    "parquet": ("pyarrow row groups -> (T, 80) views", read_parquet),
    "loop": ("np.load of each .npy", read_npy_files),
}


def fingerprint(array: Any) -> tuple[int, int]:
    import numpy as np

    a = np.ascontiguousarray(array, dtype=np.float32)
    if a.shape[0] == N_FEATS and a.shape[-1] != N_FEATS:  # the files store: (n_mels, n_frames)
        a = np.ascontiguousarray(a.T)
    return a.shape[0], zlib.crc32(a.data)


def read_table(outcomes: dict[str, Outcome], work: Path, lhotse_python: str | None) -> list[list[str]]:
    """Rows of the read-throughput table (one per store and reader)."""
    import kaldiio  # noqa: F401  (imported before the clocks start)
    import pyarrow.parquet  # noqa: F401
    import webdataset  # noqa: F401

    import audiokit.corpus  # noqa: F401

    reference = sorted(fingerprint(a) for a in read_npy_files(work / "ak-fbank-npy" / "feats"))
    rows = []

    def timed(label: str, reader: str, arrays: Iterator[Any], compare: str | None) -> None:
        """Time the reader's ``next()`` calls only; ``compare``: None to check every array against the npy store's
        (outside the clocks), else what to say instead."""
        nbytes = count = 0
        wall = cpu = 0.0
        prints = []
        while True:
            t0, c0 = time.perf_counter(), time.process_time()
            a = next(arrays, None)
            wall, cpu = wall + time.perf_counter() - t0, cpu + time.process_time() - c0
            if a is None:
                break
            nbytes += a.nbytes
            count += 1
            if compare is None:
                prints.append(fingerprint(a))
        same = compare or ("equal" if sorted(prints) == reference else "DIFFERENT")
        rows.append(
            [label, reader, str(count), f"{nbytes / 1e6:.0f}", f"{nbytes / 1e6 / wall:.0f}", f"{nbytes / 1e6 / cpu:.0f}", same]
        )

    for key, outcome in outcomes.items():
        c = outcome.contender
        if c.reader is None or c.reader.startswith("lhotse"):
            continue
        root = work / key
        what, fn = READERS[c.reader]
        if c.reader in ("files", "npy"):
            root = root / "feats" if c.reader == "npy" else root
        compare = "lossy (not compared)" if key.endswith("-c") else "other numbers" if c.peer else None
        timed(c.label, what, fn(root), compare)
        if not c.peer:
            timed(c.label, "audiokit.corpus.open(DIR)[id].array", read_corpus(work / key), compare)
    for key, outcome in outcomes.items():
        c = outcome.contender
        if c.reader and c.reader.startswith("lhotse") and lhotse_python:
            run = subprocess.run(
                [lhotse_python, str(HERE / "lhotse_batch.py"), "read", str(work / key)],
                capture_output=True,
                text=True,
                check=True,
                env=env1(PYTHONWARNINGS="ignore"),
            )
            r = json.loads(run.stdout.splitlines()[-1])
            mb = r["bytes"] / 1e6
            rows.append(
                [
                    c.label,
                    "cut.load_features()",
                    str(r["arrays"]),
                    f"{mb:.0f}",
                    f"{mb / r['seconds']:.0f}",
                    f"{mb / r['cpu_s']:.0f}",
                    "-",
                ]
            )
    return rows


# ---------------------------------------------------------------------- writers alone


def write_table(work: Path, n: int, lhotse_python: str | None, repeats: int = 3) -> list[list[str]]:
    """Rows of the write-throughput table: the first ``n`` fbank arrays through each writer alone (median of
    ``repeats``, writers alternated)."""
    import kaldiio
    import numpy as np
    import pyarrow.parquet  # noqa: F401  (imported before the clocks start)

    from audiokit.io.ark import ArkWriter
    from audiokit.io.npy import TimeMajorNpy
    from audiokit.io.parquet import ParquetWriter
    from audiokit.io.tar_shard import TarShardWriter

    paths = [p for _, p in npy_keys(work / "ak-fbank-npy")][:n]
    arrays = [(f"u{i:05d}", np.load(p)) for i, p in enumerate(paths)]
    total = sum(a.nbytes for _, a in arrays) / 1e6
    dest = work / "writes"
    rows = []

    def meta(key: str, a: np.ndarray) -> dict[str, object]:
        return {"id": key, "duration": a.shape[0] / 100, "sr": SR, "source": f"{key}.flac", "n_frames": a.shape[0]}

    def container(make: Callable[[str], object], name: str) -> Callable[[], None]:
        def run() -> None:
            with make(str(dest / name)) as w:  # type: ignore[attr-defined]
                for key, a in arrays:
                    w.begin(key, *a.shape).write(a)
                    w.end(meta(key, a))

        return run

    def per_file_audiokit() -> None:
        for key, a in arrays:
            with TimeMajorNpy(str(dest / f"{key}.npy")) as w:
                w.begin(key, *a.shape).write(a)
                w.end(meta(key, a))

    def per_file_np_save() -> None:
        for key, a in arrays:
            np.save(dest / f"{key}.npy", a)

    def kaldiio_ark(method: int | None) -> Callable[[], None]:
        def run() -> None:
            kwargs = {"compression_method": method} if method else {}
            kaldiio.save_ark(str(dest / "kaldiio.ark"), dict(arrays), scp=str(dest / "kaldiio.scp"), **kwargs)

        return run

    writers: list[tuple[str, Callable[[], None]]] = [
        ("np.save, one .npy per array", per_file_np_save),
        ("audiokit TimeMajorNpy, one .npy per array (atomic)", per_file_audiokit),
        ("audiokit TarShardWriter (one shard, + <key>.json)", container(lambda p: TarShardWriter(p + ".tar"), "shard")),
        ("kaldiio.save_ark (+ scp)", kaldiio_ark(None)),
        ("audiokit ArkWriter", container(lambda p: ArkWriter(p + ".ark"), "ark")),
        ("kaldiio.save_ark compression_method=2", kaldiio_ark(2)),
        ("audiokit ArkWriter compress=True", container(lambda p: ArkWriter(p + ".ark", compress=True), "arkc")),
        ("audiokit ParquetWriter", container(lambda p: ParquetWriter(p + ".parquet", n_feats=N_FEATS), "pq")),
    ]
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in writers}
    for r in range(repeats):
        for label, fn in writers if r % 2 == 0 else writers[::-1]:
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[label].append((time.perf_counter() - t0, time.process_time() - c0))
    for label, _ in writers:
        wall = statistics.median(t[0] for t in times[label])
        cpu = statistics.median(t[1] for t in times[label])
        rows.append([label, str(len(arrays)), f"{total:.0f}", f"{total / wall:.0f}", f"{total / cpu:.0f}"])
    if lhotse_python:
        for storage in ("numpy_files", "lilcom_chunky"):
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            run = subprocess.run(
                [lhotse_python, str(HERE / "lhotse_batch.py"), "write", storage, str(dest), str(repeats)],
                input="\n".join(str(p) for p in paths) + "\n",
                capture_output=True,
                text=True,
                check=True,
                env=env1(PYTHONWARNINGS="ignore"),
            )
            r = json.loads(run.stdout.splitlines()[-1])
            rows.append(
                [
                    f"Lhotse {storage} writer",
                    str(r["arrays"]),
                    f"{total:.0f}",
                    f"{total / r['seconds']:.0f}",
                    f"{total / r['cpu_s']:.0f}",
                ]
            )
    shutil.rmtree(dest, ignore_errors=True)
    return rows


# ---------------------------------------------------------------------- the --scale rows (issue 10)


def scale_rows(root: Path, utts: list[Utterance], work: Path, audio: float) -> list[list[object]]:
    """``--jobs 2`` (npy store), the Dask scheduler (when installed) and a shell loop of ``audiokit mel``, once each."""
    from scale_contenders import dask_batch, shell_loop

    rows: list[list[object]] = []
    argv = [*AUDIOKIT, "batch", "mel", str(root), "--out", str(work / "jobs2"), "--jobs", "2", "-q", "--json"]
    run = measure(argv, log_dir=work / "logs" / "jobs2")
    rows.append(
        [
            "audiokit batch --jobs 2 (npy)",
            len(utts),
            f"{run.wall_s:.1f}",
            f"{run.cpu_s:.1f}",
            f"{audio / run.cpu_s:.0f}",
            f"{audio / run.wall_s / 2:.0f}",
            f"{run.rss_mib:.0f}",
        ]
    )
    dask = dask_batch([*AUDIOKIT, "batch", "mel", str(root), "--out", str(work / "dask"), "-q", "--json"], work)
    if dask is not None:
        rows.append(
            [
                "audiokit batch --scheduler (2 Dask workers)",
                len(utts),
                f"{dask.wall_s:.1f}",
                f"{dask.cpu_s:.1f}",
                f"{audio / dask.cpu_s:.0f}",
                f"{audio / dask.wall_s / 2:.0f}",
                f"{dask.rss_mib:.0f}",
            ]
        )
    few = utts[:100]
    shell = shell_loop(AUDIOKIT, [u.path for u in few], work / "shell")
    few_audio = sum(u.seconds for u in few)
    rows.append(
        [
            f"shell loop of `audiokit mel --npy` ({len(few)} files)",
            len(few),
            f"{shell.wall_s:.1f}",
            f"{shell.cpu_s:.1f}",
            f"{few_audio / shell.cpu_s:.0f}",
            f"{few_audio / shell.wall_s:.0f}",
            f"{shell.rss_mib:.0f}",
        ]
    )
    return rows


# ---------------------------------------------------------------------- report


def result_rows(outcomes: dict[str, Outcome], audio: float, n: int) -> tuple[list[list[str]], dict[str, float]]:
    best: dict[str, float] = {}
    for o in outcomes.values():
        if o.contender.peer:
            best[o.contender.feature] = max(best.get(o.contender.feature, 0.0), audio / o.cpu_s)
    rows = []
    for o in outcomes.values():
        c, rt = o.contender, audio / o.cpu_s
        ratio = rt / best[c.feature] if c.feature in best else float("nan")
        net = o.cpu_s - o.startup_cpu_s if o.cpu_s > o.startup_cpu_s else float("nan")
        rows.append(
            [
                c.feature,
                c.label,
                f"{o.cpu_s:.2f}",
                o.spread(),
                f"{rt:.0f}",
                f"{o.startup_cpu_s:.2f}",
                f"{audio / net:.0f}" if net == net else "-",
                f"{o.wall_s:.1f}",
                f"{o.files / n:.3f}",
                f"{o.nbytes / o.values:.3f}",
                f"{o.rss_mib:.0f}",
                "-" if c.peer else fmt_ratio(ratio),
            ]
        )
    return rows, best


def target_rows(outcomes: dict[str, Outcome], audio: float, best: dict[str, float], n: int) -> list[list[str]]:
    checks: list[tuple[str, float, float, bool]] = []
    best_any = max(best.values(), default=float("nan"))
    for feature in (LOGMEL, FBANK):
        for store in ("shards", "npy"):
            if f"ak-{feature}-{store}" not in outcomes:
                continue
            o = outcomes[f"ak-{feature}-{store}"]
            rt = audio / o.cpu_s
            checks.append((f"{feature} --store {store}: x real time per CPU s", rt, TARGET_RT, True))
            if feature in best:
                checks.append((f"{feature} --store {store} / best {feature} peer", rt / best[feature], TARGET_PEER, True))
            checks.append((f"{feature} --store {store} / best peer of either feature", rt / best_any, TARGET_PEER, True))
    for feature in (LOGMEL, FBANK):
        if f"ak-{feature}-shards" not in outcomes:
            continue
        o = outcomes[f"ak-{feature}-shards"]
        checks.append((f"{feature} --store shards: files per utterance", o.files / n, TARGET_FILES, False))
    peak = max(o.rss_mib for o in outcomes.values() if not o.contender.peer)
    checks.append(("peak RSS of an audiokit batch process (MiB)", peak, TARGET_RSS, False))
    return [
        [what, f"{'>=' if higher else '<='} {goal:g}", f"{value:.3g}", target_status(value, goal, higher_is_better=higher)]
        for what, value, goal, higher in checks
    ]


def git_line() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True).stdout

    dirty = [line[3:] for line in git("status", "--short", "--untracked-files=no").splitlines() if line]
    return f"audiokit at {git('rev-parse', '--short', 'HEAD').strip()}" + (
        f", uncommitted changes in {', '.join(dirty)}" if dirty else ""
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1500, help="utterances in the corpus (default 1500, ~3.5 h)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of every contender (default 3; medians)")
    parser.add_argument("--cache", type=Path, help="folder to keep the generated corpus in (default: a temporary one)")
    parser.add_argument("--lhotse-python", default="/tmp/lhotse-venv/bin/python", help="Lhotse's venv's python")
    parser.add_argument("--io-utts", type=int, default=500, help="arrays for the writer table (default 500)")
    parser.add_argument("--only", nargs="*", help="contender keys to run (e.g. ak-fbank-npy knf); default all")
    parser.add_argument("--scale", action="store_true", help="also --jobs 2, 2 Dask workers, a shell loop (issue 10)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (outputs, logs)")
    args = parser.parse_args()

    lhotse_python = args.lhotse_python if Path(args.lhotse_python).exists() else None
    print(machine_line({"uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}))
    print(git_line())
    if lhotse_python is None:
        print(f"no {args.lhotse_python}: no Lhotse rows (see benchmarks/lhotse_batch.py)")
    cache = args.cache or Path(tempfile.mkdtemp(prefix="audiokit-bench-corpus-"))
    work = Path(tempfile.mkdtemp(prefix="audiokit-bench-batch-", dir=cache))
    try:
        t0 = time.perf_counter()
        root, utts = corpus(cache, args.files)
        tiny = cache / f"{root.name}-first"
        if not tiny.exists():
            (tiny / "spk00").mkdir(parents=True)
            shutil.copy(next(u.path for u in utts if u.path.suffix == ".flac"), tiny / "spk00" / "utt.flac")
        warm(utts)
        audio = sum(u.seconds for u in utts)
        print(f"corpus: {len(utts)} utterances, {audio / 3600:.2f} h, ready in {time.perf_counter() - t0:.1f} s ({root})")
        cs = [c for c in contenders(lhotse_python) if not args.only or c.key in args.only or c.key == "ak-fbank-npy"]
        t0 = time.perf_counter()
        outcomes, loads = run_all(cs, root, utts, tiny, work, args.repeats)
        print(
            f"timed runs: {time.perf_counter() - t0:.0f} s; load average (1 min) after each run: "
            f"{min(loads):.2f}-{max(loads):.2f}, median {statistics.median(loads):.2f} (2 cores: above ~1 other load shares them)"
        )
        rows, best = result_rows(outcomes, audio, len(utts))
        headers = [
            "feature",
            "contender",
            "CPU s (median)",
            "min-max",
            "x RT / CPU s",
            "start-up CPU s",
            "x RT excl. start-up",
            "wall s",
            "files / utt",
            "bytes / element",
            "peak RSS MiB",
            "÷ best peer",
        ]
        title = f"{len(utts)} utterances, {audio / 3600:.2f} h, one thread, median of {args.repeats}"
        print_table(headers, rows, title=title)
        print_table(
            ["target (issue 19)", "goal", "measured", "status"], target_rows(outcomes, audio, best, len(utts)), title="targets"
        )
        read_headers = ["store", "reader", "arrays", "MB", "MB/s (wall)", "MB/s per CPU s", "arrays vs npy store"]
        print_table(
            read_headers, read_table(outcomes, work, lhotse_python), title="read throughput (fbank outputs, page cache warm)"
        )
        write_headers = ["writer", "arrays", "MB", "MB/s (wall)", "MB/s per CPU s"]
        print_table(
            write_headers,
            write_table(work, args.io_utts, lhotse_python),
            title="write throughput of the writers alone (fbank arrays in memory)",
        )
        if args.scale:
            scale_headers = [
                "contender",
                "files",
                "wall s",
                "CPU s",
                "x RT / CPU s",
                "x RT per core (wall)",
                "peak RSS/worker MiB",
            ]
            print_table(scale_headers, scale_rows(root, utts, work, audio), title="scale (log-mel, npy store), one run each")
        print(machine_line({"uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}))
    finally:
        if args.keep:
            print(f"# kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
        if args.cache is None:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The generated corpus of the batch benchmarks, cached, and one measured subprocess run.

Shared by ``bench_batch.py`` and ``profile_batch.py``; imports nothing of audiokit (numpy and soundfile only when
the corpus is made), so a script can limit threads before numpy is first imported.

* :func:`corpus` -- ``n`` utterances of 2-15 s (uniform, seeded), 16 kHz mono PCM_16, even ones FLAC, odd ones
  WAV, in nested folders ``spkNN/sessN/uttNNNNN.{flac,wav}`` (low-passed noise plus a tone); made once under a
  cache folder (``corpus-<n>-seed<seed>/``, with ``corpus.json`` listing every file and its sample count, written
  last, so a corpus half made by a killed run is made again).
* :func:`measure` -- run an argv once: CPU seconds (user + sys of the process tree, from the change of
  ``getrusage(RUSAGE_CHILDREN)``), wall seconds and the peak RSS of the child (``ru_maxrss`` that ``wait4``
  returns for it: the largest resident set of the child or of any descendant it waited for).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SR = 16000
#: Version of the recipe below: a change makes a new cache folder.
RECIPE = 2
THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "AUDIOKIT_FFT_THREADS": "1"}


@dataclass(frozen=True)
class Utterance:
    """One file of the corpus: its path and length in samples."""

    path: Path
    n_samples: int

    @property
    def seconds(self) -> float:
        return self.n_samples / SR


def _write(root: Path, n: int, seed: int) -> list[dict[str, object]]:
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(seed)
    listing = []
    for i in range(n):
        count = int(float(rng.uniform(2.0, 15.0)) * SR)
        t = np.arange(count) / SR
        white = rng.standard_normal(count).astype(np.float32)
        noise = np.convolve(white, np.ones(4, np.float32) / 4, mode="same")
        x = 0.1 * noise + 0.1 * np.sin(2 * np.pi * (200 + 50 * (i % 17)) * t)
        ext = "flac" if i % 2 == 0 else "wav"
        rel = f"spk{i % 40:02d}/sess{i % 3}/utt{i:05d}.{ext}"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        sf.write(root / rel, x.astype(np.float32), SR, subtype="PCM_16")
        listing.append({"path": rel, "n_samples": count})
    return sorted(listing, key=lambda u: str(u["path"]))


def corpus(cache: Path, n: int, seed: int = 0) -> tuple[Path, list[Utterance]]:
    """The corpus folder under ``cache`` and its utterances in path order (made on first use)."""
    root = cache / f"corpus-{n}-seed{seed}-r{RECIPE}"
    listing_file = root / "corpus.json"
    if not listing_file.exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        listing = _write(root, n, seed)
        tmp = listing_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(listing))
        os.replace(tmp, listing_file)
    listing = json.loads(listing_file.read_text())
    return root, [Utterance(root / str(u["path"]), int(u["n_samples"])) for u in listing]


def warm(utterances: list[Utterance]) -> None:
    """Read every file once, so that the page cache holds the corpus for every contender alike."""
    for u in utterances:
        u.path.read_bytes()


def env1(**extra: str) -> dict[str, str]:
    """This process's environment with one BLAS/OpenMP/FFT thread (plus ``extra``)."""
    return {**os.environ, **THREAD_ENV, **extra}


def children_cpu() -> float:
    """User + sys seconds of the reaped descendants of this process."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Measured:
    """One run: CPU seconds of the process tree, wall seconds, peak RSS (MiB) of the child, stdout, stderr tail."""

    cpu_s: float
    wall_s: float
    rss_mib: float
    stdout: str
    stderr: str


def measure(argv: list[str], *, stdin: str | None = None, env: dict[str, str] | None = None, log_dir: Path) -> Measured:
    """Run ``argv`` to the end (``stdin`` text fed to it); SystemExit with its stderr when it fails."""
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log_dir / "stdout.txt", log_dir / "stderr.txt"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        cpu0 = children_cpu()
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=err, env=env or env1())
        assert proc.stdin is not None
        if stdin:
            proc.stdin.write(stdin.encode())
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu = children_cpu() - cpu0
    stderr = err_path.read_text(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:6])} ... exited {proc.returncode}:\n{stderr[-3000:]}")
    return Measured(cpu, wall, usage.ru_maxrss / 1024, out_path.read_text(), stderr[-3000:])


def tree_files_bytes(root: Path) -> tuple[int, int]:
    """``(files, bytes)`` under ``root`` (every regular file, recursively)."""
    files = size = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            files += 1
            size += os.stat(os.path.join(dirpath, name)).st_size
    return files, size

"""Lhotse's side of ``bench_batch.py``: run in Lhotse's own virtual environment (it needs torch), never audiokit's.

::

    /tmp/lhotse-venv/bin/python benchmarks/lhotse_batch.py compute STORAGE OUT < paths.txt
    /tmp/lhotse-venv/bin/python benchmarks/lhotse_batch.py read OUT
    /tmp/lhotse-venv/bin/python benchmarks/lhotse_batch.py write STORAGE OUT [REPEATS] < npy_paths.txt

``compute``: ``Recording.from_file`` for each path on stdin, ``CutSet.from_manifests`` and
``cuts.compute_and_store_features(Fbank(), storage_path=OUT/feats, storage_type=WRITER, num_jobs=1)`` with
``STORAGE`` ``numpy_files`` (``NumpyFilesWriter``) or ``lilcom_chunky`` (``LilcomChunkyWriter``, Lhotse's
default), then ``OUT/cuts.jsonl.gz``.  Fbank at Lhotse 1.33's defaults: 80 bins, 25 ms / 10 ms povey, dither 0,
no snip-edges.  One torch thread.  Prints one JSON line: the process CPU seconds at the start of the work
(imports), of the work, the cuts, the total feature values.

``read``: loads every cut's features of ``OUT/cuts.jsonl.gz`` (``cut.load_features()``); ``write``: stores the
``.npy`` arrays named on stdin through the writer alone (median of ``REPEATS``); each prints ``{"seconds", "cpu_s",
"bytes", "arrays"}``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

T0 = time.process_time()


def _writer(storage: str):  # type: ignore[no-untyped-def]
    from lhotse import LilcomChunkyWriter, NumpyFilesWriter

    return {"numpy_files": NumpyFilesWriter, "lilcom_chunky": LilcomChunkyWriter}[storage]


def compute(storage: str, out: str) -> dict[str, float]:
    import torch

    torch.set_num_threads(1)
    from lhotse import CutSet, Fbank, Recording, RecordingSet

    start = time.process_time()
    paths = [line for line in sys.stdin.read().splitlines() if line]
    recordings = RecordingSet.from_recordings(Recording.from_file(p) for p in paths)
    cuts = CutSet.from_manifests(recordings=recordings)
    cuts = cuts.compute_and_store_features(
        extractor=Fbank(), storage_path=f"{out}/feats", storage_type=_writer(storage), num_jobs=1
    )
    cuts.to_file(f"{out}/cuts.jsonl.gz")
    values = sum(c.features.num_frames * c.features.num_features for c in cuts)
    return {"import_cpu_s": start - T0, "work_cpu_s": time.process_time() - start, "cuts": len(cuts), "values": values}


def read(out: str) -> dict[str, float]:
    from lhotse import CutSet

    cuts = CutSet.from_file(f"{out}/cuts.jsonl.gz")
    t0, c0 = time.perf_counter(), time.process_time()
    nbytes = arrays = 0
    for cut in cuts:
        nbytes += cut.load_features().nbytes
        arrays += 1
    return {"seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "bytes": nbytes, "arrays": arrays}


def write(storage: str, out: str, repeats: str = "1") -> dict[str, float]:
    import shutil
    import statistics

    import numpy as np

    arrays = [(f"u{i}", np.load(p)) for i, p in enumerate(line for line in sys.stdin.read().splitlines() if line)]
    writer_class = _writer(storage)
    walls, cpus = [], []
    for _ in range(int(repeats)):
        shutil.rmtree(f"{out}/feats", ignore_errors=True)
        t0, c0 = time.perf_counter(), time.process_time()
        with writer_class(f"{out}/feats") as writer:
            for key, array in arrays:
                writer.write(key, array)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return {
        "seconds": statistics.median(walls),
        "cpu_s": statistics.median(cpus),
        "bytes": sum(a.nbytes for _, a in arrays),
        "arrays": len(arrays),
    }


def main() -> None:
    mode, *rest = sys.argv[1:]
    modes: dict[str, Callable[..., dict[str, float]]] = {"compute": compute, "read": read, "write": write}
    result = modes[mode](*rest)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

"""A long spectrogram/mel picture computed in two frame ranges on two threads (issue 23: drawing speed).

The picture of a (log-)spectrogram needs only the display image: the maximum, per pixel column, of the frames it
covers (:class:`~audiokit.plot.pooling.ColumnPooler`).  Uncentred frames ``[m·H, m·H + n_fft)`` of one range
depend on that range's samples alone, so frames ``[0, M/2)`` and ``[M/2, M)`` are computed by two front ends, each
reading its own samples through its own handle of the file, and the two pooled images are merged by a maximum.
FFTW, libsndfile and numpy's large loops release the GIL, so the two ranges run on two cores.

The frames are bit-identical to the one-pass ones whatever the split (the STFT of a frame depends on its samples
only: checked over split points and block sizes in ``tests/pipelines/test_timefreq_split.py``), and the split
point is a function of the frame count alone: the PNG's bytes are the same on any machine, any core count.

Only the PNG-only jobs that need no chain take this path: no ``.npy``, no features, no ``--complex``, no
``--center`` (its padding ties the first frames to the start), one or two channels, a local file that can be
opened twice, at least :data:`SPLIT_MIN_FRAMES` frames.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ..io.reader import BLOCK_SAMPLES
from .stft_frontend import StftFrontEnd, pick_channels

__all__ = ["SPLIT_MIN_FRAMES", "THREADS", "pool_in_ranges", "splittable"]

#: Frames below which one pass is as fast (the second file handle and thread cost ~1 ms; 8192 frames of 2048 ~40 ms).
SPLIT_MIN_FRAMES = 8192
#: Ranges (and threads): two, whatever the core count, so the split -- and so the bytes -- never depend on the machine.
THREADS = 2
#: Channels at most: each range holds its own pooled images (rows x width float64 per channel).
MAX_CHANNELS = 2


def splittable(job: Any, path: str, png_path: str | None, npy_path: str | None) -> bool:
    """Whether ``job`` (the pipeline's ``_Job``) may draw its PNG by :func:`pool_in_ranges`."""
    from ..io import is_stdio
    from ..io.remote import is_url

    parsed = job.parsed
    return (
        png_path is not None
        and npy_path is None
        and not parsed.features
        and not parsed.want_complex
        and not job.frontend.plan.center
        and job.channels <= MAX_CHANNELS
        and job.n_frames >= SPLIT_MIN_FRAMES
        and job.source is job.opened  # not a --pad-or-trim view
        and not is_stdio(path)
        and not is_url(path)
        and os.path.isfile(path)
    )


def pool_in_ranges(
    job: Any,
    poolers: list[Any],
    reopen: Callable[[], AbstractContextManager[Any]],
    progress: Callable[[int], None],
    beyond: type[Exception],
    safe_peak: float,
) -> bool:
    """Pool the job's frames into ``poolers`` (one per channel) in :data:`THREADS` ranges; return whether any
    sample was non-zero.

    ``reopen()`` opens the input again (a context manager giving an AudioSource); ``progress(n)`` is told the
    samples read (under a lock); ``beyond`` is raised, as the one-pass job raises it, when a float input exceeds
    ``safe_peak`` (:data:`~audiokit.pipelines.timefreq.SAFE_PEAK`) in single precision.  An error in a range stops the other one
    and is raised here.
    """
    from concurrent.futures import ThreadPoolExecutor  # here: ~5 ms of imports a short job does not pay

    from ..plot import ColumnPooler

    M, fe = job.n_frames, job.frontend
    hop, n_fft = fe.hop_length, fe.plan.n_fft
    bounds = [M * j // THREADS for j in range(THREADS + 1)]
    rows, width = poolers[0].image.shape[0], poolers[0].image.shape[1]
    tf = job.parsed.tf
    check_peak = job.source.is_float and job.dtype == "float32"
    lock, stop = threading.Lock(), threading.Event()

    def one_range(j: int) -> tuple[list[Any], bool]:
        first, last = bounds[j], bounds[j + 1]
        local = [ColumnPooler(rows, M, width, start=first) for _ in poolers]
        heard = False
        with reopen() as source:
            front = StftFrontEnd(job.parsed, source, job.dtype)
            front.start()
            n = (last - first - 1) * hop + n_fft
            for block in source.blocks(BLOCK_SAMPLES, dtype=front.read_dtype, start=first * hop, n_samples=n):
                if stop.is_set():
                    break
                if check_peak and block.size and float(np.abs(block).max()) > safe_peak:
                    raise beyond
                heard = heard or bool(np.any(block))
                chunk = front.push(pick_channels(block, tf.channel, tf.mix))
                for c, pooler in enumerate(local):
                    pooler.add(chunk[c])
                with lock:
                    progress(block.shape[1])
            chunk = front.finish()
            for c, pooler in enumerate(local):
                pooler.add(chunk[c])
        return local, heard

    with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="audiokit-range") as pool:
        futures = [pool.submit(one_range, j) for j in range(THREADS)]
        try:
            results = [f.result() for f in futures]
        except BaseException:
            stop.set()
            raise
    for local, _ in results:
        for pooler, part in zip(poolers, local, strict=True):
            pooler.merge(part)
    return any(heard for _, heard in results)

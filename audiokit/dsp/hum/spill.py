"""Where the hum analysis keeps its per-frame arrays: in memory, or in a temporary file when they are large.

The analysis (:mod:`~audiokit.dsp.hum.analysis`, :mod:`~audiokit.dsp.hum.fit`) and the meter
(:mod:`~audiokit.dsp.hum.meter`) keep arrays shaped ``(channels, K, M)`` or ``(rows, M)``, one value per
frame: they grow with the length of the signal (4 h of 16 kHz mono, 40 harmonics, 115 200 short frames:
74 MB for one complex128 array, some 260 MB for all of them: ~18 kB per second per channel).

* :func:`frame_array` returns a zero array; beyond :data:`SPILL_BYTES` it is an ordinary ndarray over a
  shared mapping of an unlinked temporary file (in :func:`tempfile.gettempdir`, allocated in full first, so
  that a full disk is an :class:`~audiokit.errors.OutputError` before any work, never a ``SIGBUS`` later).
  The file goes when the last array over it goes.
* :func:`release` drops an array's pages from the process (``madvise(MADV_DONTNEED)``; the data stays in
  the file, i.e. in the kernel's page cache until it is written back): code that walks such an array a
  few rows or a block of frames at a time calls it after each piece, so that the resident memory holds
  one piece, not the whole array.  A no-op for arrays in memory.
* :func:`row_pieces` cuts rows into pieces of at most :data:`PIECE_BYTES` of complex128 each (whole rows).

Where an array lives changes no number: the same operations run on the same values.
"""

from __future__ import annotations

import errno
import math
import mmap
import os
import tempfile

import numpy as np
from numpy.typing import DTypeLike

from ...errors import OutputError

__all__ = ["PIECE_BYTES", "SPILL_BYTES", "frame_array", "is_spilled", "release", "row_pieces", "split_rows"]

#: Arrays larger than this (bytes) live in a temporary file (:func:`frame_array`).
SPILL_BYTES = 1 << 20
#: Rows walked together hold at most this many bytes of complex128 per array (:func:`row_pieces`).
PIECE_BYTES = 512 << 10

_COMPLEX_BYTES = 16
_UNSUPPORTED = {errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}  # posix_fallocate refused by the file system


def frame_array(shape: tuple[int, ...], dtype: DTypeLike) -> np.ndarray:
    """A zero array of ``shape`` and ``dtype``: in memory up to :data:`SPILL_BYTES`, else over a temporary file.

    Raises
    ------
    OutputError
        The temporary file cannot be created or given its size (full or read-only disk; exit 4), naming the
        temporary folder.
    """
    dt = np.dtype(dtype)
    nbytes = math.prod(shape) * dt.itemsize
    if nbytes <= SPILL_BYTES:
        return np.zeros(shape, dt)
    folder = tempfile.gettempdir()
    try:
        with tempfile.TemporaryFile(prefix="audiokit-hum-") as f:
            try:
                os.posix_fallocate(f.fileno(), 0, nbytes)
            except OSError as exc:
                if exc.errno not in _UNSUPPORTED:
                    raise
                f.truncate(nbytes)  # no fallocate here (a full disk would then show as SIGBUS): sparse
            mm = mmap.mmap(f.fileno(), nbytes)  # keeps its own descriptor: the file lives as long as the mapping
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputError(
            f"cannot keep the hum analysis' frame arrays ({nbytes / 2**20:.0f} MiB) in a temporary file: {reason} "
            "(set TMPDIR to a folder with room)",
            folder,
        ) from None
    return np.frombuffer(mm, dt).reshape(shape)


def _mapping(a: np.ndarray) -> mmap.mmap | None:
    base: object = a
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return base if isinstance(base, mmap.mmap) else None


def is_spilled(a: np.ndarray) -> bool:
    """True when ``a`` (or the array it is a view of) lives in a temporary file (:func:`frame_array`)."""
    return _mapping(a) is not None


def release(*arrays: np.ndarray) -> None:
    """Drop the resident pages of spilled arrays (their values stay); nothing for arrays in memory."""
    advice = getattr(mmap, "MADV_DONTNEED", None)
    for a in arrays:
        mm = _mapping(a)
        if mm is not None and advice is not None and not mm.closed:
            mm.madvise(advice)


def row_pieces(rows: slice, n_frames: int, *, whole: bool = False) -> list[slice]:
    """``rows`` in consecutive slices of whole rows, each at most :data:`PIECE_BYTES` of complex128 frames.

    Parameters
    ----------
    rows : slice
        ``start:stop`` rows (step 1).
    n_frames : int
        Frames per row, ``M``.
    whole : bool
        Return ``[rows]`` unsplit (callers whose maths is not row by row for short signals).

    Returns
    -------
    list of slice
        ``q = max(1, PIECE_BYTES // (16·M))`` rows each (the last may be shorter).
    """
    if whole:
        return [rows]
    q = max(1, PIECE_BYTES // max(1, _COMPLEX_BYTES * n_frames))
    return [slice(i, min(i + q, rows.stop)) for i in range(rows.start, rows.stop, q)]


def split_rows(indices: np.ndarray, n_frames: int, *, whole: bool = False) -> list[np.ndarray]:
    """The row ``indices`` in consecutive groups, sized as :func:`row_pieces` (``[indices]`` when ``whole``)."""
    if whole or not len(indices):
        return [indices]
    q = max(1, PIECE_BYTES // max(1, _COMPLEX_BYTES * n_frames))
    return [indices[i : i + q] for i in range(0, len(indices), q)]

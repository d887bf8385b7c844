"""The one interface of the corpus stores' container writers: members written frame by frame, committed together.

A corpus store (``audiokit batch --store shards|kaldi|parquet``) puts many utterances into one container file
(a tar shard, a Kaldi ark, a Parquet file).  Each container writer implements :class:`ContainerWriter`:

* ``with Writer(path, dtype=...) as w:`` -- the file is written under a temp name beside ``path``
  (:func:`audiokit.io.atomic.atomic_output`) and appears at ``path`` only when the block ends without an
  exception (flushed, ``fsync``-ed, renamed); on an exception nothing is left;
* ``sink = w.begin(key, n_frames, n_feats)`` then ``sink.write(frames)`` any number of times with ``(k, n_feats)``
  arrays in time order (cast to the writer's dtype, C order), then ``location = w.end(meta)``: the member is
  complete (exactly ``n_frames`` rows were written, else :class:`~audiokit.errors.OutputError`) and ``location``
  says where it sits in the file (a small JSON-able dict, e.g. ``{"offset": 1536, "nbytes": 327808}``);
* ``w.drop()`` instead of ``end`` discards the member begun (its input failed midway): the file is as if it had
  never been begun.

Members are time-major ``(n_frames, n_feats)`` arrays.  What a member's location means is the writer's own
(documented on it): it is what :mod:`audiokit.batch.corpus` needs to read one member back with one seek.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Literal, Protocol

import numpy as np

from ..errors import OutputError

__all__ = [
    "AtomicContainer",
    "ContainerWriter",
    "MemberSink",
    "OpenMember",
    "STORE_DTYPES",
    "TimeMajorFrames",
    "check_member_rows",
]

#: The dtypes a store may hold: float32 (lossless w.r.t. the single-file ``.npy``) and float16 (lossy, ``--dtype``).
STORE_DTYPES = ("float32", "float16")


class MemberSink(Protocol):
    """Where the frames of one member go (returned by :meth:`ContainerWriter.begin`)."""

    def write(self, frames: np.ndarray) -> None:
        """Append ``frames``, a ``(k, n_feats)`` array (rows in time order)."""


class ContainerWriter(Protocol):
    """A container of time-major members (see the module docstring)."""

    def __enter__(self) -> ContainerWriter: ...

    def __exit__(self, *exc: object) -> Any: ...

    def begin(self, key: str, n_frames: int, n_feats: int) -> MemberSink:
        """Start member ``key`` of ``n_frames`` rows of ``n_feats`` values."""

    def end(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Finish the member begun (``meta``: its JSON-able per-utterance record); return its location."""

    def drop(self) -> None:
        """Discard the member begun."""


#: ``open_member(n_frames, n_feats) -> MemberSink``: where a job writes one utterance of a store.
OpenMember = Callable[[int, int], MemberSink]


class TimeMajorFrames:
    """The ``.npy`` frame writer's interface (:class:`~audiokit.io.npy.NpyFrameWriter`) over a store member.

    A job gives ``(n_rows, k)`` chunks in time order; the member receives them as ``(k, n_rows)`` rows.  With
    ``buffered`` (a job that reworks its saved values after the last frame: ``--ref max``, utterance CMVN) the
    utterance is held in memory, ``(n_frames, n_rows)`` float32, and handed over when the ``with`` block ends;
    otherwise the rows stream straight through (memory: one chunk).

    Parameters
    ----------
    sink : MemberSink
        The member begun for this utterance.
    shape : tuple of int
        ``(n_rows, n_frames)``, as the ``.npy`` would have it.
    buffered : bool
        Hold the utterance so that :meth:`rewrite` can rework it.
    """

    def __init__(self, sink: MemberSink, shape: tuple[int, ...], buffered: bool) -> None:
        if len(shape) != 2:
            raise ValueError(f"a store member is (n_rows, n_frames), got shape {shape}")
        self.sink, self.shape, self.written = sink, (int(shape[0]), int(shape[1])), 0
        self._buffer = np.empty((self.shape[1], self.shape[0]), dtype=np.float32) if buffered else None

    def __enter__(self) -> TimeMajorFrames:
        return self

    def write(self, chunk: np.ndarray) -> None:
        """Append ``(n_rows, k)`` frames."""
        k = chunk.shape[-1]
        if self._buffer is None:
            self.sink.write(chunk.T)
        else:
            self._buffer[self.written : self.written + k] = chunk.T
        self.written += k

    def rewrite(self, transform: Callable[[np.ndarray], np.ndarray], *, chunk_frames: int = 4096) -> None:
        """Apply ``transform`` to the ``(k, n_rows)`` chunks written so far (in place; a buffered member only)."""
        if self._buffer is None:
            raise RuntimeError("internal: rewrite of a streamed store member")
        for first in range(0, self.written, chunk_frames):
            part = self._buffer[first : first + chunk_frames]
            part[...] = transform(part)

    def __exit__(self, exc_type: object, *exc: object) -> Literal[False]:
        if exc_type is None:
            check_member_rows(self.written, self.shape[1], "frames", "store member")
            if self._buffer is not None:
                self.sink.write(self._buffer)
        return False


class AtomicContainer:
    """The end of a container writer whose file is an :func:`~audiokit.io.atomic.atomic_output` temp file held by
    its ``_stack``: ``__exit__`` either commits the file or discards it (the ``with`` rule of the module docstring).

    A subclass sets ``path``, ``_stack`` (the :class:`contextlib.ExitStack` holding the temp file) and ``_member``
    (the member begun, with a ``key``, or None), and implements :meth:`_seal`.  At the end of the ``with`` block:

    * no exception: a member begun and not ended is an internal :class:`~audiokit.errors.OutputError`; else
      ``_seal(complete=True)`` makes the bytes whole and durable (flush, ``fsync``); if both pass, the stack's exit
      renames the temp file into place, else it removes it and the first failure is raised;
    * an exception: ``_seal(complete=False)`` releases what the writer holds, the stack's exit removes the temp file
      and the exception goes on (a failure of sealing is not raised over it).
    """

    path: str
    _stack: contextlib.ExitStack
    _member: Any

    def _seal(self, complete: bool) -> None:
        """Finish the file's bytes (``complete``) or only release what the writer holds; OutputError on failure."""
        raise NotImplementedError

    def __exit__(self, *exc_info: Any) -> Literal[False]:
        exc_type, exc, tb = exc_info
        failure: OutputError | None = None
        if exc_type is None and self._member is not None:
            failure = OutputError(f"internal: member {self._member.key!r} was begun but not ended", self.path)
        try:
            self._seal(exc_type is None and failure is None)
        except OutputError as err:
            failure = failure or err
        self._member = None
        if failure is not None and exc_type is None:
            self._stack.__exit__(OutputError, failure, None)
            raise failure
        self._stack.__exit__(exc_type, exc, tb)
        return False


def check_member_rows(written: int, expected: int, key: str, path: str) -> None:
    """OutputError unless ``written == expected`` rows were given to member ``key`` of ``path``."""
    if written != expected:
        raise OutputError(f"internal: member {key!r} got {written} frames, expected {expected}", path)

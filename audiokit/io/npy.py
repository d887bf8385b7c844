"""``.npy`` arrays written incrementally, plus their JSON sidecar.

A spectrogram is produced frame by frame, but ``.npy`` stores C-ordered
arrays whose last axis (frames) varies fastest.  :class:`NpyFrameWriter`
therefore writes a *Fortran-ordered* array (the header says
``fortran_order: True``): then all values of one frame are contiguous on disk
and frames are appended in time order.  ``np.load`` returns the array with
the declared shape and correct values, so readers need not care.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np

from ..errors import OutputError
from .atomic import atomic_output, describe_os_error


class NpyFrameWriter:
    """Write an array shaped ``(..., n_frames)`` to ``.npy`` one chunk of frames at a time.

    Parameters
    ----------
    path : str or PathLike
        Destination (``"-"`` for stdout).
    shape : tuple of int
        Final shape, frames last: ``(n_freqs, n_frames)`` or ``(channels, n_freqs, n_frames)``.
    dtype : numpy dtype
        Stored dtype (e.g. float32, complex64).
    time_major : bool
        Declare the array as its reversed axes in C order, ``(n_frames, ..., first)`` -- e.g. ``(n_frames, n_rows)``
        -- instead of ``shape`` in Fortran order: the same bytes, the time-major header Kaldi/Lhotse/PyTorch readers
        expect (``--layout frames``).

    Notes
    -----
    A context manager: the file appears only when every frame was written
    (a short write is an error), atomically.
    """

    def __init__(self, path, shape: tuple[int, ...], dtype, *, time_major: bool = False) -> None:
        self.path = str(path)
        self.time_major = time_major
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.written = 0
        self._stack = contextlib.ExitStack()
        self._fh: BinaryIO | None = None

    @property
    def tmp_path(self) -> Path:
        """The temp file being written (valid inside the ``with`` block)."""
        return self._tmp

    def __enter__(self) -> NpyFrameWriter:
        self._tmp = self._stack.enter_context(atomic_output(self.path, suffix=".npy"))
        try:
            self._fh = open(self._tmp, "wb")
            shape = self.shape[::-1] if self.time_major else self.shape
            header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": not self.time_major, "shape": shape}
            np.lib.format.write_array_header_2_0(self._fh, header)
        except OSError as exc:
            self._stack.close()
            raise OutputError(describe_os_error(exc), self.path) from exc
        return self

    def write(self, chunk: np.ndarray) -> None:
        """Append frames: ``chunk`` shaped like ``shape`` but with any number of frames last."""
        if chunk.shape[:-1] != self.shape[:-1]:
            raise ValueError(f"chunk shape {chunk.shape} does not match {self.shape[:-1]} + (frames,)")
        # Fortran order of (..., frames) == C order of the reversed axes.
        data = np.ascontiguousarray(chunk.transpose(tuple(range(chunk.ndim - 1, -1, -1))), dtype=self.dtype)
        assert self._fh is not None, "used outside its with block"
        try:
            self._fh.write(data.data)
        except OSError as exc:
            raise OutputError(describe_os_error(exc), self.path) from exc
        self.written += chunk.shape[-1]

    def rewrite(self, transform, *, chunk_frames: int = 4096) -> None:
        """Apply ``transform`` in place to every frame written so far, chunk by chunk.

        ``transform(chunk)`` receives a ``(frames, *reversed(shape[:-1]))``
        array (the on-disk frame-major layout) and returns one of the same
        shape; memory stays at one chunk.  Used for global references such as
        dB relative to the maximum, known only after the last frame.
        """
        assert self._fh is not None, "used outside its with block"
        self._fh.flush()
        frame_shape = self.shape[-2::-1]
        frame_bytes = int(np.prod(frame_shape, dtype=np.int64)) * self.dtype.itemsize
        with open(self._tmp, "r+b") as fh:
            np.lib.format.read_magic(fh)
            np.lib.format.read_array_header_2_0(fh)
            start = fh.tell()
            for first in range(0, self.written, chunk_frames):
                count = min(chunk_frames, self.written - first)
                fh.seek(start + first * frame_bytes)
                chunk = np.frombuffer(fh.read(count * frame_bytes), dtype=self.dtype).reshape((count, *frame_shape))
                fh.seek(start + first * frame_bytes)
                fh.write(np.ascontiguousarray(transform(chunk), dtype=self.dtype).data)

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        failure = None
        try:
            assert self._fh is not None, "used outside its with block"
            self._fh.close()
        except OSError as err:
            failure = OutputError(describe_os_error(err), self.path)
        if exc_type is None and failure is None and self.written != self.shape[-1]:
            failure = OutputError(f"internal: wrote {self.written} frames, expected {self.shape[-1]}", self.path)
        if exc_type is None and failure is not None:
            exc_type, exc, tb = OutputError, failure, None
        self._stack.__exit__(exc_type, exc, tb)
        if failure is not None:
            raise failure
        return False


def sidecar_path(npy_path: str | os.PathLike) -> Path:
    """The JSON sidecar beside an array: ``mel.npy`` → ``mel.json``."""
    return Path(npy_path).with_suffix(".json")


def write_sidecar(npy_path: str | os.PathLike, metadata: dict) -> Path:
    """Write ``metadata`` as pretty JSON beside ``npy_path`` (atomically); return its path."""
    from .atomic import write_text_atomic

    path = sidecar_path(npy_path)
    write_text_atomic(path, json.dumps(metadata, indent=2) + "\n")
    return path


def save_npy(npy_path: str | os.PathLike, array: np.ndarray, metadata: dict) -> Path:
    """Save ``array`` as ``.npy`` and ``metadata`` as its JSON sidecar, each atomically; return the sidecar path."""
    import io

    from .atomic import write_bytes_atomic

    buffer = io.BytesIO()
    np.save(buffer, array)
    write_bytes_atomic(npy_path, buffer.getvalue())
    return write_sidecar(npy_path, metadata)


def read_sidecar(npy_path: str | os.PathLike) -> dict:
    """Read the JSON sidecar of an array written by audiokit."""
    from ..errors import InputError

    path = sidecar_path(npy_path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"missing sidecar {path.name} (written beside the .npy by audiokit)", npy_path) from None
    except RecursionError:
        raise InputError(f"cannot read sidecar {path.name}: JSON nested too deep", npy_path) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read sidecar {path.name}: {_one_line(exc)}", npy_path) from None


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (numpy and json messages may span several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def map_npy(path: str | os.PathLike) -> np.ndarray:
    """Memory-map the ``.npy`` array at ``path`` (read-only); anything that is not one is an InputError naming it.

    A ``.npz`` archive renamed ``.npy``, a header that is not a Python literal (an unbalanced parenthesis, a bad
    number), a pickled object array or a file shorter than its header says: one line each, never numpy's traceback
    or a bare ``SyntaxWarning``.

    Raises
    ------
    InputError
        ``no such file``, or ``not a readable .npy array: <reason>``.
    """
    import tokenize
    import warnings

    from ..errors import InputError

    try:
        with warnings.catch_warnings():
            # numpy's header parser compiles the header text: "invalid escape sequence" warnings
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            array = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except (SyntaxError, tokenize.TokenError, OverflowError, RecursionError):
        raise InputError("not a readable .npy array: its header is not a valid Python literal", path) from None
    except (OSError, ValueError, EOFError) as exc:
        raise InputError(f"not a readable .npy array: {_one_line(exc) if str(exc) else 'empty file'}", path) from None
    if not isinstance(array, np.ndarray):  # np.load opens a zip (.npz) whatever its name
        array.close()
        raise InputError("is a .npz archive of several arrays, not a .npy array", path)
    return array


class TimeMajorNpy:
    """One time-major ``(n_frames, n_feats)`` ``.npy`` written row by row, atomically (the ``npy`` store's file).

    A :class:`~audiokit.io.members.ContainerWriter` of one member: the bytes are ``np.save``'s for the same C-order
    array (format 1.0 header), so ``np.load(path, mmap_mode="r")`` maps it.  The file appears at ``path`` when the
    ``with`` block ends after :meth:`end`; :meth:`drop` or an exception leaves nothing.

    Parameters
    ----------
    path : str
        Destination ``.npy``.
    dtype : {"float32", "float16"}
        Stored dtype; rows are cast to it.
    """

    def __init__(self, path: str, *, dtype: str = "float32") -> None:
        self.path, self.dtype = str(path), np.dtype(dtype)
        self._stack = contextlib.ExitStack()
        self._fh: BinaryIO | None = None
        self._rows = self._written = 0
        self._ended = False

    def __enter__(self) -> Any:
        # the temp file is made here, outside the job's own ``outputs_together`` block (which would defer the rename)
        self._tmp = self._stack.enter_context(atomic_output(self.path, suffix=".npy"))
        return self

    def begin(self, key: str, n_frames: int, n_feats: int) -> TimeMajorNpy:
        """Start the file's one member (``key`` names it in errors only)."""
        self._key, self._rows, self._feats = key, int(n_frames), int(n_feats)
        try:
            self._fh = open(self._tmp, "wb")
            header = {
                "descr": np.lib.format.dtype_to_descr(self.dtype),
                "fortran_order": False,
                "shape": (self._rows, self._feats),
            }
            np.lib.format.write_array_header_1_0(self._fh, header)
            self._offset = self._fh.tell()
        except OSError as exc:
            self._stack.close()
            raise OutputError(describe_os_error(exc), self.path) from exc
        return self

    def write(self, frames: np.ndarray) -> None:
        """Append ``(k, n_feats)`` rows."""
        assert self._fh is not None, "write before begin"
        data = np.ascontiguousarray(frames, dtype=self.dtype)
        try:
            self._fh.write(data.data)
        except OSError as exc:
            raise OutputError(describe_os_error(exc), self.path) from exc
        self._written += data.shape[0]

    def end(self, meta: dict) -> dict:
        """Check the row count; the file is committed when the ``with`` block ends.  Location: ``{"offset": header
        bytes, "nbytes": array bytes}`` (the array is ``nbytes`` at ``offset``, C order)."""
        from .members import check_member_rows

        check_member_rows(self._written, self._rows, self._key, self.path)
        self._ended = True
        return {"offset": self._offset, "nbytes": self._rows * self._feats * self.dtype.itemsize}

    def drop(self) -> None:
        """Forget the member: the file will not be written."""
        self._ended = False

    def _close(self, failure: BaseException | None) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError as err:
                failure = failure or OutputError(describe_os_error(err), self.path)
            self._fh = None
        if failure is None:
            self._stack.close()
        else:
            self._stack.__exit__(type(failure), failure, None)

    def __exit__(self, *exc_info: Any) -> Literal[False]:
        exc_type, exc = exc_info[0], exc_info[1]
        if exc_type is None and self._ended:
            self._close(None)
        else:
            self._close(exc if exc is not None else OutputError("not ended", self.path))
        return False

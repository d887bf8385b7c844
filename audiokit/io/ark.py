"""Kaldi binary archives (``feats.ark``), their ``scp`` lines, text tables and the global ``cmvn.ark``.

An archive holds, per member, ``<key> `` followed by one binary Kaldi matrix: the marker ``"\\0B"``, a type
token and the body.  :class:`ArkWriter` writes them as a :class:`~audiokit.io.members.ContainerWriter`:

* uncompressed (default): a float matrix ``FM`` -- ``"\\0BFM "``, ``"\\4"`` + int32 rows, ``"\\4"`` + int32 columns,
  then the rows as little-endian float32, streamed frame by frame (memory: one block of frames);
* ``compress=True``: Kaldi's compressed matrix, method 2 (``kSpeechFeature``, token ``CM``), produced by
  ``kaldiio.save_ark(f, {key: array}, compression_method=2)`` itself, so the bytes are kaldiio's by
  construction; the member is buffered whole (the header holds each column's percentiles).

A member's location is ``{"offset": OFFSET, "nbytes": N}``: ``OFFSET`` is the byte Kaldi's ``scp`` line
``key feats.3.ark:OFFSET`` points at (the ``"\\0B"`` after ``"key "``) and ``N`` the matrix's size from there.

Accuracy of ``compress=True`` (Kaldi ``matrix/compressed-matrix.h``, ``kSpeechFeature``): each column stores its
0th, 25th, 75th and 100th percentiles as uint16 codes of the matrix's ``[min, max]`` and every value as one byte
in three linear ranges (codes 0-64, 64-192, 192-255), rounded to the nearest code.  The decoded value is
within half a code step of the original: per column ``max((p25-p0)/128, (p75-p25)/256, (p100-p75)/126)``, never
more than **(max - min)/126 of the utterance's matrix** (plus float32 rounding).  For log-mel features of
``examples/data/speech.wav`` (633 frames x 80 bins) the largest error is 0.645 dB for audiokit's default
log-mel (dB re 1, floor -100 dB; bound 1.01 dB) and 0.143 (natural log) for ``--compat kaldi`` fbank
(bound 0.26); the mean error is 0.095 dB and 0.022.  ``tests/io/test_ark.py`` asserts both bounds.
Members of fewer than 5 frames are stored exactly up to the uint16 grid (the rows are the percentiles).
A member of 0 frames is written uncompressed (``FM``, 0 x n_feats): kaldiio cannot compress an empty matrix.

``float16`` is refused: Kaldi has no half-precision matrix.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
from collections.abc import Iterable, Sequence
from typing import Any, BinaryIO

import numpy as np

from ..errors import OutputError, ParameterError
from .atomic import atomic_output, describe_os_error, write_bytes_atomic, write_text_atomic
from .members import STORE_DTYPES, AtomicContainer, check_member_rows

__all__ = [
    "ArkWriter",
    "FrameBuffer",
    "check_frames",
    "check_kaldi_key",
    "cmvn_stats",
    "scp_line",
    "write_matrix",
    "write_text_table",
]

#: Kaldi's binary-mode marker, the first bytes of every binary object (what an scp offset points at).
BINARY_MARKER = b"\0B"
#: Kaldi's compression method 2, ``kSpeechFeature`` (one byte per value, percentiles per column).
SPEECH_FEATURE = 2
_STREAM_BUFFER = 1 << 20
COMPRESS_HINT = "--compress needs kaldiio: pip install 'audiokit[stores]'"


def check_kaldi_key(key: str, path: str | os.PathLike | None = None) -> None:
    """ParameterError unless ``key`` is a Kaldi token: non-empty, no whitespace, no ASCII control character.

    This is Kaldi's ``IsToken`` (``util/text-utils.cc``): non-ASCII letters are allowed.
    """
    if not key or any(c.isspace() or (ord(c) < 128 and not c.isprintable()) for c in key):
        raise ParameterError(
            f"{key!r} is not a Kaldi key: keys must be non-empty, with no whitespace or control characters", path
        )


def _matrix_header(token: bytes, rows: int, cols: int) -> bytes:
    """``"\\0B"``, the type token (``FM``/``DM``) and the two int32 sizes of a binary Kaldi matrix."""
    return BINARY_MARKER + token + b" " + b"\4" + struct.pack("<i", rows) + b"\4" + struct.pack("<i", cols)


def check_frames(frames: np.ndarray, written: int, n_frames: int, n_feats: int, key: str, path: str) -> int:
    """Check a block given to member ``key`` (``(k, n_feats)``, room for ``k`` more rows); return ``k``.

    Raises
    ------
    OutputError
        (internal) A block of another shape, or more rows than the member was begun with.
    """
    if frames.ndim != 2 or frames.shape[1] != n_feats:
        raise OutputError(f"internal: member {key!r} got a block shaped {frames.shape}, expected (k, {n_feats})", path)
    if written + frames.shape[0] > n_frames:
        check_member_rows(written + frames.shape[0], n_frames, key, path)
    return int(frames.shape[0])


class FrameBuffer:
    """A member gathered whole, ``(n_frames, n_feats)`` in ``dtype``: for containers whose member is one cell.

    A :class:`~audiokit.io.members.MemberSink`; :meth:`array` returns the frames once all were given.
    """

    def __init__(self, key: str, n_frames: int, n_feats: int, dtype: np.dtype, path: str) -> None:
        self.key, self.n_frames, self.n_feats, self.path = key, n_frames, n_feats, path
        self.frames = np.empty((n_frames, n_feats), dtype=dtype)
        self.written = 0

    def write(self, frames: np.ndarray) -> None:
        """Append a ``(k, n_feats)`` block (cast to the buffer's dtype)."""
        count = check_frames(frames, self.written, self.n_frames, self.n_feats, self.key, self.path)
        self.frames[self.written : self.written + count] = frames
        self.written += count

    def array(self) -> np.ndarray:
        """The complete ``(n_frames, n_feats)`` member (OutputError when rows are missing)."""
        check_member_rows(self.written, self.n_frames, self.key, self.path)
        return self.frames


class _StreamedMatrix:
    """The rows of one ``FM`` member, written to the archive as they come."""

    def __init__(self, writer: ArkWriter, key: str, n_frames: int, n_feats: int) -> None:
        self.writer, self.key, self.n_frames, self.n_feats = writer, key, n_frames, n_feats
        self.written = 0

    def write(self, frames: np.ndarray) -> None:
        """Append a ``(k, n_feats)`` block as little-endian float32."""
        count = check_frames(frames, self.written, self.n_frames, self.n_feats, self.key, self.writer.path)
        self.writer._write(np.ascontiguousarray(frames, dtype="<f4").data)
        self.written += count


class ArkWriter(AtomicContainer):
    """A Kaldi binary archive of ``(n_frames, n_feats)`` float32 members (see the module docstring).

    Parameters
    ----------
    path : str or PathLike
        The ``.ark`` to write; it appears only when the ``with`` block ends without an exception.
    dtype : {"float32"}
        Stored precision; ``"float16"`` is a ParameterError (Kaldi has no half-precision matrix).
    compress : bool
        Kaldi compressed matrices (``kSpeechFeature``; needs kaldiio), byte for byte
        ``kaldiio.save_ark(f, {key: array}, compression_method=2)``; error bound in the module docstring.

    Raises
    ------
    ParameterError
        ``dtype`` not float32; ``compress`` without kaldiio installed; a key that is not a Kaldi token.
    OutputError
        The file cannot be written; a member given more or fewer rows than begun with (internal).
    """

    def __init__(self, path: str | os.PathLike, *, dtype: str = "float32", compress: bool = False) -> None:
        if dtype not in STORE_DTYPES:
            raise ParameterError(f"dtype {dtype!r} is not a store dtype; choose from {', '.join(STORE_DTYPES)}")
        if dtype != "float32":
            raise ParameterError(f"--store kaldi holds float32 (Kaldi has no {dtype} matrix); use --compress to save space")
        self.path = str(path)
        self.compress = bool(compress)
        self._save_ark = _kaldiio_save_ark() if self.compress else None
        self._stack = contextlib.ExitStack()
        self._fh: BinaryIO | None = None
        self._member: _StreamedMatrix | FrameBuffer | None = None
        self._start = 0
        self._offset = 0

    def __enter__(self) -> ArkWriter:
        tmp = self._stack.enter_context(atomic_output(self.path, suffix=".ark"))
        try:
            self._fh = self._stack.enter_context(open(tmp, "wb", buffering=_STREAM_BUFFER))
        except OSError as exc:
            self._stack.close()
            raise OutputError(describe_os_error(exc), self.path) from exc
        return self

    def _seal(self, complete: bool) -> None:
        """Flush and ``fsync`` the archive (``complete``); the stack closes it (see :class:`AtomicContainer`)."""
        if not complete:
            return
        try:
            assert self._fh is not None, "used outside its with block"
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as err:
            raise OutputError(describe_os_error(err), self.path) from None

    def _write(self, data: Any) -> None:
        assert self._fh is not None, "used outside its with block"
        try:
            self._fh.write(data)
        except OSError as exc:
            raise OutputError(describe_os_error(exc), self.path) from exc

    def _tell(self) -> int:
        assert self._fh is not None, "used outside its with block"
        return self._fh.tell()

    def begin(self, key: str, n_frames: int, n_feats: int) -> _StreamedMatrix | FrameBuffer:
        """Start member ``key`` of ``n_frames`` rows of ``n_feats`` values; return its sink."""
        if self._member is not None:
            raise OutputError(f"internal: member {key!r} begun before {self._member.key!r} ended", self.path)
        check_kaldi_key(key, self.path)
        self._start = self._tell()
        self._offset = self._start + len(key.encode("utf-8")) + 1
        if self.compress and n_frames > 0:
            # written whole by kaldiio at end(): the header needs every column's percentiles
            self._member = FrameBuffer(key, n_frames, n_feats, np.dtype("<f4"), self.path)
        else:
            self._write(key.encode("utf-8") + b" " + _matrix_header(b"FM", n_frames, n_feats))
            self._member = _StreamedMatrix(self, key, n_frames, n_feats)
        return self._member

    def end(self, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """Finish the member begun; return ``{"offset", "nbytes"}`` (``meta`` is not stored in an ark)."""
        member = self._member
        if member is None:
            raise OutputError("internal: end() without begin()", self.path)
        if isinstance(member, FrameBuffer):
            array = member.array()
            if not (np.isfinite(array.min()) and np.isfinite(array.max())):
                raise OutputError(f"member {member.key!r} holds NaN or infinity: a compressed matrix cannot store it", self.path)
            assert self._save_ark is not None
            try:
                self._save_ark(self._fh, {member.key: array}, compression_method=SPEECH_FEATURE)
            except OSError as exc:
                self._rewind()
                raise OutputError(describe_os_error(exc), self.path) from exc
        else:
            check_member_rows(member.written, member.n_frames, member.key, self.path)
        self._member = None
        return {"offset": self._offset, "nbytes": self._tell() - self._offset}

    def _rewind(self) -> None:
        """Cut the archive back to where the member begun starts."""
        assert self._fh is not None, "used outside its with block"
        try:
            self._fh.seek(self._start)
            self._fh.truncate()
        except OSError as exc:
            raise OutputError(describe_os_error(exc), self.path) from exc

    def drop(self) -> None:
        """Discard the member begun: the archive is as if it had never been begun."""
        if self._member is None:
            return
        self._member = None
        self._rewind()


def _kaldiio_save_ark() -> Any:
    """``kaldiio.save_ark`` (ParameterError naming the extra when kaldiio is missing)."""
    try:
        import kaldiio
    except ImportError as exc:
        raise ParameterError(COMPRESS_HINT) from exc
    return kaldiio.save_ark


def scp_line(key: str, ark_path: str | os.PathLike, offset: int) -> str:
    """One ``feats.scp`` line without its newline: ``"<key> <ark_path>:<offset>"`` (ParameterError on a bad key)."""
    check_kaldi_key(key)
    return f"{key} {os.fspath(ark_path)}:{int(offset)}"


def write_matrix(path: str | os.PathLike, matrix: np.ndarray) -> None:
    """Write one keyless binary Kaldi double matrix (``DM``) to ``path`` atomically, as ``compute-cmvn-stats`` does.

    ``kaldiio.load_mat(path)`` and Kaldi's ``copy-matrix`` read it back.

    Parameters
    ----------
    matrix : np.ndarray, shape (rows, cols)
        Cast to little-endian float64.
    """
    array = np.ascontiguousarray(matrix, dtype="<f8")
    if array.ndim != 2:
        raise ParameterError(f"a Kaldi matrix is 2-D; got shape {array.shape}", path)
    write_bytes_atomic(path, _matrix_header(b"DM", *array.shape) + array.tobytes())


def cmvn_stats(count: float, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """Global CMVN statistics in Kaldi's layout (``transform/cmvn.cc``, ``AccCmvnStats``).

    Parameters
    ----------
    count : float
        Number of frames accumulated.
    sums, sumsq : np.ndarray, shape (D,)
        Per-dimension sum and sum of squares of the features.

    Returns
    -------
    np.ndarray, shape (2, D + 1), float64
        Row 0: the sums then the count; row 1: the sums of squares then 0.
    """
    sums = np.asarray(sums, dtype=np.float64).reshape(-1)
    sumsq = np.asarray(sumsq, dtype=np.float64).reshape(-1)
    if sums.shape != sumsq.shape:
        raise ParameterError(f"sums ({sums.size}) and sums of squares ({sumsq.size}) differ in length")
    stats = np.zeros((2, sums.size + 1), dtype=np.float64)
    stats[0, :-1], stats[0, -1], stats[1, :-1] = sums, count, sumsq
    return stats


TableValue = str | int | float | Sequence[str]


def _table_text(value: TableValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return " ".join(value)


def write_text_table(path: str | os.PathLike, pairs: Iterable[tuple[str, TableValue]]) -> None:
    """Write a Kaldi text table (``utt2spk``, ``spk2utt``, ``utt2num_frames``, ``utt2dur``, ``feats.scp``) atomically.

    Lines are ``"<key> <value>"`` sorted by key in byte order (``LC_ALL=C sort``, what Kaldi's
    ``validate_data_dir.sh`` checks); a value is a string, a number (floats as their shortest exact repr) or a
    sequence of strings joined by spaces (``spk2utt``).

    Raises
    ------
    ParameterError
        A key that is not a Kaldi token, a key given twice, a value with a line break.
    """
    table: dict[str, str] = {}
    for key, value in pairs:
        check_kaldi_key(key, path)
        if key in table:
            raise ParameterError(f"key {key!r} appears twice in the table", path)
        text = _table_text(value)
        if "\n" in text or "\r" in text:
            raise ParameterError(f"the value of {key!r} holds a line break", path)
        table[key] = text
    ordered = sorted(table, key=lambda k: k.encode("utf-8"))
    write_text_atomic(path, "".join(f"{key} {table[key]}\n" for key in ordered))


def load_kaldi_matrix(path: str | os.PathLike, offset: int) -> np.ndarray:
    """The matrix (compressed or not) at byte ``offset`` of an ark, as ``feats.scp`` points at it (kaldiio decodes)."""
    try:
        import kaldiio
    except ImportError as exc:
        raise ParameterError(COMPRESS_HINT.replace("--compress", "reading Kaldi compressed matrices")) from exc
    return np.asarray(kaldiio.load_mat(f"{os.fspath(path)}:{int(offset)}"))


def matrix_from_bytes(data: bytes, n_frames: int, n_feats: int, *, compressed: bool, name: str) -> np.ndarray:
    """The ``(n_frames, n_feats)`` matrix in ``data``, the bytes :func:`read_matrix` reads at its offset (from
    ``"\\0B"`` on: a store's ranged read of one member in object storage); ``name`` names the ark in errors."""
    from ..errors import InputError

    if compressed:
        try:
            import kaldiio.matio
        except ImportError as exc:
            raise ParameterError(COMPRESS_HINT.replace("--compress", "reading Kaldi compressed matrices")) from exc
        try:
            matrix = np.asarray(kaldiio.matio.read_kaldi(io.BytesIO(data)))
        except Exception as exc:  # noqa: BLE001 (kaldiio asserts and raises ValueError on bytes that are no matrix)
            raise InputError(f"no compressed matrix at this member's offset (the ark changed?): {exc}", name) from None
        if matrix.shape != (n_frames, n_feats):
            raise InputError(f"the matrix is {matrix.shape}, the index says ({n_frames}, {n_feats})", name)
        return matrix
    expected = _matrix_header(b"FM", n_frames, n_feats)
    if data[: len(expected)] != expected or len(data) != len(expected) + 4 * n_frames * n_feats:
        raise InputError(f"no {n_frames}x{n_feats} float matrix at this member's offset (the ark changed?)", name)
    return np.frombuffer(data, dtype="<f4", offset=len(expected)).reshape(n_frames, n_feats)


def read_matrix(path: str | os.PathLike, offset: int, n_frames: int, n_feats: int, *, compressed: bool) -> np.ndarray:
    """The ``(n_frames, n_feats)`` matrix an :class:`ArkWriter` wrote at byte ``offset`` (``feats.scp``'s offset): a
    read-only memory map of a float matrix (its header checked against the one the writer writes), or kaldiio's
    decoding of a compressed one (:func:`load_kaldi_matrix`)."""
    from ..errors import InputError

    if compressed:
        return load_kaldi_matrix(path, offset)
    expected = _matrix_header(b"FM", n_frames, n_feats)
    with open(path, "rb") as fh:
        fh.seek(offset)
        head = fh.read(len(expected))
    if head != expected:
        raise InputError(f"no {n_frames}x{n_feats} float matrix at offset {offset} (the ark changed?)", path)
    return np.memmap(path, dtype="<f4", mode="r", offset=offset + len(expected), shape=(n_frames, n_feats))

"""Tar shards of time-major arrays (``audiokit batch --store shards``): WebDataset's layout, written frame by frame.

A shard is an uncompressed POSIX tar holding, per utterance and in this order, ``<key>.npy`` (the
``(n_frames, n_feats)`` array exactly as :func:`numpy.save` writes it: format version 1.0, C order, little-endian)
and ``<key>.json`` (the utterance's record, ``json.dumps(meta, sort_keys=True, separators=(",", ":")) + "\\n"``,
UTF-8).  It opens unchanged in ``webdataset.WebDataset``, in ``datasets.load_dataset("webdataset", ...)`` and, with
a cuts manifest beside it, in Lhotse's ``CutSet.from_shar``; one member is read back with one seek
(:func:`read_member`) or an ``np.memmap`` into the tar.

The bytes are deterministic: the same members give the same file in every process, Python and machine (the
``.npy`` header is numpy's own, :func:`numpy.lib.format.write_array_header_1_0`, so a numpy release that changed
that format would change it).  Every tar header is written here, not by :mod:`tarfile` (whose output has changed
between CPython releases):

* a 512-byte ustar header per member: mode ``0644``, uid/gid 0, uname/gname empty, mtime 0, type ``0`` (regular
  file), magic ``ustar\\0`` version ``00``, device fields NUL, no ``prefix``; numbers in zero-padded octal;
* a POSIX.1-2001 pax extended header (type ``x``, named ``././@PaxHeader`` as :mod:`tarfile` and star name it, mode
  0, the other fields as above) before a member only when ustar cannot hold it: a name longer than 100 bytes or not
  ASCII (record ``path``, UTF-8), a size of 8 GiB or more (record ``size``, the ustar field 0); the ustar name then
  holds the name's first 100 bytes, ASCII with ``?`` for other characters;
* data padded with NUL to 512 bytes, two zero blocks at the end, the file padded to a multiple of 10240 bytes
  (tar's record size, as GNU tar and :mod:`tarfile` write).

So the file equals what :mod:`tarfile` writes in ``PAX_FORMAT`` for the same members, with CPython releases that
leave the device fields of regular files NUL (3.11.7 does; the tests check it).  An array's data starts 64-byte
aligned (npy pads its header to a multiple of 64 bytes; tar data starts on a 512-byte block).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from io import BytesIO
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

import numpy as np

from ..errors import InputError, OutputError, ParameterError
from .atomic import atomic_output, describe_os_error
from .members import STORE_DTYPES, ContainerWriter, check_member_rows

__all__ = ["TarShardWriter", "item_id_of", "read_member", "shard_key"]

BLOCK = 512
#: tar's record size: the file is padded to a multiple of it (GNU tar's and tarfile's default, 20 blocks).
RECORD = 20 * BLOCK
#: The largest size a 12-byte octal ustar field holds (11 digits): 8 GiB - 1.
_USTAR_MAX_SIZE = 8**11 - 1
_NAME_LENGTH = 100
_PAX_NAME = b"././@PaxHeader"

# Characters a key never holds as such: "%" (the escape), "." (WebDataset's key/extension separator), "\\" (a path
# separator on Windows), control characters (C0, DEL, C1; NUL ends a ustar name) and surrogates (not UTF-8).
_ESCAPED = re.compile("[%.\\\\\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_HAS_SURROGATE = re.compile("[\ud800-\udfff]")


def shard_key(item_id: str) -> str:
    """The WebDataset key of ``item_id``: a member name up to its extension, reversible by :func:`item_id_of`.

    What the consumers do with a member name (read in their sources: webdataset 1.0.2, datasets 5.2.0, Lhotse 1.33):
    WebDataset (``webdataset/tariterators.py``, ``base_plus_ext``; ``datasets/packaged_modules/webdataset`` carries a
    copy) matches ``^((?:.*/|)[^.]+)[.]([^/]*)$``: the key is the folders plus the basename up to its first ``.``
    (which must not be empty) and consecutive members with one key form one sample; its ``tar_file_iterator`` skips
    names matching ``__[^/]*__($|/)`` (metadata).  ``datasets`` (``utils/file_utils.py``, ``ArchiveIterable._iter_tar``)
    skips members whose basename starts with ``.`` or ``__`` (hidden files).  Lhotse Shar
    (``lhotse/shar/readers/lazy.py``) asserts ``str(Path(name).parent / Path(name).stem) == cut.id``, so a key must
    survive ``pathlib``'s normalisation (empty parts vanish).  Hence the rule, applied to the id's characters:

    * ``%``, ``.``, ``\\``, control characters (U+0000-U+001F, U+007F-U+009F) become ``%XX`` escapes of their
      UTF-8 bytes (``.`` → ``%2E``, ``%`` → ``%25``); a surrogate-escaped byte (an undecodable byte of a path name,
      U+DC80-U+DCFF) becomes ``%XX`` of that byte;
    * ``/`` stays a folder separator when it stands between two non-empty parts; a leading, trailing or repeated
      ``/`` becomes ``%2F`` (``pathlib`` would drop it, and an empty basename has no key);
    * a part that starts with ``__`` gets its first ``_`` written ``%5F``;
    * everything else (letters, digits, spaces, punctuation, non-ASCII text) is kept.

    Parameters
    ----------
    item_id : str
        An utterance id, e.g. ``"spk1/utt.0001"``.

    Returns
    -------
    str
        Its key, e.g. ``"spk1/utt%2E0001"``.

    Raises
    ------
    ParameterError
        For an empty id, or one holding a surrogate that is no escaped byte (it has no UTF-8 form).
    """
    if not item_id:
        raise ParameterError("an empty id has no shard key")
    escaped = _ESCAPED.sub(_escape, item_id)
    parts = escaped.split("/")
    key = parts[0]
    for before, part in zip(parts, parts[1:]):
        key += ("/" if before and part else "%2F") + part
    key = "/".join("%5F" + part[1:] if part.startswith("__") else part for part in key.split("/"))
    if _HAS_SURROGATE.search(item_id) and item_id_of(key, check=False) != item_id:
        raise ParameterError(f"id {item_id!r}: its escaped bytes read back as another id; no reversible shard key")
    return key


def _escape(match: re.Match[str]) -> str:
    try:
        data = match.group().encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ParameterError(f"id holds the surrogate {match.group()!r}, which has no UTF-8 form") from None
    return "".join(f"%{byte:02X}" for byte in data)


def item_id_of(key: str, *, check: bool = True) -> str:
    """The id whose :func:`shard_key` is ``key`` (every ``%XX`` decoded; undecodable bytes as surrogates).

    Raises
    ------
    ParameterError
        When ``check`` and ``key`` is no key :func:`shard_key` writes (e.g. it holds a ``.`` or a bare ``%``).
    """
    from urllib.parse import unquote

    item_id = unquote(key, encoding="utf-8", errors="surrogateescape")
    if check and (not item_id or shard_key(item_id) != key):
        raise ParameterError(f"{key!r} is not a shard key (shard_key() of an id gives one)")
    return item_id


def _octal(value: int, width: int) -> bytes:
    """A ustar number field: ``width - 1`` zero-padded octal digits and a NUL."""
    return b"%0*o\0" % (width - 1, value)


def _text(value: bytes, width: int) -> bytes:
    return value[:width].ljust(width, b"\0")


def _ustar_header(name: bytes, size: int, typeflag: bytes, mode: int) -> bytes:
    """One 512-byte ustar header block (the fixed fields of the module docstring)."""
    head = b"".join(
        [
            _text(name, _NAME_LENGTH),
            _octal(mode, 8),
            _octal(0, 8),
            _octal(0, 8),
            _octal(size, 12),
            _octal(0, 12),
            b" " * 8,
            typeflag,
            _text(b"", 100),
            b"ustar\x0000",
            _text(b"", 32),
            _text(b"", 32),
            _text(b"", 8),
            _text(b"", 8),
            _text(b"", 155),
        ]
    ).ljust(BLOCK, b"\0")
    checksum = sum(head)
    return head[:148] + b"%06o\0" % checksum + head[155:]


def _pax_record(keyword: str, value: str) -> bytes:
    """``"<length> <keyword>=<value>\\n"``, UTF-8, whose decimal length counts the record itself."""
    body = f" {keyword}={value}\n".encode()
    length = len(body)
    while len(str(length)) + len(body) != length:
        length = len(str(length)) + len(body)
    return str(length).encode() + body


def member_header(name: str, size: int) -> bytes:
    """The header blocks of a regular member ``name`` of ``size`` bytes: ustar, after a pax header when needed.

    Parameters
    ----------
    name : str
        The member's name in the archive (``<key>.npy``).
    size : int
        Its data size in bytes (the data follows, padded to 512 bytes).

    Returns
    -------
    bytes
        512 or more bytes (a multiple of 512).
    """
    encoded = name.encode("utf-8")
    records = b""
    if not name.isascii() or len(encoded) > _NAME_LENGTH:
        records += _pax_record("path", name)
    if size > _USTAR_MAX_SIZE:
        records += _pax_record("size", str(size))
    header = _ustar_header(name.encode("ascii", "replace"), 0 if size > _USTAR_MAX_SIZE else size, b"0", 0o644)
    if not records:
        return header
    return _ustar_header(_PAX_NAME, len(records), b"x", 0) + records + _padding(len(records)) + header


def _padding(nbytes: int) -> bytes:
    """NUL bytes from ``nbytes`` up to the next 512-byte boundary."""
    return b"\0" * (-nbytes % BLOCK)


def _store_dtype(dtype: Any) -> np.dtype:
    """The little-endian numpy dtype of a store dtype name (``float32`` or ``float16``)."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in STORE_DTYPES:
        raise ParameterError(f"dtype {name!r} is not a store dtype; use one of {', '.join(STORE_DTYPES)}")
    return np.dtype(name).newbyteorder("<")


def npy_header(dtype: np.dtype, n_frames: int, n_feats: int) -> bytes:
    """The ``.npy`` header :func:`numpy.save` writes for a C-order ``(n_frames, n_feats)`` array of ``dtype``."""
    buffer = BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (n_frames, n_feats)}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


class _Member:
    """The member being written: its key, declared shape, offsets in the file and rows written so far."""

    def __init__(self, writer: TarShardWriter, key: str, n_frames: int, n_feats: int, start: int, data: int) -> None:
        self.writer = writer
        self.key = key
        self.n_frames = n_frames
        self.n_feats = n_feats
        self.start = start
        self.data = data
        self.written = 0

    def write(self, frames: np.ndarray) -> None:
        """Append ``frames``, a ``(k, n_feats)`` array, cast to the shard's dtype (rows in time order)."""
        self.writer._write_rows(self, frames)


class TarShardWriter:
    """Write one tar shard member by member, frame by frame (:class:`audiokit.io.members.ContainerWriter`).

    Parameters
    ----------
    path : str or PathLike
        The shard to create (``features.000000.tar``); it appears only when the ``with`` block ends without an
        exception, ``fsync``-ed, by one rename (:func:`audiokit.io.atomic.atomic_output`).
    dtype : {"float32", "float16"}
        The arrays' stored dtype (little-endian).

    Notes
    -----
    ``begin(key, n_frames, n_feats)`` writes the ``<key>.npy`` header (the size is known), the returned sink's
    ``write`` streams rows straight into the file (memory stays at one block of frames, whatever the length), and
    ``end(meta)`` pads the member and appends ``<key>.json``.  ``end`` returns the member's location::

        {"offset": O, "nbytes": N, "member": M}

    ``O`` is the byte offset in the tar of the first array value (so
    ``np.memmap(path, dtype, "r", O, (n_frames, n_feats))`` reads the array), ``N`` the array's data bytes
    (``n_frames * n_feats * itemsize``), ``M`` the offset of the member's first header block (its pax header when
    it has one), where a tar reader started at ``M`` finds ``<key>.npy``.  ``drop()`` truncates the file back to
    ``M``.  Keys are :func:`shard_key` values, each once per shard.
    """

    def __init__(self, path: str | os.PathLike, *, dtype: str = "float32") -> None:
        self.path = str(path)
        self.dtype = _store_dtype(dtype)
        self._stack = contextlib.ExitStack()
        self._fh: BinaryIO | None = None
        self._member: _Member | None = None
        self._keys: set[str] = set()
        self._size = 0

    @property
    def size(self) -> int:
        """Bytes in the shard so far (members ended or begun; not the end-of-archive blocks)."""
        return self._size

    def __enter__(self) -> TarShardWriter:
        tmp = self._stack.enter_context(atomic_output(self.path, suffix=".tar"))
        try:
            self._fh = self._stack.enter_context(open(tmp, "wb"))
        except OSError as exc:
            self._stack.close()
            raise OutputError(describe_os_error(exc), self.path) from exc
        return self

    def begin(self, key: str, n_frames: int, n_feats: int) -> _Member:
        """Start member ``<key>.npy`` of ``n_frames`` rows of ``n_feats`` values; return its sink."""
        if self._member is not None:
            raise OutputError(f"internal: member {key!r} begun before {self._member.key!r} ended or was dropped", self.path)
        item_id_of(key)
        if key in self._keys:
            raise OutputError(f"internal: member key {key!r} twice in one shard", self.path)
        if n_frames < 0 or n_feats < 0:
            raise OutputError(f"internal: member {key!r} of shape ({n_frames}, {n_feats})", self.path)
        npy = npy_header(self.dtype, int(n_frames), int(n_feats))
        nbytes = int(n_frames) * int(n_feats) * self.dtype.itemsize
        header = member_header(f"{key}.npy", len(npy) + nbytes)
        start = self._size
        self._put(header + npy)
        self._member = _Member(self, key, int(n_frames), int(n_feats), start, start + len(header) + len(npy))
        self._keys.add(key)
        return self._member

    def _write_rows(self, member: _Member, frames: np.ndarray) -> None:
        if member is not self._member:
            raise OutputError(f"internal: rows written to member {member.key!r} after it ended", self.path)
        if frames.ndim != 2 or frames.shape[1] != member.n_feats:
            raise OutputError(
                f"internal: rows of shape {frames.shape} for member {member.key!r} of {member.n_feats} values", self.path
            )
        if member.written + frames.shape[0] > member.n_frames:
            raise OutputError(f"internal: member {member.key!r} got more than the {member.n_frames} frames declared", self.path)
        self._put(np.ascontiguousarray(frames, dtype=self.dtype).data)
        member.written += frames.shape[0]

    def end(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Finish the member begun (exactly ``n_frames`` rows written), append ``<key>.json``; return the location."""
        member = self._require_member()
        check_member_rows(member.written, member.n_frames, member.key, self.path)
        try:
            record = (json.dumps(meta, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise OutputError(f"internal: the record of member {member.key!r} is not JSON: {exc}", self.path) from exc
        nbytes = member.n_frames * member.n_feats * self.dtype.itemsize
        json_header = member_header(f"{member.key}.json", len(record))
        self._put(_padding(self._size) + json_header + record + _padding(len(record)))
        self._member = None
        return {"offset": member.data, "nbytes": nbytes, "member": member.start}

    def drop(self) -> None:
        """Discard the member begun: the file is truncated back to where its header began."""
        member = self._require_member()
        assert self._fh is not None
        try:
            self._fh.seek(member.start)
            self._fh.truncate()
        except OSError as exc:
            raise OutputError(describe_os_error(exc), self.path) from exc
        self._size = member.start
        self._keys.discard(member.key)
        self._member = None

    def _require_member(self) -> _Member:
        if self._member is None:
            raise OutputError("internal: no member begun", self.path)
        return self._member

    def _put(self, data: bytes | memoryview) -> None:
        assert self._fh is not None, "used outside its with block"
        try:
            self._fh.write(data)
        except OSError as exc:
            raise OutputError(describe_os_error(exc), self.path) from exc
        self._size += memoryview(data).nbytes

    def __exit__(self, *exc: Any) -> Literal[False]:
        try:
            if exc[0] is None:
                if self._member is not None:
                    raise OutputError(f"internal: member {self._member.key!r} neither ended nor dropped", self.path)
                # two zero blocks end the archive; NUL up to a whole record, as tar writes
                end = self._size + 2 * BLOCK
                self._put(b"\0" * (end + (-end % RECORD) - self._size))
                assert self._fh is not None
                try:
                    self._fh.flush()
                    os.fsync(self._fh.fileno())
                except OSError as err:
                    raise OutputError(describe_os_error(err), self.path) from err
        except BaseException as failure:
            self._stack.__exit__(type(failure), failure, failure.__traceback__)
            raise
        self._stack.__exit__(*exc)
        return False


if TYPE_CHECKING:  # mypy checks that the class implements the one interface of the container writers
    _IMPLEMENTS: type[ContainerWriter] = TarShardWriter


def read_member(
    path: str | os.PathLike, location: dict[str, Any], n_frames: int, n_feats: int, dtype: str = "float32", *, mmap: bool = False
) -> np.ndarray:
    """Read one array member of a shard written by :class:`TarShardWriter`, by its location (one seek and one read).

    Parameters
    ----------
    path : str or PathLike
        The shard.
    location : dict
        What :meth:`TarShardWriter.end` returned (``offset`` and ``nbytes`` are used).
    n_frames, n_feats : int
        The member's shape.
    dtype : {"float32", "float16"}
        The shard's dtype.
    mmap : bool
        Return a read-only ``np.memmap`` into the tar instead of reading the bytes.

    Returns
    -------
    numpy.ndarray
        ``(n_frames, n_feats)``, C order, little-endian ``dtype``.

    Raises
    ------
    InputError
        When the shard cannot be read, is shorter than the location says, or the location's size does not match
        the shape and dtype.
    """
    dt = _store_dtype(dtype)
    offset, nbytes = int(location["offset"]), int(location["nbytes"])
    if nbytes != n_frames * n_feats * dt.itemsize:
        raise InputError(f"member of {nbytes} bytes is no ({n_frames}, {n_feats}) {dt.name} array", path)
    if not nbytes:
        return np.empty((n_frames, n_feats), dtype=dt)
    try:
        if mmap:
            if offset + nbytes > os.path.getsize(path):
                raise InputError(f"shard ends before byte {offset + nbytes} of the member", path)
            return np.memmap(path, dtype=dt, mode="r", offset=offset, shape=(n_frames, n_feats))
        out = np.empty((n_frames, n_feats), dtype=dt)
        with open(path, "rb", buffering=0) as fh:
            fh.seek(offset)
            view, got = out.data.cast("B"), 0
            while got < nbytes:
                chunk = fh.readinto(view[got:])
                if not chunk:
                    raise InputError(f"shard ends before byte {offset + nbytes} of the member", path)
                got += chunk
    except OSError as exc:
        raise InputError(describe_os_error(exc), path) from exc
    return out

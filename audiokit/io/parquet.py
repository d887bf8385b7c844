"""Parquet files of time-major features that Hugging Face ``datasets`` opens as ``Array2D`` with no conversion.

:class:`ParquetWriter` is a :class:`~audiokit.io.members.ContainerWriter`: one row per member, columns

==============  ==========================================  ===========================================
column          Arrow type                                  from
==============  ==========================================  ===========================================
``id``          string                                      ``meta["id"]`` (the key when absent)
``feats``       list<list<float32>> (float16 with ``dtype``) the member's ``(n_frames, n_feats)`` frames
``n_frames``    int32                                       the member's rows
``duration``    float64, seconds                            ``meta["duration"]``
``sr``          int32, Hz                                   ``meta["sr"]``
``speaker``     string, nullable                            ``meta.get("speaker")``
``source``      string                                      ``meta["source"]``
``start``       float64, seconds, nullable                  ``meta.get("start")``
==============  ==========================================  ===========================================

``feats`` is stored as ``datasets``' ``Array2D((None, n_feats), dtype)`` stores it: the storage type
``list<list<dtype>>`` (``features.py``, ``_ArrayXDExtensionType._generate_dtype``) with the Arrow extension
name ``datasets.features.features.Array2DExtensionType`` and its serialised ``[[null, n_feats], dtype]`` on the
field, and the schema metadata key ``b"huggingface"`` holding ``{"info": {"features": ...}}`` (what
``Features.arrow_schema`` writes).  So ``datasets.load_dataset("parquet", data_files=[...]).with_format("numpy")``
yields each ``feats`` as a ``(T, D)`` float32 ndarray (a float16 file too: ``datasets``' numpy formatter
up-casts floats unless given ``with_format("numpy", dtype=np.float16)``); pyarrow alone reads plain nested lists.

Row groups hold about :data:`ROW_GROUP_BYTES` (8 MiB) of features, whole members (or ``row_group_rows`` rows
when given): far below ``datasets``' 100 MB cap (``config.MAX_ROW_GROUP_SIZE``, and what its loader reads per
batch), and small because a corpus reader fetches one row by decoding its whole row group (:func:`read_row`:
~20 ms for (1000, 80) float32 members at 8 MiB, ~70 ms at 32 MiB, measured), while the footer stays small
(~17 KB per 480 MB).  The writer holds about three row groups in memory.  ``feats`` is written uncompressed,
without statistics or dictionary (floats neither compress with snappy nor repeat; 1.5-2x faster than
pyarrow's defaults), the small columns with snappy.  The bytes depend only on the members and
the pyarrow version: Parquet's footer holds no time (``created_by`` names the library).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

import numpy as np

from ..errors import OutputError, ParameterError
from .ark import FrameBuffer
from .atomic import atomic_output, describe_os_error
from .members import STORE_DTYPES, AtomicContainer

__all__ = ["ParquetWriter", "ROW_GROUP_BYTES", "hf_features", "read_row"]

#: Target bytes of features per row group (whole members; a larger member makes a row group of its own).
ROW_GROUP_BYTES = 8 << 20
PYARROW_HINT = "--store parquet needs pyarrow: pip install 'audiokit[stores]'"
#: The Arrow extension type ``datasets`` reads ``Array2D`` columns as.
HF_ARRAY2D = "datasets.features.features.Array2DExtensionType"
#: Arrow list offsets are int32: the values of one row group stay below this.
_MAX_VALUES = 2**31 - 1
_SCALARS = {
    "n_frames": "int32",
    "duration": "float64",
    "sr": "int32",
    "speaker": "string",
    "source": "string",
    "start": "float64",
}


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise ParameterError(PYARROW_HINT) from exc
    return pyarrow


def hf_features(n_feats: int, dtype: str) -> dict[str, Any]:
    """The ``datasets`` features of the file's columns, as ``Features.to_dict()`` writes them."""
    features: dict[str, Any] = {
        "id": {"dtype": "string", "_type": "Value"},
        "feats": {"shape": [None, int(n_feats)], "dtype": dtype, "_type": "Array2D"},
    }
    features.update({name: {"dtype": kind, "_type": "Value"} for name, kind in _SCALARS.items()})
    return features


def _schema(pa: Any, n_feats: int, dtype: str) -> Any:
    extension = {
        b"ARROW:extension:name": HF_ARRAY2D.encode(),
        b"ARROW:extension:metadata": json.dumps(((None, int(n_feats)), dtype)).encode(),
    }
    fields = [
        pa.field("id", pa.string()),
        pa.field("feats", pa.list_(pa.list_(pa.from_numpy_dtype(np.dtype(dtype)))), metadata=extension),
    ]
    fields += [pa.field(name, pa.type_for_alias(kind)) for name, kind in _SCALARS.items()]
    return pa.schema(fields, metadata={"huggingface": json.dumps({"info": {"features": hf_features(n_feats, dtype)}})})


class ParquetWriter(AtomicContainer):
    """One Parquet file of members, one row each (see the module docstring).

    Parameters
    ----------
    path : str or PathLike
        The ``.parquet`` to write; it appears only when the ``with`` block ends without an exception.
    dtype : {"float32", "float16"}
        Stored precision of ``feats``.
    n_feats : int
        Columns of every member (``D`` of ``Array2D((None, D))``).
    row_group_rows : int, optional
        Rows per row group; default: whole members up to :data:`ROW_GROUP_BYTES` of features.

    Raises
    ------
    ParameterError
        A dtype other than float32/float16, a bad ``n_feats``/``row_group_rows``, pyarrow not installed.
    OutputError
        The file cannot be written; a member given more or fewer rows than begun with, or another width.
    """

    def __init__(
        self, path: str | os.PathLike, *, dtype: str = "float32", n_feats: int, row_group_rows: int | None = None
    ) -> None:
        if dtype not in STORE_DTYPES:
            raise ParameterError(f"dtype {dtype!r} is not a store dtype; choose from {', '.join(STORE_DTYPES)}")
        if int(n_feats) != n_feats or n_feats < 1:
            raise ParameterError(f"n_feats must be a positive integer, got {n_feats!r}")
        if row_group_rows is not None and (int(row_group_rows) != row_group_rows or row_group_rows < 1):
            raise ParameterError(f"row_group_rows must be a positive integer, got {row_group_rows!r}")
        self.pa = _pyarrow()
        self.path = str(path)
        self.dtype = np.dtype(dtype)
        self.n_feats = int(n_feats)
        self.row_group_rows = row_group_rows
        self.schema = _schema(self.pa, self.n_feats, dtype)
        self._stack = contextlib.ExitStack()
        self._writer: Any = None
        self._tmp = ""
        self._member: FrameBuffer | None = None
        self._pending: list[tuple[np.ndarray, dict[str, Any]]] = []
        self._pending_values = 0
        self.rows = 0

    def __enter__(self) -> ParquetWriter:
        self._tmp = str(self._stack.enter_context(atomic_output(self.path, suffix=".parquet")))
        try:
            self._writer = self.pa.parquet.ParquetWriter(
                self._tmp,
                self.schema,
                compression={name: "none" if name == "feats" else "snappy" for name in self.schema.names},
                use_dictionary=["speaker"],
                write_statistics=[name for name in self.schema.names if name != "feats"],
            )
        except OSError as exc:
            self._stack.close()
            raise OutputError(describe_os_error(exc), self.path) from exc
        return self

    def _seal(self, complete: bool) -> None:
        """Write the pending row group and ``fsync`` (``complete``); close the Parquet writer in any case (see
        :class:`AtomicContainer`)."""
        failure = None
        if complete:
            try:
                self._flush()
            except OutputError as err:
                failure = err
        try:
            self._writer.close()
            if complete and failure is None:
                _fsync(self._tmp)
        except OSError as err:
            failure = failure or OutputError(describe_os_error(err), self.path)
        self._pending = []
        if failure is not None:
            raise failure

    def begin(self, key: str, n_frames: int, n_feats: int) -> FrameBuffer:
        """Start member ``key`` of ``n_frames`` rows of ``n_feats`` values; return its sink."""
        if self._member is not None:
            raise OutputError(f"internal: member {key!r} begun before {self._member.key!r} ended", self.path)
        if n_feats != self.n_feats:
            raise OutputError(f"internal: member {key!r} has {n_feats} features; this file holds {self.n_feats}", self.path)
        if n_frames * n_feats > _MAX_VALUES:
            raise OutputError(f"member {key!r} is too large for one Parquet cell ({n_frames} x {n_feats} values)", self.path)
        self._member = FrameBuffer(key, n_frames, n_feats, self.dtype, self.path)
        return self._member

    def end(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Finish the member begun with its record ``meta``; return ``{"row": its index in the file}``."""
        member = self._member
        if member is None:
            raise OutputError("internal: end() without begin()", self.path)
        frames = member.array()
        try:
            record = {
                "id": str(meta.get("id", member.key)),
                "n_frames": member.n_frames,
                "duration": float(meta["duration"]),
                "sr": int(meta["sr"]),
                "speaker": None if meta.get("speaker") is None else str(meta["speaker"]),
                "source": str(meta["source"]),
                "start": None if meta.get("start") is None else float(meta["start"]),
            }
        except KeyError as exc:
            raise OutputError(f"internal: the record of member {member.key!r} lacks {exc.args[0]!r}", self.path) from exc
        if self._pending and (self._pending_values + frames.size > _MAX_VALUES):
            self._flush()
        self._pending.append((frames, record))
        self._pending_values += frames.size
        self._member = None
        row = self.rows
        self.rows += 1
        full = (
            len(self._pending) >= self.row_group_rows
            if self.row_group_rows
            else self._pending_values * self.dtype.itemsize >= ROW_GROUP_BYTES
        )
        if full:
            self._flush()
        return {"row": row}

    def drop(self) -> None:
        """Discard the member begun."""
        self._member = None

    def _flush(self) -> None:
        """Write the pending members as one row group."""
        if not self._pending:
            return
        pa = self.pa
        arrays = [frames for frames, _ in self._pending]
        records = [record for _, record in self._pending]
        frame_counts = np.array([a.shape[0] for a in arrays], dtype=np.int64)
        values = pa.array(np.concatenate([a.reshape(-1) for a in arrays]))
        frames_type = self.schema.field("feats").type
        inner = pa.ListArray.from_arrays(
            pa.array(np.arange(0, int(frame_counts.sum()) * self.n_feats + 1, self.n_feats, dtype=np.int32)),
            values,
            type=frames_type.value_type,
        )
        outer = pa.ListArray.from_arrays(
            pa.array(np.concatenate([[0], np.cumsum(frame_counts)]).astype(np.int32)), inner, type=frames_type
        )
        columns = [pa.array([r["id"] for r in records], pa.string()), outer]
        columns += [pa.array([r[name] for r in records], self.schema.field(name).type) for name in _SCALARS]
        table = pa.Table.from_arrays(columns, schema=self.schema)
        try:
            self._writer.write_table(table, row_group_size=len(records))
        except OSError as exc:
            raise OutputError(describe_os_error(exc), self.path) from exc
        self._pending, self._pending_values = [], 0


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: The row group :func:`read_row` decoded last (reading a store in order decodes each group once, not once per row).
_LAST_GROUP: dict[str, Any] = {}


def read_row(path: str | os.PathLike, row: int, *, handle: Any = None, version: tuple[Any, ...] | None = None) -> dict[str, Any]:
    """Read row ``row`` of a file :class:`ParquetWriter` wrote, reading only the row group holding it (the last
    group read is kept, keyed by the file's path, size and mtime).

    ``handle`` is the file already opened as a ``pyarrow.parquet.ParquetFile`` (a remote one over fsspec, its
    footer read once: :mod:`audiokit.batch.stores.bucket`); ``path`` then only names it and ``version`` (its size
    and ETag) keys the kept group in place of the file's stat.

    Returns
    -------
    dict
        ``{"id": str, "feats": np.ndarray (n_frames, n_feats)}`` in the stored dtype (a view of the row
        group's buffer, read-only).

    Raises
    ------
    InputError
        The file cannot be read or has no such row.
    """
    from ..errors import InputError

    pa = _pyarrow()
    try:
        if version is None:
            st = os.stat(path)
            version = (st.st_size, st.st_mtime_ns)
        key = (os.fspath(path), *version)
        cached = _LAST_GROUP.get("group")
        if cached is not None and cached[0] == key and cached[1] <= row < cached[2]:
            _, first, _, table, feats, n_feats = cached
        else:
            if handle is None:
                handle = pa.parquet.ParquetFile(os.fspath(path))
            metadata = handle.metadata
            n_feats = int(json.loads(metadata.metadata[b"huggingface"])["info"]["features"]["feats"]["shape"][1])
            first = 0
            for group in range(metadata.num_row_groups):
                count = metadata.row_group(group).num_rows
                if first <= row < first + count:
                    table = handle.read_row_group(group, columns=["id", "feats"])
                    break
                first += count
            else:
                raise InputError(f"no row {row} (the file has {metadata.num_rows})", path)
            feats = table.column("feats").combine_chunks()
            if isinstance(feats, pa.ExtensionArray):  # when ``datasets`` is imported, its Array2D type is registered
                feats = feats.storage
            _LAST_GROUP["group"] = (key, first, first + count, table, feats, n_feats)
    except (OSError, KeyError, ValueError, pa.ArrowException) as exc:
        raise InputError(f"cannot read a row of this Parquet file: {exc}", path) from exc
    index = row - first
    frames = feats.offsets.to_numpy()[index : index + 2]
    value_offsets = feats.values.offsets.to_numpy()
    lo, hi = int(value_offsets[frames[0]]), int(value_offsets[frames[1]])
    flat = feats.values.values.slice(lo, hi - lo).to_numpy(zero_copy_only=True)
    return {"id": table.column("id")[index].as_py(), "feats": flat.reshape(-1, n_feats)}

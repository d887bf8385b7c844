"""The end of a ``with`` of the container writers that share :class:`audiokit.io.members.AtomicContainer`.

The member checks and an exception in the block are tested per writer (tests/io/test_ark.py, test_parquet.py);
here the failure of sealing itself: a disk that fills at the ``fsync`` of a complete file is one
:class:`~audiokit.errors.OutputError` naming the file, and nothing is left (no file, no temp file).
"""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from audiokit.errors import OutputError
from audiokit.io.ark import ArkWriter
from audiokit.io.members import AtomicContainer
from audiokit.io.parquet import ParquetWriter

WRITERS = {
    "ark": lambda path: ArkWriter(path / "feats.ark"),
    "parquet": lambda path: ParquetWriter(path / "feats.parquet", n_feats=4),
}
RECORD = {"duration": 0.03, "sr": 16000, "source": "a.wav"}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_a_disk_full_at_the_fsync_is_one_output_error_and_leaves_nothing(kind, tmp_path, monkeypatch):
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    writer = WRITERS[kind](tmp_path)
    assert isinstance(writer, AtomicContainer)
    with pytest.raises(OutputError) as caught:
        with writer:
            writer.begin("a", 3, 4).write(np.zeros((3, 4), np.float32))
            writer.end(RECORD)
            monkeypatch.setattr(os, "fsync", full)
    assert str(caught.value) == f"{writer.path}: disk full (no space left on device); nothing was written"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_the_same_file_without_a_failure(kind, tmp_path):
    """The control of the test above: the same block commits the file (so only the fsync made it fail)."""
    writer = WRITERS[kind](tmp_path)
    with writer:
        writer.begin("a", 3, 4).write(np.zeros((3, 4), np.float32))
        writer.end(RECORD)
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(writer.path)]

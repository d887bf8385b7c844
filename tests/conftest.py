"""Shared fixtures: a seeded rng and byte-level WAV crafting for odd and broken headers."""

from __future__ import annotations

import signal
import struct
from pathlib import Path

import numpy as np
import pytest

# A test run started in the background (`cmd &`, some CI runners) inherits SIGINT *ignored*, and so would every
# command the signal tests start (an ignored signal stays ignored across exec): their Ctrl-C would do nothing.
# Handled here, it is back to the default in the children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SEED = 20240611


def riff_wav(
    data: bytes = b"",
    *,
    channels: int = 1,
    sr: int = 16000,
    bits: int = 16,
    fmt_tag: int = 1,
    claimed_bytes: int | None = None,
    before_data: bytes = b"",
    trailing: bytes = b"",
) -> bytes:
    """Bytes of a canonical RIFF/WAVE file whose header fields we choose freely.

    ``claimed_bytes`` overrides the data chunk size (to lie about the length),
    ``before_data`` is inserted between the ``fmt `` and ``data`` chunks (already
    padded by the caller), ``trailing`` is appended after the (padded) data chunk.
    """
    block_align = channels * bits // 8
    fmt = struct.pack("<HHIIHH", fmt_tag, channels, sr, sr * block_align, block_align, bits)
    size = len(data) if claimed_bytes is None else claimed_bytes
    body = (
        b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + before_data
        + b"data"
        + struct.pack("<I", size)
        + data
        + (b"\0" if len(data) % 2 else b"")
        + trailing
    )
    return b"RIFF" + struct.pack("<I", len(body)) + body


def chunk(chunk_id: bytes, payload: bytes) -> bytes:
    """One RIFF chunk with its pad byte when the payload size is odd."""
    return chunk_id + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: every run draws the same numbers."""
    return np.random.default_rng(SEED)


@pytest.fixture
def craft_wav(tmp_path: Path):
    """``craft_wav(name, data, **header_fields) -> Path``: write :func:`riff_wav` bytes to tmp_path."""

    def make(name: str, data: bytes = b"", **fields) -> Path:
        path = tmp_path / name
        path.write_bytes(riff_wav(data, **fields))
        return path

    return make


@pytest.fixture
def wav_chunk():
    """The :func:`chunk` helper, as a fixture (tests do not import conftest)."""
    return chunk


@pytest.fixture
def pcm16():
    """``pcm16(codes) -> bytes``: little-endian int16 bytes of integer codes, shaped (n_samples, channels)."""

    def make(codes) -> bytes:
        return np.asarray(codes, dtype="<i2").tobytes()

    return make


@pytest.fixture
def cli(capsys):
    """``cli(*args) -> (exit_code, stdout_text, stderr_text)``, running ``audiokit.cli.app.main(argv)`` in this process.

    An ImportError of the CLI is raised here, so the tests using it error loudly (never a skip).
    """
    from audiokit.cli.app import main

    def call(*args) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return call

"""RIFF/WAVE bytes whose header fields the tests choose freely (odd, lying and broken headers)."""

from __future__ import annotations

import struct


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

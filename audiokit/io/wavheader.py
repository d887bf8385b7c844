"""A minimal RIFF/RF64 chunk scan, to check a WAV header against the file.

libsndfile quietly trusts or clamps some header fields; this scan lets the
reader give its own messages: a data chunk claiming more frames than the file
holds, zero channels, a zero sample rate.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

_UNKNOWN_SIZES = (0, 0xFFFFFFFF)


@dataclass(frozen=True)
class WavHeader:
    """What the ``fmt `` and ``data`` chunks of a WAV file say.

    Attributes
    ----------
    channels, sr, block_align, bits : int
        Fields of the ``fmt `` chunk (sr in Hz, block_align in bytes per frame).
    claimed_frames : int or None
        Frames the data chunk claims (None when the size is a streaming
        placeholder such as 0 or 0xFFFFFFFF).
    available_frames : int
        Whole frames actually present between the data chunk start and the
        end of the file.
    """

    channels: int
    sr: int
    block_align: int
    bits: int
    claimed_frames: int | None
    available_frames: int


def scan_wav_header(fh: BinaryIO, file_size: int) -> WavHeader | None:
    """Scan the chunks of a RIFF/RF64 WAVE stream up to its ``data`` chunk.

    Parameters
    ----------
    fh : binary file object, seekable
        Positioned anywhere; left at offset 0 on return.
    file_size : int
        Total size of the stream in bytes.

    Returns
    -------
    WavHeader or None
        None when the stream is not a RIFF/RF64 WAVE or has no ``fmt ``/``data``
        chunk before the end (libsndfile then gives the verdict).
    """
    fh.seek(0)
    head = fh.read(12)
    if len(head) < 12 or head[:4] not in (b"RIFF", b"RF64", b"BW64") or head[8:12] != b"WAVE":
        fh.seek(0)
        return None
    ds64_data_size = None
    fmt = None
    offset = 12
    result = None
    while offset + 8 <= file_size:
        fh.seek(offset)
        chunk_id, size = struct.unpack("<4sI", fh.read(8))
        body = offset + 8
        if chunk_id == b"ds64":
            ds64 = fh.read(min(size, 28))
            if len(ds64) >= 16:
                ds64_data_size = struct.unpack_from("<Q", ds64, 8)[0]
        elif chunk_id == b"fmt ":
            raw = fh.read(min(size, 16))
            if len(raw) >= 16:
                _tag, channels, sr, _rate, block_align, bits = struct.unpack("<HHIIHH", raw)
                fmt = (channels, sr, block_align, bits)
        elif chunk_id == b"data":
            if fmt is None:
                break
            channels, sr, block_align, bits = fmt
            data_size = ds64_data_size if (size == 0xFFFFFFFF and ds64_data_size is not None) else size
            align = max(block_align, 1)
            claimed = None if data_size in _UNKNOWN_SIZES and ds64_data_size is None else data_size // align
            result = WavHeader(channels, sr, block_align, bits, claimed, max(file_size - body, 0) // align)
            break
        offset = body + size + (size & 1)
    fh.seek(0)
    if result is None and fmt is not None:
        channels, sr, block_align, bits = fmt
        result = WavHeader(channels, sr, block_align, bits, None, 0)
    return result

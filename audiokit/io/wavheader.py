"""A minimal RIFF/RF64 chunk scan, to check a WAV header against the file.

libsndfile quietly trusts or clamps some header fields; this scan lets the
reader give its own messages: a data chunk claiming more samples than the file
holds, zero channels, a zero sample rate.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["WavHeader", "scan_wav_header"]

#: 32-bit size field meaning "see the ds64 chunk" (RF64) or "unknown" (streamed WAV).
_SIZE_PLACEHOLDER = 0xFFFFFFFF
#: Data-chunk sizes that say nothing about the length (written before the length was known).
_UNKNOWN_SIZES = (0, _SIZE_PLACEHOLDER)
#: ``RIFF`` + 32-bit size + ``WAVE``.
_RIFF_HEADER_BYTES = 12
#: Chunk id + 32-bit little-endian size.
_CHUNK_HEADER_BYTES = 8
#: The part of ``ds64`` read: RIFF size, data size, sample count (64 bits each) and the table length.
_DS64_READ_BYTES = 28
#: ``ds64`` must hold at least the RIFF size and the data size; the data size is the second field.
_DS64_MIN_BYTES, _DS64_DATA_SIZE_OFFSET = 16, 8
#: The PCM ``fmt `` fields read: tag, channels, rate, byte rate, block align, bits (``<HHIIHH``).
_FMT_BYTES = 16


@dataclass(frozen=True)
class WavHeader:
    """What the ``fmt `` and ``data`` chunks of a WAV file say.

    Attributes
    ----------
    channels, sr, block_align, bits : int
        Fields of the ``fmt `` chunk (sr in Hz, block_align in bytes per frame).
    claimed_frames : int or None
        Samples per channel the data chunk claims (None when the size is a
        streaming placeholder such as 0 or 0xFFFFFFFF).
    available_frames : int
        Whole samples per channel actually present between the data chunk
        start and the end of the file.

    Notes
    -----
    "Frame" in these two field names is the WAV specification's sample frame
    (one sample of every channel), so both are ``n_samples`` counts in
    audiokit's vocabulary, where "frames" otherwise means STFT frames.
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
    head = fh.read(_RIFF_HEADER_BYTES)
    if len(head) < _RIFF_HEADER_BYTES or head[:4] not in (b"RIFF", b"RF64", b"BW64") or head[8:12] != b"WAVE":
        fh.seek(0)
        return None
    ds64_data_size = None
    fmt = None
    offset = _RIFF_HEADER_BYTES
    result = None
    while offset + _CHUNK_HEADER_BYTES <= file_size:
        fh.seek(offset)
        chunk_id, size = struct.unpack("<4sI", fh.read(_CHUNK_HEADER_BYTES))
        body = offset + _CHUNK_HEADER_BYTES
        if chunk_id == b"ds64":
            ds64 = fh.read(min(size, _DS64_READ_BYTES))
            if len(ds64) >= _DS64_MIN_BYTES:
                ds64_data_size = struct.unpack_from("<Q", ds64, _DS64_DATA_SIZE_OFFSET)[0]
        elif chunk_id == b"fmt ":
            raw = fh.read(min(size, _FMT_BYTES))
            if len(raw) >= _FMT_BYTES:
                _tag, channels, sr, _rate, block_align, bits = struct.unpack("<HHIIHH", raw)
                fmt = (channels, sr, block_align, bits)
        elif chunk_id == b"data":
            if fmt is None:
                break
            channels, sr, block_align, bits = fmt
            data_size = ds64_data_size if (size == _SIZE_PLACEHOLDER and ds64_data_size is not None) else size
            align = max(block_align, 1)
            claimed = None if data_size in _UNKNOWN_SIZES and ds64_data_size is None else data_size // align
            result = WavHeader(channels, sr, block_align, bits, claimed, max(file_size - body, 0) // align)
            break
        offset = body + size + (size & 1)  # chunks are padded to an even size
    fh.seek(0)
    if result is None and fmt is not None:
        channels, sr, block_align, bits = fmt
        result = WavHeader(channels, sr, block_align, bits, None, 0)
    return result

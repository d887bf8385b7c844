"""A minimal RIFF/RF64 chunk scan, to check a WAV header against the file.

libsndfile quietly trusts or clamps some header fields; this scan lets the
reader give its own messages: a data chunk claiming more samples than the file
holds, zero channels, a zero sample rate.  It also reads the ``fact`` chunk, whose
sample count is the length of a compressed (ADPCM, GSM ...) stream: libsndfile
counts whole blocks, the last one padded (IMA ADPCM written by SoX: 32 320 for 32 000).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["WavHeader", "scan_wav_header", "wave_channel_mask"]

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
#: ``fact``: the sample count per channel (32 bits).
_FACT_BYTES = 4
#: A compressed format's ``fmt `` extension: cbSize, then samples per block (IMA/MS ADPCM, GSM 6.10: ``<HH``).
_FMT_EXTENDED_BYTES, _SAMPLES_PER_BLOCK_OFFSET = 20, 18
#: Format tags whose length is the data size over the block size (``fact`` is optional for them and not
#: always right): PCM, IEEE float, A-law, mu-law, WAVE_FORMAT_EXTENSIBLE.
_UNCOMPRESSED_TAGS = frozenset({0x0001, 0x0003, 0x0006, 0x0007, 0xFFFE})


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
    compressed : bool
        The format tag is a compressed one (ADPCM, GSM ...): ``claimed_frames``
        and ``available_frames`` then count blocks of ``block_align`` bytes.
    coded_frames : int or None
        For a compressed format, the samples per channel its ``fact`` chunk
        holds (the stream's length without the last block's padding); None
        for uncompressed tags or without a ``fact`` chunk.
    samples_per_block : int or None
        For a compressed format, the samples per channel in one block (the
        ``fmt `` extension's ``wSamplesPerBlock``), when the header gives it.

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
    compressed: bool = False
    coded_frames: int | None = None
    samples_per_block: int | None = None


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
    tag = None
    fact = None
    per_block = None
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
            raw = fh.read(min(size, _FMT_EXTENDED_BYTES))
            if len(raw) >= _FMT_BYTES:
                tag, channels, sr, _rate, block_align, bits = struct.unpack_from("<HHIIHH", raw)
                fmt = (channels, sr, block_align, bits)
            if len(raw) == _FMT_EXTENDED_BYTES:
                per_block = struct.unpack_from("<H", raw, _SAMPLES_PER_BLOCK_OFFSET)[0] or None
        elif chunk_id == b"fact":
            raw = fh.read(min(size, _FACT_BYTES))
            if len(raw) == _FACT_BYTES:
                fact = struct.unpack("<I", raw)[0]
        elif chunk_id == b"data":
            if fmt is None:
                break
            channels, sr, block_align, bits = fmt
            data_size = ds64_data_size if (size == _SIZE_PLACEHOLDER and ds64_data_size is not None) else size
            align = max(block_align, 1)
            claimed = None if data_size in _UNKNOWN_SIZES and ds64_data_size is None else data_size // align
            compressed = tag not in _UNCOMPRESSED_TAGS
            available = max(file_size - body, 0) // align
            coded = fact if compressed and fact not in (None, *_UNKNOWN_SIZES) else None
            blocks = per_block if compressed else None
            result = WavHeader(channels, sr, block_align, bits, claimed, available, compressed, coded, blocks)
            break
        offset = body + size + (size & 1)  # chunks are padded to an even size
    fh.seek(0)
    if result is None and fmt is not None:
        channels, sr, block_align, bits = fmt
        result = WavHeader(channels, sr, block_align, bits, None, 0)
    return result


def wave_channel_mask(path: str) -> int | None:
    """The ``dwChannelMask`` of a WAVE_FORMAT_EXTENSIBLE file's ``fmt `` chunk; None for anything else (another
    container, a plain WAV, stdin, a URL, an unreadable header: the channel count's layout then applies)."""
    if path == "-" or "://" in path:
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
            if len(head) < 12 or head[:4] not in (b"RIFF", b"RF64", b"BW64") or head[8:12] != b"WAVE":
                return None
            for _ in range(64):  # the fmt chunk comes before the data; a header with more chunks is not looked into
                chunk = fh.read(8)
                if len(chunk) < 8:
                    return None
                name, size = struct.unpack("<4sI", chunk)
                if name == b"fmt ":
                    body = fh.read(min(size, 40))
                    tag = struct.unpack_from("<H", body)[0] if len(body) >= 2 else None
                    return struct.unpack_from("<I", body, 20)[0] if tag == 0xFFFE and len(body) >= 24 else None
                fh.seek(size + (size & 1), 1)
    except OSError:
        return None
    return None

"""FLAC streams of unknown length: what an encoder writing to a pipe leaves in STREAMINFO.

An encoder that cannot seek back (``ffmpeg -i x.wav -f flac -``, and the same bytes saved to a file) leaves
STREAMINFO's total-samples field 0, "unknown" (and the MD5 and min/max frame sizes 0).  libsndfile then
reports ``SF_COUNT_MAX`` frames, and soundfile's ``read`` seeks to the position after every block; a read that
reaches the last sample seeks to the very end of the stream, which libFLAC cannot do without a length, and
libsndfile's fallback for that seek (``offset == frames``) needs the length too: ``Internal psf_fseek() failed.``

The remedy here uses libsndfile only: count the samples by decoding the stream once (raw ``sf_readf`` calls,
which do not seek; ~0.5 s for 10 min of 48 kHz stereo), then hand libsndfile a copy of the bytes whose
STREAMINFO holds that count (standard input's spool is patched in place).  The copy is a valid FLAC file that
differs from the input in those 36 bits only, so every later read and seek is libsndfile's ordinary path.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import BinaryIO

import soundfile as sf

__all__ = ["UNKNOWN_FRAMES", "count_samples", "with_total_samples"]

#: The frame count libsndfile reports for a stream of unknown length (``SF_COUNT_MAX``).
UNKNOWN_FRAMES = 2**63 - 1
#: ``fLaC`` + the metadata block header (last-block flag and type 0 = STREAMINFO, 24-bit length 34).
_STREAMINFO_HEADER = b"fLaC" + bytes([0x00, 0x00, 0x00, 0x22])
_STREAMINFO_HEADER_LAST = b"fLaC" + bytes([0x80, 0x00, 0x00, 0x22])
#: File offset of the byte whose low nibble holds the top 4 of total-samples' 36 bits (8 + 13: after block
#: sizes (2 x 16 bits), frame sizes (2 x 24), sample rate (20), channels (3) and bits per sample (5)).
_TOTAL_OFFSET = 21
_TOTAL_BITS = 36
#: Samples per channel decoded per call while counting (64 Ki).
_COUNT_BLOCK = 1 << 16


def count_samples(handle: sf.SoundFile) -> int:
    """Decode ``handle`` from its current position to the end and return the samples per channel read.

    Uses libsndfile's ``sf_readf_short`` directly: soundfile's ``read`` seeks after every block, which is what
    fails on a stream of unknown length.  The handle is left at the end of the stream.

    Raises
    ------
    sf.LibsndfileError
        When libsndfile reports an error while decoding.
    """
    from soundfile import _ffi, _snd

    buffer = _ffi.new("short[]", _COUNT_BLOCK * handle.channels)
    total = 0
    while (got := _snd.sf_readf_short(handle._file, buffer, _COUNT_BLOCK)) > 0:
        total += got
    code = _snd.sf_error(handle._file)
    if code:
        raise sf.LibsndfileError(code)
    return int(total)


def with_total_samples(fh: BinaryIO, n_samples: int, *, in_place: bool) -> BinaryIO:
    """The FLAC bytes of ``fh`` with STREAMINFO's total-samples field set to ``n_samples``.

    Parameters
    ----------
    fh : binary file object, seekable, with a descriptor
        The FLAC stream (STREAMINFO must be its first metadata block, as the format requires).
    n_samples : int, 0 < n_samples < 2**36
        Samples per channel, as :func:`count_samples` found them.
    in_place : bool
        Patch ``fh`` itself (a spool audiokit owns, opened for writing) instead of an anonymous temp copy.

    Returns
    -------
    binary file object
        ``fh`` (patched) or the copy, which the caller closes; either is positioned at 0.

    Raises
    ------
    ValueError
        When the stream does not start with a STREAMINFO block or ``n_samples`` does not fit in 36 bits.
    """
    if not 0 < n_samples < 2**_TOTAL_BITS:
        raise ValueError(f"{n_samples} samples do not fit in STREAMINFO's {_TOTAL_BITS}-bit total")
    fd = fh.fileno()
    head = os.pread(fd, _TOTAL_OFFSET + 5, 0)
    if len(head) < _TOTAL_OFFSET + 5 or head[:8] not in (_STREAMINFO_HEADER, _STREAMINFO_HEADER_LAST):
        raise ValueError("the stream does not start with a FLAC STREAMINFO block")
    if in_place:
        target = fh
    else:
        target = tempfile.TemporaryFile(buffering=0)
        os.lseek(fd, 0, os.SEEK_SET)
        with os.fdopen(os.dup(fd), "rb") as source:
            shutil.copyfileobj(source, target)
    field = bytes([head[_TOTAL_OFFSET] & 0xF0 | n_samples >> 32]) + (n_samples & 0xFFFFFFFF).to_bytes(4, "big")
    os.pwrite(target.fileno(), field, _TOTAL_OFFSET)
    os.lseek(target.fileno(), 0, os.SEEK_SET)
    return target

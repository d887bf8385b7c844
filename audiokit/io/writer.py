"""Writing WAV files, whole or block by block, atomically.

PCM subtypes are quantised here, not by libsndfile: a float sample ``x`` is
stored as ``round(x * 2**(B-1))`` clipped to ``[-2**(B-1), 2**(B-1) - 1]``,
which is the exact inverse of the reader's ``q / 2**(B-1)``, so a signal read
from a B-bit file is written back bit for bit.  Samples beyond full scale
(``|x| > 1``) are clipped for PCM output and counted; the caller is warned,
never silently.  FLOAT/DOUBLE keep every value as it is.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import sys
import tempfile
import warnings
from pathlib import Path
from typing import BinaryIO, Literal

import numpy as np
import soundfile as sf

from ..errors import OutputError, ParameterError
from .atomic import atomic_output, describe_os_error, is_stdio, is_stream_target
from .subtypes import FLAC_SUBTYPES, SUBTYPE_BITS, names_flac, resolve_subtype

_INT_CONTAINER = {"PCM_U8": (np.int16, 8), "PCM_16": (np.int16, 0), "PCM_24": (np.int32, 8), "PCM_32": (np.int32, 0)}
_WAV_LIMIT_BYTES = 0xFFFFFFFF - 1024


def audio_container(path: str | os.PathLike, subtype: str) -> str:
    """The container an audio output path asks for: ``WAV`` (``.wav``, ``-``, a FIFO or device) or ``FLAC`` (``.flac``).

    Raises
    ------
    ParameterError
        For any other extension (audiokit never writes one format under another's name), or a subtype the
        container cannot hold.
    """
    text = str(path)
    suffix = "" if text == "-" else Path(text).suffix.lower()
    if names_flac(text):
        if subtype not in FLAC_SUBTYPES:
            raise ParameterError(
                f"{text}: FLAC holds {' or '.join(FLAC_SUBTYPES)}, not {subtype}; give --subtype PCM_16/PCM_24 or a .wav path"
            )
        return "FLAC"
    if text == "-" or suffix == ".wav" or is_stream_target(text):
        return "WAV"
    raise ParameterError(f"{text}: audio is written as .wav (any subtype) or .flac (PCM_16/PCM_24); rename the output")


def encode_block(block: np.ndarray, subtype: str) -> tuple[np.ndarray, int]:
    """Turn a float block ``(channels, n)`` into the interleaved array soundfile writes.

    Returns
    -------
    data : np.ndarray, shape (n, channels)
        int16/int32 codes for PCM subtypes (left-aligned in the container, as
        libsndfile expects), float32/float64 for FLOAT/DOUBLE.
    clipped : int
        Number of samples whose code lies beyond full scale (``|round(x·2^(B-1))| > 2^(B-1)``):
        clipping changed them by more than the top code's own one-step limit (+1.0 → the
        largest code is not counted).
    """
    bits = SUBTYPE_BITS[subtype]
    frames = block.T
    if bits is None:
        return np.ascontiguousarray(frames, dtype=np.float32 if subtype == "FLOAT" else np.float64), 0
    container, shift = _INT_CONTAINER[subtype]
    scale = float(2 ** (bits - 1))
    codes = np.rint(np.asarray(frames, dtype=np.float64) * scale)
    clipped = int(np.count_nonzero(np.abs(codes) > scale))
    np.clip(codes, -scale, scale - 1, out=codes)
    codes = codes.astype(np.int64 if shift else container)
    if shift:
        codes = (codes << shift).astype(container)
    return np.ascontiguousarray(codes), clipped


class WavWriter:
    """Write a WAV (or, for a ``.flac`` path, FLAC) file block by block; it appears at ``path`` only on success.

    Parameters
    ----------
    path : str or PathLike
        Destination, or ``"-"`` for standard output.
    sr : int
        Sample rate in Hz.
    channels : int
        Channel count.
    subtype : str, optional
        One of :data:`SUBTYPE_BITS`; default FLOAT, or for a ``.flac`` path PCM_24 with a warning (see
        :func:`~audiokit.io.subtypes.resolve_subtype`).
    expected_samples : int, optional
        Total samples per channel if known; above 4 GiB of data the file is written as RF64.

    Notes
    -----
    Use as a context manager: leaving the block by an exception (including
    KeyboardInterrupt) removes the temp file and leaves nothing at ``path``.
    After closing, :attr:`clipped` holds the count of clipped samples.

    ``-`` with standard output on a pipe (or terminal device) is streamed as it is produced, as SoX does: a
    WAV header whose RIFF and data sizes are the placeholder 0xFFFFFFFF ("until the end of the stream"), then
    the samples; an error midway leaves a truncated stream and a non-zero exit.  Standard output redirected to a
    regular file is spooled and written whole with exact sizes.
    """

    def __init__(self, path, *, sr: int, channels: int, subtype: str | None = None, expected_samples: int | None = None):
        self.path = str(path)
        self.sr = int(sr)
        self.channels = int(channels)
        self.subtype = resolve_subtype(subtype, target=self.path)
        bits = SUBTYPE_BITS[self.subtype] or (32 if self.subtype == "FLOAT" else 64)
        big = expected_samples is not None and expected_samples * self.channels * bits // 8 > _WAV_LIMIT_BYTES
        container = audio_container(self.path, self.subtype)
        self._format = "RF64" if big and container == "WAV" else container
        self.clipped = 0
        self.n_samples = 0
        self._stack = contextlib.ExitStack()
        self._sf: sf.SoundFile | None = None
        self._stream: _WavStream | None = None

    def __enter__(self) -> WavWriter:
        if self._format == "WAV" and is_stdio(self.path) and _stdout_is_a_stream():
            self._stream = _WavStream(sys.stdout.buffer, sr=self.sr, channels=self.channels, subtype=self.subtype)
            return self
        tmp: Path = self._stack.enter_context(atomic_output(self.path, suffix=".flac" if self._format == "FLAC" else ".wav"))
        try:
            self._sf = sf.SoundFile(
                tmp, "w", samplerate=self.sr, channels=self.channels, subtype=self.subtype, format=self._format
            )
            if SUBTYPE_BITS[self.subtype] is None:
                _no_peak_chunk(self._sf)
        except BaseException as exc:
            # Leave the atomic block *with* the exception: a plain close() would
            # os.replace the empty temp file onto the destination.
            if isinstance(exc, (sf.LibsndfileError, RuntimeError)):
                failure = OutputError(f"cannot write WAV: {exc}", self.path)
                self._stack.__exit__(OutputError, failure, None)
                raise failure from exc
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def write(self, block: np.ndarray) -> None:
        """Append a float block shaped ``(channels, n)`` (full scale ±1)."""
        if block.ndim != 2 or block.shape[0] != self.channels:
            raise ValueError(f"block must be shaped ({self.channels}, n), got {block.shape}")
        data, clipped = encode_block(block, self.subtype)
        self.clipped += clipped
        if self._stream is not None:
            self._stream.write(data)
            self.n_samples += block.shape[1]
            return
        assert self._sf is not None, "used outside its with block"
        try:
            self._sf.write(data)
        except (sf.LibsndfileError, RuntimeError, OSError) as exc:
            raise OutputError(_write_failure(exc, self.path), self.path) from exc
        self.n_samples += block.shape[1]

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        failure = None
        if self._stream is not None:
            if exc_type is None:
                self._stream.flush()
            self._warn_clipped(exc_type)
            return False
        try:
            assert self._sf is not None, "used outside its with block"
            self._sf.close()
        except (sf.LibsndfileError, RuntimeError, OSError) as err:
            if exc_type is None:
                failure = OutputError(_write_failure(err, self.path), self.path)
                exc_type, exc, tb = OutputError, failure, None
        self._stack.__exit__(exc_type, exc, tb)
        if failure is not None:
            raise failure
        self._warn_clipped(exc_type)
        return False

    def _warn_clipped(self, exc_type: object) -> None:
        if exc_type is None and self.clipped:
            keep = "write a .wav with --subtype FLOAT" if self._format == "FLAC" else "use --subtype FLOAT"
            warnings.warn(
                f"{self.path}: {self.clipped} samples beyond full scale were clipped to fit {self.subtype} ({keep} to keep them)",
                stacklevel=3,
            )


def _write_failure(exc: BaseException, path: str) -> str:
    if isinstance(exc, OSError):
        return describe_os_error(exc)
    # stdout and streams are spooled in the temp folder first (see atomic_output)
    folder = Path(tempfile.gettempdir()) if path == "-" or is_stream_target(path) else Path(path).parent
    try:
        if os.statvfs(folder).f_bavail == 0:
            return "disk full (no space left on device); nothing was written"
    except OSError:
        pass
    return f"write failed: {exc}"


def write(path, samples: np.ndarray, sr: int, *, subtype: str | None = None) -> int:
    """Write a whole signal to a WAV file (or stdout for ``"-"``) atomically.

    Parameters
    ----------
    path : str or PathLike
        Destination or ``"-"``.
    samples : np.ndarray, shape (channels, n) or (n,)
        Float samples, full scale ±1.
    sr : int
        Sample rate in Hz.
    subtype : str, optional
        ``PCM_U8``, ``PCM_16``, ``PCM_24``, ``PCM_32``, ``FLOAT`` or ``DOUBLE``; default ``FLOAT``, or for a
        ``.flac`` path ``PCM_24`` (FLAC has no float samples; a warning says so).

    Returns
    -------
    int
        Number of samples clipped (PCM subtypes, ``|x| > 1``); a warning is
        issued when it is non-zero.
    """
    samples = np.atleast_2d(samples)
    with WavWriter(path, sr=sr, channels=samples.shape[0], subtype=subtype, expected_samples=samples.shape[1]) as out:
        out.write(samples)
    return out.clipped


#: libsndfile's command that turns off the PEAK chunk of float files (sndfile.h: SFC_SET_ADD_PEAK_CHUNK).
_SFC_SET_ADD_PEAK_CHUNK = 0x1050


def _no_peak_chunk(handle: sf.SoundFile) -> None:
    """Write float WAVs without libsndfile's PEAK chunk: it stamps the wall-clock second into the file, so two
    runs of the same command would differ (batch outputs must be byte-identical to the single-file command's)."""
    from soundfile import _ffi, _snd

    _snd.sf_command(handle._file, _SFC_SET_ADD_PEAK_CHUNK, _ffi.NULL, 0)


def _stdout_is_a_stream() -> bool:
    """True when standard output is a pipe, socket or character device (not a regular file)."""
    try:
        mode = os.fstat(sys.stdout.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


#: WAVE format tags: integer PCM and IEEE float.
_WAVE_PCM, _WAVE_FLOAT = 1, 3
#: Header size placeholder for a stream of unknown length.
_UNKNOWN_SIZE = 0xFFFFFFFF


class _WavStream:
    """A WAV written front to back to a non-seekable stream: header with placeholder sizes, then samples."""

    def __init__(self, out: BinaryIO, *, sr: int, channels: int, subtype: str) -> None:
        bits = SUBTYPE_BITS[subtype] or (32 if subtype == "FLOAT" else 64)
        self._out = out
        self._subtype = subtype
        tag = _WAVE_FLOAT if SUBTYPE_BITS[subtype] is None else _WAVE_PCM
        block_align = channels * bits // 8
        fmt = struct.pack("<HHIIHH", tag, channels, sr, sr * block_align, block_align, bits)
        header = b"RIFF" + struct.pack("<I", _UNKNOWN_SIZE) + b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
        out.write(header + b"data" + struct.pack("<I", _UNKNOWN_SIZE))

    def write(self, data: np.ndarray) -> None:
        """Append interleaved samples as :func:`encode_block` returns them."""
        self._out.write(_pcm_bytes(data, self._subtype))

    def flush(self) -> None:
        self._out.flush()


def _pcm_bytes(data: np.ndarray, subtype: str) -> bytes:
    """Little-endian sample bytes of :func:`encode_block`'s output (codes left-aligned in their container)."""
    if subtype == "FLOAT":
        return data.astype("<f4").tobytes()
    if subtype == "DOUBLE":
        return data.astype("<f8").tobytes()
    if subtype == "PCM_16":
        return data.astype("<i2").tobytes()
    if subtype == "PCM_32":
        return data.astype("<i4").tobytes()
    if subtype == "PCM_24":
        codes = (data.astype(np.int32) >> 8).astype("<i4")
        return codes.view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
    # PCM_U8: unsigned, offset 128
    return ((data.astype(np.int32) >> 8) + 128).astype(np.uint8).tobytes()

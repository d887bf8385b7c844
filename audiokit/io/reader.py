"""Reading audio: WAV/FLAC/OGG/MP3/AIFF ... through soundfile, raw PCM, standard input.

:func:`open_audio` validates a source and returns an :class:`AudioSource`
that reads the whole signal (:meth:`AudioSource.read`) or streams it in blocks
of frames with an optional overlap (:meth:`AudioSource.blocks`), so that long
files never have to fit in memory.  Every problem becomes an
:class:`~audiokit.errors.InputError` with its own message; odd but valid input
(a truncated data chunk, samples beyond full scale) gives a warning.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

import numpy as np
import soundfile as sf

from ..errors import InputError, ParameterError
from ..held import signals_held
from .flac import UNKNOWN_FRAMES, count_samples, with_total_samples
from .raw import RawFormat
from .remote import RemoteFile, display_url, is_url, open_url
from .signal import Signal
from .signature import SIGNATURE_BYTES, container_signature
from .wavheader import WavHeader, scan_wav_header

#: Accepted sample rates in Hz (inclusive).  Below 100 Hz or above 3.072 MHz a
#: header is taken to be corrupt.
MIN_SR, MAX_SR = 100, 3_072_000
#: Largest accepted channel count.
MAX_CHANNELS = 256
#: Float subtypes: only these can hold NaN/Inf or values beyond full scale.
FLOAT_SUBTYPES = frozenset({"FLOAT", "DOUBLE", "VORBIS", "OPUS"})
_STDIN_CHUNK_BYTES = 2**20  # read standard input 1 MiB at a time
#: The main containers libsndfile reads, for messages (MP3 needs libsndfile >= 1.1); the README lists them all.
READABLE = "WAV, FLAC, OGG Vorbis/Opus" + (", MP3" if "MP3" in sf.available_formats() else "") + ", AIFF, AU, CAF"
#: Samples per channel in one block read by the streaming commands (64 Ki: 256 KiB per float32 channel).
BLOCK_SAMPLES = 1 << 16

NonFinitePolicy = Literal["error", "zero", "keep"]


class AudioSource:
    """An opened, validated audio input.

    Use :func:`open_audio` to create one; close it (or use ``with``) when done.

    Attributes
    ----------
    name : str
        The path as the user gave it (``"-"`` for standard input; a URL without its credentials,
        :func:`~audiokit.io.remote.display_url`).
    sr : int
        Sample rate in Hz.
    channels : int
        Channel count.
    n_samples : int
        Number of samples per channel that can actually be read.
    subtype : str
        soundfile subtype of the source (``PCM_16``, ``FLOAT``, ...).
    container : str
        ``WAV``, ``FLAC``, ``OGG``, ``RF64`` ... or ``RAW``.
    """

    def __init__(self, name: str, handle: sf.SoundFile, n_samples: int, nonfinite: NonFinitePolicy, owned: list):
        self.name = name
        self._sf = handle
        self.sr = int(handle.samplerate)
        self.channels = int(handle.channels)
        self.n_samples = int(n_samples)
        self.subtype = str(handle.subtype)
        self.container = str(handle.format)
        self._nonfinite = nonfinite
        self._owned = owned
        self._remote = next((obj for obj in owned if isinstance(obj, RemoteFile)), None)
        self._warned_full_scale = False
        self.offset = 0

    def _io(self) -> contextlib.AbstractContextManager[None]:
        """Around a libsndfile call: for a URL input, signals held and a failed ranged read raised afterwards."""
        return _remote_call(self._remote)

    def segment(self, start: int, n_samples: int | None = None) -> AudioSource:
        """Restrict this source to ``n_samples`` samples from sample ``start`` (in place; returns ``self``).

        Afterwards the source behaves as a file that starts at ``start``:
        ``n_samples``, :meth:`blocks` and :meth:`read` count from there, so a
        pipeline given a segment computes exactly what it computes on a file
        cut to that segment.  ``offset`` holds ``start`` (in samples of the
        whole file).

        Parameters
        ----------
        start : int >= 0
            First sample of the segment, counted from the start of the current view.
        n_samples : int > 0, optional
            Length of the segment; default: to the end.  A segment running past
            the end is cut to the samples that exist, with a warning.

        Raises
        ------
        InputError
            When ``start`` is at or beyond the end.
        ParameterError
            When ``start`` is negative or ``n_samples`` is not positive.
        """
        if start < 0:
            raise ParameterError(f"segment start ({start}) must be >= 0")
        if n_samples is not None and n_samples <= 0:
            raise ParameterError(f"segment length ({n_samples} samples) must be > 0")
        if start >= self.n_samples:
            raise InputError(
                f"segment start {start / self.sr:.6g} s is at or beyond the end ({self.n_samples / self.sr:.6g} s)",
                self.name,
            )
        available = self.n_samples - start
        if n_samples is not None and n_samples > available:
            warnings.warn(
                f"{self.name}: segment of {n_samples / self.sr:.6g} s from {start / self.sr:.6g} s runs past the end; "
                f"using the {available / self.sr:.6g} s that exist",
                stacklevel=2,
            )
        self.offset += start
        self.n_samples = available if n_samples is None else min(n_samples, available)
        return self

    @property
    def duration(self) -> float:
        """Duration in seconds, ``n_samples / sr``."""
        return self.n_samples / self.sr

    @property
    def is_float(self) -> bool:
        """True for float subtypes (which can exceed full scale or hold NaN)."""
        return self.subtype in FLOAT_SUBTYPES

    def close(self) -> None:
        """Release the file handle (and the stdin spool, if any)."""
        self._sf.close()
        for obj in self._owned:
            obj.close()

    def __enter__(self) -> AudioSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check(self, block: np.ndarray, first_frame: int) -> np.ndarray:
        """Apply the NaN/Inf policy and warn once about samples beyond full scale."""
        if not self.is_float:
            return block
        finite = np.isfinite(block)
        if not finite.all():
            bad = np.flatnonzero(~finite.all(axis=0))
            where = first_frame + int(bad[0])
            if self._nonfinite == "error":
                count = int((~finite).sum())
                raise InputError(
                    f"contains NaN or Inf samples ({count} in this block, first at frame {where}, "
                    f"{where / self.sr:.6g} s); use --fix-nonfinite to replace them with 0",
                    self.name,
                )
            if self._nonfinite == "zero":
                block = np.where(finite, block, 0)
        if not self._warned_full_scale:
            over = (np.abs(block) > 1.0) & finite  # an Inf kept ("keep") is not a level beyond full scale
            if over.any():
                where = first_frame + int(np.flatnonzero(over.any(axis=0))[0])
                self._warned_full_scale = True
                warnings.warn(
                    f"{self.name}: samples beyond full scale (|x| > 1, first at {where / self.sr:.6g} s); "
                    "they are kept, not clipped",
                    stacklevel=3,
                )
        return block

    def blocks(
        self,
        block_size: int = BLOCK_SAMPLES,
        *,
        overlap: int = 0,
        dtype: str = "float32",
        start: int = 0,
        n_samples: int | None = None,
    ) -> Iterator[np.ndarray]:
        """Yield the signal in blocks shaped ``(channels, n)``.

        Parameters
        ----------
        block_size : int > overlap
            Samples per channel in a block (the last block may be shorter).
        overlap : int >= 0
            Each block after the first starts with the last ``overlap`` samples
            of the previous one (so consecutive blocks advance by
            ``block_size - overlap``).
        dtype : {'float32', 'float64'}
            Sample type; full scale is ±1.
        start : int >= 0
            First frame to read.
        n_samples : int, optional
            Number of samples per channel to read from ``start`` (default: to the end).

        Yields
        ------
        np.ndarray, shape (channels, n), C-contiguous
        """
        if block_size <= overlap or overlap < 0:
            raise ParameterError(f"block_size ({block_size}) must exceed overlap ({overlap}) >= 0")
        if start < 0:
            raise ParameterError(f"start ({start}) must be >= 0")
        remaining = self.n_samples - start if n_samples is None else min(n_samples, self.n_samples - start)
        if remaining <= 0:  # nothing to read (start at or past the end): seeking there would fail
            return
        try:
            with self._io():
                self._sf.seek(self.offset + start)
        except (sf.LibsndfileError, RuntimeError, OSError) as exc:
            raise InputError(f"corrupt or truncated audio file (seek failed: {_libsndfile_reason(exc)})", self.name) from None
        step = block_size - overlap
        previous: np.ndarray | None = None
        position = start
        while remaining > 0:
            want = min(step if previous is not None else block_size, remaining)
            data = self._read(want, dtype, position)
            if data.shape[1] == 0:
                break
            data = self._check(data, position)
            position += data.shape[1]
            remaining -= data.shape[1]
            if previous is not None and overlap:
                data = np.concatenate([previous[:, -overlap:], data], axis=1)
            yield data
            previous = data

    def _read(self, n: int, dtype: str, position: int) -> np.ndarray:
        narrow = dtype == "float32" and self.subtype == "DOUBLE"  # libsndfile would turn |x| > float32's max into Inf
        try:
            with self._io():
                interleaved = self._sf.read(n, dtype="float64" if narrow else dtype, always_2d=True)
        except (sf.LibsndfileError, RuntimeError) as exc:
            raise InputError(f"corrupt or truncated audio file (read failed: {_libsndfile_reason(exc)})", self.name) from exc
        if narrow:
            beyond = np.isfinite(interleaved) & (np.abs(interleaved) > np.finfo(np.float32).max)
            if beyond.any():
                frame, channel = (int(i[0]) for i in np.nonzero(beyond))
                where = position + frame
                raise InputError(
                    f"holds a sample of {interleaved[frame, channel]:.3g} (frame {where}, {where / self.sr:.6g} s), "
                    "beyond the float32 range (3.4e+38) this command computes in; scale the input down",
                    self.name,
                )
            interleaved = interleaved.astype(np.float32)
        return np.ascontiguousarray(interleaved.T)

    def read(self, *, dtype: str = "float64", start: int = 0, n_samples: int | None = None) -> Signal:
        """Read ``n_samples`` samples per channel from ``start`` (default: everything) into a :class:`Signal`."""
        count = self.n_samples - start if n_samples is None else min(n_samples, self.n_samples - start)
        out = np.empty((self.channels, max(count, 0)), dtype=dtype)
        filled = 0
        for block in self.blocks(1 << 20, dtype=dtype, start=start, n_samples=count):
            out[:, filled : filled + block.shape[1]] = block
            filled += block.shape[1]
        return Signal(out[:, :filled], self.sr, self.subtype)


def _spool_stdin() -> BinaryIO:
    """Copy standard input into an anonymous temp file (seekable, and with a descriptor libsndfile reads itself).

    Raises
    ------
    InputError
        When standard input is closed.
    """
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError("standard input is closed", "-")
    return _spool(stream, "-", "standard input")


def _spool(stream: BinaryIO, name: str, what: str) -> BinaryIO:
    """Copy a stream to its end into an anonymous temp file, rewound (InputError naming ``what`` on failure)."""
    spool = tempfile.TemporaryFile(buffering=0)  # unbuffered: libsndfile moves the descriptor itself
    try:
        while chunk := stream.read(_STDIN_CHUNK_BYTES):
            view = memoryview(chunk)
            while view:  # an unbuffered write may take only part of the chunk
                view = view[spool.write(view) :]
    except (OSError, ValueError) as exc:
        spool.close()
        raise InputError(f"cannot read {what}: {exc}", name) from None
    spool.flush()
    spool.seek(0)
    return spool


@contextlib.contextmanager
def _remote_call(remote: RemoteFile | None) -> Iterator[None]:
    """Around a libsndfile call on ``remote`` (None: a local input, nothing to do).

    libsndfile reads a URL input through Python callbacks: Ctrl-C/SIGTERM are held for the call (an exception
    raised inside a C callback would be printed and lost) except inside the ranged read itself, which a signal
    abandons (a stalled connection); that signal's exception, or a ranged read that failed, is raised after the
    call (:meth:`RemoteFile.raise_failure`).
    """
    if remote is None:
        yield
        return
    try:
        with signals_held():
            yield
    except Exception:  # libsndfile's verdict on the bytes it got: the transport's failure, if any, is the cause
        remote.raise_failure()
        raise
    remote.raise_failure()


def _native(fh: BinaryIO) -> int | RemoteFile:
    """The descriptor of an opened input, rewound: libsndfile then reads it with its own I/O.

    Giving libsndfile the descriptor instead of the Python file object means no Python callback runs inside
    libsndfile, so a Ctrl-C or SIGTERM is raised between blocks, never swallowed inside a C callback.  A URL input
    (:class:`~audiokit.io.remote.RemoteFile`) has no descriptor: libsndfile gets the file object, rewound, and
    every call on it goes through :func:`_remote_call`.
    """
    if isinstance(fh, RemoteFile):
        fh.seek(0)
        return fh
    fd = fh.fileno()
    os.lseek(fd, 0, os.SEEK_SET)  # the descriptor itself: a buffered seek(0) may only move within its buffer
    return fd


def _open_path(path: str) -> BinaryIO:
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except PermissionError:
        raise InputError("permission denied", path) from None
    except OSError as exc:  # a link loop (ELOOP), a path through a file (ENOTDIR), a name too long ...
        raise InputError(f"cannot open: {exc.strerror or exc}", path) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError("is a directory, not an audio file", path)
    try:
        fh = open(p, "rb")
    except PermissionError:
        raise InputError("permission denied", path) from None
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", path) from None
    if stat.S_ISREG(info.st_mode):
        return fh
    with fh:  # a FIFO or device (``<(ffmpeg ... -f flac -)``, /dev/stdin): read once, as standard input is
        return _spool(fh, path, "it")


def _head(fh: BinaryIO) -> bytes:
    """The first :data:`SIGNATURE_BYTES` bytes of an opened input (its position is left at 0)."""
    if isinstance(fh, RemoteFile):
        fh.seek(0)
        head = fh.read(SIGNATURE_BYTES) or b""
        fh.raise_failure()
        fh.seek(0)
        return head
    return os.pread(fh.fileno(), SIGNATURE_BYTES, 0)


def _size(fh: BinaryIO) -> int:
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    fh.seek(0)
    return size


def open_audio(
    path: str | os.PathLike,
    *,
    raw: RawFormat | None = None,
    nonfinite: NonFinitePolicy = "error",
    allow_empty: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> AudioSource:
    """Open and validate an audio input.

    Parameters
    ----------
    path : str or PathLike
        A file, ``"-"`` for standard input (spooled; every container
        libsndfile reads is recognised from its first bytes), or a URL
        (``s3://bucket/a.flac``, ``https://host/a.wav``: read with ranged
        requests through fsspec, :mod:`audiokit.io.remote`).
    raw : RawFormat, optional
        Interpret the bytes as headerless PCM with this rate, format and
        channel count instead of reading a header (refused for bytes that
        start with a container signature: the header would be read as samples).
    nonfinite : {'error', 'zero', 'keep'}
        What to do with NaN/Inf samples: refuse the file (default), replace
        them with 0, or keep them (for a caller that counts them and reads
        them as 0 itself: ``stats``).
    allow_empty : bool
        Accept a file with zero frames (only for commands that do not analyse).
    storage_options : mapping, optional
        fsspec storage options for a URL (credentials, endpoint ...; ignored for a local path).

    Returns
    -------
    AudioSource

    Raises
    ------
    InputError
        Missing path, directory, permission denied, empty file, not audio,
        zero/absurd channel count, sample rate outside [MIN_SR, MAX_SR], zero
        frames (unless ``allow_empty``), ``raw`` given for an input with a
        header; for a URL: no such object, access denied, no credentials,
        server unreachable (:func:`~audiokit.io.remote.open_url`).
    """
    name = str(path)
    if is_url(name):
        fh = cast(BinaryIO, open_url(name, storage_options))  # a seekable binary file without a descriptor
        name = display_url(name)
    else:
        fh = _spool_stdin() if name == "-" else _open_path(name)
    owned: list = [fh]
    try:
        return _open_validated(name, fh, raw, nonfinite, allow_empty, owned, spooled=_is_spool(fh))
    except BaseException:
        for obj in owned:  # the input, and a repaired copy of it (see io.flac)
            obj.close()
        raise


def _is_spool(fh: BinaryIO) -> bool:
    """True for a spool :func:`_spool` made (an anonymous temp file, which audiokit may patch)."""
    return isinstance(fh.name, int)


def _open_validated(name, fh, raw, nonfinite, allow_empty, owned, *, spooled: bool) -> AudioSource:
    size = _size(fh)
    if size == 0:
        raise InputError("empty file (0 bytes)" if name != "-" else "standard input is empty", name)
    signature = container_signature(_head(fh))
    if raw is not None:
        if signature is not None:
            raise InputError(
                f"has a {signature} header, which --format/--rate/--channels would read as samples; "
                "drop those options (the header gives the format), or pass a headerless file",
                name,
            )
        return _open_raw(name, fh, size, raw, nonfinite, allow_empty, owned)
    remote = fh if isinstance(fh, RemoteFile) else None
    header = scan_wav_header(fh, size)
    if remote is not None:
        remote.raise_failure()
    if header is not None:
        if header.channels == 0:
            raise InputError("header says 0 channels", name)
        if header.channels > MAX_CHANNELS:
            raise InputError(f"header says {header.channels} channels (more than {MAX_CHANNELS}); file is corrupt", name)
        _check_rate(header.sr, name)
    try:
        with _remote_call(remote):
            handle = sf.SoundFile(_native(fh), "r", closefd=False)
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        if name == "-" and signature is None:
            raise InputError(f"standard input is not {READABLE}; for raw PCM give --rate, --format and --channels", name) from exc
        reason = f"not a recognised audio file ({READABLE})"
        if signature is not None:
            reason = f"unreadable or corrupt audio file ({_libsndfile_reason(exc)})"
        raise InputError(reason, name) from exc
    n_samples = int(handle.frames)
    if handle.format == "FLAC" and n_samples == UNKNOWN_FRAMES:
        if remote is not None:  # counted by decoding it all anyway: patched in a local copy (see io.flac)
            handle.close()
            fh.seek(0)
            fh = _spool(fh, name, "it")
            remote.raise_failure()
            owned.append(fh)
            spooled = True
            handle = sf.SoundFile(_native(fh), "r", closefd=False)
        handle, n_samples = _reopen_unknown_length(name, fh, handle, owned, spooled=spooled)
    if header is not None:
        n_samples = _wav_length(name, header, n_samples)
    if header is None:
        if handle.channels < 1:
            raise InputError("0 channels", name)
        if handle.channels > MAX_CHANNELS:
            raise InputError(f"{handle.channels} channels (more than {MAX_CHANNELS}); file is corrupt", name)
        _check_rate(handle.samplerate, name)
    source = AudioSource(name, handle, n_samples, nonfinite, owned)
    if n_samples == 0 and not allow_empty:
        source.close()
        raise InputError("no audio samples (0 frames)", name)
    return source


def _wav_length(name: str, header: WavHeader, frames: int) -> int:
    """Samples per channel to read from a WAV of which libsndfile reports ``frames``.

    Uncompressed: the data chunk's claim, cut to the whole frames present (with a warning).  Compressed
    (ADPCM, GSM ...): libsndfile counts whole blocks, the last one padded, and the ``fact`` chunk's count is
    the length; a file cut short holds the whole blocks present (with a warning: libsndfile would decode
    the bytes after a partial block's end too).
    """
    if header.compressed:  # claimed_frames and available_frames count blocks
        claimed, present = header.coded_frames, frames
        cut_short = header.claimed_frames is not None and header.claimed_frames > header.available_frames
        if cut_short and header.samples_per_block is not None:
            present = min(frames, header.available_frames * header.samples_per_block)
    else:
        claimed, present = header.claimed_frames, header.available_frames
    if claimed is not None and claimed > present:
        warnings.warn(
            f"{name}: header claims {claimed} frames but the file holds {present}; reading the {present} present",
            stacklevel=4,
        )
        return min(frames, present)
    if header.compressed:
        return min(present, frames if claimed is None else claimed)  # the padding of the last block is not signal
    return frames


def _reopen_unknown_length(
    name: str, fh: BinaryIO, handle: sf.SoundFile, owned: list, *, spooled: bool
) -> tuple[sf.SoundFile, int]:
    """Count the samples of a FLAC stream whose STREAMINFO says "length unknown" and reopen it with the count.

    See :mod:`audiokit.io.flac`: the stream is decoded once to count, then libsndfile reads a copy whose
    STREAMINFO holds the count (a spool of standard input or a pipe, audiokit's own, is patched in place).
    """
    try:
        n_samples = count_samples(handle)
    except sf.LibsndfileError as exc:
        handle.close()
        raise InputError(f"corrupt FLAC stream ({_libsndfile_reason(exc)})", name) from None
    if n_samples == 0:
        return handle, 0  # nothing to read: the handle is never read again
    handle.close()
    try:
        repaired = with_total_samples(fh, n_samples, in_place=spooled)
    except ValueError as exc:
        raise InputError(f"FLAC stream of unknown length: {exc}", name) from None
    if repaired is not fh:
        owned.append(repaired)
    try:
        handle = sf.SoundFile(_native(repaired), "r", closefd=False)
    except (sf.LibsndfileError, RuntimeError) as exc:
        raise InputError(f"unreadable or corrupt audio file ({_libsndfile_reason(exc)})", name) from None
    if handle.frames != n_samples:
        handle.close()
        raise InputError(f"FLAC stream of unknown length: decoded {n_samples} samples, then read {handle.frames}", name)
    return handle, n_samples


def _libsndfile_reason(exc: BaseException) -> str:
    text = str(exc).strip()
    for prefix in ("Error opening", "Error :"):
        if text.startswith(prefix):
            text = text.split(":", 2)[-1].strip()
    return text or "libsndfile refused it"


def _check_rate(sr: int, name: str) -> None:
    if sr == 0:
        raise InputError("header says sample rate 0 Hz", name)
    if not MIN_SR <= sr <= MAX_SR:
        raise InputError(f"sample rate {sr} Hz is outside the accepted range {MIN_SR}..{MAX_SR} Hz", name)


def _open_raw(name, fh, size, raw: RawFormat, nonfinite, allow_empty, owned) -> AudioSource:
    _check_rate(raw.sr, name)
    if raw.channels > MAX_CHANNELS:
        raise ParameterError(f"--channels: {raw.channels} is more than {MAX_CHANNELS}")
    whole, extra = divmod(size, raw.frame_bytes)
    if extra:
        warnings.warn(
            f"{name}: {size} bytes is not a whole number of {raw.frame_bytes}-byte frames; ignoring the last {extra} bytes",
            stacklevel=3,
        )
    handle = sf.SoundFile(
        _native(fh),
        "r",
        samplerate=raw.sr,
        channels=raw.channels,
        subtype=raw.subtype,
        format="RAW",
        endian="LITTLE",
        closefd=False,
    )
    source = AudioSource(name, handle, whole, nonfinite, owned)
    if whole == 0 and not allow_empty:
        source.close()
        raise InputError("no audio samples (0 frames)", name)
    return source


def read(
    path: str | os.PathLike,
    *,
    raw: RawFormat | None = None,
    dtype: str = "float64",
    nonfinite: NonFinitePolicy = "error",
) -> Signal:
    """Read a whole audio file into memory.

    Parameters
    ----------
    path : str or PathLike
        File path or ``"-"`` for standard input.
    raw : RawFormat, optional
        Headerless PCM description.
    dtype : {'float64', 'float32'}
        Sample type of the result; full scale is ±1.
    nonfinite : {'error', 'zero', 'keep'}
        NaN/Inf policy.

    Returns
    -------
    Signal
        ``samples`` shaped (channels, n), ``sr`` in Hz, ``subtype`` of the source.
    """
    with open_audio(path, raw=raw, nonfinite=nonfinite) as source:
        return source.read(dtype=dtype)

"""Helpers shared by the CLI tests: input files, naive STFT references, array and PNG checks.

Import them with ``from tests.helpers.cli import ...``.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import get_window

import audiokit

__all__ = [
    "EPS32",
    "PNG_END",
    "PNG_MAGIC",
    "SR",
    "cli_npy",
    "png_size",
    "reference_power",
    "reference_stft",
    "rel_err",
    "samples",
    "sidecar",
    "write",
]

#: Sample rate (Hz) of the generated test inputs.
SR = 16000
EPS32 = float(np.finfo(np.float32).eps)
#: First and last bytes of every PNG file (signature; IEND chunk with its CRC).
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND\xaeB`\x82"


def write(path: Path, x: np.ndarray, sr: int = SR, subtype: str = "FLOAT") -> Path:
    """Write samples (``(channels, n)`` or ``(n,)``) as a WAV file through audiokit; return the path."""
    audiokit.write(path, np.atleast_2d(x), sr, subtype=subtype)
    return path


def samples(path: Path) -> np.ndarray:
    """The file's samples as float64 (channels, n): float32 WAV values are exact in float64."""
    y, _ = sf.read(path, dtype="float64", always_2d=True)
    return y.T


def reference_stft(y, win, hop, n_fft=None, *, center=False, pad_mode="constant", periodic=True, window="hann") -> np.ndarray:
    """Naive STFT of a 1-D float64 signal: pad, cut frames, window (scipy get_window, centred in n_fft), rfft.

    Frame ``m`` covers ``[m*hop, m*hop + n_fft)`` of the (padded) signal.  Shape (n_fft//2 + 1, n_frames);
    an input shorter than one frame is zero-padded to one frame.
    """
    n_fft = n_fft or win
    if center:
        y = np.pad(y, n_fft // 2, mode=pad_mode)
    if len(y) < n_fft:
        y = np.pad(y, (0, n_fft - len(y)))
    padded = np.zeros(n_fft)
    offset = (n_fft - win) // 2
    padded[offset : offset + win] = get_window(window, win, fftbins=periodic)
    count = 1 + (len(y) - n_fft) // hop
    frames = np.stack([y[m * hop : m * hop + n_fft] * padded for m in range(count)])
    return np.fft.rfft(frames, axis=1).T


def reference_power(y, win, hop, *, center=False, pad_mode="constant") -> np.ndarray:
    """``|rfft|**2`` of periodic-Hann frames ``[m*hop, m*hop + win)``, shape (win//2 + 1, n_frames)."""
    return np.abs(reference_stft(y, win, hop, center=center, pad_mode=pad_mode)) ** 2


def rel_err(actual: np.ndarray, expected: np.ndarray) -> float:
    """max |actual - expected| relative to max |expected| (shapes must agree)."""
    assert actual.shape == expected.shape
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk of PNG bytes (bytes 16-24, big-endian)."""
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def sidecar(npy: Path) -> dict:
    """The JSON sidecar written beside an ``.npy`` output (same stem)."""
    return json.loads(npy.with_suffix(".json").read_text())


#: The start of the one line ``mel``/``mfcc`` print when the mel bank has more bands than ``--nfft`` resolves (80 bands
#: at n_fft 400 and 16 kHz, the defaults these tests use): expected there, and tested in tests/plot/test_figures_cli.py.
DUPLICATE_BANDS = "mel bands are built from the same DFT bins as the band below"


def without_duplicate_bands(err: str) -> str:
    """``err`` without the duplicate-band warning line (see :data:`DUPLICATE_BANDS`)."""
    return "".join(line for line in err.splitlines(keepends=True) if DUPLICATE_BANDS not in line)


def cli_npy(cli, command: str, src: Path, npy: Path, *args) -> np.ndarray:
    """Run ``audiokit COMMAND SRC --npy NPY ARGS...`` through the ``cli`` fixture and load the array.

    Checks the clean run: exit 0, nothing on stderr (but the duplicate-band warning of the 16 kHz defaults), and
    stdout listing exactly the array and its sidecar.
    """
    code, out, err = cli(command, src, "--npy", npy, *args)
    assert (code, without_duplicate_bands(err)) == (0, ""), err
    assert out == f"{npy}\n{npy.with_suffix('.json')}\n"
    return np.load(npy)

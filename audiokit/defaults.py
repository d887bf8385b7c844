"""audiokit's own analysis defaults, in one place: the CLI and the flat API both read them.

``audiokit spectrogram|mel|mfcc`` take these values for every option the user (or a ``--compat`` preset) did not
set (:data:`audiokit.pipelines.compat.PRESETS` ``[None]`` is built from them), and :mod:`audiokit.api` uses them as
its keyword defaults, so ``audiokit.mfcc(y, sr=16000)`` and ``audiokit mfcc`` compute the same thing.  Durations
are written as on the command line (``"25ms"``, or a bare integer of samples) and rounded to samples at the
input's rate as :mod:`audiokit.units` documents (:func:`frame_samples`).

Log scaling depends on what is written (``docs/conventions.md``, "dB references"):

* arrays meant for a model (``--npy``, ``audiokit batch``, the API) are **absolute**: ``10·log10(max(P, amin))``
  re 1 (:data:`FEATURE_REF`), no clip (:data:`FEATURE_TOP_DB`), so levels compare across files;
* pictures (the PNG) normalise: 0 dB is the loudest cell (:data:`PICTURE_REF`) and the colour scale covers the
  top 80 dB (:data:`PICTURE_TOP_DB`).

An explicit ``--ref`` / ``--top-db`` applies to both.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "WIN",
    "HOP",
    "NFFT",
    "WINDOW",
    "CENTER",
    "PAD_MODE",
    "SCALE",
    "N_MELS",
    "FMIN_HZ",
    "MEL_SCALE",
    "MEL_NORM",
    "LOG",
    "N_MFCC",
    "LIFTER",
    "ENERGY",
    "FEATURE_REF",
    "FEATURE_TOP_DB",
    "PICTURE_REF",
    "PICTURE_TOP_DB",
    "frame_samples",
]

#: Window length (``--win``; API ``win_length``).
WIN = "25ms"
#: Hop between frame starts (``--hop``; API ``hop_length``).
HOP = "10ms"
#: FFT size (``--nfft``; API ``n_fft``): None means the window length.
NFFT: str | None = None
#: Window (periodic); ``--window``.
WINDOW = "hann"
#: Frames start at ``m·hop`` (no ``n_fft/2`` padding); ``--center``.
CENTER = False
#: Padding used with ``--center``.
PAD_MODE: Literal["constant", "reflect"] = "constant"
#: Values of ``spectrogram``/``mel``: ``db`` (the log of :data:`LOG`), ``power`` or ``magnitude``.
SCALE = "db"
#: Mel bands.
N_MELS = 80
#: Lowest mel filter edge (Hz); the highest is ``sr/2``.
FMIN_HZ = 0.0
#: Mel scale: HTK ``2595·log10(1 + f/700)``.
MEL_SCALE: Literal["htk", "slaney"] = "htk"
#: Mel filter normalisation: ``none`` (triangles peak at 1).
MEL_NORM = "none"
#: Logarithm of ``--scale db``: ``db`` (10·log10 of power).
LOG: Literal["db", "ln", "log10"] = "db"
#: Cepstra kept (c0 included).
N_MFCC = 20
#: Cepstral lifter (0: none).
LIFTER = 0.0
#: Replace c0 by the log frame energy.
ENERGY = False

#: dB reference of arrays for a model (``.npy``, batch, API): absolute, ``0 dB = 1`` (power 1, full-scale units).
FEATURE_REF = 1.0
#: Clip of arrays for a model: None (off; a clip relative to each file's peak would normalise per file).
FEATURE_TOP_DB: float | None = None
#: dB reference of pictures (PNG): 0 dB is the loudest cell.
PICTURE_REF: Literal["max"] = "max"
#: Range of pictures (PNG): values more than 80 dB below the loudest cell are drawn as the floor colour.
PICTURE_TOP_DB = 80.0


def frame_samples(
    sr: float | None,
    *,
    n_fft: int | None = None,
    win_length: int | None = None,
    hop_length: int | None = None,
    caller: str = "stft",
) -> tuple[int, int, int]:
    """``(n_fft, win_length, hop_length)`` in samples, each None taking audiokit's default at ``sr``.

    The CLI's rules: ``win_length`` = :data:`WIN` (25 ms) and ``hop_length`` = :data:`HOP` (10 ms), rounded to
    samples at ``sr`` (ties away from zero); ``n_fft`` = ``win_length``.  Given values are returned as they are.

    Raises
    ------
    ParameterError
        A default duration is needed and ``sr`` is None (it cannot be turned into samples), or ``sr`` is not a
        whole number of Hz.
    """
    from .errors import ParameterError
    from .units import parse_duration

    def default(name: str, text: str) -> int:
        if sr is None:
            raise ParameterError(
                f"{caller}: {name} defaults to {text} (audiokit's --{'win' if name == 'win_length' else 'hop'}), which "
                f"needs sr; give sr= or {name}= in samples"
            )
        if float(sr) != int(sr) or sr <= 0:
            raise ParameterError(f"{caller}: sr must be a whole number of Hz > 0 to round {text} to samples, got {sr!r}")
        return parse_duration(text).to_samples(int(sr))

    win = win_length if win_length is not None else default("win_length", WIN)
    hop = hop_length if hop_length is not None else default("hop_length", HOP)
    return (win if n_fft is None else n_fft), win, hop

"""YIN (de Cheveigné & Kawahara 2002): per frame, the first trough of the normalised difference below a threshold.

For each row ``d'`` of :func:`~.difference.cmnd` (lags ``min_period + i``), the period is the first trough ``i``
with ``d'[i] < trough_threshold`` ("the smallest value of tau that gives a minimum of d' deeper than this
threshold"), or the global minimum (first ``argmin``) if there is none, refined by the parabola's vertex:
``period = min_period + i + s[i]`` samples and ``f0 = sr / period`` Hz.  This is librosa 0.11's ``yin``
(``core/pitch.py``) step for step, on rows computed faster (:func:`~.difference.cmnd`: the autocorrelation at the
searched lags only, in the input's precision), so the f0 are librosa's to float rounding (the tolerance and the
count of frames beyond it: ``tests/dsp/test_yin_fast.py``).  :func:`yin_block` searches the rows in one pass and
refines only the chosen lag, with the arithmetic of :func:`yin_and_flags` over :func:`~.difference.parabolic_shifts`
(same bits).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...validate import check_real
from .difference import cmnd, frame_signal, troughs
from .params import FRAME_LENGTH, SR, PitchGeometry, check_audio

__all__ = ["pad_centered", "yin", "yin_and_flags", "yin_block", "yin_frames"]


def pad_centered(y: np.ndarray, frame_length: int, *, center: bool, pad_mode: str = "constant") -> np.ndarray:
    """``y`` padded by ``frame_length // 2`` on both ends of the last axis with ``np.pad(mode=pad_mode)`` when
    ``center`` (frame ``m`` is then centred on sample ``m * hop_length``), else ``y`` itself."""
    if not center:
        return y
    width = [(0, 0)] * y.ndim
    width[-1] = (frame_length // 2, frame_length // 2)
    mode: Any = pad_mode  # np.pad's stubs list its modes as Literals; an unknown one raises ValueError there
    return np.pad(y, width, mode=mode)


def yin_frames(rows: np.ndarray, shifts: np.ndarray, geometry: PitchGeometry, trough_threshold: float) -> np.ndarray:
    """YIN's f0 (Hz, float64, shape ``(n_frames,)``) from difference rows ``(n_frames, n_periods)`` and their
    parabolic shifts."""
    return yin_and_flags(rows, shifts, geometry, trough_threshold)[0]


def yin_and_flags(
    rows: np.ndarray, shifts: np.ndarray, geometry: PitchGeometry, trough_threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(f0, periodic)``: YIN's f0 and whether the frame had a trough below the threshold (else its f0 is the
    global minimum's, an aperiodic frame's guess)."""
    below = troughs(rows) & (rows < np.float64(trough_threshold))
    index = np.argmax(below, axis=-1)
    none = ~below.any(axis=-1)
    index[none] = np.argmin(rows[none], axis=-1)
    period = geometry.min_period + index + np.take_along_axis(shifts, index[:, None], axis=-1)[:, 0]
    f0: np.ndarray = geometry.sr / period
    periodic: np.ndarray = np.logical_not(none)
    return f0, periodic


def yin_block(frames: np.ndarray, geometry: PitchGeometry, trough_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """``(f0, periodic)`` of frames ``(n_frames, frame_length)``: :func:`yin_and_flags` of :func:`~.difference.cmnd`'s
    rows and their :func:`~.difference.parabolic_shifts`, bit for bit, with the shift computed at the chosen lag only.
    """
    rows = cmnd(frames, geometry)
    n, width = rows.shape
    below = troughs(rows)
    below &= rows < np.float64(trough_threshold)
    index = np.argmax(below, axis=-1)
    periodic = below[np.arange(n), index]
    none = np.flatnonzero(~periodic)
    if none.size:
        index[none] = np.argmin(rows[none], axis=-1)
    # parabolic_shifts at (frame, index): float64, 0 at the ends and where |b| >= |a|
    inner = (index > 0) & (index < width - 1)
    at = np.clip(index, 1, width - 2)
    frame = np.arange(n)
    left = rows[frame, at - 1].astype(np.float64)
    mid = rows[frame, at].astype(np.float64)
    right = rows[frame, at + 1].astype(np.float64)
    a = right + left - 2 * mid
    b = (right - left) / 2
    inside = inner & (np.abs(b) < np.abs(a))
    shift = np.zeros(n)
    shift[inside] = -b[inside] / a[inside]
    f0: np.ndarray = geometry.sr / (geometry.min_period + index + shift)
    return f0, periodic


def yin(
    y: np.ndarray,
    *,
    fmin: float,
    fmax: float,
    sr: float = SR,
    frame_length: int = FRAME_LENGTH,
    hop_length: int | None = None,
    trough_threshold: float = 0.1,
    center: bool = True,
    pad_mode: str = "constant",
) -> np.ndarray:
    """Fundamental frequency by YIN, frame by frame (librosa 0.11's ``yin``: same arguments, its f0 to float rounding).

    Parameters
    ----------
    y : np.ndarray, shape (..., n_samples), float
        Audio; every leading axis is analysed separately.
    fmin, fmax : float
        Frequency range (Hz), ``0 < fmin < fmax <= sr / 2``, ``sr / fmin < frame_length - 1``.
    sr : float
        Sample rate (Hz).
    frame_length : int
        Frame length (samples).
    hop_length : int or None
        Hop (samples); None means ``frame_length // 4``.
    trough_threshold : float > 0
        Absolute threshold on ``d'``.
    center : bool
        Pad by ``frame_length // 2`` so that frame ``m`` is centred on sample ``m * hop_length``.
    pad_mode : str
        ``np.pad`` mode of the centring padding.

    Returns
    -------
    f0 : np.ndarray, shape (..., n_frames), float64
        Hz, every frame (YIN always gives a period).
    """
    geometry = PitchGeometry.make(sr=sr, fmin=fmin, fmax=fmax, frame_length=frame_length, hop_length=hop_length)
    threshold = check_real(trough_threshold, "trough_threshold", positive=True)
    y = check_audio(y)
    padded = pad_centered(y, geometry.frame_length, center=center, pad_mode=pad_mode)
    lead = padded.shape[:-1]
    flat = padded.reshape(-1, padded.shape[-1])
    out = [yin_of(row, geometry, threshold) for row in flat]
    return np.stack(out).reshape(lead + (out[0].shape[-1],))


#: Frames per analysis block (YIN's :func:`yin_block`, pYIN's observations, the streamed tracker's chunks): bounds
#: the temporaries on long inputs (YIN's rows and masks, 2048 x n_periods; pYIN's 2048 x n_fft spectra).
BLOCK_FRAMES = 2048


def yin_of(padded: np.ndarray, geometry: PitchGeometry, threshold: float) -> np.ndarray:
    """YIN f0 (Hz) of one padded channel ``(n_padded,)``, in blocks of :data:`BLOCK_FRAMES` frames."""
    frames = frame_signal(padded, geometry.frame_length, geometry.hop_length)
    if frames.shape[0] == 0:
        from ...errors import ParameterError

        raise ParameterError(f"input is too short (n={padded.shape[-1]}) for frame_length={geometry.frame_length}")
    parts = [
        yin_block(frames[start : start + BLOCK_FRAMES], geometry, threshold)[0]
        for start in range(0, frames.shape[0], BLOCK_FRAMES)
    ]
    return np.concatenate(parts)

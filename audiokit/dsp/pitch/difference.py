"""YIN's per-frame analysis: the cumulative mean normalised difference, its troughs and their parabolic refinement.

For a frame ``x[0 .. L)`` (``L = frame_length``) and lags ``k = 0 .. max_period``:

* autocorrelation by FFT, ``r[k] = irfft(|rfft(x, n_fft)|**2)[k]`` with ``n_fft >= 2 L - 1`` (no wrap-around);
* difference function ``d[0] = 0``, ``d[k] = 2 (r[0] - r[k]) - e[k-1]`` with ``e[m] = sum_{j<=m} x[j]**2``
  for ``m >= 1`` and ``e[0] = 0`` (librosa 0.11's form of de Cheveigné & Kawahara's eq. 6, including its
  ``e[0] = 0``: it zeroes lag 0 of the array holding ``e`` before the difference reads it);
* cumulative mean normalised difference (eq. 8) on ``k = min_period .. max_period``:
  ``d'[k] = d[k] / (mean(d[1 .. k]) + tiny)``, a row of ``n_periods`` lags.

A trough is a local minimum ``d'[k] < d'[k-1]`` and ``d'[k] <= d'[k+1]``; the first lag is a trough when
``d'[0] < d'[1]``, the last when ``d'[-1] < d'[-2]``.  The parabola through a lag and its neighbours has its vertex
at ``k + s`` with ``s = -b / a``, ``a = d'[k+1] + d'[k-1] - 2 d'[k]``, ``b = (d'[k+1] - d'[k-1]) / 2``; ``s = 0``
when ``|b| >= |a|`` (the vertex lies beyond a neighbour) and at both ends.

Arrays are frame-major: frames ``(n_frames, frame_length)``, rows ``(n_frames, n_periods)``.  Two computations of
the rows:

* :func:`cmnd_exact` (pYIN) is librosa 0.11's operation for operation (``core/pitch.py``:
  ``_cumulative_mean_normalized_difference``; the ``2 L - 1``-point pocketfft autocorrelation), so the rows are
  librosa's bit for bit;
* :func:`cmnd` (YIN) takes the autocorrelation at lags ``0 .. max_period`` only, from shared hop blocks
  (:mod:`.blockacf`), and keeps every step in the frames' precision: librosa's rows to float rounding, ~3x
  faster (two 2 hop-point transforms per frame instead of two 2 L-point ones).

:func:`parabolic_shifts` and :func:`troughs` are librosa's (``_parabolic_interpolation``, ``util.localmin``); the
shifts are computed in float64 (librosa's rows are float64; float32 rows are widened first).
"""

from __future__ import annotations

import numpy as np

from ...engine import get_backend
from .blockacf import autocorrelation
from .params import PitchGeometry

__all__ = ["cmnd", "cmnd_exact", "frame_signal", "parabolic_shifts", "troughs"]

#: The FFT backend of :func:`cmnd_exact`'s autocorrelation: scipy.fft (pocketfft), the library of librosa 0.11's
#: default ``get_fftlib()``, so that pYIN's difference rows (and every trough and threshold decision after them) are
#: librosa's bit for bit; one thread, so the same bytes in every process.  (:func:`cmnd`: :data:`.blockacf.FFT_BACKEND`.)
FFT_BACKEND = "scipy"

#: Frames per pass of :func:`cmnd`'s arithmetic (its scratch rows stay in the L2 cache).
ROW_CHUNK = 256


def frame_signal(y: np.ndarray, frame_length: int, hop_length: int) -> np.ndarray:
    """Frames of the last axis, a read-only view ``(..., n_frames, frame_length)``: frame ``m`` is
    ``y[..., m * hop_length : m * hop_length + frame_length]``."""
    windows = np.lib.stride_tricks.sliding_window_view(y, frame_length, axis=-1)
    return windows[..., ::hop_length, :]


def cmnd(frames: np.ndarray, geometry: PitchGeometry) -> np.ndarray:
    """Cumulative mean normalised difference of each frame, in the frames' precision (YIN's fast rows).

    Parameters
    ----------
    frames : np.ndarray, shape (n_frames, frame_length), float32 or float64
        The frames (hop-spaced views of one signal, as :func:`frame_signal` makes, are fastest).
    geometry : PitchGeometry
        Period range and framing.

    Returns
    -------
    np.ndarray, shape (n_frames, n_periods), dtype of ``frames``
        ``d'[k]`` for ``k = min_period .. max_period``: :func:`cmnd_exact`'s values to float rounding.  Each frame's
        row depends on that frame only (not on the other frames of the call).
    """
    lo, hi = geometry.min_period, geometry.max_period
    if frames.dtype not in (np.float32, np.float64):
        frames = frames.astype(np.float64)
    dtype, n = frames.dtype, frames.shape[0]
    out = np.empty((n, hi - lo + 1), dtype=dtype)
    # one chunk at a time through scratch arrays that stay in the cache (fresh large temporaries cost page faults)
    chunk = ROW_CHUNK
    acf = np.empty((chunk, hi + 1), dtype=dtype)
    energy = np.empty((chunk, hi), dtype=dtype)
    lags = np.arange(lo, hi + 1, dtype=dtype)
    tiny = np.finfo(dtype).tiny
    for start in range(0, n, chunk):
        part = frames[start : start + chunk]
        m = part.shape[0]
        r, e = acf[:m], energy[:m]
        autocorrelation(part, geometry, out=r)
        np.square(part[:, :hi], out=e)
        np.cumsum(e, axis=-1, out=e)
        e[:, 0] = 0  # librosa's e[0] = 0
        diff = r[:, 1:]
        np.subtract(r[:, :1], diff, out=diff)
        diff *= 2
        diff -= e  # d[k], k = 1 .. hi (column k - 1)
        mean = np.cumsum(diff, axis=-1, out=e)[:, lo - 1 :]
        mean /= lags
        mean += tiny
        np.divide(diff[:, lo - 1 :], mean, out=out[start : start + m])
    return out


def cmnd_exact(frames: np.ndarray, geometry: PitchGeometry) -> np.ndarray:
    """Cumulative mean normalised difference of each frame, librosa 0.11's bits (pYIN's rows).

    Parameters
    ----------
    frames : np.ndarray, shape (n_frames, frame_length), float32 or float64
        The frames.
    geometry : PitchGeometry
        Period range and FFT length.

    Returns
    -------
    np.ndarray, shape (n_frames, n_periods), float64
        ``d'[k]`` for ``k = min_period .. max_period``.  The autocorrelation and the difference are computed in the
        frames' precision, the cumulative mean in float64 (librosa's promotions).
    """
    lo, hi = geometry.min_period, geometry.max_period
    backend = get_backend(FFT_BACKEND)
    spectrum = backend.rfft(frames, geometry.n_fft)
    power = spectrum.real**2 + spectrum.imag**2
    acf = backend.irfft(power, geometry.n_fft)[:, : hi + 1]
    energy = np.cumsum(np.square(frames[:, :hi]), axis=-1)
    energy[:, 0] = 0  # librosa zeroes lag 0 of its energy/difference array before the difference reads it
    diff = np.empty(acf.shape, dtype=acf.dtype)
    diff[:, 0] = 0
    diff[:, 1:] = 2 * (acf[:, 0:1] - acf[:, 1:]) - energy
    lags = np.arange(1, hi + 1)
    mean = np.cumsum(diff[:, 1:], axis=-1) / lags
    denominator = mean[:, lo - 1 : hi]
    out: np.ndarray = diff[:, lo : hi + 1] / (denominator + np.finfo(denominator.dtype).tiny)
    return out


def parabolic_shifts(rows: np.ndarray) -> np.ndarray:
    """Vertex offsets ``s`` (lags, in ``(-1, 1)``) of the parabola through each lag and its neighbours; 0 at the
    ends and where ``|b| >= |a|``.  Shape of ``rows``, float64 (float32 rows are widened first)."""
    rows = rows.astype(np.float64, copy=False)
    shifts = np.zeros_like(rows)
    left, mid, right = rows[:, :-2], rows[:, 1:-1], rows[:, 2:]
    a = right + left - 2 * mid
    b = (right - left) / 2
    inside = np.abs(b) < np.abs(a)
    shifts[:, 1:-1] = -b / np.where(inside, a, 1.0)
    shifts[:, 1:-1][~inside] = 0
    return shifts


def troughs(rows: np.ndarray) -> np.ndarray:
    """Boolean mask of the troughs (local minima) of each row, shape of ``rows``: interior lags with
    ``d'[k] < d'[k-1]`` and ``d'[k] <= d'[k+1]``, the first lag when ``d'[0] < d'[1]``, the last when
    ``d'[-1] < d'[-2]``."""
    mask = np.zeros(rows.shape, dtype=bool)
    mask[:, 1:-1] = (rows[:, 1:-1] < rows[:, :-2]) & (rows[:, 1:-1] <= rows[:, 2:])
    mask[:, 0] = rows[:, 0] < rows[:, 1]
    mask[:, -1] = rows[:, -1] < rows[:, -2]
    return mask

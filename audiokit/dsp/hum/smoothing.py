"""Averages along the frame axis: kernels, convolution, weighted and robust averages, their variance.

The per-frame measurements of the hum analysis (complex amplitudes ``y`` and
noise powers ``r``, one value per 1 s or 0.5 s frame) are smoothed over
seconds with a Hann kernel ``ker`` (:func:`hann_kernel`, lengths in frames):

* :func:`kernel_smooth`: ``Σ_l ker_l w y / Σ_l ker_l w``;
* :func:`robust_average`: the same with weights ``1/(r + |y - mean|²)``,
  reweighted a few times so that frames where something else sits on the
  line count less;
* :func:`sandwich_variance`: the variance of such an average, from its
  residuals;
* :func:`overlap_factor`: how much overlapping frames inflate the variance
  of an average of white-noise projections.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BANDED_MAX_FRAMES",
    "convolve_frames",
    "hann_kernel",
    "kernel_smooth",
    "overlap_factor",
    "robust_average",
    "sandwich_variance",
]

#: Up to this many frames :func:`convolve_frames` is one banded matrix product (it beats a loop over the taps).
BANDED_MAX_FRAMES = 512
_LOOP_MAX_TAPS = 64  # longer signals: a loop over the taps for kernels shorter than this, else FFT convolution
_MIN_WIDTH_FRAMES = 1e-9  # guards the division of a zero-width kernel


def hann_kernel(width_frames: float, *, exclude: float = 0.0) -> np.ndarray:
    """Hann kernel over frames.

    Parameters
    ----------
    width_frames : float >= 0
        Width ``W`` of the kernel (frames).
    exclude : float >= 0
        Lags (frames) below which the kernel is zeroed (cross-validation:
        leave out the frames that overlap the one predicted).

    Returns
    -------
    np.ndarray, shape (2h + 1,)
        ``cos²(π l / W)`` for ``|l| < W/2``, lags ``l = -h .. h`` with
        ``h = max(0, ceil(W/2) - 1)``; all ones when ``h = 0``; zero for
        ``|l| < exclude``.
    """
    half = max(0, int(np.ceil(width_frames / 2.0)) - 1)
    lags = np.arange(-half, half + 1, dtype=float)
    ker = np.cos(np.pi * lags / max(width_frames, _MIN_WIDTH_FRAMES)) ** 2
    ker[np.abs(lags) >= width_frames / 2.0] = 0.0
    if half == 0:
        ker[:] = 1.0
    ker[np.abs(lags) < exclude] = 0.0
    return ker


def convolve_frames(a: np.ndarray, ker: np.ndarray) -> np.ndarray:
    """Convolve along the last axis with a centred odd kernel, zeros outside.

    Parameters
    ----------
    a : np.ndarray, shape (..., M)
    ker : np.ndarray, shape (L,), L odd

    Returns
    -------
    np.ndarray, shape (..., M)
        ``out[..., m] = Σ_l ker[L//2 + l] · a[..., m - l]`` (float64 or complex128).
    """
    if a.shape[-1] == 0:
        return a.copy()
    n = a.shape[-1]
    if len(ker) > 2 * n - 1:  # lags beyond the signal meet only zeros
        cut = len(ker) // 2 - (n - 1)
        ker = ker[cut : len(ker) - cut]
    if n <= BANDED_MAX_FRAMES:  # a banded matrix product: one call instead of a loop over the taps
        pad = len(ker) // 2
        lag = pad + np.arange(n)[None, :] - np.arange(n)[:, None]
        mat = np.where((lag >= 0) & (lag < len(ker)), ker[np.clip(lag, 0, len(ker) - 1)], 0.0)
        return a @ mat
    if len(ker) < _LOOP_MAX_TAPS:
        pad = len(ker) // 2
        ap = np.concatenate([np.zeros(a.shape[:-1] + (pad,), a.dtype), a, np.zeros(a.shape[:-1] + (pad,), a.dtype)], -1)
        out = np.zeros(a.shape, np.result_type(a.dtype, np.float64))
        for i, w in enumerate(ker[::-1]):
            if w:
                out += w * ap[..., i : i + n]
        return out
    from scipy.signal import fftconvolve  # lazy: scipy.signal costs ~0.4 s of CLI start-up

    full = fftconvolve(a, ker.reshape((1,) * (a.ndim - 1) + (-1,)), mode="full", axes=-1)
    pad = len(ker) // 2
    return full[..., pad : pad + a.shape[-1]]


def kernel_smooth(y: np.ndarray, w: np.ndarray, ker: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted kernel average along frames.

    Returns
    -------
    mean : np.ndarray, shape of ``y``
        ``Σ_l ker_l w y / Σ_l ker_l w`` (the denominator floored at the smallest float).
    den : np.ndarray, shape of ``w``
        ``Σ_l ker_l w``.
    """
    num = convolve_frames(y * w, ker)
    den = convolve_frames(w, ker)
    tiny = np.finfo(float).tiny
    return num / np.maximum(den, tiny), den


def robust_average(y: np.ndarray, r: np.ndarray, ker: np.ndarray, *, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Kernel average with weights ``1/(r + |y - mean|²)``.

    Parameters
    ----------
    y : np.ndarray, shape (rows, M), complex
        Per-frame amplitudes.
    r : np.ndarray, shape (rows, M), float > 0
        Per-frame noise power.
    ker : np.ndarray
        Kernel over frames (:func:`hann_kernel`).
    rounds : int >= 0
        Reweightings after the first average (weights ``1/r``).

    Returns
    -------
    mean : np.ndarray, shape (rows, M), complex
    w : np.ndarray, shape (rows, M)
        The last weights.
    """
    w = 1.0 / r
    mean, _ = kernel_smooth(y, w, ker)
    for _ in range(rounds):
        w = 1.0 / (r + (y.real - mean.real) ** 2 + (y.imag - mean.imag) ** 2)
        mean, _ = kernel_smooth(y, w, ker)
    return mean, w


def sandwich_variance(y: np.ndarray, mean: np.ndarray, w: np.ndarray, ker: np.ndarray) -> np.ndarray:
    """Variance of a weighted kernel average from its residuals.

    ``Σ ker² w² |y - mean|² / (Σ ker w)²`` per frame, shape of ``w`` (without
    the overlap of the frames: multiply by :func:`overlap_factor`).
    """
    den = convolve_frames(w, ker)
    num = convolve_frames(w**2 * ((y.real - mean.real) ** 2 + (y.imag - mean.imag) ** 2), ker**2)
    return num / np.maximum(den, np.finfo(float).tiny) ** 2


def overlap_factor(window: np.ndarray, hop: int) -> float:
    """``Σ_l ρ(l)``: how much overlapping frames inflate the variance of an average of white-noise projections.

    ``ρ(l) = Σ_j g_j g_{j+l·hop} / Σ_j g_j²`` for the window ``g`` (decimated
    samples) and the hop between frames (decimated samples).
    """
    total = float(np.dot(window, window))
    s = 1.0
    lag = hop
    while lag < len(window):
        s += 2.0 * float(np.dot(window[:-lag], window[lag:])) / total
        lag += hop
    return s

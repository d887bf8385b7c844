"""Kaldi's fixed tables: analysis windows, mel scale and filter bank, DCT matrix, lifter.

Each is computed as Kaldi computes it (``FeatureWindowFunction``, ``MelBanks``,
``ComputeDctMatrix``, ``ComputeLifterCoeffs``), in the precision Kaldi stores it (float32).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ParameterError
from ...validate import check_int
from .options import Options, _f32

__all__ = ["window_function", "mel_scale", "inverse_mel_scale", "mel_banks", "dct_matrix", "lifter_coeffs"]


# --------------------------------------------------------------------------------------------
# Tables: window, mel bank, DCT, lifter
# --------------------------------------------------------------------------------------------
def window_function(options: Options) -> np.ndarray:
    """Kaldi's ``FeatureWindowFunction``: the analysis window, computed in double, stored as float32.

    Returns
    -------
    np.ndarray of float32, shape (window_size,)
        Formulas in the module docstring (symmetric: ``a = 2*pi/(W - 1)``).
    """
    w = options.window_size
    a = 2.0 * math.pi / (w - 1)
    i = np.arange(w, dtype=np.float64)
    kind = options.window_type
    if kind == "hanning":
        win = 0.5 - 0.5 * np.cos(a * i)
    elif kind == "sine":
        win = np.sin(0.5 * a * i)
    elif kind == "hamming":
        win = 0.54 - 0.46 * np.cos(a * i)
    elif kind == "povey":
        win = np.power(np.maximum(0.5 - 0.5 * np.cos(a * i), 0.0), 0.85)
    elif kind == "rectangular":
        win = np.ones(w)
    else:  # blackman
        b = _f32(options.blackman_coeff)
        win = b - 0.5 * np.cos(a * i) + (0.5 - b) * np.cos(2 * a * i)
    return win.astype(np.float32)


def mel_scale(freq: np.ndarray | float) -> np.ndarray:
    """Kaldi's mel scale ``1127 * ln(1 + f/700)`` (``f`` in Hz), in float32 as Kaldi's ``MelScale``."""
    f = np.asarray(freq, dtype=np.float32)
    return np.float32(1127.0) * np.log(np.float32(1.0) + f / np.float32(700.0))


def inverse_mel_scale(mel: np.ndarray | float) -> np.ndarray:
    """Inverse of :func:`mel_scale`: ``700 * (exp(m/1127) - 1)`` Hz (float32)."""
    m = np.asarray(mel, dtype=np.float32)
    return np.float32(700.0) * (np.exp(m / np.float32(1127.0)) - np.float32(1.0))


def mel_banks(options: Options) -> np.ndarray:
    """Kaldi's mel filter bank (``MelBanks``, no VTLN warping) as a dense matrix.

    Band ``j`` (0-based) has edges ``left = mel_low + j*d``, ``center = left + d``,
    ``right = left + 2d`` with ``d = (mel(high) - mel(low)) / (num_mel_bins + 1)`` (triangles
    linear **in mel**); FFT bin ``k`` (frequency ``k * samp_freq / N``) gets the weight
    ``(mel_k - left)/(center - left)`` for ``left < mel_k <= center`` and
    ``(right - mel_k)/(right - center)`` for ``center < mel_k < right``.  Only bins
    ``0 .. N/2 - 1`` are used (Kaldi ignores the Nyquist bin).  Computed in float32 as Kaldi.

    Returns
    -------
    np.ndarray of float32, shape (num_mel_bins, N//2 + 1)
        Rows are bands (low to high), columns FFT bins; the last column (Nyquist) is zero.

    Raises
    ------
    ParameterError
        If a band contains no FFT bin (too many bands for the FFT length).
    """
    n_fft = options.padded_window_size
    n_bins = options.num_mel_bins
    f32 = np.float32
    fft_bin_width = f32(options.samp_freq) / f32(n_fft)
    freqs = fft_bin_width * np.arange(n_fft // 2, dtype=np.float32)
    mel = mel_scale(freqs)
    mel_low = mel_scale(options.low_freq)
    mel_high = mel_scale(options.mel_high_freq_hz)
    delta = (mel_high - mel_low) / f32(n_bins + 1)
    bank = np.zeros((n_bins, n_fft // 2 + 1), dtype=np.float32)
    for j in range(n_bins):
        left = mel_low + f32(j) * delta
        center = mel_low + f32(j + 1) * delta
        right = mel_low + f32(j + 2) * delta
        inside = (mel > left) & (mel < right)
        if not inside.any():
            raise ParameterError(
                f"mel band {j} of {n_bins} contains no FFT bin (N = {n_fft}); num_mel_bins is too large for this FFT length"
            )
        up = (mel - left) / (center - left)
        down = (right - mel) / (right - center)
        bank[j, : n_fft // 2] = np.where(inside, np.where(mel <= center, up, down), f32(0.0))
    return bank


def dct_matrix(num_ceps: int, num_bins: int) -> np.ndarray:
    """Kaldi's ``ComputeDctMatrix`` rows ``0 .. num_ceps-1``: orthonormal DCT-II.

    ``D[0, n] = sqrt(1/N)``, ``D[k, n] = sqrt(2/N) * cos(pi/N * (n + 0.5) * k)`` with
    ``N = num_bins`` (the same matrix as ``scipy.fft.dct(..., norm="ortho")``).

    Returns
    -------
    np.ndarray of float64, shape (num_ceps, num_bins)
    """
    k = check_int(num_ceps, "num_ceps", minimum=1)
    n = check_int(num_bins, "num_bins", minimum=1)
    d = np.sqrt(2.0 / n) * np.cos(np.pi / n * np.outer(np.arange(k), np.arange(n) + 0.5))
    d[0, :] = np.sqrt(1.0 / n)
    return d


def lifter_coeffs(num_ceps: int, cepstral_lifter: float) -> np.ndarray:
    """Kaldi's ``ComputeLifterCoeffs``: ``1 + 0.5*Q*sin(pi*i/Q)``, ``i = 0 .. num_ceps-1`` (c0 unchanged).

    Returns
    -------
    np.ndarray of float64, shape (num_ceps,)
        All ones when ``cepstral_lifter == 0``.
    """
    q = float(cepstral_lifter)
    i = np.arange(check_int(num_ceps, "num_ceps", minimum=1), dtype=np.float64)
    if q == 0.0:
        return np.ones_like(i)
    return 1.0 + 0.5 * q * np.sin(np.pi * i / q)

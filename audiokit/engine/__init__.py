"""FFT engine: one small interface over interchangeable backends.

All transforms act on the last axis of an array (a batch of frames).
Forward transforms are unnormalised, inverse transforms are scaled by 1/N:

    X[k] = sum_{n=0}^{N-1} x[n] exp(-2 pi i k n / N)
    x[n] = (1/N) sum_{k=0}^{N-1} X[k] exp(+2 pi i k n / N)

float32 input gives complex64 output, float64 gives complex128.
"""

from __future__ import annotations

import numpy as np


class NumpyBackend:
    """numpy.fft backend (temporary minimal engine; pyFFTW backend pending)."""

    name = "numpy"

    def rfft(self, x: np.ndarray, n: int | None = None) -> np.ndarray:
        out = np.fft.rfft(x, n=n, axis=-1)
        return out.astype(np.complex64) if np.asarray(x).dtype == np.float32 else out

    def irfft(self, X: np.ndarray, n: int) -> np.ndarray:
        out = np.fft.irfft(X, n=n, axis=-1)
        return out.astype(np.float32) if np.asarray(X).dtype == np.complex64 else out

    def fft(self, x: np.ndarray, n: int | None = None) -> np.ndarray:
        out = np.fft.fft(x, n=n, axis=-1)
        return out.astype(np.complex64) if np.asarray(x).dtype in (np.float32, np.complex64) else out

    def ifft(self, X: np.ndarray, n: int | None = None) -> np.ndarray:
        out = np.fft.ifft(X, n=n, axis=-1)
        return out.astype(np.complex64) if np.asarray(X).dtype == np.complex64 else out


def get_backend(name: str | None = None) -> NumpyBackend:
    """Return the FFT backend named ``name`` (or the default)."""
    return NumpyBackend()

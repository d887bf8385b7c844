"""Reference helpers shared by the STFT tests: a naive loop-over-frames STFT and a spectra tolerance."""

from __future__ import annotations

import numpy as np

from audiokit.dsp.windows import get_window


def naive_stft(x, *, n_fft, hop, win_length, window="hann", center=False, pad_mode="constant", periodic=True):
    """Loop over frames, window (centred in n_fft) and np.fft.rfft each one, in float64."""
    w = np.zeros(n_fft)
    off = (n_fft - win_length) // 2
    w[off : off + win_length] = get_window(window, win_length, periodic=periodic)
    x = np.asarray(x, dtype=np.float64)
    if center:
        x = np.pad(x, (n_fft // 2, n_fft // 2), mode=pad_mode)
    if len(x) < n_fft:
        x = np.pad(x, (0, n_fft - len(x)))
    cols = [np.fft.rfft(x[m * hop : m * hop + n_fft] * w) for m in range(1 + (len(x) - n_fft) // hop)]
    return np.stack(cols, axis=-1)


def assert_close_spectra(X, ref, dtype=np.float64, k=64):
    """|X - ref| <= k * eps * max|ref| (FFT rounding grows like eps * |frame| * log N)."""
    assert X.shape == ref.shape
    tol = k * np.finfo(dtype).eps * max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(X - ref))) if X.size else 0.0
    assert err <= tol, (err, tol)

"""The flat public API: same numbers as the core it wraps and as closed forms; ``import audiokit`` stays cheap."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import audiokit


def naive_stft(x: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    """O(N²) DFT of periodic-Hann frames starting at m·hop (no centring)."""
    n = np.arange(n_fft)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * n / n_fft)
    frames = [x[m : m + n_fft] * w for m in range(0, len(x) - n_fft + 1, hop)]
    k = np.arange(n_fft // 2 + 1)[:, None]
    basis = np.exp(-2j * np.pi * k * n[None, :] / n_fft)
    return np.stack([basis @ f for f in frames], axis=-1)


def test_stft_equals_the_naive_dft(rng):
    x = rng.standard_normal(1000)
    got = audiokit.stft(x, n_fft=64, hop_length=16)
    want = naive_stft(x, 64, 16)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1000 * np.finfo(np.float64).eps * np.abs(want).max())


def test_leading_axes_are_kept(rng):
    x = rng.standard_normal((2, 3, 800))
    X = audiokit.stft(x, n_fft=128, hop_length=32)
    assert X.shape[:2] == (2, 3)
    np.testing.assert_allclose(X[1, 2], audiokit.stft(x[1, 2], n_fft=128, hop_length=32))
    assert audiokit.resample(x, sr=16000, target_sr=8000).shape == (2, 3, 400)
    assert audiokit.quantize(x * 0.1, bits=8, seed=1).shape == x.shape


def test_istft_inverts_stft_where_frames_overlap(rng):
    x = rng.standard_normal(4000)
    X = audiokit.stft(x, n_fft=256, hop_length=64, center=True)
    y = audiokit.istft(X, hop_length=64, center=True, length=x.size)
    np.testing.assert_allclose(y, x, atol=100 * np.finfo(np.float64).eps)


def test_spectrogram_and_mel_are_built_on_the_stft(rng):
    x = rng.standard_normal(3000)
    kw = {"n_fft": 512, "hop_length": 160, "win_length": 400}
    S = audiokit.spectrogram(x, **kw)
    np.testing.assert_allclose(S, np.abs(audiokit.stft(x, **kw)) ** 2, rtol=1e-12)
    bank = audiokit.mel_filterbank(sr=16000, n_fft=512, n_mels=40)
    M = audiokit.melspectrogram(x, sr=16000, n_mels=40, **kw)
    np.testing.assert_allclose(M, bank @ S, rtol=1e-10)
    L = audiokit.log_melspectrogram(x, sr=16000, n_mels=40, top_db=None, **kw)
    np.testing.assert_allclose(L, 10 * np.log10(np.maximum(M, 1e-10)), atol=1e-9)


def test_spectrum_peaks_read_a_sine_exactly():
    sr, n = 8000, 8000
    x = 0.5 * np.sin(2 * np.pi * 1000 * np.arange(n) / sr)
    (peak,) = audiokit.find_peaks(audiokit.spectrum(x, sr=sr), k=1)
    assert peak.freq_hz == pytest.approx(1000, abs=1e-9) and peak.amplitude == pytest.approx(0.5, rel=1e-9)


def test_generate_and_dehum():
    sr = 16000
    hum = audiokit.generate("hum:50", sr=sr, n_samples=4 * sr)
    tone = audiokit.generate("sine:1234:0.3", sr=sr, n_samples=4 * sr)
    result = audiokit.dehum(hum + tone, sr=sr, freq=50)
    assert result.output.shape == tone.shape
    assert np.sqrt(np.mean((result.output - tone) ** 2)) < 0.1 * np.sqrt(np.mean(hum**2))


def test_import_is_cheap_and_lazy():
    code = (
        "import sys, audiokit; heavy = [m for m in ('soundfile', 'scipy', 'matplotlib', 'pyfftw', 'typer') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        audiokit.nope  # noqa: B018


def test_corpus_loader_is_reachable_from_the_package():
    assert callable(audiokit.corpus.open)


def test_the_lazy_table_lists_exactly_the_api():
    # __init__ repeats api.__all__ so that `import audiokit` need not import numpy; the two must not drift apart
    from audiokit import _LAZY, api

    assert sorted(name for name, module in _LAZY.items() if module == "api") == sorted(api.__all__)

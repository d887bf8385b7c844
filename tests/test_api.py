"""The flat public API: same numbers as the core it wraps and as closed forms; ``import audiokit`` stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import audiokit

SPEECH = Path(__file__).resolve().parents[1] / "examples" / "data" / "speech.wav"


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
    got = audiokit.stft(x, n_fft=64, win_length=64, hop_length=16)
    want = naive_stft(x, 64, 16)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1000 * np.finfo(np.float64).eps * np.abs(want).max())


def test_leading_axes_are_kept(rng):
    x = rng.standard_normal((2, 3, 800))
    X = audiokit.stft(x, n_fft=128, win_length=128, hop_length=32)
    assert X.shape[:2] == (2, 3)
    np.testing.assert_allclose(X[1, 2], audiokit.stft(x[1, 2], n_fft=128, win_length=128, hop_length=32))
    assert audiokit.resample(x, sr=16000, target_sr=8000).shape == (2, 3, 400)
    assert audiokit.quantize(x * 0.1, bits=8, seed=1).shape == x.shape


def test_istft_inverts_stft_where_frames_overlap(rng):
    x = rng.standard_normal(4000)
    X = audiokit.stft(x, n_fft=256, win_length=256, hop_length=64, center=True)
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


# ------------------------------------------------------------------ the API's defaults are the CLI's
def speech_wav(tmp_path: Path) -> tuple[np.ndarray, Path]:
    """The example speech (16 kHz, 101 637 samples) as float32 and as a FLOAT WAV the CLI reads exactly."""
    import soundfile as sf

    y, sr = sf.read(SPEECH, dtype="float32")
    assert sr == 16000
    path = tmp_path / "speech.wav"
    sf.write(path, y, sr, subtype="FLOAT")
    return y, path


@pytest.mark.parametrize(
    "command, function",
    [
        ("mfcc", lambda y: audiokit.mfcc(y, sr=16000)),
        ("mel", lambda y: audiokit.log_melspectrogram(y, sr=16000)),
        ("spectrogram", lambda y: audiokit.spectrogram(y, sr=16000, log="db")),
    ],
)
def test_api_default_call_gives_the_cli_default_bytes(cli, tmp_path, command, function):
    # float32 samples (what the CLI reads): the same framing (25 ms / 10 ms -> 400 / 160 samples, n_fft 400),
    # bank, log, reference (1) and clip (none) -> the same float32 values, byte for byte
    y, wav = speech_wav(tmp_path)
    npy = tmp_path / f"{command}.npy"
    code, _, err = cli(command, wav, "--npy", npy)
    assert code == 0, err
    saved = np.load(npy)
    ours = np.asarray(function(y)).astype(np.float32)
    assert ours.shape == saved.shape == ({"mfcc": 20, "mel": 80, "spectrogram": 201}[command], 633)
    assert ours.tobytes() == saved.tobytes()


def test_api_power_spectra_give_the_cli_scale_power_bytes(cli, tmp_path):
    y, wav = speech_wav(tmp_path)
    for command, function in (("mel", audiokit.melspectrogram), ("spectrogram", audiokit.spectrogram)):
        npy = tmp_path / f"{command}.npy"
        assert cli(command, wav, "--npy", npy, "--scale", "power")[0] == 0
        assert np.asarray(function(y, sr=16000)).tobytes() == np.load(npy).tobytes(), command


def test_default_framing_is_25ms_10ms_at_sr_and_needs_sr(rng):
    x = rng.standard_normal(16000)
    X = audiokit.stft(x, sr=16000)  # win 400, hop 160, n_fft 400
    np.testing.assert_array_equal(X, audiokit.stft(x, n_fft=400, win_length=400, hop_length=160, sr=16000))
    assert X.shape == (201, 1 + (16000 - 400) // 160)
    assert audiokit.stft(x, sr=44100).shape == (1103 // 2 + 1, 1 + (16000 - 1103) // 441)  # 25 ms = 1102.5 -> 1103
    # n_fft alone zero-pads the 25 ms window, as audiokit spectrogram --nfft 512 does
    P = audiokit.spectrogram(x, sr=16000, n_fft=512)
    np.testing.assert_array_equal(P, audiokit.spectrogram(x, sr=16000, n_fft=512, win_length=400, hop_length=160))
    with pytest.raises(audiokit.ParameterError, match=r"stft: win_length defaults to 25ms .* needs sr"):
        audiokit.stft(x)
    with pytest.raises(audiokit.ParameterError, match=r"spectrogram: hop_length defaults to 10ms .* needs sr"):
        audiokit.spectrogram(x, n_fft=64, win_length=64)
    y = audiokit.istft(X, sr=16000, length=x.size)  # the inverse takes the same defaults
    np.testing.assert_allclose(y[400:-400], x[400:-400], atol=1e-12)


@pytest.mark.filterwarnings("ignore::audiokit.dsp.mel.DuplicateBandsWarning")  # 80 bands at n_fft 400 / 512: the default warns
def test_log_mel_and_mfcc_defaults_are_absolute_and_unclipped(rng):
    # noise (mel values ~ +20 dB re 1) then digital silence: the silent frames keep the absolute floor
    # 10 log10(1e-10) = -100 dB (a top_db clip would lift them to max - top_db), and halving the signal lowers
    # every other value by 20 log10(2) dB (a ref-max default would leave them unchanged)
    x = np.concatenate([rng.standard_normal(8000), np.zeros(8000)])
    L, H = audiokit.log_melspectrogram(x, sr=16000), audiokit.log_melspectrogram(0.5 * x, sr=16000)
    silent = np.all(L == L.min(), axis=0)
    assert L.min() == pytest.approx(-100.0, abs=1e-9) and silent.sum() > 40
    np.testing.assert_allclose((L - H)[:, ~silent], 20 * np.log10(2.0), atol=1e-9)
    C = audiokit.mfcc(x, sr=16000)
    assert C[0, -1] == pytest.approx(-100.0 * np.sqrt(80), abs=1e-9)  # c0 of the floor (orthonormal DCT)


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


@pytest.mark.slow
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

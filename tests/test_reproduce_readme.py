"""Every row of the README's "Reproducing other tools" table, run: the audiokit side and the other tool's call.

Each test names its row (``tool | their call | audiokit``) in its docstring and runs both sides as written there,
on ``examples/data/speech.wav`` (16 kHz).  The CLI is driven in-process through ``audiokit.cli.app.main``.
Tolerances: linear values and cepstra <= 1e-5 relative to the largest |value| (audiokit's CLI computes the STFT in
float32), complex STFT values <= 1e-5 relative, dB <= 1e-3 dB within 60 dB of the peak, Kaldi fbank <= 2e-4 in log
units within 60 dB of the strongest cell and <= 2e-3 in all (both compute in float32: tests/cli/test_features_cli.py),
MFCC <= 1e-3 after dividing out the lifter (as tests/dsp/test_kaldi.py), identical shapes and frame counts.
torchaudio is not installed (and not in the test extra): its rows are checked against arrays torchaudio 2.9.1
computed once from the same input (tests/data/torchaudio, made by make_reference.py there).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import audiokit

# Every test runs librosa, kaldi-native-fbank or the CLI on the whole speech example.
pytestmark = pytest.mark.slow

librosa = pytest.importorskip("librosa")
try:
    import kaldi_native_fbank as knf
except ImportError:
    knf = None

SPEECH = Path(__file__).resolve().parents[1] / "examples" / "data" / "speech.wav"
TORCH_REF = Path(__file__).resolve().parent / "data" / "torchaudio"
N, H = 512, 128


@pytest.fixture(scope="module")
def y() -> np.ndarray:
    x, sr = sf.read(SPEECH, dtype="float32")
    assert sr == 16000
    return x


def cli_npy(tmp_path: Path, command: str, *args: str, input: Path = SPEECH) -> np.ndarray:
    from audiokit.cli.app import main

    out = tmp_path / f"{command}-{abs(hash(args))}.npy"
    code = main([command, str(input), "--npy", str(out), "--quiet", *args])
    assert code == 0
    return np.load(out)


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a, np.complex128) - b)) / np.max(np.abs(b)))


def db_close(ours: np.ndarray, ref: np.ndarray) -> None:
    assert ours.shape == ref.shape
    top = ref > ref.max() - 60
    assert np.max(np.abs(ours - ref)[top]) <= 1e-3


def test_librosa_stft_centred(tmp_path, y):
    """librosa | np.abs(librosa.stft(y, n_fft=N, hop_length=H, win_length=W, center=True, pad_mode="constant"))**2 |
    spectrogram --nfft N --hop H --win W --center --pad-mode constant --scale power"""
    ours = cli_npy(
        tmp_path,
        "spectrogram",
        "--nfft",
        str(N),
        "--hop",
        str(H),
        "--win",
        "400",
        "--center",
        "--pad-mode",
        "constant",
        "--scale",
        "power",
    )
    ref = np.abs(librosa.stft(y, n_fft=N, hop_length=H, win_length=400, center=True, pad_mode="constant")) ** 2
    assert ours.shape == ref.shape and rel(ours, ref) <= 1e-5


def test_librosa_stft_not_centred(tmp_path, y):
    """librosa | librosa.stft(..., center=False) | the default framing (spectrogram --nfft N --win N --hop H)"""
    ours = cli_npy(tmp_path, "spectrogram", "--nfft", str(N), "--hop", str(H), "--win", str(N), "--scale", "power")
    ref = np.abs(librosa.stft(y, n_fft=N, hop_length=H, center=False)) ** 2
    assert ours.shape == ref.shape and rel(ours, ref) <= 1e-5


def test_librosa_melspectrogram_defaults(tmp_path, y):
    """librosa | librosa.feature.melspectrogram(y=y, sr=sr) (n_fft 2048, hop 512, 128 Slaney mels, Slaney norm) |
    mel --compat librosa --scale power"""
    ours = cli_npy(tmp_path, "mel", "--compat", "librosa", "--scale", "power")
    ref = librosa.feature.melspectrogram(y=y, sr=16000)
    assert ours.shape == ref.shape == (128, ref.shape[1]) and rel(ours, ref) <= 1e-5


def test_librosa_melspectrogram_explicit(tmp_path, y):
    """librosa | librosa.feature.melspectrogram(y=y, sr=sr, n_fft=N, hop_length=H, n_mels=M) |
    mel --nfft N --win N --hop H --n-mels M --center --mel-scale slaney --norm slaney --scale power
    (= mel --compat librosa --win N --hop H --n-mels M --scale power)"""
    ours = cli_npy(
        tmp_path,
        "mel",
        "--nfft",
        str(N),
        "--win",
        str(N),
        "--hop",
        str(H),
        "--n-mels",
        "80",
        "--center",
        "--mel-scale",
        "slaney",
        "--norm",
        "slaney",
        "--scale",
        "power",
    )
    preset = cli_npy(
        tmp_path, "mel", "--compat", "librosa", "--win", str(N), "--hop", str(H), "--n-mels", "80", "--scale", "power"
    )
    ref = librosa.feature.melspectrogram(y=y, sr=16000, n_fft=N, hop_length=H, n_mels=80)
    assert ours.shape == ref.shape and rel(ours, ref) <= 1e-5
    np.testing.assert_array_equal(ours, preset)


def test_librosa_power_to_db(tmp_path, y):
    """librosa | librosa.power_to_db(S, ref=np.max, top_db=80) | --scale db --ref max --top-db 80"""
    ours = cli_npy(tmp_path, "mel", "--compat", "librosa", "--scale", "db", "--ref", "max", "--top-db", "80")
    ref = librosa.power_to_db(librosa.feature.melspectrogram(y=y, sr=16000), ref=np.max, top_db=80)
    db_close(ours, ref)


def test_librosa_mfcc_and_deltas(tmp_path, y):
    """librosa | M = librosa.feature.mfcc(y=y, sr=sr); librosa.feature.delta(M, order=k) |
    mfcc --compat librosa (--deltas 2 --delta-method librosa: rows [M; delta; delta-delta])"""
    ours = cli_npy(tmp_path, "mfcc", "--compat", "librosa", "--deltas", "2", "--delta-method", "librosa")
    M = librosa.feature.mfcc(y=y, sr=16000)
    ref = np.concatenate([M, librosa.feature.delta(M), librosa.feature.delta(M, order=2)])
    assert ours.shape == ref.shape
    for k in range(3):
        assert rel(ours[20 * k : 20 * (k + 1)], ref[20 * k : 20 * (k + 1)]) <= 1e-5


def test_scipy_short_time_fft(tmp_path, y):
    """scipy | ShortTimeFFT(get_window("hann", W), hop=H, fs=sr, phase_shift=None).stft(x, p0=0, p1=1 + len(x)//H) |
    spectrogram --win W --hop H --center --pad-mode constant --complex --npy (n_fft = W)"""
    from scipy.signal import ShortTimeFFT, get_window

    ours = cli_npy(tmp_path, "spectrogram", "--win", "400", "--hop", "160", "--center", "--pad-mode", "constant", "--complex")
    x = y.astype(np.float64)
    ref = ShortTimeFFT(get_window("hann", 400), hop=160, fs=16000, phase_shift=None).stft(x, p0=0, p1=1 + x.size // 160)
    assert ours.shape == ref.shape and rel(ours, ref) <= 1e-5


def test_librosa_griffinlim(y):
    """librosa | librosa.griffinlim(S, n_iter=n, hop_length=H, random_state=seed) |
    audiokit.griffinlim(S, n_iter=n, hop_length=H, center=True, random_state=seed)"""
    x = y[:16000].astype(np.float64)
    S = np.abs(librosa.stft(x, n_fft=N, hop_length=H))
    ours = audiokit.griffinlim(S, n_iter=8, hop_length=H, center=True, random_state=3)
    ref = librosa.griffinlim(S, n_iter=8, hop_length=H, random_state=3)
    assert ours.shape == ref.shape and np.max(np.abs(ours - ref)) <= 1e-5 * np.max(np.abs(ref))


def _knf(x: np.ndarray, mfcc: bool) -> np.ndarray:
    opts = knf.MfccOptions() if mfcc else knf.FbankOptions()
    opts.frame_opts.dither = 0.0
    comp = knf.OnlineMfcc(opts) if mfcc else knf.OnlineFbank(opts)
    comp.accept_waveform(16000, (x * 32768.0).astype(np.float32))
    comp.input_finished()
    return np.stack([comp.get_frame(i) for i in range(comp.num_frames_ready)])


@pytest.mark.skipif(knf is None, reason="kaldi-native-fbank is not installed (test extra)")
def test_kaldi_fbank(tmp_path, y):
    """Kaldi | compute-fbank-feats --dither=0 (every other option at its default) |
    mel --compat kaldi (the .npy is bins x frames: np.load(f).T is Kaldi's matrix)"""
    ours = cli_npy(tmp_path, "mel", "--compat", "kaldi").T
    ref = _knf(y, False)
    loud = ref >= ref.max() - np.log(1e6)  # within 60 dB of the strongest cell
    assert ours.shape == ref.shape and np.max(np.abs(ours - ref)[loud]) <= 2e-4 and np.max(np.abs(ours - ref)) <= 2e-3


@pytest.mark.skipif(knf is None, reason="kaldi-native-fbank is not installed (test extra)")
def test_kaldi_mfcc(tmp_path, y):
    """Kaldi | compute-mfcc-feats --dither=0 | mfcc --compat kaldi (np.load(f).T)"""
    ours = cli_npy(tmp_path, "mfcc", "--compat", "kaldi").T.astype(np.float64)
    ref = _knf(y, True)
    lift = 1 + 11 * np.sin(np.pi * np.arange(13) / 22)
    assert ours.shape == ref.shape
    assert np.max(np.abs(ours[:, 0] - ref[:, 0])) <= 1e-3
    assert np.max(np.abs(ours[:, 1:] / lift[1:] - ref[:, 1:] / lift[1:])) <= 1e-3


@pytest.mark.skipif(knf is None, reason="kaldi-native-fbank is not installed (test extra)")
def test_kaldi_cmvn_sliding_and_add_deltas(tmp_path, y):
    """Kaldi | compute-mfcc-feats --dither=0 | apply-cmvn-sliding --center=true --cmn-window=600 | add-deltas |
    mfcc --compat kaldi --cmvn sliding --deltas 2"""
    from audiokit.dsp.features import add_deltas, cmvn

    ours = cli_npy(tmp_path, "mfcc", "--compat", "kaldi", "--cmvn", "sliding", "--deltas", "2").T.astype(np.float64)
    ref = add_deltas(cmvn(_knf(y, True).astype(np.float64), mode="sliding", window=600, center=True, axis=0), axis=0)
    assert ours.shape == ref.shape == (ref.shape[0], 39)
    lift = np.tile(1 + 11 * np.sin(np.pi * np.arange(13) / 22), 3)
    lift[[0, 13, 26]] = 1.0
    assert np.max(np.abs(ours / lift - ref / lift)) <= 1e-3


@pytest.mark.skipif(not (TORCH_REF / "speech16k.npy").exists(), reason="no stored torchaudio reference arrays")
@pytest.mark.filterwarnings("ignore:.*mel filters are empty")
def test_torchaudio_transforms(tmp_path):
    """torchaudio | Spectrogram()(y); MelSpectrogram(sample_rate=sr)(y); AmplitudeToDB("power")(mel); MFCC(sample_rate=sr)(y)
    (all defaults) | spectrogram --compat torchaudio --scale power; mel --compat torchaudio --scale power;
    mel --compat torchaudio; mfcc --compat torchaudio"""
    x = np.load(TORCH_REF / "speech16k.npy")
    wav = tmp_path / "x.wav"
    audiokit.write(wav, x[None], 16000, subtype="FLOAT")
    for command, args, name in [
        ("spectrogram", ["--scale", "power"], "spectrogram"),
        ("mel", ["--scale", "power"], "melspectrogram"),
        ("mel", [], "melspectrogram_db"),
        ("mfcc", [], "mfcc"),
    ]:
        ours = cli_npy(tmp_path, command, "--compat", "torchaudio", *args, input=wav)
        ref = np.load(TORCH_REF / f"{name}.npy").astype(np.float64)
        if name.endswith("_db"):
            db_close(ours, ref)
        else:
            assert ours.shape == ref.shape and rel(ours, ref) <= 1e-5, name


def test_transformers_whisper_feature_extractor(tmp_path, y):
    """transformers | WhisperFeatureExtractor()(y, sampling_rate=16000, return_tensors="np")["input_features"][0]
    (Whisper's log_mel_spectrogram(pad_or_trim(y)); feature_size=128 for large-v3) |
    mel --compat whisper --pad-or-trim 30s (--n-mels 128; without --pad-or-trim: padding="longest")

    Within 2**-22 (float32 rounding on both sides; tests/cli/test_whisper.py says why and covers more inputs)."""
    transformers = pytest.importorskip("transformers")
    for n_mels, args in [(80, ["--pad-or-trim", "30s"]), (128, ["--n-mels", "128", "--pad-or-trim", "30s"]), (80, [])]:
        ours = cli_npy(tmp_path, "mel", "--compat", "whisper", *args)
        kwargs = {} if args and args[-2] == "--pad-or-trim" else {"padding": "longest"}
        extractor = transformers.WhisperFeatureExtractor(feature_size=n_mels)
        ref = extractor(y, sampling_rate=16000, return_tensors="np", **kwargs)["input_features"][0]
        assert ours.shape == ref.shape == (n_mels, 3000 if not kwargs else y.size // 160)
        assert np.max(np.abs(ours.astype(np.float64) - ref)) <= 2.0**-22

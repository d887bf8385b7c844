"""``audiokit mel --compat whisper`` against transformers' ``WhisperFeatureExtractor`` (its numpy path, no torch).

Reference: ``WhisperFeatureExtractor(feature_size=M)(x, sampling_rate=16000, return_tensors="np")`` -- the 30 s
window (``padding="max_length"``, zeros on the right, truncation to 480000 samples), or ``padding="longest"``
(``truncation=False`` for inputs past 30 s) for the input as it is -- compared with ``mel --compat whisper
[--pad-or-trim 30s] [--n-mels 128] --npy``.

Tolerance ``2**-22`` (2.4e-7) absolute, from float32 rounding on both sides: transformers rounds the log10 values to
float32 (``spectrogram(dtype=np.float32)``; ``|x| < 8``: at most half an ulp, ``2**-22``, i.e. ``2**-24`` after
``/ 4``) and computes ``x + 4`` in float32 (another ``2**-24`` after ``/ 4``); audiokit computes in float64 and
rounds the output once (half an ulp: ``2**-24`` below 2, ``2**-23`` up to 4).  Both transform in float64 (audiokit's
preset does, as its reference: in float32 the worst cell of the speech example was 2.7e-5 off).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytestmark = pytest.mark.slow

transformers = pytest.importorskip("transformers")

SPEECH = Path(__file__).resolve().parents[2] / "examples" / "data" / "speech.wav"
TOLERANCE = 2.0**-22
SR = 16000


def _signal(name: str) -> np.ndarray:
    """float32 samples as Whisper takes them: the speech example, seeded noise, a loud tone, 35 s (past 30 s)."""
    rng = np.random.default_rng(7)
    if name == "speech":
        return sf.read(SPEECH, dtype="float32")[0]
    t = np.arange(int(12.345 * SR)) / SR
    if name == "noise":
        return (0.5 * rng.uniform(-1, 1, int(7.3 * SR))).astype(np.float32)
    if name == "tone":
        return (0.8 * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32)
    long = np.concatenate([sf.read(SPEECH, dtype="float32")[0]] * 6)[: 35 * SR]  # 35 s of speech
    return (long + 1e-3 * rng.standard_normal(long.size)).astype(np.float32)


def _theirs(x: np.ndarray, n_mels: int, pad: bool) -> np.ndarray:
    extractor = transformers.WhisperFeatureExtractor(feature_size=n_mels)
    kwargs = {} if pad else {"padding": "longest", "truncation": False}
    return np.asarray(extractor(x, sampling_rate=SR, return_tensors="np", **kwargs)["input_features"][0])


def _ours(cli, tmp_path: Path, x: np.ndarray, *args: str) -> tuple[np.ndarray, dict]:
    wav = tmp_path / "in.wav"
    sf.write(wav, x, SR, subtype="FLOAT")
    npy = tmp_path / "out.npy"
    code, _, err = cli("mel", wav, "--compat", "whisper", "--npy", npy, *args)
    assert (code, err) == (0, ""), err
    return np.load(npy), json.loads(npy.with_suffix(".json").read_text())


@pytest.mark.parametrize("n_mels", [80, 128])
@pytest.mark.parametrize("pad", [True, False], ids=["pad30s", "as-is"])
@pytest.mark.parametrize("name", ["speech", "noise", "tone", "35s"])
def test_whisper_equals_transformers(cli, tmp_path, name, pad, n_mels):
    x = _signal(name)
    args = ["--n-mels", str(n_mels)] + (["--pad-or-trim", "30s"] if pad else [])
    ours, meta = _ours(cli, tmp_path, x, *args)
    theirs = _theirs(x, n_mels, pad)
    expected_frames = 3000 if pad else x.size // 160  # the last STFT frame dropped
    assert ours.shape == theirs.shape == (n_mels, expected_frames)
    assert ours.dtype == np.float32
    assert np.max(np.abs(ours.astype(np.float64) - theirs.astype(np.float64))) <= TOLERANCE
    assert theirs.max() - theirs.min() > 0.5  # the cells span the range, not only the clip
    assert meta["compat"] == "whisper" and meta["rows"][0] == "mel0" and meta["mel"]["mel_scale"] == "slaney"
    if pad:
        mask = transformers.WhisperFeatureExtractor(feature_size=n_mels)(
            x, sampling_rate=SR, return_tensors="np", return_attention_mask=True
        )["attention_mask"][0]
        assert meta["pad_or_trim"]["n_samples"] == 480000
        assert meta["pad_or_trim"]["input_frames"] == int(mask.sum())  # transformers' attention mask, as a count
    else:
        assert "pad_or_trim" not in meta


def test_whisper_refuses_what_its_front_end_is_not_defined_for(cli, tmp_path):
    x = _signal("tone")[:SR]
    sf.write(tmp_path / "a44.wav", x, 44100)
    code, out, err = cli("mel", tmp_path / "a44.wav", "--compat", "whisper", "--npy", tmp_path / "o.npy")
    assert (code, out) == (2, "") and "Whisper's front end is defined at 16000 Hz" in err, err
    sf.write(tmp_path / "st.wav", np.stack([x, x], axis=1), SR)
    code, out, err = cli("mel", tmp_path / "st.wav", "--compat", "whisper", "--npy", tmp_path / "o.npy")
    assert (code, out) == (2, "") and "--channel N or --mix" in err, err
    code, _, _ = cli("mel", tmp_path / "st.wav", "--compat", "whisper", "--channel", "1", "--npy", tmp_path / "o.npy")
    assert code == 0
    code, out, err = cli("mfcc", tmp_path / "st.wav", "--compat", "whisper", "--npy", tmp_path / "o.npy")
    assert (code, out) == (2, "") and "--compat whisper: not available for mfcc" in err, err

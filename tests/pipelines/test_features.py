"""``audiokit.mfcc``, ``log_melspectrogram(log="log10")``, the preset resolution and the streamed deltas.

References: librosa (``feature.mfcc``, ``feature.delta``), kaldi-native-fbank through ``audiokit.dsp.kaldi`` (tested
there), the whole-array functions of ``audiokit.dsp.features`` for the streams.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

import audiokit
from audiokit.dsp.features import DeltaStream, delta
from audiokit.errors import ParameterError
from audiokit.pipelines.compat import PRESETS, preset_rows, resolve
from tests.helpers.paths import SPEECH


@pytest.fixture(scope="module")
def y() -> np.ndarray:
    return sf.read(SPEECH, dtype="float32")[0]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(11)


# ---------------------------------------------------------------------------------------- API
@pytest.mark.slow
def test_api_mfcc_librosa_preset(y):
    librosa = pytest.importorskip("librosa")
    ref = librosa.feature.mfcc(y=y, sr=16000)
    ours = audiokit.mfcc(y, sr=16000, compat="librosa")
    assert ours.shape == ref.shape
    assert np.max(np.abs(ours - ref)) <= 1e-5 * np.max(np.abs(ref))
    both = audiokit.mfcc(np.stack([y, y]), sr=16000, compat="librosa", n_mfcc=13, lifter=22)
    single = librosa.feature.mfcc(y=y, sr=16000, n_mfcc=13, lifter=22)
    assert both.shape == (2, *single.shape)
    assert np.max(np.abs(both[1] - single)) <= 1e-5 * np.max(np.abs(single))


def test_api_mfcc_kaldi_is_dsp_kaldi_transposed(y):
    from audiokit.dsp.kaldi import kaldi_mfcc

    ours = audiokit.mfcc(y, sr=16000, compat="kaldi", snip_edges=False, lifter=0.0)
    np.testing.assert_array_equal(ours, kaldi_mfcc(y, sr=16000, snip_edges=False, cepstral_lifter=0.0).T)


def test_api_mfcc_deltas_and_cmvn(y):
    from audiokit.dsp.features import add_deltas, cmvn

    base = audiokit.mfcc(y, sr=16000, compat="kaldi")
    out = audiokit.mfcc(y, sr=16000, compat="kaldi", deltas=2, cmvn="sliding")
    np.testing.assert_allclose(out, add_deltas(cmvn(base, mode="sliding"), order=2), atol=1e-9)


@pytest.mark.filterwarnings("ignore::audiokit.dsp.mel.DuplicateBandsWarning")  # 80 bands at n_fft 400 / 512: the default warns
def test_api_mfcc_energy_and_errors(y):
    e = audiokit.mfcc(y, sr=16000, energy=True, top_db=None)
    plain = audiokit.mfcc(y, sr=16000, top_db=None)
    np.testing.assert_array_equal(e[1:], plain[1:])
    assert not np.allclose(e[0], plain[0])
    with pytest.raises(ParameterError, match="unknown compat .htk.; allowed: kaldi, torchaudio, librosa"):
        audiokit.mfcc(y, sr=16000, compat="htk")
    with pytest.raises(ParameterError, match=r"unknown argument\(s\) hop"):
        audiokit.mfcc(y, sr=16000, hop=3)
    with pytest.raises(ParameterError, match="deltas"):
        audiokit.mfcc(y, sr=16000, deltas=3)


@pytest.mark.filterwarnings("ignore::audiokit.dsp.mel.DuplicateBandsWarning")  # 80 bands at n_fft 400 / 512: the default warns
def test_log_melspectrogram_log10_is_db_over_10(y):
    db = audiokit.log_melspectrogram(y, sr=16000, ref="max", top_db=50)
    l10 = audiokit.log_melspectrogram(y, sr=16000, log="log10", ref="max", top_db=50)
    ln = audiokit.log_melspectrogram(y, sr=16000, log="ln", ref="max", top_db=50)
    np.testing.assert_allclose(l10, db / 10, atol=1e-6)
    np.testing.assert_allclose(ln, db * np.log(10) / 10, atol=1e-4)
    assert l10.min() == pytest.approx(-5.0, abs=1e-6)


# ---------------------------------------------------------------------------------------- presets
def test_resolve_fills_only_unset_values():
    params = {"compat": "librosa", "win": None, "hop": "256", "n_mels": None, "log": None, "ref": None}
    out = resolve("mel", params)
    assert (out["win"], out["hop"], out["n_mels"], out["ref"]) == ("2048", "256", 128, "1")
    # no preset: ref/top_db stay unset, each output takes its own default (.npy absolute and unclipped, PNG max/80)
    none = resolve("mel", {"compat": None, "ref": None, "log": None, "top_db": None})
    assert (none["ref"], none["log"], none["top_db"]) == (None, "db", None)
    assert resolve("mel", {"compat": None, "ref": None, "log": "ln"})["ref"] is None
    assert resolve("mfcc", {"compat": "torchaudio", "top_db": None, "n_mfcc": None})["top_db"] == 80.0
    assert resolve("mel", {"compat": "torchaudio", "top_db": None})["top_db"] == 0.0


def test_resolve_refusals():
    with pytest.raises(ParameterError, match="--compat: 'htk' is not one of kaldi, torchaudio, librosa"):
        resolve("mel", {"compat": "htk"})
    with pytest.raises(ParameterError, match="--preemphasis applies to --compat kaldi only"):
        resolve("mfcc", {"compat": "librosa", "preemphasis": 0.9})
    with pytest.raises(ParameterError, match="compute-spectrogram-feats is not implemented"):
        resolve("spectrogram", {"compat": "kaldi"})


def test_preset_tables_cover_every_command():
    for compat, commands in PRESETS.items():
        if compat is None:
            continue
        for command in commands:
            rows = preset_rows(compat, command)
            assert all(flag.startswith("--") and theirs for flag, _, theirs in rows)


# ---------------------------------------------------------------------------------------- streamed deltas
@pytest.mark.parametrize("method", ["kaldi", "librosa"])
@pytest.mark.parametrize("order", [1, 2])
def test_delta_stream_equals_the_whole_array(rng, method, order):
    x = rng.standard_normal((7, 301))
    ref = np.concatenate([x] + [delta(x, order=r, method=method) for r in range(1, order + 1)])
    stream = DeltaStream(order, method)
    parts, start = [], 0
    for size in [1, 2, 3, 5, 8, 13, 40, 100, 129]:
        parts.append(stream.accept(x[:, start : start + size]))
        start += size
    parts.append(stream.finish())
    out = np.concatenate(parts, axis=1)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, atol=1e-12)


def test_delta_stream_librosa_needs_width_frames(rng):
    stream = DeltaStream(1, "librosa")
    stream.accept(rng.standard_normal((3, 5)))
    with pytest.raises(ParameterError, match="width 9 needs at least 9 frames, the input has 5"):
        stream.finish()

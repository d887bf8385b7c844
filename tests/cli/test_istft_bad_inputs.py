"""``audiokit istft`` on corrupted inputs: every problem of the sidecar or the array is exit 3, one line naming
the file, no output, no traceback (issue: fuzzing found KeyError/AttributeError/MemoryError and NaN samples)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import audiokit

SR = 16000


@pytest.fixture
def spec(cli, tmp_path):
    wav = tmp_path / "x.wav"
    audiokit.write(wav, 0.5 * np.random.default_rng(3).uniform(-1, 1, (1, 4000)), SR, subtype="PCM_16")
    npy = tmp_path / "spec.npy"
    code, _, err = cli("spectrogram", wav, "--complex", "--center", "--npy", npy)
    assert code == 0, err
    return npy


def edit_sidecar(npy, change):
    path = npy.with_suffix(".json")
    meta = json.loads(path.read_text())
    meta = change(meta)
    path.write_text(json.dumps(meta))


def without(key):
    return lambda meta: {k: v for k, v in meta.items() if k != key}


def setting(key, value):
    return lambda meta: {**meta, key: value}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        *[
            (without(key), f"sidecar has no '{key}'")
            for key in (
                "sr",
                "win_length",
                "hop_length",
                "n_fft",
                "window",
                "periodic",
                "center",
                "pad_mode",
                "shape",
                "source_frames",
            )
        ],
        (lambda meta: [1, 2, 3], "not a complex STFT"),
        (lambda meta: 7, "not a complex STFT"),
        (setting("source_frames", 1e12), "'source_frames' is 1000000000000.0, not a JSON int"),
        (setting("source_frames", 10**12), "its sidecar's STFT gives"),
        (setting("source_frames", -5), "'source_frames' is -5; it must be >= 0"),
        (setting("n_fft", 400.5), "'n_fft' is 400.5, not a JSON int"),
        (setting("n_fft", 10**12), "win_length <= n_fft <="),
        (setting("sr", float("nan")), "'sr' is nan, not a JSON int"),
        (setting("sr", 10**9), "outside"),
        (setting("center", "no"), "'center' is 'no', not a JSON bool"),
        (setting("window", "nonsense"), "sidecar describes no valid STFT"),
        (setting("hop_length", 0), "'hop_length' is 0; it must be > 0"),
        (setting("shape", [-1, 5]), "not a list of whole numbers"),
    ],
)
def test_bad_sidecar_is_a_clean_input_error(cli, spec, tmp_path, change, reason):
    edit_sidecar(spec, change)
    code, out, err = cli("istft", spec, "-o", tmp_path / "out.wav")
    assert (code, out) == (3, "")
    assert err.startswith(f"error: {spec}: ") and reason in err and err.count("\n") == 1
    assert not (tmp_path / "out.wav").exists()


def test_empty_npy_is_a_clean_input_error(cli, spec, tmp_path):
    spec.write_bytes(b"")
    code, out, err = cli("istft", spec, "-o", tmp_path / "out.wav")
    assert (code, out) == (3, "") and "not a readable .npy array" in err


def test_three_hundred_channels_are_refused(cli, spec, tmp_path):
    X = np.load(spec)
    many = np.broadcast_to(X, (300, *X.shape)).astype(np.complex64)
    np.save(spec, many)
    edit_sidecar(spec, setting("shape", list(many.shape)))
    code, _, err = cli("istft", spec, "-o", tmp_path / "out.wav")
    assert code == 3 and "channels <= 256" in err


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("subtype", ["FLOAT", "PCM_16"])
def test_nonfinite_values_are_refused_or_zeroed(cli, spec, tmp_path, bad, subtype):
    X = np.load(spec)
    X[3, 7] = bad
    np.save(spec, X)
    out_wav = tmp_path / "out.wav"
    code, out, err = cli("istft", spec, "-o", out_wav, "--subtype", subtype)
    assert (code, out) == (3, "") and "NaN or Inf values (first in frame 7)" in err and "--fix-nonfinite" in err
    assert not out_wav.exists()
    code, out, err = cli("istft", spec, "-o", out_wav, "--subtype", subtype, "--fix-nonfinite")
    assert code == 0, err
    y = audiokit.read(out_wav).samples
    assert np.isfinite(y).all() and np.abs(y).max() > 0.1

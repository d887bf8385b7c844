"""``audiokit istft``: the CLI round trip ``spectrogram --complex --npy`` -> ``istft`` (centred and
uncentred, FLOAT and PCM_16, mono and stereo), the default and stdout outputs, and the errors.

The STFT is saved as complex64 and inverted in float32 (the overlap-add itself is tested in
tests/dsp/stft/test_forward.py).  Interior samples come back with an error of a few eps32 times the signal's
scale (measured ~3e-7 for |x| <= 0.9), so FLOAT output is checked to 1e-6 (~8 eps32); PCM_16 codes
are 2**-15 ~ 3e-5 apart, thirty times that error, so rounding must recover them exactly.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import audiokit

SR = 16000
N = 8037  # not a multiple of the hop: the output length must still be exact
WIN, HOP = 400, 160  # the spectrogram defaults at 16 kHz: 25 ms, 10 ms
TOL = 1e-6


def noise(rng, shape, scale=0.9) -> np.ndarray:
    return (scale * rng.uniform(-1, 1, shape)).astype(np.float32)


def write(path: Path, x: np.ndarray, subtype: str = "FLOAT") -> Path:
    audiokit.write(path, np.atleast_2d(x), SR, subtype=subtype)
    return path


def read(path, dtype="float32") -> np.ndarray:
    y, sr = sf.read(path, dtype=dtype, always_2d=True)
    assert sr == SR
    return y.T


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


@pytest.fixture
def stft(cli, tmp_path):
    """``stft(wav, *options) -> npy path``: run ``spectrogram --complex --npy``."""

    def make(wav: Path, *options, name: str = "spec.npy") -> Path:
        npy = tmp_path / name
        code, out, err = cli("spectrogram", wav, "--complex", "--npy", npy, *options)
        assert code == 0, err
        return npy

    return make


# --------------------------------------------------------------------------- round trips


def test_centred_float_round_trip(cli, stft, tmp_path, rng):
    x = noise(rng, N)
    wav = write(tmp_path / "x.wav", x)
    npy = stft(wav, "--center")
    out = tmp_path / "y.wav"
    code, stdout, err = cli("istft", npy, "-o", out, "--subtype", "FLOAT")
    assert (code, stdout) == (0, f"{out}\n"), err
    assert sf.info(out).subtype == "FLOAT"
    y = read(out)
    assert y.shape == (1, N)
    assert np.max(np.abs(y[0] - x)) <= TOL


def test_pcm16_round_trip_is_bit_exact(cli, stft, tmp_path, rng):
    codes = rng.integers(-32768, 32768, N, dtype=np.int16)
    codes[:4] = [-32768, 32767, 0, -1]  # the extreme codes too
    wav = tmp_path / "x16.wav"
    sf.write(wav, codes, SR, subtype="PCM_16")
    npy = stft(wav, "--center")
    out = tmp_path / "y16.wav"
    code, _, err = cli("istft", npy, "-o", out)  # default subtype: the source's (sidecar)
    assert code == 0, err
    assert sf.info(out).subtype == "PCM_16"
    y, _ = sf.read(out, dtype="int16")
    assert y.shape == (N,)
    np.testing.assert_array_equal(y, codes)
    # not trivially so: the float reconstruction lies off the codes, by far less than half a code
    flt = tmp_path / "yf.wav"
    assert cli("istft", npy, "-o", flt, "--subtype", "FLOAT")[0] == 0
    off = np.abs(read(flt, "float64")[0] * 32768 - codes)
    assert 0 < off.max() < 0.1


def test_uncentred_loses_only_the_documented_samples(cli, stft, tmp_path, rng):
    x = noise(rng, N)
    wav = write(tmp_path / "x.wav", x)
    npy = stft(wav)
    meta = json.loads(npy.with_suffix(".json").read_text())
    n_frames = meta["shape"][-1]
    assert (meta["center"], meta["win_length"], meta["hop_length"]) == (False, WIN, HOP)
    assert n_frames == 1 + (N - WIN) // HOP
    end = (n_frames - 1) * HOP + WIN  # one past the last sample of the last frame
    assert end < N  # so there is a tail to lose
    out = tmp_path / "y.wav"
    assert cli("istft", npy, "-o", out)[0] == 0
    y = read(out)[0]
    assert y.shape == (N,)
    assert y[0] == 0.0  # periodic Hann: w[0] = 0, and only frame 0 covers sample 0
    assert np.all(y[end:] == 0.0) and np.any(x[end:] != 0)  # after the last frame: nothing to rebuild
    # the first and last hop are seen by one frame through tiny window values (ill-conditioned);
    # everything between is covered by several frames and comes back exactly
    assert np.max(np.abs(y[HOP : end - HOP] - x[HOP : end - HOP])) <= TOL


def test_stereo_round_trip(cli, stft, tmp_path, rng):
    x = noise(rng, (2, 3001))
    x[1] *= 0.5  # different channels
    wav = write(tmp_path / "st.wav", x)
    npy = stft(wav, "--center", "--win", "512", "--hop", "128")
    assert np.load(npy, mmap_mode="r").shape[0] == 2
    out = tmp_path / "st.y.wav"
    assert cli("istft", npy, "-o", out)[0] == 0
    y = read(out)
    assert y.shape == (2, 3001)
    assert np.max(np.abs(y - x)) <= TOL


# --------------------------------------------------------------------------- outputs


def test_default_output_name_is_printed(cli, stft, tmp_path, rng):
    x = noise(rng, 2000)
    npy = stft(write(tmp_path / "x.wav", x), "--center", name="take.npy")
    code, out, err = cli("istft", npy)
    expected = tmp_path / "take.istft.wav"
    assert (code, out) == (0, f"{expected}\n"), err
    assert np.max(np.abs(read(expected)[0] - x)) <= TOL


def test_stdout_holds_only_wav_bytes(run, cli, stft, tmp_path, rng):
    x = noise(rng, 2000)
    npy = stft(write(tmp_path / "x.wav", x), "--center")
    code, out, err = run("istft", npy, "-o", "-")
    assert code == 0, err
    y, sr = sf.read(io.BytesIO(out), dtype="float32", always_2d=True)
    assert sr == SR and y.shape == (2000, 1)
    assert np.max(np.abs(y[:, 0] - x)) <= TOL
    assert not (tmp_path / "spec.istft.wav").exists()


# --------------------------------------------------------------------------- errors


def test_a_power_spectrogram_is_refused(cli, tmp_path, rng):
    wav = write(tmp_path / "x.wav", noise(rng, 2000))
    npy = tmp_path / "p.npy"
    assert cli("spectrogram", wav, "--scale", "power", "--npy", npy)[0] == 0
    code, out, err = cli("istft", npy)
    assert (code, out) == (3, "")
    assert "'power'" in err and "--complex" in err
    assert not (tmp_path / "p.istft.wav").exists()


def test_missing_sidecar_and_missing_file(cli, stft, tmp_path, rng):
    npy = stft(write(tmp_path / "x.wav", noise(rng, 2000)), "--center")
    npy.with_suffix(".json").unlink()
    code, out, err = cli("istft", npy)
    assert (code, out) == (3, "") and "missing sidecar spec.json" in err
    code, out, err = cli("istft", tmp_path / "nothing.npy")
    assert (code, out) == (3, "") and "nothing.npy: no such file" in err


def test_sidecar_shape_mismatch(cli, stft, tmp_path, rng):
    npy = stft(write(tmp_path / "x.wav", noise(rng, 2000)), "--center")
    np.save(npy, np.zeros((3, 3), np.complex64))
    code, out, err = cli("istft", npy)
    assert (code, out) == (3, "") and "does not match its sidecar" in err


@pytest.mark.parametrize("target", ["x.wav", "spec.npy", "spec.json"])
def test_refuses_to_overwrite_its_inputs(cli, stft, tmp_path, rng, target):
    wav = write(tmp_path / "x.wav", noise(rng, 2000))
    npy = stft(wav, "--center")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, out, err = cli("istft", npy, "-o", tmp_path / target)
    assert (code, out) == (4, "") and "output is the input file" in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_bad_subtype_exits_2(cli, stft, tmp_path, rng):
    npy = stft(write(tmp_path / "x.wav", noise(rng, 2000)), "--center")
    code, out, err = cli("istft", npy, "--subtype", "PCM_12")
    assert (code, out) == (2, "") and "PCM_12" in err

"""Finite inputs near the float range never give NaN/Inf arrays with exit 0: single precision is replaced by
double where |X|² could overflow, and what still cannot be stored is a clean input error."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

SR = 16000


@pytest.fixture
def signals(tmp_path):
    x = np.random.default_rng(5).uniform(-1, 1, (SR, 1)).astype(np.float32)
    sf.write(tmp_path / "unit.wav", x, SR, subtype="FLOAT")
    sf.write(tmp_path / "near_max.wav", x * np.float32(3e38), SR, subtype="FLOAT")  # finite float32 samples
    sf.write(tmp_path / "huge.wav", x.astype(np.float64) * 1e300, SR, subtype="DOUBLE")
    return tmp_path


@pytest.mark.parametrize("command", ["mel", "spectrogram"])
def test_db_arrays_of_huge_samples_are_finite_and_equal_relative_to_max(cli, signals, command):
    for name in ("unit", "near_max"):
        code, _, err = cli(command, signals / f"{name}.wav", "--npy", signals / f"{command}_{name}.npy", "--ref", "max")
        assert code == 0, err
        assert "overflow" not in err and "invalid value" not in err
    big = np.load(signals / f"{command}_near_max.npy")
    unit = np.load(signals / f"{command}_unit.npy")
    assert np.isfinite(big).all()
    # dB re max: the scale factor 3e38 cancels; float32 dB values agree to a few float32 ulps of ~100 dB
    np.testing.assert_allclose(big, unit, atol=1e-3)


@pytest.mark.parametrize(
    ("name", "args"),
    [("near_max", ["spectrogram", "--scale", "power"]), ("near_max", ["spectrogram", "--complex"]), ("huge", ["mel"])],
)
def test_what_cannot_be_stored_is_an_input_error(cli, signals, name, args):
    out = signals / "out.npy"
    code, stdout, err = cli(args[0], signals / f"{name}.wav", *args[1:], "--npy", out)
    assert (code, stdout) == (3, "")
    assert "too large for a finite" in err and err.count("error:") == 1 and "Traceback" not in err
    assert "overflow" not in err and "invalid value" not in err  # no bare numpy warning
    assert not out.exists() and not out.with_suffix(".json").exists()


def test_sidecar_of_a_double_precision_run_is_the_usual_one(cli, signals):
    code, _, err = cli("mel", signals / "near_max.wav", "--npy", signals / "m.npy")
    assert code == 0, err
    meta = json.loads((signals / "m.json").read_text())
    assert meta["dtype"] == "float32" and meta["scale"] == "db"


def test_spectrum_of_huge_double_samples_reads_the_scaled_peaks_without_numpy_warnings(cli, tmp_path):
    t = np.arange(SR) / SR
    x = (0.5 * np.sin(2 * np.pi * 440 * t) + 0.25 * np.sin(2 * np.pi * 1000 * t))[:, None]
    sf.write(tmp_path / "unit.wav", x, SR, subtype="DOUBLE")
    sf.write(tmp_path / "huge.wav", x * 2.0**990, SR, subtype="DOUBLE")  # ~1e298: squares overflow float64
    reports = {}
    for name in ("unit", "huge"):
        code, out, err = cli("spectrum", tmp_path / f"{name}.wav", "--json", "--peaks", "2")
        assert code == 0, err
        assert "overflow" not in err and "invalid value" not in err
        reports[name] = json.loads(out)["channels"][0]["peaks"]
    for unit, huge in zip(reports["unit"], reports["huge"]):
        assert huge["freq_hz"] == unit["freq_hz"]
        assert huge["amplitude"] == pytest.approx(unit["amplitude"] * 2.0**990, rel=1e-8)
        assert huge["dbfs"] == pytest.approx(unit["dbfs"] + 990 * 20 * np.log10(2), abs=1e-3)

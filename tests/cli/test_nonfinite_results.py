"""Finite inputs near the float range never give NaN/Inf arrays with exit 0: single precision is replaced by
double where |X|² could overflow, and what still cannot be stored is a clean input error."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

import audiokit

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


# ---------------------------------------------------------------- issue 20: one rule for every command on samples
SR8 = 8000
NUMPY_WARNINGS = ("encountered in", "RuntimeWarning")


@pytest.fixture
def spikes(tmp_path):
    """A unit sine (FLOAT), the same with one 3e38 sample (FLOAT) and with one 1e307 sample (DOUBLE), at 8 kHz."""
    x = 0.5 * np.sin(2 * np.pi * 440 * np.arange(SR8) / SR8)
    sf.write(tmp_path / "unit.wav", x.astype(np.float32), SR8, subtype="FLOAT")
    y = x.astype(np.float32)
    y[4000] = 3e38
    sf.write(tmp_path / "f32.wav", y, SR8, subtype="FLOAT")
    z = x.copy()
    z[4000] = 1e307
    sf.write(tmp_path / "f64.wav", z, SR8, subtype="DOUBLE")
    return tmp_path


def _spiked_npy(cli, folder, args, value, name):
    """``spectrogram unit.wav ARGS --npy`` with the middle cell set to ``value``, saved as ``name`` + sidecar."""
    code, _, err = cli("spectrogram", folder / "unit.wav", *args, "--npy", folder / "base.npy")
    assert code == 0, err
    a = np.load(folder / "base.npy")
    a[a.shape[0] // 2, a.shape[1] // 2] = value
    np.save(folder / name, a)
    (folder / name).with_suffix(".json").write_text((folder / "base.json").read_text())
    return folder / name


def _no_numpy_warning(err):
    assert not any(w in err for w in NUMPY_WARNINGS), err


def test_istft_of_a_huge_finite_cell_runs_in_double_precision(cli, spikes):
    spec = _spiked_npy(cli, spikes, ["--complex"], 3e38, "big.npy")
    code, _, err = cli("istft", spikes / "base.npy", "-o", spikes / "base.wav")
    assert code == 0, err
    code, _, err = cli("istft", spec, "-o", spikes / "big.wav")
    assert code == 0, err
    _no_numpy_warning(err)
    big, base = sf.read(spikes / "big.wav")[0], sf.read(spikes / "base.wav")[0]
    assert np.isfinite(big).all() and 1e35 < np.abs(big).max() < 1e38  # 161 NaN, 219 Inf before
    # overlap-add is local: samples of frames away from the changed one are the unchanged inverse's (float64 vs
    # float32 inverse: float32 rounding; the first and last 100 samples, where the window sum is small, left out)
    np.testing.assert_allclose(big[100:3000], base[100:3000], atol=1e-4)
    np.testing.assert_allclose(big[-3000:-100], base[-3000:-100], atol=1e-4)


def test_istft_samples_beyond_a_float_wav_are_an_input_error(cli, spikes):
    code, _, err = cli("spectrogram", spikes / "unit.wav", "--complex", "--npy", spikes / "base.npy")
    assert code == 0, err
    a = np.load(spikes / "base.npy")
    k = np.arange(a.shape[0])[:, None]
    n_fft = json.loads((spikes / "base.json").read_text())["n_fft"]
    # every frame a float32-max click at its sample 1: the first frame's, divided by its tiny window sum, reaches ~1e42
    a[:] = np.float32(3.4e38) * np.exp(-2j * np.pi * k / n_fft)
    np.save(spikes / "max.npy", a)
    (spikes / "max.json").write_text((spikes / "base.json").read_text())
    code, out, err = cli("istft", spikes / "max.npy", "-o", spikes / "max.wav")
    assert (code, out) == (3, "")
    assert err.count("error:") == 1 and "max.npy" in err and "beyond what a FLOAT WAV holds" in err, err
    _no_numpy_warning(err)
    assert not (spikes / "max.wav").exists()
    code, _, err = cli("istft", spikes / "max.npy", "-o", spikes / "max.wav", "--subtype", "DOUBLE")
    assert code == 0, err
    assert np.isfinite(sf.read(spikes / "max.wav")[0]).all()


def test_mfcc_of_a_3e38_float_sample_is_finite_and_equal_away_from_it(cli, spikes):
    for name in ("unit", "f32"):
        code, _, err = cli("mfcc", spikes / f"{name}.wav", "--npy", spikes / f"{name}.npy")
        assert code == 0, err
    big, unit = np.load(spikes / "f32.npy"), np.load(spikes / "unit.npy")
    assert np.isfinite(big).all()  # 1 960 of 1 960 non-finite before
    # frames 45..55 hold sample 4000 (hop 80, window 200); the others are the unit file's, float64 vs float32 STFT
    np.testing.assert_allclose(big[:, :40], unit[:, :40], atol=2e-3)
    np.testing.assert_allclose(big[:, 60:], unit[:, 60:], atol=2e-3)


@pytest.mark.parametrize(
    ("command", "name", "reason"),
    [
        (["mfcc"], "f64", "too large for a finite float32 result"),
        (["mfcc", "--ref", "max"], "f64", "too large for a finite float32 result"),
        (["mel", "--cmvn", "utterance"], "f64", "too large for a finite float32 result"),
        (["mfcc", "--compat", "kaldi"], "f64", "beyond what Kaldi's float32 front end holds"),
        (["mfcc", "--compat", "kaldi"], "f32", "beyond what Kaldi's float32 front end holds"),
        (["mel", "--compat", "kaldi"], "f32", "beyond what Kaldi's float32 front end holds"),
        (["mel", "--compat", "kaldi"], "f64", "beyond what Kaldi's float32 front end holds"),
    ],
)
def test_features_that_cannot_be_held_are_one_input_error(cli, spikes, command, name, reason):
    out = spikes / "out.npy"
    code, stdout, err = cli(*command, spikes / f"{name}.wav", "--npy", out)
    assert (code, stdout) == (3, "")
    assert err.count("error:") == 1 and f"{name}.wav" in err and reason in err, err
    _no_numpy_warning(err)
    assert not out.exists() and not out.with_suffix(".json").exists()


@pytest.mark.parametrize("fix", [[], ["--fix-nonfinite"]])
def test_a_finite_1e307_sample_is_not_called_nan_or_inf(cli, spikes, fix):
    code, _, err = cli("resample", spikes / "f64.wav", "--to", "16k", "-o", spikes / "r.wav", *fix)
    assert code == 3
    assert "NaN or Inf" not in err and "holds a sample of 1e+307" in err and "beyond the float32 range" in err, err
    assert not (spikes / "r.wav").exists()


def test_griffinlim_of_a_huge_magnitude_is_finite_and_of_a_huge_db_value_an_input_error(cli, spikes):
    mag = _spiked_npy(cli, spikes, ["--scale", "magnitude"], 3e38, "mag.npy")
    code, _, err = cli("griffinlim", mag, "-o", spikes / "mag.wav")
    assert code == 0, err
    _no_numpy_warning(err)
    assert np.isfinite(sf.read(spikes / "mag.wav")[0]).all()  # NaN before
    db = _spiked_npy(cli, spikes, [], 3e38, "db.npy")
    code, _, err = cli("griffinlim", db, "-o", spikes / "db.wav")
    assert code == 3 and "db.npy" in err and "beyond what a linear spectrogram holds" in err, err  # exit 2 before
    _no_numpy_warning(err)
    assert not (spikes / "db.wav").exists()


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["spectrogram", "--npy", "o.npy"], "f32"),
        (["spectrogram", "--npy", "o.npy"], "f64"),
        (["mel", "--npy", "o.npy"], "f32"),
        (["mel", "--npy", "o.npy"], "f64"),
        (["mfcc", "--npy", "o.npy"], "f32"),
        (["mfcc", "--npy", "o.npy"], "f64"),
        (["mfcc", "--ref", "max", "--npy", "o.npy"], "f64"),
        (["mel", "--cmvn", "utterance", "--npy", "o.npy"], "f32"),
        (["mel", "--scale", "power", "--deltas", "1", "--npy", "o.npy"], "f32"),
        (["mfcc", "--compat", "kaldi", "--npy", "o.npy"], "f32"),
        (["mfcc", "--compat", "kaldi", "--npy", "o.npy"], "f64"),
        (["mel", "--compat", "kaldi", "--npy", "o.npy"], "f32"),
        (["mel", "--compat", "kaldi", "--npy", "o.npy"], "f64"),
        (["spectrum"], "f32"),
        (["spectrum"], "f64"),
        (["dehum", "-o", "o.wav"], "f32"),
        (["dehum", "-o", "o.wav"], "f64"),
        (["resample", "--to", "16k", "-o", "o.wav"], "f32"),
        (["resample", "--to", "16k", "-o", "o.wav"], "f64"),
        (["quantize", "--bits", "8", "-o", "o.wav"], "f32"),
        (["quantize", "--bits", "8", "-o", "o.wav"], "f64"),
        (["info"], "f32"),
        (["info"], "f64"),
    ],
)
def test_every_command_on_samples_is_finite_or_exit_3_without_numpy_warnings(cli, spikes, monkeypatch, args, name):
    monkeypatch.chdir(spikes)
    code, _, err = cli(args[0], spikes / f"{name}.wav", *args[1:])
    assert code in (0, 3), err
    if code == 3:
        assert err.count("error:") == 1 and f"{name}.wav" in err, err
    for out in ("o.npy", "o.wav"):
        if code == 0 and (spikes / out).exists():
            values = np.load(spikes / out) if out.endswith(".npy") else sf.read(spikes / out)[0]
            assert np.isfinite(values).all()
    _no_numpy_warning(err)


def test_info_rms_of_a_1e307_sample_is_its_true_dbfs(cli, spikes):
    code, out, err = cli("info", spikes / "f64.wav", "--json")
    assert code == 0, err
    _no_numpy_warning(err)
    level = json.loads(out)["levels"][0]
    z = sf.read(spikes / "f64.wav")[0]
    scaled = z * 2.0**-1020  # exact power-of-two scaling: the reference sums cannot overflow
    rms_db = 20 * np.log10(np.sqrt(np.mean(scaled**2))) + 1020 * 20 * np.log10(2)
    assert rms_db == pytest.approx(6100.969, abs=1e-3)
    assert level["rms_dbfs"] == pytest.approx(rms_db, abs=1e-3)  # null before (Σx² overflowed)
    assert level["peak_dbfs"] == pytest.approx(6140.0, abs=1e-3)
    assert level["dc_offset"] == pytest.approx(np.mean(scaled) * 2.0**1020, rel=1e-9)


def test_quantize_of_a_1e307_sample_clips_it_like_any_sample_beyond_full_scale(cli, spikes):
    z = sf.read(spikes / "f64.wav")[0]
    z[4000] = 2.0  # a plain clipped sample at the same place
    sf.write(spikes / "two.wav", z, SR8, subtype="DOUBLE")
    reports = {}
    for name in ("f64", "two"):
        args = ("--bits", "8", "--noise-shape", "first", "--json", "-o", spikes / f"q_{name}.wav")
        code, out, err = cli("quantize", spikes / f"{name}.wav", *args)
        assert code == 0, err
        _no_numpy_warning(err)
        assert "1 samples fell outside the 8-bit range" in err
        reports[name] = json.loads(out)
    # the same codes: 1e307 and 2.0 differ by whole steps, so the clipped code and the fed-back error are the same
    assert (spikes / "q_f64.wav").read_bytes() == (spikes / "q_two.wav").read_bytes()
    big = reports["f64"]
    assert big["clipped"] == 1
    assert big["signal_rms_dbfs"] == pytest.approx(6100.969, abs=1e-3)  # null/NaN before
    assert big["noise_rms_dbfs"] == pytest.approx(6100.969, abs=1e-3)  # the error is -1e307 at that sample
    assert big["sqnr_db"] == pytest.approx(0.0, abs=1e-9)


def test_dehum_beyond_what_its_hum_model_computes_is_an_input_error(cli, spikes):
    code, stdout, err = cli("dehum", spikes / "f64.wav", "-o", spikes / "d.wav", "--residual", spikes / "r.wav")
    assert (code, stdout) == (3, "")
    assert err.count("error:") == 1 and "f64.wav" in err and "beyond what the hum model computes" in err, err
    _no_numpy_warning(err)  # 2 'overflow encountered in square', ~100 'invalid value' before
    assert not (spikes / "d.wav").exists() and not (spikes / "r.wav").exists()


def test_dehum_finds_the_same_hum_up_to_its_safe_peak(cli, tmp_path):
    t = np.arange(3 * SR8) / SR8
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.1 * np.sin(2 * np.pi * 50 * t) + 0.05 * np.sin(2 * np.pi * 150 * t)
    x = (x + 0.01 * np.random.default_rng(1).standard_normal(t.size)) / 0.5  # peak just under 1
    reports = {}
    for name, scale in (("unit", 1.0), ("loud", 2.0**31)):  # 2**31 * peak < 2**32
        sf.write(tmp_path / f"{name}.wav", x * scale, SR8, subtype="DOUBLE")
        code, out, err = cli("dehum", tmp_path / f"{name}.wav", "-o", tmp_path / f"d_{name}.wav", "--json")
        assert code == 0, err
        _no_numpy_warning(err)
        reports[name] = json.loads(out)
    assert reports["loud"]["f0_hz"] == reports["unit"]["f0_hz"] == pytest.approx(50.0, abs=0.01)
    assert reports["loud"]["treated"] == reports["unit"]["treated"]
    loud, unit = sf.read(tmp_path / "d_loud.wav")[0], sf.read(tmp_path / "d_unit.wav")[0]
    np.testing.assert_allclose(loud / 2.0**31, unit, atol=1e-4)  # the same removal, float32 demodulation


def test_resample_of_adjacent_3e38_samples_is_scaled_not_inf(cli, tmp_path):
    """soxr filters in single precision at every quality: two adjacent 3e38 samples overflowed its sums (830 of
    4000 samples Inf/NaN at exit 0, found by the campaign).  The run is redone scaled by an exact power of two."""
    x = (0.5 * np.sin(np.arange(4000) * 0.05))[:, None].repeat(2, axis=1).astype(np.float32)
    x[150:152] = np.float32(3e38)
    sf.write(tmp_path / "in.wav", x, SR, subtype="FLOAT")
    for quality in ("high", "very-high"):
        out = tmp_path / f"o-{quality}.wav"
        code, _, err = cli("resample", tmp_path / "in.wav", "--to", "8k", "--quality", quality, "--subtype", "DOUBLE", "-o", out)
        assert code == 0, err
        _no_numpy_warning(err)
        y = sf.read(out, always_2d=True)[0]
        assert np.isfinite(y).all()
        assert "peak +7" in err  # the true peak (~+750 dBFS), not one measured past Inf values
        # resampling is linear: the result is 2**128 times that of the input scaled by 2**-128
        reference = np.ldexp(
            audiokit.resample(np.ldexp(x.T.astype(np.float64), -128), sr=SR, target_sr=8000, quality=quality), 128
        )
        np.testing.assert_allclose(y.T, reference, rtol=1e-5, atol=1e-6 * np.abs(reference).max())


def test_resampled_values_beyond_float32_written_as_float_are_an_input_error(cli, tmp_path):
    """A step between ∓3.4e38 overshoots (Gibbs) past float32's largest: FLOAT cannot hold it, DOUBLE can."""
    x = np.full((2000, 1), -3.4e38, np.float32)
    x[1000:] = np.float32(3.4e38)
    sf.write(tmp_path / "in.wav", x, SR, subtype="FLOAT")
    code, stdout, err = cli("resample", tmp_path / "in.wav", "--to", "48k", "-o", tmp_path / "o.wav")
    assert (code, stdout) == (3, "")
    assert "exceeds float32's range" in err and err.count("error:") == 1, err
    assert not (tmp_path / "o.wav").exists()
    code, _, err = cli("resample", tmp_path / "in.wav", "--to", "48k", "--subtype", "DOUBLE", "-o", tmp_path / "o.wav")
    assert code == 0, err
    y = sf.read(tmp_path / "o.wav")[0]
    assert np.isfinite(y).all() and np.abs(y).max() > np.finfo(np.float32).max

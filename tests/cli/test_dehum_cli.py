"""``audiokit dehum``: default path, -o -, --json, --residual, --subtype, erase options, --normalize,
detection options, stdin and raw PCM, errors and exit codes."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
import soundfile as sf

import audiokit

SR = 16000


def hummed(rng, seconds=3.0, *, f0=50.02, amp=0.08, harmonics=5, channels=1, tone=0.2):
    """A 440 Hz tone plus light noise (the programme) and a hum; returns ``(x, clean)`` shaped (channels, n)."""
    n = int(seconds * SR)
    t = np.arange(n) / SR
    clean = tone * np.sin(2 * np.pi * 440 * t) + 0.003 * rng.standard_normal((channels, n))
    h = sum(amp / k * np.sin(2 * np.pi * k * f0 * t + k) for k in range(1, harmonics + 1))
    return clean + h, clean


def write(path, x, subtype="FLOAT"):
    audiokit.write(path, x, SR, subtype=subtype)
    return path


def sdr(ref, est):
    return 10 * math.log10(np.sum(ref**2) / np.sum((est - ref) ** 2))


@pytest.fixture
def rec(tmp_path, rng):
    x, clean = hummed(rng)
    return write(tmp_path / "rec.wav", x, "PCM_16"), clean


# --------------------------------------------------------------------------- outputs


def test_default_output_is_beside_the_input_and_printed(cli, rec, tmp_path):
    path, clean = rec
    code, out, err = cli("dehum", path, "--freq", "50")
    target = tmp_path / "rec.dehum.wav"
    assert (code, out) == (0, f"{target}\n")
    assert "hum: f0 50.02" in err and "treated 5 of 40 harmonics (1-5)" in err
    info = sf.info(target)
    assert (info.samplerate, info.channels, info.subtype, info.frames) == (SR, 1, "PCM_16", clean.shape[1])
    y = sf.read(target, dtype="float64")[0]
    assert sdr(clean[0], y) > 30


def test_dash_o_writes_wav_bytes_only(run, tmp_path, rng):
    x, clean = hummed(rng)
    write(tmp_path / "rec.wav", x)
    code, out, err = run("dehum", "rec.wav", "--freq", "50", "-o", "-")
    assert code == 0, err
    y, sr = sf.read(io.BytesIO(out), dtype="float64")
    assert sr == SR and sdr(clean[0], y) > 30


def test_stdin_needs_o_and_works_with_it(run, tmp_path, rng):
    x, clean = hummed(rng)
    data = io.BytesIO()
    sf.write(data, x.T, SR, subtype="FLOAT", format="WAV")
    code, out, err = run("dehum", "-", "--freq", "50", stdin=data.getvalue())
    assert code == 2 and "give an output path with -o" in err
    code, out, err = run("dehum", "-", "--freq", "50", "-o", "clean.wav", stdin=data.getvalue())
    assert (code, out) == (0, b"clean.wav\n"), err
    assert sdr(clean[0], sf.read(tmp_path / "clean.wav")[0]) > 30


def test_raw_pcm_input(cli, tmp_path, rng):
    x, clean = hummed(rng)
    raw = tmp_path / "rec.raw"
    raw.write_bytes(np.round(x[0] * 32767).astype("<i2").tobytes())
    code, out, err = cli(
        "dehum", raw, "--rate", "16k", "--format", "s16le", "--channels", "1", "--freq", "50", "-o", tmp_path / "o.wav"
    )
    assert code == 0, err
    assert sf.info(tmp_path / "o.wav").subtype == "PCM_16"
    assert sdr(clean[0], sf.read(tmp_path / "o.wav")[0]) > 30


def test_json_report(cli, rec, tmp_path):
    path, _ = rec
    out_path = tmp_path / "o.wav"
    code, out, err = cli("dehum", path, "--json", "-o", out_path, "--residual", tmp_path / "r.wav", "--harmonics", "8")
    assert code == 0, err
    report = json.loads(out)
    assert report["output"] == str(out_path) and report["residual"] == str(tmp_path / "r.wav")
    assert (report["method"], report["nominal_hz"], report["search_hz"]) == ("subtract", 50.0, [49.5, 50.5])
    assert report["found"] and report["f0_hz"] == pytest.approx(50.02, abs=0.01)
    assert report["f0_min_hz"] <= report["f0_hz"] <= report["f0_max_hz"]
    assert (report["harmonics_considered"], report["treated"]) == (8, [1, 2, 3, 4, 5])
    first = report["harmonics"][0]
    # issue 14 added the hum estimates (hum_*_db, other_removed_db) and "dropped" (do no harm) per harmonic
    assert set(first) == {
        "k",
        "freq_hz",
        "treated",
        "level_db",
        "after_db",
        "floor_db",
        "snr_db",
        "span_s",
        "dropped",
        "hum_before_db",
        "hum_removed_db",
        "hum_remaining_db",
        "other_removed_db",
        "hum_floor_db",
    }
    assert first["k"] == 1 and first["treated"] == [True]
    assert first["level_db"][0] == pytest.approx(20 * math.log10(0.08), abs=0.2)
    assert first["after_db"][0] < first["level_db"][0] - 20
    assert report["harmonics"][6]["treated"] == [False]
    assert report["hum_db"]["after"][0] < report["hum_db"]["before"][0] - 20
    assert report["sr"] == SR and report["channels"] == 1 and report["gain_db"] == 0.0
    assert set(report["hum"]) == {"before_db", "removed_db", "remaining_db", "other_removed_db", "floor_db"}
    assert report["dropped"] == []


@pytest.mark.slow
@pytest.mark.parametrize("method", ["subtract", "erase"])
def test_report_estimates_the_hum_removed_and_remaining_against_the_truth(cli, tmp_path, rng, method):
    x, clean = hummed(rng, seconds=6.0)
    src = write(tmp_path / "rec.wav", x)
    code, out, err = cli("dehum", src, "--json", "--freq", "50", "--method", method, "-o", tmp_path / "o.wav")
    assert code == 0, err
    report = json.loads(out)
    y = sf.read(tmp_path / "o.wav", dtype="float64")[0]
    for k in range(1, 6):
        h = report["harmonics"][k - 1]
        truth = 20 * math.log10(0.08 / k)  # peak amplitude of the k-th harmonic
        assert h["hum_before_db"][0] == pytest.approx(truth, abs=1.0)
        assert h["hum_removed_db"][0] == pytest.approx(truth, abs=1.0)
        # what is left at the line, hum-locked or not: remaining + other removed, vs (output - clean) at k·f0
        t = np.arange(len(y)) / SR
        basis = np.stack([np.cos(2 * np.pi * k * 50.02 * t), np.sin(2 * np.pi * k * 50.02 * t)], 1)
        coef, *_ = np.linalg.lstsq(basis, y - clean[0], rcond=None)
        est = 10 * math.log10(10 ** (h["hum_remaining_db"][0] / 10) + 10 ** ((h["other_removed_db"][0] or -300) / 10))
        assert est > 10 * math.log10(np.sum(coef**2)) - 3  # an upper estimate of the error at the line
        assert h["hum_remaining_db"][0] < truth - 25
    total = report["hum"]
    assert total["before_db"][0] == pytest.approx(10 * math.log10(sum((0.08 / k) ** 2 for k in range(1, 6))), abs=1.0)
    assert total["remaining_db"][0] < total["before_db"][0] - 25
    if method == "erase":  # erase also cuts the programme's own content at the lines
        assert total["other_removed_db"][0] > total["remaining_db"][0]
    assert "hum: f0 50.02" in err and " -> " in err


def test_no_hum_reports_no_f0(cli, tmp_path, rng):
    _, clean = hummed(rng)
    src = write(tmp_path / "clean.wav", clean)
    code, out, err = cli("dehum", src, "--json", "--freq", "50", "-o", tmp_path / "o.wav")
    assert code == 0, err
    report = json.loads(out)
    assert report["found"] is False and report["treated"] == []
    assert (report["f0_hz"], report["f0_min_hz"], report["f0_max_hz"]) == (None, None, None)
    assert "f0" not in err and "hum: none found near 50 Hz" in err and "output = input" in err
    np.testing.assert_array_equal(sf.read(tmp_path / "o.wav", dtype="float32")[0], clean[0].astype(np.float32))


def test_a_wrong_freq_outside_the_window_does_no_harm_and_says_so(cli, tmp_path, rng):
    x, clean = hummed(rng, f0=50.0)
    src = write(tmp_path / "rec.wav", x)
    code, out, err = cli("dehum", src, "--json", "--freq", "51", "-o", tmp_path / "o.wav")
    assert code == 0, err
    assert "no hum found near 51 Hz" in err and "a strong line at 50.0 Hz: try --freq 50" in err
    np.testing.assert_array_equal(sf.read(tmp_path / "o.wav", dtype="float32")[0], x[0].astype(np.float32))
    assert json.loads(out)["f0_hz"] is None


def test_the_other_mains_frequency_is_hinted(cli, tmp_path, rng):
    x, _ = hummed(rng, f0=50.0)
    src = write(tmp_path / "rec.wav", x)
    code, _, err = cli("dehum", src, "--freq", "60", "-o", tmp_path / "o.wav")
    assert code == 0, err
    assert "no hum found near 60 Hz" in err and "a strong line at 50.0 Hz: try --freq 50" in err
    np.testing.assert_array_equal(sf.read(tmp_path / "o.wav", dtype="float32")[0], x[0].astype(np.float32))


def test_residual_is_input_minus_output(cli, tmp_path, rng):
    x, _ = hummed(rng, channels=2)
    src = write(tmp_path / "rec.wav", x)
    code, out, err = cli("dehum", src, "-o", tmp_path / "o.wav", "--residual", tmp_path / "r.wav")
    assert (code, out) == (0, f"{tmp_path / 'o.wav'}\n{tmp_path / 'r.wav'}\n"), err
    y = sf.read(tmp_path / "o.wav", dtype="float64")[0].T
    r = sf.read(tmp_path / "r.wav", dtype="float64")[0].T
    assert sf.info(tmp_path / "r.wav").subtype == "FLOAT"
    np.testing.assert_allclose(r, x.astype(np.float32) - y, atol=4 * np.finfo(np.float32).eps)
    assert np.max(np.abs(r)) > 0.05  # the hum is in it


def test_subtype_option(cli, rec, tmp_path):
    path, _ = rec
    code, _, err = cli("dehum", path, "--subtype", "PCM_24", "-o", tmp_path / "o.wav")
    assert code == 0, err
    assert sf.info(tmp_path / "o.wav").subtype == "PCM_24"


# --------------------------------------------------------------------------- hum options


def test_auto_reports_60(cli, tmp_path, rng):
    x, _ = hummed(rng, f0=59.98)
    src = write(tmp_path / "rec.wav", x)
    code, out, err = cli("dehum", src, "--json", "-o", tmp_path / "o.wav")
    report = json.loads(out)
    assert (code, report["nominal_hz"], report["search_hz"]) == (0, 60.0, [59.4, 60.6])
    assert report["f0_hz"] == pytest.approx(59.98, abs=0.01)


@pytest.mark.slow
def test_erase_method_with_window_and_width(cli, tmp_path, rng):
    x, clean = hummed(rng, seconds=4.0)
    src = write(tmp_path / "rec.wav", x)
    code, out, err = cli("dehum", src, "--method", "erase", "--win", "2s", "--width", "3Hz", "--json", "-o", tmp_path / "o.wav")
    assert code == 0, err
    report = json.loads(out)
    assert report["method"] == "erase" and report["erase"] == {"win_s": 2.0, "width_hz": 3.0}
    assert all(h["after_db"][0] < h["level_db"][0] - 15 for h in report["harmonics"][:5])
    y = sf.read(tmp_path / "o.wav")[0]
    assert sdr(clean[0], y) > 15
    code, _, err = cli("dehum", src, "--method", "erase", "-o", tmp_path / "d.wav")
    assert code == 0, err


@pytest.mark.slow
def test_threshold_and_harmonics(cli, tmp_path, rng):
    x, _ = hummed(rng)
    src = write(tmp_path / "rec.wav", x)
    code, out, err = cli("dehum", src, "--threshold", "500", "-o", tmp_path / "o.wav")
    assert code == 0 and "warning: no hum found near 50 or 60 Hz" in err
    np.testing.assert_array_equal(sf.read(tmp_path / "o.wav")[0], x[0].astype(np.float32))
    code, out, err = cli("dehum", src, "--harmonics", "2", "--json", "-o", tmp_path / "o.wav")
    assert json.loads(out)["treated"] == [1, 2]


@pytest.mark.slow
def test_quiet_prints_no_summary(cli, rec, tmp_path):
    path, _ = rec
    code, out, err = cli("dehum", path, "-q", "-o", tmp_path / "o.wav")
    assert (code, out, err) == (0, f"{tmp_path / 'o.wav'}\n", "")


def test_fix_nonfinite(cli, tmp_path, rng):
    x, _ = hummed(rng)
    x[0, 1000] = np.nan
    src = write(tmp_path / "nan.wav", x)
    code, _, err = cli("dehum", src, "-o", tmp_path / "o.wav")
    assert code == 3 and "NaN or Inf" in err
    code, _, err = cli("dehum", src, "--fix-nonfinite", "-o", tmp_path / "o.wav")
    assert code == 0, err


# --------------------------------------------------------------------------- full scale


@pytest.fixture
def hot(tmp_path, rng):
    x, _ = hummed(rng, tone=1.2)  # beyond full scale, kept in a FLOAT file
    return write(tmp_path / "hot.wav", x)


def test_overshoot_is_kept_in_float_and_reported(cli, hot, tmp_path):
    code, _, err = cli("dehum", hot, "-o", tmp_path / "o.wav")
    assert code == 0 and "the output exceeds full scale" in err and "kept as they are in FLOAT" in err
    assert np.max(np.abs(sf.read(tmp_path / "o.wav")[0])) > 1.1


def test_overshoot_in_pcm_is_clipped_with_a_warning(cli, hot, tmp_path):
    code, _, err = cli("dehum", hot, "--subtype", "PCM_16", "-o", tmp_path / "o.wav")
    assert code == 0 and "clipped to fit PCM_16" in err and "use --normalize" in err


def test_normalize_scales_the_output_to_full_scale(cli, hot, tmp_path):
    code, _, err = cli("dehum", hot, "--normalize", "--subtype", "PCM_16", "-o", tmp_path / "o.wav", "--json")
    assert code == 0 and "--normalize applies" in err and "exceeds" not in err
    y = sf.read(tmp_path / "o.wav")[0]
    assert 0.99 < np.max(np.abs(y)) <= 1.0


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "args, message",
    [
        (["--freq", "mains"], "--freq: invalid value 'mains': use 50, 60, another frequency such as 16.7Hz, or auto"),
        (["--freq", "9000"], "freq must be > 0 and below the Nyquist frequency 8000 Hz"),
        (["--method", "notch"], "--method: unknown method 'notch' (allowed: subtract, erase)"),
        (["--width", "4"], "--width applies to --method erase only"),
        (["--win", "1s"], "--win applies to --method erase only"),
        (["--method", "erase", "--width", "0"], "--width: must be > 0 Hz"),
        (["--method", "erase", "--win", "20ms"], "at least 4 periods of the fundamental"),
        (["--subtype", "PCM_12"], "--subtype: unknown subtype 'PCM_12'"),
        (["--json", "-o", "-"], "--json and -o - both write to stdout"),
        (["--residual", "-"], "--residual needs a file path"),
        (["--harmonics", "0"], "Invalid value for '--harmonics'"),
    ],
)
def test_bad_options_exit_2(cli, rec, args, message):
    path, _ = rec
    code, out, err = cli("dehum", path, *args)
    assert code == 2 and out == ""
    assert message in err


def test_output_equal_to_input_is_refused_exit_4(cli, rec):
    path, _ = rec
    code, _, err = cli("dehum", path, "-o", path)
    assert code == 4 and "output is the input file" in err
    code, _, err = cli("dehum", path, "-o", path.parent / "x.wav", "--residual", path)
    assert code == 4 and "output is the input file" in err


def test_residual_equal_to_output_is_refused(cli, rec, tmp_path):
    path, _ = rec
    code, _, err = cli("dehum", path, "-o", tmp_path / "o.wav", "--residual", tmp_path / "o.wav")
    assert code == 2 and "same path as the output" in err


def test_missing_input_exit_3_and_debug_traceback(cli, tmp_path):
    code, _, err = cli("dehum", tmp_path / "nope.wav", "-o", tmp_path / "o.wav", "--debug")
    assert code == 3 and "no such file" in err and "Traceback" in err


def test_help_lists_every_option(cli):
    code, out, _ = cli("dehum", "--help")
    assert code == 0
    for option in (
        "--freq",
        "--method",
        "--harmonics",
        "--threshold",
        "--width",
        "--win",
        "--output",
        "--residual",
        "--subtype",
        "--normalize",
        "--json",
        "--rate",
        "--format",
        "--channels",
        "--fix-nonfinite",
        "--quiet",
        "--debug",
    ):
        assert option in out

"""``audiokit quantize``: the file holds the B-bit grid, --json measures (SQNR, noise floor),
dither / seed / noise shaping, streaming equals one-shot, stdin/stdout, errors."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
import soundfile as sf

import audiokit
from audiokit.dsp.quantize import grid_step, noise_rms_dbfs, quantize, sqnr_db

SR = 48000
BUSY_HZ = 997 * math.sqrt(2)  # not commensurate with SR: a uniform-like rounding error

JSON_KEYS = {
    "path",
    "output",
    "bits",
    "step",
    "dither",
    "noise_shape",
    "seed",
    "subtype",
    "sr",
    "channels",
    "frames",
    "sqnr_db",
    "signal_rms_dbfs",
    "noise_rms_dbfs",
    "noise_density_dbfs_per_hz",
    "expected_noise_rms_dbfs",
    "full_scale_sine_sqnr_db",
    "clipped",
}


def sine(amplitude, n, *, offset=0.0, freq=BUSY_HZ, phase=0.3):
    return (offset + amplitude * np.sin(2 * np.pi * freq * np.arange(n) / SR + phase))[None]


def write(path, x, subtype="DOUBLE", sr=SR):
    audiokit.write(path, x, sr, subtype=subtype)
    return path


def read(path):
    y, _ = sf.read(path, dtype="float64", always_2d=True)
    return y.T


def quantize_json(cli, *args):
    code, out, err = cli("quantize", "--json", *args)
    return code, (json.loads(out) if out else None), err


@pytest.fixture
def busy(tmp_path, rng):
    """Two channels of uniform noise in ±0.9, stored exactly (DOUBLE)."""
    return write(tmp_path / "busy.wav", rng.uniform(-0.9, 0.9, (2, 6000)))


# --------------------------------------------------------------------------- the grid


@pytest.mark.parametrize(
    ("bits", "subtype"),
    [
        (2, "PCM_U8"),
        (4, "PCM_U8"),
        (8, "PCM_U8"),
        (9, "PCM_16"),
        (12, "PCM_16"),
        (16, "PCM_16"),
        (17, "PCM_24"),
        (20, "PCM_24"),
        (24, "PCM_24"),
    ],
)
@pytest.mark.parametrize("noise_shape", ["none", "first"])
def test_file_holds_exactly_the_b_bit_grid_in_the_smallest_pcm(cli, busy, tmp_path, bits, subtype, noise_shape):
    out = tmp_path / "out.wav"
    code, stdout, err = cli("quantize", busy, "--bits", bits, "--noise-shape", noise_shape, "-o", out, "-q")
    assert (code, stdout, err) == (0, f"{out}\n", "")
    assert sf.info(out).subtype == subtype
    k = read(out) * 2.0 ** (bits - 1)
    assert np.array_equal(k, np.round(k))
    assert k.min() >= -(2 ** (bits - 1)) and k.max() <= 2 ** (bits - 1) - 1
    expected = quantize(read(busy), bits=bits, noise_shape=noise_shape, seed=0)
    np.testing.assert_array_equal(read(out), expected)


@pytest.mark.parametrize("subtype", ["PCM_24", "PCM_32", "FLOAT", "DOUBLE"])
def test_larger_subtypes_hold_the_grid_too(cli, busy, tmp_path, subtype):
    out = tmp_path / "out.wav"
    assert cli("quantize", busy, "--bits", "12", "--subtype", subtype, "-o", out)[0] == 0
    assert sf.info(out).subtype == subtype
    np.testing.assert_array_equal(read(out), quantize(read(busy), bits=12, seed=0))


@pytest.mark.parametrize(("bits", "subtype", "holds"), [(9, "PCM_U8", 8), (17, "PCM_16", 16)])
def test_subtype_too_small_for_the_bits_is_refused(cli, busy, bits, subtype, holds):
    code, stdout, err = cli("quantize", busy, "--bits", bits, "--subtype", subtype)
    assert (code, stdout) == (2, "")
    assert err.startswith(f"error: --subtype {subtype} holds only {holds} bits, fewer than --bits {bits}")


def test_blocks_give_the_one_shot_result(cli, busy, tmp_path, monkeypatch):
    monkeypatch.setattr("audiokit.pipelines.quantize.BLOCK_SAMPLES", 1000)
    out = tmp_path / "out.wav"
    assert cli("quantize", busy, "--bits", "6", "--noise-shape", "first", "--dither", "rpdf", "--seed", "7", "-o", out)[0] == 0
    np.testing.assert_array_equal(read(out), quantize(read(busy), bits=6, dither="rpdf", noise_shape="first", seed=7))


# --------------------------------------------------------------------------- --json and the measures


@pytest.mark.parametrize("bits", [4, 8, 12, 16])
def test_undithered_sqnr_of_a_full_scale_sine_is_6_02b_plus_1_76(cli, tmp_path, bits):
    # As in the core's test: the sine spanning all 2**B steps of the mid-tread grid [-1, 1 - q].
    q = grid_step(bits)
    x = sine(1 - q / 2, 1 << 16, offset=-q / 2)
    src = write(tmp_path / "sine.wav", x)
    out = tmp_path / "q.wav"
    code, report, err = quantize_json(cli, src, "--bits", bits, "--dither", "none", "-o", out)
    assert (code, err) == (0, "")
    assert set(report) == JSON_KEYS
    assert abs(report["sqnr_db"] - (6.02 * bits + 1.76)) <= 0.5
    y = read(out)
    assert report["sqnr_db"] == pytest.approx(sqnr_db(x, y), abs=1e-3)
    assert report["noise_rms_dbfs"] == pytest.approx(noise_rms_dbfs(x, y), abs=1e-3)
    assert report["noise_rms_dbfs"] == pytest.approx(report["expected_noise_rms_dbfs"], abs=0.5)
    assert report["full_scale_sine_sqnr_db"] == pytest.approx(6.0206 * bits + 1.7609, abs=1e-3)
    signal_power = (1 - q / 2) ** 2 / 2 + (q / 2) ** 2  # the sine and its offset
    assert report["signal_rms_dbfs"] == pytest.approx(10 * math.log10(signal_power), abs=0.01)
    assert report["noise_density_dbfs_per_hz"] == pytest.approx(report["noise_rms_dbfs"] - 10 * math.log10(SR / 2), abs=1e-3)


def test_json_fields(cli, busy, tmp_path):
    out = tmp_path / "o.wav"
    code, report, err = quantize_json(
        cli, busy, "--bits", "10", "--dither", "rpdf", "--noise-shape", "first", "--seed", "3", "-o", out
    )
    assert (code, err) == (0, "")
    assert {
        k: report[k]
        for k in (
            "path",
            "output",
            "bits",
            "step",
            "dither",
            "noise_shape",
            "seed",
            "subtype",
            "sr",
            "channels",
            "frames",
            "clipped",
        )
    } == {
        "path": str(busy),
        "output": str(out),
        "bits": 10,
        "step": 2**-9,
        "dither": "rpdf",
        "noise_shape": "first",
        "seed": 3,
        "subtype": "PCM_16",
        "sr": SR,
        "channels": 2,
        "frames": 6000,
        "clipped": 0,
    }
    # rpdf: q²/6, doubled by first-order shaping = q²/3
    assert report["expected_noise_rms_dbfs"] == pytest.approx(10 * math.log10(2**-18 / 3), abs=1e-3)


def test_tpdf_costs_about_4_77_db_and_differs_from_none(cli, tmp_path):
    x = sine(0.9, 1 << 16)
    src = write(tmp_path / "s.wav", x)
    _, none, _ = quantize_json(cli, src, "--bits", "8", "--dither", "none", "-o", tmp_path / "none.wav")
    _, tpdf, _ = quantize_json(cli, src, "--bits", "8", "-o", tmp_path / "tpdf.wav")
    assert tpdf["dither"] == "tpdf"  # the default
    assert none["sqnr_db"] - tpdf["sqnr_db"] == pytest.approx(10 * math.log10(3), abs=0.3)
    assert not np.array_equal(read(tmp_path / "none.wav"), read(tmp_path / "tpdf.wav"))


def test_seed_reproduces_and_changes_the_dither(cli, busy, tmp_path):
    names = {}
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        names[name] = tmp_path / f"{name}.wav"
        assert cli("quantize", busy, "--bits", "8", "--seed", seed, "-o", names[name])[0] == 0
    assert names["a"].read_bytes() == names["b"].read_bytes()
    assert names["a"].read_bytes() != names["c"].read_bytes()


def test_default_seed_is_0_and_dither_none_ignores_it(cli, busy, tmp_path):
    a, b, c, d = (tmp_path / f"{n}.wav" for n in "abcd")
    cli("quantize", busy, "--bits", "8", "-o", a)
    cli("quantize", busy, "--bits", "8", "--seed", "0", "-o", b)
    cli("quantize", busy, "--bits", "8", "--dither", "none", "--seed", "1", "-o", c)
    cli("quantize", busy, "--bits", "8", "--dither", "none", "--seed", "2", "-o", d)
    assert a.read_bytes() == b.read_bytes() and c.read_bytes() == d.read_bytes()


def test_noise_shaping_moves_the_noise_up(cli, tmp_path):
    x = sine(0.5, 1 << 15, freq=1000)
    src = write(tmp_path / "s.wav", x)
    flat, shaped = tmp_path / "flat.wav", tmp_path / "shaped.wav"
    _, r_flat, _ = quantize_json(cli, src, "--bits", "8", "-o", flat)
    _, r_shaped, _ = quantize_json(cli, src, "--bits", "8", "--noise-shape", "first", "-o", shaped)
    assert not np.array_equal(read(flat), read(shaped))
    assert r_shaped["noise_rms_dbfs"] - r_flat["noise_rms_dbfs"] == pytest.approx(10 * math.log10(2), abs=0.3)
    low = []  # noise power below sr/16: about 13 dB less with shaping (|1 - z^-1|^2 is small there)
    for path in (flat, shaped):
        e = np.fft.rfft((read(path) - x)[0])
        low.append(np.sum(np.abs(e[: len(e) // 8]) ** 2))
    assert 10 * math.log10(low[0] / low[1]) > 8


def test_clipping_is_counted_and_warned(cli, tmp_path):
    x = np.array([[0.0, 1.2, -1.5, 0.5, 0.999]])
    src = write(tmp_path / "hot.wav", x, subtype="FLOAT")
    out = tmp_path / "o.wav"
    code, report, err = quantize_json(cli, src, "--bits", "4", "--dither", "none", "-o", out)
    assert code == 0 and report["clipped"] == 3  # 1.2, -1.5 and 0.999 (rounds to 8/8, above the top code 7/8)
    assert f"warning: {out}: 3 samples fell outside the 4-bit range [-1, 1 - 2^-3] and were clipped to its end codes\n" in err
    assert read(out).tolist() == [[0.0, 0.875, -1.0, 0.5, 0.875]]


def test_silent_input_gives_null_sqnr(cli, tmp_path):
    src = write(tmp_path / "z.wav", np.zeros((1, 100)))
    code, report, _ = quantize_json(cli, src, "--bits", "8", "--dither", "none", "-o", tmp_path / "o.wav")
    assert code == 0
    assert (report["sqnr_db"], report["signal_rms_dbfs"], report["noise_rms_dbfs"], report["noise_density_dbfs_per_hz"]) == (
        None,
    ) * 4
    code, stdout, err = cli("quantize", src, "--bits", "8", "--dither", "none", "-o", tmp_path / "o.wav")
    assert "SQNR inf dB, noise -inf dBFS RMS" in err


def test_summary_on_stderr_and_quiet(cli, busy, tmp_path):
    out = tmp_path / "o.wav"
    code, stdout, err = cli("quantize", busy, "--bits", "8", "-o", out)
    assert code == 0 and stdout == f"{out}\n"
    assert err.startswith(f"{out}: 8 bits, tpdf dither, noise shaping none, seed 0: SQNR ")
    assert cli("quantize", busy, "--bits", "8", "-o", out, "--quiet")[1:] == (f"{out}\n", "")


# --------------------------------------------------------------------------- paths, stdin, stdout


def test_default_output_is_stem_bits_beside_the_input(cli, busy):
    code, stdout, _ = cli("quantize", busy, "--bits", "8")
    assert code == 0 and stdout == f"{busy.parent / 'busy.8bit.wav'}\n"
    code, report, _ = quantize_json(cli, busy, "--bits", "12")
    assert code == 0 and report["output"] == str(busy.parent / "busy.12bit.wav")
    assert (busy.parent / "busy.12bit.wav").is_file()


def test_json_with_dash_o_is_refused(cli, busy):
    code, stdout, err = cli("quantize", busy, "--bits", "8", "--json", "-o", "-")
    assert (code, stdout) == (2, "")
    assert err == "error: --json and -o - would both write to stdout; give -o PATH with --json\n"


def test_dash_o_writes_wav_bytes_only(run, busy):
    code, stdout, err = run("quantize", busy, "--bits", "8", "-o", "-", "-q")
    assert (code, err) == (0, "")
    y, sr = sf.read(io.BytesIO(stdout), dtype="float64", always_2d=True)
    np.testing.assert_array_equal(y.T, quantize(read(busy), bits=8, seed=0))


def test_raw_pcm_on_stdin_with_json(run, tmp_path):
    codes = np.arange(-1000, 1000, 7, dtype="<i2")
    code, stdout, err = run(
        "quantize",
        "-",
        "--format",
        "s16le",
        "--rate",
        "8k",
        "--bits",
        "12",
        "--dither",
        "none",
        "--json",
        "-o",
        "o.wav",
        stdin=codes.tobytes(),
    )
    assert code == 0 and err == ""
    report = json.loads(stdout)
    assert (report["path"], report["output"], report["sr"], report["frames"]) == ("-", "o.wav", 8000, len(codes))
    k = read(tmp_path / "o.wav")[0] * 2**11
    np.testing.assert_array_equal(k, np.floor(codes / 16 + 0.5))


def test_stdin_without_output_asks_for_o(cli):
    code, stdout, err = cli("quantize", "-", "--bits", "8")
    assert (code, stdout) == (2, "")
    assert "give an output path with -o" in err


def test_fix_nonfinite(cli, tmp_path):
    src = tmp_path / "nan.wav"
    sf.write(src, np.array([0.25, np.inf, 0.5]), 16000, subtype="FLOAT")
    out = tmp_path / "o.wav"
    assert cli("quantize", src, "--bits", "8", "-o", out)[0] == 3 and not out.exists()
    assert cli("quantize", src, "--bits", "8", "--dither", "none", "-o", out, "--fix-nonfinite")[0] == 0
    assert read(out).tolist() == [[0.25, 0.0, 0.5]]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bits", "1"], "error: --bits: 1 is outside 2..24\n"),
        (["--bits", "25"], "error: --bits: 25 is outside 2..24\n"),
        (["--bits", "8", "--dither", "gauss"], "error: --dither: unknown dither 'gauss' (allowed: tpdf, rpdf, none)\n"),
        (
            ["--bits", "8", "--noise-shape", "second"],
            "error: --noise-shape: unknown noise shaping 'second' (allowed: none, first)\n",
        ),
        (["--bits", "8", "--subtype", "PCM_12"], "error: --subtype: unknown subtype 'PCM_12'"),
        (["--bits", "8", "--seed", "-1"], "error: --seed: -1 is negative; give a whole number >= 0\n"),
    ],
)
def test_bad_options_exit_2(cli, busy, args, message):
    code, stdout, err = cli("quantize", busy, *args)
    assert (code, stdout) == (2, "")
    assert err.startswith(message)
    assert sorted(p.name for p in busy.parent.iterdir()) == ["busy.wav"]


def test_missing_bits_is_a_usage_error(cli, busy):
    code, _, err = cli("quantize", busy)
    assert code == 2 and "Missing option '--bits'" in err


def test_output_equal_to_input_is_refused_exit_4(cli, busy):
    code, _, err = cli("quantize", busy, "--bits", "8", "-o", busy)
    assert code == 4 and err == f"error: {busy}: output is the input file; refusing to overwrite an input\n"


def test_missing_input_exit_3(cli, tmp_path):
    code, stdout, err = cli("quantize", tmp_path / "absent.wav", "--bits", "8")
    assert (code, stdout, err) == (3, "", f"error: {tmp_path / 'absent.wav'}: no such file\n")
    assert list(tmp_path.iterdir()) == []


def test_help_lists_every_option(cli):
    code, stdout, _ = cli("quantize", "--help")
    assert code == 0
    for option in (
        "--bits",
        "--output",
        "--dither",
        "--noise-shape",
        "--seed",
        "--subtype",
        "--json",
        "--rate",
        "--format",
        "--channels",
        "--fix-nonfinite",
        "--quiet",
        "--debug",
    ):
        assert option in stdout


def test_wav_bytes_to_a_terminal_are_refused(cli, busy, monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    code, stdout, err = cli("quantize", busy, "--bits", "8", "-o", "-")
    assert (code, stdout) == (2, "")
    assert err == "error: refusing to write WAV bytes to a terminal: give -o PATH or pipe the output\n"

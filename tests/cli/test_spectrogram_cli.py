"""``audiokit spectrogram``: the saved arrays against a naive framing + ``np.fft.rfft`` reference
(uncentred, centred reflect/constant, ``--nfft`` > window), shapes and sidecar, dB/magnitude/complex
scales, frequency cropping, default and stdout outputs, errors, odd inputs, streaming and PNG size.
The display max-pooling itself is tested in tests/plot/test_plot.py."""

from __future__ import annotations

import io
import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import audiokit
from audiokit.dsp.generate import generate
from tests.helpers.cli import (
    EPS32,
    PNG_END,
    PNG_MAGIC,
    SR,
    cli_npy,
    png_size,
    reference_stft,
    rel_err,
    samples,
    sidecar,
    write,
)

# The CLI reads float32 samples, windows them in float32 and runs a float32 FFT.  The rounding
# error of one bin is about eps32 * log2(n_fft) * (norm of the frame), so relative to the largest
# |X|^2 of the array it stays within a few tens of eps32 (measured: 2-3 eps32).  A wrong window
# variant (symmetric instead of periodic Hann) already moves it by ~1e-3, so this is a sharp test.
TOL = 64 * EPS32  # ~7.6e-6 of the array's maximum
# dB values are at most ~100 in magnitude and computed in float32 (log10, subtract the reference):
# a few ulps of 100, i.e. ~1e-5 dB; allow 1e-3 dB.
DB_TOL = 1e-3


# --------------------------------------------------------------------------- helpers (shared ones: helpers.py)


@pytest.fixture
def tone(tmp_path) -> Path:
    """1 s of a 1 kHz sine (0.5) plus white noise (RMS 0.05) at 16 kHz, float WAV."""
    x = generate("sine:1k:0.5 + noise:0.05", n_samples=SR, sr=SR, seed=1)
    return write(tmp_path / "tone.wav", x)


@pytest.fixture
def stereo(tmp_path) -> Path:
    """1 s, two channels: the same sine, independent noise (so the channels differ)."""
    x = generate("sine:1k:0.5 + noise:0.05", n_samples=SR, sr=SR, seed=2, channels=2)
    return write(tmp_path / "stereo.wav", x)


def power_npy(cli, src: Path, npy: Path, *args) -> np.ndarray:
    return cli_npy(cli, "spectrogram", src, npy, "--scale", "power", *args)


# --------------------------------------------------------------------------- values against the reference


@pytest.mark.parametrize(
    "flags, center, pad_mode",
    [([], False, "constant"), (["--center", "--pad-mode", "reflect"], True, "reflect"), (["--center"], True, "constant")],
    ids=["uncentred", "centred-reflect", "centred-constant"],
)
def test_power_equals_framed_rfft_with_periodic_hann(cli, tone, tmp_path, flags, center, pad_mode):
    P = power_npy(cli, tone, tmp_path / "p.npy", "--win", "400", "--hop", "160", *flags)
    y = samples(tone)[0]
    expected = np.abs(reference_stft(y, 400, 160, center=center, pad_mode=pad_mode)) ** 2
    assert P.dtype == np.float32
    assert P.shape == (201, 1 + (SR - 400) // 160 if not center else 1 + SR // 160)
    assert rel_err(P, expected) <= TOL
    # the tolerance separates the periodic Hann from the symmetric one
    symmetric = np.abs(reference_stft(y, 400, 160, center=center, pad_mode=pad_mode, periodic=False)) ** 2
    assert rel_err(P, symmetric) > 100 * TOL


@pytest.mark.parametrize(
    "flags, window, periodic",
    [
        (["--window", "hamming"], "hamming", True),
        (["--window", "blackman"], "blackman", True),
        (["--window", "kaiser:5"], ("kaiser", 5.0), True),
        (["--window", "rectangular"], "boxcar", True),
        (["--symmetric"], "hann", False),
    ],
    ids=["hamming", "blackman", "kaiser5", "rectangular", "symmetric-hann"],
)
def test_other_windows_equal_scipy_get_window(cli, tone, tmp_path, flags, window, periodic):
    P = power_npy(cli, tone, tmp_path / "p.npy", "--win", "400", "--hop", "160", *flags)
    expected = np.abs(reference_stft(samples(tone)[0], 400, 160, window=window, periodic=periodic)) ** 2
    assert rel_err(P, expected) <= TOL
    meta = sidecar(tmp_path / "p.npy")
    assert meta["periodic"] is periodic
    assert meta["window"] == (flags[1] if periodic else "hann")


def test_reflect_and_constant_padding_differ_only_in_the_edge_frames(cli, tone, tmp_path):
    reflect = power_npy(cli, tone, tmp_path / "r.npy", "--win", "400", "--hop", "160", "--center", "--pad-mode", "reflect")
    constant = power_npy(cli, tone, tmp_path / "c.npy", "--win", "400", "--hop", "160", "--center")
    # frame m is centred on sample 160 m and spans +-200 samples: frames 2 .. n-3 never touch the padding
    assert np.array_equal(reflect[:, 2:-2], constant[:, 2:-2])
    assert rel_err(reflect[:, :1], constant[:, :1]) > 0.01


def test_nfft_larger_than_window_zero_pads_with_the_window_centred(cli, tone, tmp_path):
    P = power_npy(cli, tone, tmp_path / "p.npy", "--win", "400", "--hop", "160", "--nfft", "1024")
    y = samples(tone)[0]
    assert P.shape == (513, 1 + (SR - 1024) // 160)
    assert rel_err(P, np.abs(reference_stft(y, 400, 160, 1024)) ** 2) <= TOL
    meta = sidecar(tmp_path / "p.npy")
    assert (meta["win_length"], meta["n_fft"], meta["delta_f_hz"]) == (400, 1024, SR / 1024)


@pytest.mark.slow
def test_nfft_larger_than_window_matches_librosa(cli, tone, tmp_path):
    librosa = pytest.importorskip("librosa")
    P = power_npy(cli, tone, tmp_path / "p.npy", "--win", "400", "--hop", "160", "--nfft", "1024")
    y = samples(tone)[0]
    expected = np.abs(librosa.stft(y, n_fft=1024, hop_length=160, win_length=400, window="hann", center=False)) ** 2
    assert rel_err(P, expected) <= TOL


def test_stereo_shape_is_channels_first_and_mix_averages(cli, stereo, tmp_path):
    P = power_npy(cli, stereo, tmp_path / "p.npy", "--win", "400", "--hop", "160")
    y = samples(stereo)
    expected = np.stack([np.abs(reference_stft(ch, 400, 160)) ** 2 for ch in y])
    assert P.shape == (2, 201, 98) and sidecar(tmp_path / "p.npy")["layout"] == "(channels, n_rows, n_frames)"
    assert rel_err(P, expected) <= TOL
    assert rel_err(P[0], P[1]) > 1e-3  # the channels really differ

    M = power_npy(cli, stereo, tmp_path / "m.npy", "--win", "400", "--hop", "160", "--mix")
    assert M.shape == (201, 98)
    assert rel_err(M, np.abs(reference_stft(y.mean(axis=0), 400, 160)) ** 2) <= TOL
    meta = sidecar(tmp_path / "m.npy")
    assert (meta["channels"], meta["mixed"], meta["shape"]) == (1, True, [201, 98])


def test_article_frame_count_405_frames_of_257_bins(cli, tmp_path):
    """The article's recording: 52225 samples at 22050 Hz, W = N = 512, H = 128."""
    src = write(tmp_path / "article.wav", generate("pink:0.1", n_samples=52225, sr=22050, seed=3), 22050)
    P = power_npy(cli, src, tmp_path / "p.npy", "--win", "512", "--hop", "128")
    assert P.shape == (257, 405) == (512 // 2 + 1, 1 + (52225 - 512) // 128)
    assert sidecar(tmp_path / "p.npy")["shape"] == [257, 405]
    centred = power_npy(cli, src, tmp_path / "c.npy", "--win", "512", "--hop", "128", "--center")
    assert centred.shape == (257, 1 + 52225 // 128)


def test_sidecar_durations_in_samples_and_fields(cli, tone, tmp_path):
    npy = tmp_path / "s.npy"
    code, out, err = cli("spectrogram", tone, "--win", "25ms", "--hop", "10ms", "--npy", npy)
    assert (code, err) == (0, "")
    meta = sidecar(npy)
    S = np.load(npy)
    assert S.dtype == np.float32 and list(S.shape) == meta["shape"] == [201, 98]
    for key in (
        "sr",
        "win_length",
        "hop_length",
        "n_fft",
        "window",
        "center",
        "scale",
        "ref",
        "ref_db",
        "top_db",
        "frame_time_s",
        "audiokit_version",
        "shape",
    ):
        assert key in meta, key
    assert (meta["sr"], meta["win_length"], meta["hop_length"], meta["n_fft"]) == (16000, 400, 160, 400)
    assert (meta["window"], meta["periodic"], meta["center"], meta["dtype"]) == ("hann", True, False, "float32")
    # .npy default: absolute dB (re 1, no clip), comparable across files
    assert (meta["scale"], meta["ref"], meta["ref_db"], meta["top_db"]) == ("db", 1.0, 0.0, None)
    assert meta["audiokit_version"] == audiokit.__version__
    # frame m covers [160 m, 160 m + 400): its centre is at (160 m + 200) / 16000 s
    assert meta["frame_time_s"]["first"] == pytest.approx(200 / SR)
    assert meta["frame_time_s"]["step"] == pytest.approx(160 / SR)
    assert meta["freq_hz"] == {"formula": "k * sr / n_fft", "first_bin": 0, "count": 201}


# --------------------------------------------------------------------------- scales


def expected_db(P: np.ndarray, *, ref_db: float, top_db: float | None) -> np.ndarray:
    db = 10 * np.log10(np.maximum(P.astype(np.float64), 1e-10)) - ref_db
    return db if top_db is None else np.maximum(db, db.max() - top_db)


@pytest.mark.parametrize("top_db", [80.0, 20.0])
def test_db_ref_max_top_db_equals_floored_log_of_the_power(cli, tone, tmp_path, top_db):
    P = power_npy(cli, tone, tmp_path / "p.npy")
    npy = tmp_path / "d.npy"
    code, _, err = cli("spectrogram", tone, "--npy", npy, "--scale", "db", "--ref", "max", "--top-db", top_db)
    assert (code, err) == (0, "")
    D = np.load(npy)
    peak_db = 10 * math.log10(float(P.max()))
    expected = expected_db(P, ref_db=peak_db, top_db=top_db)
    assert D.dtype == np.float32 and D.shape == P.shape
    assert np.max(np.abs(D - expected)) <= DB_TOL
    assert D.max() == 0.0 and D.min() >= -top_db
    if top_db == 20.0:  # the noise floor of this signal sits ~40 dB down: the clip acts
        assert D.min() == -20.0 and np.count_nonzero(D == -20.0) > D.size // 2
    meta = sidecar(npy)
    assert meta["ref_db"] == pytest.approx(peak_db, abs=DB_TOL) and meta["top_db"] == top_db


def test_db_ref_1_is_absolute_and_top_db_0_disables_the_clip(cli, tone, tmp_path):
    P = power_npy(cli, tone, tmp_path / "p.npy")
    npy = tmp_path / "d.npy"
    assert cli("spectrogram", tone, "--npy", npy, "--ref", "1", "--top-db", "0")[0] == 0
    D = np.load(npy)
    assert np.max(np.abs(D - expected_db(P, ref_db=0.0, top_db=None))) <= DB_TOL
    assert D.max() == pytest.approx(10 * math.log10(float(P.max())), abs=DB_TOL) and D.max() > 30
    assert D.max() - D.min() > 80  # nothing clipped
    meta = sidecar(npy)
    assert (meta["ref"], meta["ref_db"], meta["top_db"]) == (1.0, 0.0, None)

    assert cli("spectrogram", tone, "--npy", npy, "--ref", "max", "--top-db", "0")[0] == 0
    unclipped = np.load(npy)
    assert np.max(np.abs(unclipped - (D - D.max()))) <= DB_TOL


def test_magnitude_is_the_square_root_of_the_power(cli, tone, tmp_path):
    P = power_npy(cli, tone, tmp_path / "p.npy")
    npy = tmp_path / "m.npy"
    assert cli("spectrogram", tone, "--npy", npy, "--scale", "magnitude")[0] == 0
    M = np.load(npy)
    assert M.dtype == np.float32 and rel_err(M, np.sqrt(P.astype(np.float64))) <= TOL
    assert sidecar(npy)["scale"] == "magnitude"


def test_complex_saves_the_stft_with_its_phase(cli, stereo, tmp_path):
    npy = tmp_path / "c.npy"
    code, out, err = cli("spectrogram", stereo, "--npy", npy, "--complex", "--win", "400", "--hop", "160")
    assert (code, err) == (0, "") and out == f"{npy}\n{npy.with_suffix('.json')}\n"
    X = np.load(npy)
    expected = np.stack([reference_stft(ch, 400, 160) for ch in samples(stereo)])
    assert X.dtype == np.complex64 and X.shape == (2, 201, 98)
    assert rel_err(X, expected) <= TOL  # complex difference: magnitude and phase
    meta = sidecar(npy)
    assert (meta["scale"], meta["dtype"]) == ("complex", "complex64")


def test_complex_needs_npy(cli, tone, tmp_path, listing):
    before = listing()
    code, out, err = cli("spectrogram", tone, "--complex")
    assert (code, out) == (2, "") and "--complex needs --npy" in err
    assert listing() == before


def test_fmin_fmax_keep_the_rows_in_range(cli, tone, tmp_path):
    full = power_npy(cli, tone, tmp_path / "p.npy", "--win", "400", "--hop", "160")
    cropped = power_npy(cli, tone, tmp_path / "c.npy", "--win", "400", "--hop", "160", "--fmin", "1kHz", "--fmax", "2k")
    # bins are 40 Hz apart: 1000 Hz is bin 25, 2000 Hz bin 50
    assert cropped.shape == (26, 98)
    assert np.array_equal(cropped, full[25:51])
    assert sidecar(tmp_path / "c.npy")["freq_hz"] == {"formula": "k * sr / n_fft", "first_bin": 25, "count": 26}


# --------------------------------------------------------------------------- outputs


def test_default_output_is_a_png_beside_the_input(cli, tone, tmp_path):
    src = shutil.copy(tone, tmp_path / "speech.wav")
    code, out, err = cli("spectrogram", src)
    png = tmp_path / "speech.spectrogram.png"
    assert (code, out, err) == (0, f"{png}\n", "")
    assert png.read_bytes()[:8] == PNG_MAGIC and png_size(png.read_bytes()) == (1200, 600)


def test_stdin_without_output_is_a_usage_error(cli, tone, monkeypatch, listing):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(tone.read_bytes())))
    before = listing()
    code, out, err = cli("spectrogram", "-")
    assert (code, out) == (2, "")
    assert "standard input" in err and "-o" in err
    assert listing() == before


def test_png_to_stdout_from_stdin_is_only_png_bytes(run, tone, tmp_path):
    code, out, err = run("spectrogram", "-", "-o", "-", "--size", "640x320", stdin=tone.read_bytes())
    assert (code, err) == (0, "")
    assert out.startswith(PNG_MAGIC) and out.endswith(PNG_END)  # nothing before or after the image
    assert png_size(out) == (640, 320)
    # with --npy as well, the array's paths must not follow the PNG bytes on stdout
    code, out, err = run("spectrogram", "-", "-o", "-", "--npy", "s.npy", stdin=tone.read_bytes())
    assert code == 0
    assert out.startswith(PNG_MAGIC) and out.endswith(PNG_END)
    assert "s.npy" in err and "s.json" in err
    assert np.load(tmp_path / "s.npy").shape == (201, 98)


def test_png_size_option(cli, tone, tmp_path):
    png = tmp_path / "s.png"
    code, out, err = cli("spectrogram", tone, "-o", png, "--size", "800x400")
    assert (code, out, err) == (0, f"{png}\n", "")
    assert png_size(png.read_bytes()) == (800, 400)


def test_png_and_npy_together(cli, tone, tmp_path):
    png, npy = tmp_path / "s.png", tmp_path / "s.npy"
    code, out, err = cli("spectrogram", tone, "-o", png, "--npy", npy, "--size", "400x300")
    assert (code, err) == (0, "")
    assert out.splitlines() == [str(png), str(npy), str(npy.with_suffix(".json"))]
    assert png_size(png.read_bytes()) == (400, 300) and np.load(npy).shape == (201, 98)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "args, message",
    [
        (["--win", "512", "--nfft", "256"], r"--nfft: 256 samples is shorter than the window \(512 samples\)"),
        (["--window", "hanning2"], r"unknown window 'hanning2'; allowed: rectangular, hann, hamming, blackman"),
        (["--scale", "bel"], r"--scale: 'bel' is not one of db, power, magnitude"),
        (["--ref", "loud"], r"--ref: 'loud' is not 'max' or a positive number"),
        (["--ref", "0"], r"--ref: '0' must be 'max' or a number > 0"),
        (["--size", "big"], r"--size: invalid size 'big'"),
        (["--size", "10x10"], r"--size: '10x10' out of range"),
        (["--pad-mode", "edge", "--center"], r"--pad-mode: 'edge' is not one of constant, reflect"),
        (["--fmin", "5k", "--fmax", "1k"], r"--fmin 5000 Hz must be below --fmax 1000 Hz"),
        (["--npy", "out.dat"], r"--npy: '.*out\.dat' must end in \.npy"),
        (["--top-db", "-1"], r"--top-db.*greater than or equal to 0"),
    ],
    ids=[
        "nfft<win",
        "window",
        "scale",
        "ref-word",
        "ref-zero",
        "size-word",
        "size-range",
        "pad-mode",
        "fmin>fmax",
        "npy-suffix",
        "top-db<0",
    ],
)
def test_bad_parameters_exit_2_and_write_nothing(cli, tone, tmp_path, listing, args, message):
    before = listing()
    code, out, err = cli("spectrogram", tone, "-o", tmp_path / "s.png", *args)
    assert (code, out) == (2, "")
    assert err.startswith("error: ")
    assert re.search(message, err), err
    assert listing() == before


def test_output_equal_to_input_exit_4(cli, tone):
    before = tone.read_bytes()
    code, out, err = cli("spectrogram", tone, "-o", tone)
    assert (code, out) == (4, "") and "output is the input" in err
    assert tone.read_bytes() == before


def test_missing_output_folder_exit_4_and_nothing_written(cli, tone, tmp_path, listing):
    before = listing()
    code, out, err = cli("spectrogram", tone, "-o", tmp_path / "s.png", "--npy", tmp_path / "missing" / "s.npy")
    assert (code, out) == (4, "") and "does not exist" in err
    assert listing() == before  # the PNG, although writable, was not written either


def test_nan_input_refused_exit_3(cli, tmp_path, listing):
    x = np.zeros(4000)
    x[1234] = np.nan
    src = write(tmp_path / "nan.wav", x)
    before = listing()
    code, out, err = cli("spectrogram", src, "--npy", tmp_path / "s.npy")
    assert (code, out) == (3, "") and "NaN" in err and "--fix-nonfinite" in err
    assert listing() == before


# --------------------------------------------------------------------------- odd but valid inputs


@pytest.mark.parametrize(
    "flags, center, pad_mode", [([], False, "constant"), (["--center", "--pad-mode", "reflect"], True, "reflect")]
)
def test_input_shorter_than_a_window_gives_one_padded_frame_and_a_warning(cli, tmp_path, flags, center, pad_mode):
    src = write(tmp_path / "short.wav", generate("sine:1k", n_samples=100, sr=SR))
    npy = tmp_path / "s.npy"
    code, out, err = cli("spectrogram", src, "--npy", npy, "--scale", "power", *flags)
    assert code == 0
    assert err.startswith("warning: ") and "100 samples, fewer than n_fft=400" in err
    P = np.load(npy)
    assert P.shape == (201, 1)
    expected = np.abs(reference_stft(samples(src)[0], 400, 160, center=center, pad_mode=pad_mode)) ** 2
    assert rel_err(P, expected) <= TOL

    code, out, err = cli("spectrogram", src, "--npy", npy, "--scale", "power", "--quiet", *flags)
    assert (code, err) == (0, "")


@pytest.mark.parametrize("ref, value", [("max", 0.0), ("1", -100.0)])
def test_silence_gives_finite_values(cli, tmp_path, ref, value):
    src = write(tmp_path / "silence.wav", np.zeros(SR), subtype="PCM_16")
    npy = tmp_path / "s.npy"
    code, _, _ = cli("spectrogram", src, "--npy", npy, "--ref", ref)
    assert code == 0
    D = np.load(npy)
    assert np.isfinite(D).all()
    # every cell sits at the floor, 10*log10(1e-10) = -100 dB; with ref max the floor is the reference
    assert np.all(np.abs(D - value) <= DB_TOL)
    assert sidecar(npy)["ref_db"] == pytest.approx(-100.0 if ref == "max" else 0.0, abs=DB_TOL)
    assert cli("spectrogram", src, "--npy", npy, "--scale", "power")[0] == 0
    assert not np.load(npy).any()


def test_dc_puts_its_energy_in_bin_0(cli, tmp_path):
    src = write(tmp_path / "dc.wav", generate("dc:0.5", n_samples=SR, sr=SR))
    P = power_npy(cli, src, tmp_path / "p.npy", "--win", "400", "--hop", "160")
    # periodic Hann: X[0] = 0.5 * sum(w) = 0.5 * 200, X[1] = -X[0]/2, every other bin exactly 0
    assert np.all(P.argmax(axis=0) == 0)
    assert np.allclose(P[0], 100.0**2, rtol=TOL) and np.allclose(P[1], 50.0**2, rtol=TOL)
    assert P[2:].max() <= TOL * P.max()


def test_full_scale_square_has_odd_harmonics_at_their_sampled_levels(cli, tmp_path):
    src = write(tmp_path / "square.wav", generate("square:1k:1.0", n_samples=SR, sr=SR))
    npy = tmp_path / "d.npy"
    code, _, err = cli("spectrogram", src, "--npy", npy, "--win", "400", "--hop", "160", "--ref", "max", "--top-db", "80")
    assert (code, err) == (0, "")  # |x| = 1 exactly: full scale, no warning
    D = np.load(npy)
    # period 16 samples, 8 up / 8 down: harmonic k has amplitude ~ 1/sin(pi k/16) for odd k, 0 for even k.
    # 40 Hz bins: harmonic k of 1 kHz is bin 25 k, exactly on the grid.
    for k in (3, 5, 7):
        level = 20 * math.log10(math.sin(math.pi / 16) / math.sin(k * math.pi / 16))
        assert np.all(np.abs(D[25 * k] - level) <= DB_TOL), k
    assert np.all(D[25] == 0.0)
    assert np.all(D[[50, 100, 150, 200]] == -80.0)  # even harmonics: nothing, clipped at -top_db


# --------------------------------------------------------------------------- streaming


def test_long_file_streams_to_the_in_memory_result(cli, tmp_path):
    from audiokit.dsp.stft import StftPlan, spectrogram
    from audiokit.io.reader import BLOCK_SAMPLES

    n = 200_000
    assert n > 3 * BLOCK_SAMPLES
    x = generate("chirp:100:7k:0.4 + noise:0.02", n_samples=n, sr=SR, seed=4)
    src = write(tmp_path / "long.wav", x)
    x32 = samples(src)[0].astype(np.float32)
    for flags, center in (([], False), (["--center", "--pad-mode", "reflect"], True)):
        P = power_npy(cli, src, tmp_path / "p.npy", "--win", "400", "--hop", "160", *flags)
        plan = StftPlan(sr=SR, win_length=400, hop_length=160, center=center, pad_mode="reflect", dtype="float32")
        expected = spectrogram(x32, plan)
        assert P.shape == expected.shape == (201, plan.n_frames(n))
        assert rel_err(P, expected) <= TOL


# --------------------------------------------------------------------------- help


def test_help_shows_an_example(cli):
    code, out, _ = cli("spectrogram", "--help")
    assert code == 0 and "Example" in out and "--nfft" in out

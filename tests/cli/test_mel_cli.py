"""``audiokit mel``: the mel power against a naive filter bank over a naive STFT and against librosa
(HTK / no norm, and librosa's defaults), dB and ln scales, band count and range, the --filterbank
matrix and picture, default and stdout outputs, errors, odd inputs and streaming."""

from __future__ import annotations

import io
import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from audiokit.dsp.generate import generate
from tests.helpers.cli import (
    EPS32,
    PNG_END,
    PNG_MAGIC,
    SR,
    cli_npy,
    png_size,
    reference_power,
    rel_err,
    samples,
    sidecar,
    without_duplicate_bands,
    write,
)

# float32 STFT and a float32 filter bank: each mel value is a weighted sum of float32 powers, so
# relative to the largest mel value the rounding stays within a few tens of eps32 (measured: 2 eps32).
TOL = 64 * EPS32
DB_TOL = 1e-3  # float32 log10 of values up to ~100 dB: a few ulps of 100 is ~1e-5 dB


# --------------------------------------------------------------------------- helpers (shared ones: helpers.py)


def htk_filterbank(sr, n_fft, n_mels, fmin=0.0, fmax=None) -> np.ndarray:
    """Triangles peaking at 1 with corners evenly spaced on m = 2595 log10(1 + f/700) (the article's bank)."""
    fmax = sr / 2 if fmax is None else fmax
    mel = lambda f: 2595 * np.log10(1 + np.asarray(f) / 700)  # noqa: E731
    corners = 700 * (10 ** (np.linspace(mel(fmin), mel(fmax), n_mels + 2) / 2595) - 1)
    f = np.arange(n_fft // 2 + 1) * sr / n_fft
    bank = np.zeros((n_mels, f.size))
    for i in range(n_mels):
        lo, mid, hi = corners[i : i + 3]
        bank[i] = np.maximum(0, np.minimum((f - lo) / (mid - lo), (hi - f) / (hi - mid)))
    return bank


@pytest.fixture
def voice(tmp_path) -> Path:
    """1 s at 16 kHz: a 150 Hz harmonic series, a 2.5 kHz tone and a little noise (float WAV)."""
    x = generate("hum:150:0.3:12 + sine:2.5k:0.1 + noise:0.01", n_samples=SR, sr=SR, seed=5)
    return write(tmp_path / "voice.wav", x)


def mel_npy(cli, src: Path, npy: Path, *args) -> np.ndarray:
    return cli_npy(cli, "mel", src, npy, *args)


# --------------------------------------------------------------------------- values


def test_mel_power_equals_the_article_bank_times_the_power_spectrogram(cli, voice, tmp_path):
    code, out, err = cli("mel", voice, "--npy", tmp_path / "m.npy", "--scale", "power")
    # 80 bands on 40 Hz bins: the lowest repeat their neighbours' bins, one warning line says so and what to do
    assert code == 0 and err.count("\n") == 1 and "mel bands are built from the same DFT bins" in err and "--nfft" in err
    M = np.load(tmp_path / "m.npy")
    expected = htk_filterbank(SR, 400, 80) @ reference_power(samples(voice)[0], 400, 160)
    assert M.dtype == np.float32 and M.shape == (80, 98)
    assert rel_err(M, expected) <= TOL
    meta = sidecar(tmp_path / "m.npy")
    assert meta["mel"] == {"n_mels": 80, "fmin_hz": 0.0, "fmax_hz": 8000.0, "mel_scale": "htk", "norm": "none"}
    assert (meta["win_length"], meta["hop_length"], meta["n_fft"], meta["center"]) == (400, 160, 400, False)
    assert len(meta["mel_centre_hz"]) == 80


@pytest.mark.slow
def test_mel_power_matches_librosa_htk_without_norm(cli, voice, tmp_path):
    librosa = pytest.importorskip("librosa")
    M = mel_npy(cli, voice, tmp_path / "m.npy", "--scale", "power", "--win", "400", "--hop", "160")
    expected = librosa.feature.melspectrogram(
        y=samples(voice)[0],
        sr=SR,
        n_fft=400,
        hop_length=160,
        win_length=400,
        window="hann",
        center=False,
        power=2,
        n_mels=80,
        htk=True,
        norm=None,
    )
    assert rel_err(M, expected) <= TOL


@pytest.mark.slow
def test_slaney_norm_and_centre_match_librosa_defaults(cli, voice, tmp_path):
    librosa = pytest.importorskip("librosa")
    M = mel_npy(
        cli,
        voice,
        tmp_path / "m.npy",
        "--scale",
        "power",
        "--mel-scale",
        "slaney",
        "--norm",
        "slaney",
        "--center",
        "--pad-mode",
        "constant",
    )
    expected = librosa.feature.melspectrogram(y=samples(voice)[0], sr=SR, n_fft=400, hop_length=160, n_mels=80)
    assert M.shape == (80, 1 + SR // 160)
    assert rel_err(M, expected) <= TOL
    # and the default dB scale of the .npy is power_to_db(ref=1.0, top_db=None) of the same matrix (absolute)
    D = mel_npy(cli, voice, tmp_path / "d.npy", "--mel-scale", "slaney", "--norm", "slaney", "--center")
    assert np.max(np.abs(D - librosa.power_to_db(expected, ref=1.0, top_db=None))) <= DB_TOL
    R = mel_npy(cli, voice, tmp_path / "r.npy", "--mel-scale", "slaney", "--norm", "slaney", "--center", "--ref", "max")
    assert np.max(np.abs(R - librosa.power_to_db(expected, ref=np.max, top_db=None))) <= DB_TOL


def test_db_scale_is_floored_log_of_the_mel_power(cli, voice, tmp_path):
    M = mel_npy(cli, voice, tmp_path / "m.npy", "--scale", "power").astype(np.float64)
    D = mel_npy(cli, voice, tmp_path / "d.npy")  # .npy defaults: --scale db, absolute (re 1), no clip
    db = 10 * np.log10(np.maximum(M, 1e-10))
    assert D.dtype == np.float32 and np.max(np.abs(D - db)) <= DB_TOL
    meta = sidecar(tmp_path / "d.npy")
    assert (meta["ref"], meta["ref_db"], meta["top_db"]) == (1.0, 0.0, None)

    R = mel_npy(cli, voice, tmp_path / "r.npy", "--ref", "max", "--top-db", "80")  # librosa power_to_db(ref=np.max)
    expected = np.maximum(db - db.max(), -80.0)
    assert np.max(np.abs(R - expected)) <= DB_TOL
    assert R.max() == 0.0 and R.min() >= -80.0
    assert sidecar(tmp_path / "r.npy")["ref_db"] == pytest.approx(db.max(), abs=DB_TOL)


def test_log_ln_is_the_natural_log_floored_at_1e_10(cli, voice, tmp_path):
    M = mel_npy(cli, voice, tmp_path / "m.npy", "--scale", "power").astype(np.float64)
    L = mel_npy(cli, voice, tmp_path / "l.npy", "--log", "ln")
    expected = np.log(np.maximum(M, 1e-10))
    # float32 ln of values up to |ln 1e-10| = 23: a few ulps of 23
    assert np.max(np.abs(L - expected)) <= 1e-4
    meta = sidecar(tmp_path / "l.npy")
    assert (meta["scale"], meta["ref_db"]) == ("ln", None)
    # not rescaled to the maximum: the loudest band is well above ln(1) = 0
    assert L.max() > 1


def test_n_mels_40_and_a_frequency_range(cli, voice, tmp_path):
    M = mel_npy(cli, voice, tmp_path / "m.npy", "--scale", "power", "--n-mels", "40", "--fmin", "100", "--fmax", "4kHz")
    expected = htk_filterbank(SR, 400, 40, 100.0, 4000.0) @ reference_power(samples(voice)[0], 400, 160)
    assert M.shape == (40, 98)
    assert rel_err(M, expected) <= TOL
    meta = sidecar(tmp_path / "m.npy")
    assert (meta["mel"]["n_mels"], meta["mel"]["fmin_hz"], meta["mel"]["fmax_hz"]) == (40, 100.0, 4000.0)
    centres = np.array(meta["mel_centre_hz"])
    assert centres.size == 40 and np.all(np.diff(centres) > 0) and 100 < centres[0] < centres[-1] < 4000


def test_too_many_bands_for_the_fft_warn(cli, voice, tmp_path):
    npy = tmp_path / "m.npy"
    code, _, err = cli("mel", voice, "--npy", npy, "--n-mels", "200", "--win", "256")
    assert code == 0 and "warning:" in err and "mel filters are empty" in err
    assert np.isfinite(np.load(npy)).all()


# --------------------------------------------------------------------------- the filter bank


def test_filterbank_matrix_and_picture(cli, voice, tmp_path):
    png, npy = tmp_path / "fb.png", tmp_path / "fb.npy"
    code, out, err = cli("mel", voice, "--nfft", "512", "--win", "512", "--filterbank", "-o", png, "--npy", npy)
    assert (code, err) == (0, "")
    assert out.splitlines() == [str(png), str(npy), str(npy.with_suffix(".json"))]
    F = np.load(npy)
    assert F.shape == (80, 257) and F.dtype == np.float32
    # float32 weights in [0, 1]: a few ulps of 1
    assert np.max(np.abs(F - htk_filterbank(SR, 512, 80))) <= 8 * EPS32
    assert png.read_bytes()[:8] == PNG_MAGIC and png_size(png.read_bytes()) == (1200, 600)
    meta = sidecar(npy)
    assert (meta["kind"], meta["shape"], meta["n_fft"], meta["mel_scale"], meta["norm"]) == (
        "mel_filterbank",
        [80, 257],
        512,
        "htk",
        "none",
    )


@pytest.mark.slow
def test_filterbank_matches_librosa(cli, voice, tmp_path):
    librosa = pytest.importorskip("librosa")
    for flags, kwargs in (([], dict(htk=True, norm=None)), (["--mel-scale", "slaney", "--norm", "slaney"], {})):
        npy = tmp_path / "fb.npy"
        assert cli("mel", voice, "--nfft", "512", "--win", "512", "--filterbank", "--npy", npy, *flags)[0] == 0
        expected = librosa.filters.mel(sr=SR, n_fft=512, n_mels=80, **kwargs)
        assert rel_err(np.load(npy), expected) <= 8 * EPS32


# --------------------------------------------------------------------------- outputs


def test_default_output_is_a_png_beside_the_input(cli, voice, tmp_path):
    src = shutil.copy(voice, tmp_path / "speech.wav")
    code, out, err = cli("mel", src, "--size", "800x400")
    err = without_duplicate_bands(err)
    png = tmp_path / "speech.mel.png"
    assert (code, out, err) == (0, f"{png}\n", "")
    assert png_size(png.read_bytes()) == (800, 400)


def test_stdin_without_output_is_a_usage_error(cli, voice, monkeypatch, listing):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(voice.read_bytes())))
    before = listing()
    code, out, err = cli("mel", "-")
    assert (code, out) == (2, "") and "standard input" in err and "-o" in err
    assert listing() == before


def test_png_to_stdout_is_only_png_bytes(run, voice):
    code, out, err = run("mel", voice, "-o", "-", "--size", "640x320", "--nfft", "1024")
    assert (code, err) == (0, "")
    assert out.startswith(PNG_MAGIC) and out.endswith(PNG_END)
    assert png_size(out) == (640, 320)


def test_filterbank_png_to_stdout_keeps_stdout_clean(run, voice, tmp_path):
    code, out, err = run("mel", voice, "--filterbank", "-o", "-", "--npy", "fb.npy", "--nfft", "512", "--win", "512")
    assert code == 0
    assert out.startswith(PNG_MAGIC) and out.endswith(PNG_END)  # the .npy paths went to stderr
    assert "fb.npy" in err and np.load(tmp_path / "fb.npy").shape == (80, 257)


# --------------------------------------------------------------------------- errors and odd inputs


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--mel-scale", "bark"], 2, r"--mel-scale: 'bark' is not one of htk, slaney"),
        (["--norm", "l2"], 2, r"--norm: 'l2' is not one of none, slaney"),
        (["--log", "log2"], 2, r"--log: 'log2' is not one of db, ln"),
        (["--n-mels", "0"], 2, r"--n-mels"),
        (["--win", "512", "--nfft", "400"], 2, r"--nfft: 400 samples is shorter than the window \(512 samples\)"),
        (["--window", "gauss"], 2, r"unknown window 'gauss'; allowed: rectangular, hann"),
        (["--scale", "bel"], 2, r"--scale: 'bel' is not one of db, power, magnitude"),
        (["--fmax", "9k"], 2, r"fmax must satisfy"),
        (["--npy", "m.txt"], 2, r"--npy: .* must end in \.npy"),
    ],
    ids=["mel-scale", "norm", "log", "n-mels", "nfft<win", "window", "scale", "fmax>nyquist", "npy-suffix"],
)
def test_bad_parameters(cli, voice, tmp_path, listing, args, code, message):
    before = listing()
    got, out, err = cli("mel", voice, "-o", tmp_path / "m.png", *args)
    assert (got, out) == (code, "")
    assert err.startswith("error: ") and re.search(message, err), err
    assert listing() == before


def test_output_errors(cli, voice, tmp_path, listing):
    assert cli("mel", voice, "-o", voice)[0] == 4
    before = listing()
    code, out, err = cli("mel", voice, "--npy", tmp_path / "missing" / "m.npy")
    assert (code, out) == (4, "") and "does not exist" in err
    assert listing() == before


def test_silence_gives_finite_values(cli, tmp_path):
    src = write(tmp_path / "silence.wav", np.zeros(SR), subtype="PCM_16")
    for npy, extra in ((tmp_path / "d.npy", ()), (tmp_path / "l.npy", ("--log", "ln"))):
        code, _, err = cli("mel", src, "--npy", npy, *extra)
        err = without_duplicate_bands(err)
        assert code == 0 and err == f"warning: {src}: the input is digital silence; every value is the floor\n"
    D, L = np.load(tmp_path / "d.npy"), np.load(tmp_path / "l.npy")
    assert np.isfinite(D).all() and np.all(np.abs(D + 100.0) <= 1e-4)  # the absolute floor: 10 log10(1e-10)
    assert np.all(np.abs(L - math.log(1e-10)) <= 1e-4)


def test_short_input_warns_unless_quiet(cli, tmp_path):
    src = write(tmp_path / "short.wav", generate("sine:1k", n_samples=300, sr=SR))
    code, _, err = cli("mel", src, "--npy", tmp_path / "m.npy")
    assert code == 0 and "fewer than n_fft=400" in err and np.load(tmp_path / "m.npy").shape == (80, 1)
    code, _, err = cli("mel", src, "--npy", tmp_path / "m.npy", "--quiet")
    assert (code, err) == (0, "")


def test_long_file_streams_to_the_in_memory_log_mel(cli, tmp_path):
    from audiokit.dsp.mel import log_melspectrogram
    from audiokit.dsp.stft import StftPlan
    from audiokit.io.reader import BLOCK_SAMPLES

    n = 200_000
    assert n > 3 * BLOCK_SAMPLES
    src = write(tmp_path / "long.wav", generate("pink:0.1 + sine:440:0.1", n_samples=n, sr=SR, seed=6))
    D = mel_npy(cli, src, tmp_path / "d.npy")
    plan = StftPlan(sr=SR, win_length=400, hop_length=160, dtype="float32")
    expected = log_melspectrogram(samples(src)[0].astype(np.float32), plan, n_mels=80, ref=1.0, top_db=None)
    assert D.shape == expected.shape == (80, 1 + (n - 400) // 160)
    assert np.max(np.abs(D - expected)) <= DB_TOL
    # --ref max --top-db 80: the second pass over the saved array (rewrite) across blocks
    R = mel_npy(cli, src, tmp_path / "r.npy", "--ref", "max", "--top-db", "80")
    expected = log_melspectrogram(samples(src)[0].astype(np.float32), plan, n_mels=80, ref="max", top_db=80.0)
    assert np.max(np.abs(R - expected)) <= DB_TOL


def test_help_shows_an_example(cli):
    code, out, _ = cli("mel", "--help")
    assert code == 0 and "Example" in out and "--filterbank" in out


# --------------------------------------------------------------------------- defaults: features absolute, pictures normalised


def test_batch_mel_defaults_are_absolute_db(cli, voice, tmp_path):
    # the same file at half the amplitude reads 20 log10(2) = 6.02 dB lower in every cell above the -100 dB floor:
    # levels compare across a corpus (with a per-file --ref max the two arrays were identical)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    x = samples(voice)
    write(corpus / "full.wav", x)
    write(corpus / "half.wav", 0.5 * x)
    code, _, err = cli("batch", "mel", "--store", "files", corpus, "--out", tmp_path / "out", "-j", "1", "-q")
    assert code == 0, err
    full = np.load(tmp_path / "out" / "full.mel.npy").astype(np.float64)
    half = np.load(tmp_path / "out" / "half.mel.npy").astype(np.float64)
    above = half > -100.0 + DB_TOL
    assert above.mean() > 0.99
    assert np.max(np.abs((full - half)[above] - 20 * math.log10(2.0))) <= DB_TOL
    assert full.max() > 0  # not shifted to 0 dB at each file's maximum
    meta = sidecar(tmp_path / "out" / "full.mel.npy")
    assert (meta["ref"], meta["ref_db"], meta["top_db"]) == (1.0, 0.0, None)


def test_png_still_normalises_to_the_loudest_cell(cli, voice, tmp_path):
    # the picture keeps --ref max --top-db 80: the file at half the amplitude draws the same image (same name)
    x = samples(voice)
    pngs = []
    for gain, folder in ((1.0, "full"), (0.5, "half")):
        (tmp_path / folder).mkdir()
        src = write(tmp_path / folder / "v.wav", gain * x)
        png = tmp_path / folder / "v.png"
        code, _, err = cli("mel", src, "-o", png, "--npy", tmp_path / folder / "v.npy")
        assert code == 0, err
        pngs.append(png.read_bytes())
    assert pngs[0] == pngs[1]
    # an explicit --ref applies to the picture too: dB re 1 shows the 6 dB difference
    for folder in ("full", "half"):
        assert cli("mel", tmp_path / folder / "v.wav", "-o", tmp_path / folder / "abs.png", "--ref", "1")[0] == 0
    assert (tmp_path / "full" / "abs.png").read_bytes() != (tmp_path / "half" / "abs.png").read_bytes()

"""``audiokit griffinlim``: spectrogram/mel ``.npy`` → WAV by fast Griffin-Lim; JSON report; bad inputs exit 3, one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.griffinlim import griffinlim
from audiokit.pipelines.sidecar import plan_from_sidecar
from tests.helpers.cli import samples, sidecar

SPEECH = Path(__file__).resolve().parents[2] / "examples" / "data" / "speech.wav"


@pytest.fixture
def speech(tmp_path) -> Path:
    """The first 1.5 s of examples/data/speech.wav (16 kHz PCM_16), copied as is."""
    y, sr = sf.read(SPEECH, dtype="int16")
    path = tmp_path / "speech.wav"
    sf.write(path, y[:24000], sr, subtype="PCM_16")
    return path


def make(cli, command, src, npy, *args):
    code, out, err = cli(command, src, "--npy", npy, *args)
    assert code == 0, err
    return npy


def test_magnitude_round_trip_writes_the_source_length_and_rate(cli, speech, tmp_path):
    npy = make(cli, "spectrogram", speech, tmp_path / "mag.npy", "--center", "--scale", "magnitude")
    out_wav = tmp_path / "rebuilt.wav"
    code, out, err = cli("griffinlim", npy, "-o", out_wav, "--iters", "16")
    assert (code, out) == (0, f"{out_wav}\n")
    assert err.startswith("griffinlim: 16 iterations, spectral convergence ") and err.count("\n") == 1
    info, src = sf.info(out_wav), sf.info(speech)
    assert (info.frames, info.samplerate, info.channels, info.subtype) == (src.frames, 16000, 1, "PCM_16")
    # the job is the core function on the saved magnitude (float32), written as PCM_16
    S = np.load(npy)
    expected = griffinlim(S, plan_from_sidecar(sidecar(npy), str(npy)), n_iter=16, random_state=0, length=src.frames).y
    assert np.max(np.abs(samples(out_wav)[0] - np.clip(expected, -1, 1))) <= 1.01 / 2**15


def test_json_holds_the_convergence_of_every_iteration(cli, speech, tmp_path):
    npy = make(cli, "spectrogram", speech, tmp_path / "mag.npy", "--center", "--scale", "magnitude")
    code, out, err = cli("griffinlim", npy, "-o", tmp_path / "o.wav", "--iters", "24", "--json", "--subtype", "FLOAT")
    assert (code, err) == (0, "")
    report = json.loads(out)
    sc = report["spectral_convergence"]["per_iteration"]
    assert len(sc) == 25 and report["spectral_convergence"]["final"] == sc[-1]
    assert sc[-1] < 0.3 * sc[0] and sc[0] > 0.4
    assert report["iterations"] == 24 and report["momentum"] == 0.99 and report["seed"] == 0
    assert report["n_samples"] == sf.info(speech).frames and report["sr"] == 16000
    assert report["input"] == {"kind": "spectrogram", "scale": "magnitude", "clipped_cells": 0, "missing_bins": 0}
    # seeded: the same command gives the same samples, another seed others
    code, out2, _ = cli("griffinlim", npy, "-o", tmp_path / "o2.wav", "--iters", "24", "--json", "--subtype", "FLOAT")
    assert json.loads(out2)["spectral_convergence"] == report["spectral_convergence"]
    assert np.array_equal(samples(tmp_path / "o.wav"), samples(tmp_path / "o2.wav"))
    cli("griffinlim", npy, "-o", tmp_path / "o3.wav", "--iters", "2", "--seed", "1", "--subtype", "FLOAT")
    cli("griffinlim", npy, "-o", tmp_path / "o4.wav", "--iters", "2", "--seed", "2", "--subtype", "FLOAT")
    assert not np.allclose(samples(tmp_path / "o3.wav"), samples(tmp_path / "o4.wav"))


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("spectrogram", ["--scale", "power"]),
        ("spectrogram", []),  # dB, ref max, top_db 80
        ("mel", ["--scale", "power"]),
        ("mel", []),  # dB of mel power
        ("mel", ["--log", "ln"]),
    ],
)
def test_every_saved_scale_is_undone(cli, speech, tmp_path, command, args):
    npy = make(cli, command, speech, tmp_path / "s.npy", "--center", *args)
    code, out, err = cli("griffinlim", npy, "-o", tmp_path / "o.wav", "--iters", "16", "--json")
    assert code == 0, err
    sc = json.loads(out)["spectral_convergence"]["per_iteration"]
    assert sc[-1] < 0.5 * sc[0]
    assert sf.info(tmp_path / "o.wav").frames == sf.info(speech).frames


def test_power_and_magnitude_give_the_same_signal(cli, speech, tmp_path):
    outs = []
    for scale in ("power", "magnitude"):
        npy = make(cli, "spectrogram", speech, tmp_path / f"{scale}.npy", "--center", "--scale", scale)
        cli("griffinlim", npy, "-o", tmp_path / f"{scale}.wav", "--iters", "4", "--subtype", "FLOAT")
        outs.append(samples(tmp_path / f"{scale}.wav"))
    assert np.max(np.abs(outs[0] - outs[1])) < 1e-3


def test_db_clipping_is_reported(cli, speech, tmp_path):
    npy = make(cli, "spectrogram", speech, tmp_path / "db.npy", "--center", "--top-db", "40")
    code, out, err = cli("griffinlim", npy, "-o", tmp_path / "o.wav", "--iters", "2", "--json")
    assert code == 0
    clipped = json.loads(out)["input"]["clipped_cells"]
    assert clipped > 0 and f"{clipped} cells were clipped at top_db 40.0 dB" in err


def test_mel_by_pseudo_inverse_and_nnls(cli, speech, tmp_path):
    npy = make(cli, "mel", speech, tmp_path / "mel.npy", "--center", "--scale", "power")
    finals = {}
    for how in ("pinv", "nnls"):
        code, out, err = cli("griffinlim", npy, "-o", tmp_path / f"{how}.wav", "--iters", "16", "--json", "--mel-inverse", how)
        assert code == 0, err
        report = json.loads(out)
        assert report["mel_inverse"] == how and report["input"]["kind"] == "mel"
        finals[how] = report["spectral_convergence"]["final"]
    assert all(value < 0.3 for value in finals.values())


def test_band_limited_spectrogram_fills_the_other_bins_with_silence(cli, speech, tmp_path):
    npy = make(cli, "spectrogram", speech, tmp_path / "band.npy", "--center", "--scale", "magnitude", "--fmax", "4kHz")
    code, out, err = cli("griffinlim", npy, "-o", tmp_path / "o.wav", "--iters", "4", "--json")
    assert code == 0
    missing = json.loads(out)["input"]["missing_bins"]
    assert missing > 0 and f"{missing} of 201 bins were not saved" in err


def test_stereo(cli, tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(8000) / 16000
    x = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.1 * rng.standard_normal(8000)])
    wav = tmp_path / "st.wav"
    sf.write(wav, x.T, 16000, subtype="FLOAT")
    npy = make(cli, "spectrogram", wav, tmp_path / "st.npy", "--center", "--scale", "magnitude")
    code, _, err = cli("griffinlim", npy, "-o", tmp_path / "o.wav", "--iters", "4")
    assert code == 0, err
    assert samples(tmp_path / "o.wav").shape == (2, 8000)


def test_default_output_name(cli, speech, tmp_path):
    npy = make(cli, "spectrogram", speech, tmp_path / "mag.npy", "--center", "--scale", "magnitude")
    code, out, _ = cli("griffinlim", npy, "--iters", "1", "-q")
    assert (code, out) == (0, f"{tmp_path / 'mag.griffinlim.wav'}\n")


@pytest.fixture
def mag(cli, speech, tmp_path) -> Path:
    return make(cli, "spectrogram", speech, tmp_path / "mag.npy", "--center", "--scale", "magnitude")


def one_line_error(result, path, reason, code=3):
    exit_code, out, err = result
    assert (exit_code, out) == (code, "")
    assert err.startswith(f"error: {path}: ") and reason in err and err.count("\n") == 1, err


def test_complex_stft_points_to_istft(cli, speech, tmp_path):
    npy = make(cli, "spectrogram", speech, tmp_path / "c.npy", "--center", "--complex")
    one_line_error(cli("griffinlim", npy, "-o", tmp_path / "o.wav"), npy, "'audiokit istft SPEC.npy'")
    assert not (tmp_path / "o.wav").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make_args", "reason"),
    [
        (("spectrum", ["-o", "sp.png"]), "holds a spectrum array, not a spectrogram"),
        (("mel", ["--filterbank"]), "holds a mel_filterbank array, not a spectrogram"),
    ],
)
def test_other_arrays_are_not_spectrograms(cli, speech, tmp_path, make_args, reason):
    command, args = make_args
    npy = tmp_path / "x.npy"
    code, _, err = cli(command, speech, "--npy", npy, *[tmp_path / a if a.endswith(".png") else a for a in args])
    assert code == 0, err
    one_line_error(cli("griffinlim", npy, "-o", tmp_path / "o.wav"), npy, reason)


def edit(npy: Path, change) -> None:
    path = npy.with_suffix(".json")
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda npy: npy.with_suffix(".json").unlink(), "missing sidecar"),
        (lambda npy: npy.write_bytes(b""), "not a readable .npy array"),
        (lambda npy: np.save(npy, np.load(npy)[:, :-1]), "does not match its sidecar"),
        (lambda npy: np.save(npy, np.load(npy).astype(np.complex64)), "'audiokit istft'"),
        (
            lambda npy: np.save(
                npy,
                np.where(np.arange(np.load(npy).size).reshape(np.load(npy).shape) == 5, np.nan, np.load(npy)).astype(np.float32),
            ),
            "NaN or Inf",
        ),
        (lambda npy: np.save(npy, -np.load(npy)), "magnitude values must be >= 0"),
        (lambda npy: edit(npy, lambda m: {**m, "scale": "weird"}), "holds 'weird' values"),
        (lambda npy: edit(npy, lambda m: {k: v for k, v in m.items() if k != "hop_length"}), "sidecar has no 'hop_length'"),
        (lambda npy: edit(npy, lambda m: {**m, "source_frames": 99}), "its sidecar's STFT gives"),
        (lambda npy: edit(npy, lambda m: {**m, "hop_length": 10**6}), "violates NOLA"),
        (lambda npy: edit(npy, lambda m: [1, 2]), "sidecar is a JSON list"),
    ],
)
def test_bad_inputs_are_exit_3_in_one_line(cli, mag, tmp_path, damage, reason):
    damage(mag)
    one_line_error(cli("griffinlim", mag, "-o", tmp_path / "o.wav"), mag, reason)
    assert not (tmp_path / "o.wav").exists()


def test_missing_file(cli, tmp_path):
    one_line_error(cli("griffinlim", tmp_path / "nope.npy"), tmp_path / "nope.npy", "no such file")


def test_bad_mel_sidecar(cli, speech, tmp_path):
    npy = make(cli, "mel", speech, tmp_path / "mel.npy", "--center", "--scale", "power")
    edit(npy, lambda m: {**m, "mel": {**m["mel"], "n_mels": 0}})
    one_line_error(cli("griffinlim", npy, "-o", tmp_path / "o.wav"), npy, "'n_mels' is 0")


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--iters", "-1"], "--iters must be a whole number from 0 to 10000"),
        (["--momentum", "-1"], "--momentum must be a number >= 0"),
        (["--init", "zero"], "--init"),
        (["--mel-inverse", "lbfgs"], "--mel-inverse"),
        (["--subtype", "PCM_99"], "--subtype"),
        (["--json", "-o", "-"], "--json and -o - would both write to stdout"),
    ],
)
def test_bad_options_are_exit_2(cli, mag, args, reason):
    code, out, err = cli("griffinlim", mag, *args)
    assert (code, out) == (2, "") and reason in err and err.count("\n") == 1, err


def test_refuses_to_overwrite_its_input(cli, mag):
    code, out, err = cli("griffinlim", mag, "-o", mag.with_suffix(".json"))
    assert (code, out) == (4, "") and "refusing to overwrite an input" in err
    assert mag.with_suffix(".json").read_text().startswith("{")

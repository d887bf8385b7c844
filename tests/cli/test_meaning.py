"""What a user types must not silently mean something else; the same mistake gets the same exit code everywhere."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

import audiokit

SR = 16000


@pytest.fixture
def wav(tmp_path):
    path = tmp_path / "six.wav"
    audiokit.write(path, 0.1 * np.random.default_rng(1).standard_normal((6, SR)), SR, subtype="PCM_16")
    return path


@pytest.mark.parametrize(
    "command", [("info",), ("mel", "--npy", "m.npy"), ("resample", "--to", "8k"), ("quantize", "--bits", "8")]
)
@pytest.mark.parametrize("flags", [("--channels", "1"), ("--rate", "8000"), ("--rate", "8k", "--channels", "2")])
def test_raw_pcm_flags_on_a_file_with_a_header_are_refused(cli, wav, tmp_path, command, flags):
    args = [str(tmp_path / a) if a.endswith(".npy") else a for a in command[1:]]
    code, out, err = cli(command[0], wav, *args, *flags)
    assert (code, out) == (2, "")
    assert "describe raw PCM input and need --format" in err and "--channel N" in err and "--mix" in err


@pytest.mark.parametrize("command", [("info",), ("resample", "--to", "8k")])
def test_an_absurd_raw_rate_is_a_usage_error_like_to(cli, tmp_path, command):
    raw = tmp_path / "x.raw"
    raw.write_bytes(b"\0" * 100)
    code, _, err = cli(command[0], raw, *command[1:], "--format", "s16le", "--rate", "1e12")
    assert code == 2 and "--rate" in err and "outside the accepted range" in err
    code, _, err = cli("resample", raw, "--format", "s16le", "--rate", "8000", "--to", "1e12")
    assert code == 2 and "--to" in err


@pytest.mark.parametrize(
    "command", [("resample", "--to", "8k"), ("quantize", "--bits", "8"), ("dehum",), ("spectrogram",), ("spectrum",)]
)
def test_a_missing_input_in_a_missing_folder_is_the_missing_input(cli, tmp_path, command):
    missing = tmp_path / "nope" / "x.wav"
    code, out, err = cli(command[0], missing, *command[1:])
    assert (code, out) == (3, "") and err == f"error: {missing}: no such file\n"


def test_flac_output_is_flac(cli, wav, tmp_path):
    out = tmp_path / "x8k.flac"
    code, _, err = cli("resample", wav, "--to", "8k", "-o", out)
    assert code == 0, err
    info = sf.info(out)
    assert (info.format, info.subtype, info.samplerate, info.channels) == ("FLAC", "PCM_16", 8000, 6)


@pytest.mark.parametrize("name", ["x.mp3", "x.ogg", "x.raw", "x"])
def test_audio_output_with_another_extension_is_refused(cli, wav, tmp_path, name):
    code, out, err = cli("resample", wav, "--to", "8k", "-o", tmp_path / name)
    assert (code, out) == (2, "") and ".wav" in err and ".flac" in err
    assert not (tmp_path / name).exists()


def test_float_flac_is_refused(cli, wav, tmp_path):
    code, _, err = cli("resample", wav, "--to", "8k", "--subtype", "FLOAT", "-o", tmp_path / "x.flac")
    assert code == 2 and "FLAC holds PCM_16 or PCM_24, not FLOAT" in err


@pytest.mark.parametrize("command", [("spectrogram",), ("mel",), ("spectrum",)])
def test_figures_with_another_extension_are_refused(cli, wav, tmp_path, command):
    code, out, err = cli(*command, wav, "-o", tmp_path / "x.jpg")
    assert (code, out) == (2, "") and "figures are written as PNG" in err
    assert not (tmp_path / "x.jpg").exists()


def test_a_bare_number_window_that_is_implausibly_short_warns(cli, wav, tmp_path):
    code, _, err = cli("spectrogram", wav, "--win", "25", "--hop", "10", "--npy", tmp_path / "s.npy")
    assert code == 0 and "--win 25 means 25 samples (1.56 ms at 16000 Hz); did you mean 25ms?" in err
    code, _, err = cli("spectrogram", wav, "--win", "400", "--hop", "160", "--npy", tmp_path / "s.npy")
    assert code == 0 and "did you mean" not in err


def test_generating_a_few_samples_warns(cli, tmp_path):
    code, _, err = cli("generate", "sine:440", "--dur", "2", "-o", tmp_path / "g.wav")
    assert code == 0 and "--dur 2 means 2 samples" in err and "did you mean 2s?" in err  # SoX's synth 2, ffmpeg's -t 2


def test_hop_longer_than_the_window_warns(cli, wav, tmp_path):
    code, _, err = cli("spectrogram", wav, "--win", "10ms", "--hop", "25ms", "--npy", tmp_path / "s.npy")
    assert code == 0 and "--hop 400 samples is longer than the window (160 samples): 240 samples" in err


def test_spectrogram_fmax_above_nyquist_is_refused_like_mel(cli, wav, tmp_path):
    for command in ("spectrogram", "mel"):
        code, _, err = cli(command, wav, "--fmax", "30k", "--npy", tmp_path / "x.npy")
        assert code == 2 and "8000" in err, (command, err)


def test_unknown_command_points_to_the_command_list(cli):
    code, _, err = cli("spec")
    assert code == 2 and "Did you mean" in err and err.endswith("(see 'audiokit --help')\n")


def test_debug_does_not_ask_to_rerun_with_debug(cli, wav, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("something unexpected")

    monkeypatch.setattr("audiokit.cli.info.info", broken)
    code, _, err = cli("info", wav, "--debug")
    assert code == 1 and "Traceback" in err and "rerun with --debug" not in err and "please report it" in err


@pytest.mark.slow
def test_many_channels_draw_a_readable_png_quickly(cli, tmp_path):
    many = tmp_path / "many.wav"
    audiokit.write(many, 0.1 * np.random.default_rng(9).standard_normal((128, 500)), SR, subtype="PCM_16")
    code, _, err = cli("spectrogram", many, "-o", tmp_path / "s.png")
    assert code == 0 and "drawing channels 0-7 of 128" in err and "collapsed" not in err
    from PIL import Image

    with Image.open(tmp_path / "s.png") as image:
        assert image.size == (1200, 600)  # exactly --size: the 8 panels share the height
    code, _, err = cli("spectrum", many, "-o", tmp_path / "p.png", "--peaks", "1", "--json")
    assert code == 0 and "drawing channels 0-7 of 128" in err


def test_titles_escape_characters_the_font_lacks():
    from audiokit.plot import title_name

    assert title_name("/data/语音.wav") == "\\u8bed\\u97f3.wav"
    assert title_name("/data/café ñ.wav") == "café ñ.wav"
    assert title_name("-") == "stdin"

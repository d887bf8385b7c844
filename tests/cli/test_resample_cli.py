"""``audiokit resample``: frequency, level and time alignment kept, length rule, aliasing with
--no-filter, streaming equals one-shot, stdin/stdout, overshoot and --normalize, errors."""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pytest
import soundfile as sf

import audiokit
from audiokit.dsp.dft import spectrum
from audiokit.dsp.peaks import find_peaks
from audiokit.dsp.resample import QUALITIES, output_length, resample


def tone(freq, sr, n, amp=0.5, channels=1):
    """``amp·sin(2π·freq·t)`` sampled at ``t = k / sr``, shaped (channels, n)."""
    t = np.arange(n) / sr
    return np.tile(amp * np.sin(2 * np.pi * freq * t), (channels, 1))


def write(path, x, sr, subtype="FLOAT"):
    audiokit.write(path, x, sr, subtype=subtype)
    return path


def sine_fit(y, freq, sr, skip=200):
    """Least-squares amplitude and sine phase of ``freq`` in ``y[skip:-skip]`` (time origin at sample 0)."""
    t = np.arange(len(y))[skip:-skip] / sr
    basis = np.column_stack([np.sin(2 * np.pi * freq * t), np.cos(2 * np.pi * freq * t)])
    (s, c), *_ = np.linalg.lstsq(basis, y[skip:-skip], rcond=None)
    return math.hypot(s, c), math.atan2(c, s)


def strongest_hz(y, sr):
    return find_peaks(spectrum(y, sr=sr), k=1)[0]


@pytest.fixture
def tone_44k(tmp_path):
    return write(tmp_path / "tone.wav", tone(1000, 44100, 44100), 44100)


# --------------------------------------------------------------------------- the signal is kept


def test_44k1_to_16k_keeps_frequency_level_and_time_alignment(cli, tone_44k, tmp_path):
    out = tmp_path / "out.wav"
    code, stdout, err = cli("resample", tone_44k, "--to", "16k", "-o", out)
    assert (code, stdout, err) == (0, f"{out}\n", "")
    y, sr = sf.read(out, dtype="float64")
    assert sr == 16000 and len(y) == 16000 and sf.info(out).subtype == "FLOAT"
    amplitude, phase = sine_fit(y, 1000, 16000)
    assert 20 * math.log10(amplitude / 0.5) == pytest.approx(0, abs=0.01)
    assert abs(phase) < 1e-3  # sample m is the instant m / 16000: no filter delay
    peak = strongest_hz(y, 16000)
    assert peak.freq_hz == pytest.approx(1000, abs=0.01)


@pytest.mark.parametrize("quality", QUALITIES)
def test_every_quality_keeps_a_low_tone(cli, tone_44k, tmp_path, quality):
    out = tmp_path / "out.wav"
    code, _, err = cli("resample", tone_44k, "--to", "22050", "--quality", quality, "-o", out)
    assert (code, err) == (0, "")
    y, sr = sf.read(out, dtype="float64")
    amplitude, _ = sine_fit(y, 1000, sr)
    assert (sr, len(y)) == (22050, 22050)
    assert abs(20 * math.log10(amplitude / 0.5)) < (6 if quality == "quick" else 0.3)


def test_very_high_and_high_differ_and_both_match_the_core(cli, tmp_path, rng):
    x = rng.uniform(-0.5, 0.5, (1, 5000))
    src = write(tmp_path / "noise.wav", x, 48000, subtype="DOUBLE")
    for quality in ("high", "very-high"):
        out = tmp_path / f"{quality}.wav"
        assert cli("resample", src, "--to", "44.1k", "--quality", quality, "-o", out)[0] == 0
        dtype = np.float64 if quality == "very-high" else np.float32
        expected = resample(x.astype(dtype), sr_in=48000, sr_out=44100, quality=quality)
        got, _ = sf.read(out, dtype="float64", always_2d=True)
        np.testing.assert_array_equal(got.T, expected)
    assert not np.array_equal(sf.read(tmp_path / "high.wav")[0], sf.read(tmp_path / "very-high.wav")[0])


@pytest.mark.parametrize(
    ("sr_in", "to", "sr_out"),
    [(44100, "16k", 16000), (48000, "44.1kHz", 44100), (44100, "37993", 37993), (8000, "22.05k", 22050)],
)
@pytest.mark.parametrize("n", [1001, 4410])
def test_length_rule_and_subtype_as_input(cli, tmp_path, rng, sr_in, to, sr_out, n):
    src = write(tmp_path / "in.wav", rng.uniform(-0.5, 0.5, (2, n)), sr_in, subtype="PCM_24")
    for flag in ([], ["--no-filter"]):
        out = tmp_path / "out.wav"
        assert cli("resample", src, "--to", to, "-o", out, *flag)[0] == 0
        info = sf.info(out)
        assert (info.samplerate, info.channels, info.subtype) == (sr_out, 2, "PCM_24")
        assert info.frames == output_length(n, sr_in=sr_in, sr_out=sr_out) == (2 * n * sr_out + sr_in) // (2 * sr_in)


def test_subtype_option_overrides_the_input(cli, tone_44k, tmp_path):
    out = tmp_path / "out.wav"
    assert cli("resample", tone_44k, "--to", "16k", "--subtype", "pcm_16", "-o", out)[0] == 0
    assert sf.info(out).subtype == "PCM_16"


def test_channels_are_resampled_independently(cli, tmp_path):
    x = np.vstack([tone(1000, 48000, 4800)[0], tone(3000, 48000, 4800, amp=0.25)[0]])
    src = write(tmp_path / "st.wav", x, 48000)
    out = tmp_path / "out.wav"
    assert cli("resample", src, "--to", "16k", "-o", out)[0] == 0
    y, _ = sf.read(out, always_2d=True)
    assert sine_fit(y[:, 0], 1000, 16000)[0] == pytest.approx(0.5, rel=1e-3)
    assert sine_fit(y[:, 1], 3000, 16000)[0] == pytest.approx(0.25, rel=1e-3)


def test_equal_rates_copy_the_samples(cli, tmp_path, rng):
    x = rng.uniform(-0.9, 0.9, (1, 1000))
    src = write(tmp_path / "in.wav", x, 16000, subtype="PCM_16")
    out = tmp_path / "out.wav"
    assert cli("resample", src, "--to", "16000", "-o", out)[0] == 0
    assert sf.read(out, dtype="int16")[0].tolist() == sf.read(src, dtype="int16")[0].tolist()


# --------------------------------------------------------------------------- --no-filter: aliasing


def test_no_filter_takes_9khz_at_48k_to_7khz_at_16k(cli, tmp_path):
    src = write(tmp_path / "nine.wav", tone(9000, 48000, 48000), 48000)
    naive, filtered = tmp_path / "naive.wav", tmp_path / "filtered.wav"
    assert cli("resample", src, "--to", "16k", "--no-filter", "-o", naive)[0] == 0
    assert cli("resample", src, "--to", "16k", "-o", filtered)[0] == 0
    y, _ = sf.read(naive, dtype="float64")
    peak = strongest_hz(y, 16000)
    assert peak.freq_hz == pytest.approx(7000, abs=0.01)
    assert peak.amplitude == pytest.approx(0.5, rel=1e-4)  # folded back at full amplitude
    z, _ = sf.read(filtered, dtype="float64")
    assert np.max(np.abs(z[200:-200])) < 1e-5  # the band-limited path removes it (edges: transient)


@pytest.mark.parametrize(
    ("sr_in", "sr_out", "n"),
    [(48000, 16000, 1000), (16000, 44100, 1601), (44100, 37993, 2 * 44100 + 7), (44100, 16000, 44101), (48000, 16000, 301)],
)
def test_no_filter_streamed_in_chunks_equals_one_shot(cli, tmp_path, rng, monkeypatch, sr_in, sr_out, n):
    monkeypatch.setattr("audiokit.pipelines.resample.BLOCK_SAMPLES", 100)
    x = rng.uniform(-1, 1, (2, n))
    src = write(tmp_path / "in.wav", x, sr_in, subtype="DOUBLE")
    out = tmp_path / "out.wav"
    assert cli("resample", src, "--to", sr_out, "--no-filter", "-o", out)[0] == 0
    got, _ = sf.read(out, dtype="float64", always_2d=True)
    np.testing.assert_array_equal(got.T, resample(x, sr_in=sr_in, sr_out=sr_out, method="nearest"))


def test_filtered_stream_in_small_blocks_equals_one_shot(cli, tmp_path, rng, monkeypatch):
    monkeypatch.setattr("audiokit.pipelines.resample.BLOCK_SAMPLES", 257)
    x = rng.uniform(-0.5, 0.5, (1, 5000)).astype(np.float32)
    src = write(tmp_path / "in.wav", x, 44100)
    out = tmp_path / "out.wav"
    assert cli("resample", src, "--to", "16k", "-o", out)[0] == 0
    got, _ = sf.read(out, dtype="float32", always_2d=True)
    np.testing.assert_array_equal(got.T, resample(x, sr_in=44100, sr_out=16000))


# --------------------------------------------------------------------------- paths, stdin, stdout


@pytest.mark.parametrize(
    ("to", "name"),
    [
        ("16k", "tone.16k.wav"),
        ("22050", "tone.22.05k.wav"),
        ("44.1kHz", "tone.44.1k.wav"),
        ("37993", "tone.37.993k.wav"),
        ("800", "tone.800Hz.wav"),
    ],
)
def test_default_output_is_beside_the_input_and_printed(cli, tone_44k, to, name):
    code, stdout, err = cli("resample", tone_44k, "--to", to)
    assert (code, err) == (0, "")
    assert stdout == f"{tone_44k.parent / name}\n"
    assert (tone_44k.parent / name).is_file()


def test_raw_pcm_on_stdin(run, tmp_path):
    x = tone(1000, 48000, 4800)[0]
    raw = np.round(x * 32768).astype("<i2").tobytes()
    code, stdout, err = run("resample", "-", "--format", "s16le", "--rate", "48k", "--to", "16k", "-o", "out.wav", stdin=raw)
    assert (code, stdout, err) == (0, b"out.wav\n", "")
    y, sr = sf.read(tmp_path / "out.wav", dtype="float64")
    assert sf.info(tmp_path / "out.wav").subtype == "PCM_16" and (sr, len(y)) == (16000, 1600)
    assert sine_fit(y, 1000, 16000)[0] == pytest.approx(0.5, rel=1e-3)


def test_dash_o_writes_wav_bytes_only(run, tmp_path):
    src = write(tmp_path / "in.wav", tone(1000, 44100, 4410), 44100)
    code, stdout, err = run("resample", src, "--to", "8k", "-o", "-")
    assert (code, err) == (0, "")
    assert stdout[:4] == b"RIFF"
    y, sr = sf.read(io.BytesIO(stdout))
    assert (sr, len(y)) == (8000, 800)


def test_stdin_without_output_asks_for_o(cli):
    code, stdout, err = cli("resample", "-", "--to", "16k")  # refused before stdin is read
    assert (code, stdout) == (2, "")
    assert err == "error: reading standard input: give an output path with -o (or -o - for stdout)\n"


def test_normalize_reads_stdin_twice(run, tmp_path):
    x = np.where(np.arange(4800) % 48 < 24, 1.0, -1.0)[None]  # full-scale square: Gibbs overshoot
    buf = io.BytesIO()
    sf.write(buf, x.T, 48000, format="WAV", subtype="FLOAT")
    code, stdout, err = run("resample", "-", "--to", "16k", "--normalize", "-o", "-", stdin=buf.getvalue())
    assert code == 0 and "no gain" not in err and "gain of -" in err
    y, _ = sf.read(io.BytesIO(stdout))
    assert np.max(np.abs(y)) == pytest.approx(1.0, abs=1e-6) and np.max(np.abs(y)) <= 1.0


# --------------------------------------------------------------------------- overshoot


@pytest.fixture
def square(tmp_path):
    """A full-scale 1 kHz square at 48 kHz: band-limiting it overshoots (Gibbs) by about 1.4 dB."""
    x = np.where(np.arange(4800) % 48 < 24, 1.0, -1.0)[None]
    return write(tmp_path / "square.wav", x, 48000, subtype="PCM_16")


def _expected(square):
    x, _ = sf.read(square, dtype="float32", always_2d=True)
    return resample(np.ascontiguousarray(x.T), sr_in=48000, sr_out=16000)


def test_overshoot_in_float_output_is_kept_and_reported(cli, square, tmp_path):
    out = tmp_path / "out.wav"
    code, stdout, err = cli("resample", square, "--to", "16k", "--subtype", "FLOAT", "-o", out)
    y = _expected(square)
    peak_db, n_over = 20 * math.log10(np.abs(y).max()), int(np.count_nonzero(np.abs(y) > 1))
    assert code == 0 and stdout == f"{out}\n" and n_over > 0
    assert err == (
        f"warning: {out}: the resampled signal exceeds full scale (peak {peak_db:+.2f} dBFS): {n_over} samples "
        "beyond ±1.0 kept as they are in FLOAT; use --normalize to scale it down\n"
    )
    np.testing.assert_array_equal(sf.read(out, dtype="float32", always_2d=True)[0].T, y)


def test_overshoot_in_pcm_output_is_clipped_with_one_warning_giving_the_count(cli, square, tmp_path):
    out = tmp_path / "out.wav"
    code, _, err = cli("resample", square, "--to", "16k", "-o", out)
    y = _expected(square)
    n_over = int(np.count_nonzero(np.abs(y) > 1))
    assert code == 0 and err.count("warning:") == 1
    assert re.search(rf"peak \+1\.\d\d dBFS\): {n_over} samples beyond ±1.0 clipped to fit PCM_16", err)
    codes, _ = sf.read(out, dtype="int16")
    assert codes.max() == 32767 and codes.min() == -32768


@pytest.mark.parametrize(("subtype", "top"), [("FLOAT", 1.0), ("PCM_16", 1 - 2**-15), ("PCM_U8", 1 - 2**-7)])
def test_normalize_scales_the_overshoot_down_to_full_scale(cli, square, tmp_path, subtype, top):
    out = tmp_path / "out.wav"
    code, _, err = cli("resample", square, "--to", "16k", "--subtype", subtype, "--normalize", "-o", out)
    y = _expected(square).astype(np.float64)
    peak = np.abs(y).max()
    assert code == 0 and "warning" not in err
    assert (
        err
        == f"{out}: resampled peak {20 * math.log10(peak):+.2f} dBFS; --normalize applies a gain of {20 * math.log10(top / peak):.2f} dB\n"
    )
    got, _ = sf.read(out, dtype="float64", always_2d=True)
    assert np.abs(got).max() == pytest.approx(top, abs=2**-23)
    assert np.abs(got).max() <= top
    step = 2.0**-23 if subtype == "FLOAT" else 2 * (1 - top)
    np.testing.assert_allclose(got.T, y * top / peak, atol=step)


def test_normalize_with_no_filter_scales_a_hot_float_input(cli, tmp_path):
    src = write(tmp_path / "hot.wav", np.array([[0.5, 2.0, -1.0, 0.25] * 30]), 48000)
    out = tmp_path / "out.wav"
    code, _, err = cli("resample", src, "--to", "16k", "--no-filter", "--normalize", "-o", out)
    assert code == 0 and "resampled peak +6.02 dBFS; --normalize applies a gain of -6.02 dB" in err
    assert sf.read(out)[0].tolist() == [0.25, 0.125, -0.5, 1.0] * 10  # every 3rd sample, halved


def test_normalize_without_overshoot_changes_nothing(cli, tone_44k, tmp_path):
    plain, normalized = tmp_path / "a.wav", tmp_path / "b.wav"
    assert cli("resample", tone_44k, "--to", "16k", "-o", plain)[0] == 0
    code, _, err = cli("resample", tone_44k, "--to", "16k", "--normalize", "-o", normalized)
    assert code == 0 and "-6.0" in err and "no gain applied" in err
    assert plain.read_bytes() == normalized.read_bytes()


def test_quiet_silences_warnings_and_notes(cli, square, tmp_path):
    for extra in ([], ["--normalize"]):
        code, stdout, err = cli("resample", square, "--to", "16k", "-o", tmp_path / "o.wav", "-q", *extra)
        assert (code, stdout, err) == (0, f"{tmp_path / 'o.wav'}\n", "")


def test_too_short_input_gives_an_empty_file_with_a_warning(cli, tmp_path):
    src = write(tmp_path / "one.wav", np.array([[0.5]]), 44100)
    out = tmp_path / "out.wav"
    code, _, err = cli("resample", src, "--to", "16k", "-o", out)
    assert code == 0 and "the output has 0 samples" in err
    assert sf.info(out).frames == 0


def test_fix_nonfinite(cli, tmp_path):
    src = tmp_path / "nan.wav"
    sf.write(src, np.array([0.0, np.nan, 0.5, 0.25] * 100), 16000, subtype="FLOAT")
    out = tmp_path / "out.wav"
    code, _, err = cli("resample", src, "--to", "8k", "-o", out)
    assert code == 3 and "--fix-nonfinite" in err and not out.exists()
    assert cli("resample", src, "--to", "8k", "-o", out, "--fix-nonfinite")[0] == 0
    assert sf.info(out).frames == 200


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "abc"], "error: --to: invalid frequency 'abc'"),
        (["--to", "44.1"], "error: --to: invalid sample rate '44.1': must be a whole number of Hz"),
        (["--to", "0"], "error: --to: invalid frequency '0': must be > 0"),
        (["--to", "50"], "error: --to: 50 Hz is outside the accepted range 100..3072000 Hz"),
        (
            ["--to", "16k", "--quality", "best"],
            "error: --quality: unknown quality 'best' (allowed: very-high, high, medium, low, quick)",
        ),
        (["--to", "16k", "--quality", "high", "--no-filter"], "error: --quality has no effect with --no-filter"),
        (["--to", "16k", "--subtype", "PCM_12"], "error: --subtype: unknown subtype 'PCM_12'"),
        ([], "Missing option '--to'"),
    ],
)
def test_bad_options_exit_2(cli, tone_44k, args, message):
    code, stdout, err = cli("resample", tone_44k, *args)
    assert (code, stdout) == (2, "")
    assert err.startswith(message) or message in err
    assert sorted(p.name for p in tone_44k.parent.iterdir()) == ["tone.wav"]


def test_output_equal_to_input_is_refused_exit_4(cli, tone_44k):
    before = tone_44k.read_bytes()
    code, _, err = cli("resample", tone_44k, "--to", "16k", "-o", tone_44k)
    assert code == 4 and err == f"error: {tone_44k}: output is the input file; refusing to overwrite an input\n"
    assert tone_44k.read_bytes() == before


def test_missing_output_folder_exit_4(cli, tone_44k, tmp_path):
    code, _, err = cli("resample", tone_44k, "--to", "16k", "-o", tmp_path / "nope" / "x.wav")
    assert code == 4 and "does not exist" in err


def test_missing_input_exit_3(cli, tmp_path):
    code, stdout, err = cli("resample", tmp_path / "absent.wav", "--to", "16k")
    assert (code, stdout) == (3, "")
    assert err == f"error: {tmp_path / 'absent.wav'}: no such file\n"
    assert list(tmp_path.iterdir()) == []


def test_help_lists_every_option(cli):
    code, stdout, _ = cli("resample", "--help")
    assert code == 0
    for option in (
        "--to",
        "--output",
        "--quality",
        "--no-filter",
        "--normalize",
        "--subtype",
        "--rate",
        "--format",
        "--channels",
        "--fix-nonfinite",
        "--quiet",
        "--debug",
    ):
        assert option in stdout


def test_wav_bytes_to_a_terminal_are_refused(cli, tone_44k, monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    code, stdout, err = cli("resample", tone_44k, "--to", "16k", "-o", "-")
    assert (code, stdout) == (2, "")
    assert err == "error: refusing to write WAV bytes to a terminal: give -o PATH or pipe the output\n"

"""audiokit.pipelines.loudness: the report (values, undefined ones with reasons, layouts), --series files, the PNG."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.loudness import LoudnessMeter, channel_weights
from audiokit.errors import ParameterError
from audiokit.io.wavheader import wave_channel_mask
from audiokit.pipelines.loudness import FILL_LUFS, LoudnessOptions, check_options, loudness_file
from tests.helpers.cli import png_size


def tone(sr: int, seconds: float, level_db: float, channels: int = 2) -> np.ndarray:
    t = np.arange(round(seconds * sr)) / sr
    return np.tile(10 ** (level_db / 20) * np.sin(2 * np.pi * 997 * t), (channels, 1))


def write(path, x: np.ndarray, sr: int, subtype: str = "FLOAT") -> str:
    sf.write(path, x.T, sr, subtype=subtype)
    return str(path)


def extensible_wav(path, x: np.ndarray, sr: int, mask: int) -> str:
    """A 16-bit WAVE_FORMAT_EXTENSIBLE file with ``dwChannelMask = mask``."""
    channels = x.shape[0]
    pcm = np.round(np.clip(x.T, -1, 32767 / 32768) * 32768).astype("<i2").tobytes()
    guid = struct.pack("<IHH8s", 1, 0, 0x10, bytes.fromhex("800000AA00389B71"))  # KSDATAFORMAT_SUBTYPE_PCM
    fmt = struct.pack("<HHIIHHHHI", 0xFFFE, channels, sr, sr * 2 * channels, 2 * channels, 16, 22, 16, mask) + guid
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm
    with open(path, "wb") as fh:
        fh.write(b"RIFF" + struct.pack("<I", len(body)) + body)
    return str(path)


def test_report_equals_the_meter_on_the_same_samples(tmp_path):
    x = tone(48000, 5.0, -20.0) * np.linspace(0.2, 1, 5 * 48000)
    path = write(tmp_path / "a.wav", x, 48000)
    report = loudness_file(path).report
    meter = LoudnessMeter(48000, 2)
    meter.push(x.astype(np.float32))
    r = meter.result()
    assert report["integrated_lufs"] == round(r.integrated, 4)
    assert report["loudness_range_lu"] == round(r.lra, 4)
    assert report["true_peak_dbtp"] == round(20 * math.log10(r.true_peak.max()), 4)
    assert report["frames"] == 5 * 48000 and report["layout"] == ["FL", "FR"] and report["undefined"] == {}
    assert report["true_peak_oversampling"] == 4 and len(report["levels"]) == 2
    json.dumps(report, allow_nan=False)


def test_tone_reads_its_level_and_the_gain_to_a_target(tmp_path):
    path = write(tmp_path / "t.wav", tone(44100, 4.0, -23.0), 44100)  # stereo 1 kHz at -23 dBFS: -23 LUFS
    report = loudness_file(path, LoudnessOptions(target="-16")).report
    assert report["integrated_lufs"] == pytest.approx(-23.0, abs=0.01)
    assert report["gain_db"] == pytest.approx(7.0, abs=0.01)
    assert report["peak_after_gain_db"] == pytest.approx(report["true_peak_dbtp"] + report["gain_db"], abs=1e-3)
    assert report["target_lufs"] == -16.0


#: The fields without a value when there is no 3 s window, and when there is no 400 ms block above the gate.
NO_SHORT_TERM = {"short_term_max_lufs", "loudness_range_lu", "lra_low_lufs", "lra_high_lufs"}
NO_BLOCK = {"integrated_lufs", "relative_gate_lufs", "momentary_max_lufs", "gain_db", "peak_after_gain_db"}


@pytest.mark.parametrize(
    ("seconds", "level", "undefined"),
    [
        (0.3, -20.0, NO_SHORT_TERM | NO_BLOCK),
        (2.0, -20.0, NO_SHORT_TERM),
        (4.0, None, NO_SHORT_TERM | NO_BLOCK | {"sample_peak_dbfs", "true_peak_dbtp"}),
    ],
)
def test_short_and_silent_inputs_are_null_with_a_reason(tmp_path, seconds, level, undefined):
    x = np.zeros((2, round(seconds * 48000))) if level is None else tone(48000, seconds, level)
    report = loudness_file(write(tmp_path / "s.wav", x, 48000, "PCM_16"), LoudnessOptions(target="-23")).report
    assert set(report["undefined"]) == undefined
    for key in undefined:
        assert report[key] is None
    text = json.dumps(report, allow_nan=False)  # no NaN or Infinity anywhere
    assert "NaN" not in text and "Infinity" not in text
    if seconds < 0.4:
        assert report["undefined"]["integrated_lufs"] == "shorter than one 400 ms block"
    elif level is None:
        assert report["undefined"]["integrated_lufs"] == "every block at or below the -70 LUFS absolute gate"
    else:
        assert report["undefined"]["loudness_range_lu"] == "shorter than 3 s"


def test_channel_mask_of_an_extensible_file_sets_the_weights(tmp_path):
    sr = 48000
    x = tone(sr, 2.0, -30.0, channels=6)
    x[3] *= 30  # the LFE channel is loud but weighs 0
    five_one = extensible_wav(tmp_path / "51.wav", x, sr, 0x60F)  # FL FR FC LFE SL SR
    quad = extensible_wav(tmp_path / "q.wav", x[:4], sr, 0x33)  # FL FR BL BR
    assert wave_channel_mask(five_one) == 0x60F and wave_channel_mask(quad) == 0x33
    assert wave_channel_mask(write(tmp_path / "plain.wav", x[:2], sr, "PCM_16")) is None
    report = loudness_file(five_one).report
    assert report["layout"] == ["FL", "FR", "FC", "LFE", "SL", "SR"]
    assert report["weights"] == [1.0, 1.0, 1.0, 0.0, 1.41, 1.41]
    meter = LoudnessMeter(sr, 6, weights=channel_weights(6, 0x60F))
    meter.push(sf.read(five_one, always_2d=True)[0].T)
    assert report["integrated_lufs"] == pytest.approx(meter.result().integrated, abs=1e-4)
    assert loudness_file(quad).report["layout"] == ["FL", "FR", "BL", "BR"]


def test_series_files(tmp_path):
    sr = 16000
    x = np.concatenate([tone(sr, 4.0, -20.0, 1), np.zeros((1, sr))], axis=1)
    path = write(tmp_path / "in.wav", x, sr)
    npy, csv = tmp_path / "s.npy", tmp_path / "s.csv"
    loudness_file(path, series=str(npy))
    rows = np.load(npy)
    meta = json.loads((tmp_path / "s.json").read_text())
    assert rows.shape == (2, 47) and meta["rows"] == ["momentary_lufs", "short_term_lufs"] and meta["fill_lufs"] == FILL_LUFS
    assert (rows[1, :26] == FILL_LUFS).all() and rows[1, 26] == pytest.approx(-23.01, abs=0.05)  # mono -3 dB (+0.04 at 16 kHz)
    assert (rows[0, -1] == FILL_LUFS) and np.isfinite(rows).all()  # the last 400 ms are silence
    loudness_file(path, series=str(csv))
    lines = csv.read_text().splitlines()
    assert lines[0] == "time_s,momentary_lufs,short_term_lufs" and len(lines) == 48
    assert lines[1].startswith("0.4,") and lines[1].endswith(",")  # short-term: no value before 3 s
    assert lines[-1].startswith("5.0,,")  # momentary of the last 400 ms of silence: no value
    with pytest.raises(ParameterError, match="--series"):
        loudness_file(path, series=str(tmp_path / "s.txt"))


def test_png_has_the_size_asked(tmp_path):
    path = write(tmp_path / "in.wav", tone(48000, 5.0, -18.0), 48000)
    png = tmp_path / "l.png"
    loudness_file(path, LoudnessOptions(target="-14", size="800x400"), png=str(png))
    assert png_size(png.read_bytes()) == (800, 400)


@pytest.mark.parametrize(("target", "message"), [("loud", "not a loudness"), ("-80", "outside"), ("5", "outside")])
def test_bad_target(target, message):
    with pytest.raises(ParameterError, match=message):
        check_options(LoudnessOptions(target=target))


def test_true_peak_off_reports_the_sample_peak(tmp_path):
    path = write(tmp_path / "in.wav", tone(48000, 1.0, -6.0), 48000)
    report = loudness_file(path, LoudnessOptions(true_peak=False)).report
    assert report["true_peak_dbtp"] is None and report["true_peak_oversampling"] is None
    assert report["sample_peak_dbfs"] == pytest.approx(-6.0, abs=0.01)

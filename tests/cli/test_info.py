"""``audiokit info``: JSON shape, levels, odd but valid inputs, stdin, stdout cleanliness."""

from __future__ import annotations

import io
import json
import math
import pathlib
import struct
import sys

import numpy as np
import pytest
import soundfile as sf

import audiokit

LEVEL_KEYS = {"channel", "peak_dbfs", "rms_dbfs", "dc_offset", "clipped"}
REPORT_KEYS = {"path", "container", "subtype", "bits", "sr", "channels", "frames", "duration_s", "levels"}


def info_json(cli, *args):
    """``info --json`` of one file: (exit code, the report object, stderr)."""
    code, out, err = cli("info", "--json", *args)
    return code, (json.loads(out) if out else None), err


def json_stream(text: str) -> list:
    """The JSON values of ``text``, one after another (what ``jq`` reads): whitespace between them only."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while (at := at + len(text[at:]) - len(text[at:].lstrip())) < len(text):  # skip the whitespace, stop at the end
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def info_reports(cli, *args, flag="--json"):
    """``info --json`` (or ``--jsonl``) of several files: (exit code, the report objects in order, stderr)."""
    code, out, err = cli("info", flag, *args)
    return code, json_stream(out), err


@pytest.fixture
def pcm_file(tmp_path):
    """Two channels, 1000 frames of PCM_16: constant 0.25 and a ±0.5 square."""
    x = np.vstack([np.full(1000, 0.25), np.where(np.arange(1000) % 2, 0.5, -0.5)])
    path = tmp_path / "two.wav"
    audiokit.write(path, x, 16000, subtype="PCM_16")
    return path


def test_json_for_one_file_is_an_object(cli, pcm_file):
    code, report, err = info_json(cli, pcm_file)
    assert (code, err) == (0, "")
    assert set(report) == REPORT_KEYS
    assert report["path"] == str(pcm_file)
    assert (report["container"], report["subtype"], report["bits"]) == ("WAV", "PCM_16", 16)
    assert (report["sr"], report["channels"], report["frames"], report["duration_s"]) == (16000, 2, 1000, 0.0625)
    assert [set(level) for level in report["levels"]] == [LEVEL_KEYS, LEVEL_KEYS]
    first, second = report["levels"]
    assert first == {
        "channel": 0,
        "peak_dbfs": round(20 * math.log10(0.25), 4),
        "rms_dbfs": round(20 * math.log10(0.25), 4),
        "dc_offset": 0.25,
        "clipped": 0,
    }
    assert second == {
        "channel": 1,
        "peak_dbfs": round(20 * math.log10(0.5), 4),
        "rms_dbfs": round(20 * math.log10(0.5), 4),
        "dc_offset": 0.0,
        "clipped": 0,
    }


def test_json_for_several_files_is_one_object_per_file(cli, pcm_file, tmp_path):
    """One shape whatever the number of files: ``jq .levels`` works on one file and on a glob alike."""
    other = tmp_path / "mono.wav"
    audiokit.write(other, np.zeros((1, 10)), 8000, subtype="PCM_24")
    code, reports, err = info_reports(cli, pcm_file, other, pcm_file)
    assert (code, err) == (0, "")
    assert [r["path"] for r in reports] == [str(pcm_file), str(other), str(pcm_file)]
    assert reports[1]["bits"] == 24 and reports[1]["sr"] == 8000
    assert reports[0] == info_json(cli, pcm_file)[1]  # each object is exactly the one-file report


def test_jsonl_is_one_compact_object_per_line(cli, pcm_file, tmp_path):
    other = tmp_path / "mono.wav"
    audiokit.write(other, np.zeros((1, 10)), 8000, subtype="PCM_24")
    code, out, err = cli("info", "--jsonl", pcm_file, other)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert [json.loads(line) for line in lines] == info_reports(cli, pcm_file, other)[1]
    assert len(lines) == 2 and out.endswith("\n")
    code, out, _ = cli("info", "--jsonl", pcm_file)
    assert code == 0 and json.loads(out) == info_json(cli, pcm_file)[1] and out.count("\n") == 1


def test_json_and_jsonl_exclude_each_other(cli, pcm_file):
    code, out, err = cli("info", "--json", "--jsonl", pcm_file)
    assert (code, out) == (2, "") and err.startswith("error: --json and --jsonl exclude each other") and err.count("\n") == 1


def test_table_goes_to_stdout_and_nothing_to_stderr(cli, pcm_file):
    code, out, err = cli("info", pcm_file)
    assert (code, err) == (0, "")
    assert f"{pcm_file}: WAV PCM_16, 16000 Hz, 2 ch, 1000 frames, 0.0625 s" in out
    assert "peak dBFS" in out and "-12.04" in out and "-6.02" in out


def test_json_stdout_is_data_only_and_warnings_go_to_stderr(cli, tmp_path):
    path = tmp_path / "loud.wav"
    sf.write(path, np.array([0.0, 2.0, -0.5, 0.0]), 8000, subtype="FLOAT")
    code, report, err = info_json(cli, path)
    assert code == 0
    assert report["levels"][0]["peak_dbfs"] == round(20 * math.log10(2.0), 4)
    assert err == f"warning: {path}: samples beyond full scale (|x| > 1, first at 0.000125 s); they are kept, not clipped\n"


def test_quiet_silences_warnings(cli, tmp_path):
    path = tmp_path / "loud.wav"
    sf.write(path, np.array([0.0, 2.0, -0.5, 0.0]), 8000, subtype="FLOAT")
    code, report, err = info_json(cli, path, "--quiet")
    assert (code, err) == (0, "")
    assert report["frames"] == 4


def test_truncated_header_warns_and_reports_actual_frames(cli, craft_wav, pcm16):
    path = craft_wav("short.wav", pcm16(np.arange(100)), claimed_bytes=2000)
    code, report, err = info_json(cli, path)
    assert code == 0
    assert err == f"warning: {path}: header claims 1000 frames but the file holds 100; reading the 100 present\n"
    assert report["frames"] == 100


def test_nonfinite_fixed_on_request(cli, tmp_path):
    path = tmp_path / "nan.wav"
    sf.write(path, np.array([0.5, np.nan, -0.25, np.inf]), 8000, subtype="FLOAT")
    code, report, err = info_json(cli, path, "--fix-nonfinite")
    assert (code, err) == (0, "")
    level = report["levels"][0]
    assert level["peak_dbfs"] == round(20 * math.log10(0.5), 4)  # the NaN/Inf became 0
    assert level["dc_offset"] == 0.0625  # (0.5 - 0.25) / 4
    assert level["rms_dbfs"] == round(20 * math.log10(math.sqrt((0.25 + 0.0625) / 4)), 4)


# --- valid but unusual files -----------------------------------------------------------------


def test_eight_bit_unsigned(cli, craft_wav):
    path = craft_wav("u8.wav", bytes([128, 192, 64, 128]), bits=8)
    code, report, _ = info_json(cli, path)
    assert code == 0
    assert (report["subtype"], report["bits"], report["frames"]) == ("PCM_U8", 8, 4)
    assert report["levels"][0]["peak_dbfs"] == round(20 * math.log10(0.5), 4)


def test_twenty_four_bit(cli, craft_wav):
    data = b"".join(c.to_bytes(3, "little", signed=True) for c in [2**22, -(2**22), 0])
    code, report, _ = info_json(cli, craft_wav("s24.wav", data, bits=24))
    assert code == 0
    assert (report["subtype"], report["bits"], report["frames"]) == ("PCM_24", 24, 3)
    assert report["levels"][0]["peak_dbfs"] == round(20 * math.log10(0.5), 4)


def test_six_channel_extensible(cli, tmp_path):
    path = tmp_path / "six.wav"
    x = np.tile(np.arange(1, 7) / 8, (50, 1))
    sf.write(path, x, 48000, subtype="PCM_16", format="WAVEX")
    assert struct.unpack_from("<H", path.read_bytes(), 20)[0] == 0xFFFE
    code, report, _ = info_json(cli, path)
    assert code == 0 and report["channels"] == 6 and report["frames"] == 50
    assert [lv["dc_offset"] for lv in report["levels"]] == [c / 8 for c in range(1, 7)]


def test_rf64(cli, tmp_path):
    path = tmp_path / "rf.wav"
    sf.write(path, np.full((300, 2), 0.5), 16000, subtype="PCM_24", format="RF64")
    code, report, _ = info_json(cli, path)
    assert code == 0
    assert (report["container"], report["frames"], report["channels"]) == ("RF64", 300, 2)


def test_odd_sized_chunk_before_data(cli, craft_wav, wav_chunk, pcm16):
    path = craft_wav("list.wav", pcm16([8192] * 10), before_data=wav_chunk(b"LIST", b"INFOx"))
    code, report, err = info_json(cli, path)
    assert (code, err) == (0, "")
    assert report["frames"] == 10 and report["levels"][0]["dc_offset"] == 0.25


def test_trailing_garbage(cli, craft_wav, pcm16):
    path = craft_wav("trail.wav", pcm16([8192] * 10), trailing=b"\xff" * 33)
    code, report, err = info_json(cli, path)
    assert (code, err) == (0, "")
    assert report["frames"] == 10 and report["levels"][0]["dc_offset"] == 0.25


def test_single_sample(cli, craft_wav, pcm16):
    code, report, _ = info_json(cli, craft_wav("one.wav", pcm16([-16384])))
    assert code == 0
    assert report["frames"] == 1 and report["duration_s"] == 1 / 16000
    assert report["levels"][0]["dc_offset"] == -0.5


def test_long_silence_has_null_levels(cli, tmp_path):
    path = tmp_path / "silence.wav"
    audiokit.write(path, np.zeros((1, 200_000)), 16000, subtype="PCM_16")  # several 65536-frame blocks
    code, out, err = cli("info", "--json", path)
    assert (code, err) == (0, "")
    assert '"peak_dbfs": null' in out and '"rms_dbfs": null' in out and "Infinity" not in out
    report = json.loads(out)
    assert report["frames"] == 200_000
    assert report["levels"][0] == {"channel": 0, "peak_dbfs": None, "rms_dbfs": None, "dc_offset": 0.0, "clipped": 0}
    code, out, _ = cli("info", path)
    assert code == 0 and "-inf" in out


def test_dc_only(cli, tmp_path):
    path = tmp_path / "dc.wav"
    audiokit.write(path, np.full((1, 100_000), -0.125), 16000, subtype="PCM_16")
    code, report, _ = info_json(cli, path)
    assert code == 0
    assert report["levels"][0]["dc_offset"] == -0.125
    assert report["levels"][0]["peak_dbfs"] == report["levels"][0]["rms_dbfs"] == round(20 * math.log10(0.125), 4)


@pytest.mark.parametrize(("subtype", "bits"), [("PCM_U8", 8), ("PCM_16", 16), ("PCM_24", 24)])
def test_full_scale_square_is_all_clipped(cli, tmp_path, subtype, bits):
    square = np.where(np.arange(1000) % 2, 1.0, -1.0)  # 1.0 -> top code 2**(B-1)-1, -1.0 -> bottom code
    nearly = np.full(10, 1 - 2.0 ** -(bits - 2))  # two codes below the top: not clipped
    path = tmp_path / "square.wav"
    audiokit.write(path, np.concatenate([square, nearly])[None, :], 8000, subtype=subtype)
    code, report, _ = info_json(cli, path)
    assert code == 0
    assert report["levels"][0]["clipped"] == 1000
    assert report["levels"][0]["peak_dbfs"] == 0.0


def test_float_clipping_counts_full_scale_and_beyond(cli, tmp_path):
    path = tmp_path / "f.wav"
    sf.write(path, np.array([1.0, -1.0, 0.999, 1.25]), 8000, subtype="FLOAT")
    code, report, _ = info_json(cli, path, "-q")
    assert code == 0 and report["levels"][0]["clipped"] == 3 and report["bits"] == 32


def test_flac_and_ogg(cli, tmp_path):
    x = 0.5 * np.sin(2 * np.pi * 440 * np.arange(8000) / 16000)
    sf.write(tmp_path / "a.flac", x, 16000, subtype="PCM_16")
    sf.write(tmp_path / "a.ogg", x, 16000, format="OGG", subtype="VORBIS")
    code, reports, err = info_reports(cli, tmp_path / "a.flac", tmp_path / "a.ogg")
    assert (code, err) == (0, "")
    assert [(r["container"], r["subtype"], r["frames"]) for r in reports] == [("FLAC", "PCM_16", 8000), ("OGG", "VORBIS", 8000)]
    assert abs(reports[1]["levels"][0]["rms_dbfs"] - 20 * math.log10(0.5 / math.sqrt(2))) < 0.2


# --- raw PCM ------------------------------------------------------------------------------------

RAW_CASES = {
    "s16le": (np.array([8192, -16384], dtype="<i2").tobytes(), 2),
    "s24le": ((2**21).to_bytes(3, "little", signed=True) + (-(2**22)).to_bytes(3, "little", signed=True), 3),
    "s32le": (np.array([2**29, -(2**30)], dtype="<i4").tobytes(), 4),
    "u8": (bytes([128 + 32, 128 - 64]), 1),
    "f32le": (np.array([0.25, -0.5], dtype="<f4").tobytes(), 4),
    "f64le": (np.array([0.25, -0.5], dtype="<f8").tobytes(), 8),
}


@pytest.mark.parametrize("fmt", list(RAW_CASES))
def test_raw_file(cli, tmp_path, fmt):
    frame, _ = RAW_CASES[fmt]
    path = tmp_path / "x.raw"
    path.write_bytes(frame * 100)  # 100 frames of 2 channels: 0.25 and -0.5
    code, report, err = info_json(cli, path, "--format", fmt, "--rate", "16k", "--channels", "2")
    assert (code, err) == (0, "")
    assert (report["container"], report["sr"], report["channels"], report["frames"]) == ("RAW", 16000, 2, 100)
    assert [lv["dc_offset"] for lv in report["levels"]] == [0.25, -0.5]


@pytest.mark.parametrize("fmt", list(RAW_CASES))
def test_raw_stdin_in_process(cli, monkeypatch, fmt):
    frame, _ = RAW_CASES[fmt]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(frame * 50)))
    code, report, err = info_json(cli, "-", "--format", fmt, "--rate", "8000", "--channels", "2")
    assert (code, err) == (0, "")
    assert report["path"] == "-" and report["frames"] == 50
    assert [lv["dc_offset"] for lv in report["levels"]] == [0.25, -0.5]


def test_raw_stdin_subprocess(run):
    data = np.array([[8192, -16384]] * 1000, dtype="<i2").tobytes()
    code, out, err = run("info", "-", "--json", "--format", "s16le", "--rate", "16000", "--channels", "2", stdin=data)
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["sr"], report["channels"], report["frames"], report["subtype"]) == (16000, 2, 1000, "PCM_16")
    assert [lv["dc_offset"] for lv in report["levels"]] == [0.25, -0.5]


def test_stdin_wav_detected_subprocess(run, tmp_path):
    audiokit.write(tmp_path / "x.wav", np.full((1, 500), 0.5), 22050, subtype="PCM_16")
    code, out, err = run("info", "--json", "-", stdin=(tmp_path / "x.wav").read_bytes())
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["path"], report["container"], report["sr"], report["frames"]) == ("-", "WAV", 22050, 500)


def test_raw_format_needs_rate(cli, tmp_path):
    (tmp_path / "x.raw").write_bytes(b"\0" * 10)
    code, out, err = cli("info", tmp_path / "x.raw", "--format", "s16le")
    assert (code, out) == (2, "")
    assert err == "error: --format given for raw PCM input: --rate is required too\n"


def test_raw_bad_rate(cli, tmp_path):
    (tmp_path / "x.raw").write_bytes(b"\0" * 10)
    code, out, err = cli("info", tmp_path / "x.raw", "--format", "s16le", "--rate", "fast")
    assert (code, out) == (2, "")
    assert err.startswith("error: --rate: invalid frequency 'fast'") and err.count("\n") == 1


def test_raw_zero_channels(cli, tmp_path):
    (tmp_path / "x.raw").write_bytes(b"\0" * 10)
    code, out, err = cli("info", tmp_path / "x.raw", "--format", "s16le", "--rate", "8000", "--channels", "0")
    assert (code, out) == (2, "")
    assert err.startswith("error: Invalid value for '--channels'") and err.count("\n") == 1


def test_raw_unknown_format(cli, tmp_path):
    (tmp_path / "x.raw").write_bytes(b"\0" * 10)
    code, out, err = cli("info", tmp_path / "x.raw", "--format", "s12le", "--rate", "8000")
    assert (code, out) == (2, "")
    assert err == "error: --format: unknown raw PCM format 's12le' (allowed: s16le, s24le, s32le, u8, f32le, f64le)\n"


def test_pcm32_clipping_is_judged_at_full_precision(cli, tmp_path):
    codes = np.array([2**31 - 1, 2**31 - 20, -(2**31) + 20, 0])  # only the top code is at the clip level
    path = tmp_path / "p32.wav"
    audiokit.write(path, codes[None, :] / 2**31, 8000, subtype="PCM_32")
    code, report, _ = info_json(cli, path)
    assert code == 0 and report["bits"] == 32
    assert report["levels"][0]["clipped"] == 1


def test_double_just_below_full_scale_is_not_clipped(cli, tmp_path):
    path = tmp_path / "d.wav"
    sf.write(path, np.array([1 - 1e-9, -(1 - 1e-9), 0.5]), 8000, subtype="DOUBLE")
    code, report, _ = info_json(cli, path)
    assert code == 0 and report["bits"] == 64
    assert report["levels"][0]["clipped"] == 0
    assert report["levels"][0]["peak_dbfs"] == round(20 * math.log10(1 - 1e-9), 4)


# --- inputs: a FLAC of unknown length from a pipe, raw flags on a file with a header -----------------

FFMPEG_PIPE_FLAC = pathlib.Path(__file__).parent.parent / "data" / "ffmpeg_pipe.flac"


def test_flac_written_by_ffmpeg_to_a_pipe_subprocess(run):
    """``ffmpeg -i x.wav -f flac - | audiokit info -``: STREAMINFO has no length (see tests/data/README.md)."""
    code, out, err = run("info", "--json", "-", stdin=FFMPEG_PIPE_FLAC.read_bytes())
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["container"], report["subtype"], report["sr"], report["channels"]) == ("FLAC", "PCM_16", 8000, 2)
    assert (report["frames"], report["duration_s"]) == (4000, 0.5)


def test_flac_written_by_ffmpeg_to_a_pipe_as_a_file(cli):
    code, report, err = info_json(cli, FFMPEG_PIPE_FLAC)
    assert (code, err) == (0, "")
    assert (report["container"], report["frames"], report["duration_s"]) == ("FLAC", 4000, 0.5)  # samples: io/test_reader


def test_raw_flags_on_a_wav_are_refused(cli, pcm_file):
    code, out, err = cli("info", pcm_file, "--format", "s16le", "--rate", "16k")
    assert (code, out) == (3, "")
    assert err == (
        f"error: {pcm_file}: has a WAV header, which --format/--rate/--channels would read as samples; "
        "drop those options (the header gives the format), or pass a headerless file\n"
    )


def test_raw_flags_on_a_wav_on_stdin_are_refused_subprocess(run, pcm_file):
    code, out, err = run("info", "-", "--format", "s16le", "--rate", "16k", "--channels", "2", stdin=pcm_file.read_bytes())
    assert (code, out) == (3, b"")
    assert (
        err.startswith("error: -: has a WAV header, which --format/--rate/--channels would read as samples")
        and err.count("\n") == 1
    )

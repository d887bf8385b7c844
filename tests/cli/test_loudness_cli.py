"""``audiokit loudness``: the table, --json/--jsonl over several files (the rule of ``info``), outputs, errors, and
``audiokit batch loudness`` appending its reports to results.jsonl."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from tests.cli.test_info import json_stream
from tests.helpers.cli import png_size


def tone(path, seconds: float, level_db: float, sr: int = 48000, channels: int = 2):
    t = np.arange(round(seconds * sr)) / sr
    x = 10 ** (level_db / 20) * np.sin(2 * np.pi * 997 * t)
    sf.write(path, np.tile(x, (channels, 1)).T, sr, subtype="PCM_24")
    return path


@pytest.fixture
def two(tmp_path):
    return tone(tmp_path / "a.wav", 4.0, -23.0), tone(tmp_path / "b.wav", 4.0, -13.0, sr=44100, channels=1)


def test_table(cli, two):
    code, out, err = cli("loudness", two[0], "--target", "-16")
    assert (code, err) == (0, "")
    assert "integrated" in out and "-23.0 LUFS" in out and "gain to -16 LUFS" in out and "7.0 dB" in out
    assert "true peak" in out and "dBTP" in out and "4x" in out


def test_no_true_peak_reports_the_sample_peak_only(cli, two):
    code, out, err = cli("loudness", two[0], "--jsonl", "--no-true-peak")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["true_peak_oversampling"] is None and report["true_peak_dbtp"] is None
    assert report["sample_peak_dbfs"] == pytest.approx(-23.0, abs=0.01)  # the tone's amplitude is -23 dBFS
    code, out, _ = cli("loudness", two[0], "--jsonl")
    full = json.loads(out)
    assert full["true_peak_oversampling"] == 4 and full["sample_peak_dbfs"] == report["sample_peak_dbfs"]


@pytest.mark.parametrize("flag", ["--json", "--jsonl"])
def test_json_is_one_object_per_file_whatever_their_number(cli, two, flag):
    code, out, _ = cli("loudness", flag, two[0])
    assert code == 0
    (one,) = json_stream(out)
    code, out, _ = cli("loudness", flag, *two)
    reports = json_stream(out)
    assert code == 0 and [r["path"] for r in reports] == [str(p) for p in two]
    assert reports[0] == one
    assert reports[0]["integrated_lufs"] == pytest.approx(-23.0, abs=0.01)
    assert reports[1]["integrated_lufs"] == pytest.approx(-16.01, abs=0.05)  # mono -13 dBFS: -3 dB
    if flag == "--jsonl":
        assert len(out.splitlines()) == 2


def test_a_bad_file_among_several_is_an_error_line_and_exit_3(cli, two, tmp_path):
    missing = tmp_path / "missing.wav"
    code, out, err = cli("loudness", "--jsonl", two[0], missing, two[1])
    assert code == 3 and err.count("error:") == 1 and str(missing) in err
    assert [r["path"] for r in json_stream(out)] == [str(two[0]), str(two[1])]


def test_outputs_take_one_file(cli, two, tmp_path):
    code, _, err = cli("loudness", *two, "-o", tmp_path / "x.png")
    assert code == 2 and "one input file" in err
    code, _, err = cli("loudness", two[0], "--json", "--jsonl")
    assert code == 2 and "exclude each other" in err
    code, _, err = cli("loudness", two[0], "--target", "-100")
    assert code == 2 and "--target" in err


def test_png_and_series_are_written_and_listed(cli, two, tmp_path):
    png, series = tmp_path / "l.png", tmp_path / "l.npy"
    code, out, err = cli("loudness", two[0], "-o", png, "--series", series, "--size", "900x450")
    assert (code, err) == (0, "")
    assert out.splitlines()[-3:] == [str(png), str(series), str(tmp_path / "l.json")]
    assert png_size(png.read_bytes()) == (900, 450)
    assert np.load(series).shape == (2, 37)
    code, out, err = cli("loudness", two[0], "--json", "--series", tmp_path / "s.csv")
    assert code == 0 and json_stream(out)[0]["path"] == str(two[0]) and f"wrote {tmp_path / 's.csv'}" in err


def test_silence_and_a_short_file(cli, tmp_path):
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros((48000 * 4, 2)), 48000, subtype="PCM_16")
    short = tone(tmp_path / "short.wav", 0.2, -20.0)
    code, out, err = cli("loudness", "--jsonl", silent, short)
    assert (code, err) == (0, "")
    quiet, brief = json_stream(out)
    assert quiet["integrated_lufs"] is None and "absolute gate" in quiet["undefined"]["integrated_lufs"]
    assert brief["integrated_lufs"] is None and brief["undefined"]["integrated_lufs"] == "shorter than one 400 ms block"
    code, out, _ = cli("loudness", silent)
    assert code == 0 and "absolute gate" in out and "nan" not in out.lower() and "inf" not in out.lower()


def test_batch_loudness_appends_reports_to_results_jsonl(cli, two, tmp_path):
    out = tmp_path / "out"
    code, _, err = cli("batch", "loudness", *two, "--out", out, "-j", "1", "--target", "-14", "--png")
    assert code == 0, err
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 2
    by_path = {r["report"]["path"] if "report" in r else r["path"]: r for r in results}
    assert len(by_path) == 2
    for record in results:
        report = record.get("report", record)
        assert report["target_lufs"] == -14.0 and report["gain_db"] is not None
    assert sorted(p.name for p in out.rglob("*.loudness.png")) == ["a.loudness.png", "b.loudness.png"]
    code, _, err = cli("batch", "loudness", *two, "--out", out, "-j", "1", "--target", "-14", "--png")
    assert code == 0 and "2 already done" in err
    assert len((out / "results.jsonl").read_text().splitlines()) == 2

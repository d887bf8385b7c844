"""``audiokit stats``: table, --json/--jsonl (info's rule), several files, errors, ``audiokit batch stats``, SoX."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from tests.cli.test_info import json_stream
from tests.helpers.sox_stats import sox_stats

SR = 16000


@pytest.fixture
def stereo(tmp_path):
    t = np.arange(2 * SR) / SR
    data = np.stack([0.5 * np.sin(2 * np.pi * 440 * t), np.clip(1.5 * np.sin(2 * np.pi * 100 * t), -1, 1)], axis=1)
    path = tmp_path / "st.wav"
    sf.write(path, data, SR, subtype="PCM_24")
    return path


@pytest.fixture
def mono(tmp_path):
    path = tmp_path / "mono.wav"
    sf.write(path, 0.1 * np.random.default_rng(0).standard_normal(SR), SR, subtype="PCM_16")
    return path


def test_table_lists_every_field_per_channel(cli, stereo):
    code, out, err = cli("stats", stereo)
    assert (code, err) == (0, "")
    for label in ("DC offset", "Pk lev dB", "RMS Tr dB", "Flat factor", "Bit-depth", "Zero crossings", "Noise floor dB"):
        assert label in out
    assert "ch0" in out and "ch1" in out and "23/24" in out and "32.67" in out


def test_json_one_file_is_one_object_and_several_a_stream(cli, stereo, mono):
    code, out, _ = cli("stats", "--json", stereo)
    assert code == 0
    report = json.loads(out)
    assert report["channels"] == 2 and len(report["levels"]) == 2 and report["window_s"] == 0.05
    assert report["levels"][1]["bit_depth"] == [24, 24] and report["overall"]["crest_factor"] is None
    code, out, _ = cli("stats", "--json", stereo, mono)
    assert [r["path"] for r in json_stream(out)] == [str(stereo), str(mono)]
    code, out, _ = cli("stats", "--jsonl", stereo, mono)
    assert [json.loads(line)["path"] for line in out.splitlines()] == [str(stereo), str(mono)]


def test_an_unreadable_file_among_others_is_exit_3_and_the_rest_reported(cli, mono, tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF1234WAVEjunk")
    code, out, err = cli("stats", "--jsonl", bad, mono)
    assert code == 3 and f"error: {bad}" in err
    assert [json.loads(line)["path"] for line in out.splitlines()] == [str(mono)]


@pytest.mark.parametrize("window", ["5ms", "11s", "abc"])
def test_bad_window_is_a_usage_error(cli, mono, window):
    code, out, err = cli("stats", mono, "--window", window)
    assert code == 2 and out == "" and "--window" in err


def test_json_flags_exclude_each_other(cli, mono):
    code, _, err = cli("stats", mono, "--json", "--jsonl")
    assert code == 2 and "exclude" in err


def test_silence_has_no_infinities_in_json(cli, tmp_path):
    path = tmp_path / "zero.wav"
    sf.write(path, np.zeros(SR), SR, subtype="PCM_16")
    code, out, _ = cli("stats", "--json", path)
    report = json.loads(out)  # json.loads refuses nothing, so check the text: no Infinity/NaN tokens
    assert code == 0 and "Infinity" not in out and "NaN" not in out
    assert report["overall"]["peak_level_db"] is None and report["overall"]["bit_depth"] == [0, 0]


def test_batch_stats_appends_reports_to_results(cli, stereo, mono, tmp_path):
    code, _, err = cli("batch", "stats", stereo, mono, "--out", tmp_path / "o", "-j", "1")
    assert code == 0, err
    lines = [json.loads(line) for line in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    by_path = {line["path"]: line for line in lines}
    reports = {json.loads(cli("stats", "--json", p)[1])["path"]: json.loads(cli("stats", "--json", p)[1]) for p in (stereo, mono)}
    for path, report in reports.items():
        found = next(line for key, line in by_path.items() if key.endswith(path.rsplit("/", 1)[-1]))
        assert found["overall"] == report["overall"] and found["levels"] == report["levels"]


@pytest.mark.slow
def test_cli_json_equals_sox_stats(cli, stereo):
    report = json.loads(cli("stats", "--json", stereo)[1])
    rows = sox_stats(str(stereo))
    columns = [report["overall"], *report["levels"]]
    for field in ("peak_level_db", "rms_level_db", "rms_peak_db", "rms_trough_db", "flat_factor"):
        for column, cell in zip(columns, rows[field], strict=True):
            assert abs(column[field] - float(cell)) <= 0.01, field
    assert [f"{c['bit_depth'][0]}/{c['bit_depth'][1]}" for c in columns] == rows["bit_depth"]

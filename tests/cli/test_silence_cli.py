"""``audiokit silence``: spans, --json, the segments manifest that ``audiokit batch --manifest`` runs on, --trim,
``audiokit batch silence``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from tests.cli.test_info import json_stream

SR = 16000


@pytest.fixture
def talk(tmp_path):
    """4 s: silence, 440 Hz 0.7-1.5 s, silence, 2.4-3.2 s, silence (PCM_16)."""
    t = np.arange(4 * SR) / SR
    x = 0.5 * np.sin(2 * np.pi * 440 * t) * (((t > 0.7) & (t < 1.5)) | ((t > 2.4) & (t < 3.2)))
    path = tmp_path / "talk.wav"
    sf.write(path, x, SR, subtype="PCM_16")
    return path


def test_table_and_json(cli, talk):
    code, out, err = cli("silence", talk)
    assert (code, err) == (0, "") and "3 silences" in out and "0.700" in out
    code, out, _ = cli("silence", talk, "--json", "--frame", "1")
    report = json.loads(out)
    assert [(s["start_sample"], s["end_sample"]) for s in report["silences"]] == [(0, 11201), (24000, 38401), (51200, 64000)]
    assert [(s["start_sample"], s["end_sample"]) for s in report["sound"]] == [(11201, 24000), (38401, 51200)]
    assert report["threshold_db"] == -50 and report["min_silence_samples"] == SR // 2


def test_several_files_follow_infos_json_rule(cli, talk, tmp_path):
    other = tmp_path / "other.wav"
    sf.write(other, np.zeros(SR), SR, subtype="PCM_16")
    code, out, _ = cli("silence", "--json", talk, other)
    assert code == 0 and [r["path"] for r in json_stream(out)] == [str(talk), str(other)]


def test_manifest_is_what_batch_manifest_runs_on(cli, talk, tmp_path):
    manifest = tmp_path / "segments.jsonl"
    code, _, err = cli("silence", talk, "-m", manifest)
    assert code == 0, err
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    assert [set(line) for line in lines] == [{"id", "path", "start", "duration"}] * 2
    assert [line["id"] for line in lines] == ["talk-0001", "talk-0002"]
    assert [(line["start"], line["duration"]) for line in lines] == [(0.7, 0.8), (2.4, 0.8)]
    code, _, err = cli("batch", "mel", "--manifest", manifest, "--out", tmp_path / "feats", "-j", "1", "--store", "files")
    assert code == 0, err
    shapes = {}
    for line in (tmp_path / "feats" / "manifest.jsonl").read_text().splitlines():
        record = json.loads(line)
        shapes[record["id"]] = record["shape"]
    # 0.8 s at 16 kHz, 25 ms / 10 ms frames: 1 + (12800 - 400) // 160 = 78 frames of 80 mels
    assert shapes == {"talk-0001": [80, 78], "talk-0002": [80, 78]}


def test_trim_writes_from_first_to_last_sound_exactly(cli, talk, tmp_path):
    out = tmp_path / "trimmed.wav"
    code, _, err = cli("silence", talk, "--trim", "-o", out, "--frame", "1")
    assert code == 0, err
    original, _ = sf.read(talk, dtype="int16")
    trimmed, sr = sf.read(out, dtype="int16")
    assert sr == SR and sf.info(out).subtype == "PCM_16"
    assert np.array_equal(trimmed, original[11201:51200])


def test_trim_never_overwrites_the_input(cli, talk):
    before = talk.read_bytes()
    code, _, err = cli("silence", talk, "--trim", "-o", talk)
    assert code == 4 and "error:" in err and talk.read_bytes() == before


def test_trim_of_all_silence_is_an_input_error_and_writes_nothing(cli, tmp_path):
    zero, out = tmp_path / "zero.wav", tmp_path / "out.wav"
    sf.write(zero, np.zeros(SR), SR, subtype="PCM_16")
    code, _, err = cli("silence", zero, "--trim", "-o", out)
    assert code == 3 and "no sound" in err and not out.exists()


@pytest.mark.parametrize(
    "args, word",
    [
        (["--threshold", "loud"], "--threshold"),
        (["--min-silence", "x"], "--min-silence"),
        (["--trim"], "-o"),
        (["-o", "x.wav"], "--trim"),
    ],
)
def test_bad_options_are_usage_errors(cli, talk, args, word):
    code, out, err = cli("silence", talk, *args)
    assert code == 2 and out == "" and word in err


def test_manifest_of_stdin_is_refused_before_reading(cli):
    code, out, err = cli("silence", "-", "-m", "x.jsonl")
    assert code == 2 and out == "" and "standard input" in err


def test_batch_silence_appends_reports_to_results(cli, talk, tmp_path):
    code, _, err = cli("batch", "silence", talk, "--out", tmp_path / "o", "-j", "1", "--threshold", "-40dB")
    assert code == 0, err
    (line,) = [json.loads(text) for text in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    single = json.loads(cli("silence", talk, "--json", "--threshold", "-40dB")[1])
    assert line["silences"] == single["silences"] and line["threshold_db"] == -40

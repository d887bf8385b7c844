"""Batch outputs are byte for byte what the single-file commands write, in process and on a process pool."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers.batch import batch_options, batch_outputs, manifest_lines, reference_outputs, temp_files


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "jobs"),
    [
        ("mel", 1),
        ("mel", 2),
        ("spectrogram", 1),
        ("resample", 1),
        ("resample", 2),
        ("quantize", 1),
        ("dehum", 1),
        ("info", 1),
        ("info", 2),
        ("spectrum", 1),
    ],
)
def test_batch_equals_single_file_commands(cli, corpus, tmp_path, command, jobs):
    expected = reference_outputs(cli, command, corpus, tmp_path / "ref")
    out = tmp_path / "out"
    code, stdout, err = cli("batch", command, *batch_options(command), corpus, "--out", out, "--jobs", jobs, "--chunk", 2)
    assert code == 0, err
    assert stdout == ""  # stdout is for data only: nothing without --json
    assert batch_outputs(command, out, expected) == expected
    records = manifest_lines(out)
    assert sorted(r["id"] for r in records) == ["f", "spk1/a", "spk1/b", "spk2/e", "spk2/sess/c", "spk2/sess/d"]
    assert all(r["status"] == "ok" and r["error"] is None for r in records)
    assert temp_files(out) == []


def test_manifest_line_describes_the_input_and_outputs(cli, corpus, tmp_path):
    out = tmp_path / "out"
    code, _, err = cli("batch", "mel", "--store", "files", corpus, "--out", out, "-j", "1")
    assert code == 0, err
    record = {r["id"]: r for r in manifest_lines(out)}["spk2/sess/c"]
    source = corpus / "spk2" / "sess" / "c.wav"
    assert record["path"] == str(source)
    assert record["size"] == source.stat().st_size and record["mtime_ns"] == source.stat().st_mtime_ns
    assert record["outputs"] == {"npy": "spk2/sess/c.mel.npy", "json": "spk2/sess/c.mel.json"}
    assert record["shape"] == list(np.load(out / "spk2/sess/c.mel.npy").shape) == [2, 80, 108]
    assert record["duration"] == pytest.approx(1.1) and record["sr"] == 16000 and record["channels"] == 2
    assert record["command"] == "mel" and record["fingerprint"].startswith("sha256:")
    warned = [w for w in record["warnings"] if "mel bands are built from the same DFT bins" not in w]  # 80 bands, n_fft 400
    assert record["seconds"] > 0 and record["segment"] is None and warned == []


def test_png_only_with_the_flag(cli, corpus, tmp_path):
    code, _, err = cli("batch", "spectrogram", "--store", "files", corpus / "spk1", "--out", tmp_path / "o", "-j", "1", "--png")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "o").iterdir() if not p.name.startswith(".")) == [
        "a.spectrogram.json",
        "a.spectrogram.npy",
        "a.spectrogram.png",
        "b.spectrogram.json",
        "b.spectrogram.npy",
        "b.spectrogram.png",
        "manifest.jsonl",
    ]
    assert (tmp_path / "o" / "a.spectrogram.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_summary_on_stdout(cli, corpus, tmp_path):
    code, stdout, err = cli("batch", "info", corpus, "--out", tmp_path / "o", "-j", "1", "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["ok"] == 6 and summary["failed"] == 0 and summary["skipped"] == 0 and summary["exit_code"] == 0
    assert "batch info: 6 ok, 0 failed" in err

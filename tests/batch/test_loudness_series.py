"""``audiokit batch loudness --series`` writes, per input, the bytes ``audiokit loudness --series PATH.npy`` writes.

The outputs are named as the other batch outputs: ``<id>.loudness.npy`` + ``<id>.loudness.json`` (the sidecar),
mirroring the input tree; resume skips them, a run without ``--series`` before does not count as done.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

IDS = ["a/mono", "a/stereo", "short"]


@pytest.fixture
def corpus(tmp_path):
    """A 16 kHz mono tone in noise, a 48 kHz stereo 24-bit file with a pause, a 1 s file (no short-term value)."""
    rng = np.random.default_rng(3)
    root = tmp_path / "in"
    (root / "a").mkdir(parents=True)
    t = np.arange(4 * 16000) / 16000
    sf.write(root / "a/mono.wav", 0.3 * np.sin(2 * np.pi * 440 * t) + 0.01 * rng.standard_normal(t.size), 16000)
    n = int(3.5 * 48000)
    left = 0.2 * rng.standard_normal(n)
    left[48000:72000] = 0.0
    sf.write(root / "a/stereo.wav", np.stack([left, 0.5 * left], axis=1), 48000, subtype="PCM_24")
    sf.write(root / "short.wav", 0.1 * np.sin(np.arange(16000) / 5), 16000, subtype="FLOAT")
    return root


def _single(cli, corpus, tmp_path) -> dict[str, tuple[bytes, bytes, dict]]:
    """Each input's .npy bytes, sidecar bytes and --json report from the single-file command (absolute paths)."""
    expected = {}
    for item in IDS:
        target = tmp_path / "ref" / f"{item}.npy"
        target.parent.mkdir(parents=True, exist_ok=True)
        code, out, err = cli("loudness", corpus / f"{item}.wav", "--series", target, "--json")
        assert code == 0, err
        expected[item] = (target.read_bytes(), target.with_suffix(".json").read_bytes(), json.loads(out))
    return expected


def _check(out, expected) -> None:
    for item, (npy, sidecar, _) in expected.items():
        assert (out / f"{item}.loudness.npy").read_bytes() == npy, item
        assert (out / f"{item}.loudness.json").read_bytes() == sidecar, item
    results = {r.pop("id"): r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert results == {item: report for item, (_, _, report) in expected.items()}
    records = {r["id"]: r for r in map(json.loads, (out / "manifest.jsonl").read_text().splitlines())}
    for item in IDS:
        assert records[item]["outputs"] == {"npy": f"{item}.loudness.npy", "json": f"{item}.loudness.json"}
        assert records[item]["shape"] == list(np.load(out / f"{item}.loudness.npy").shape)


def test_series_per_input_equals_the_single_file_command(cli, corpus, tmp_path):
    expected = _single(cli, corpus, tmp_path)
    out = tmp_path / "out"
    code, stdout, err = cli("batch", "loudness", corpus, "--out", out, "--series", "-j", "1")
    assert code == 0, err
    assert stdout == ""
    _check(out, expected)
    series = np.load(out / "short.loudness.npy")
    assert series.shape == (2, 7) and (series[1] == -200.0).all()  # 1 s: momentary steps only, no 3 s window


def test_resume_skips_done_series_and_a_run_without_series_is_not_done(cli, corpus, tmp_path):
    expected = _single(cli, corpus, tmp_path)
    out = tmp_path / "out"
    code, _, err = cli("batch", "loudness", corpus, "--out", out, "-j", "1")
    assert code == 0, err
    assert not list(out.rglob("*.npy"))  # without --series: the reports only
    code, _, err = cli("batch", "loudness", corpus, "--out", out, "--series", "-j", "1")
    assert code == 0 and "3 ok, 0 failed, 0 already done" in err, err
    _check(out, expected)
    written = {p: p.stat().st_mtime_ns for p in out.rglob("*.loudness.*")}
    code, _, err = cli("batch", "loudness", corpus, "--out", out, "--series", "-j", "1")
    assert code == 0 and "0 ok, 0 failed, 3 already done" in err, err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.loudness.*")} == written
    _check(out, expected)


@pytest.mark.slow
def test_series_on_two_worker_processes(cli, corpus, tmp_path):
    expected = _single(cli, corpus, tmp_path)
    out = tmp_path / "out"
    code, _, err = cli("batch", "loudness", corpus, "--out", out, "--series", "--jobs", "2", "--chunk", "1")
    assert code == 0, err
    _check(out, expected)


def test_series_with_png_writes_both(cli, corpus, tmp_path):
    out = tmp_path / "out"
    code, _, err = cli("batch", "loudness", corpus / "a", "--out", out, "--series", "--png", "-j", "1")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir() if p.suffix != ".jsonl" and not p.name.startswith(".")) == [
        "mono.loudness.json",
        "mono.loudness.npy",
        "mono.loudness.png",
        "stereo.loudness.json",
        "stereo.loudness.npy",
        "stereo.loudness.png",
    ]

"""``audiokit waveform`` through the CLI: the table and --json against numpy on the file (min, max, peak) and
``audiokit info`` (clipped count), every option (--start/--dur, --scale, --size, --channel, --json, -o -, raw
PCM, --fix-nonfinite), the one-line errors, determinism, ``audiokit batch waveform --png`` and bounded memory.

Sample values come back exactly (PCM_16 codes are exact in float32/float64), so min/max compare with ==.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.cli import PNG_END, PNG_MAGIC, png_size
from tests.helpers.memory import peak_rss_mib

SR = 8000


@pytest.fixture
def clipped(tmp_path):
    """2 ch PCM_16, 3 s: ch0 a 50 Hz sine clipped for 1..2 s, ch1 a quiet one; returns (path, float samples)."""
    t = np.arange(3 * SR) / SR
    x = np.stack([0.5 * np.sin(2 * np.pi * 50 * t), 0.1 * np.sin(2 * np.pi * 30 * t)])
    x[0, SR : 2 * SR] = np.clip(3 * x[0, SR : 2 * SR], -1, 1)
    path = tmp_path / "c.wav"
    sf.write(path, x.T, SR, subtype="PCM_16")
    return path, sf.read(path, dtype="float64", always_2d=True)[0].T


def _json(cli, *args) -> dict:
    code, out, err = cli("waveform", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_table_then_the_png_path(cli, clipped, tmp_path):
    png = tmp_path / "w.png"
    code, out, err = cli("waveform", clipped[0], "-o", png)
    assert code == 0 and err == "", err
    assert "clipped" in out and out.splitlines()[-1] == str(png)
    assert png_size(png.read_bytes()) == (1200, 500)


def test_json_numbers_against_numpy_and_info(cli, clipped):
    path, x = clipped
    report = _json(cli, path)
    assert (report["sr"], report["channels"], report["subtype"], report["n_samples"]) == (SR, 2, "PCM_16", 3 * SR)
    assert report["columns"] == 1200 and report["start_s"] == 0.0 and report["duration_s"] == 3.0
    level = 1 - 2.0**-15
    for entry, row in zip(report["levels"], x):
        assert entry["min"] == row.min() and entry["max"] == row.max()
        assert entry["peak_dbfs"] == pytest.approx(20 * np.log10(np.abs(row).max()), abs=1e-4)
        assert entry["clipped"] == int(np.count_nonzero(np.abs(row) >= level))
    code, out, _ = cli("info", path, "--json")
    info = json.loads(out)
    assert [e["clipped"] for e in report["levels"]] == [e["clipped"] for e in info["levels"]]
    assert report["levels"][0]["clipped"] > 0 and report["levels"][1]["clipped"] == 0
    # the clipped columns lie within 1..2 s: 1200 columns over 3 s, 400 per second
    assert 300 <= report["levels"][0]["clipped_columns"] <= 401


def test_start_and_dur_draw_a_segment(cli, clipped, tmp_path):
    path, x = clipped
    report = _json(cli, path, "--start", "0.5s", "--dur", "4000", "-o", tmp_path / "s.png")
    assert report["start_s"] == 0.5 and report["n_samples"] == 4000 and report["duration_s"] == 0.5
    segment = x[:, 4000:8000]
    assert [e["min"] for e in report["levels"]] == list(segment.min(axis=1))
    assert [e["max"] for e in report["levels"]] == list(segment.max(axis=1))
    assert report["levels"][0]["clipped"] == 0  # the clipping starts at 1 s


def test_dur_past_the_end_warns_and_uses_what_exists(cli, clipped):
    code, out, err = cli("waveform", clipped[0], "--start", "2.5s", "--dur", "2s", "--json")
    assert code == 0 and "runs past the end" in err
    assert json.loads(out)["n_samples"] == SR // 2


def test_channel_reports_and_draws_one(cli, clipped, tmp_path):
    report = _json(cli, clipped[0], "--channel", "1", "-o", tmp_path / "one.png")
    assert [e["channel"] for e in report["levels"]] == [1]
    assert report["levels"][0]["max"] == clipped[1][1].max()


@pytest.mark.parametrize("size", ["640x300", "300x800"])
def test_size_is_exact_for_the_png(cli, clipped, tmp_path, size):
    png = tmp_path / "w.png"
    code, _, err = cli("waveform", clipped[0], "-o", png, "--size", size)
    assert code == 0, err
    assert png_size(png.read_bytes()) == tuple(int(v) for v in size.split("x"))
    assert _json(cli, clipped[0], "--size", size)["columns"] == int(size.split("x")[0])


def test_scale_dbfs_draws_another_picture_from_the_same_numbers(cli, clipped, tmp_path):
    linear, dbfs = tmp_path / "l.png", tmp_path / "d.png"
    assert cli("waveform", clipped[0], "-o", linear)[0] == 0
    assert cli("waveform", clipped[0], "-o", dbfs, "--scale", "dbfs")[0] == 0
    assert linear.read_bytes() != dbfs.read_bytes()
    assert _json(cli, clipped[0], "--scale", "dbfs")["scale"] == "dbfs"


def test_the_same_bytes_every_run(cli, clipped, tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert cli("waveform", clipped[0], "-o", a)[0] == 0 and cli("waveform", clipped[0], "-o", b)[0] == 0
    assert a.read_bytes() == b.read_bytes()


def test_raw_pcm_input(cli, tmp_path):
    codes = (np.arange(-8000, 8000, 2, dtype="<i2") * 4).astype("<i2")
    raw = tmp_path / "x.raw"
    raw.write_bytes(codes.tobytes())
    report = _json(cli, raw, "--format", "s16le", "--rate", "8k")
    assert report["sr"] == 8000 and report["n_samples"] == codes.size
    assert report["levels"][0]["min"] == codes.min() / 32768 and report["levels"][0]["max"] == codes.max() / 32768


def test_fix_nonfinite_draws_nan_as_zero(cli, tmp_path):
    x = np.full(1000, 0.25, dtype=np.float32)
    x[10] = np.nan
    path = tmp_path / "nan.wav"
    sf.write(path, x, SR, subtype="FLOAT")
    code, _, err = cli("waveform", path, "--json")
    assert code == 3 and err.count("\n") == 1 and err.startswith("error: ")
    code, out, err = cli("waveform", path, "--json", "--fix-nonfinite")
    assert code == 0 and json.loads(out)["levels"][0]["min"] == 0.0


@pytest.mark.parametrize(
    "args, status, words",
    [
        (["--scale", "log"], 2, "--scale"),
        (["--size", "10x10"], 2, "--size"),
        (["--start", "9s"], 2, "beyond the end"),
        (["--channel", "2"], 2, "--channel 2"),
        (["-o", "w.jpg"], 2, "PNG"),
        (["-o", "-", "--json"], 2, "choose one"),
        (["--dur", "abc"], 2, "--dur"),
    ],
)
def test_bad_options_one_line_and_no_output(cli, clipped, tmp_path, args, status, words):
    code, out, err = cli("waveform", clipped[0], *args)
    assert code == status and err.startswith("error: ") and err.count("\n") == 1 and words in err, err
    assert out == "" and not (tmp_path / "w.jpg").exists()


def test_missing_input_exit_3(cli, tmp_path):
    code, _, err = cli("waveform", tmp_path / "nope.wav", "-o", tmp_path / "w.png")
    assert code == 3 and err.startswith(f"error: {tmp_path / 'nope.wav'}") and not (tmp_path / "w.png").exists()


def test_png_to_stdout_holds_only_png_bytes(run, clipped):
    code, out, err = run("waveform", clipped[0], "-o", "-", "--size", "400x200")
    assert code == 0, err
    assert out.startswith(PNG_MAGIC) and out.endswith(PNG_END) and png_size(out) == (400, 200)


def test_batch_waveform_png_and_reports(cli, clipped, tmp_path):
    out = tmp_path / "out"
    code, _, err = cli("batch", "waveform", clipped[0], "--out", out, "-j", "1", "--png", "--scale", "dbfs")
    assert code == 0, err
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 1 and results[0].get("report", results[0])["scale"] == "dbfs"
    assert [p.name for p in out.rglob("*.waveform.png")] == ["c.waveform.png"]


@pytest.mark.slow
def test_half_an_hour_in_bounded_memory(tmp_path):
    """30 min at 16 kHz mono (58 MB of PCM_16): the envelope is 1200 columns, so memory stays that of start-up."""
    path, block, sr = tmp_path / "long.wav", 1 << 20, 16000
    rng = np.random.default_rng(3)
    with sf.SoundFile(path, "w", samplerate=sr, channels=1, subtype="PCM_16") as f:
        for _ in range(0, 1800 * sr, block):
            f.write(0.3 * rng.standard_normal(block).clip(-3, 3) / 3)
    measured = peak_rss_mib("waveform", path, "-o", tmp_path / "long.png", "--json")
    assert measured.returncode == 0, measured.stderr
    assert measured.peak_rss_mib <= 150.0, f"peak RSS {measured.peak_rss_mib:.1f} MiB"

"""``audiokit pitch``: the table, --json, the --npy rows against the library functions (exact), every option, the
PNG, errors, ``audiokit batch pitch``, and the peak memory of a long input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

import audiokit
from tests.cli.test_info import json_stream
from tests.helpers.cli import png_size, sidecar

SR = 16000


def harmonic(path, f0: float = 200.0, seconds: float = 2.0, sr: int = SR, channels: int = 1, gap: bool = True):
    """A 10-harmonic complex at ``f0`` Hz (1/k amplitudes), silent from 0.8 to 1.2 s when ``gap``; PCM_16."""
    t = np.arange(round(seconds * sr)) / sr
    x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 11) if k * f0 < sr / 2)
    x = 0.3 * x / np.abs(x).max()
    if gap:
        x[(t > 0.8) & (t < 1.2)] = 0.0
    sf.write(path, np.tile(x, (channels, 1)).T, sr, subtype="PCM_16")
    return path


def mono(path) -> np.ndarray:
    y, _ = sf.read(path, dtype="float32", always_2d=True)
    return y.mean(axis=1) if y.shape[1] > 1 else y[:, 0]


@pytest.fixture
def tone(tmp_path):
    return harmonic(tmp_path / "tone.wav")


def test_table_and_json(cli, tone):
    code, out, err = cli("pitch", tone)
    assert (code, err) == (0, "")
    assert "median f0" in out and "200." in out and "voiced" in out
    code, out, err = cli("pitch", tone, "--json")
    (report,) = json_stream(out)
    assert (code, err) == (0, "")
    assert report["f0_median_hz"] == pytest.approx(200.0, rel=0.006)  # 10-cent bins: within 5 cents + rounding
    assert (report["frame_length"], report["hop_length"], report["method"]) == (1024, 256, "pyin")
    assert report["n_frames"] == 1 + 2 * SR // 256
    # 0.4 s of silence in 2 s: about 20 % unvoiced (frames straddling the edges either way)
    assert 0.7 < report["voiced_fraction"] < 0.85 and report["undefined"] == {}


def test_npy_rows_are_the_library_results(cli, tone, tmp_path):
    npy = tmp_path / "p.npy"
    code, out, err = cli("pitch", tone, "--npy", npy)
    assert (code, err) == (0, "") and out.split()[-2:] == [str(npy), str(npy.with_suffix(".json"))]
    rows = np.load(npy)
    f0, flag, prob = audiokit.pyin(mono(tone), sr=SR, fmin=65, fmax=2093, frame_length=1024, hop_length=256)
    assert rows.shape == (4, f0.size)
    assert np.array_equal(rows[0], np.arange(f0.size) * 256 / SR)
    assert np.array_equal(rows[1], np.where(flag, f0, 0.0)) and np.array_equal(rows[2], flag.astype(float))
    assert np.array_equal(rows[3], prob)
    meta = sidecar(npy)
    assert meta["rows"] == ["time_s", "f0_hz", "voiced_flag", "voiced_prob"] and meta["shape"] == [4, f0.size]
    assert (meta["frame_length"], meta["hop_length"], meta["method"]) == (1024, 256, "pyin")


def test_yin_threshold_fmin_fmax_win_hop(cli, tone, tmp_path):
    npy = tmp_path / "y.npy"
    args = ("--method", "yin", "--fmin", "100Hz", "--fmax", "1kHz", "--win", "50ms", "--hop", "10ms")
    code, _, err = cli("pitch", tone, "--npy", npy, *args, "--threshold", "0.2")
    assert (code, err) == (0, "")
    rows = np.load(npy)
    f0 = audiokit.yin(mono(tone), sr=SR, fmin=100, fmax=1000, frame_length=800, hop_length=160, trough_threshold=0.2)
    assert np.array_equal(rows[1][rows[2] > 0], f0[rows[2] > 0]) and rows.shape[1] == f0.size
    assert np.all(rows[1][rows[2] == 0] == 0)
    voiced_02 = rows[2].mean()
    cli("pitch", tone, "--npy", npy, *args, "--threshold", "0.001")
    assert np.load(npy)[2].mean() < voiced_02  # a stricter threshold: fewer periodic frames
    code, out, _ = cli("pitch", tone, "--json", "--fmin", "150", "--fmax", "300Hz", "--win", "1024", "--hop", "160")
    report = json.loads(out)
    assert (report["fmin_hz"], report["fmax_hz"], report["frame_length"], report["hop_length"]) == (150, 300, 1024, 160)


def test_png_size_and_log_axis(cli, tone, tmp_path):
    png, log_png = tmp_path / "p.png", tmp_path / "log.png"
    code, out, err = cli("pitch", tone, "-o", png, "--size", "900x400")
    assert (code, err) == (0, "") and out.split()[-1] == str(png)
    assert png_size(png.read_bytes()) == (900, 400)
    assert cli("pitch", tone, "-o", log_png, "--size", "900x400", "--log-freq")[0] == 0
    assert png_size(log_png.read_bytes()) == (900, 400) and log_png.read_bytes() != png.read_bytes()


def test_stereo_is_mixed_to_mono(cli, tmp_path):
    one, two = harmonic(tmp_path / "m.wav"), harmonic(tmp_path / "s.wav", channels=2)
    assert (
        json.loads(cli("pitch", one, "--jsonl")[1])["f0_median_hz"] == json.loads(cli("pitch", two, "--jsonl")[1])["f0_median_hz"]
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (("--method", "crepe"), "--method"),
        (("--fmax", "9kHz"), "Nyquist"),
        (("--fmin", "500Hz", "--fmax", "400Hz"), "fmin < fmax"),
        (("--win", "10ms"), "period of --fmin"),
        (("--win", "abc"), "--win"),
        (("--threshold", "2"), "--threshold"),
        (("--npy", "x.txt"), ".npy"),
    ],
)
def test_bad_options_exit_2_with_one_line(cli, tone, args, message):
    code, out, err = cli("pitch", tone, *args)
    assert code == 2 and out == "" and message in err and err.startswith("error:") and len(err.splitlines()) == 1


def test_missing_input_and_two_files_with_npy(cli, tone, tmp_path):
    code, out, err = cli("pitch", tmp_path / "none.wav")
    assert code == 3 and out == "" and err.startswith("error:")
    code, _, err = cli("pitch", tone, tone, "--npy", tmp_path / "a.npy")
    assert code == 2 and "one input file" in err and not (tmp_path / "a.npy").exists()


def test_batch_pitch(cli, tmp_path):
    a, b = harmonic(tmp_path / "a.wav", 150.0), harmonic(tmp_path / "b.wav", 300.0, sr=22050)
    out = tmp_path / "out"
    code, _, err = cli("batch", "pitch", a, b, "--out", out, "-j", "1", "--png")
    assert code == 0, err
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    medians = sorted(r.get("report", r)["f0_median_hz"] for r in results)
    assert medians[0] == pytest.approx(150, rel=0.006) and medians[1] == pytest.approx(300, rel=0.006)
    assert sorted(p.name for p in out.rglob("*.pitch.*")) == [
        "a.pitch.json", "a.pitch.npy", "a.pitch.png", "b.pitch.json", "b.pitch.npy", "b.pitch.png"
    ]  # fmt: skip
    single = tmp_path / "a.npy"
    cli("pitch", a, "--npy", single)
    assert np.array_equal(np.load(out / "a.pitch.npy"), np.load(single))


@pytest.mark.slow
def test_peak_memory_is_bounded_on_a_long_input(tmp_path):
    """8 min of 16 kHz voiced/unvoiced audio: peak RSS under the 300 MiB bound and within 20 MiB of a 1 min input's
    (the per-frame results, 17 bytes a frame, are all that grows)."""
    from tests.helpers.memory import RSS_LIMIT_MIB, peak_rss_mib

    rng = np.random.default_rng(0)
    one = harmonic(tmp_path / "unit.wav", 180.0, seconds=6.0)
    unit = sf.read(one, dtype="int16")[0]
    peaks = {}
    for minutes in (1, 8):
        path = tmp_path / f"long{minutes}.wav"
        with sf.SoundFile(path, "w", SR, 1, subtype="PCM_16") as f:
            for _ in range(minutes * 10):
                f.write((unit * rng.uniform(0.5, 1.0)).astype(np.int16))
        measured = peak_rss_mib("pitch", path, "--npy", tmp_path / f"p{minutes}.npy")
        assert measured.returncode == 0, measured.stderr
        peaks[minutes] = measured.peak_rss_mib
    assert peaks[8] < RSS_LIMIT_MIB and peaks[8] - peaks[1] < 20, peaks


def test_raw_pcm_and_fix_nonfinite(cli, tone, tmp_path):
    y = mono(tone)
    raw = tmp_path / "tone.raw"
    (np.round(y * 32767).astype("<i2")).tofile(raw)
    expected = json.loads(cli("pitch", tone, "--jsonl")[1])
    got = json.loads(cli("pitch", raw, "--format", "s16le", "--rate", "16k", "--channels", "1", "--jsonl")[1])
    assert got["f0_median_hz"] == expected["f0_median_hz"] and got["n_frames"] == expected["n_frames"]
    bad = tmp_path / "nan.wav"
    z = y.copy()
    z[100] = np.nan
    sf.write(bad, z, SR, subtype="FLOAT")
    code, out, err = cli("pitch", bad)
    assert code == 3 and out == "" and err.startswith("error:")
    code, out, err = cli("pitch", bad, "--fix-nonfinite", "--jsonl")
    assert code == 0 and json.loads(out)["f0_median_hz"] == pytest.approx(200.0, rel=0.006)

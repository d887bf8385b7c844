"""``audiokit spectrum`` through the CLI: peaks and the JSON report, segments and zero padding,
phase, peak options, the .npy + sidecar against a naive ``np.fft.rfft`` reference, channels,
PNG output (file and stdout), stdin, the table/stderr split, FFT backends and the error exits.

The peak fitting itself is tested in tests/dsp/test_dft.py; here only the CLI path is checked.
Inputs are FLOAT WAV files: float32 samples, so amplitudes carry a relative rounding error of
about eps32 / sqrt(N) ~ 1e-9 (the JSON keeps 9 significant digits and 6 decimals of Hz); the
tolerances below are 1e-6 relative, far above that and far below any real mistake (a missing
coherent-gain or one-sided factor is 2x, a missing scalloping correction ~1 dB).
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from scipy.signal import get_window

import audiokit

SR = 8000
REL = 1e-6  # amplitude, relative (see the module docstring)
HZ = 1e-6  # frequency, Hz: the JSON's rounding
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND\xaeB`\x82"


# --------------------------------------------------------------------------- helpers


def tone(freq: float, amp: float, n: int, sr: int = SR, phase: float = 0.0, start: int = 0) -> np.ndarray:
    t = np.arange(start, start + n) / sr
    return amp * np.sin(2 * np.pi * freq * t + phase)


def write(path: Path, x: np.ndarray, sr: int = SR) -> Path:
    audiokit.write(path, np.atleast_2d(x), sr, subtype="FLOAT")
    return path


def report(cli, *args) -> dict:
    code, out, err = cli("spectrum", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def peaks_of(rep: dict, entry: int = 0) -> list[dict]:
    return rep["channels"][entry]["peaks"]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def three(tmp_path) -> Path:
    """1 s at 8 kHz: 50 Hz at 1.0, 120 Hz at 0.5, 300 Hz at 0.25 (all on bins of sr/N = 1 Hz)."""
    x = tone(50, 1.0, SR) + tone(120, 0.5, SR) + tone(300, 0.25, SR)
    return write(tmp_path / "three.wav", x)


@pytest.fixture
def stereo(tmp_path) -> Path:
    """0.5 s stereo: channel 0 holds 300 Hz at 0.5, channel 1 holds 700 Hz at 0.25."""
    n = SR // 2
    return write(tmp_path / "stereo.wav", np.stack([tone(300, 0.5, n), tone(700, 0.25, n)]))


# --------------------------------------------------------------------------- the JSON report


def test_three_tones_exact_peaks_and_axes(cli, three):
    rep = report(cli, three)
    assert (rep["sr"], rep["n"], rep["n_fft"], rep["start_s"]) == (SR, SR, SR, 0.0)
    assert rep["df"] == SR / SR and rep["nyquist"] == SR / 2
    assert rep["window"] == "hann"
    assert [entry["channel"] for entry in rep["channels"]] == [0]
    found = peaks_of(rep)
    assert len(found) == 3  # exactly these: no sidelobe or leakage reported as a peak
    for peak, (freq, amp) in zip(found, [(50, 1.0), (120, 0.5), (300, 0.25)]):  # strongest first
        assert peak["freq_hz"] == pytest.approx(freq, abs=HZ)
        assert peak["bin"] == pytest.approx(freq, abs=1e-6)  # bins of sr/n_fft = 1 Hz
        assert peak["amplitude"] == pytest.approx(amp, rel=REL)
        assert peak["dbfs"] == pytest.approx(20 * math.log10(amp), abs=1e-4)
        assert "phase" not in peak


@pytest.mark.parametrize("freq", [123.5, 1234.37])
def test_off_bin_tone_with_the_default_hann(cli, tmp_path, freq):
    # 0.5 bin off: the bin itself reads 1.42 dB low and 0.5 bin away; the reported peak must not
    path = write(tmp_path / "off.wav", tone(freq, 0.3, 2000))  # N = 2000: Δf = 4 Hz
    rep = report(cli, path)
    df = rep["df"]
    assert df == 4.0
    (peak,) = peaks_of(rep)
    assert abs(peak["freq_hz"] - freq) <= 0.02 * df
    assert abs(peak["dbfs"] - 20 * math.log10(0.3)) <= 0.5


# --------------------------------------------------------------------------- segments and zero padding


@pytest.fixture
def burst(tmp_path) -> Path:
    """1 s: 300 Hz at 0.5 throughout, plus 1000 Hz at 0.4 only in [0.5 s, 0.75 s)."""
    x = tone(300, 0.5, SR)
    x[4000:6000] += tone(1000, 0.4, 2000, start=4000)
    return write(tmp_path / "burst.wav", x)


@pytest.mark.parametrize("start, dur", [("0.5s", "0.25s"), ("4000", "250ms")])
def test_start_and_dur_select_the_segment(cli, burst, start, dur):
    rep = report(cli, burst, "--start", start, "--dur", dur)
    assert (rep["n"], rep["n_fft"], rep["df"], rep["start_s"]) == (2000, 2000, 4.0, 0.5)
    found = {round(p["freq_hz"], 3): p["amplitude"] for p in peaks_of(rep)}
    assert set(found) == {300.0, 1000.0}
    assert found[1000.0] == pytest.approx(0.4, rel=REL)
    assert found[300.0] == pytest.approx(0.5, rel=REL)


def test_bare_number_dur_asks_for_seconds(cli, burst):
    """``spectrum --dur 2`` is 2 samples (SoX users mean 2 s): analysed as asked, with the hint generate gives."""
    code, out, err = cli("spectrum", burst, "--dur", "2", "--peaks", "0", "--json")
    assert code == 0 and json.loads(out)["n"] == 2
    assert "--dur 2 means 2 samples" in err and "did you mean 2s?" in err
    code, _, err = cli("spectrum", burst, "--dur", "2000", "--peaks", "0", "--json")  # 125 ms in samples: no hint
    assert code == 0 and "did you mean" not in err


def test_the_tone_outside_the_segment_is_not_found(cli, burst):
    rep = report(cli, burst, "--dur", "0.25s")
    assert rep["n"] == 2000
    assert [round(p["freq_hz"], 3) for p in peaks_of(rep)] == [300.0]


def test_nfft_zero_pads(cli, burst):
    rep = report(cli, burst, "--start", "0.5s", "--dur", "0.25s", "--nfft", "8000")
    assert (rep["n"], rep["n_fft"], rep["df"]) == (2000, 8000, 1.0)
    found = {round(p["freq_hz"], 3): p for p in peaks_of(rep)}
    assert set(found) == {300.0, 1000.0}
    assert found[1000.0]["bin"] == pytest.approx(1000.0, abs=1e-6)  # bins of sr/n_fft now
    assert found[1000.0]["amplitude"] == pytest.approx(0.4, rel=REL)


def test_dur_past_the_end_warns_and_uses_what_exists(cli, three):
    code, out, err = cli("spectrum", three, "--start", "0.9s", "--dur", "1s", "--json")
    assert code == 0
    assert json.loads(out)["n"] == 800
    assert "runs past the end" in err and "800 samples" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dur", "1000", "--nfft", "999"], r"--nfft: 999 is shorter than the segment \(1000 samples\)"),
        (["--start", "1s"], r"--start 1s is at or beyond the end \(8000 samples\)"),
        (["--start", "9000"], r"--start 9000 is at or beyond the end"),
        (["--dur", "0"], r"--dur"),
        (["--threshold", "-5"], r"--threshold: -5.0 must be"),
        (["--min-sep", "-5"], r"--min-sep"),
        (["--peaks", "-1"], r"--peaks"),
        (["--fft", "nope"], r"'nope'.*fftw, scipy, numpy"),
        (["--window", "nope"], r"nope"),
    ],
)
def test_bad_parameters_exit_2(cli, three, args, message):
    code, out, err = cli("spectrum", three, *args)
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]  # after the |x| > 1 warning
    assert len(errors) == 1 and re.search(message, errors[0]), err


def test_missing_input_exits_3(cli, tmp_path):
    code, out, err = cli("spectrum", tmp_path / "nothing.wav")
    assert (code, out) == (3, "") and "no such file" in err


# --------------------------------------------------------------------------- phase and peak options


def test_phase_of_a_generated_sine(cli, tmp_path):
    path = tmp_path / "p.wav"
    assert cli("generate", "sine:100:0.5:0.7", "--rate", "8k", "--dur", "0.5s", "-o", path)[0] == 0
    (peak,) = peaks_of(report(cli, path, "--phase"))
    assert peak["freq_hz"] == pytest.approx(100, abs=HZ)
    assert peak["amplitude"] == pytest.approx(0.5, rel=REL)
    # sin(θ + p) = cos(θ + p - π/2): the cosine phase at the segment start
    assert peak["phase"] == pytest.approx(0.7 - math.pi / 2, abs=2e-6)
    # ... of the segment, not of the file: 10 samples later the tone has turned 2π·100·10/8000 further
    (later,) = peaks_of(report(cli, path, "--phase", "--start", "10", "--dur", "3990"))
    assert later["phase"] == pytest.approx(0.7 + 2 * math.pi * 100 * 10 / SR - math.pi / 2, abs=2e-6)


def test_threshold_drops_weak_peaks(cli, tmp_path):
    path = write(tmp_path / "weak.wav", tone(200, 1.0, SR) + tone(1000, 0.01, SR))  # second one -40 dB
    assert [round(p["freq_hz"]) for p in peaks_of(report(cli, path))] == [200, 1000]
    assert [round(p["freq_hz"]) for p in peaks_of(report(cli, path, "--threshold", "30"))] == [200]
    assert [round(p["freq_hz"]) for p in peaks_of(report(cli, path, "--threshold", "41"))] == [200, 1000]


def test_min_sep_drops_close_peaks(cli, tmp_path):
    path = write(tmp_path / "close.wav", tone(200, 1.0, SR) + tone(210, 0.5, SR))  # 10 Hz apart, Δf = 1 Hz
    both = peaks_of(report(cli, path))
    assert [round(p["freq_hz"]) for p in both] == [200, 210]
    assert both[1]["amplitude"] == pytest.approx(0.5, rel=REL)
    for sep in ("20", "20Hz"):
        assert [round(p["freq_hz"]) for p in peaks_of(report(cli, path, "--min-sep", sep))] == [200]
    assert len(peaks_of(report(cli, path, "--min-sep", "9.5"))) == 2


def test_peaks_count(cli, three):
    assert peaks_of(report(cli, three, "--peaks", "0")) == []
    assert [round(p["freq_hz"]) for p in peaks_of(report(cli, three, "--peaks", "2"))] == [50, 120]
    assert {p["method"] for p in peaks_of(report(cli, three))} == {"kernel"}  # tones: the exact-transform fit


SPEECH = Path(__file__).resolve().parents[2] / "examples" / "data" / "speech.wav"


def test_peaks_on_recorded_speech_are_stable_separated_and_bounded(cli):
    # Issue 17: on a recorded voice `--peaks 5 --min-sep 5` returned peaks 0.8 Hz apart, and the
    # strongest peak moved with K; on this segment it read 379.55 Hz 1.71 dB above the largest bin.
    args = (str(SPEECH), "--start", "1s", "--dur", "2s", "--min-sep", "5")
    runs = {k: peaks_of(report(cli, *args, "--peaks", str(k))) for k in (1, 2, 5, 6)}
    for k in (1, 2, 5):
        assert runs[k] == runs[6][:k]
    freqs = [p["freq_hz"] for p in runs[6]]
    assert min(abs(f - g) for i, f in enumerate(freqs) for g in freqs[:i]) >= 5 - 1e-6  # the JSON rounds to 1e-6 Hz
    x, sr = sf.read(SPEECH, dtype="float64", start=16000, frames=32000)
    w = get_window("hann", x.size, fftbins=True)
    largest = np.max(np.abs(np.fft.rfft(w * x))) * 2 / w.sum()  # the largest bin, as the report scales amplitudes
    assert max(p["amplitude"] for p in runs[6]) <= largest * 10 ** (1.4243 / 20)  # Hann's worst scalloping loss
    assert {p["method"] for p in runs[6]} <= {"kernel", "quadratic-log", "none"}


# --------------------------------------------------------------------------- --npy


def reference(x: np.ndarray, n_fft: int | None = None) -> np.ndarray:
    """Naive one-sided amplitude and phase: c_k·|rfft(w·x)|/sum(w), periodic Hann."""
    n = x.shape[-1]
    n_fft = n_fft or n
    w = get_window("hann", n, fftbins=True)
    X = np.fft.rfft(x * w, n=n_fft)
    c = np.full(X.shape[-1], 2.0)
    c[0] = 1.0
    if n_fft % 2 == 0:
        c[-1] = 1.0
    return c * np.abs(X) / w.sum(), np.angle(X)


def test_npy_rows_and_sidecar(cli, three, tmp_path):
    npy = tmp_path / "spec.npy"
    code, out, err = cli("spectrum", three, "--dur", "1000", "--nfft", "1024", "--npy", npy, "--phase")
    assert code == 0 and out.splitlines()[-2:] == [str(npy), str(tmp_path / "spec.json")] and "wrote" not in err
    data = np.load(npy)
    assert data.dtype == np.float64 and data.shape == (3, 513)
    x = sf.read(three, dtype="float64")[0][:1000]
    amp, phase = reference(x, 1024)
    np.testing.assert_array_equal(data[0], np.arange(513) * SR / 1024)
    np.testing.assert_allclose(data[1], amp, rtol=0, atol=1e-12 * amp.max())
    strong = amp > 1e-3 * amp.max()  # the phase of a near-zero bin is rounding noise
    np.testing.assert_allclose(data[2][strong], phase[strong], rtol=0, atol=1e-9)
    meta = json.loads(npy.with_suffix(".json").read_text())
    assert meta["kind"] == "spectrum" and meta["rows"] == ["freq_hz", "amplitude", "phase_rad"]
    assert (meta["sr"], meta["n"], meta["n_fft"], meta["df"], meta["nyquist"]) == (SR, 1000, 1024, SR / 1024, SR / 2)
    assert meta["shape"] == [3, 513] and meta["layout"] == "(rows, n_bins)" and meta["window"] == "hann"
    assert "audiokit_version" in meta and meta["freq_hz"] == "k * sr / n_fft"


def test_npy_without_phase_and_multichannel(cli, stereo, tmp_path):
    npy = tmp_path / "st.npy"
    assert cli("spectrum", stereo, "--npy", npy)[0] == 0
    data = np.load(npy)
    assert data.shape == (2, 2, 2001)  # (channels, rows, n_bins)
    amp, _ = reference(sf.read(stereo, dtype="float64", always_2d=True)[0].T)
    np.testing.assert_allclose(data[:, 1], amp, rtol=0, atol=1e-12)
    meta = json.loads(npy.with_suffix(".json").read_text())
    assert meta["rows"] == ["freq_hz", "amplitude"] and meta["layout"] == "(channels, rows, n_bins)"


def test_npy_must_end_in_npy(cli, three, tmp_path):
    code, _, err = cli("spectrum", three, "--npy", tmp_path / "spec.dat")
    assert code == 2 and "must be a file path ending in .npy" in err


# --------------------------------------------------------------------------- channels


def test_one_entry_per_channel(cli, stereo):
    rep = report(cli, stereo)
    assert [entry["channel"] for entry in rep["channels"]] == [0, 1]
    (p0,), (p1,) = peaks_of(rep, 0), peaks_of(rep, 1)
    assert (p0["freq_hz"], p1["freq_hz"]) == (pytest.approx(300, abs=HZ), pytest.approx(700, abs=HZ))
    assert (p0["amplitude"], p1["amplitude"]) == (pytest.approx(0.5, rel=REL), pytest.approx(0.25, rel=REL))


def test_channel_selects_one(cli, stereo):
    rep = report(cli, stereo, "--channel", "1")
    assert [entry["channel"] for entry in rep["channels"]] == [1]
    assert [round(p["freq_hz"]) for p in peaks_of(rep)] == [700]


def test_mix_averages_the_channels(cli, stereo):
    rep = report(cli, stereo, "--mix")
    assert [entry["channel"] for entry in rep["channels"]] == ["mix"]
    found = {round(p["freq_hz"]): p["amplitude"] for p in peaks_of(rep)}
    assert found == {300: pytest.approx(0.25, rel=REL), 700: pytest.approx(0.125, rel=REL)}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--channel", "5"], r"--channel 5: the input has 2 channel\(s\) \(0\.\.1\)"),
        (["--channel", "0", "--mix"], "exclude each other"),
    ],
)
def test_bad_channel_choice_exits_2(cli, stereo, args, message):
    code, out, err = cli("spectrum", stereo, *args)
    assert code == 2 and out == "" and re.search(message, err)


# --------------------------------------------------------------------------- PNG, stdout, stdin


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--linear"], ["--two-sided"]])  # the default: test_table_then_the_written_paths_on_stdout
def test_png_written(cli, three, tmp_path, extra):
    png = tmp_path / "s.png"
    code, out, err = cli("spectrum", three, "--dur", "400", "-o", png, "--size", "640x300", *extra)
    assert code == 0 and out.splitlines()[-1] == str(png) and "wrote" not in err
    data = png.read_bytes()
    assert png_size(data) == (640, 300) and data.endswith(PNG_END)


def test_png_to_stdout_holds_only_png_bytes(run, three):
    code, out, err = run("spectrum", three, "--dur", "400", "-o", "-", "--size", "400x200")
    assert code == 0, err
    assert out.startswith(PNG_MAGIC) and out.endswith(PNG_END)  # no table after the image
    assert png_size(out) == (400, 200)
    assert "wrote" not in err


def test_png_to_stdout_turns_the_other_paths_into_notes(run, three, tmp_path):
    npy = tmp_path / "s.npy"
    code, out, err = run("spectrum", three, "--dur", "400", "-o", "-", "--npy", npy, "--size", "400x200")
    assert code == 0 and out.startswith(PNG_MAGIC) and out.endswith(PNG_END)
    assert err.endswith(f"\nwrote {npy}\nwrote {tmp_path / 's.json'}\n")  # after the full-scale warning of `three`


def test_json_with_png_and_npy_keeps_stdout_one_json_document(cli, three, tmp_path):
    """As quantize --json and dehum --json: the report alone, no path lines after it."""
    png, npy = tmp_path / "s.png", tmp_path / "s.npy"
    code, out, err = cli("spectrum", three, "--dur", "400", "-o", png, "--npy", npy, "--size", "400x200", "--json")
    assert code == 0 and "wrote" not in err and str(png) not in err
    assert json.loads(out)["n"] == 400 and png.exists() and npy.exists()


def test_json_and_png_on_stdout_exit_2(cli, three):
    code, out, err = cli("spectrum", three, "--json", "-o", "-")
    assert (code, out) == (2, "") and "--json and -o - both write to stdout" in err


def test_stdin_wav(run, three):
    code, out, err = run("spectrum", "-", "--json", stdin=three.read_bytes())
    assert code == 0, err
    rep = json.loads(out)
    assert rep["path"] == "-" and rep["n"] == SR
    assert [(round(p["freq_hz"]), p["amplitude"]) for p in peaks_of(rep)] == [
        (50, pytest.approx(1.0, rel=REL)),
        (120, pytest.approx(0.5, rel=REL)),
        (300, pytest.approx(0.25, rel=REL)),
    ]


def test_table_then_the_written_paths_on_stdout(cli, three, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich truncates cells to the terminal width
    png, npy = tmp_path / "t.png", tmp_path / "t.npy"
    code, out, err = cli("spectrum", three, "-o", png, "--npy", npy, "--size", "400x200")
    assert code == 0
    head = out.splitlines()[0]
    assert "N = 8000 samples (n_fft 8000)" in head and "Δf = 1 Hz" in head and "Nyquist 4000 Hz" in head
    assert out.splitlines()[-3:] == [str(png), str(npy), str(tmp_path / "t.json")]  # paths are data, as in mel
    assert png_size(png.read_bytes()) == (400, 200)
    assert "wrote" not in err and str(png) not in err
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["0"]]
    assert [float(row[2]) for row in rows] == [50.0, 120.0, 300.0]  # channel, │, freq, │, amplitude ...
    assert "-0.00" not in out  # a full-scale tone reads 0.00 dBFS


def test_quiet_silences_the_notes(cli, three, tmp_path):
    code, out, err = cli("spectrum", three, "--npy", tmp_path / "q.npy", "--quiet", "--json")
    assert code == 0 and err == "" and json.loads(out)["n"] == SR


# --------------------------------------------------------------------------- FFT backends


def test_fft_backends_agree(cli, three):
    default = peaks_of(report(cli, three, "--dur", "3000"))
    assert len(default) == 3
    for backend in ("numpy", "scipy"):
        other = peaks_of(report(cli, three, "--dur", "3000", "--fft", backend))
        assert len(other) == 3
        for a, b in zip(other, default):
            assert a["freq_hz"] == pytest.approx(b["freq_hz"], abs=HZ)
            assert a["amplitude"] == pytest.approx(b["amplitude"], rel=1e-8)

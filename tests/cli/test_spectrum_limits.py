"""``audiokit spectrum`` within bounds: peak RSS under 300 MiB up to the DFT limit and at 256 channels, the refusal
beyond the limit (one line, exit 3, no output), and many channels analysed one by one as a per-channel reference does.

Memory is the child's ``ru_maxrss`` (tests/helpers/memory.py), measured from a fresh small interpreter: a child
forked from a pytest process that once held a lot would start at its parent's high-water mark.  No timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.dft import spectrum
from audiokit.dsp.peaks import find_peaks
from audiokit.pipelines.spectrum import MAX_DFT_SAMPLES
from tests.helpers.memory import RSS_LIMIT_MIB

ROOT = Path(__file__).resolve().parents[2]
SR = 48000

_MEASURE = (
    "import json, sys; from tests.helpers.memory import peak_rss_mib; m = peak_rss_mib(*sys.argv[1:]); "
    "print(json.dumps([m.returncode, m.peak_rss_mib, m.stderr]))"
)


def _measured(*args: object) -> tuple[int, float, str]:
    """``audiokit ARGS`` in a fresh process: exit status, peak RSS (MiB), stderr."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    returncode, peak, stderr = json.loads(done.stdout)
    return returncode, peak, stderr


def _tones(n: int, channels: int, seed: int) -> np.ndarray:
    """A different tone per channel plus a little noise, shape (n, channels)."""
    t = np.arange(n) / SR
    rng = np.random.default_rng(seed)
    freqs = 100.0 + 37.3 * np.arange(channels)
    return 0.5 * np.sin(2 * np.pi * np.outer(t, freqs)) + 0.01 * rng.standard_normal((n, channels))


@pytest.mark.slow
@pytest.mark.parametrize("extra", [("--json",), ("--npy", "out.npy", "--phase", "-o", "out.png")], ids=["json", "npy-png"])
def test_stereo_just_under_the_limit_is_bounded(tmp_path, extra):
    """A whole-segment DFT of MAX_DFT_SAMPLES per channel (87 s at 48 kHz), two channels: 2 096 MiB for 10 min before."""
    path = tmp_path / "long.wav"
    sf.write(path, _tones(MAX_DFT_SAMPLES, 2, 1).astype(np.float32), SR, subtype="PCM_16")
    extra = tuple(str(tmp_path / a) if a.startswith("out.") else a for a in extra)
    code, peak, err = _measured("spectrum", path, *extra)
    assert code == 0, err
    assert peak < RSS_LIMIT_MIB, f"{peak:.0f} MiB"
    if "--npy" in extra:
        data = np.load(tmp_path / "out.npy", mmap_mode="r")
        assert data.shape == (2, 3, MAX_DFT_SAMPLES // 2 + 1)
        assert (tmp_path / "out.png").stat().st_size > 0


@pytest.mark.slow
def test_256_channels_are_bounded(tmp_path):
    path = tmp_path / "wide.wav"
    sf.write(path, _tones(SR, 256, 2).astype(np.float32), SR, subtype="PCM_16")
    npy = tmp_path / "wide.npy"
    code, peak, err = _measured("spectrum", path, "--peaks", "1", "--npy", npy)
    assert code == 0, err
    assert peak < RSS_LIMIT_MIB, f"{peak:.0f} MiB"
    assert np.load(npy, mmap_mode="r").shape == (256, 2, SR // 2 + 1)


@pytest.mark.slow
def test_beyond_the_limit_is_refused_in_one_line(tmp_path):
    path = tmp_path / "too_long.wav"
    sf.write(path, np.zeros((MAX_DFT_SAMPLES + 1, 2), dtype=np.float32), SR, subtype="PCM_16")
    npy, png = tmp_path / "x.npy", tmp_path / "x.png"
    code, peak, err = _measured("spectrum", path, "--npy", npy, "-o", png)
    assert code == 3
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: ")
    assert str(MAX_DFT_SAMPLES) in err and "--start/--dur" in err
    assert not npy.exists() and not png.exists() and list(tmp_path.iterdir()) == [path]
    assert peak < 100, f"{peak:.0f} MiB: refused before reading"
    # A segment within the limit is analysed; an --nfft beyond it is a usage error naming the option.
    assert _measured("spectrum", path, "--dur", MAX_DFT_SAMPLES, "--peaks", "0")[0] == 0
    code, _, err = _measured("spectrum", path, "--dur", "1s", "--nfft", 2 * MAX_DFT_SAMPLES)
    assert code == 2 and err.count("\n") == 1 and "--nfft" in err and str(MAX_DFT_SAMPLES) in err


def _json_peak(peak) -> dict:
    """A :class:`~audiokit.dsp.peaks.Peak` as the ``--json`` report rounds it (6 decimals of Hz, 9 digits, 4 of dB)."""
    return {
        "freq_hz": round(peak.freq_hz, 6),
        "amplitude": float(f"{peak.amplitude:.9g}"),
        "dbfs": round(peak.dbfs, 4) + 0.0,
        "bin": round(peak.bin, 6),
        "phase": round(peak.phase, 6),
        "method": peak.method,
    }


@pytest.mark.slow
def test_128_channels_equal_a_per_channel_reference(tmp_path, cli):
    """128 channels x 535 samples (61.6 s before the peak fit's overhead was cut): each channel's report equals
    the DFT and the peaks of that channel alone, computed directly."""
    x = _tones(535, 128, 3)
    x[:, 5] = 0.1 * np.random.default_rng(4).standard_normal(535)  # a noise channel: many candidate peaks
    path = tmp_path / "wide.wav"
    sf.write(path, x.astype(np.float32), SR, subtype="PCM_16")
    code, out, err = cli("spectrum", path, "--json", "--phase")
    assert code == 0, err
    report = json.loads(out)
    samples, _ = sf.read(path, dtype="float64", always_2d=True)
    assert [c["channel"] for c in report["channels"]] == list(range(128))
    for c, entry in enumerate(report["channels"]):
        expected = find_peaks(spectrum(np.ascontiguousarray(samples[:, c]), sr=SR, window="hann"), k=5)
        assert entry["peaks"] == [_json_peak(p) for p in expected], f"channel {c}"
    # --channel reads that channel only and reports the same numbers
    code, out, err = cli("spectrum", path, "--json", "--phase", "--channel", 77)
    assert code == 0, err
    assert json.loads(out)["channels"] == [report["channels"][77]]

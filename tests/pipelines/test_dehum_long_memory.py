"""``audiokit dehum`` on long inputs (issue 20): the per-frame state in temporary files, the same numbers.

What grew with the length: the hum analysis keeps arrays with one value per frame (1 s frames at 4/s, 0.5 s
frames at 8/s) for every channel and harmonic -- the measurements of pass 3, their rotations, the amplitudes, the
weights, the meter's frames -- and walked them 16 rows at a time with whole-length temporaries: 620 MiB peak RSS
for 4 h of 16 kHz mono (1 h: 260).  Now an array over :data:`~audiokit.dsp.hum.spill.SPILL_BYTES` lives in an
unlinked temporary file (:func:`~audiokit.dsp.hum.spill.frame_array`), the steps walk it a few rows (or a block of
frames) at a time and drop its pages after each piece (:func:`~audiokit.dsp.hum.spill.release`).

The checks: the spilled arrays keep their values and give bit-identical analyses, outputs and reports (every
array against the in-memory run, with 1-row pieces); a temporary folder without room is exit 4 with one line and
no output; and the peak RSS of the whole command does not grow with the length (10 vs 40 minutes, ``--residual``
and ``--normalize``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
import soundfile as sf

import audiokit.dsp.hum.spill as spill
from audiokit.dsp.hum import HumMeter, HumRemover, analyze_hum, hum_levels
from audiokit.errors import ExitStatus, OutputError
from audiokit.pipelines.dehum import DehumOptions, dehum_file
from tests.helpers.memory import RSS_LIMIT_MIB, peak_rss_mib

SR = 8000


def _drifting_hum(seconds: float, channels: int, seed: int) -> np.ndarray:
    """Noise, a hum whose fundamental drifts around 50.03 Hz (4 harmonics) and a 5 s tone at 203 Hz, (channels, n)."""
    n = int(seconds * SR)
    t = np.arange(n) / SR
    phase = 2 * np.pi * np.cumsum(50.03 + 0.02 * np.sin(2 * np.pi * t / 40)) / SR
    h = 0.05 * np.sin(phase) + 0.02 * np.sin(2 * phase + 0.3) + 0.01 * np.sin(3 * phase + 1) + 0.005 * np.sin(5 * phase)
    x = 0.03 * np.random.default_rng(seed).standard_normal((channels, n)) + h * np.linspace(1, 0.5, channels)[:, None]
    x[:, n // 3 : n // 3 + 5 * SR] += 0.2 * np.sin(2 * np.pi * 203 * t[n // 3 : n // 3 + 5 * SR])
    return x


def _everything(x: np.ndarray) -> dict[str, np.ndarray]:
    """Every array of the analysis, of both removals, of the meter and of the levels."""
    a = analyze_hum(x, sr=SR, freq=None)
    out = {f: np.asarray(getattr(a, f)) for f in ("psi", "amplitudes", "weights", "frames", "noise", "level_db", "snr_db")}
    out |= {"floor_db": a.floor_db, "treated": a.treated, "dropped": np.asarray(a.dropped), "f0_track": a.f0_track}
    for method in ("subtract", "erase"):
        y = np.concatenate([y for y, _ in HumRemover(a, method).run(x[:, i : i + 20000] for i in range(0, x.shape[1], 20000))], 1)
        meter = HumMeter(a)
        for i in range(0, y.shape[1], 30000):
            meter.push(y[:, i : i + 30000])
        levels = hum_levels(a, meter)
        out |= {f"{method}.y": y, f"{method}.after": meter.finish(), f"{method}.coherent": meter.coherent()}
        out |= {f"{method}.{f}": getattr(levels, f) for f in ("before", "removed", "remaining", "other_removed", "floor")}
    return out


@pytest.fixture
def spill_everything(monkeypatch):
    """Every frame array in a temporary file, every walk one row at a time."""
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(spill, "PIECE_BYTES", 1)


# --------------------------------------------------------------------------- the store


def test_a_large_frame_array_lives_in_a_file_and_keeps_its_values_when_released(monkeypatch):
    small = spill.frame_array((2, 3, 5), complex)
    assert not spill.is_spilled(small) and not small.any()
    monkeypatch.setattr(spill, "SPILL_BYTES", 1000)
    big = spill.frame_array((2, 40, 100), complex)
    assert spill.is_spilled(big) and spill.is_spilled(big.reshape(80, 100)[3:5]) and big.dtype == np.complex128
    assert not big.any()  # zero-filled like np.zeros
    values = np.random.default_rng(1).standard_normal(big.shape) + 1j
    big[...] = values
    spill.release(big, small)
    np.testing.assert_array_equal(big, values)
    big.reshape(80, 100)[7] *= 2
    spill.release(big.reshape(80, 100)[7])
    values.reshape(80, 100)[7] *= 2
    np.testing.assert_array_equal(big, values)


def test_row_pieces_hold_whole_rows_within_the_budget(monkeypatch):
    monkeypatch.setattr(spill, "PIECE_BYTES", 2 << 20)
    n = 2_000_000 // 16  # frames of one 2 MB row
    assert spill.row_pieces(slice(16, 32), n) == [slice(i, i + 1) for i in range(16, 32)]
    assert spill.row_pieces(slice(0, 40), 1000) == [slice(0, 40)]  # 40 rows x 16 kB fit
    assert spill.row_pieces(slice(0, 40), 50_000) == [slice(i, min(i + 2, 40)) for i in range(0, 40, 2)]
    assert spill.row_pieces(slice(3, 9), 10**9, whole=True) == [slice(3, 9)]
    pieces = spill.split_rows(np.arange(5, 12), 50_000)
    assert [p.tolist() for p in pieces] == [[5, 6], [7, 8], [9, 10], [11]]


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A 64 KiB tmpfs (a real full disk), as the temporary folder; needs root."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs (a real full disk) needs root")
    disk = tmp_path / "tmp"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_no_room_for_the_frame_arrays_is_an_output_error_naming_the_folder(monkeypatch, tiny_tmpfs):
    monkeypatch.setattr(tempfile, "tempdir", str(tiny_tmpfs))
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    with pytest.raises(OutputError) as err:
        spill.frame_array((1, 40, 10_000), complex)  # 6.4 MB
    assert err.value.exit_code == ExitStatus.OUTPUT and err.value.path == str(tiny_tmpfs)
    assert "No space left" in err.value.reason and "TMPDIR" in err.value.reason
    assert list(tiny_tmpfs.iterdir()) == []


def test_dehum_without_room_for_its_temporary_files_exits_4_and_writes_nothing(cli, monkeypatch, tmp_path, tiny_tmpfs):
    path = tmp_path / "in.wav"
    sf.write(path, _drifting_hum(20.0, 1, 3).T, SR, subtype="PCM_16")
    monkeypatch.setattr(tempfile, "tempdir", str(tiny_tmpfs))
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    code, out, err = cli("dehum", path, "-o", tmp_path / "out.wav", "--residual", tmp_path / "res.wav")
    assert (code, out) == (ExitStatus.OUTPUT, "")
    assert err.count("\n") == 1 and err.startswith(f"error: {tiny_tmpfs}: ") and "No space left" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.wav", "tmp"] and list(tiny_tmpfs.iterdir()) == []


# --------------------------------------------------------------------------- the same numbers


@pytest.mark.parametrize(("seconds", "channels"), [(130.0, 2), (12.0, 2)])
def test_spilled_and_piecewise_analysis_is_bit_identical(seconds, channels, monkeypatch):
    """130 s: 521 frames (more than 512: the row-by-row path); 12 s: the banded path, rows together."""
    x = _drifting_hum(seconds, channels, 7)
    in_memory = _everything(x)
    assert analyze_hum(x, sr=SR, freq=None).found
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(spill, "PIECE_BYTES", 1)
    spilled = _everything(x)
    assert spilled.keys() == in_memory.keys()
    for name, value in in_memory.items():
        assert spilled[name].dtype == value.dtype, name
        np.testing.assert_array_equal(spilled[name], value, err_msg=name)


@pytest.mark.parametrize("method", ["subtract", "erase"])
def test_spilled_dehum_writes_the_same_bytes_and_report(method, tmp_path, monkeypatch):
    path = tmp_path / "in.wav"
    sf.write(path, 8 * _drifting_hum(132.0, 1, 11).T, SR, subtype="FLOAT")  # beyond full scale: --normalize acts

    def run(tag: str) -> tuple[bytes, bytes, str]:
        out, res = tmp_path / f"{tag}.wav", tmp_path / f"{tag}.res.wav"
        with pytest.warns(UserWarning, match="beyond full scale"):  # the input's samples (read as they are)
            result = dehum_file(
                str(path), str(out), DehumOptions(method=method, normalize=True, subtype="PCM_16"), residual=str(res)
            )
        report = {k: v for k, v in result.report.items() if k not in ("output", "residual")}
        return out.read_bytes(), res.read_bytes(), json.dumps(report, sort_keys=True)

    first = run("memory")
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(spill, "PIECE_BYTES", 1)
    second = run("spilled")
    assert json.loads(first[2])["found"] and json.loads(first[2])["gain_db"] < 0
    assert first == second


# --------------------------------------------------------------------------- peak RSS of the command


def _write_long(path, minutes: int) -> str:
    """16 kHz mono PCM_16 of hum and noise, written a minute at a time (never whole in the test's memory)."""
    sr = 16000
    with sf.SoundFile(path, "w", sr, 1, "PCM_16") as f:
        for i in range(minutes):
            t = (i * 60 * sr + np.arange(60 * sr)) / sr
            hum = 0.05 * np.sin(2 * np.pi * 50.02 * t) + 0.02 * np.sin(2 * np.pi * 100.04 * t + 0.3)
            f.write((hum + 0.05 * np.random.default_rng(i).standard_normal(t.size)).astype(np.float32))
    return str(path)


@pytest.mark.slow
def test_dehum_peak_rss_does_not_grow_with_the_length(tmp_path):
    """5 and 25 minutes of 16 kHz mono, --residual --normalize: 25 min within the bound, less than 15 MiB above 5 min.

    Before, 16 kHz mono peaked at 197 MiB for 30 min, 260 for 1 h, 620 for 4 h (~2 MiB more per minute); now 169, 171
    and 184 (what remains: one row of frames in the temporaries, the arrays below the spill threshold).
    """
    peaks = {}
    for minutes in (5, 25):
        path = _write_long(tmp_path / f"in{minutes}.wav", minutes)
        m = peak_rss_mib(
            "dehum", path, "-q", "-o", tmp_path / "out.wav", "--residual", tmp_path / "res.wav", "--normalize", timeout=1800.0
        )
        assert m.returncode == 0, m.stderr
        assert sf.info(tmp_path / "res.wav").frames == minutes * 60 * 16000
        peaks[minutes] = m.peak_rss_mib
        for name in ("out.wav", "res.wav"):
            (tmp_path / name).unlink()
        os.unlink(path)
    assert peaks[25] < RSS_LIMIT_MIB, peaks
    assert peaks[25] - peaks[5] < 15.0, f"peak RSS grew with the length: {peaks}"

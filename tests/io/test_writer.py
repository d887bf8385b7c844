"""audiokit.io.writer: quantisation, clipping, block writing, failures leave nothing behind."""

from __future__ import annotations

import errno
import io
import os
import sys
import tempfile
import warnings
from collections import namedtuple

import numpy as np
import pytest
import soundfile as sf

import audiokit
from audiokit.errors import OutputError, ParameterError
from audiokit.io import DEFAULT_SUBTYPE, WavWriter, resolve_subtype
from audiokit.io import writer as writer_module
from audiokit.io.writer import encode_block

# --- resolve_subtype ------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "source", "expected"),
    [
        ("pcm_16", None, "PCM_16"),
        ("FLOAT", "PCM_24", "FLOAT"),
        (None, "PCM_24", "PCM_24"),
        (None, "PCM_U8", "PCM_U8"),
        (None, "PCM_S8", "PCM_16"),
        (None, "VORBIS", "FLOAT"),
        (None, None, "FLOAT"),
    ],
)
def test_resolve_subtype(requested, source, expected):
    assert resolve_subtype(requested, source) == expected


def test_resolve_subtype_unknown():
    with pytest.raises(
        ParameterError, match=r"--subtype: unknown subtype 'PCM_12' \(allowed: PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT, DOUBLE\)"
    ):
        resolve_subtype("PCM_12")


def test_default_subtype_is_float():
    assert DEFAULT_SUBTYPE == "FLOAT"


# --- FLAC outputs: the subtype FLAC holds when none is requested ------------------------------------


@pytest.mark.parametrize(
    ("source", "expected", "notice"),
    [
        ("PCM_16", "PCM_16", None),
        ("PCM_24", "PCM_24", None),
        ("PCM_U8", "PCM_16", None),  # exact: no notice
        ("PCM_S8", "PCM_16", None),
        ("PCM_32", "PCM_24", "out.flac: FLAC holds at most 24 bits; writing PCM_24 (the source is PCM_32)"),
        ("FLOAT", "PCM_24", "out.flac: FLAC has no float samples; writing PCM_24"),
        ("DOUBLE", "PCM_24", "out.flac: FLAC has no float samples; writing PCM_24"),
        ("VORBIS", "PCM_24", "out.flac: FLAC has no float samples; writing PCM_24"),
        (None, "PCM_24", "out.flac: FLAC has no float samples; writing PCM_24"),
    ],
)
def test_flac_target_gets_the_subtype_flac_holds(source, expected, notice):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert resolve_subtype(None, source, target="out.flac") == expected
        assert resolve_subtype(None, source, target="OUT.FLAC") == expected
        assert resolve_subtype(None, source, target="out.wav") == resolve_subtype(None, source)  # WAV: unchanged
    assert [str(w.message) for w in caught] == ([notice, notice.replace("out.flac", "OUT.FLAC")] if notice else [])


def test_a_request_flac_cannot_hold_is_refused_not_changed(tmp_path):
    assert resolve_subtype("FLOAT", "PCM_16", target="out.flac") == "FLOAT"
    with pytest.raises(ParameterError, match=r"out\.flac: FLAC holds PCM_16 or PCM_24, not FLOAT; give --subtype"):
        audiokit.write(tmp_path / "out.flac", np.zeros(10), 16000, subtype="FLOAT")


def test_write_flac_without_subtype_is_pcm24(tmp_path, rng):
    x = rng.uniform(-0.9, 0.9, size=(2, 3000))
    path = tmp_path / "x.flac"
    with pytest.warns(UserWarning, match=r"x\.flac: FLAC has no float samples; writing PCM_24$"):
        audiokit.write(path, x, 16000)
    info = sf.info(path)
    assert (info.format, info.subtype, info.frames) == ("FLAC", "PCM_24", 3000)
    np.testing.assert_array_equal(audiokit.read(path).samples, np.rint(x * 2**23) / 2**23)


def flac_subtype_of(path) -> str:
    info = sf.info(path)
    assert info.format == "FLAC"
    return str(info.subtype)


def test_cli_generate_to_flac(cli, tmp_path):
    out = tmp_path / "b.flac"
    assert cli("generate", "noise", "-o", out) == (0, f"{out}\n", f"warning: {out}: FLAC has no float samples; writing PCM_24\n")
    assert flac_subtype_of(out) == "PCM_24"
    assert cli("generate", "noise", "-q", "-o", tmp_path / "q.flac") == (0, f"{tmp_path / 'q.flac'}\n", "")
    assert cli("generate", "noise", "--subtype", "PCM_16", "-o", tmp_path / "s.flac")[::2] == (0, "")
    assert flac_subtype_of(tmp_path / "s.flac") == "PCM_16"
    assert sf.info(tmp_path / "s.flac").frames == 16000


@pytest.mark.parametrize(("source", "expected", "warned"), [("FLOAT", "PCM_24", True), ("PCM_16", "PCM_16", False)])
def test_cli_resample_and_dehum_to_flac(cli, tmp_path, rng, source, expected, warned):
    src = tmp_path / "in.wav"
    audiokit.write(src, 0.1 * rng.standard_normal(16000), 16000, subtype=source)
    notice = "FLAC has no float samples; writing PCM_24"
    for args, out in (
        (["resample", src, "--to", "8k"], tmp_path / "r.flac"),
        (["dehum", src, "--freq", "50"], tmp_path / "d.flac"),
    ):
        code, _, err = cli(*args, "-o", out)
        assert code == 0
        assert err.splitlines().count(f"warning: {out}: {notice}") == (1 if warned else 0)
        assert (notice in err) == warned
        assert flac_subtype_of(out) == expected


def test_cli_quantize_8_bits_to_flac(cli, tmp_path, rng):
    src = tmp_path / "in.wav"
    audiokit.write(src, 0.1 * rng.standard_normal(4000), 16000)
    code, _, err = cli("quantize", src, "--bits", "8", "-o", tmp_path / "q.flac")
    assert code == 0 and "FLAC" not in err
    assert flac_subtype_of(tmp_path / "q.flac") == "PCM_16"  # the 8-bit codes, exactly (FLAC has no unsigned 8-bit)
    y = audiokit.read(tmp_path / "q.flac").samples
    np.testing.assert_array_equal(y, np.rint(y * 128) / 128)


# --- encode_block -------------------------------------------------------------------


def test_encode_pcm16_rounds_to_nearest_and_clips():
    x = np.array([[0.0, 0.4 / 32768, 0.6 / 32768, -0.6 / 32768, 0.5, 1.0, 1.5, -1.0, -1.5, 100 / 32768]])
    codes, clipped = encode_block(x, "PCM_16")
    assert codes.dtype == np.int16 and codes.shape == (10, 1)
    np.testing.assert_array_equal(codes[:, 0], [0, 0, 1, -1, 16384, 32767, 32767, -32768, -32768, 100])
    assert clipped == 2  # only |x| > 1 counts; 1.0 -> 32767 is the top code, not clipping


@pytest.mark.parametrize(
    ("subtype", "dtype", "shift"), [("PCM_U8", np.int16, 8), ("PCM_24", np.int32, 8), ("PCM_32", np.int32, 0)]
)
def test_encode_pcm_left_aligned(subtype, dtype, shift):
    bits = {"PCM_U8": 8, "PCM_24": 24, "PCM_32": 32}[subtype]
    half = 2 ** (bits - 1)
    q = np.array([-half, -1, 0, 1, half - 1])
    codes, clipped = encode_block((q / half)[None, :], subtype)
    assert codes.dtype == dtype and clipped == 0
    np.testing.assert_array_equal(codes[:, 0].astype(np.int64), q << shift)


def test_encode_interleaves_channels():
    x = np.array([[0.25, 0.5], [-0.25, -0.5]])
    codes, _ = encode_block(x, "PCM_16")
    np.testing.assert_array_equal(codes, [[8192, -8192], [16384, -16384]])
    assert codes.flags.c_contiguous


@pytest.mark.parametrize(("subtype", "dtype"), [("FLOAT", np.float32), ("DOUBLE", np.float64)])
def test_encode_float_keeps_values(subtype, dtype):
    x = np.array([[1.5, -3.0, 0.1]])
    data, clipped = encode_block(x, subtype)
    assert data.dtype == dtype and clipped == 0
    np.testing.assert_array_equal(data[:, 0], x[0].astype(dtype))


# --- clipping warnings ----------------------------------------------------------------


@pytest.mark.parametrize("subtype", ["PCM_U8", "PCM_16", "PCM_24", "PCM_32"])
def test_pcm_clipping_warns_with_count(tmp_path, subtype):
    x = np.array([[0.5, 1.5, -2.0, 1.0, -1.0, 1.01]])
    path = tmp_path / "c.wav"
    with pytest.warns(
        UserWarning,
        match=rf"c\.wav: 3 samples beyond full scale were clipped to fit {subtype} \(use --subtype FLOAT to keep them\)",
    ):
        assert audiokit.write(path, x, 8000, subtype=subtype) == 3
    half = 2 ** ({"PCM_U8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32}[subtype] - 1)
    top = (half - 1) / half
    np.testing.assert_array_equal(audiokit.read(path).samples[0], [0.5, top, -1.0, top, -1.0, top])


def test_rounding_to_the_end_code_is_not_clipping():
    # -1.0000001 rounds to the bottom code itself and +1.0 to the top one: no sample is beyond the grid
    _, clipped = encode_block(np.array([[-1.0000001, 1.0, -1.0]]), "PCM_16")
    assert clipped == 0


def test_float_never_clips(tmp_path, recwarn):
    x = np.array([[1.5, -2.0]])
    assert audiokit.write(tmp_path / "f.wav", x, 8000, subtype="FLOAT") == 0
    assert not [w for w in recwarn if "clipped" in str(w.message)]


def test_clip_count_accumulates_over_blocks(tmp_path):
    with pytest.warns(UserWarning, match=r"5 samples beyond full scale"):
        with WavWriter(tmp_path / "b.wav", sr=8000, channels=2, subtype="PCM_16") as out:
            out.write(np.array([[2.0, 0.0], [0.0, -2.0]]))
            out.write(np.array([[2.0, 2.0, 0.1], [0.0, 0.0, -9.0]]))
    assert out.clipped == 5 and out.n_samples == 5


# --- WavWriter -------------------------------------------------------------------


def test_block_writing_equals_whole_writing(tmp_path, rng):
    x = rng.integers(-(2**15), 2**15, size=(2, 1000)) / 2**15
    with WavWriter(tmp_path / "blocks.wav", sr=16000, channels=2, subtype="PCM_16") as out:
        for start in range(0, 1000, 300):
            out.write(x[:, start : start + 300])
    audiokit.write(tmp_path / "whole.wav", x, 16000, subtype="PCM_16")
    assert (tmp_path / "blocks.wav").read_bytes() == (tmp_path / "whole.wav").read_bytes()
    np.testing.assert_array_equal(audiokit.read(tmp_path / "blocks.wav").samples, x)


def test_writer_rejects_wrong_shape(tmp_path):
    with pytest.raises(ValueError, match=r"block must be shaped \(2, n\), got \(3, 4\)"):
        with WavWriter(tmp_path / "s.wav", sr=8000, channels=2) as out:
            out.write(np.zeros((3, 4)))
    assert list(tmp_path.iterdir()) == []


def test_large_expected_size_switches_to_rf64(tmp_path):
    path = tmp_path / "huge.wav"
    with WavWriter(path, sr=48000, channels=1, subtype="FLOAT", expected_samples=2**30 + 1) as out:  # > 4 GiB of float32
        out.write(np.full((1, 10), 0.5))
    assert path.read_bytes()[:4] == b"RF64"
    np.testing.assert_array_equal(audiokit.read(path).samples, np.full((1, 10), 0.5))


def test_small_expected_size_stays_wav(tmp_path):
    path = tmp_path / "small.wav"
    audiokit.write(path, np.zeros((2, 10)), 8000, subtype="PCM_16")
    assert path.read_bytes()[:4] == b"RIFF"


def test_write_to_stdout(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the stdout spool goes here
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer))
    x = np.array([[0.25, -0.5, 0.0]])
    audiokit.write("-", x, 8000, subtype="PCM_16")
    data, sr = sf.read(io.BytesIO(buffer.getvalue()), always_2d=True)
    assert sr == 8000
    np.testing.assert_array_equal(data.T, x)
    assert list(tmp_path.iterdir()) == []


# --- failures: nothing is left behind ----------------------------------------------------------


def failing_write(exc: BaseException, after: int = 1):
    """A SoundFile.write that succeeds ``after`` times, then raises ``exc``."""
    real = sf.SoundFile.write
    calls = {"n": 0}

    def write(self, data):
        calls["n"] += 1
        if calls["n"] > after:
            raise exc
        return real(self, data)

    return write


def write_three_blocks(path):
    with WavWriter(path, sr=8000, channels=1, subtype="PCM_16") as out:
        for _ in range(3):
            out.write(np.full((1, 100), 0.25))


def test_disk_full_midway(tmp_path, monkeypatch):
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(OutputError, match=r"out\.wav: disk full \(no space left on device\); nothing was written$"):
        write_three_blocks(tmp_path / "out.wav")
    assert list(tmp_path.iterdir()) == []


def test_libsndfile_error_on_a_full_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(RuntimeError("short write")))
    StatVfs = namedtuple("StatVfs", "f_bavail")
    monkeypatch.setattr(writer_module.os, "statvfs", lambda folder: StatVfs(0))
    with pytest.raises(OutputError, match=r"disk full \(no space left on device\); nothing was written"):
        write_three_blocks(tmp_path / "out.wav")
    assert list(tmp_path.iterdir()) == []


def test_libsndfile_error_with_space_left(tmp_path, monkeypatch):
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(RuntimeError("short write")))
    with pytest.raises(OutputError, match=r"out\.wav: write failed: short write$"):
        write_three_blocks(tmp_path / "out.wav")
    assert list(tmp_path.iterdir()) == []


def test_failure_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "out.wav"
    path.write_bytes(b"previous content")
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(OutputError):
        write_three_blocks(path)
    assert path.read_bytes() == b"previous content"
    assert list(tmp_path.iterdir()) == [path]


def test_keyboard_interrupt_midway_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(sf.SoundFile, "write", failing_write(KeyboardInterrupt(), after=2))
    with pytest.raises(KeyboardInterrupt):
        write_three_blocks(tmp_path / "out.wav")
    assert list(tmp_path.iterdir()) == []


def test_error_in_caller_code_leaves_nothing(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with WavWriter(tmp_path / "out.wav", sr=8000, channels=1) as out:
            out.write(np.zeros((1, 10)))
            1 / 0  # noqa: B018 - the error under test
    assert list(tmp_path.iterdir()) == []


def test_failure_on_close(tmp_path, monkeypatch):
    def close(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    real_close = sf.SoundFile.close
    monkeypatch.setattr(sf.SoundFile, "close", close)
    try:
        with pytest.raises(OutputError, match=r"disk full"):
            write_three_blocks(tmp_path / "out.wav")
    finally:
        monkeypatch.setattr(sf.SoundFile, "close", real_close)
    assert list(tmp_path.iterdir()) == []


def test_libsndfile_refuses_to_open(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise sf.LibsndfileError(1, "refused: ")

    monkeypatch.setattr(writer_module.sf, "SoundFile", refuse)
    with pytest.raises(OutputError, match=r"out\.wav: cannot write WAV: refused"):
        audiokit.write(tmp_path / "out.wav", np.zeros((1, 10)), 8000)
    assert list(tmp_path.iterdir()) == []


def test_missing_folder(tmp_path):
    with pytest.raises(OutputError, match=r"cannot create a file in '.*missing'"):
        audiokit.write(tmp_path / "missing" / "out.wav", np.zeros((1, 10)), 8000)
    assert list(tmp_path.iterdir()) == []


def test_written_file_gets_normal_permissions(tmp_path):
    path = tmp_path / "perm.wav"
    audiokit.write(path, np.zeros((1, 10)), 8000)
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_refused_open_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "out.wav"
    path.write_bytes(b"previous content")

    def refuse(*args, **kwargs):
        raise sf.LibsndfileError(1, "refused: ")

    monkeypatch.setattr(writer_module.sf, "SoundFile", refuse)
    with pytest.raises(OutputError, match=r"cannot write WAV"):
        audiokit.write(path, np.zeros((1, 10)), 8000)
    assert path.read_bytes() == b"previous content"
    assert list(tmp_path.iterdir()) == [path]


def test_interrupt_while_opening_leaves_nothing(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer_module.sf, "SoundFile", interrupted)
    with pytest.raises(KeyboardInterrupt):
        audiokit.write(tmp_path / "out.wav", np.zeros((1, 10)), 8000)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("subtype", ["FLOAT", "DOUBLE"])
def test_float_wavs_are_reproducible_bytes(tmp_path, subtype):
    import time

    x = np.linspace(-1, 1, 1000)[None]
    writer_module.write(tmp_path / "a.wav", x, 8000, subtype=subtype)
    time.sleep(1.05)  # libsndfile's PEAK chunk would hold a different second now
    writer_module.write(tmp_path / "b.wav", x, 8000, subtype=subtype)
    a = (tmp_path / "a.wav").read_bytes()
    assert a == (tmp_path / "b.wav").read_bytes() and b"PEAK" not in a
    stored = x.astype(np.float32 if subtype == "FLOAT" else np.float64)
    np.testing.assert_array_equal(sf.read(tmp_path / "a.wav", dtype="float64", always_2d=True)[0].T, stored)

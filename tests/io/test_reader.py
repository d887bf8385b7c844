"""audiokit.io reading: every subtype and container, raw PCM, stdin, block reading, bad headers."""

from __future__ import annotations

import builtins
import io
import os
import pathlib
import struct
import sys
import threading
import warnings

import numpy as np
import pytest
import soundfile as sf

import audiokit
from audiokit.errors import InputError, ParameterError
from audiokit.io import RawFormat, open_audio, read
from audiokit.io import reader as reader_module
from audiokit.io.reader import READABLE
from tests.helpers.paths import TEST_DATA

PCM_BITS = {"PCM_U8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32}


def grid_signal(rng, bits: int, shape=(2, 1000)) -> tuple[np.ndarray, np.ndarray]:
    """Random codes on the B-bit grid (extremes included) and their float values q / 2**(B-1)."""
    half = 2 ** (bits - 1)
    codes = rng.integers(-half, half, size=shape, dtype=np.int64)
    codes[0, :2] = [-half, half - 1]
    return codes, codes / half


# --- round trips through audiokit.write / audiokit.read ------------------------


@pytest.mark.parametrize("subtype", list(PCM_BITS))
def test_pcm_round_trip_is_bit_exact(tmp_path, rng, subtype):
    bits = PCM_BITS[subtype]
    codes, x = grid_signal(rng, bits)
    path = tmp_path / "x.wav"
    assert audiokit.write(path, x, 22050, subtype=subtype) == 0
    sig = audiokit.read(path)
    assert sig.sr == 22050 and sig.subtype == subtype and sig.samples.dtype == np.float64
    np.testing.assert_array_equal(sig.samples, x)
    # the codes on disk, read by libsndfile itself (left-aligned in int32)
    stored = sf.read(path, dtype="int32", always_2d=True)[0].T.astype(np.int64) >> (32 - bits)
    np.testing.assert_array_equal(stored, codes)


def test_float_round_trip_is_exact_for_float32_values(tmp_path, rng):
    x = rng.uniform(-1.5, 1.5, size=(3, 777)).astype(np.float32)  # beyond full scale is kept in FLOAT
    path = tmp_path / "f.wav"
    with pytest.warns(UserWarning, match="beyond full scale"):
        audiokit.write(path, x, 48000, subtype="FLOAT")
        sig = audiokit.read(path)
        sig32 = audiokit.read(path, dtype="float32")
    assert sig.subtype == "FLOAT"
    np.testing.assert_array_equal(sig.samples, x.astype(np.float64))
    assert sig32.samples.dtype == np.float32
    np.testing.assert_array_equal(sig32.samples, x)


def test_double_round_trip_is_exact(tmp_path, rng):
    x = rng.uniform(-1, 1, size=(1, 501))
    path = tmp_path / "d.wav"
    audiokit.write(path, x, 8000, subtype="DOUBLE")
    sig = audiokit.read(path)
    assert sig.subtype == "DOUBLE"
    np.testing.assert_array_equal(sig.samples, x)


def test_one_dimensional_input_is_one_channel(tmp_path):
    x = np.arange(-4, 4) / 8
    audiokit.write(tmp_path / "m.wav", x, 8000, subtype="PCM_16")
    sig = read(tmp_path / "m.wav")
    assert sig.samples.shape == (1, 8)
    np.testing.assert_array_equal(sig.samples[0], x)


# --- containers ----------------------------------------------------------------


def test_wave_format_extensible_six_channels(tmp_path, rng):
    codes, x = grid_signal(rng, 16, shape=(6, 300))
    path = tmp_path / "six.wav"
    sf.write(path, x.T, 48000, subtype="PCM_16", format="WAVEX")
    head = path.read_bytes()[:40]
    assert head[:4] == b"RIFF" and head[12:16] == b"fmt "
    tag, channels = struct.unpack_from("<HH", head, 20)
    assert tag == 0xFFFE and channels == 6  # WAVE_FORMAT_EXTENSIBLE
    with open_audio(path) as source:
        assert (source.channels, source.n_samples, source.sr, source.subtype) == (6, 300, 48000, "PCM_16")
        np.testing.assert_array_equal(source.read().samples, x)


def test_rf64(tmp_path, rng):
    _, x = grid_signal(rng, 24, shape=(2, 400))
    path = tmp_path / "big.wav"
    sf.write(path, x.T, 96000, subtype="PCM_24", format="RF64")
    assert path.read_bytes()[:4] == b"RF64"
    with open_audio(path) as source:
        assert source.container == "RF64" and source.n_samples == 400
        np.testing.assert_array_equal(source.read().samples, x)


def test_flac_is_lossless(tmp_path, rng):
    _, x = grid_signal(rng, 16, shape=(2, 4096))
    path = tmp_path / "x.flac"
    sf.write(path, x.T, 44100, subtype="PCM_16", format="FLAC")
    with open_audio(path) as source:
        assert (source.container, source.subtype, source.n_samples) == ("FLAC", "PCM_16", 4096)
        np.testing.assert_array_equal(source.read().samples, x)


def test_ogg_vorbis(tmp_path):
    sr, n = 16000, 8000
    t = np.arange(n) / sr
    x = 0.5 * np.sin(2 * np.pi * 440 * t)
    path = tmp_path / "x.ogg"
    sf.write(path, x, sr, format="OGG", subtype="VORBIS")
    with open_audio(path) as source:
        assert (source.container, source.subtype, source.sr, source.channels) == ("OGG", "VORBIS", sr, 1)
        assert source.is_float
        y = source.read().samples[0]
    assert y.shape == (n,)
    core = slice(1000, 7000)  # lossy: compare away from the edges
    assert np.corrcoef(x[core], y[core])[0, 1] > 0.99
    assert abs(np.sqrt(np.mean(y[core] ** 2)) - 0.5 / np.sqrt(2)) < 0.02


# --- valid but unusual WAV files ----------------------------------------------------


def test_eight_bit_unsigned(craft_wav):
    stored = bytes([0, 1, 127, 128, 129, 255])
    path = craft_wav("u8.wav", stored, bits=8)
    sig = read(path)
    assert sig.subtype == "PCM_U8"
    np.testing.assert_array_equal(sig.samples[0], (np.array(list(stored)) - 128) / 128)


def test_twenty_four_bit_crafted(craft_wav):
    codes = np.array([-(2**23), -1, 0, 1, 2**23 - 1])
    data = b"".join(int(c).to_bytes(3, "little", signed=True) for c in codes)
    sig = read(craft_wav("s24.wav", data, bits=24))
    assert sig.subtype == "PCM_24"
    np.testing.assert_array_equal(sig.samples[0], codes / 2**23)


def test_odd_sized_chunk_with_pad_byte_before_data(craft_wav, wav_chunk, pcm16):
    codes = np.arange(-50, 50) * 300
    path = craft_wav("list.wav", pcm16(codes), before_data=wav_chunk(b"LIST", b"abcde"))
    raw = path.read_bytes()
    assert raw[36:44] == b"LIST\x05\x00\x00\x00" and raw[49:50] == b"\0" and raw[50:54] == b"data"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sig = read(path)
    np.testing.assert_array_equal(sig.samples[0], codes / 32768)


def test_trailing_garbage_after_data_chunk_is_ignored(craft_wav, pcm16):
    codes = np.arange(100) * 7
    path = craft_wav("trail.wav", pcm16(codes), trailing=b"GARBAGE!" * 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with open_audio(path) as source:
            assert source.n_samples == 100
            np.testing.assert_array_equal(source.read().samples[0], codes / 32768)


def test_single_sample(craft_wav, pcm16):
    sig = read(craft_wav("one.wav", pcm16([-12345])))
    assert sig.samples.shape == (1, 1)
    assert sig.samples[0, 0] == -12345 / 32768


def test_header_claiming_more_frames_warns_and_reads_what_is_there(craft_wav, pcm16):
    codes = np.arange(100)
    path = craft_wav("short.wav", pcm16(codes), claimed_bytes=2000)
    with pytest.warns(
        UserWarning, match=r"short\.wav: header claims 1000 frames but the file holds 100; reading the 100 present"
    ):
        source = open_audio(path)
    with source:
        assert source.n_samples == 100
        np.testing.assert_array_equal(source.read().samples[0], codes / 32768)


def test_zero_length_allowed_only_on_request(craft_wav):
    path = craft_wav("empty_data.wav", b"")
    with pytest.raises(InputError, match=r"no audio samples \(0 frames\)"):
        open_audio(path)
    with open_audio(path, allow_empty=True) as source:
        assert source.n_samples == 0
        assert source.read().samples.shape == (1, 0)


def test_source_attributes(tmp_path):
    path = tmp_path / "a.wav"
    audiokit.write(path, np.zeros((2, 8000)), 16000, subtype="PCM_16")
    with open_audio(path) as source:
        assert (source.name, source.sr, source.channels, source.n_samples) == (str(path), 16000, 2, 8000)
        assert (source.container, source.subtype, source.is_float, source.duration) == ("WAV", "PCM_16", False, 0.5)


# --- NaN/Inf and full scale in float files ---------------------------------------------


def float_file(path, values, subtype="FLOAT"):
    sf.write(path, np.asarray(values, dtype=np.float64), 1000, subtype=subtype)
    return path


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_nonfinite_refused_by_default(tmp_path, bad):
    values = np.zeros(3000)
    values[2500] = bad
    path = float_file(tmp_path / "bad.wav", values, "DOUBLE")
    with pytest.raises(
        InputError,
        match=r"bad\.wav: contains NaN or Inf samples \(1 in this block, first at frame 2500, 2\.5 s\); use --fix-nonfinite",
    ):
        read(path)


def test_nonfinite_replaced_by_zero_on_request(tmp_path):
    values = np.array([0.5, np.nan, -0.25, np.inf, -np.inf, 0.125])
    path = float_file(tmp_path / "bad.wav", values)
    sig = read(path, nonfinite="zero")
    np.testing.assert_array_equal(sig.samples[0], [0.5, 0, -0.25, 0, 0, 0.125])


def test_beyond_full_scale_warns_once_and_keeps_values(tmp_path):
    values = np.zeros(5000)
    values[[1000, 4000]] = [1.5, -2.0]
    path = float_file(tmp_path / "loud.wav", values)
    with pytest.warns(UserWarning) as record:
        with open_audio(path) as source:
            blocks = list(source.blocks(1024))
    messages = [str(w.message) for w in record if "full scale" in str(w.message)]
    assert messages == [f"{path}: samples beyond full scale (|x| > 1, first at 1 s); they are kept, not clipped"]
    np.testing.assert_array_equal(np.concatenate(blocks, axis=1)[0], values)


def test_pcm_at_full_scale_does_not_warn(tmp_path):
    path = tmp_path / "p.wav"
    audiokit.write(path, np.array([[-1.0, 32767 / 32768]]), 8000, subtype="PCM_16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read(path)


# --- block reading ------------------------------------------------------------------------


@pytest.mark.parametrize(("block", "overlap"), [(64, 0), (64, 16), (100, 99), (1000, 10), (5000, 100), (7, 3)])
def test_blocks_with_overlap_reassemble_the_signal(tmp_path, rng, block, overlap):
    _, x = grid_signal(rng, 16, shape=(2, 1000))
    path = tmp_path / "b.wav"
    audiokit.write(path, x, 8000, subtype="PCM_16")
    with open_audio(path) as source:
        blocks = list(source.blocks(block, overlap=overlap, dtype="float64"))
    assert all(b.shape[0] == 2 and b.flags.c_contiguous for b in blocks)
    assert all(b.shape[1] == block for b in blocks[:-1])
    for previous, current in zip(blocks, blocks[1:]):
        np.testing.assert_array_equal(current[:, :overlap], previous[:, -overlap:] if overlap else previous[:, :0])
    whole = np.concatenate([blocks[0]] + [b[:, overlap:] for b in blocks[1:]], axis=1)
    np.testing.assert_array_equal(whole, x)


@pytest.mark.parametrize(
    ("start", "frames", "expected"),
    [
        (0, None, (0, 1000)),
        (250, None, (250, 1000)),
        (250, 100, (250, 350)),
        (900, 500, (900, 1000)),
        (1000, None, (0, 0)),
        (1200, 10, (0, 0)),
    ],
)
def test_blocks_start_and_frames(tmp_path, rng, start, frames, expected):
    _, x = grid_signal(rng, 16, shape=(1, 1000))
    path = tmp_path / "s.wav"
    audiokit.write(path, x, 8000, subtype="PCM_16")
    with open_audio(path) as source:
        got = [b for b in source.blocks(64, overlap=8, dtype="float64", start=start, n_samples=frames)]
        sig = source.read(start=start, n_samples=frames)
    whole = np.concatenate([got[0]] + [b[:, 8:] for b in got[1:]], axis=1) if got else np.zeros((1, 0))
    np.testing.assert_array_equal(whole, x[:, expected[0] : expected[1]])
    np.testing.assert_array_equal(sig.samples, x[:, expected[0] : expected[1]])


def test_blocks_reject_negative_start(tmp_path):
    path = tmp_path / "n.wav"
    audiokit.write(path, np.zeros((1, 100)), 8000, subtype="PCM_16")
    with open_audio(path) as source, pytest.raises(ParameterError, match=r"start \(-1\) must be >= 0"):
        source.read(start=-1)


def test_blocks_dtype(tmp_path):
    path = tmp_path / "d.wav"
    audiokit.write(path, np.full((1, 10), 0.25), 8000, subtype="PCM_16")
    with open_audio(path) as source:
        assert next(source.blocks(4)).dtype == np.float32
        assert next(source.blocks(4, dtype="float64")).dtype == np.float64


@pytest.mark.parametrize(("block", "overlap"), [(16, 16), (16, 20), (16, -1)])
def test_blocks_reject_bad_overlap(tmp_path, block, overlap):
    path = tmp_path / "o.wav"
    audiokit.write(path, np.zeros((1, 100)), 8000, subtype="PCM_16")
    with (
        open_audio(path) as source,
        pytest.raises(ParameterError, match=rf"block_size \({block}\) must exceed overlap \({overlap}\)"),
    ):
        next(source.blocks(block, overlap=overlap))


# --- raw headerless PCM -------------------------------------------------------------------------


def raw_bytes(fmt: str, codes: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Interleaved little-endian bytes for ``codes`` (frames × channels) and the float values to expect."""
    if fmt == "s16le":
        return codes.astype("<i2").tobytes(), codes / 2**15
    if fmt == "s24le":
        flat = codes.reshape(-1)
        return b"".join(int(c).to_bytes(3, "little", signed=True) for c in flat), codes / 2**23
    if fmt == "s32le":
        return codes.astype("<i4").tobytes(), codes / 2**31
    if fmt == "u8":
        return (codes + 128).astype("u1").tobytes(), codes / 2**7
    if fmt == "f32le":
        values = codes.astype("<f4") / np.float32(2**15)
        return values.tobytes(), values.astype(np.float64)
    values = codes.astype("<f8") / 2**15
    return values.tobytes(), values


RAW_BITS = {"s16le": 16, "s24le": 24, "s32le": 32, "u8": 8, "f32le": 16, "f64le": 16}


@pytest.mark.parametrize("fmt", list(RAW_BITS))
def test_raw_pcm_file(tmp_path, rng, fmt):
    half = 2 ** (RAW_BITS[fmt] - 1)
    codes = rng.integers(-half, half, size=(300, 2))
    data, expected = raw_bytes(fmt, codes)
    path = tmp_path / "x.raw"
    path.write_bytes(data)
    with open_audio(path, raw=RawFormat(sr=16000, format=fmt, channels=2)) as source:
        assert (source.container, source.sr, source.channels, source.n_samples) == ("RAW", 16000, 2, 300)
        np.testing.assert_array_equal(source.read().samples, expected.T)


def test_raw_partial_last_frame_warns(tmp_path):
    path = tmp_path / "x.raw"
    path.write_bytes(np.arange(10, dtype="<i2").tobytes() + b"\x01\x02\x03")
    with pytest.warns(UserWarning, match=r"23 bytes is not a whole number of 4-byte frames; ignoring the last 3 bytes"):
        sig = read(path, raw=RawFormat(sr=8000, format="s16le", channels=2))
    np.testing.assert_array_equal(sig.samples, np.arange(10).reshape(5, 2).T / 32768)


def test_raw_shorter_than_one_frame(tmp_path):
    path = tmp_path / "x.raw"
    path.write_bytes(b"\x01")
    with pytest.warns(UserWarning, match="ignoring the last 1 bytes"), pytest.raises(InputError, match=r"no audio samples"):
        read(path, raw=RawFormat(sr=8000, format="s16le"))


def test_raw_format_validation():
    assert RawFormat(sr=8000, format="s24le", channels=3).frame_bytes == 9
    assert RawFormat(sr=8000, format="u8").subtype == "PCM_U8"
    with pytest.raises(
        ParameterError, match=r"--format: unknown raw PCM format 's8' \(allowed: s16le, s24le, s32le, u8, f32le, f64le\)"
    ):
        RawFormat(sr=8000, format="s8")
    with pytest.raises(ParameterError, match=r"--channels: must be >= 1, got 0"):
        RawFormat(sr=8000, format="s16le", channels=0)


def test_raw_rate_out_of_range(tmp_path):
    path = tmp_path / "x.raw"
    path.write_bytes(b"\0" * 100)
    with pytest.raises(InputError, match=r"sample rate 50 Hz is outside the accepted range 100\.\.3072000 Hz"):
        open_audio(path, raw=RawFormat(sr=50, format="s16le"))


def test_raw_too_many_channels(tmp_path):
    path = tmp_path / "x.raw"
    path.write_bytes(b"\0" * 1000)
    with pytest.raises(ParameterError, match=r"--channels: 300 is more than 256"):
        open_audio(path, raw=RawFormat(sr=8000, format="u8", channels=300))


# --- standard input (in-process: sys.stdin replaced) ------------------------------------------------


@pytest.fixture
def fake_stdin(monkeypatch):
    def feed(data: bytes) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    return feed


def test_stdin_wav_is_detected(tmp_path, rng, fake_stdin):
    _, x = grid_signal(rng, 16, shape=(2, 500))
    audiokit.write(tmp_path / "x.wav", x, 16000, subtype="PCM_16")
    fake_stdin((tmp_path / "x.wav").read_bytes())
    with open_audio("-") as source:
        assert (source.name, source.container, source.n_samples) == ("-", "WAV", 500)
        np.testing.assert_array_equal(source.read().samples, x)


def test_stdin_flac_is_detected(tmp_path, rng, fake_stdin):
    _, x = grid_signal(rng, 16, shape=(1, 500))
    sf.write(tmp_path / "x.flac", x.T, 16000, subtype="PCM_16")
    fake_stdin((tmp_path / "x.flac").read_bytes())
    np.testing.assert_array_equal(read("-").samples, x)


@pytest.mark.parametrize("fmt", ["s16le", "f32le"])
def test_stdin_raw(rng, fake_stdin, fmt):
    codes = rng.integers(-(2**15), 2**15, size=(200, 2))
    data, expected = raw_bytes(fmt, codes)
    fake_stdin(data)
    sig = read("-", raw=RawFormat(sr=16000, format=fmt, channels=2))
    np.testing.assert_array_equal(sig.samples, expected.T)


def test_stdin_garbage_without_raw_flags(fake_stdin):
    fake_stdin(b"this is not audio at all, just text\n" * 10)
    with pytest.raises(
        InputError, match=rf"^-: standard input is not {READABLE}; for raw PCM give --rate, --format and --channels$"
    ):
        read("-")


def test_stdin_empty(fake_stdin):
    fake_stdin(b"")
    with pytest.raises(InputError, match=r"^-: standard input is empty$"):
        read("-")


# --- bad inputs: one test each ----------------------------------------------------------------------


def test_missing_path(tmp_path):
    with pytest.raises(InputError, match=r"nope\.wav: no such file$"):
        read(tmp_path / "nope.wav")


def test_directory(tmp_path):
    with pytest.raises(InputError, match=r": is a directory, not an audio file$"):
        read(tmp_path)


def test_permission_denied_on_open(tmp_path, monkeypatch):
    path = tmp_path / "locked.wav"
    audiokit.write(path, np.zeros((1, 10)), 8000)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(reader_module, "open", refuse, raising=False)
    with pytest.raises(InputError, match=r"locked\.wav: permission denied$"):
        read(path)


def test_permission_denied_on_stat(tmp_path, monkeypatch):
    path = tmp_path / "hidden" / "x.wav"
    real_stat = pathlib.Path.stat

    def stat(self, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "Permission denied")
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "stat", stat)
    with pytest.raises(InputError, match=r"x\.wav: permission denied$"):
        read(path)


def test_other_open_failure(tmp_path, monkeypatch):
    path = tmp_path / "x.wav"
    path.write_bytes(b"RIFF")

    def fail(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(reader_module, "open", fail, raising=False)
    with pytest.raises(InputError, match=r"x\.wav: cannot open: Input/output error$"):
        read(path)


def test_empty_file(tmp_path):
    (tmp_path / "empty.wav").write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.wav: empty file \(0 bytes\)$"):
        read(tmp_path / "empty.wav")


def test_text_renamed_wav(tmp_path):
    (tmp_path / "notes.wav").write_text("hello, this is not audio\n" * 20)
    with pytest.raises(InputError, match=rf"notes\.wav: not a recognised audio file \({READABLE}\)$"):
        read(tmp_path / "notes.wav")


def test_riff_header_cut_short(tmp_path, craft_wav, pcm16):
    whole = craft_wav("whole.wav", pcm16(range(100))).read_bytes()
    (tmp_path / "cut.wav").write_bytes(whole[:30])  # inside the fmt chunk
    with pytest.raises(InputError, match=r"cut\.wav: unreadable or corrupt audio file \(.+\)$"):
        read(tmp_path / "cut.wav")


def test_zero_channels(craft_wav, pcm16):
    with pytest.raises(InputError, match=r"zero\.wav: header says 0 channels$"):
        read(craft_wav("zero.wav", pcm16(range(100)), channels=0))


def test_absurd_channel_count(craft_wav, pcm16):
    with pytest.raises(InputError, match=r"many\.wav: header says 5000 channels \(more than 256\); file is corrupt$"):
        read(craft_wav("many.wav", pcm16(range(10000)), channels=5000))


def test_sample_rate_zero(craft_wav, pcm16):
    with pytest.raises(InputError, match=r"sr0\.wav: header says sample rate 0 Hz$"):
        read(craft_wav("sr0.wav", pcm16(range(100)), sr=0))


def test_sample_rate_five_hz(craft_wav, pcm16):
    with pytest.raises(InputError, match=r"sr5\.wav: sample rate 5 Hz is outside the accepted range 100\.\.3072000 Hz$"):
        read(craft_wav("sr5.wav", pcm16(range(100)), sr=5))


def test_sample_rate_too_high(craft_wav, pcm16):
    with pytest.raises(InputError, match=r"sample rate 5000000 Hz is outside the accepted range"):
        read(craft_wav("fast.wav", pcm16(range(100)), sr=5_000_000))


def test_open_failure_closes_the_file(tmp_path, craft_wav, pcm16, monkeypatch):
    path = craft_wav("zero.wav", pcm16(range(100)), channels=0)
    opened = []
    real_open = builtins.open

    def tracking_open(*args, **kwargs):
        fh = real_open(*args, **kwargs)
        opened.append(fh)
        return fh

    monkeypatch.setattr(reader_module, "open", tracking_open, raising=False)
    with pytest.raises(InputError):
        read(path)
    assert len(opened) == 1 and opened[0].closed


# --- FLAC of unknown length (an encoder writing to a pipe: STREAMINFO total-samples 0) ----------------

#: File offset of STREAMINFO's 36-bit total-samples field: low nibble of byte 21, then bytes 22..25.
TOTAL_SAMPLES_AT = 21


def ffmpeg_pipe_codes() -> np.ndarray:
    """The int16 codes, shaped (2, 4000), of tests/data/ffmpeg_pipe.flac's source (see tests/data/README.md)."""
    n = np.arange(4000, dtype=np.int64)
    left = ((n * 37) % 2000 - 1000) * 24 + ((n * 2654435761) >> 7) % 4096 - 2048
    right = ((n * 53) % 1600 - 800) * -30 + (n * 40503) % 1024 - 512
    return np.stack([left, right])


def total_samples_field(data: bytes) -> int:
    return (data[TOTAL_SAMPLES_AT] & 0x0F) << 32 | int.from_bytes(data[TOTAL_SAMPLES_AT + 1 : TOTAL_SAMPLES_AT + 5], "big")


def unknown_length_flac(path: pathlib.Path, codes: np.ndarray, subtype: str) -> bytes:
    """Write ``codes`` (channels, n) as FLAC with soundfile, then zero STREAMINFO's total-samples field."""
    bits = PCM_BITS[subtype]
    sf.write(path, (codes.T << (32 - bits)).astype(np.int32), 16000, subtype=subtype, format="FLAC")
    data = bytearray(path.read_bytes())
    assert total_samples_field(data) == codes.shape[1]
    data[TOTAL_SAMPLES_AT] &= 0xF0
    data[TOTAL_SAMPLES_AT + 1 : TOTAL_SAMPLES_AT + 5] = bytes(4)
    path.write_bytes(data)
    return bytes(data)


def test_ffmpeg_pipe_flac_fixture_is_of_unknown_length():
    data = (TEST_DATA / "ffmpeg_pipe.flac").read_bytes()
    assert data[:4] == b"fLaC" and total_samples_field(data) == 0 and data[26:42] == bytes(16)  # no total, no MD5
    with sf.SoundFile(TEST_DATA / "ffmpeg_pipe.flac") as f:  # what libsndfile makes of it: unknown length, and then
        assert f.frames == 2**63 - 1
        with pytest.raises(sf.LibsndfileError, match=r"Internal psf_fseek\(\) failed"):
            f.read(5000)  # soundfile's seek to the end after a read that reached it


def test_ffmpeg_pipe_flac_reads_whole(tmp_path):
    path = TEST_DATA / "ffmpeg_pipe.flac"
    before = path.read_bytes()
    with open_audio(path) as source:
        assert (source.container, source.subtype, source.sr, source.channels, source.n_samples) == (
            "FLAC",
            "PCM_16",
            8000,
            2,
            4000,
        )
        np.testing.assert_array_equal(source.read().samples, ffmpeg_pipe_codes() / 2**15)
    assert path.read_bytes() == before  # the input is never patched


def test_ffmpeg_pipe_flac_on_stdin(fake_stdin):
    fake_stdin((TEST_DATA / "ffmpeg_pipe.flac").read_bytes())
    sig = read("-")
    assert sig.subtype == "PCM_16"
    np.testing.assert_array_equal(sig.samples, ffmpeg_pipe_codes() / 2**15)


@pytest.mark.parametrize(("subtype", "channels"), [("PCM_16", 1), ("PCM_24", 2), ("PCM_16", 3)])
def test_unknown_length_flac_reads_like_the_original(tmp_path, rng, subtype, channels):
    bits = PCM_BITS[subtype]
    codes, x = grid_signal(rng, bits, shape=(channels, 70_001))  # more than one read block, an odd length
    path = tmp_path / "piped.flac"
    unknown_length_flac(path, codes, subtype)
    with open_audio(path) as source:
        assert (source.subtype, source.channels, source.n_samples) == (subtype, channels, 70_001)
        np.testing.assert_array_equal(source.read().samples, x)
        np.testing.assert_array_equal(source.read(start=65_000, n_samples=3_000).samples, x[:, 65_000:68_000])  # seeks
        blocks = list(source.blocks(4096, overlap=1000, dtype="float64"))
        assert blocks[-1].shape[1] and sum(b.shape[1] - 1000 for b in blocks[1:]) + blocks[0].shape[1] == 70_001


def test_unknown_length_flac_on_stdin(tmp_path, rng, fake_stdin):
    codes, x = grid_signal(rng, 16, shape=(2, 5000))
    fake_stdin(unknown_length_flac(tmp_path / "piped.flac", codes, "PCM_16"))
    with open_audio("-") as source:
        assert source.n_samples == 5000
        np.testing.assert_array_equal(source.read().samples, x)


def test_unknown_length_flac_cut_short_reads_the_whole_frames(tmp_path, rng):
    codes, x = grid_signal(rng, 16, shape=(1, 40_000))
    data = unknown_length_flac(tmp_path / "piped.flac", codes, "PCM_16")
    (tmp_path / "cut.flac").write_bytes(data[: len(data) // 2])  # a pipe closed midway
    sig = read(tmp_path / "cut.flac")
    n = sig.samples.shape[1]
    assert 0 < n < 40_000 and n % 4096 == 0  # libsndfile's FLAC frames are 4096 samples: the whole ones present
    np.testing.assert_array_equal(sig.samples, x[:, :n])


# --- raw PCM flags on an input with a header ----------------------------------------------------------

#: An ID3v2.4 tag holding 16 bytes of padding (``ID3``, version 4.0, no flags, syncsafe size 16): most MP3
#: files start with a tag (ffmpeg's holds the encoder name); libsndfile's own MP3 writer adds none.
ID3_TAG = b"ID3\x04\x00\x00\x00\x00\x00\x10" + bytes(16)


def mp3_bytes(path: pathlib.Path, x: np.ndarray) -> bytes:
    sf.write(path, x, 16000, format="MP3")
    return path.read_bytes()


@pytest.mark.parametrize(
    ("name", "kind", "write"),
    [
        ("x.wav", "WAV", lambda p, x: sf.write(p, x, 16000, subtype="PCM_16")),
        ("x.flac", "FLAC", lambda p, x: sf.write(p, x, 16000, subtype="PCM_16")),
        ("x.ogg", "Ogg", lambda p, x: sf.write(p, x, 16000, subtype="VORBIS")),
        ("x.aiff", "AIFF", lambda p, x: sf.write(p, x, 16000, subtype="PCM_16")),
        ("x.mp3", "MP3 (ID3 tag)", lambda p, x: p.write_bytes(ID3_TAG + mp3_bytes(p, x))),
        ("x.rf64", "RF64 WAV", lambda p, x: sf.write(p, x, 16000, format="RF64", subtype="PCM_16")),
    ],
)
def test_raw_flags_on_a_file_with_a_header_are_refused(tmp_path, rng, name, kind, write):
    path = tmp_path / name
    write(path, 0.1 * rng.standard_normal(4000))
    read(path)  # a valid file of its kind
    with pytest.raises(InputError) as caught:
        read(path, raw=RawFormat(sr=16000, format="s16le"))
    assert str(caught.value) == (
        f"{path}: has a {kind} header, which --format/--rate/--channels would read as samples; "
        "drop those options (the header gives the format), or pass a headerless file"
    )


def test_raw_flags_on_stdin_with_a_wav_header_are_refused(tmp_path, rng, fake_stdin):
    _, x = grid_signal(rng, 16, shape=(1, 500))
    audiokit.write(tmp_path / "x.wav", x, 16000, subtype="PCM_16")
    fake_stdin((tmp_path / "x.wav").read_bytes())
    with pytest.raises(InputError, match=r"^-: has a WAV header, which --format/--rate/--channels would read as samples; drop"):
        read("-", raw=RawFormat(sr=16000, format="s16le"))


def test_headerless_bytes_of_a_wav_read_as_raw(tmp_path, rng):
    _, x = grid_signal(rng, 16, shape=(1, 500))
    audiokit.write(tmp_path / "x.wav", x, 16000, subtype="PCM_16")
    data = (tmp_path / "x.wav").read_bytes()
    (tmp_path / "x.raw").write_bytes(data[data.index(b"data") + 8 :])
    np.testing.assert_array_equal(read(tmp_path / "x.raw", raw=RawFormat(sr=16000, format="s16le")).samples, x)


# --- the other containers and encodings libsndfile reads ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "container", "subtype", "fmt", "tolerance"),
    [
        ("x.aiff", "AIFF", "PCM_16", "AIFF", 0.0),
        ("x.aifc", "AIFF", "ULAW", "AIFF", 0.02),
        ("x.au", "AU", "PCM_24", "AU", 0.0),
        ("x.caf", "CAF", "ALAC_16", "CAF", 0.0),
        ("ulaw.wav", "WAV", "ULAW", "WAV", 0.02),
        ("alaw.wav", "WAV", "ALAW", "WAV", 0.02),
        ("ima.wav", "WAV", "IMA_ADPCM", "WAV", 0.02),
        ("ms.wav", "WAV", "MS_ADPCM", "WAV", 0.02),
        ("x.w64", "W64", "PCM_16", "W64", 0.0),
        ("x.mp3", "MP3", "MPEG_LAYER_III", "MP3", None),
        ("x.opus", "OGG", "OPUS", "OGG", None),
        ("x.ogg", "OGG", "VORBIS", "OGG", None),
    ],
)
def test_other_containers_and_encodings_read(tmp_path, rng, fake_stdin, name, container, subtype, fmt, tolerance):
    """Each reads, from a file and from stdin, with its length; lossless ones exactly, companded/ADPCM ones
    within their step (mu-law/A-law/ADPCM: < 2 % of full scale for a tone of amplitude 0.3)."""
    sr = 48000 if subtype == "OPUS" else 16000
    t = np.arange(sr // 2) / sr
    codes = np.rint(0.3 * np.sin(2 * np.pi * 440 * t) * 2**15).astype(np.int16)
    path = tmp_path / name
    sf.write(path, codes, sr, subtype=subtype, format=fmt)
    for where in (path, "-"):
        if where == "-":
            fake_stdin(path.read_bytes())
        with open_audio(where) as source:
            assert (source.container, source.subtype, source.sr, source.channels) == (container, subtype, sr, 1)
            y = source.read().samples[0]
        if tolerance is None:  # lossy codecs: the encoder's delay and padding change the length; the tone stays
            assert abs(len(y) - len(t)) < sr // 10
            assert abs(np.sqrt(np.mean(y**2)) - 0.3 / np.sqrt(2)) < 0.03
        else:  # ADPCM: whole blocks (libsndfile's writer counts the last one's padding in ``fact``), and its step
            adpcm = "ADPCM" in subtype  # size adapts over the first samples of the stream
            assert len(t) <= len(y) < len(t) + (1024 if adpcm else 1)
            skip = 16 if adpcm else 0
            np.testing.assert_allclose(y[skip : len(t)], codes[skip:] / 2**15, rtol=0, atol=tolerance)


def test_adpcm_wav_length_is_its_fact_chunk(tmp_path, rng):
    """libsndfile counts whole IMA ADPCM blocks; the ``fact`` chunk holds the length (SoX writes the true one:
    32 000 where libsndfile counts 32 320; libsndfile's own writer puts the padded count there)."""
    x = 0.2 * rng.standard_normal(32_000)
    sf.write(tmp_path / "sf.wav", x, 16000, subtype="IMA_ADPCM")
    data = (tmp_path / "sf.wav").read_bytes()
    padded = struct.unpack_from("<I", data, data.index(b"fact") + 8)[0]
    assert padded > 32_000 and sf.info(tmp_path / "sf.wav").frames == padded  # soundfile's writer keeps the padding
    at = data.index(b"fact") + 8
    (tmp_path / "sox.wav").write_bytes(data[:at] + struct.pack("<I", 32_000) + data[at + 4 :])
    with open_audio(tmp_path / "sox.wav") as source:
        assert source.n_samples == 32_000
        y = source.read().samples[0]
    np.testing.assert_array_equal(y, sf.read(tmp_path / "sf.wav")[0][:32_000])
    # a file cut short holds fewer samples than its fact chunk: the ones present, with a warning
    (tmp_path / "cut.wav").write_bytes((tmp_path / "sox.wav").read_bytes()[:10_000])
    with pytest.warns(UserWarning, match=r"cut\.wav: header claims 32000 frames but the file holds \d+"):
        sig = read(tmp_path / "cut.wav")
    _, _, _, _, block_align, _, _, per_block = struct.unpack_from("<HHIIHHHH", data, data.index(b"fmt ") + 8)
    whole_blocks = (10_000 - (data.index(b"data") + 8)) // block_align
    assert sig.samples.shape[1] == whole_blocks * per_block  # not the partial block's decoded junk
    np.testing.assert_array_equal(sig.samples[0], y[: whole_blocks * per_block])


@pytest.mark.parametrize("make", ["wav", "unknown-length flac"])
def test_fifo_input_is_spooled(tmp_path, rng, make):
    """``audiokit info <(ffmpeg ... -f flac -)``: a FIFO cannot seek; it is read once into a spool, as stdin is."""
    codes, x = grid_signal(rng, 16, shape=(2, 3000))
    if make == "wav":
        audiokit.write(tmp_path / "x.wav", x, 16000, subtype="PCM_16")
        data = (tmp_path / "x.wav").read_bytes()
    else:
        data = unknown_length_flac(tmp_path / "x.flac", codes, "PCM_16")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as w:  # blocks until the reader opens the other end
            w.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        with open_audio(fifo) as source:
            assert source.n_samples == 3000
            np.testing.assert_array_equal(source.read().samples, x)
    finally:
        writer.join()

"""audiokit.io.ark: Kaldi archives read back by kaldiio, compressed bytes equal to kaldiio's, tables, cmvn.ark."""

from __future__ import annotations

import io
import sys

import kaldiio
import numpy as np
import pytest
import soundfile as sf
from kaldiio.compression_header import GlobalHeader, PerColHeader

import audiokit
from audiokit.dsp.kaldi.compute import kaldi_fbank
from audiokit.errors import OutputError, ParameterError
from audiokit.io.ark import ArkWriter, cmvn_stats, scp_line, write_matrix, write_text_table
from tests.helpers.paths import SPEECH

#: Frame counts covering the edge cases of Kaldi's compression: 0, 1-4 rows (no quartiles), 5+, long.
LENGTHS = (17, 0, 1, 3, 4, 5, 9, 250)


def members(rng: np.random.Generator, n_feats: int = 13) -> dict[str, np.ndarray]:
    """Log-mel-like float32 members (shifted per column, a constant column), one per LENGTHS entry."""
    out = {}
    for i, n in enumerate(LENGTHS):
        a = (rng.standard_normal((n, n_feats)) * 3 + np.linspace(-20, 5, n_feats)).astype(np.float32)
        a[:, 2] = -15.25
        out[f"utt-{i:02d}_é"] = a
    return out


def write_ark(path, arrays, *, compress=False, block=4):
    """Write ``arrays`` through ArkWriter in blocks of ``block`` frames (float64 blocks: the writer casts)."""
    locations = {}
    with ArkWriter(path, compress=compress) as writer:
        for key, a in arrays.items():
            sink = writer.begin(key, a.shape[0], a.shape[1])
            for first in range(0, a.shape[0], block):
                sink.write(a[first : first + block].astype(np.float64))
            locations[key] = writer.end({"id": key})
    return locations


def kaldiio_bytes(arrays, compression_method=None) -> bytes:
    """What kaldiio.save_ark writes for the same members, one call per member (an empty one uncompressed)."""
    buffer = io.BytesIO()
    for key, a in arrays.items():
        kaldiio.save_ark(buffer, {key: a}, compression_method=compression_method if a.shape[0] else None)
    return buffer.getvalue()


def half_step_bound(a: np.ndarray) -> np.ndarray:
    """Per-column worst case of method 2: half the widest code step (from kaldiio's own header maths)."""
    g = GlobalHeader.compute(a, 2)
    h = PerColHeader.compute(a, g)
    p0, p25, p75, p100 = (p[:, 0].astype(np.float64) for p in (h.p0, h.p25, h.p75, h.p100))
    return np.maximum.reduce([(p25 - p0) / 128, (p75 - p25) / 256, (p100 - p75) / 126, np.full_like(p0, g.range / 131070)])


def test_uncompressed_is_exact_and_equals_kaldiio(tmp_path, rng):
    arrays = members(rng)
    ark = tmp_path / "feats.1.ark"
    locations = write_ark(ark, arrays)
    assert ark.read_bytes() == kaldiio_bytes(arrays)
    scp = tmp_path / "feats.scp"
    write_text_table(scp, [(key, f"{ark}:{loc['offset']}") for key, loc in locations.items()])
    by_scp = kaldiio.load_scp(str(scp))
    by_ark = dict(kaldiio.load_ark(str(ark)))
    assert list(by_ark) == list(arrays)
    data = ark.read_bytes()
    for key, a in arrays.items():
        loc = locations[key]
        assert data[loc["offset"] - len(key.encode()) - 1 : loc["offset"]] == key.encode() + b" "
        assert data[loc["offset"] : loc["offset"] + 2] == b"\0B"
        assert loc["nbytes"] == 15 + 4 * a.size
        for got in (by_scp[key], by_ark[key], kaldiio.load_mat(f"{ark}:{loc['offset']}")):
            assert got.dtype == np.float32 and got.shape == a.shape
            assert np.array_equal(got, a)


def test_offsets_are_kaldiio_scp_offsets(tmp_path, rng):
    arrays = members(rng)
    ours = write_ark(tmp_path / "a.ark", arrays)
    kaldiio.save_ark(str(tmp_path / "b.ark"), arrays, scp=str(tmp_path / "b.scp"))
    theirs = dict(line.split() for line in (tmp_path / "b.scp").read_text().splitlines())
    assert {key: f"{tmp_path / 'b.ark'}:{loc['offset']}" for key, loc in ours.items()} == theirs
    assert scp_line("utt-00_é", tmp_path / "b.ark", ours["utt-00_é"]["offset"]) == f"utt-00_é {theirs['utt-00_é']}"


def test_compressed_bytes_equal_kaldiio_method_2_and_decode_within_bound(tmp_path, rng):
    arrays = members(rng)
    ark = tmp_path / "feats.ark"
    locations = write_ark(ark, arrays, compress=True, block=3)
    assert ark.read_bytes() == kaldiio_bytes(arrays, compression_method=2)
    assert (ark.read_bytes()[locations["utt-00_é"]["offset"] :]).startswith(b"\0BCM ")
    scp = tmp_path / "feats.scp"
    write_text_table(scp, [(key, f"{ark}:{loc['offset']}") for key, loc in locations.items()])
    decoded = kaldiio.load_scp(str(scp))
    for key, a in arrays.items():
        got = decoded[key]
        assert got.shape == a.shape and got.dtype == np.float32
        if a.shape[0] == 0:
            continue
        err = np.abs(got.astype(np.float64) - a).max(axis=0)
        slack = 4 * np.finfo(np.float32).eps * np.abs(a).max()
        assert np.all(err <= half_step_bound(a) + slack), key
        assert err.max() <= (a.max() - a.min()) / 126 + slack, key


def speech_log_mels() -> dict[str, np.ndarray]:
    """Time-major log-mels of examples/data/speech.wav: audiokit's default (dB) and Kaldi fbank, 80 bins."""
    y, sr = sf.read(SPEECH, dtype="float64")
    return {
        "db": np.ascontiguousarray(audiokit.log_melspectrogram(y, sr=sr).T, dtype=np.float32),
        "ln": kaldi_fbank(y, sr=sr, num_mel_bins=80).astype(np.float32),
    }


@pytest.mark.filterwarnings("ignore::audiokit.dsp.mel.DuplicateBandsWarning")  # 80 bands at n_fft 400, 16 kHz
def test_compressed_error_on_real_log_mel_is_the_documented_one(tmp_path):
    arrays = speech_log_mels()
    ark = tmp_path / "feats.ark"
    write_ark(ark, arrays, compress=True, block=100)
    assert ark.read_bytes() == kaldiio_bytes(arrays, compression_method=2)
    assert ark.stat().st_size < 1.05 * sum(a.size for a in arrays.values())  # about one byte per value
    decoded = dict(kaldiio.load_ark(str(ark)))
    documented = {"db": 0.65, "ln": 0.15}  # the module docstring: 0.645 dB and 0.143 measured
    for key, a in arrays.items():
        err = np.abs(decoded[key].astype(np.float64) - a)
        assert err.max() <= (a.max() - a.min()) / 126
        assert err.max() <= documented[key]
        assert err.max() > documented[key] / 2  # the stated figure is the measured one, not a loose guess


@pytest.mark.parametrize("compress", [False, True])
def test_drop_then_more_members_equals_a_file_without_the_dropped_one(tmp_path, rng, compress):
    arrays = members(rng)
    keys = list(arrays)
    with ArkWriter(tmp_path / "dropped.ark", compress=compress) as writer:
        for i, key in enumerate(keys):
            if i == 3:
                sink = writer.begin("broken", 40, arrays[key].shape[1])
                sink.write(arrays[keys[-1]][:20])
                writer.drop()
            sink = writer.begin(key, *arrays[key].shape)
            sink.write(arrays[key])
            writer.end({})
        writer.begin("last-broken", 5, 13).write(np.zeros((2, 13)))
        writer.drop()
    write_ark(tmp_path / "clean.ark", arrays, compress=compress)
    assert (tmp_path / "dropped.ark").read_bytes() == (tmp_path / "clean.ark").read_bytes()


@pytest.mark.parametrize("compress", [False, True])
def test_an_exception_leaves_no_file_and_no_temp(tmp_path, rng, compress):
    arrays = members(rng)
    with pytest.raises(RuntimeError, match="input failed"):
        with ArkWriter(tmp_path / "feats.ark", compress=compress) as writer:
            for key, a in arrays.items():
                writer.begin(key, *a.shape).write(a)
                writer.end({})
            raise RuntimeError("input failed")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("compress", [False, True])
def test_a_short_member_is_an_output_error_and_leaves_nothing(tmp_path, compress):
    with pytest.raises(OutputError, match="got 9 frames, expected 10"):
        with ArkWriter(tmp_path / "feats.ark", compress=compress) as writer:
            writer.begin("a", 10, 4).write(np.zeros((9, 4)))
            writer.end({})
    assert list(tmp_path.iterdir()) == []


def test_too_many_rows_a_wrong_width_and_an_unended_member_are_output_errors(tmp_path):
    with pytest.raises(OutputError, match="got 11 frames, expected 10"):
        with ArkWriter(tmp_path / "feats.ark") as writer:
            writer.begin("a", 10, 4).write(np.zeros((11, 4)))
    with pytest.raises(OutputError, match=r"shaped \(3, 5\)"):
        with ArkWriter(tmp_path / "feats.ark") as writer:
            writer.begin("a", 10, 4).write(np.zeros((3, 5)))
    with pytest.raises(OutputError, match="begun but not ended"):
        with ArkWriter(tmp_path / "feats.ark") as writer:
            writer.begin("a", 2, 4).write(np.zeros((2, 4)))
    assert list(tmp_path.iterdir()) == []


def test_non_finite_values_cannot_be_compressed(tmp_path):
    a = np.zeros((10, 3), np.float32)
    a[4, 1] = np.nan
    with pytest.raises(OutputError, match="NaN or infinity"):
        with ArkWriter(tmp_path / "feats.ark", compress=True) as writer:
            writer.begin("a", 10, 3).write(a)
            writer.end({})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("key", ["has space", "tab\there", "", "new\nline", "nbsp\u00a0x", "bell\x07"])
def test_a_key_that_is_not_a_kaldi_token_is_refused_by_name(tmp_path, key):
    with pytest.raises(ParameterError, match="is not a Kaldi key") as info:
        with ArkWriter(tmp_path / "feats.ark") as writer:
            writer.begin(key, 1, 1)
    assert repr(key) in str(info.value)
    with pytest.raises(ParameterError, match="is not a Kaldi key"):
        write_text_table(tmp_path / "utt2spk", [(key, "spk")])
    assert list(tmp_path.iterdir()) == []


def test_float16_and_unknown_dtypes_are_refused():
    with pytest.raises(ParameterError, match="Kaldi has no float16 matrix"):
        ArkWriter("feats.ark", dtype="float16")
    with pytest.raises(ParameterError, match="float64"):
        ArkWriter("feats.ark", dtype="float64")


def test_compress_without_kaldiio_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "kaldiio", None)  # what `import kaldiio` meets when it is not installed
    with pytest.raises(ParameterError, match=r"--compress needs kaldiio: pip install 'audiokit\[stores\]'"):
        ArkWriter("feats.ark", compress=True)
    ArkWriter("feats.ark")  # uncompressed archives need no kaldiio


def test_cmvn_stats_in_kaldi_layout_written_as_a_global_cmvn_ark(tmp_path, rng):
    feats = rng.standard_normal((300, 5)) * 2 + 7
    stats = cmvn_stats(feats.shape[0], feats.sum(axis=0), (feats**2).sum(axis=0))
    assert stats.shape == (2, 6) and stats.dtype == np.float64
    assert np.array_equal(stats[0], [*feats.sum(axis=0), 300.0])
    assert np.array_equal(stats[1], [*(feats**2).sum(axis=0), 0.0])
    path = tmp_path / "cmvn.ark"
    write_matrix(path, stats)
    kaldiio.save_mat(str(tmp_path / "theirs.ark"), stats)
    assert path.read_bytes() == (tmp_path / "theirs.ark").read_bytes()
    assert path.read_bytes().startswith(b"\0BDM ")
    back = kaldiio.load_mat(str(path))
    assert back.dtype == np.float64 and np.array_equal(back, stats)
    # what Kaldi's apply-cmvn derives from it: the mean and variance of the frames
    count = back[0, -1]
    assert np.allclose(back[0, :-1] / count, feats.mean(axis=0))
    assert np.allclose(back[1, :-1] / count - (back[0, :-1] / count) ** 2, feats.var(axis=0))
    with pytest.raises(ParameterError, match="2-D"):
        write_matrix(tmp_path / "bad.ark", np.zeros(3))


def test_text_tables_are_sorted_in_byte_order_and_atomic(tmp_path):
    path = tmp_path / "utt2dur"
    write_text_table(path, [("b", 2.5), ("a-2", 0.1 + 0.2), ("B", 3), ("é", "x"), ("a", np.float32(1.25))])
    assert path.read_text(encoding="utf-8") == "B 3\na 1.25\na-2 0.30000000000000004\nb 2.5\né x\n"
    spk2utt = tmp_path / "spk2utt"
    write_text_table(spk2utt, [("s2", ["u3"]), ("s1", ("u1", "u2"))])
    assert spk2utt.read_text() == "s1 u1 u2\ns2 u3\n"
    with pytest.raises(ParameterError, match="appears twice"):
        write_text_table(tmp_path / "dup", [("a", 1), ("a", 2)])
    with pytest.raises(ParameterError, match="line break"):
        write_text_table(tmp_path / "nl", [("a", "x\ny")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spk2utt", "utt2dur"]

"""``-o -`` on a pipe streams the WAV as it is produced (placeholder sizes, as SoX writes it); the samples are the
same as in the file the command writes, and audiokit reads such a stream back without complaint."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
import soundfile as sf

import audiokit


@pytest.mark.parametrize("subtype", ["PCM_U8", "PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE"])
def test_streamed_wav_holds_the_file_samples(run, tmp_path, subtype):
    src = tmp_path / "x.wav"
    audiokit.write(src, 0.5 * np.random.default_rng(4).uniform(-1, 1, (2, 3001)), 16000, subtype="FLOAT")
    code, _, err = run("resample", src, "--to", "8k", "--subtype", subtype, "-o", tmp_path / "file.wav")
    assert code == 0, err
    code, streamed, err = run("resample", src, "--to", "8k", "--subtype", subtype, "-o", "-")
    assert code == 0, err
    assert streamed[:4] == b"RIFF" and struct.unpack_from("<I", streamed, 4)[0] == 0xFFFFFFFF
    data_at = streamed.index(b"data")
    assert struct.unpack_from("<I", streamed, data_at + 4)[0] == 0xFFFFFFFF
    want, sr = sf.read(tmp_path / "file.wav", dtype="float64", always_2d=True)
    got, sr2 = sf.read(io.BytesIO(streamed), dtype="float64", always_2d=True)
    assert sr == sr2 == 8000
    np.testing.assert_array_equal(got, want)


def test_a_streamed_wav_reads_back_without_warnings(run, tmp_path):
    code, streamed, err = run("generate", "sine:440", "--dur", "0.5s", "--subtype", "PCM_16")
    assert code == 0, err
    code, out, err = run("info", "-", "--json", stdin=streamed)
    assert code == 0 and err == ""
    assert b'"frames": 8000' in out

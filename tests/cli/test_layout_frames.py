"""``--layout frames``: the single-file ``.npy`` time-major, ``(n_frames, n_rows)``, with the same bytes as the
default ``(n_rows, n_frames)`` (Fortran order) under a C-order header; ``istft``/``griffinlim`` read either."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.generate import generate
from tests.helpers.cli import SR, sidecar, write


@pytest.fixture
def speech_like(tmp_path):
    x = generate("sine:220 + sine:1200:0.3 + noise:0.05", n_samples=SR, sr=SR, seed=4)
    return write(tmp_path / "x.wav", x)


@pytest.mark.parametrize(
    "args",
    [["mel"], ["mfcc"], ["spectrogram"], ["mel", "--compat", "kaldi"], ["mel", "--deltas", "1"], ["mel", "--ref", "max"]],
)
def test_frames_layout_is_the_rows_layout_transposed(cli, speech_like, tmp_path, args):
    rows, frames = tmp_path / "rows.npy", tmp_path / "frames.npy"
    assert cli(*args, speech_like, "--npy", rows)[0] == 0
    code, _, err = cli(*args, speech_like, "--npy", frames, "--layout", "frames")
    assert code == 0, err
    r, f = np.load(rows), np.load(frames)
    assert f.flags.c_contiguous and f.shape == r.shape[::-1]
    np.testing.assert_array_equal(f, r.T)
    header = 128  # both headers are padded to 128 bytes: the data bytes are the same
    assert rows.read_bytes()[header:] == frames.read_bytes()[header:]
    meta = sidecar(frames)
    assert meta["layout"] == "(n_frames, n_rows)" and meta["shape"] == list(f.shape)
    assert sidecar(rows)["layout"] == "(n_rows, n_frames)"


def test_multichannel_frames_layout(cli, tmp_path):
    x = np.concatenate([generate("sine:300", n_samples=SR // 2, sr=SR), generate("noise:0.1", n_samples=SR // 2, sr=SR)])
    path = write(tmp_path / "st.wav", x)
    assert cli("mel", path, "--npy", tmp_path / "r.npy")[0] == 0
    assert cli("mel", path, "--npy", tmp_path / "f.npy", "--layout", "frames")[0] == 0
    r, f = np.load(tmp_path / "r.npy"), np.load(tmp_path / "f.npy")
    assert r.shape[0] == 2 and f.shape == r.shape[::-1]
    np.testing.assert_array_equal(f, r.T)
    assert sidecar(tmp_path / "f.npy")["layout"] == "(n_frames, n_rows, channels)"


def test_istft_and_griffinlim_read_the_frames_layout(cli, speech_like, tmp_path):
    for layout in ("rows", "frames"):
        assert cli("spectrogram", speech_like, "--complex", "--npy", tmp_path / f"c-{layout}.npy", "--layout", layout)[0] == 0
        code, _, err = cli("istft", tmp_path / f"c-{layout}.npy", "-o", tmp_path / f"i-{layout}.wav")
        assert code == 0, err
        assert (
            cli("spectrogram", speech_like, "--scale", "magnitude", "--npy", tmp_path / f"m-{layout}.npy", "--layout", layout)[0]
            == 0
        )
        code, _, err = cli("griffinlim", tmp_path / f"m-{layout}.npy", "-o", tmp_path / f"g-{layout}.wav", "--iters", "2")
        assert code == 0, err
    for kind in ("i", "g"):
        a, _ = sf.read(tmp_path / f"{kind}-rows.wav")
        b, _ = sf.read(tmp_path / f"{kind}-frames.wav")
        np.testing.assert_array_equal(a, b)


def test_frames_layout_needs_npy_and_a_known_value(cli, speech_like, tmp_path):
    code, _, err = cli("mel", speech_like, "--layout", "frames", "-o", tmp_path / "x.png")
    assert code == 2 and "--layout frames" in err and "--npy" in err
    code, _, err = cli("mel", speech_like, "--npy", tmp_path / "x.npy", "--layout", "time")
    assert code == 2 and "--layout" in err and "rows, frames" in err
    assert not (tmp_path / "x.npy").exists()

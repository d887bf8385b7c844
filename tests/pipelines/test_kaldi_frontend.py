"""The Kaldi front end of the time-frequency job (``mel``/``mfcc --compat kaldi|lhotse``): the float32 kernel, bit for bit.

Reference: :func:`audiokit.dsp.kaldi.kaldi_fbank` / ``kaldi_mfcc`` with ``dtype=np.float32`` on the whole signal read
in float64 (the kernel itself is tested against kaldi-native-fbank and a naive float64 loop in
``tests/dsp/test_kaldi.py``).  The command reads blocks of 65536 samples, as float32 where that is exact, and must
give the same bits: float32 holds every 16- and 24-bit code and float32 samples, not 32-bit codes, float64 samples
or a float32 mean of channels (``--mix``), which are read as float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.kaldi import kaldi_fbank, kaldi_mfcc
from audiokit.pipelines.kaldi_frontend import EXACT_FLOAT32_SUBTYPES, KERNEL_DTYPE

SR = 16000
N = 3 * (1 << 16) + 1234  # four read blocks, the last one short


def _write(tmp_path, subtype: str, channels: int = 1):
    rng = np.random.default_rng(7)
    x = 0.3 * rng.standard_normal((N, channels)) + 0.01  # a DC offset too
    path = tmp_path / f"in-{subtype}.wav"
    sf.write(path, x if channels > 1 else x[:, 0], SR, subtype=subtype)
    y, _ = sf.read(path, dtype="float64", always_2d=True)
    return path, y.T


def _npy(cli, tmp_path, *args) -> np.ndarray:
    out = tmp_path / "out.npy"
    code, _, err = cli(*args, "--npy", out, "-q")
    assert code == 0, err
    return np.load(out)


def test_kernel_is_float32():
    assert KERNEL_DTYPE == np.float32
    assert {"PCM_16", "PCM_24", "FLOAT"} <= EXACT_FLOAT32_SUBTYPES and not {"PCM_32", "DOUBLE"} & EXACT_FLOAT32_SUBTYPES


@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE"])
def test_mel_compat_kaldi_is_the_float32_kernel_bit_for_bit(cli, tmp_path, subtype):
    path, y = _write(tmp_path, subtype)
    ours = _npy(cli, tmp_path, "mel", path, "--compat", "kaldi", "--n-mels", "80")
    np.testing.assert_array_equal(ours.T, kaldi_fbank(y[0], sr=SR, num_mel_bins=80, dtype=np.float32))


@pytest.mark.parametrize("args, kw", [([], {}), (["--no-snip-edges", "--dither", "1", "--seed", "4"], {})])
def test_mfcc_compat_kaldi_is_the_float32_kernel_bit_for_bit(cli, tmp_path, args, kw):
    path, y = _write(tmp_path, "PCM_16")
    ours = _npy(cli, tmp_path, "mfcc", path, "--compat", "kaldi", *args)
    extra = {"snip_edges": False, "dither": 1.0, "seed": 4} if args else {}
    np.testing.assert_array_equal(ours.T, kaldi_mfcc(y[0], sr=SR, dtype=np.float32, **extra, **kw))


def test_lhotse_preset_is_the_float32_kernel_bit_for_bit(cli, tmp_path):
    """Samples as read (scale 1), 80 bands to nyquist - 400 Hz, no snip-edges, energy floor 1e-10 (compat.py)."""
    path, y = _write(tmp_path, "PCM_16")
    ours = _npy(cli, tmp_path, "mel", path, "--compat", "lhotse")
    ref = kaldi_fbank(y[0], sr=SR, num_mel_bins=80, snip_edges=False, high_freq=-400.0, sample_scale=1.0, dtype=np.float32)
    np.testing.assert_array_equal(ours.T, ref)


def test_mix_is_read_in_float64(cli, tmp_path):
    """The mean of three 16-bit channels (a third) rounds differently in float32: 3730 cells would differ."""
    path, y = _write(tmp_path, "PCM_16", channels=3)
    ours = _npy(cli, tmp_path, "mel", path, "--compat", "kaldi", "--mix")
    np.testing.assert_array_equal(ours.T, kaldi_fbank(y.mean(axis=0), sr=SR, dtype=np.float32))
    # one channel alone (--channel): float32 reads, exact
    one = _npy(cli, tmp_path, "mel", path, "--compat", "kaldi", "--channel", "1")
    np.testing.assert_array_equal(one.T, kaldi_fbank(y[1], sr=SR, dtype=np.float32))

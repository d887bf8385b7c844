"""audiokit.dsp.sparse.CsrMatrix: scipy's CSR product without importing scipy.sparse, bit for bit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from audiokit.dsp.mel import mel_filterbank
from audiokit.dsp.sparse import CsrMatrix

sparse = pytest.importorskip("scipy.sparse")


@pytest.mark.filterwarnings("ignore::audiokit.dsp.mel.DuplicateBandsWarning")  # 80 bands at n_fft 400, 16 kHz
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "sr, n_fft, n_mels, norm",
    [(16000, 400, 80, None), (22050, 1024, 40, "slaney"), (44100, 2048, 128, None), (8000, 256, 20, "slaney")],
)
def test_equals_scipy_csr_product_bit_for_bit(rng, dtype, sr, n_fft, n_mels, norm):
    fb = mel_filterbank(sr=sr, n_fft=n_fft, n_mels=n_mels, norm=norm, dtype=dtype)
    frames = (rng.standard_normal((fb.shape[1], 777)) ** 2 * 10.0 ** rng.uniform(-8, 4, 777)).astype(dtype)
    for operand in (frames, np.asfortranarray(frames), frames[:, ::3]):
        expected = sparse.csr_matrix(fb) @ operand
        got = CsrMatrix(fb) @ operand
        assert got.dtype == expected.dtype
        assert np.array_equal(got, expected)


def test_random_sparse_patterns(rng):
    for _ in range(20):
        a = rng.standard_normal((rng.integers(1, 30), rng.integers(1, 40))).astype(np.float32)
        a[rng.random(a.shape) < 0.7] = 0
        x = rng.standard_normal((a.shape[1], int(rng.integers(1, 9)))).astype(np.float32)
        assert np.array_equal(CsrMatrix(a) @ x, sparse.csr_matrix(a) @ x)
    with pytest.raises(ValueError, match="dimension mismatch"):
        CsrMatrix(np.eye(3, dtype=np.float32)) @ np.ones((4, 2), np.float32)


@pytest.mark.slow
def test_loading_the_kernel_imports_no_scipy_sparse():
    code = (
        "import sys, numpy as np; from audiokit.dsp.sparse import CsrMatrix; "
        "print((CsrMatrix(np.eye(3, dtype=np.float32)) @ np.ones((3, 2), np.float32)).sum(), "
        "'scipy.sparse' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["6.0", "False"], proc.stderr[-2000:]

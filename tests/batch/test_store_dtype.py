"""``--dtype float16``: a float16 store holds exactly the float32 store's values cast to float16, also when the chain
computes in float64 (Kaldi's front end with deltas), and its statistics are those of the stored values."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers.cli import SR, write


@pytest.mark.parametrize("args", [[], ["--compat", "kaldi", "--deltas", "2"], ["--compat", "lhotse"]])
def test_float16_store_is_the_float32_store_cast(cli, tmp_path, args):
    corpus = tmp_path / "c"
    corpus.mkdir()
    rng = np.random.default_rng(7)
    for i in range(3):
        write(corpus / f"u{i}.wav", (rng.standard_normal(SR) * 0.1).astype(np.float32))
    stores = {}
    for dtype in ("float32", "float16"):
        out = tmp_path / dtype
        code, _, err = cli("batch", "mel", *args, corpus, "--out", out, "--dtype", dtype, "-j", "1")
        assert code == 0, err
        stores[dtype] = {p.name: np.load(p) for p in sorted(out.glob("feats/*/*.npy"))}
    assert len(stores["float32"]) == 3 and stores["float16"].keys() == stores["float32"].keys()
    for name, x32 in stores["float32"].items():
        x16 = stores["float16"][name]
        assert x16.dtype == np.float16
        np.testing.assert_array_equal(x16, x32.astype(np.float16))
    stats = json.loads((tmp_path / "float16" / "stats.json").read_text())
    stored = np.concatenate([x.astype(np.float64) for x in stores["float16"].values()])
    assert stats["count"] == stored.shape[0]
    np.testing.assert_allclose(stats["sum"], stored.sum(axis=0), rtol=1e-12, atol=1e-9)

"""``memoized``: computed once per process, its warnings replayed on every call (a batch records them per input)."""

from __future__ import annotations

import warnings

from audiokit.pipelines.memo import memoized


def test_memoized_computes_once_and_replays_warnings():
    calls = []

    @memoized()
    def square(x: int) -> int:
        calls.append(x)
        warnings.warn(f"{x} is odd", UserWarning, stacklevel=2)
        return x * x

    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert square(3) == 9
        assert [str(w.message) for w in caught] == ["3 is odd"]
    assert calls == [3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert square(4) == 16 and calls == [3, 4]


def test_a_plan_warning_reaches_every_input_of_a_batch(cli, tmp_path):
    import json

    import numpy as np

    from tests.helpers.cli import SR, write

    corpus = tmp_path / "c"
    corpus.mkdir()
    for name in ("a", "b", "c"):
        write(corpus / f"{name}.wav", np.zeros(SR // 2, dtype=np.float32) + 0.01)
    code, _, err = cli("batch", "mel", corpus, "--out", tmp_path / "out", "--win", "10ms", "--hop", "20ms", "-j", "1")
    assert code == 0, err
    lines = [json.loads(line) for line in (tmp_path / "out" / "manifest.jsonl").read_text().splitlines()]
    assert len(lines) == 3
    assert all(any("longer than the window" in w for w in line["warnings"]) for line in lines)

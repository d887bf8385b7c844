"""The package layout (issue 18): each module lives in its layer, the public names keep working from there.

The drawing layer's own rules (what ``plot/`` imports, nobody else draws) are in ``tests/test_plot.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import audiokit

PACKAGE = Path(audiokit.__file__).parent


def test_signal_lives_in_io_and_stays_audiokit_signal():
    from audiokit.io import reader
    from audiokit.io.signal import Signal

    assert not (PACKAGE / "signal.py").exists()
    assert audiokit.Signal is Signal and reader.Signal is Signal


def test_corpus_lives_in_batch_and_audiokit_corpus_is_that_module():
    assert (PACKAGE / "batch" / "corpus.py").exists()
    code = (
        "import audiokit, sys\n"
        "lazy = audiokit.corpus\n"  # the attribute, without importing it (the README's audiokit.corpus.open(DIR))
        "import audiokit.corpus\n"
        "import audiokit.batch.corpus as home\n"
        "from audiokit.corpus import Corpus, open\n"
        "print(lazy is home, audiokit.corpus is home, sys.modules['audiokit.corpus'] is home, open is home.open,"
        " Corpus is home.Corpus)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent, timeout=120)
    assert proc.stdout.split() == ["True"] * 5, proc.stderr[-2000:]

"""``audiokit.corpus``, the documented name of :mod:`audiokit.batch.corpus` (reads a batch's output folder back).

``import audiokit.corpus`` and ``audiokit.corpus.open(DIR)`` give that module itself, one module object.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .batch import corpus as _corpus

if TYPE_CHECKING:
    from .batch.corpus import Corpus, Entry, open

__all__ = ["open", "Corpus", "Entry"]

sys.modules[__name__] = _corpus

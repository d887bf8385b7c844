"""Canonical FFTW wisdom: plans chosen once, shipped with the version, the same in every process.

``FFTW_ESTIMATE`` alone (no timing) is deterministic but slow for the batches the STFT runs: 512-point float32
frames read from the polyphase buffer took ~700 ns each against ~500 ns for a timed (``FFTW_MEASURE``) plan, so
the 1 h STFT benchmark ran 17 % slower.  Timed plans, on the other hand, differ from process to process (that is
what made the bytes differ).  The way out is FFTW's own: *wisdom* -- the plans a ``FFTW_PATIENT`` search chose for
the transforms audiokit's default jobs run, exported once by ``benchmarks/make_fftw_wisdom.py`` and stored in
``fftw_wisdom.json`` beside this module.  Before every plan the engine forgets whatever wisdom the process holds
and imports exactly this one (:func:`restore`), then plans with ``FFTW_ESTIMATE``: a problem the file knows gets
its stored plan, any other FFTW's estimate; neither depends on timing, on the cache or on what else ran.

The file is part of the release, like the code: a new one is a new version (it can change output bytes).  Wisdom
names FFTW's algorithms (codelets); on a CPU without the SIMD instructions they use, FFTW does not apply them and
plans by estimate instead -- still the same bytes in every process of that machine.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["WISDOM_FILE", "restore", "wisdom"]

#: The stored wisdom, a JSON object of FFTW's three export strings (double, single, long double).
WISDOM_FILE = "fftw_wisdom.json"
_KEYS = ("double", "single", "longdouble")


@lru_cache(maxsize=1)
def wisdom() -> tuple[bytes, bytes, bytes]:
    """FFTW's three wisdom strings from :data:`WISDOM_FILE` (empty strings if the file is absent)."""
    try:
        text = resources.files(__package__).joinpath(WISDOM_FILE).read_text(encoding="ascii")
    except FileNotFoundError:
        return (b"", b"", b"")
    data = json.loads(text)
    double, single, longdouble = (str(data.get(key, "")).encode("ascii") for key in _KEYS)
    return double, single, longdouble


def restore(pyfftw: Any) -> None:
    """Make the process's FFTW wisdom exactly the canonical one (forget, then import :func:`wisdom`)."""
    pyfftw.forget_wisdom()
    strings = wisdom()
    if any(strings):
        pyfftw.import_wisdom(strings)

"""Sample encodings (soundfile subtypes): their bit depths and full-scale limits, in one table.

A B-bit PCM code ``q`` stands for the value ``q / 2**(B-1)``: the grid spans
``[-1, 1 - 2**-(B-1)]``, so the largest value a B-bit file holds is
:func:`largest_code` ``= 1 - 2**-(B-1)`` of full scale.  Float subtypes hold
any value (also beyond ±1).

:func:`resolve_subtype` is the one place that picks an output's subtype: the request, else the source's, else
FLOAT, and for a ``.flac`` output without a request the nearest one FLAC holds (:func:`flac_subtype`: 16-bit
for sources of up to 16 bits, 24-bit otherwise, as SoX does), with a warning when that loses precision.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from ..errors import ParameterError

__all__ = [
    "SUBTYPE_BITS",
    "SUBTYPE_CAPACITY",
    "DEFAULT_SUBTYPE",
    "FLAC_SUBTYPES",
    "flac_subtype",
    "names_flac",
    "source_bits",
    "largest_code",
    "full_scale_limit",
    "resolve_subtype",
]

#: Subtypes audiokit writes, with their PCM bit depth (None for float).
SUBTYPE_BITS: dict[str, int | None] = {
    "PCM_U8": 8,
    "PCM_16": 16,
    "PCM_24": 24,
    "PCM_32": 32,
    "FLOAT": None,
    "DOUBLE": None,
}
#: Bits of a B-bit grid each written subtype holds exactly (FLOAT: the 24-bit float32 significand).
SUBTYPE_CAPACITY: dict[str, int] = {"PCM_U8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32, "FLOAT": 24, "DOUBLE": 53}
#: Subtype used when neither the user nor the source decides (exact for any
#: float32 signal and for values beyond full scale).
DEFAULT_SUBTYPE = "FLOAT"
#: Subtypes audiokit writes as FLAC (libsndfile's FLAC encoder takes 8/16/24-bit PCM; no float, no 32-bit).
FLAC_SUBTYPES = ("PCM_16", "PCM_24")
#: Bits per sample of every subtype a source can have that has a fixed width (reported by ``info``).
_SOURCE_BITS: dict[str, int] = {
    **{name: bits for name, bits in SUBTYPE_BITS.items() if bits},
    "PCM_S8": 8,
    "FLOAT": 32,
    "DOUBLE": 64,
}


def source_bits(subtype: str) -> int | None:
    """Bits per sample of a source subtype (32 for FLOAT, 64 for DOUBLE), None for compressed ones."""
    return _SOURCE_BITS.get(subtype)


def largest_code(bits: int) -> float:
    """Largest value on the B-bit grid, in full-scale units: ``1 - 2**-(B-1)``."""
    return 1.0 - 2.0 ** -(bits - 1)


def full_scale_limit(subtype: str) -> float:
    """Largest value a written subtype holds without clipping: :func:`largest_code` for PCM, 1.0 for float."""
    bits = SUBTYPE_BITS[subtype]
    return 1.0 if bits is None else largest_code(bits)


def names_flac(path: str | os.PathLike[str]) -> bool:
    """True when an output path asks for FLAC (a ``.flac`` name; ``-`` is WAV)."""
    text = str(path)
    return text != "-" and Path(text).suffix.lower() == ".flac"


def flac_subtype(subtype: str) -> str:
    """The subtype FLAC holds that is nearest to ``subtype``: itself, PCM_16 for <= 16-bit PCM, else PCM_24.

    PCM_U8 becomes PCM_16 (exact); PCM_32, FLOAT and DOUBLE become PCM_24 (FLAC's largest, as SoX writes).
    """
    if subtype in FLAC_SUBTYPES:
        return subtype
    bits = SUBTYPE_BITS[subtype]
    return "PCM_16" if bits is not None and bits <= 16 else "PCM_24"


def resolve_subtype(
    requested: str | None, source_subtype: str | None = None, *, target: str | os.PathLike[str] | None = None
) -> str:
    """Pick the output subtype: the request, else the source's, else FLOAT (for a FLAC ``target``: FLAC's nearest).

    A source subtype that WAV cannot hold as is (FLAC's PCM_S8, Vorbis, ...)
    maps to the nearest one we write (PCM_16 for 8-bit signed, FLOAT for lossy).
    Without a request, a ``.flac`` ``target`` gets :func:`flac_subtype` of that choice, with a warning
    (``<target>: FLAC has no float samples; writing PCM_24``) when it holds fewer bits; a request FLAC cannot
    hold is left for :func:`audiokit.io.writer.audio_container` to refuse (never changed behind the user's back).

    Raises
    ------
    ParameterError
        When ``requested`` is not one of :data:`SUBTYPE_BITS`.
    """
    if requested is not None:
        key = requested.upper()
        if key not in SUBTYPE_BITS:
            raise ParameterError(f"--subtype: unknown subtype {requested!r} (allowed: {', '.join(SUBTYPE_BITS)})")
        return key
    if source_subtype in SUBTYPE_BITS:
        chosen = source_subtype
    elif source_subtype == "PCM_S8":
        chosen = "PCM_16"
    else:
        chosen = DEFAULT_SUBTYPE
    if target is None or not names_flac(target):
        return chosen
    flac = flac_subtype(chosen)
    bits = SUBTYPE_BITS[chosen]
    if bits is None:
        warnings.warn(f"{target}: FLAC has no float samples; writing {flac}", stacklevel=2)
    elif bits > SUBTYPE_CAPACITY[flac]:
        warnings.warn(f"{target}: FLAC holds at most 24 bits; writing {flac} (the source is {chosen})", stacklevel=2)
    return flac

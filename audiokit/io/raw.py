"""Headerless PCM: the ``--format`` names and their soundfile subtypes."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError

__all__ = ["RAW_FORMATS", "RawFormat"]

#: ``--format`` name → (soundfile subtype, bytes per sample)
RAW_FORMATS: dict[str, tuple[str, int]] = {
    "s16le": ("PCM_16", 2),
    "s24le": ("PCM_24", 3),
    "s32le": ("PCM_32", 4),
    "u8": ("PCM_U8", 1),
    "f32le": ("FLOAT", 4),
    "f64le": ("DOUBLE", 8),
}


@dataclass(frozen=True)
class RawFormat:
    """How to interpret headerless little-endian PCM.

    Parameters
    ----------
    sr : int
        Sample rate in Hz.
    format : str
        One of :data:`RAW_FORMATS` (``s16le``, ``s24le``, ``s32le``, ``u8``,
        ``f32le``, ``f64le``).
    channels : int
        Interleaved channel count.
    """

    sr: int
    format: str
    channels: int = 1

    def __post_init__(self) -> None:
        if self.format not in RAW_FORMATS:
            allowed = ", ".join(RAW_FORMATS)
            raise ParameterError(f"--format: unknown raw PCM format {self.format!r} (allowed: {allowed})")
        if self.channels < 1:
            raise ParameterError(f"--channels: must be >= 1, got {self.channels}")

    @property
    def subtype(self) -> str:
        """soundfile subtype name of the samples."""
        return RAW_FORMATS[self.format][0]

    @property
    def frame_bytes(self) -> int:
        """Bytes per frame: ``channels * bytes_per_sample``."""
        return RAW_FORMATS[self.format][1] * self.channels

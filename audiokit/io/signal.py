"""The :class:`Signal` value type: samples, sample rate and source subtype."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Signal:
    """Audio samples in memory.

    Parameters
    ----------
    samples : np.ndarray, shape (channels, n), float32 or float64
        Samples in full-scale units: ±1.0 is digital full scale.
    sr : int
        Sample rate in Hz.
    subtype : str or None
        The source encoding in soundfile's names (``"PCM_16"``, ``"FLOAT"``,
        ...), or None for generated signals.
    """

    samples: np.ndarray
    sr: int
    subtype: str | None = None

    def __post_init__(self) -> None:
        if self.samples.ndim != 2:
            raise ValueError(f"samples must be shaped (channels, n), got {self.samples.shape}")

    @property
    def channels(self) -> int:
        """Number of channels (rows of ``samples``)."""
        return self.samples.shape[0]

    @property
    def n_samples(self) -> int:
        """Number of samples per channel."""
        return self.samples.shape[1]

    @property
    def duration(self) -> float:
        """Duration in seconds, ``n_samples / sr``."""
        return self.n_samples / self.sr

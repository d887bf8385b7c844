"""Output beyond full scale: the ``--normalize`` gain, clipping for PCM, and the one warning.

Shared by every job that writes a processed signal (``resample``, ``dehum``).
The rules: FLOAT/DOUBLE output keeps values beyond ±1, PCM output clips them;
either way one warning gives the peak (dBFS) and the count.  With
``--normalize`` a first pass measures the output peak; if it exceeds full
scale (1.0), every sample is multiplied by ``limit / peak`` where ``limit`` is
the largest value the output subtype holds
(:func:`audiokit.io.subtypes.full_scale_limit`: 1.0 for float,
``1 - 2**-(B-1)`` for B-bit PCM).
"""

from __future__ import annotations

import numpy as np

from ..dsp.levels import dbfs
from ..dsp.resample import measure_overshoot
from ..io.subtypes import SUBTYPE_BITS, full_scale_limit

__all__ = ["FullScaleGuard"]


class FullScaleGuard:
    """Apply the normalize gain and watch for samples beyond full scale, block by block.

    Parameters
    ----------
    subtype : str
        Output subtype (a key of :data:`~audiokit.io.subtypes.SUBTYPE_BITS`).

    Attributes
    ----------
    gain : float
        Linear gain applied to every block (1.0 unless :meth:`fit_peak` set it).
    peak : float
        Largest ``|y|`` seen by :meth:`__call__` (after the gain, before clipping).
    n_over : int
        Samples with ``|y| > 1`` seen by :meth:`__call__`.
    """

    def __init__(self, subtype: str) -> None:
        self.subtype = subtype
        self.bits = SUBTYPE_BITS[subtype]
        self.limit = full_scale_limit(subtype)
        self.gain = 1.0
        self.peak = 0.0
        self.n_over = 0

    def fit_peak(self, peak: float) -> bool:
        """Set the gain so that a signal peaking at ``peak`` fits (only when ``peak > 1``); True if it did."""
        if peak > 1.0:
            self.gain = self.limit / peak
            return True
        return False

    def __call__(self, y: np.ndarray) -> np.ndarray:
        """Scale one output block, count its overshoot, clip it when the subtype is PCM."""
        if self.gain != 1.0:
            # Computed in float64; the clip only removes a last-ulp excess of the scaled peak.
            y = np.clip(np.asarray(y, dtype=np.float64) * self.gain, -self.limit, self.limit)
        over = measure_overshoot(y)
        self.peak = max(self.peak, over.peak)
        self.n_over += over.n_over
        if self.bits is not None and over.n_over:
            # Clip here (as the writer would) so that the one warning reports it.
            y = np.clip(y, -1.0, 1.0)
        return y

    def warning(self, target: str, what: str) -> str | None:
        """The overshoot warning for ``target`` (None when nothing exceeded full scale)."""
        if not self.n_over:
            return None
        fate = f"clipped to fit {self.subtype}" if self.bits is not None else f"kept as they are in {self.subtype}"
        return (
            f"{target}: {what} exceeds full scale (peak {dbfs(self.peak):+.2f} dBFS): "
            f"{self.n_over} samples beyond ±1.0 {fate}; use --normalize to scale it down"
        )

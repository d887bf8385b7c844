"""Measure the lines of an analysis in another signal (typically the output): :class:`HumMeter`."""

from __future__ import annotations

import numpy as np

from .model import FRAME_SECONDS, HOP_SECONDS, HumAnalysis, check_block, power_db
from .track import Demodulator, Framer, decimation_factor, frame_geometry, frame_hop, frame_length, n_decimated

__all__ = ["HumMeter"]


class HumMeter:
    """Measure the lines of an analysis in another signal, block by block.

    Parameters
    ----------
    analysis : HumAnalysis

    Notes
    -----
    The same demodulation along ``Φ`` and the same 1 s frame projections as
    the analysis' pass 3: ``v_k[m] = norm_m·Σ_j G_mj d_k[j]`` (peak amplitude
    of the line in frame ``m``); ``finish()`` returns
    ``10·log10(mean_m |v_k[m]|²)`` per channel and harmonic (dB re full-scale
    sine), comparable with :attr:`HumAnalysis.level_db`.  Feed exactly
    ``analysis.n_samples`` samples.
    """

    def __init__(self, analysis: HumAnalysis):
        a = self.analysis = analysis
        self._power = np.zeros((a.channels, len(a.harmonics)))
        self._count = 0
        if len(a.harmonics) == 0:
            self._dem = None
            return
        self._decim = decimation_factor(a.sr)
        rate = a.sr / self._decim
        self._framer = Framer(
            n_samples=n_decimated(a.n_samples, self._decim), length=frame_length(FRAME_SECONDS, rate),
            hop=frame_hop(HOP_SECONDS, rate),
        )
        self._dem = Demodulator(harmonics=a.harmonics, channels=a.channels, decim=self._decim, phase=a.phase)

    def push(self, block: np.ndarray) -> None:
        """Add the next samples ``(channels, n)``."""
        block = check_block(block, self.analysis.channels)
        if self._dem is None:
            return
        frames, data = self._framer.push(self._dem.push(block))
        if frames.size:
            g, norm, _, _ = frame_geometry(self._framer, frames, self._decim, self.analysis.sr)
            v = (data * g).astype(np.complex128).sum(axis=-1) * norm
            self._power += np.sum(v.real**2 + v.imag**2, axis=-1)
            self._count += frames.size

    def finish(self) -> np.ndarray:
        """Levels, shape ``(channels, K)``, in dB re full-scale sine (``-inf`` for an exact zero)."""
        return power_db(self._power / max(self._count, 1))

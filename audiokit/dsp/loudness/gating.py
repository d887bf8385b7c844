r"""Loudness from block energies: the BS.1770-4 gated integral and the EBU Tech 3342 loudness range.

A block's energy is ``z = sum_i G_i * mean(y_i^2)`` over its samples (``y_i`` the K-weighted channel ``i``) and its
loudness ``L = -0.691 + 10 log10(z)`` LUFS (-inf for digital silence, ``z = 0``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "ABSOLUTE_GATE_LUFS",
    "LRA_HIGH",
    "LRA_LOW",
    "LRA_RELATIVE_GATE_LU",
    "RELATIVE_GATE_LU",
    "energy_to_lufs",
    "gated_integral",
    "loudness_range",
]

#: The absolute gate of BS.1770-4 and Tech 3342 (LUFS): blocks at or below it are left out.
ABSOLUTE_GATE_LUFS = -70.0
#: The relative gate of the integrated loudness (LU below the absolute-gated loudness).
RELATIVE_GATE_LU = -10.0
#: The relative gate of the loudness range (Tech 3342, LU).
LRA_RELATIVE_GATE_LU = -20.0
#: The percentiles of the gated short-term loudness whose difference is the loudness range.
LRA_LOW, LRA_HIGH = 0.10, 0.95
_OFFSET = -0.691


def energy_to_lufs(energy: np.ndarray) -> np.ndarray:
    """``-0.691 + 10 log10(energy)`` elementwise, -inf where ``energy == 0`` (no numpy warning)."""
    energy = np.asarray(energy, dtype=np.float64)
    out = np.full(energy.shape, -np.inf)
    positive = energy > 0
    out[positive] = _OFFSET + 10.0 * np.log10(energy[positive])
    return out


def _lufs(energy: float) -> float:
    return _OFFSET + 10.0 * math.log10(energy) if energy > 0 else -math.inf


def _above(energies: np.ndarray, lufs: float) -> np.ndarray:
    """The energies whose loudness exceeds ``lufs`` (compared in energy: ``z > 10^((lufs + 0.691)/10)``)."""
    return energies[energies > 10.0 ** ((lufs - _OFFSET) / 10.0)]


def gated_integral(energies: np.ndarray, relative_lu: float = RELATIVE_GATE_LU) -> tuple[float, float]:
    """The gated loudness of a set of block energies (BS.1770-4, section 2.8).

    Blocks above the absolute gate (-70 LUFS) give ``Gamma_r = L(mean z) + relative_lu``; the result is the
    loudness of the mean energy of the blocks above both gates.

    Parameters
    ----------
    energies : np.ndarray, shape (n_blocks,)
        Block energies ``z_j`` (400 ms blocks for the integrated loudness).
    relative_lu : float
        The relative gate in LU (-10 for BS.1770's integrated loudness).

    Returns
    -------
    (loudness, relative_gate) : tuple of float
        LUFS; both -inf when no block passes the absolute gate (silence, or no block at all).
    """
    loud = _above(np.asarray(energies, dtype=np.float64), ABSOLUTE_GATE_LUFS)
    if loud.size == 0:
        return -math.inf, -math.inf
    gate = _lufs(float(loud.mean())) + relative_lu
    kept = _above(loud, gate)
    return _lufs(float(kept.mean())), gate


def loudness_range(short_term: np.ndarray) -> tuple[float, float, float] | None:
    """EBU Tech 3342 loudness range of short-term (3 s) block energies.

    The blocks above the absolute gate (-70 LUFS) and above ``L(mean z) - 20 LU`` of those are sorted by loudness;
    LRA is the 95th minus the 10th percentile, the percentile ``p`` of ``n`` values being the value at index
    ``floor((n - 1) p + 0.5)`` (nearest rank, as libebur128 takes it).

    Parameters
    ----------
    short_term : np.ndarray, shape (n_blocks,)
        Short-term block energies (3 s windows every 100 ms).

    Returns
    -------
    (lra, low, high) : tuple of float, or None
        LRA in LU and the two percentiles in LUFS; None when no block passes the gates (silence, or shorter than 3 s).
    """
    loud = _above(np.asarray(short_term, dtype=np.float64), ABSOLUTE_GATE_LUFS)
    if loud.size == 0:
        return None
    kept = np.sort(_above(loud, _lufs(float(loud.mean())) + LRA_RELATIVE_GATE_LU))
    n = kept.size
    low = _lufs(float(kept[int((n - 1) * LRA_LOW + 0.5)]))
    high = _lufs(float(kept[int((n - 1) * LRA_HIGH + 0.5)]))
    return high - low, low, high

"""pYIN's observation probabilities (Mauch & Dixon 2014, as the official pYIN software and librosa 0.11 compute them).

For one frame's difference row ``d'`` (lags ``min_period + i``) with troughs ``i_1 < ... < i_m`` (see
:func:`~.difference.troughs`):

1. thresholds ``s_k = k / K`` (``k = 0 .. K``, ``K = n_thresholds``) with prior weights
   ``w_k = B(s_{k+1}) - B(s_k)``, ``B`` the beta(``a``, ``b``) CDF (``beta_parameters``);
2. for threshold ``k``, the troughs below it (``d'[i_j] < s_{k+1}``) in order, ``n_k`` of them; the ``p``-th of them
   (``p = 0 ..``) gets the Boltzmann prior ``P(p) = (1 - e^-λ) / (1 - e^(-λ n_k)) e^(-λ p)``
   (``λ = boltzmann_parameter``; smaller periods weigh more);
3. trough ``j``'s probability ``q_j = sum_k w_k P_k(j)``, and the global minimum (first ``argmin``) gains
   ``no_trough_prob * sum_{k < c} w_k``, ``c`` the thresholds it is not below;
4. a trough's period ``min_period + i + s_i`` (parabolic shift) gives the candidate f0 ``sr / period`` and its bin
   ``clip(round(12 n_b log2(f0 / fmin)), 0, n_pitch_bins)`` on the pitch grid; the observation of voiced state ``b``
   is the probability of the (last, i.e. longest-period) candidate in bin ``b`` (a candidate rounded to bin
   ``n_pitch_bins`` falls off the grid, as in librosa);
5. ``voiced_prob = clip(sum_b obs[b], 0, 1)`` and every unvoiced state observes ``(1 - voiced_prob) / n_pitch_bins``.

The frames are processed together (grouped by their trough count, so each frame's dot product is the same BLAS
call on the same ``(m, K)`` matrix as librosa's per-frame loop) and the results are librosa's bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .params import PitchGeometry, PitchGrid

__all__ = ["ObservationModel"]


@dataclass(frozen=True)
class ObservationModel:
    """The fixed parts of pYIN's observation model.

    Attributes
    ----------
    geometry : PitchGeometry
        Period range and rate.
    grid : PitchGrid
        The pitch bins.
    n_thresholds : int
        ``K``, thresholds on ``(0, 1]``.
    beta_parameters : tuple of float
        Shape parameters ``(a, b)`` of the beta prior over thresholds.
    boltzmann_parameter : float
        ``λ`` of the Boltzmann prior over troughs.
    no_trough_prob : float
        Weight given to the global minimum for thresholds no trough is below.
    """

    geometry: PitchGeometry
    grid: PitchGrid
    n_thresholds: int = 100
    beta_parameters: tuple[float, float] = (2, 18)
    boltzmann_parameter: float = 2
    no_trough_prob: float = 0.01

    @cached_property
    def thresholds(self) -> np.ndarray:
        """``s_k = linspace(0, 1, K + 1)``."""
        return np.linspace(0, 1, self.n_thresholds + 1)

    @cached_property
    def beta_probs(self) -> np.ndarray:
        """``w_k = B(s_{k+1}) - B(s_k)``, shape ``(K,)`` (scipy.stats.beta.cdf is ``betainc(a, b, s)`` inside the
        support, 0 at ``s = 0`` and 1 at ``s = 1``)."""
        from scipy.special import betainc

        a, b = self.beta_parameters
        s = self.thresholds
        cdf = np.zeros_like(s)
        inside = (s > 0) & (s < 1)
        cdf[inside] = betainc(float(a), float(b), s[inside])
        cdf[s >= 1] = 1.0
        return np.diff(cdf)

    @cached_property
    def no_trough_mass(self) -> np.ndarray:
        """``no_trough_prob * sum(w[:c])`` for ``c = 0 .. K`` (each sum numpy's, as librosa takes it)."""
        w = self.beta_probs
        return np.array([self.no_trough_prob * np.sum(w[:c]) for c in range(self.n_thresholds + 1)])

    def boltzmann(self, n_max: int) -> np.ndarray:
        """``P[n, p]`` of the Boltzmann prior for ``n = 0 .. n_max`` troughs, ``p = 0 .. n_max - 1`` (0 off the
        support ``p < n``), as scipy.stats.boltzmann.pmf computes it: ``fact * exp(-λ p)`` with
        ``fact = (1 - exp(-λ)) / (1 - exp(-λ n))``, clipped to [0, 1]."""
        lam = self.boltzmann_parameter
        n = np.arange(n_max + 1)[:, None]
        p = np.arange(max(n_max, 1))[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            fact = (1 - np.exp(-lam)) / (1 - np.exp(-lam * n))
            table = np.clip(fact * np.exp(-lam * p), 0, 1)
        table[(p >= n) | (n == 0)] = 0.0
        return table

    def trough_probs(self, rows: np.ndarray) -> np.ndarray:
        """Step 1-3: the probability of each trough, dense ``(n_frames, n_periods)`` (0 off the troughs).

        The frames are ordered by trough count (stable), so the troughs of all frames with ``m`` troughs form one
        contiguous ``(frames, m, K)`` block of priors whose per-frame products with ``w`` are the ``(m, K)``
        matrix-vector products librosa computes one frame at a time.
        """
        from .difference import troughs

        n_frames, n_k = rows.shape[0], self.n_thresholds
        mask = troughs(rows)
        counts = mask.sum(axis=1)
        order = np.argsort(counts, kind="stable")
        frame, lag = np.nonzero(mask[order])  # troughs grouped by frame, frames by trough count
        probs = np.zeros(rows.shape)
        if frame.size == 0:
            return probs
        frame = order[frame]
        heights = rows[frame, lag]
        # trough m is below threshold k (heights < s_{k+1}) for k >= first[m]
        first = np.searchsorted(self.thresholds[1:], heights, side="right")
        below = np.arange(n_k)[None, :] >= first[:, None]  # (M, K)
        per = counts[order]
        starts = np.cumsum(per) - per  # first trough of each (reordered) frame
        table = self.boltzmann(int(per.max()))
        width = table.shape[1]
        flat_table = table.ravel()
        q = np.empty(frame.size)
        w = self.beta_probs
        edges = np.flatnonzero(np.diff(per, prepend=-1))  # first reordered frame of each trough count
        for a, b in zip(edges, np.r_[edges[1:], n_frames]):
            m = int(per[a])
            if m == 0:
                continue
            lo, hi = starts[a], starts[a] + (b - a) * m
            block = below[lo:hi].reshape(b - a, m, n_k)
            position = np.cumsum(block, axis=1, dtype=np.int32)  # 1 + rank among the frame's troughs below k
            n_below = position[:, -1:, :].copy()
            position -= 1
            np.maximum(position, 0, out=position)
            prior = flat_table[n_below * width + position]
            prior[~block] = 0.0
            q[lo:hi] = np.matmul(prior, w).ravel()
        owner = np.repeat(np.arange(n_frames), per)  # reordered frame of each trough
        # the global minimum of each frame (first argmin among its troughs) gains the no-trough mass
        lowest = np.minimum.reduceat(heights, starts[per > 0])
        is_min = np.flatnonzero(heights == np.repeat(lowest, per[per > 0]))
        firsts = is_min[np.unique(owner[is_min], return_index=True)[1]]
        q[firsts] += self.no_trough_mass[first[firsts]]
        probs[frame, lag] = q
        return probs

    def observations(self, rows: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Observation probabilities and voiced probability of a block of frames.

        Parameters
        ----------
        rows, shifts : np.ndarray, shape (n_frames, n_periods)
            Difference rows and their parabolic shifts.

        Returns
        -------
        obs : np.ndarray, shape (2 * n_pitch_bins, n_frames), float64
            Rows ``0 .. n_pitch_bins - 1``: voiced states; the rest: unvoiced.
        voiced_prob : np.ndarray, shape (n_frames,), float64
        """
        if rows.shape[0] == 1:
            # numpy sums a one-column array's axis 0 pairwise, a wider one row after row (librosa's whole-signal
            # case): a lone frame goes through as two copies, so a frame's result never depends on its block
            obs, voiced = self.observations(np.repeat(rows, 2, axis=0), np.repeat(shifts, 2, axis=0))
            return np.ascontiguousarray(obs[:, :1]), voiced[:1]
        g, n_bins = self.geometry, self.grid.n_pitch_bins
        probs = self.trough_probs(rows)
        frame, lag = np.nonzero(probs)
        period = g.min_period + lag
        period = period + shifts[frame, lag]
        f0 = g.sr / period
        index = 12 * self.grid.n_bins_per_semitone * np.log2(f0 / self.grid.fmin)
        index = np.clip(np.round(index), 0, n_bins).astype(int)
        obs = np.zeros((2 * n_bins, rows.shape[0]))
        obs[index, frame] = probs[frame, lag]
        voiced = np.clip(np.sum(obs[:n_bins, :], axis=0, keepdims=True), 0, 1)
        obs[n_bins:, :] = (1 - voiced) / n_bins
        return obs, voiced[0]

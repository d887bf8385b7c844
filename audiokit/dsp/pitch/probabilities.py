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

#: ``(a, b, K)`` of librosa's pYIN prior (``beta_parameters=(2, 18)``, ``n_thresholds=100``).
DEFAULT_PRIOR = (2.0, 18.0, 100)
#: ``scipy.special.betainc(2, 18, s_k)`` for ``s_k = k / 100``, ``k = 1 .. 99`` (float.hex), what scipy.stats.beta.cdf
#: gives librosa: stored because importing scipy.special costs ~0.3 CPU-s, a quarter of ``audiokit pitch`` on a 12 s
#: file; ``tests/dsp/test_pitch_beta_prior.py`` checks them against betainc bit for bit (an exact rational evaluation
#: differs from betainc by up to 10 ulp at 16 of the 99 points, so the values cannot be recomputed in closed form).
DEFAULT_BETA_CDF = (
    "0x1.f47d990a75a4ep-7",
    "0x1.bf69f2e79c9f2p-5",
    "0x1.c2603b8310119p-4",
    "0x1.6691879306116p-3",
    "0x1.f65c11a15441dp-3",
    "0x1.44b2bc2669a2cp-2",
    "0x1.8d3d5decdbf48p-2",
    "0x1.d2faead76bd22p-2",
    "0x1.0a59aa71ac974p-1",
    "0x1.28d30758873f9p-1",
    "0x1.44b6ab94e5f1ap-1",
    "0x1.5df392664acf4p-1",
    "0x1.74915d8c610e3p-1",
    "0x1.88a90cee61cf7p-1",
    "0x1.9a5f4b34189fbp-1",
    "0x1.a9e0053047bf4p-1",
    "0x1.b75b0de7a554ap-1",
    "0x1.c3019b35a3217p-1",
    "0x1.cd046fc8cb2d6p-1",
    "0x1.d5928e9d69312p-1",
    "0x1.dcd85a6a68443p-1",
    "0x1.e2ff08c87e0f3p-1",
    "0x1.e82c55590c501p-1",
    "0x1.ec8264f6845eep-1",
    "0x1.f01fcc1dd0000p-1",
    "0x1.f31fae5e43d9cp-1",
    "0x1.f599eec7efd56p-1",
    "0x1.f7a36b182b5a9p-1",
    "0x1.f94e3cd91b1c2p-1",
    "0x1.faa9fcd7b6a46p-1",
    "0x1.fbc40647cb804p-1",
    "0x1.fca7b7b054974p-1",
    "0x1.fd5eb05484889p-1",
    "0x1.fdf1094631990p-1",
    "0x1.fe6589aaf146ep-1",
    "0x1.fec1d6033d47ap-1",
    "0x1.ff0a9a76c2e8cp-1",
    "0x1.ff43b04e1ea10p-1",
    "0x1.ff703edbc56b0p-1",
    "0x1.ff92d8263e513p-1",
    "0x1.ffad91af222e3p-1",
    "0x1.ffc219b6501cbp-1",
    "0x1.ffd1c958c34f5p-1",
    "0x1.ffddb3e797658p-1",
    "0x1.ffe6b3ceed9dep-1",
    "0x1.ffed755e423aep-1",
    "0x1.fff27fbce0e36p-1",
    "0x1.fff63c4df2c06p-1",
    "0x1.fff8fcc068a35p-1",
    "0x1.fffb000000000p-1",
    "0x1.fffc7635fad24p-1",
    "0x1.fffd8401f2aa5p-1",
    "0x1.fffe450d8554ap-1",
    "0x1.fffece187cc61p-1",
    "0x1.ffff2e9684dd0p-1",
    "0x1.ffff71f37c47ep-1",
    "0x1.ffffa08feb6eap-1",
    "0x1.ffffc084237eap-1",
    "0x1.ffffd635ee43dp-1",
    "0x1.ffffe4ca826a8p-1",
    "0x1.ffffee7c94036p-1",
    "0x1.fffff4dccbfa9p-1",
    "0x1.fffff901a8654p-1",
    "0x1.fffffbaab99dep-1",
    "0x1.fffffd5a546f0p-1",
    "0x1.fffffe682034fp-1",
    "0x1.ffffff0e5a017p-1",
    "0x1.ffffff73354abp-1",
    "0x1.ffffffaf6a4ddp-1",
    "0x1.ffffffd2bd868p-1",
    "0x1.ffffffe7169c1p-1",
    "0x1.fffffff294bd1p-1",
    "0x1.fffffff8efe19p-1",
    "0x1.fffffffc5fb0ap-1",
    "0x1.fffffffe30000p-1",
    "0x1.ffffffff1eb39p-1",
    "0x1.ffffffff95fd4p-1",
    "0x1.ffffffffcfcbbp-1",
    "0x1.ffffffffeae29p-1",
    "0x1.fffffffff71f6p-1",
    "0x1.fffffffffc6ecp-1",
    "0x1.fffffffffea2fp-1",
    "0x1.ffffffffff81dp-1",
    "0x1.ffffffffffd52p-1",
    "0x1.fffffffffff27p-1",
    "0x1.fffffffffffc1p-1",
    "0x1.fffffffffffefp-1",
    "0x1.ffffffffffffcp-1",
    "0x1.fffffffffffffp-1",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
    "0x1.0000000000000p+0",
)


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
        a, b = self.beta_parameters
        s = self.thresholds
        cdf = np.zeros_like(s)
        inside = (s > 0) & (s < 1)
        if (float(a), float(b), self.n_thresholds) == DEFAULT_PRIOR:  # librosa's defaults: the stored values
            cdf[inside] = [float.fromhex(v) for v in DEFAULT_BETA_CDF]
        else:
            from scipy.special import betainc

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

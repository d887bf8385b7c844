"""pYIN's hidden Markov model: librosa 0.11's transition matrix, held as its band.

States ``0 .. n - 1`` are voiced pitch bins, ``n .. 2n - 1`` the unvoiced copies (``n = n_pitch_bins``).  librosa
builds the dense ``(2n, 2n)`` matrix ``T = kron(S, L)``:

* ``L`` (``sequence.transition_local(n, width, window="triangle", wrap=False)``): row ``i`` is a symmetric
  triangular window of ``width`` bins (odd; ``scipy.signal.windows.triang``) centred on ``i``, cut at the grid's
  ends, divided by its sum -- so ``L[i, j] > 0`` exactly when ``|i - j| <= h = width // 2``;
* ``S`` (``sequence.transition_loop(2, 1 - switch_prob)``): ``S[v, v] = 1 - switch_prob`` and
  ``S[v, 1 - v] = (1 - (1 - switch_prob)) / 1``;

and decodes with ``log(T + tiny)`` (``tiny`` = the smallest normal float64), so every "impossible" transition
costs the same finite ``LOG_TINY = log(tiny)`` (about -708.4).  :class:`TransitionBand` keeps
``log(T[i, j] + tiny)`` for ``|i mod n - j mod n| <= h`` only, the same floats as librosa's matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...errors import ParameterError

__all__ = ["LOG_TINY", "TINY", "TransitionBand", "local_transition", "switch_transition", "triangle"]

#: ``np.finfo(np.float64).tiny``: librosa's epsilon inside the logs of the Viterbi decoder.
TINY = float(np.finfo(np.float64).tiny)
#: ``log(0 + tiny)``: the log-probability of every transition outside the band.
LOG_TINY = float(np.log(TINY))


def triangle(width: int) -> np.ndarray:
    """The symmetric triangular window of ``width`` points (``scipy.signal.windows.triang(width, sym=True)``):
    ``2 k / (width + 1)`` rising for odd widths, ``(2 k - 1) / width`` for even ones, ``k = 1 .. ceil(width / 2)``."""
    k = np.arange(1, (width + 1) // 2 + 1)
    if width % 2 == 0:
        w = (2 * k - 1.0) / width
        return np.r_[w, w[::-1]]
    w = 2 * k / (width + 1.0)
    return np.r_[w, w[-2::-1]]


def local_transition(n_states: int, width: int) -> np.ndarray:
    """librosa's ``transition_local(n_states, width, window="triangle", wrap=False)``, dense ``(n, n)``."""
    if n_states < 2:
        raise ParameterError(f"the pitch grid needs at least 2 bins, got {n_states}")
    if width < 1:
        raise ParameterError(f"transition width={width} must be at least 1")
    window = triangle(width)
    left = (n_states - width) // 2
    if left < 0:
        raise ParameterError(f"transition width={width} exceeds the {n_states} pitch bins")
    padded = np.pad(window, (left, n_states - width - left))
    out = np.zeros((n_states, n_states))
    for i in range(n_states):
        row = np.roll(padded, n_states // 2 + i + 1)
        row[min(n_states, i + width // 2 + 1) :] = 0
        row[: max(0, i - width // 2)] = 0
        out[i] = row
    out /= out.sum(axis=1, keepdims=True)
    return out


def switch_transition(switch_prob: float) -> np.ndarray:
    """librosa's ``transition_loop(2, 1 - switch_prob)``: ``[[1 - p, q], [q, 1 - p]]``, ``q = 1 - (1 - p)``."""
    stay = 1 - switch_prob
    off = (1.0 - stay) / 1
    return np.array([[stay, off], [off, stay]])


@dataclass(frozen=True)
class TransitionBand:
    """The band of ``log(kron(S, L) + tiny)``.

    Attributes
    ----------
    n_bins : int
        ``n``, pitch bins per voicing.
    width : int
        Width of the local transition (bins).
    switch_prob : float
        Voiced/unvoiced switch probability, ``0 < switch_prob < 1``.
    """

    n_bins: int
    width: int
    switch_prob: float

    def __post_init__(self) -> None:
        if not 0 < self.switch_prob < 1:
            raise ParameterError(f"switch_prob={self.switch_prob} must be in (0, 1)")

    @property
    def half(self) -> int:
        """``h = width // 2``: a bin moves at most ``h`` bins per frame."""
        return min(self.width // 2, self.n_bins - 1)

    @cached_property
    def kernel(self) -> np.ndarray:
        """``K[tv, j, sv, h + d] = log(S[sv, tv] L[j + d, j] + tiny)`` for ``|d| <= h``, ``-inf`` off the grid:
        shape ``(2, n, 2, 2h + 1)``.  Along the last two axes the source state ``sv * n + j + d`` increases, so a
        first ``argmax`` over them breaks ties as librosa's ``argmax`` over source states does."""
        n, h = self.n_bins, self.half
        local = local_transition(n, self.width)
        switch = switch_transition(self.switch_prob)
        source = np.arange(n)[:, None] + np.arange(-h, h + 1)[None, :]  # (n, 2h + 1)
        inside = (source >= 0) & (source < n)
        values = np.where(inside, local[np.clip(source, 0, n - 1), np.arange(n)[:, None]], 0.0)
        if np.any(values[inside] <= 0):
            raise AssertionError("the local transition has a zero inside its band")
        out = np.full((2, n, 2, 2 * h + 1), -np.inf)
        for tv in range(2):
            for sv in range(2):
                product = switch[sv, tv] * values
                out[tv, :, sv, :] = np.where(inside, np.log(product + TINY), -np.inf)
        return out

    def dense(self) -> np.ndarray:
        """librosa's whole ``log(kron(S, L) + tiny)``, ``(2n, 2n)`` (tests; ``kron`` as numpy computes it)."""
        t = np.kron(switch_transition(self.switch_prob), local_transition(self.n_bins, self.width))
        return np.log(t + TINY)

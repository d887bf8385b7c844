r"""The hum model: the phase of the fundamental and the harmonics' amplitudes (:class:`HumAnalysis`).

.. math::  h[n] = \sum_k \mathrm{Re}\big(A_k(t)\, e^{2\pi i k Φ[n]}\big),
           \qquad Φ[n] = f_{ref}\, n / sr + ψ(n / sr) \quad \text{(cycles)}

``ψ`` is a natural cubic spline through its values at the frame times
(:class:`PhaseSpline`); ``A_k`` is interpolated linearly between them.  How
the values are measured is told in :mod:`audiokit.dsp.hum`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ParameterError
from .spill import release

__all__ = [
    "FRAME_SECONDS",
    "HOP_SECONDS",
    "SHORT_FRAME_SECONDS",
    "SHORT_HOP_SECONDS",
    "HumAnalysis",
    "PhaseSpline",
    "check_block",
    "power_db",
]

#: Analysis frame (Hann) and hop between frames, seconds: the model's amplitudes live at these frame times.
FRAME_SECONDS = 1.0
HOP_SECONDS = 0.25
#: Short frames (Hann) and their hop (s), also used for the amplitude average.
SHORT_FRAME_SECONDS = 0.5
SHORT_HOP_SECONDS = SHORT_FRAME_SECONDS / 4

_TRACK_HALF_SPAN_S = 0.5  # f0_track: least-squares slope of ψ over ±0.5 s
_TRACK_TIME_EPS_S = 1e-9  # ... frames at exactly ±0.5 s included despite float rounding of the times


class PhaseSpline:
    """``ψ(t)`` in cycles: a natural cubic spline through the knots, straight lines beyond them.

    Parameters
    ----------
    t : np.ndarray, shape (M,)
        Knot times (s), increasing.
    psi : np.ndarray, shape (M,)
        ``ψ`` at the knots (cycles).

    Notes
    -----
    With one knot ``ψ`` is constant; with none it is 0.  Beyond the first and
    the last knot ``ψ`` continues with the slope it has there (so the
    frequency ``ψ'`` is held and the drift rate ``ψ''`` is 0).
    """

    def __init__(self, t: np.ndarray, psi: np.ndarray):
        self.t = np.asarray(t, float)
        self.psi = np.asarray(psi, float)
        if len(self.t) >= 2:
            from scipy.interpolate import CubicSpline  # lazy: scipy.interpolate costs ~0.2 s of CLI start-up

            self._cs = CubicSpline(self.t, self.psi, bc_type="natural")
        else:
            self._cs = None

    def __call__(self, t: np.ndarray, nu: int = 0) -> np.ndarray:
        """``ψ`` (``nu = 0``, cycles) or its ``nu``-th derivative (cycles/s^nu) at times ``t`` (s)."""
        t = np.asarray(t, float)
        if self._cs is None:
            value = self.psi[0] if len(self.psi) else 0.0
            return np.full(t.shape, value if nu == 0 else 0.0)
        tc = np.clip(t, self.t[0], self.t[-1])
        if nu == 0:
            return self._cs(tc) + self._cs(tc, 1) * (t - tc)
        if nu == 1:
            return self._cs(tc, 1)
        return np.where(t == tc, self._cs(tc, nu), 0.0)


def power_db(p: np.ndarray) -> np.ndarray:
    """``10·log10(max(p, 0))`` without a warning: ``-inf`` for zero power."""
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(np.maximum(p, 0.0))


def check_block(block: np.ndarray, channels: int) -> np.ndarray:
    """``block`` as an array shaped ``(channels, n)``, else :class:`~audiokit.errors.ParameterError`."""
    block = np.asarray(block)
    if block.ndim != 2 or block.shape[0] != channels:
        raise ParameterError(f"blocks must be shaped ({channels}, n), got {block.shape}")
    return block


@dataclass(frozen=True, eq=False)
class HumAnalysis:
    """What :func:`~audiokit.dsp.hum.analyze_hum` found: the fundamental's track and every harmonic's amplitude.

    Attributes
    ----------
    sr : int
        Sample rate (Hz).
    channels : int
    n_samples : int
        Signal length (samples per channel).
    nominal : float
        The nominal frequency (Hz): the one asked for, or with ``auto`` the
        one chosen (50 or 60).
    auto : bool
        True when the nominal frequency was chosen automatically.
    search : (float, float)
        Range searched for the fundamental (Hz), ``nominal ± 1 %``.
    f_ref : float
        Reference frequency of the phase ``Φ`` (Hz): the long-term estimate.
    harmonics : np.ndarray, shape (K,), int
        Harmonic numbers considered, ``1 .. K``.
    times : np.ndarray, shape (M,)
        Frame times (s): the centroid of each (possibly truncated) frame.
    psi : np.ndarray, shape (M,)
        Phase deviation ``ψ`` at ``times`` (cycles).
    amplitudes : np.ndarray, shape (channels, K, M), complex128
        ``A_k`` at ``times`` (peak amplitude and phase re ``exp(2πi·k·Φ)``).
    treated : np.ndarray, shape (channels, K), bool
        Harmonics that removal touches.
    level_db, floor_db, snr_db : np.ndarray, shape (channels, K)
        See :mod:`audiokit.dsp.hum` (dB re full-scale sine amplitude).
    span_s : np.ndarray, shape (channels, K)
        Span of the amplitude average chosen per harmonic (s).
    tracked : tuple of int
        Harmonics that steered the drift search.
    threshold_db : float
        Detection threshold used (dB).
    dropped : np.ndarray, shape (channels, K), bool
        Harmonics that passed the detection but are not treated because a
        prediction from the rest of the signal does not lower their line
        (do no harm, :func:`~audiokit.dsp.hum.fit.do_no_harm`); all False
        when not given.
    weights : np.ndarray, shape (channels, K, M), or None
        The robust weights of each harmonic's amplitude average over the 1 s
        frames (None: uniform), used by :meth:`~audiokit.dsp.hum.HumMeter.coherent`.
    frames : np.ndarray, shape (channels, K, M), complex, or None
        The input's 1 s frame amplitudes of every line along the final
        phase (pass 3's projections turned by the phase refinement): the
        "before" of :func:`~audiokit.dsp.hum.hum_levels`.
    noise : np.ndarray, shape (channels, K), or None
        Variance of that average that the floor beside the line alone would
        give (peak amplitude²): the detection's noise and the floor of the
        hum levels (:class:`~audiokit.dsp.hum.HumLevels`).
    """

    sr: int
    channels: int
    n_samples: int
    nominal: float
    auto: bool
    search: tuple[float, float]
    f_ref: float
    harmonics: np.ndarray
    times: np.ndarray
    psi: np.ndarray
    amplitudes: np.ndarray
    treated: np.ndarray
    level_db: np.ndarray
    floor_db: np.ndarray
    snr_db: np.ndarray
    span_s: np.ndarray
    tracked: tuple[int, ...]
    threshold_db: float
    dropped: np.ndarray | None = None
    weights: np.ndarray | None = None
    frames: np.ndarray | None = None
    noise: np.ndarray | None = None
    _spline: PhaseSpline = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spline", PhaseSpline(self.times, self.psi))
        if self.dropped is None:
            object.__setattr__(self, "dropped", np.zeros(self.treated.shape, bool))

    @classmethod
    def empty(
        cls,
        *,
        sr: int,
        channels: int,
        n_samples: int,
        nominal: float,
        auto: bool,
        search: tuple[float, float],
        threshold_db: float,
    ) -> HumAnalysis:
        """An analysis that found nothing to measure: no harmonic, no frame (removal passes the signal through)."""
        z = np.zeros((channels, 0))
        return cls(
            sr=sr,
            channels=channels,
            n_samples=n_samples,
            nominal=nominal,
            auto=auto,
            search=search,
            f_ref=float(nominal),
            harmonics=np.zeros(0, np.int64),
            times=np.zeros(0),
            psi=np.zeros(0),
            amplitudes=np.zeros((channels, 0, 0), complex),
            treated=np.zeros((channels, 0), bool),
            level_db=z,
            floor_db=z.copy(),
            snr_db=z.copy(),
            span_s=z.copy(),
            tracked=(),
            threshold_db=threshold_db,
        )

    # -- the fundamental
    @property
    def found(self) -> bool:
        """True when at least one harmonic of one channel is treated."""
        return bool(self.treated.any())

    @property
    def treated_harmonics(self) -> tuple[int, ...]:
        """Harmonic numbers treated in at least one channel."""
        return tuple(int(k) for k in self.harmonics[self.treated.any(axis=0)])

    def phase(self, n: np.ndarray) -> np.ndarray:
        """``Φ[n] = f_ref·n/sr + ψ(n/sr)`` in cycles, for absolute sample indices ``n`` (float64)."""
        n = np.asarray(n)
        return n * (self.f_ref / self.sr) + self._spline(n / self.sr)

    def frequency(self, t: np.ndarray) -> np.ndarray:
        """Fundamental ``f0(t) = f_ref + ψ'(t)`` in Hz at times ``t`` (s)."""
        return self.f_ref + self._spline(np.asarray(t, float), 1)

    def drift_rate(self, t: np.ndarray) -> np.ndarray:
        """``f0'(t) = ψ''(t)`` in Hz/s at times ``t`` (s); 0 outside the frame times."""
        return self._spline(np.asarray(t, float), 2)

    @property
    def f0_track(self) -> np.ndarray:
        """``f0`` at :attr:`times` (Hz), shape (M,): ``f_ref`` plus the least-squares slope of ``ψ`` over ±0.5 s.

        Smoother than :meth:`frequency` (the derivative of the interpolating
        spline), which amplifies the phase noise of single frames, most at
        the two ends.
        """
        t, psi = self.times, self.psi
        out = np.full(t.shape, float(self.f_ref))
        if len(t) < 2:
            return out
        lo = np.searchsorted(t, t - _TRACK_HALF_SPAN_S - _TRACK_TIME_EPS_S, side="left")
        hi = np.searchsorted(t, t + _TRACK_HALF_SPAN_S + _TRACK_TIME_EPS_S, side="right")
        width = int((hi - lo).max())
        idx = lo[:, None] + np.arange(width)
        use = idx < hi[:, None]
        idx = np.minimum(idx, len(t) - 1)
        dt = np.where(use, t[idx] - t[:, None], 0.0)
        dp = np.where(use, psi[idx] - psi[:, None], 0.0)
        cnt = use.sum(axis=1)
        mt, mp = dt.sum(axis=1) / cnt, dp.sum(axis=1) / cnt
        ct = np.where(use, dt - mt[:, None], 0.0)
        var = (ct**2).sum(axis=1)
        slope = np.where(var > 0, (ct * (dp - mp[:, None])).sum(axis=1) / np.where(var > 0, var, 1.0), 0.0)
        return out + slope

    @property
    def f0(self) -> float:
        """Mean fundamental over the signal (Hz): ``(Φ[n-1] - Φ[0]) / ((n-1)/sr)``."""
        if self.n_samples < 2:
            return float(self.f_ref)
        end = self.n_samples - 1
        return float((self.phase(np.array([end]))[0] - self.phase(np.array([0]))[0]) * self.sr / end)

    # -- the model
    def model(self, start: int, stop: int) -> np.ndarray:
        """The treated hum ``h[n]`` for samples ``start <= n < stop``.

        Returns
        -------
        np.ndarray, shape (channels, stop - start), float64
            ``h[n] = Re(Σ_k A_k(n/sr)·u^k)``, ``u = exp(2πi·Φ[n])``, summed
            over the treated harmonics by Horner's rule in complex64; ``A_k``
            interpolated linearly between :attr:`times` and held beyond the
            first and the last; zeros where nothing is treated.
        """
        n = np.arange(start, stop, dtype=np.int64)
        out = np.zeros((self.channels, n.size))
        if n.size == 0 or not self.found:
            return out
        ang = (2 * np.pi) * np.mod(self.phase(n), 1.0)
        u = np.empty(n.size, np.complex64)
        u.real, u.imag = np.cos(ang), np.sin(ang)
        t = n / self.sr
        times = self.times
        if len(times) > 1:
            seg = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
            frac = np.clip((t - times[seg]) / (times[seg + 1] - times[seg]), 0.0, 1.0).astype(np.float32)
            first, last = int(seg[0]), int(seg[-1]) + 2  # seg never decreases: the frames the block reads
            seg = seg - first
        else:
            seg, frac = np.zeros(n.size, np.int64), np.zeros(n.size)
            first, last = 0, 1
        for c in range(self.channels):
            ks = np.flatnonzero(self.treated[c])
            if ks.size == 0:
                continue
            acc = np.zeros(n.size, np.complex64)
            for i in range(int(ks.max()), -1, -1):
                acc *= u
                if self.treated[c, i]:
                    a = self.amplitudes[c, i, first:last].astype(np.complex64)  # only the block's frames
                    if len(times) > 1:
                        acc += a[seg]
                        acc += (a[seg + 1] - a[seg]) * frac
                    else:
                        acc += a[0]
            out[c] = (acc * u).real
        release(self.amplitudes)  # in a temporary file for a long signal (spill): its pages are read again as needed
        return out

r"""Mains hum: measure it, then remove it by model subtraction or by erasing STFT bins.

Model
-----
Mains hum is a sum of harmonics of one fundamental ``f0(t)`` (nominally 50 or
60 Hz) that drifts slowly (a few hundredths of a hertz per second on a power
grid)::

    h[n] = Σ_k  Re( A_k(t) · exp(2πi·k·Φ[n]) ),   Φ[n] = f_ref·n/sr + ψ(n/sr)   (cycles)

``Φ`` is the phase of the fundamental: a fixed reference frequency ``f_ref``
plus a smooth deviation ``ψ(t)`` (cycles, ``f0(t) = f_ref + ψ'(t)``).  Every
harmonic follows ``k·Φ`` exactly; its complex amplitude ``A_k(t)`` (peak
amplitude and phase) varies slowly.

Analysis (:func:`analyze_hum`; three passes over the signal)
--------------------------------------------------------------
1. **Fundamental.**  A Welch average of the power spectrum (Hann segments of
   ``clip(duration/2, 1 s, 4 s)``, channels summed) is searched for the
   fundamental ``f_ref`` that maximises the harmonic sum
   ``Σ_k clip(prom(k·f) - 6 dB, 0, 30 dB)``, ``prom`` being the level over the
   median within ±10 Hz (:func:`audiokit.dsp.hum_track.find_fundamental`);
   candidates every 5 mHz in ``nominal ± 1 %`` (``freq=50`` searches
   49.5..50.5 Hz), then a parabola.  ``freq=None`` (auto) searches both mains
   windows, 50 ± 1 % and 60 ± 1 % Hz, and keeps the one with the larger
   harmonic sum.  Capping each harmonic's vote keeps one strong music partial
   near a line from pulling the estimate; keeping the fundamental within
   ± 1 % of a nominal value keeps held notes (G1 = 49.0 Hz, a 102 Hz note
   seen as the 2nd harmonic of 51 Hz) from being taken for hum.
2. **Drift.**  Every harmonic whose long-term prominence exceeds 6 dB is
   shifted to 0 Hz at ``k·f_ref`` and decimated to about 200 Hz
   (:class:`~audiokit.dsp.hum_track.Demodulator`).  In frames of
   :data:`FRAME_SECONDS` (Hann, hop :data:`HOP_SECONDS`) the offset ``δ`` of
   the fundamental maximising the weighted harmonic energy
   ``Σ_k w_k |Σ_j g_j d_k[j] e^{-2πi kδτ_j}|²`` is searched over the search
   window widened by half its width (weights ``w_k`` = long-term
   line-to-floor power ratio minus 1); a frame whose best fit falls outside
   the window is following something else (a note beside a line) and gets
   the offset interpolated from its neighbours; ``ψ`` is
   its integral over the frame times (trapezoids), a natural cubic spline in
   between and a straight line beyond the first and last frame.
3. **Amplitudes.**  All harmonics ``k = 1 .. K`` are demodulated along the
   tracked ``Φ`` and projected per frame: ``v_k[m]`` (complex peak amplitude)
   and the noise floor ``r_k[m]`` beside the line (median power of the same
   projection at ``±(0.12, 0.16, 0.20, 0.24)·f0`` from it).  Then, on these
   small arrays:

   * ``ψ`` is refined three times from the phase residuals of all harmonics,
     ``Δψ[m] = Σ w·k·∠(v_k·conj(v̄_k)) / (2π Σ w·k²)`` with ``w = |v̄_k|²/r_k``
     (``v̄_k``: 8-second average; each round may bend the frequency by at most
     0.02 Hz, so a partial beside a line cannot drag the track away) -- a
     phase detector is far more precise than a frequency search;
   * ``A_k`` is a robust, noise-weighted Hann-kernel average of ``v_k`` over a
     *span* chosen per harmonic among :data:`SPANS` by cross-validation
     (prediction error of each frame from frames that do not overlap it):
     weights ``1/(r + |v - v̄|²)``, six reweighting rounds, so frames where
     speech or music crosses the line count less.  The span is the longest
     whose score is within 30 % of the best (the hum is stationary; the
     scores of a few seconds of frames are noisy).  The same average is also
     taken over 0.5 s frames (:data:`SHORT_FRAME_SECONDS`, hop 1/8 s, projected
     in the same pass): speech at a line comes and goes within a second, and
     the short frames let the weights find the gaps.  It replaces the 1 s
     average (interpolated to the 1 s frame times) when its spread, estimated
     from the residuals (``Σ ker² w² |v - v̄|² / (Σ ker w)²`` times the overlap
     factor), is the smaller: a steady partial 2 Hz from a line, which the 1 s
     Hann frame nulls but a 0.5 s frame lets through, shows there as a large
     residual and keeps the 1 s estimate;
   * **detection**: a harmonic (per channel) is treated when the power of
     ``A_k`` exceeds the variance that the floor alone would give it (noise
     averaged by the same kernel, overlap of the frames included) by
     ``threshold_db`` (default :data:`DEFAULT_THRESHOLD_DB`), and the
     channel shows its fundamental, or at least two harmonics of which one is
     among the first three (hum always has a strong low line; partials of a
     held note that happen to sit on ``k·f0`` far up are not hum).  A gap in a
     detected series -- a harmonic whose two neighbours are treated -- needs
     3 dB less (:data:`_GAP_RELIEF_DB`).  Untreated
     harmonics are left exactly as they are, so a clean signal passes through
     untouched.

A music partial a few hertz from a line rotates against it: the 1 s frames
attenuate it (Hann main lobe ±2 Hz) and the multi-second average cancels
what is left.  What no method can separate is signal energy *at* the line;
it sets the floor of the residual (see benchmarks/bench_dehum.py).

Removal
-------
``subtract`` (default, :class:`HumSubtractor`): ``y = x - h`` with ``h``
synthesised sample by sample from ``Φ`` and the amplitudes (linear
interpolation between frame times, held constant before the first and after
the last).  No window, no overlap-add: the model is smooth in time by
construction, and stream processing gives the same samples as one-shot (to
float32 rounding of the synthesis, below 1e-6).

``erase`` (:class:`HumEraser`): the method of the STFT tutorials.  A
periodic-Hann STFT with window ``W`` (default 1 s, so ``Δf = 1 Hz``), hop
``W/4``, ``center=True``; in frame ``m`` (centre ``t_m``) every bin within
``width/2 + k·|f0'(t_m)|·W/2`` of ``k·f0(t_m)`` is set to zero for each
treated harmonic, and the signal is rebuilt by weighted overlap-add
(:class:`~audiokit.dsp.stft.IstftStream`).  Default ``width = 4/W`` Hz (4 Hz
for 1 s): the main lobe of the Hann window.  The hum's sidelobes outside the
erased bins stay (Hann: -31 dB at 2.5 bins), and so does a hole in whatever
the signal had inside them.

Levels (:class:`HumAnalysis`, :class:`HumMeter`)
-------------------------------------------------
In dB re a full-scale sine (peak amplitude 1.0 = 0 dB), per channel and
harmonic: ``level_db = 10·log10(mean_m |v_k[m]|²)``: what a 1 s frame reads
at the line (hum plus whatever signal is there; from pass 3, before the
phase refinement); ``floor_db = 10·log10(mean_m r_k[m])``: what it reads
beside the line; ``snr_db``: the detection statistic.  :class:`HumMeter`
applies the same projection (along the refined phase) to the output
(``after_db``): a treated harmonic comes down to about the floor, or to what
the signal itself has at the line, whichever is higher.

The fundamental is reported as :attr:`HumAnalysis.f0` (mean over the signal)
and :attr:`HumAnalysis.f0_track` (per frame, the slope of ``ψ`` over ±0.5 s).

Memory and passes
-----------------
The three analysis passes read the signal block by block; what is kept is
per frame (4 per second): ``channels × K`` complex amplitudes and floors, a
few kilobytes per second of audio.  Removal is a fourth pass (the CLI's
``--normalize`` adds one).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from ..errors import ParameterError
from .hum_track import (
    PROBE_FRACTIONS,
    PROMINENCE_DB,
    Demodulator,
    Framer,
    LongTermSpectrum,
    convolve_frames,
    decimation_factor,
    find_fundamental,
    frame_geometry,
    hann_kernel,
    hann_positive,
    kernel_smooth,
    n_decimated,
    overlap_factor,
    project,
    search_offsets,
)
from .stft import IstftStream, StftPlan, StftStream

__all__ = [
    "AUTO_NOMINALS",
    "DEFAULT_THRESHOLD_DB",
    "METHODS",
    "DehumResult",
    "HumAnalysis",
    "HumEraser",
    "HumMeter",
    "HumSubtractor",
    "analyze_hum",
    "analyze_hum_blocks",
    "dehum",
]

Method = Literal["subtract", "erase"]
METHODS: tuple[str, ...] = get_args(Method)
"""Removal methods, default first."""

#: Nominal mains frequencies tried by ``freq=None`` (auto), Hz.
AUTO_NOMINALS = (50.0, 60.0)
#: Half-width of the search around a given nominal frequency, relative.
NOMINAL_TOLERANCE = 0.01
#: Highest harmonic considered by default.
MAX_HARMONICS = 40
#: Analysis frame (Hann) and hop, seconds.
FRAME_SECONDS = 1.0
HOP_SECONDS = 0.25
#: Short frames (Hann, hop a quarter of it) also used for the amplitude average (s).
SHORT_FRAME_SECONDS = 0.5
#: Candidate spans (s) of the amplitude average, chosen per harmonic.
SPANS = (2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: Span of the average used while refining the phase track (s).
REFINE_SPAN = 8.0
#: Detection threshold: amplitude power over its noise-only variance (dB).
DEFAULT_THRESHOLD_DB = 8.0
#: Shortest signal analysed (s); shorter input is passed through with a warning.
MIN_SECONDS = 0.5
#: Default erase window (s).
ERASE_WINDOW_SECONDS = 1.0
#: Harmonics stop this far below the Nyquist frequency (Hz).
NYQUIST_MARGIN_HZ = 5.0

_REFINE_ROUNDS = 3
_REFINE_LIMIT = 0.02  # cycles per round
_REFINE_SLOPE = 0.02  # Hz per round
_ROBUST_ROUNDS = 6
_PRECISION_FLOOR = 1e-9  # lowest line power measured, relative to the signal's mean power
_GAP_RELIEF_DB = 3.0  # detection threshold relief for a harmonic between two treated ones
_SPAN_TOLERANCE = 1.3  # a span this much worse than the best in cross-validation is still preferred if longer


# ----------------------------------------------------------------------------- results


class _PhaseSpline:
    """``ψ(t)``: natural cubic spline through the knots, straight lines beyond them."""

    def __init__(self, t: np.ndarray, psi: np.ndarray):
        self.t = np.asarray(t, float)
        self.psi = np.asarray(psi, float)
        if len(self.t) >= 2:
            from scipy.interpolate import CubicSpline  # lazy: scipy.interpolate costs ~0.2 s of CLI start-up

            self._cs = CubicSpline(self.t, self.psi, bc_type="natural")
        else:
            self._cs = None

    def __call__(self, t: np.ndarray, nu: int = 0) -> np.ndarray:
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


@dataclass(frozen=True, eq=False)
class HumAnalysis:
    """What :func:`analyze_hum` found: the fundamental's track and every harmonic's amplitude.

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
        See the module docstring (dB re full-scale sine amplitude).
    span_s : np.ndarray, shape (channels, K)
        Span of the amplitude average chosen per harmonic (s).
    tracked : tuple of int
        Harmonics that steered the drift search.
    threshold_db : float
        Detection threshold used.
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
    _spline: _PhaseSpline = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spline", _PhaseSpline(self.times, self.psi))

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
        """``f0'(t)`` in Hz/s (0 outside the frame times)."""
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
        lo = np.searchsorted(t, t - 0.5 - 1e-9, side="left")
        hi = np.searchsorted(t, t + 0.5 + 1e-9, side="right")
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
        """The treated hum ``h[n]`` for samples ``start <= n < stop``, shape ``(channels, stop - start)``."""
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
        else:
            seg, frac = np.zeros(n.size, np.int64), np.zeros(n.size)
        for c in range(self.channels):
            ks = np.flatnonzero(self.treated[c])
            if ks.size == 0:
                continue
            acc = np.zeros(n.size, np.complex64)
            for i in range(int(ks.max()), -1, -1):
                acc *= u
                if self.treated[c, i]:
                    a = self.amplitudes[c, i].astype(np.complex64)
                    if len(times) > 1:
                        acc += a[seg]
                        acc += (a[seg + 1] - a[seg]) * frac
                    else:
                        acc += a[0]
            out[c] = (acc * u).real
        return out


@dataclass(frozen=True, eq=False)
class DehumResult:
    """Result of :func:`dehum`.

    Attributes
    ----------
    output : np.ndarray, shape like the input, float64
        The signal without the treated hum.
    residual : np.ndarray, shape like the input, float64
        What was removed: input minus output.
    analysis : HumAnalysis
    after_db : np.ndarray, shape (channels, K)
        Level of each line in ``output`` (:class:`HumMeter`).
    method : str
    """

    output: np.ndarray
    residual: np.ndarray
    analysis: HumAnalysis
    after_db: np.ndarray
    method: str


# ----------------------------------------------------------------------------- parameter checks


def _check_sr(sr) -> int:
    if isinstance(sr, bool) or not isinstance(sr, (int, np.integer)) or sr <= 0:
        raise ParameterError(f"sr must be a whole number of Hz > 0, got {sr!r}")
    return int(sr)


def _window(f: float) -> tuple[float, float]:
    half = max(NOMINAL_TOLERANCE * f, 0.05)
    return f - half, f + half


def _search_windows(freq, sr: int) -> list[tuple[float, float, float]]:
    """``[(nominal, lo, hi), ...]``: the nominal frequencies to try and their search windows (Hz)."""
    nyq = sr / 2.0
    if freq is None:
        return [(f,) + _window(f) for f in AUTO_NOMINALS if _window(f)[1] < nyq] or [(AUTO_NOMINALS[0],) + _window(AUTO_NOMINALS[0])]
    if isinstance(freq, bool) or not isinstance(freq, (int, float, np.integer, np.floating)) or not math.isfinite(freq):
        raise ParameterError(f"freq must be a frequency in Hz or None (auto), got {freq!r}")
    f = float(freq)
    if not 0 < f < nyq:
        raise ParameterError(f"freq must be > 0 and below the Nyquist frequency {nyq:g} Hz, got {f:g} Hz")
    return [(f,) + _window(f)]


def _check_harmonics(harmonics) -> int:
    if harmonics is None:
        return MAX_HARMONICS
    if isinstance(harmonics, bool) or not isinstance(harmonics, (int, np.integer)) or harmonics < 1:
        raise ParameterError(f"harmonics must be a whole number >= 1, got {harmonics!r}")
    return int(harmonics)


def _check_threshold(threshold_db) -> float:
    if isinstance(threshold_db, bool) or not isinstance(threshold_db, (int, float, np.integer, np.floating)) or not math.isfinite(threshold_db):
        raise ParameterError(f"threshold_db must be a finite number of dB, got {threshold_db!r}")
    return float(threshold_db)


def _as_2d(x) -> tuple[np.ndarray, bool]:
    x = np.asarray(x)
    if x.ndim not in (1, 2) or not np.issubdtype(x.dtype, np.floating):
        raise ParameterError(f"x must be a float array shaped (n,) or (channels, n), got {x.dtype} {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ParameterError("x contains NaN or Inf samples")
    return (x[None, :], True) if x.ndim == 1 else (x, False)


# ----------------------------------------------------------------------------- analysis


def analyze_hum(
    x: np.ndarray,
    *,
    sr: int,
    freq: float | None = None,
    harmonics: int | None = None,
    threshold_db: float = DEFAULT_THRESHOLD_DB,
    block_size: int = 1 << 16,
) -> HumAnalysis:
    """Measure the mains hum of a signal held in memory.

    Parameters
    ----------
    x : np.ndarray, shape (n,) or (channels, n), float
        Samples, full scale ±1.
    sr : int > 0
        Sample rate (Hz).
    freq : float or None
        Nominal fundamental (Hz): the estimate is searched within ±1 % of it.
        None: try 50 and 60 Hz (:data:`AUTO_NOMINALS`) and keep the better.
    harmonics : int >= 1 or None
        Highest harmonic considered (default :data:`MAX_HARMONICS`), capped
        :data:`NYQUIST_MARGIN_HZ` below the Nyquist frequency.  Only the
        harmonics that pass the detection are treated.
    threshold_db : float
        Detection threshold (see the module docstring).
    block_size : int >= 1
        Samples per block of the passes (the result does not depend on it).

    Returns
    -------
    HumAnalysis

    Raises
    ------
    ParameterError
        Bad ``x``, ``sr``, ``freq``, ``harmonics`` or ``threshold_db``.

    Warns
    -----
    UserWarning
        Input shorter than :data:`MIN_SECONDS`, no harmonic below the Nyquist
        frequency, ``harmonics`` above it, or no hum found.
    """
    x2, _ = _as_2d(x)
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ParameterError(f"block_size must be a whole number >= 1, got {block_size!r}")
    n = x2.shape[1]

    def blocks() -> Iterator[np.ndarray]:
        for i in range(0, n, block_size):
            yield x2[:, i : i + block_size]

    return analyze_hum_blocks(
        blocks, sr=sr, channels=x2.shape[0], n_samples=n, freq=freq, harmonics=harmonics, threshold_db=threshold_db
    )


def analyze_hum_blocks(
    blocks: Callable[[], Iterable[np.ndarray]],
    *,
    sr: int,
    channels: int,
    n_samples: int,
    freq: float | None = None,
    harmonics: int | None = None,
    threshold_db: float = DEFAULT_THRESHOLD_DB,
) -> HumAnalysis:
    """Measure the mains hum of a signal read block by block (three passes).

    Parameters
    ----------
    blocks : callable
        ``blocks()`` returns a fresh iterable of consecutive blocks shaped
        ``(channels, n_i)`` covering the whole signal; it is called three
        times.
    sr, freq, harmonics, threshold_db
        As :func:`analyze_hum`.
    channels : int >= 1
    n_samples : int >= 0
        Total length; the blocks must add up to it.

    Returns
    -------
    HumAnalysis
    """
    sr = _check_sr(sr)
    windows = _search_windows(freq, sr)
    auto = freq is None
    kmax_req = _check_harmonics(harmonics)
    threshold_db = _check_threshold(threshold_db)
    channels, n_samples = int(channels), int(n_samples)

    def cap(hi: float) -> int:
        return min(kmax_req, max(int(math.floor((sr / 2.0 - NYQUIST_MARGIN_HZ) / hi)), 0))

    nominal, lo, hi = windows[0]
    empty = _empty_analysis(sr, channels, n_samples, nominal, auto, (lo, hi), threshold_db)
    if max(cap(w[2]) for w in windows) < 1:
        warnings.warn(
            f"no harmonic of {lo:g}..{hi:g} Hz lies below the Nyquist frequency {sr / 2:g} Hz: nothing to remove",
            stacklevel=3,
        )
        return empty
    if n_samples < MIN_SECONDS * sr:
        warnings.warn(
            f"the signal lasts {n_samples / sr:.3g} s, too short to measure hum (< {MIN_SECONDS:g} s): nothing removed",
            stacklevel=3,
        )
        return empty
    fmax_all = min(sr / 2.0, max(cap(w[2]) * w[2] for w in windows) + 5.0)

    # pass 1: long-term spectrum -> reference frequency (the best-scoring window when auto)
    lts = LongTermSpectrum(sr=sr, n_total=n_samples, fmax=fmax_all)
    for block in blocks():
        lts.push(block)
    power = lts.finish()
    if not np.any(power > 0):
        warnings.warn("the signal is silent: no hum to remove", stacklevel=3)
        return empty
    best = None
    for nom, w_lo, w_hi in windows:
        k_w = cap(w_hi)
        if k_w < 1:
            continue
        f_w = min(sr / 2.0, k_w * w_hi + 5.0)
        found = find_fundamental(power, lts.df, lo=w_lo, hi=w_hi, kmax=k_w, fmax=f_w)
        if best is None or found[1] > best[1][1]:
            best = ((nom, w_lo, w_hi, k_w), found)
    (nominal, lo, hi, kmax), (f_ref, _, prom) = best  # type: ignore[misc]
    if harmonics is not None and kmax_req > kmax:
        warnings.warn(
            f"harmonics above {kmax} would reach the Nyquist frequency {sr / 2:g} Hz; considering 1..{kmax}",
            stacklevel=3,
        )
    harm = np.arange(1, kmax + 1)

    decim = decimation_factor(sr)
    n_dec = n_decimated(n_samples, decim)
    rate = sr / decim
    length = int(round(FRAME_SECONDS * rate)) | 1
    hop = max(1, int(round(HOP_SECONDS * rate)))
    hop_s = hop / rate

    # pass 2: drift of the fundamental, from the harmonics that stand out
    strong = np.flatnonzero(prom >= PROMINENCE_DB)
    strong = strong[np.argsort(-prom[strong])][:12]
    track_k = np.sort(harm[strong])
    framer = Framer(n_total=n_dec, length=length, hop=hop)
    all_frames = np.arange(framer.n_frames)
    _, _, times, _ = frame_geometry(framer, all_frames, decim, sr)
    delta = np.zeros(framer.n_frames)
    if track_k.size:
        margin = 0.5 * (hi - lo) / 2.0
        weights = 10.0 ** (prom[track_k - 1] / 10.0) - 1.0
        step = f_ref / sr
        dem = Demodulator(harmonics=track_k, channels=channels, decim=decim, phase=lambda n: n * step)
        for block in blocks():
            frames, data = framer.push(dem.push(block))
            if frames.size:
                g, _, _, _ = frame_geometry(framer, frames, decim, sr)
                delta[frames] = search_offsets(data, g, track_k, weights, rate=rate, offsets=(lo - margin - f_ref, hi + margin - f_ref))
        # a frame whose best fit lies outside the window is following something else (a note
        # beside a line): its offset is interpolated from the frames that stay inside
        inside = (f_ref + delta >= lo) & (f_ref + delta <= hi)
        if inside.any():
            delta = np.interp(times, times[inside], delta[inside])
        else:
            delta = np.clip(delta, lo - f_ref, hi - f_ref)
    psi = np.zeros(len(times))
    if len(times) > 1:
        psi[1:] = np.cumsum(0.5 * (delta[1:] + delta[:-1]) * np.diff(times))

    # pass 3: amplitudes and floors of every harmonic along the tracked phase
    spline = _PhaseSpline(times, psi)
    step = f_ref / sr
    dem = Demodulator(harmonics=harm, channels=channels, decim=decim, phase=lambda n: n * step + spline(n / sr))
    framer = Framer(n_total=n_dec, length=length, hop=hop)
    probes = f_ref * np.array([s * p for p in PROBE_FRACTIONS for s in (1.0, -1.0)])
    v = np.zeros((channels, kmax, framer.n_frames), complex)
    r = np.zeros((channels, kmax, framer.n_frames))
    # short frames for the amplitude average: speech at a line comes and goes within a second
    short = Framer(n_total=n_dec, length=int(round(SHORT_FRAME_SECONDS * rate)) | 1,
                   hop=max(1, int(round(SHORT_FRAME_SECONDS / 4 * rate))))
    _, _, times2, _ = frame_geometry(short, np.arange(short.n_frames), decim, sr)
    v2 = np.zeros((channels, kmax, short.n_frames), complex)
    r2 = np.zeros((channels, kmax, short.n_frames))
    energy = np.zeros(channels)
    for block in blocks():
        block = np.asarray(block)
        energy += np.einsum("cn,cn->c", block, block, dtype=np.float64) if block.size else 0.0
        d = dem.push(block)
        frames, data = framer.push(d)
        if frames.size:
            g, norm, _, tau = frame_geometry(framer, frames, decim, sr)
            v[:, :, frames], r[:, :, frames] = project(data, g, norm, tau, probes)
        frames, data = short.push(d)
        if frames.size:
            g, norm, _, tau = frame_geometry(short, frames, decim, sr)
            v2[:, :, frames], r2[:, :, frames] = project(data, g, norm, tau, probes)

    return _finish_analysis(
        v, r, times, psi, hop_s, framer, sr=sr, channels=channels, n_samples=n_samples, nominal=nominal, auto=auto,
        search=(lo, hi), f_ref=f_ref, harm=harm, track_k=track_k, threshold_db=threshold_db,
        short=(v2, r2, times2, short.hop / rate), signal_power=energy / max(n_samples, 1),
    )


def _empty_analysis(sr, channels, n_samples, nominal, auto, search, threshold_db) -> HumAnalysis:
    z = np.zeros((channels, 0))
    return HumAnalysis(
        sr=sr, channels=channels, n_samples=n_samples, nominal=nominal, auto=auto, search=search,
        f_ref=float(nominal), harmonics=np.zeros(0, np.int64), times=np.zeros(0),
        psi=np.zeros(0), amplitudes=np.zeros((channels, 0, 0), complex), treated=np.zeros((channels, 0), bool),
        level_db=z, floor_db=z.copy(), snr_db=z.copy(), span_s=z.copy(), tracked=(), threshold_db=threshold_db,
    )


def _db(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(np.maximum(p, 0.0))


_ROW_CHUNK = 16  # (channel, harmonic) rows processed together: bounds the temporaries


def _finish_analysis(v, r, times, psi, hop_s, framer, *, sr, channels, n_samples, nominal, auto, search, f_ref, harm,
                     track_k, threshold_db, short=None, signal_power=None) -> HumAnalysis:
    """Refine the phase, choose spans, average the amplitudes, detect (all on frame arrays).

    The rows (channel, harmonic) are independent but for the phase refinement,
    which sums over them; they are handled :data:`_ROW_CHUNK` at a time so
    that the temporaries stay small for long signals.
    """
    tiny = np.finfo(float).tiny
    n_k, m = len(harm), v.shape[-1]
    rot = v.reshape(-1, m).copy()
    rr = np.maximum(r.reshape(-1, m), tiny)
    kk = np.tile(harm.astype(float), channels)[:, None]
    chunks = [slice(i, min(i + _ROW_CHUNK, rot.shape[0])) for i in range(0, rot.shape[0], _ROW_CHUNK)]
    psi = psi.copy()
    rot2 = None
    if short is not None:
        v2, r2, times2, hop2_s = short
        rot2 = v2.reshape(-1, v2.shape[-1]).copy()
        rr2 = np.maximum(r2.reshape(-1, v2.shape[-1]), tiny)
    ker = hann_kernel(REFINE_SPAN / hop_s)
    for _ in range(_REFINE_ROUNDS):
        num, den = np.zeros(m), np.zeros(m)
        for c in chunks:
            mean, _ = kernel_smooth(rot[c], 1.0 / rr[c], ker)
            w = (mean.real**2 + mean.imag**2) / rr[c]
            num += np.sum(w * kk[c] * np.angle(rot[c] * np.conj(mean)), axis=0)
            den += np.sum(w * kk[c] ** 2, axis=0)
        dpsi = np.where(den > 0, num / np.maximum(den, tiny), 0.0) / (2 * np.pi)
        # a correction, not a new track: each round may shift the phase by at most
        # _REFINE_LIMIT cycles and bend the frequency by at most _REFINE_SLOPE Hz
        steps = np.clip(np.diff(dpsi), -_REFINE_SLOPE * np.diff(times), _REFINE_SLOPE * np.diff(times))
        dpsi = np.clip(dpsi[:1], -_REFINE_LIMIT, _REFINE_LIMIT) + np.concatenate([[0.0], np.cumsum(steps)])
        psi += dpsi
        if rot2 is not None:
            rot2 *= np.exp(-2j * np.pi * kk * np.interp(times2, times, dpsi))
        for c in chunks:
            rot[c] *= np.exp(-2j * np.pi * kk[c] * dpsi)

    # span per (channel, harmonic) by cross-validation, then the robust average and its noise variance
    exclude = int(np.ceil(framer.length / framer.hop / 2.0))  # frames sharing over half their window
    kappa = overlap_factor(framer.window, framer.hop)
    if short is not None:
        kappa2 = overlap_factor(hann_positive(max(1, int(round(SHORT_FRAME_SECONDS * framer.hop / hop_s)) | 1)),
                                max(1, int(round(framer.hop * hop2_s / hop_s))))
    choice = np.zeros(rot.shape[0], np.int64)
    power, noise = np.zeros(rot.shape[0]), np.zeros(rot.shape[0])
    amps = np.zeros_like(rot)
    for c in chunks:
        y, rc = rot[c], rr[c]
        mean0, _ = _robust_average(y, rc, ker, rounds=3)
        w0 = 1.0 / (rc + np.abs(y - mean0) ** 2)
        scores = []
        for span in SPANS:
            pred, den = kernel_smooth(y, w0, hann_kernel(span / hop_s, exclude=exclude))
            ok = den > 0
            err = np.where(ok, w0 * np.abs(y - pred) ** 2, 0.0).sum(-1)
            tot = np.where(ok, w0, 0.0).sum(-1)
            scores.append(np.where(tot > 0, err / np.maximum(tot, tiny), np.inf))
        sc = np.stack(scores)
        # the hum is stationary: the longest span whose score is within _SPAN_TOLERANCE of the best
        ok_span = sc <= sc.min(axis=0) * _SPAN_TOLERANCE
        pick = len(SPANS) - 1 - np.argmax(ok_span[::-1], axis=0)
        choice[c] = pick
        rows = np.arange(c.start, c.stop)
        for i, span in enumerate(SPANS):
            sel = rows[pick == i]
            if not sel.size:
                continue
            kx = hann_kernel(span / hop_s)
            mean, w = _robust_average(rot[sel], rr[sel], kx, rounds=_ROBUST_ROUNDS)
            amps[sel] = mean
            if rot2 is not None and rot2.shape[-1] >= 2 and m >= 1:
                # the same average over the short frames; kept where its spread (sandwich variance
                # from the residuals) is the smaller: a steady partial beside a line leaks into
                # short frames and shows there as a large residual
                kx2 = hann_kernel(span / hop2_s)
                mean2, w2 = _robust_average(rot2[sel], rr2[sel], kx2, rounds=_ROBUST_ROUNDS)
                s1 = kappa * np.mean(_sandwich(rot[sel], mean, w, kx), axis=-1)
                s2 = kappa2 * np.mean(_sandwich(rot2[sel], mean2, w2, kx2), axis=-1)
                use = s2 < s1
                if use.any():
                    mi = (np.array([np.interp(times, times2, z) for z in mean2[use].real])
                          + 1j * np.array([np.interp(times, times2, z) for z in mean2[use].imag]))
                    amps[sel[use]] = mi
            den = convolve_frames(w, kx)
            var = convolve_frames(w**2 * rr[sel], kx**2)
            power[sel] = np.mean(mean.real**2 + mean.imag**2, axis=-1)
            noise[sel] = np.mean(kappa * var / np.maximum(den, tiny) ** 2, axis=-1)
    if signal_power is not None:
        # the demodulation runs in float32: its rounding, some 100 dB under the signal, is not
        # white and does not average out, so nothing that far down counts as a line
        noise = np.maximum(noise, _PRECISION_FLOOR * np.repeat(np.asarray(signal_power, float), n_k))
    snr = np.where(power > 0, _db(power / np.maximum(noise, tiny)), -np.inf).reshape(channels, n_k)
    treated = snr >= threshold_db
    # a gap in a detected series: a harmonic whose two neighbours are treated needs less
    if n_k >= 3:
        gap = np.zeros_like(treated)
        gap[:, 1:-1] = treated[:, :-2] & treated[:, 2:]
        treated |= gap & (snr >= threshold_db - _GAP_RELIEF_DB)
    # a held note's partials can sit on k·f0: hum shows its fundamental, or at least two
    # harmonics of which one is among the first three
    low = treated[:, : min(3, n_k)].any(axis=1)
    plausible = treated[:, 0] | ((treated.sum(axis=1) >= 2) & low)
    treated[~plausible] = False
    analysis = HumAnalysis(
        sr=sr, channels=channels, n_samples=n_samples, nominal=nominal, auto=auto, search=search, f_ref=float(f_ref),
        harmonics=harm.astype(np.int64), times=times, psi=psi, amplitudes=amps.reshape(channels, n_k, m),
        treated=treated, level_db=_db(np.mean(np.abs(v) ** 2, axis=-1)), floor_db=_db(np.mean(r, axis=-1)),
        snr_db=snr, span_s=np.asarray(SPANS)[choice].reshape(channels, n_k), tracked=tuple(int(k) for k in track_k),
        threshold_db=threshold_db,
    )
    if not analysis.found:
        where = "near 50 or 60 Hz" if auto else f"near {nominal:g} Hz"
        warnings.warn(f"no hum found {where} (no harmonic {threshold_db:g} dB above its noise): nothing removed",
                      stacklevel=4)
    return analysis


def _sandwich(y: np.ndarray, mean: np.ndarray, w: np.ndarray, ker: np.ndarray) -> np.ndarray:
    """Variance of a weighted kernel average from its residuals: ``Σ ker² w² |y - mean|² / (Σ ker w)²``."""
    den = convolve_frames(w, ker)
    num = convolve_frames(w**2 * ((y.real - mean.real) ** 2 + (y.imag - mean.imag) ** 2), ker**2)
    return num / np.maximum(den, np.finfo(float).tiny) ** 2


def _robust_average(y: np.ndarray, r: np.ndarray, ker: np.ndarray, *, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Kernel average with weights ``1/(r + |y - mean|²)``, ``rounds`` reweightings; returns ``(mean, w)``."""
    w = 1.0 / r
    mean, _ = kernel_smooth(y, w, ker)
    for _ in range(rounds):
        w = 1.0 / (r + (y.real - mean.real) ** 2 + (y.imag - mean.imag) ** 2)
        mean, _ = kernel_smooth(y, w, ker)
    return mean, w


# ----------------------------------------------------------------------------- removal and measurement


def _check_block(block: np.ndarray, channels: int) -> np.ndarray:
    block = np.asarray(block)
    if block.ndim != 2 or block.shape[0] != channels:
        raise ParameterError(f"blocks must be shaped ({channels}, n), got {block.shape}")
    return block


class HumSubtractor:
    """Subtract the treated hum of an analysis, block by block (``subtract`` method).

    Parameters
    ----------
    analysis : HumAnalysis

    Notes
    -----
    ``process(block)`` takes the next samples ``(channels, n)`` and returns
    ``block - h`` in float64 (:meth:`HumAnalysis.model`), with no delay: the
    output of any block partition equals the one-shot output sample for
    sample.  Blocks past ``analysis.n_samples`` are modelled too (the phase
    and amplitudes extrapolated).
    """

    def __init__(self, analysis: HumAnalysis):
        self.analysis = analysis
        self.position = 0

    def process(self, block: np.ndarray) -> np.ndarray:
        """Remove the hum from the next block ``(channels, n)``; return float64 ``(channels, n)``."""
        block = _check_block(block, self.analysis.channels)
        n = block.shape[1]
        out = block.astype(np.float64) - self.analysis.model(self.position, self.position + n)
        self.position += n
        return out


class HumEraser:
    """Zero the STFT bins of the treated harmonics and rebuild by overlap-add (``erase`` method).

    Parameters
    ----------
    analysis : HumAnalysis
    win_length : int, optional
        STFT window ``W`` in samples (default :data:`ERASE_WINDOW_SECONDS`,
        rounded to an even count); at least 4 periods of the fundamental.
    width_hz : float > 0, optional
        Erased band around each line (Hz), default ``4·sr/W`` (the main lobe
        of the Hann window).  Harmonic ``k`` also gets ``k·|f0'|·W/(2·sr)``
        on each side for the drift within a frame.

    Notes
    -----
    Periodic Hann, hop ``W/4``, ``n_fft = W``, ``center=True`` (so every
    sample is rebuilt).  ``push(block)`` returns the output samples that are
    final so far (the overlap-add lags the input by up to ``W`` samples),
    ``finish()`` the rest; the output has ``analysis.n_samples`` samples and
    matches the one-shot result to float rounding (batched FFTs).  When no
    harmonic is treated the input is passed through unchanged (no STFT).
    """

    def __init__(self, analysis: HumAnalysis, *, win_length: int | None = None, width_hz: float | None = None):
        self.analysis = analysis
        sr = analysis.sr
        if win_length is None:
            win_length = int(round(ERASE_WINDOW_SECONDS * sr))
            win_length += win_length % 2
        if isinstance(win_length, bool) or not isinstance(win_length, (int, np.integer)):
            raise ParameterError(f"win_length must be a whole number of samples, got {win_length!r}")
        f0 = analysis.f_ref
        if win_length < 4 * sr / f0:
            raise ParameterError(
                f"the erase window must hold at least 4 periods of the fundamental ({4 / f0:.3g} s = "
                f"{int(math.ceil(4 * sr / f0))} samples) to resolve the hum lines; got {win_length} samples"
            )
        if width_hz is None:
            width_hz = 4.0 * sr / win_length
        if isinstance(width_hz, bool) or not isinstance(width_hz, (int, float, np.integer, np.floating)) or not (
            math.isfinite(width_hz) and width_hz > 0
        ):
            raise ParameterError(f"width_hz must be a number of Hz > 0, got {width_hz!r}")
        self.win_length = int(win_length)
        self.width_hz = float(width_hz)
        hop = max(1, self.win_length // 4)
        self.plan = StftPlan(sr=sr, win_length=self.win_length, hop_length=hop, window="hann", center=True)
        self._stft = StftStream(self.plan)
        self._istft = IstftStream(self.plan, length=analysis.n_samples)
        self._frame = 0
        self._freqs = self.plan.freqs

    def _erase(self, X: np.ndarray) -> np.ndarray:
        a = self.analysis
        k = X.shape[-1]
        if k == 0 or not a.found:
            return X
        m = self._frame + np.arange(k)
        t = m * self.plan.hop_length / a.sr
        f0 = a.frequency(t)
        drift = np.abs(a.drift_rate(t)) * (self.win_length / a.sr) / 2.0
        df = self.plan.delta_f
        nb = X.shape[-2]
        for c in range(a.channels):
            for i in np.flatnonzero(a.treated[c]):
                h = int(a.harmonics[i])
                centre = h * f0
                half = self.width_hz / 2.0 + h * drift
                lo = np.clip(np.ceil((centre - half) / df), 0, nb).astype(np.int64)
                hi = np.clip(np.floor((centre + half) / df) + 1, 0, nb).astype(np.int64)
                for j in range(k):
                    X[c, lo[j] : hi[j], j] = 0
        return X

    def push(self, block: np.ndarray) -> np.ndarray:
        """Feed samples ``(channels, n)``; return the finished output samples ``(channels, n_out)``."""
        block = _check_block(block, self.analysis.channels).astype(np.float64)
        if not self.analysis.found:
            return block
        X = self._stft.push(block)
        X = self._erase(X)
        self._frame += X.shape[-1]
        return self._istft.push(X)

    def finish(self) -> np.ndarray:
        """End of input: return the remaining output samples ``(channels, n_out)``."""
        if not self.analysis.found:
            return np.zeros((self.analysis.channels, 0))
        X = self._erase(self._stft.finish())
        self._frame += X.shape[-1]
        head = self._istft.push(X)
        return np.concatenate([head, self._istft.finish()], axis=-1)


class HumMeter:
    """Measure the lines of an analysis in another signal (typically the output), block by block.

    Parameters
    ----------
    analysis : HumAnalysis

    Notes
    -----
    The same demodulation along ``Φ`` and the same 1 s frame projections as
    the analysis' pass 3; ``finish()`` returns ``10·log10(mean_m |v_k[m]|²)``
    per channel and harmonic (dB re full-scale sine), comparable with
    :attr:`HumAnalysis.level_db`.  Feed exactly ``analysis.n_samples`` samples.
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
            n_total=n_decimated(a.n_samples, self._decim), length=int(round(FRAME_SECONDS * rate)) | 1,
            hop=max(1, int(round(HOP_SECONDS * rate))),
        )
        self._dem = Demodulator(harmonics=a.harmonics, channels=a.channels, decim=self._decim, phase=a.phase)

    def push(self, block: np.ndarray) -> None:
        """Add the next samples ``(channels, n)``."""
        block = _check_block(block, self.analysis.channels)
        if self._dem is None:
            return
        frames, data = self._framer.push(self._dem.push(block))
        if frames.size:
            g, norm, _, _ = frame_geometry(self._framer, frames, self._decim, self.analysis.sr)
            v = (data * g).astype(np.complex128).sum(axis=-1) * norm
            self._power += np.sum(v.real**2 + v.imag**2, axis=-1)
            self._count += frames.size

    def finish(self) -> np.ndarray:
        """Levels ``(channels, K)`` in dB (``-inf`` for an exact zero)."""
        return _db(self._power / max(self._count, 1))


# ----------------------------------------------------------------------------- one call


def dehum(
    x: np.ndarray,
    *,
    sr: int,
    freq: float | None = None,
    method: Method = "subtract",
    harmonics: int | None = None,
    threshold_db: float = DEFAULT_THRESHOLD_DB,
    win_length: int | None = None,
    width_hz: float | None = None,
    block_size: int = 1 << 16,
) -> DehumResult:
    """Remove mains hum from a signal in memory.

    Parameters
    ----------
    x : np.ndarray, shape (n,) or (channels, n), float
        Samples, full scale ±1.
    sr : int > 0
        Sample rate (Hz).
    freq : float or None
        Nominal fundamental (Hz), or None to choose between 50 and 60 Hz.
    method : {'subtract', 'erase'}
        Model subtraction (default) or STFT bin erasure (see the module docstring).
    harmonics : int >= 1 or None
        Highest harmonic considered (default 40, below Nyquist).
    threshold_db : float
        Detection threshold (dB).
    win_length : int, optional
        ``erase`` only: STFT window in samples (default 1 s).
    width_hz : float, optional
        ``erase`` only: erased band per line (Hz, default ``4·sr/win_length``).
    block_size : int >= 1
        Samples per block (the result does not depend on it for ``subtract``;
        for ``erase`` up to FFT rounding).

    Returns
    -------
    DehumResult
        ``output`` and ``residual`` shaped like ``x`` (float64), the analysis and
        the line levels of the output.

    Raises
    ------
    ParameterError
        Bad parameters, including ``win_length``/``width_hz`` with ``subtract``.

    Examples
    --------
    >>> import numpy as np
    >>> sr = 16000
    >>> t = np.arange(3 * sr) / sr
    >>> x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 50.02 * t)
    >>> res = dehum(x, sr=sr, freq=50)
    >>> round(res.analysis.f0, 2), res.analysis.treated_harmonics
    (50.02, (1,))
    """
    if method not in METHODS:
        raise ParameterError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
    if method == "subtract" and (win_length is not None or width_hz is not None):
        raise ParameterError("win_length and width_hz apply to method='erase' only")
    x2, squeeze = _as_2d(x)
    analysis = analyze_hum(x2, sr=sr, freq=freq, harmonics=harmonics, threshold_db=threshold_db, block_size=block_size)
    n = x2.shape[1]
    pieces = []
    if method == "subtract":
        sub = HumSubtractor(analysis)
        for i in range(0, n, block_size):
            pieces.append(sub.process(x2[:, i : i + block_size]))
    else:
        er = HumEraser(analysis, win_length=win_length, width_hz=width_hz)
        if n:
            for i in range(0, n, block_size):
                pieces.append(er.push(x2[:, i : i + block_size]))
            pieces.append(er.finish())
    y = np.concatenate(pieces, axis=1) if pieces else np.zeros((x2.shape[0], 0))
    meter = HumMeter(analysis)
    meter.push(y)
    after = meter.finish()
    residual = x2.astype(np.float64) - y
    if squeeze:
        y, residual = y[0], residual[0]
    return DehumResult(output=y, residual=residual, analysis=analysis, after_db=after, method=method)

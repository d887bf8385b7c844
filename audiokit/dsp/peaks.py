r"""Interpolated spectral peaks: frequency, amplitude and phase of the sinusoids in a :class:`Spectrum`.

The conventions (DFT scaling, one-sided amplitude, cosine phase at the first
sample) are those of :mod:`audiokit.dsp.dft`.

Model
-----
:func:`find_peaks` fits, around each local maximum, the exact model of one
real sinusoid seen through the window::

    X[k] ≈ a·W(k - κ) + conj(a)·W(k + κ),   W(u) = sum_n w[n] exp(-2πi u n / n_fft)

with ``κ`` the tone's position in (fractional) bins and ``a = (A/2)·e^{iφ}``.
``W`` is evaluated in closed form for cosine-sum windows (rectangular, Hann,
Hamming, Blackman, Blackman-Harris, Nuttall, flat-top; periodic or
symmetric: a sum of Dirichlet kernels) and by direct summation for others
(Kaiser, Bartlett, custom arrays: cost ``O(N)`` per evaluation, so slow for
very long signals).  Including the mirror term makes tones near DC and Nyquist
exact as well.  For a single tone the fit is exact to rounding: measured over
fractional offsets 0..1 bin, every window above, periodic and symmetric, with
and without zero padding, the worst errors are 1e-13 bin, 1e-12 dB and 1e-12
rad.  Within a few thousandths of a bin of DC or Nyquist the two terms merge
and the errors grow to about 1e-9 relative; closer than about 1e-6 bin a tone
is reported exactly on the edge, where only ``A·cos φ`` is observable.
A tone that is not a local maximum of ``|X|`` (buried in a stronger tone's
leakage) is not found: use a window with lower sidelobes.
Stronger tones are subtracted (with their fitted model) before weaker ones are
fitted and tested, so sidelobes of a tone are not reported as peaks, and tones
a few bins apart are each measured without the other's leakage.

Steps of :func:`find_peaks`
---------------------------
1. :func:`_check_arguments`; the amplitude floor from ``threshold_db``.
2. :func:`_local_maxima` of ``|X|`` above the floor are the candidates,
   visited strongest first by :func:`_strongest_first`.
3. :func:`_select_tones`: a candidate is kept when the residual (spectrum minus
   the tones kept so far, :meth:`_ToneFitter.residual`) still peaks there
   (:func:`_residual_peak`); it is then fitted on that residual
   (:meth:`_ToneFitter.fit`: :func:`_fit_kernel` or :func:`_fit_simple`).
4. :func:`_refit`: every tone again with all the others subtracted, until the
   estimates settle.
5. :func:`_peak_from` turns each fitted tone into a :class:`Peak`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import minimize_scalar

from ..errors import ParameterError
from ..validate import check_choice, check_int, is_real
from .dft import Spectrum, one_sided_weights
from .windows import enbw

__all__ = ["INTERPOLATIONS", "Interpolation", "Peak", "find_peaks"]

Interpolation = Literal["kernel", "quadratic-log", "none"]
INTERPOLATIONS: tuple[str, ...] = ("kernel", "quadratic-log", "none")

# --------------------------------------------------------------------------- tuning constants
# Units: "bin" is a bin of n_fft (sr/n_fft Hz); "bin of sr/N" is a bin of the unpadded signal.

#: Most passes of the joint refit (each pass refits every peak with all the others subtracted).
_MAX_REFIT_PASSES = 6
#: The refit stops once no peak moved by more than this (bins, and relative amplitude change).
_REFIT_TOL = 1e-12
#: Denominator guard of the relative amplitude change (full-scale units): avoids 0/0.
_TINY_AMPLITUDE = 1e-300
#: Residual bins within this many machine epsilons of the largest amplitude are rounding noise.
_ROUNDING_FLOOR_EPS = 100.0
#: A candidate k0 is re-examined on the residual at k0 ± this many bins (>= 2): its maximum may move by
#: one bin, and the bins on either side of that maximum must be seen too.
_RESIDUAL_REACH = 2
#: Most times the kernel fit is re-centred on its own estimate when it lands on the edge of its range.
_MAX_RECENTRE = 3
#: A kernel fit closer than this fraction of the half width to the edge of its range counts as on the edge.
_EDGE_MARGIN = 1e-9
#: Points per bin of sr/N of the kernel fit's coarse grid (spacing 1/8 bin of sr/N).
_GRID_PER_BIN = 8
#: Candidates in the first partial sort: this many per requested peak, plus _FIRST_BATCH_EXTRA.
_FIRST_BATCH_PER_PEAK = 32
_FIRST_BATCH_EXTRA = 64
#: Each later partial sort takes this many times more candidates than the previous one.
_BATCH_GROWTH = 4
#: Absolute tolerance (bins) of the bounded Brent search of the kernel fit.
_BRENT_XATOL = 1e-12
#: Step of the final parabola through the cost, as a fraction of the coarse grid spacing.
_PARABOLA_STEP = 1e-6
#: A fit within this many bins of DC or Nyquist is compared with the tone exactly on the edge.
_EDGE_SNAP = 1e-2
#: Rounding of a kernel sum grows like this constant times N·eps (relative to the data).
_KERNEL_ROUNDING = 16.0
#: Relative singular-value cut-off of the least-squares fit (drops Im(a) on DC/Nyquist, where it is unobservable).
_LSQ_RCOND = 1e-9
#: A window is symmetric (period N - 1) when |w[N-1] - w[0]| <= this times max|w|.
_SYMMETRY_TOL = 1e-12
#: A window is a cosine sum when the energy outside its first terms is <= this fraction of the total.
_COSINE_SUM_TOL = 1e-24
#: Elements (points × window samples) per temporary of the kernel's direct summation (8 MiB of float64).
_DIRECT_SUM_BLOCK = 1 << 20


# --------------------------------------------------------------------------- window kernel


def _dirichlet(theta: np.ndarray, n: int) -> np.ndarray:
    """``sum_{m=0}^{n-1} exp(-2πi θ m) = e^{-iπ(n-1)r}·sin(π n r)/sin(π r)``, ``r = θ - round(θ)``."""
    r = theta - np.rint(theta)  # np.rint: the same round-half-even as np.round, without its wrapper's cost
    s = np.sin(np.pi * r)
    zero = s == 0
    ratio = np.where(zero, float(n), np.sin(np.pi * n * r) / np.where(zero, 1.0, s))
    return np.exp(-1j * np.pi * (n - 1) * r) * ratio


class _Kernel:
    """DTFT of the window in bins of ``n_fft``: ``W(u) = sum_n w[n] exp(-2πi u n / n_fft)``.

    A window that equals ``sum_m c_m cos(2π m n / P)`` with ``P = N`` (periodic)
    or ``P = N - 1`` (symmetric) and at most 8 terms is detected from its own
    DFT, and ``W`` is then a sum of Dirichlet kernels (exact, O(1));
    otherwise ``W`` is summed directly (O(N) per point).
    """

    max_terms = 8

    def __init__(self, w: np.ndarray, n_fft: int):
        self.w = w
        self.n = w.size
        self.n_fft = n_fft
        self.coeffs: np.ndarray | None = None
        self.period = 0
        scale = float(np.max(np.abs(w)))
        for period in (self.n, self.n - 1):
            if period < 1 or (period == self.n - 1 and abs(w[-1] - w[0]) > _SYMMETRY_TOL * scale):
                continue
            spec = np.fft.rfft(w[:period])
            m = min(self.max_terms, spec.size - 1)
            total = float(np.sum(np.abs(spec) ** 2))
            leftover = float(np.sum(np.abs(spec[m + 1 :]) ** 2) + np.sum(spec[: m + 1].imag ** 2))
            if leftover <= _COSINE_SUM_TOL * total:
                c = 2.0 * spec[: m + 1].real / period
                c[0] /= 2.0
                if period % 2 == 0 and m == period // 2:
                    c[m] /= 2.0
                self.coeffs = c
                self.period = period
                break

    def __call__(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=np.float64)
        if self.coeffs is not None:
            n_fft, n = self.n_fft, self.n
            terms = [m for m in range(1, self.coeffs.size) if self.coeffs[m] != 0.0]
            shifts = [m * n_fft / self.period for m in terms]  # harmonic m in bins of n_fft
            # every shifted kernel in one vectorised call: per-call overhead dominated small evaluations
            thetas = [u / n_fft] + [(u - v) / n_fft for v in shifts] + [(u + v) / n_fft for v in shifts]
            kernels = _dirichlet(np.stack(thetas), n)
            out = self.coeffs[0] * kernels[0]
            for i, m in enumerate(terms):
                out = out + (0.5 * self.coeffs[m]) * (kernels[1 + i] + kernels[1 + len(terms) + i])
            return out
        flat = u.ravel()
        out = np.zeros(flat.size, dtype=np.complex128)
        step = max(1, _DIRECT_SUM_BLOCK // max(flat.size, 1))
        for start in range(0, self.n, step):
            idx = np.arange(start, min(start + step, self.n))
            cycles = np.multiply.outer(flat, idx) / self.n_fft
            cycles -= np.round(cycles)
            phase = (2.0 * np.pi) * cycles
            # Element-wise products and sums (a complex-by-real matmul is slow in numpy).
            out += (np.cos(phase) * self.w[idx]).sum(axis=-1) - 1j * (np.sin(phase) * self.w[idx]).sum(axis=-1)
        return out.reshape(u.shape)


# --------------------------------------------------------------------------- peaks and tones


@dataclass(frozen=True)
class Peak:
    """A spectral peak read as one sinusoid ``amplitude·cos(2π·freq_hz·t + phase)``.

    Parameters
    ----------
    freq_hz : float
        Interpolated frequency in Hz, ``bin·sr/n_fft``.
    amplitude : float
        Amplitude in full-scale units, with the window's coherent gain, the
        one-sided folding and the scalloping loss at the fitted frequency
        corrected (1.0 = full-scale sine).  At DC and Nyquist it is the
        magnitude of the constant / alternating sequence.
    dbfs : float
        ``20·log10(amplitude)`` (``-inf`` for 0).
    bin : float
        Fractional bin position ``κ`` (units of ``sr/n_fft``).
    phase : float
        Cosine phase in radians at the segment's first sample, in (-π, π].
    """

    freq_hz: float
    amplitude: float
    dbfs: float
    bin: float
    phase: float


class _Observed:
    """The full (two-sided) spectrum at any integer bin, from the one-sided half."""

    def __init__(self, X: np.ndarray, n_fft: int):
        self.X = X.astype(np.complex128)
        self.n_fft = n_fft

    def __call__(self, bins: np.ndarray) -> np.ndarray:
        k = np.mod(bins, self.n_fft)
        half = self.n_fft // 2
        mirrored = k > half
        idx = np.where(mirrored, self.n_fft - k, k)
        vals = self.X[idx]
        return np.where(mirrored, np.conj(vals), vals)


@dataclass
class _Tone:
    kappa: float
    a: complex  # (A/2)·e^{iφ}

    def model(self, kernel: _Kernel, bins: np.ndarray) -> np.ndarray:
        return self.a * kernel(bins - self.kappa) + np.conj(self.a) * kernel(bins + self.kappa)


def _canonical(tone: _Tone, n_fft: int) -> _Tone:
    """Map ``κ`` into [0, n_fft/2]: ``κ``, ``-κ`` and ``n_fft - κ`` are the same real tone."""
    kappa = math.fmod(tone.kappa, n_fft)
    a = tone.a
    if kappa < 0:
        kappa, a = -kappa, np.conj(a)
    if kappa > n_fft / 2:
        kappa = n_fft - kappa
        a = np.conj(a)
    return _Tone(kappa, complex(a))


# --------------------------------------------------------------------------- fitting one tone


def _lsq(y: np.ndarray, bins: np.ndarray, kappa: float, kernel: _Kernel) -> tuple[float, complex]:
    """Best ``a`` for a tone at ``kappa`` and the squared residual norm."""
    wp = kernel(bins - kappa)
    wm = kernel(bins + kappa)
    s, d = wp + wm, wp - wm
    # y = p·(Wp + Wm) + i·q·(Wp - Wm) with a = p + iq: linear in (p, q).
    A = np.empty((2 * bins.size, 2))
    A[: bins.size, 0], A[bins.size :, 0] = s.real, s.imag
    A[: bins.size, 1], A[bins.size :, 1] = -d.imag, d.real
    rhs = np.concatenate([y.real, y.imag])
    # rcond drops the q column when κ sits (numerically) on DC or Nyquist, where
    # only Re(a) is observable; the minimum-norm solution then has q = 0.
    sol, *_ = np.linalg.lstsq(A, rhs, rcond=_LSQ_RCOND)
    r = rhs - A @ sol
    return float(r @ r), complex(sol[0], sol[1])


def _cost(delta: float, y: np.ndarray, bins: np.ndarray, k0: int, kernel: _Kernel) -> float:
    """Squared residual of the best tone at ``k0 + delta`` (the function :func:`_fit_kernel` minimises)."""
    return _lsq(y, bins, k0 + delta, kernel)[0]


def _fit_kernel(y: np.ndarray, bins: np.ndarray, k0: int, half_width: float, n_grid: int, kernel: _Kernel) -> _Tone:
    """Least-squares fit of one real tone to the observed bins.

    The offset ``δ = κ - k0`` is searched on ``[-half_width, half_width]``: a
    grid of ``n_grid`` points, a bounded Brent search around every local
    minimum of the grid, then one parabola through close points to remove
    Brent's relative tolerance.
    """
    args = (y, bins, k0, kernel)
    grid = np.linspace(-half_width, half_width, n_grid)
    costs = np.array([_cost(d, *args) for d in grid])
    best_delta, best_cost = float(grid[int(np.argmin(costs))]), float(np.min(costs))
    for i in range(n_grid):
        left = costs[i - 1] if i > 0 else np.inf
        right = costs[i + 1] if i < n_grid - 1 else np.inf
        if not (costs[i] <= left and costs[i] <= right):
            continue
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, n_grid - 1)]
        res = minimize_scalar(_cost, bounds=(lo, hi), args=args, method="bounded", options={"xatol": _BRENT_XATOL})
        if res.fun < best_cost:
            best_delta, best_cost = float(res.x), float(res.fun)
    delta = best_delta
    h = _PARABOLA_STEP * (grid[1] - grid[0])
    c0, cm, cp = _cost(delta, *args), _cost(delta - h, *args), _cost(delta + h, *args)
    curvature = cm - 2.0 * c0 + cp
    if curvature > 0:
        shifted = delta + 0.5 * h * (cm - cp) / curvature
        if abs(shifted - delta) <= h and _cost(shifted, *args) <= c0:
            delta = shifted
    kappa = k0 + delta
    # At DC and Nyquist (multiples of n_fft/2) the two model terms merge and the
    # cost is flat to 4th order in the distance: prefer the exact edge when it
    # fits as well (within rounding).
    half_n = kernel.n_fft / 2
    edge = round(kappa / half_n) * half_n
    if abs(kappa - edge) < _EDGE_SNAP:
        # Rounding of the kernel sums grows like N·eps.
        noise = (_KERNEL_ROUNDING * kernel.n * np.finfo(np.float64).eps) ** 2 * float(np.sum(np.abs(y) ** 2))
        if _lsq(y, bins, edge, kernel)[0] <= _lsq(y, bins, kappa, kernel)[0] + noise:
            kappa = edge
    _, a = _lsq(y, bins, kappa, kernel)
    return _Tone(kappa, a)


def _fit_simple(y3: np.ndarray, k0: int, kernel: _Kernel, interpolation: str) -> _Tone:
    """``quadratic-log`` (parabola through log |X| at k0-1, k0, k0+1) or ``none`` (the bin itself).

    The frequency comes from the interpolation alone; ``a`` is then the
    least-squares value at that frequency (scalloping loss, window phase and
    mirror term accounted for).
    """
    delta = 0.0
    if interpolation == "quadratic-log":
        tiny = np.finfo(np.float64).tiny
        lm, l0, lp = np.log(np.maximum(np.abs(y3), tiny))
        den = lm - 2.0 * l0 + lp
        if den < 0:
            delta = float(np.clip(0.5 * (lm - lp) / den, -0.5, 0.5))  # the vertex, within half a bin
    bins = k0 + np.arange(-1, 2)
    _, a = _lsq(y3, bins, k0 + delta, kernel)
    return _Tone(k0 + delta, a)


class _ToneFitter:
    """What every fit on one spectrum shares: observed bins, window kernel, search range.

    Parameters
    ----------
    spec : Spectrum
        Single-channel spectrum.
    scale : np.ndarray, shape (n_bins,)
        ``|X| -> amplitude`` factor of each one-sided bin, ``c_k / sum(w)``.
    interpolation : {"kernel", "quadratic-log", "none"}
        How :meth:`fit` estimates a tone.
    """

    def __init__(self, spec: Spectrum, scale: np.ndarray, interpolation: str):
        self.n_fft = spec.n_fft
        self.sr = spec.sr
        self.scale = scale
        self.interpolation = interpolation
        self.kernel = _Kernel(spec.window, spec.n_fft)
        self.observed = _Observed(spec.X, spec.n_fft)
        # Observed bins k0 ± half: about one main-lobe half width (1 bin of sr/N for
        # Hann, 3 for flat-top), in bins of n_fft; the fit searches the same range
        # on a grid of 1/_GRID_PER_BIN bin of sr/N.
        lobe = max(1, int(round(enbw(spec.window) - 0.5)))
        pad = spec.n_fft / spec.n
        self.half = max(1, int(round(lobe * pad)))
        self.n_grid = 2 * _GRID_PER_BIN * lobe + 1
        self.offsets = np.arange(-self.half, self.half + 1)

    def amp_scale(self, bins: np.ndarray) -> np.ndarray:
        """Amplitude scale of arbitrary (possibly mirrored) integer bins."""
        kk = np.mod(bins, self.n_fft)
        kk = np.where(kk > self.n_fft // 2, self.n_fft - kk, kk)
        return self.scale[kk]

    def residual(self, bins: np.ndarray, tones: list[_Tone], skip: int | None = None) -> np.ndarray:
        """The observed spectrum at ``bins`` minus the model of every tone but ``tones[skip]``."""
        y = self.observed(bins)
        for j, tone in enumerate(tones):
            if j != skip:
                y = y - tone.model(self.kernel, bins)
        return y

    def fit(self, k0: int, tones: list[_Tone], skip: int | None = None) -> _Tone:
        """Fit one tone near bin ``k0`` on the residual of ``tones`` (all but ``tones[skip]``)."""
        if self.interpolation == "kernel":
            for _ in range(_MAX_RECENTRE):
                bins = k0 + self.offsets
                tone = _fit_kernel(self.residual(bins, tones, skip), bins, k0, float(self.half), self.n_grid, self.kernel)
                if abs(tone.kappa - k0) < self.half * (1.0 - _EDGE_MARGIN):
                    break
                # The best fit is on the edge of the searched range: the maximum of
                # |X| was displaced (interference with the mirror or a neighbour).
                k0 = int(round(tone.kappa))
            return tone
        return _fit_simple(self.residual(k0 + np.arange(-1, 2), tones, skip), k0, self.kernel, self.interpolation)


# --------------------------------------------------------------------------- the steps of find_peaks


def _check_arguments(
    spec: object, k: object, threshold_db: object, min_separation_hz: object, interpolation: object
) -> tuple[int, float]:
    """Validate :func:`find_peaks`' arguments; return ``k`` and ``min_separation_hz`` (default filled in)."""
    if not isinstance(spec, Spectrum):
        raise ParameterError(f"find_peaks() needs a Spectrum, got {type(spec).__name__}")
    if spec.X.ndim != 1:
        raise ParameterError(f"find_peaks() needs a single-channel spectrum, got X shaped {spec.X.shape}; use spec.channel(i)")
    k = check_int(k, "k", minimum=1, message="invalid k {value!r}: must be a whole number >= 1")
    if not (is_real(threshold_db) and threshold_db <= 0):  # type: ignore[operator]
        raise ParameterError(f"invalid threshold_db {threshold_db!r}: must be a number <= 0 (dB below the maximum)")
    check_choice(interpolation, "interpolation", INTERPOLATIONS, message="invalid interpolation {value!r}: allowed are {allowed}")
    if min_separation_hz is None:
        min_separation_hz = enbw(spec.window) * spec.sr / spec.n
    elif not (is_real(min_separation_hz) and min_separation_hz >= 0):  # type: ignore[operator]
        raise ParameterError(f"invalid min_separation_hz {min_separation_hz!r}: must be a number >= 0")
    return k, min_separation_hz  # type: ignore[return-value]


def _local_maxima(mag: np.ndarray, n_fft: int) -> np.ndarray:
    """Bins whose magnitude is >= the left and > the right neighbour (mirror-extended at the edges)."""
    nb = mag.size
    left = np.empty_like(mag)
    right = np.empty_like(mag)
    left[1:] = mag[:-1]
    right[:-1] = mag[1:]
    left[0] = mag[1] if nb > 1 else -np.inf  # X[-1] = conj(X[1])
    if n_fft % 2 == 0:
        right[-1] = mag[-2] if nb > 1 else -np.inf  # X[n/2 + 1] = conj(X[n/2 - 1])
    else:
        right[-1] = mag[-1] if nb > 1 else -np.inf  # X[(n+1)/2] = conj(X[(n-1)/2])
    is_max = (mag >= left) & (mag > right)
    if n_fft % 2 == 1 and nb > 1:
        is_max[-1] = mag[-1] > left[-1]
    return np.flatnonzero(is_max)


def _strongest_first(candidates: np.ndarray, amplitude: np.ndarray, k: int) -> Iterator[np.intp]:
    """The candidate bins by decreasing amplitude (ties in bin order).

    Partial sorts: a noisy spectrum has ~n_fft/3 local maxima, of which few are needed.
    """
    batch = _FIRST_BATCH_PER_PEAK * k + _FIRST_BATCH_EXTRA
    while candidates.size:
        m = min(batch, candidates.size)
        part = np.argpartition(-amplitude[candidates], m - 1)[:m] if m < candidates.size else np.arange(candidates.size)
        yield from candidates[part[np.argsort(-amplitude[candidates[part]], kind="stable")]]
        candidates = np.delete(candidates, part)
        batch *= _BATCH_GROWTH


def _residual_peak(fitter: _ToneFitter, k0: int, tones: list[_Tone], floor: float) -> int | None:
    """The bin (k0 - 1, k0 or k0 + 1) where the residual of ``tones`` still peaks above ``floor``, else None.

    None when the residual has no maximum there (the candidate was leakage of
    stronger tones; a tie is the odd-``n_fft`` mirror) or the maximum is below
    the floor.
    """
    around = k0 + np.arange(-_RESIDUAL_REACH, _RESIDUAL_REACH + 1)
    res_mag = np.abs(fitter.residual(around, tones))
    # The residual's maximum within one bin of k0 (indices R-1..R+1 of ``around``, R = _RESIDUAL_REACH).
    centre = _RESIDUAL_REACH - 1 + int(np.argmax(res_mag[_RESIDUAL_REACH - 1 : _RESIDUAL_REACH + 2]))
    left, mid, right = res_mag[centre - 1 : centre + 2]
    if not (mid >= left and mid >= right and (mid > left or mid > right)):
        return None
    if res_mag[centre] * fitter.amp_scale(around[centre : centre + 1])[0] < floor:
        return None
    return int(around[centre])


def _select_tones(
    fitter: _ToneFitter, candidates: np.ndarray, amplitude: np.ndarray, *, k: int, floor: float, min_separation_hz: float
) -> list[_Tone]:
    """Accept up to ``k`` tones, strongest candidate first, each fitted on the residual of those before it."""
    n_fft, sr = fitter.n_fft, fitter.sr
    tones: list[_Tone] = []
    used: set[int] = set()
    for k0 in _strongest_first(candidates, amplitude, k):
        if len(tones) >= k:
            break
        k_new = _residual_peak(fitter, int(k0), tones, floor)
        if k_new is None:
            continue
        k_canon = int(np.mod(k_new, n_fft))
        k_canon = min(k_canon, n_fft - k_canon)
        if k_canon in used:
            continue
        tone = _canonical(fitter.fit(k_new, tones), n_fft)
        freq = tone.kappa * sr / n_fft
        if any(abs(freq - t.kappa * sr / n_fft) < min_separation_hz for t in tones):
            continue
        used.add(k_canon)
        tones.append(tone)
    return tones


def _refit(fitter: _ToneFitter, tones: list[_Tone]) -> None:
    """Refit each tone (in place) with every other one subtracted, until the estimates settle.

    Each pass shrinks the error left by the others' leakage; a refitted tone is
    used at once by the following fits of the same pass.
    """
    for _ in range(_MAX_REFIT_PASSES):
        change = 0.0
        for j in range(len(tones)):
            k0 = int(round(tones[j].kappa))
            new = _canonical(fitter.fit(k0, tones, skip=j), fitter.n_fft)
            old = tones[j]
            change = max(change, abs(new.kappa - old.kappa), abs(new.a - old.a) / max(abs(old.a), _TINY_AMPLITUDE))
            tones[j] = new
        if change < _REFIT_TOL:
            break


def _peak_from(tone: _Tone, spec: Spectrum, interpolation: str) -> Peak:
    tone = _canonical(tone, spec.n_fft)
    kappa = tone.kappa
    edge = kappa == 0.0 or kappa == spec.n_fft / 2
    if interpolation == "none":
        k = int(round(kappa))
        amplitude = float(one_sided_weights(spec.n_fft)[k] * abs(spec.X[k]) / spec.window_sum)
        phase = float(np.angle(spec.X[k]))
    else:
        amplitude = float(abs(2.0 * tone.a.real) if edge else 2.0 * abs(tone.a))
        phase = float(np.angle(tone.a.real if edge else tone.a))
    dbfs = 20.0 * math.log10(amplitude) if amplitude > 0 else -math.inf
    return Peak(freq_hz=kappa * spec.sr / spec.n_fft, amplitude=amplitude, dbfs=dbfs, bin=kappa, phase=phase)


def find_peaks(
    spec: Spectrum,
    *,
    k: int = 5,
    threshold_db: float = -60.0,
    min_separation_hz: float | None = None,
    interpolation: Interpolation = "kernel",
) -> list[Peak]:
    """The strongest sinusoidal peaks of a spectrum, with interpolated frequency, amplitude and phase.

    Parameters
    ----------
    spec : Spectrum
        A single-channel spectrum (``spec.channel(i)`` selects one).
    k : int >= 1
        At most this many peaks are returned.
    threshold_db : float <= 0
        A peak's amplitude must be at least ``threshold_db`` dB relative to the
        largest bin amplitude of the spectrum (default -60 dB: a 16-bit
        full-scale tone still shows tones 60 dB down; Hann sidelobes, at -31 dB
        and below, are removed by the model subtraction, not by the threshold).
    min_separation_hz : float >= 0, optional
        Peaks closer than this to a stronger reported peak are dropped.
        Default: the window's equivalent noise bandwidth, ``ENBW·sr/N`` Hz
        (1.5 bins of ``sr/N`` for Hann): closer tones are not resolved by the
        window anyway.
    interpolation : {"kernel", "quadratic-log", "none"}
        ``"kernel"`` (default): least-squares fit of the exact windowed-sinusoid
        model (positive and mirror image) to the bins around the maximum
        (``k0 ± max(1, round(n_fft/N))``); exact for a single tone with any
        window.  ``"quadratic-log"``: parabola through the log magnitudes of
        three bins (Gaussian interpolation), then the amplitude and phase are
        fitted (least squares at that frequency, window kernel and mirror
        included).  Worst case over offsets 0..0.5 bin: Hann 0.016 bin /
        0.004 dB, Hamming 0.016 / 0.002, Blackman-Harris 0.003 / 0.002,
        Kaiser 8.6 0.006 / 0.003, flat-top 0.14 / 0.08, rectangular 0.17 / 0.66.
        ``"none"``: the bin's own frequency, amplitude and phase (scalloping
        loss not corrected: up to 1.42 dB for Hann, 3.92 dB rectangular,
        0.01 dB flat-top).

    Returns
    -------
    list of Peak
        Strongest first.  Empty for a silent spectrum (with a warning).

    Notes
    -----
    Candidates are the local maxima of ``|X|`` (DC and the last bin included,
    using the mirror symmetry), taken from the strongest down.  Before a
    candidate is tested, the fitted models of the peaks already accepted are
    subtracted from the spectrum; it is accepted if the residual still has a
    local maximum there whose amplitude passes ``threshold_db`` (so a tone's
    sidelobes, explained by its model, are not reported), and is then fitted
    on that residual.  Then every peak is refitted with all the others
    subtracted, for a few passes until the estimates settle.  Residual bins
    within ``100·eps`` of the largest amplitude (rounding noise) never count as
    peaks.  The steps are listed in the module docstring.
    """
    k, min_separation_hz = _check_arguments(spec, k, threshold_db, min_separation_hz, interpolation)
    scale = one_sided_weights(spec.n_fft) / spec.window_sum  # |X| -> amplitude, per bin
    raw_magnitude = np.abs(spec.X)
    # Shapes (local maxima) are judged on |X|, levels on the amplitude scale:
    # the one-sided factor 2 would distort the lobe of a tone at DC or Nyquist.
    magnitude = raw_magnitude.astype(np.float64)
    amplitude = magnitude * scale
    top = float(np.max(amplitude))
    if top == 0.0:
        warnings.warn("spectrum is silent (all amplitudes are 0): no peaks", stacklevel=2)
        return []
    eps = float(np.finfo(raw_magnitude.dtype).eps)
    floor = top * max(10.0 ** (threshold_db / 20.0), _ROUNDING_FLOOR_EPS * eps)

    fitter = _ToneFitter(spec, scale, interpolation)
    candidates = _local_maxima(magnitude, spec.n_fft)
    candidates = candidates[amplitude[candidates] >= floor]
    tones = _select_tones(fitter, candidates, amplitude, k=k, floor=floor, min_separation_hz=min_separation_hz)
    if interpolation != "none" and len(tones) > 1:
        _refit(fitter, tones)

    peaks = [_peak_from(t, spec, interpolation) for t in tones]
    peaks.sort(key=lambda p: -p.amplitude)
    return peaks

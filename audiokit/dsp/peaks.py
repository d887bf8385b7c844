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

Real recordings are not sums of steady tones: the kernel fit of a partial that
glides, or of two close ones, can move it far from its bin or inflate its
amplitude beyond what the window's scalloping allows.  Such an estimate is
implausible and falls back to quadratic-log interpolation, or to the bin
itself (:meth:`_ToneFitter.plausible`); the order and the choice of peaks come
from the raw spectrum, so ``k`` peaks are always the first ``k`` of ``k + 1``.

Steps of :func:`find_peaks`
---------------------------
1. :func:`_check_arguments`; the amplitude floor from ``threshold_db``.
2. :func:`_local_maxima` of ``|X|`` above the floor are the candidates,
   visited strongest first (raw amplitude, ties in bin order) by
   :func:`_strongest_first`.
3. :class:`_Selection`: a candidate is picked when the residual (spectrum minus
   the tones picked so far, :meth:`_ToneFitter.residual`) still peaks there
   (:func:`_residual_peak`) and an estimate on that residual is plausible
   (:meth:`_ToneFitter.best`: :func:`_fit_kernel`, :func:`_quadratic_log`
   or the bin, whichever plausible comes first).
4. :class:`_Refit`: every pick again with the stronger picks and the next
   ``_REFIT_BAND`` weaker ones subtracted, ``_REFIT_PASSES`` times.
5. :func:`_report` keeps the refitted picks ``min_separation_hz`` apart, in
   order, up to ``k``; :func:`_peak_from` turns each into a :class:`Peak`.

The steps run as a generator of least-squares problems (:class:`_PeakSearch`);
:func:`_find_peaks_together` advances the searches of many spectra in lockstep
and answers each round's problems in batched calls, the bits of one at a time
(``spectrum`` fits the channels of a file so).  Both are private: the public
result is :func:`find_peaks`, per spectrum.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np

from ..errors import ParameterError
from ..validate import check_choice, check_int, is_real
from .bounded import bounded_search
from .dft import Spectrum, one_sided_weights
from .windows import enbw

__all__ = ["INTERPOLATIONS", "Interpolation", "Peak", "find_peaks"]

Interpolation = Literal["kernel", "quadratic-log", "none"]
INTERPOLATIONS: tuple[str, ...] = ("kernel", "quadratic-log", "none")
#: The estimates in the order they are tried, as (interpolation reported, estimate): an implausible estimate
#: falls back to the next.  "peak-bin" is quadratic-log's frequency with ``a`` read from the peak bin alone.
_ESTIMATES: tuple[tuple[str, str], ...] = (
    ("kernel", "kernel"),
    ("quadratic-log", "quadratic-log"),
    ("quadratic-log", "peak-bin"),
    ("none", "none"),
)

# --------------------------------------------------------------------------- tuning constants
# Units: "bin" is a bin of n_fft (sr/n_fft Hz); "bin of sr/N" is a bin of the unpadded signal.

#: Passes of the refit (each refits every tone with its stronger and next weaker tones subtracted).
_REFIT_PASSES = 2
#: Weaker tones (the next ones in the order of selection) subtracted when a tone is refitted.
_REFIT_BAND = 2
#: A tone whose refit moved by less than this (bins, and relative amplitude change) is settled: later passes keep it.
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
#: Kernel points per batched evaluation of the searches' requests (:func:`_solve_all`): about 1 KiB of temporaries each
#: (a closed-form kernel evaluates up to 17 Dirichlet kernels per point), 4 MiB a call.
_BATCH_POINTS = 1 << 12
#: Elements (points × window samples) per temporary of the kernel's direct summation (8 MiB of float64).
_DIRECT_SUM_BLOCK = 1 << 20
#: Points over 0..1/2 bin on which the window's scalloping gain is evaluated (its minimum is the bound's).
_SCALLOP_POINTS = 33
#: Relative slack of the amplitude bound (rounding of the fit and of |X|).
_BOUND_TOL = 1e-9
#: An estimate explains its bins exactly when the residual norm is <= this fraction of theirs (rounding, not noise).
_EXACT_FIT = 1e-6


# --------------------------------------------------------------------------- window kernel


def _dirichlet(theta: np.ndarray, n: int) -> np.ndarray:
    """``sum_{m=0}^{n-1} exp(-2πi θ m) = e^{-iπ(n-1)r}·sin(π n r)/sin(π r)``, ``r = θ - round(θ)``."""
    r = theta - np.rint(theta)  # np.rint: the same round-half-even as np.round, without its wrapper's cost
    s = np.sin(np.pi * r)
    zero = s == 0
    if zero.any():
        ratio = np.where(zero, float(n), np.sin((np.pi * n) * r) / np.where(zero, 1.0, s))
    else:  # the same values without the guards (a bin exactly on a harmonic is rare)
        ratio = np.sin((np.pi * n) * r) / s
    return np.exp((-1j * np.pi * (n - 1)) * r) * ratio


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
        if self.coeffs is not None:
            terms = [m for m in range(1, self.coeffs.size) if self.coeffs[m] != 0.0]
            shifts = [m * n_fft / self.period for m in terms]  # harmonic m in bins of n_fft
            #: Offsets v of the Dirichlet kernels D((u - v) / n_fft): 0, then +shift and -shift of each harmonic
            #: (u - (-v) is u + v exactly).
            self._offsets = np.array([0.0] + shifts + [-v for v in shifts])
            #: The weight c_m / 2 of each harmonic's pair of kernels, shape (T, 1).
            self._halves = np.array([0.5 * self.coeffs[m] for m in terms]).reshape(-1, 1)
        #: Kernels with the same key give the same values (a closed form: element-wise); None for a direct sum.
        self.key = None if self.coeffs is None else (self.n, n_fft, self.period, self.coeffs.tobytes())

    def __call__(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=np.float64)
        if self.coeffs is not None:
            # Every shifted kernel in one vectorised call (per-call overhead dominates small evaluations), then
            # c_0·D_0 + sum_m (c_m/2)·(D_{+m} + D_{-m}) accumulated in the order of m (a running sum: cumsum).
            points = u.reshape(1, -1)
            kernels = _dirichlet((points - self._offsets[:, None]) / self.n_fft, self.n)
            t = self._halves.shape[0]
            parts = np.empty((1 + t, points.shape[1]), dtype=np.complex128)
            parts[0] = self.coeffs[0] * kernels[0]
            parts[1:] = self._halves * (kernels[1 : 1 + t] + kernels[1 + t :])
            return np.cumsum(parts, axis=0)[-1].reshape(u.shape)
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

    def scalloping_gain(self) -> float:
        """Worst scalloping: the smallest ``|W(δ)| / |W(0)|`` over ``0 <= δ <= 1/2`` bin of ``n_fft``.

        A lone tone's largest bin reads at least this fraction of its amplitude
        (periodic Hann without padding: ``8/(3π)`` = 0.8488 for large N, i.e. 1.42 dB;
        rectangular 3.92 dB; flat-top 0.01 dB; less with zero padding).
        """
        values = np.abs(self(np.linspace(0.0, 0.5, _SCALLOP_POINTS)))
        return float(np.min(values) / values[0])


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
    method : {"kernel", "quadratic-log", "none"}
        The estimate reported: the requested interpolation, or a fallback after
        it in :data:`INTERPOLATIONS` when its estimate was implausible
        (``"none"``: the bin itself, amplitude and phase of the raw ``X[k]``).
    """

    freq_hz: float
    amplitude: float
    dbfs: float
    bin: float
    phase: float
    method: str = "kernel"


class _Observed:
    """The full (two-sided) spectrum at any integer bin, from the one-sided half."""

    def __init__(self, X: np.ndarray, n_fft: int):
        self.X = X.astype(np.complex128, copy=False)  # complex128 already: no second copy of a long spectrum
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
    #: The model at the integer bins evaluated so far (:meth:`_ToneFitter.model`); not part of the tone's value.
    cache: dict[int, complex] = field(default_factory=dict, repr=False, compare=False)

    def model(self, kernel: _Kernel, bins: np.ndarray) -> np.ndarray:
        plus, minus = kernel(np.stack([bins - self.kappa, bins + self.kappa]))  # one call: its overhead dominates
        return self.a * plus + np.conj(self.a) * minus


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

#: numpy's own least-squares gufunc (what :func:`numpy.linalg.lstsq` calls): it solves a stack of matrices, each by
#: the same LAPACK ``dgelsd`` call as a lone matrix, so a stack gives each problem's bits.  Looked up by name (a
#: private module without type stubs); ``None`` if a numpy release moves it (then one ``lstsq`` per matrix).
_LSTSQ_GUFUNC = getattr(importlib.import_module("numpy.linalg._umath_linalg"), "lstsq", None)


def _lstsq_failed(err: str, flag: int) -> None:
    raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")


def _lstsq_stack(A: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``np.linalg.lstsq(A[i], rhs[i], rcond=_LSQ_RCOND)[0]`` for every ``i``, bit for bit; shapes (K, M, 2), (K, M) -> (K, 2)
    (or one problem: (M, 2), (M,) -> (2,))."""
    if _LSTSQ_GUFUNC is None:
        if A.ndim == 2:
            return np.linalg.lstsq(A, rhs, rcond=_LSQ_RCOND)[0]
        return np.stack([np.linalg.lstsq(a, b, rcond=_LSQ_RCOND)[0] for a, b in zip(A, rhs)])
    # The arguments and floating-point state numpy.linalg.lstsq gives the gufunc (it raises on a NaN the same way).
    with np.errstate(call=_lstsq_failed, invalid="call", over="ignore", divide="ignore", under="ignore"):
        x = _LSTSQ_GUFUNC(A, rhs[..., None], _LSQ_RCOND, signature="ddd->ddid")[0]
    return x[..., 0]


@dataclass
class _Solve:
    """A request of a fit's search: the least-squares ``a`` of a tone at ``kappa`` over ``bins`` (:func:`_lsq`).

    The kernel fit is written as a generator that yields its requests (this
    and :class:`_Grid`) and reads their answers when resumed, so that the fits
    of many spectra (the channels of a file) advance together and
    :func:`_solve_all` answers their requests in batched calls: the same
    numbers as one at a time.
    """

    y: np.ndarray
    bins: np.ndarray
    kappa: float
    kernel: _Kernel
    rhs: np.ndarray  # [y.real, y.imag]
    #: The answer: the squared residual norm and ``a`` (set by :func:`_solve_all`).
    answer: tuple[float, complex] = (math.nan, 0j)


@dataclass
class _Grid:
    """A request of a fit's search: :func:`_grid_costs` of ``rhs`` over ``bins`` at ``k0 + deltas``."""

    deltas: np.ndarray
    bins: np.ndarray
    k0: int
    kernel: _Kernel
    rhs: np.ndarray  # [y.real, y.imag]
    #: The answer: the cost at each delta, shape (G,) (set by :func:`_solve_all`).
    costs: np.ndarray = field(default_factory=lambda: np.empty(0))


@dataclass
class _Model:
    """A request of a search: the model of each tone at its missing bins, stored in the tone's cache (:meth:`_Tone.model`)."""

    todo: list[tuple[_Tone, list[int]]]
    kernel: _Kernel

    @property
    def points(self) -> int:
        """Kernel points the request evaluates."""
        return 2 * sum(len(missing) for _, missing in self.todo)


_T = TypeVar("_T")
#: A computation that yields requests (answered in place before it resumes) and returns a ``_T``.
_Steps = Generator["_Solve | _Grid | _Model", None, _T]


def _lsq_stack(requests: Sequence[_Solve]) -> None:
    """Answer each request with :func:`_lsq`'s value, one kernel call and one least-squares call for all.

    All requests have the same closed-form kernel and bin count, or there is
    one.  Element-wise steps (kernel, matrix) on the stacked points give each
    point its own value; the residual of each problem is formed alone, with
    the shapes :func:`_lsq` always had.
    """
    kernel, nb = requests[0].kernel, requests[0].bins.size
    if len(requests) == 1:
        _lsq_alone(requests[0])
        return
    bins = np.stack([r.bins for r in requests])  # (K, nb)
    kappa = np.array([r.kappa for r in requests])[:, None]
    w = kernel(np.concatenate([bins - kappa, bins + kappa], axis=1))  # (K, 2 nb)
    wp, wm = w[:, :nb], w[:, nb:]
    s, d = wp + wm, wp - wm
    # y = p·(Wp + Wm) + i·q·(Wp - Wm) with a = p + iq: linear in (p, q).
    A = np.empty((len(requests), 2 * nb, 2))
    A[:, :nb, 0], A[:, nb:, 0] = s.real, s.imag
    A[:, :nb, 1], A[:, nb:, 1] = -d.imag, d.real
    rhs = np.stack([r.rhs for r in requests])
    # rcond drops the q column when κ sits (numerically) on DC or Nyquist, where
    # only Re(a) is observable; the minimum-norm solution then has q = 0.
    sol = _lstsq_stack(A, rhs)
    for request, a_i, rhs_i, sol_i in zip(requests, A, rhs, sol):
        r = rhs_i - a_i @ sol_i
        request.answer = (float(r @ r), complex(sol_i[0], sol_i[1]))


def _lsq_alone(request: _Solve) -> None:
    """:func:`_lsq_stack` of one request, without the stacking (the same operations on the same shapes)."""
    bins, nb = request.bins, request.bins.size
    w = request.kernel(np.concatenate([bins - request.kappa, bins + request.kappa]))
    wp, wm = w[:nb], w[nb:]
    s, d = wp + wm, wp - wm
    A = np.empty((2 * nb, 2))
    A[:nb, 0], A[nb:, 0] = s.real, s.imag
    A[:nb, 1], A[nb:, 1] = -d.imag, d.real
    sol = _lstsq_stack(A, request.rhs)
    r = request.rhs - A @ sol
    request.answer = (float(r @ r), complex(sol[0], sol[1]))


def _grid_stack(requests: Sequence[_Grid]) -> None:
    """Answer each request with :func:`_grid_costs`' values: one kernel call and one pseudo-inverse for all.

    The kernel and the SVD of the stacked matrices are per element and per
    matrix; the products with each right-hand side are formed alone, as
    :func:`_grid_costs` forms them.
    """
    kernel, nb = requests[0].kernel, requests[0].bins.size
    kappa = np.concatenate([(r.k0 + r.deltas)[:, None] for r in requests])  # (sum G, 1)
    bins = np.concatenate([np.broadcast_to(r.bins, (r.deltas.size, nb)) for r in requests])
    wp, wm = kernel(np.stack([bins - kappa, bins + kappa]))
    s, d = wp + wm, wp - wm
    A = np.empty((kappa.shape[0], 2 * nb, 2))
    A[:, :nb, 0], A[:, nb:, 0] = s.real, s.imag
    A[:, :nb, 1], A[:, nb:, 1] = -d.imag, d.real
    # the pseudo-inverse with lstsq's cut-off: the same minimum-norm solutions as :func:`_lsq`
    pinv = np.linalg.pinv(A, rcond=_LSQ_RCOND)
    start = 0
    for request in requests:
        stop = start + request.deltas.size
        A_r, rhs = A[start:stop], request.rhs
        sol = pinv[start:stop] @ rhs
        r = rhs - np.einsum("gij,gj->gi", A_r, sol)
        request.costs = np.einsum("gi,gi->g", r, r)
        start = stop


def _model_stack(requests: Sequence[_Model]) -> None:
    """Answer each request as :meth:`_Tone.model` would, one kernel call for all its tones and bins.

    The kernel is element-wise, and ``a·W(k - κ) + conj(a)·W(k + κ)`` is
    formed element by element with each point's own ``a``: every value is
    the one :meth:`_Tone.model` of that tone at that bin gives.
    """
    pairs = [pair for request in requests for pair in request.todo]
    counts = [len(missing) for _, missing in pairs]
    bins = np.array([b for _, missing in pairs for b in missing])
    kappa = np.repeat(np.array([tone.kappa for tone, _ in pairs]), counts)
    a = np.repeat(np.array([tone.a for tone, _ in pairs], dtype=np.complex128), counts)
    plus, minus = requests[0].kernel(np.stack([bins - kappa, bins + kappa]))
    values = (a * plus + np.conj(a) * minus).tolist()
    start = 0
    for (tone, missing), count in zip(pairs, counts):
        tone.cache.update(zip(missing, values[start : start + count]))
        start += count


def _points(request: _Solve | _Grid | _Model) -> int:
    """Kernel points a request evaluates."""
    if isinstance(request, _Model):
        return request.points
    return 2 * request.bins.size * (request.deltas.size if isinstance(request, _Grid) else 1)


def _solve_all(requests: Sequence[_Solve | _Grid | _Model]) -> None:
    """Answer ``requests`` (any spectra, any kernels), each with the value it has alone (:func:`_lsq`, :func:`_grid_costs`).

    Requests of one kind with the same closed-form kernel and bin count are
    stacked (up to :data:`_BATCH_POINTS` kernel points a call); a directly summed kernel blocks its sums by the number of points,
    so each of its requests is answered alone.
    """
    if len(requests) == 1:  # one search (find_peaks): no grouping
        request = requests[0]
        if isinstance(request, _Solve):
            _lsq_stack([request])
        elif isinstance(request, _Grid):
            _grid_stack([request])
        elif request.points <= _BATCH_POINTS:
            _model_stack([request])
        else:  # a large model request in chunks, as below
            for tone, missing in request.todo:
                for start in range(0, len(missing), _BATCH_POINTS // 2):
                    _model_stack([_Model([(tone, missing[start : start + _BATCH_POINTS // 2])], request.kernel)])
        return
    groups: dict[tuple[object, ...], list[Any]] = {}
    for i, request in enumerate(requests):
        key = request.kernel.key if request.kernel.key is not None else ("alone", i)
        size = 0 if isinstance(request, _Model) else request.bins.size
        groups.setdefault((type(request), key, size), []).append(request)
    for members in groups.values():
        answer: Callable[[list[Any]], None] = (
            _lsq_stack if isinstance(members[0], _Solve) else _grid_stack if isinstance(members[0], _Grid) else _model_stack
        )
        # In chunks of about _BATCH_POINTS kernel points: memory stays bounded whatever the number of searches.
        chunk: list[Any] = []
        points = 0
        for request in members:
            chunk.append(request)
            points += _points(request)
            if points >= _BATCH_POINTS:
                answer(chunk)
                chunk, points = [], 0
        if chunk:
            answer(chunk)


def _lsq(y: np.ndarray, bins: np.ndarray, kappa: float, kernel: _Kernel, rhs: np.ndarray | None = None) -> tuple[float, complex]:
    """Best ``a`` for a tone at ``kappa`` and the squared residual norm (``rhs``: ``[y.real, y.imag]`` if known)."""
    request = _Solve(y, bins, kappa, kernel, np.concatenate([y.real, y.imag]) if rhs is None else rhs)
    _lsq_stack([request])
    return request.answer


def _grid_costs(deltas: np.ndarray, y: np.ndarray, bins: np.ndarray, k0: int, kernel: _Kernel) -> np.ndarray:
    """The squared residual of :func:`_lsq` at ``k0 + δ`` for every ``δ`` of ``deltas`` (shape (G,)), vectorised, shape (G,)."""
    request = _Grid(deltas, bins, k0, kernel, np.concatenate([y.real, y.imag]))
    _grid_stack([request])
    return request.costs


def _minimize(cost: Callable[[float], _Steps[float]], lo: float, hi: float) -> _Steps[tuple[float, float]]:
    """:func:`~audiokit.dsp.bounded.minimize_bounded` of ``cost`` (itself a computation yielding requests)."""
    search = bounded_search(lo, hi, xatol=_BRENT_XATOL)
    x = next(search)
    while True:
        fx = yield from cost(x)
        try:
            x = search.send(fx)
        except StopIteration as done:
            return done.value


def _fit_kernel(y: np.ndarray, bins: np.ndarray, k0: int, half_width: float, n_grid: int, kernel: _Kernel) -> _Steps[_Tone]:
    """Least-squares fit of one real tone to the observed bins (a computation: yields its :class:`_Solve` requests).

    The offset ``δ = κ - k0`` is searched on ``[-half_width, half_width]``: a
    grid of ``n_grid`` points, a bounded Brent search around every local
    minimum of the grid, then one parabola through close points to remove
    Brent's relative tolerance.  Each ``κ`` is solved once (:func:`_lsq` is a
    function of ``κ`` alone here): the parabola's centre and the final ``a``
    are points the search already evaluated.
    """
    rhs = np.concatenate([y.real, y.imag])
    solved: dict[float, tuple[float, complex]] = {}

    def lsq_at(kappa: float) -> _Steps[tuple[float, complex]]:
        if kappa not in solved:
            request = _Solve(y, bins, kappa, kernel, rhs)
            yield request
            solved[kappa] = request.answer
        return solved[kappa]

    def cost(delta: float) -> _Steps[float]:
        return (yield from lsq_at(k0 + delta))[0]

    grid = np.linspace(-half_width, half_width, n_grid)
    grid_request = _Grid(grid, bins, k0, kernel, rhs)
    yield grid_request
    costs = grid_request.costs
    best_delta, best_cost = float(grid[int(np.argmin(costs))]), float(np.min(costs))
    beyond = np.concatenate([[np.inf], costs, [np.inf]])  # no neighbour past either end
    for i in np.flatnonzero((costs <= beyond[:-2]) & (costs <= beyond[2:])).tolist():  # the grid's local minima
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, n_grid - 1)]
        x, fx = yield from _minimize(cost, float(lo), float(hi))
        if fx < best_cost:
            best_delta, best_cost = x, fx
    delta = best_delta
    h = _PARABOLA_STEP * (grid[1] - grid[0])
    c0 = yield from cost(delta)
    cm = yield from cost(delta - h)
    cp = yield from cost(delta + h)
    curvature = cm - 2.0 * c0 + cp
    if curvature > 0:
        shifted = delta + 0.5 * h * (cm - cp) / curvature
        if abs(shifted - delta) <= h and (yield from cost(shifted)) <= c0:
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
        if (yield from lsq_at(edge))[0] <= (yield from lsq_at(kappa))[0] + noise:
            kappa = edge
    _, a = yield from lsq_at(kappa)
    return _Tone(kappa, a)


def _quadratic_log(y3: np.ndarray, k0: int, kernel: _Kernel, *, lobe: bool = True) -> _Tone:
    """Parabola through ``log |y|`` at k0-1, k0, k0+1 (Gaussian interpolation), vertex clipped to ±1/2 bin.

    The frequency comes from the interpolation alone; ``a`` is then the
    least-squares value at that frequency (scalloping loss, window phase and
    mirror term accounted for) over the three bins, or, with ``lobe=False``,
    the value that explains the peak bin ``k0`` alone (its two real equations
    fix ``a``; within 1/2 bin its amplitude is at most the bin's over the
    worst scalloping gain, away from DC and Nyquist).
    """
    delta = 0.0
    tiny = np.finfo(np.float64).tiny
    lm, l0, lp = np.log(np.maximum(np.abs(y3), tiny))
    den = lm - 2.0 * l0 + lp
    if den < 0:
        delta = float(np.clip(0.5 * (lm - lp) / den, -0.5, 0.5))  # the vertex, within half a bin
    bins = k0 + np.arange(-1, 2)
    _, a = _lsq(y3, bins, k0 + delta, kernel) if lobe else _lsq(y3[1:2], bins[1:2], k0 + delta, kernel)
    return _Tone(k0 + delta, a)


def _amplitude(tone: _Tone, n_fft: int) -> float:
    """The amplitude of a canonical tone (at DC and Nyquist only ``A·cos φ``, the real part, is observable)."""
    edge = tone.kappa == 0.0 or tone.kappa == n_fft / 2
    return float(abs(2.0 * tone.a.real) if edge else 2.0 * abs(tone.a))


@dataclass(frozen=True)
class _Pick:
    """A tone of the selection: the bin where its residual peaked when it was picked, and how it was estimated."""

    k_peak: int
    tone: _Tone
    method: str


class _ToneFitter:
    """What every estimate on one spectrum shares: observed bins, window kernel, search range, plausibility bound.

    Parameters
    ----------
    spec : Spectrum
        Single-channel spectrum.
    scale : np.ndarray, shape (n_bins,)
        ``|X| -> amplitude`` factor of each one-sided bin, ``c_k / sum(w)``.
    interpolation : {"kernel", "quadratic-log", "none"}
        The estimate tried first; the ones after it in ``_ESTIMATES`` are its
        fallbacks (:meth:`best`).
    min_separation_hz : float
        Two tones closer than this are one tone estimated twice (Hz).
    """

    def __init__(self, spec: Spectrum, scale: np.ndarray, interpolation: str, min_separation_hz: float):
        self.n_fft = spec.n_fft
        self.sr = spec.sr
        self.scale = scale
        self.window_sum = spec.window_sum
        self.estimates = [e for e in _ESTIMATES if INTERPOLATIONS.index(e[0]) >= INTERPOLATIONS.index(interpolation)]
        self.min_sep_bins = min_separation_hz * spec.n_fft / spec.sr
        self.kernel = _Kernel(spec.window, spec.n_fft)
        self.observed = _Observed(spec.X, spec.n_fft)
        #: Largest amplitude / largest bin amplitude of a lone tone: 1 / the worst scalloping gain.
        self.bound = 1.0 / self.kernel.scalloping_gain()
        # Observed bins k0 ± half: about one main-lobe half width (1 bin of sr/N for
        # Hann, 3 for flat-top), in bins of n_fft; the fit searches the same range
        # on a grid of 1/_GRID_PER_BIN bin of sr/N.
        lobe = max(1, int(round(enbw(spec.window) - 0.5)))
        pad = spec.n_fft / spec.n
        self.half = max(1, int(round(lobe * pad)))
        self.n_grid = 2 * _GRID_PER_BIN * lobe + 1
        self.offsets = np.arange(-self.half, self.half + 1)

    def canonical_bin(self, k: int) -> int:
        """The one-sided bin (0..n_fft/2) of any integer bin."""
        k = int(np.mod(k, self.n_fft))
        return min(k, self.n_fft - k)

    def amp_scale(self, bins: np.ndarray) -> np.ndarray:
        """Amplitude scale of arbitrary (possibly mirrored) integer bins."""
        kk = np.mod(bins, self.n_fft)
        kk = np.where(kk > self.n_fft // 2, self.n_fft - kk, kk)
        return self.scale[kk]

    def residual(self, bins: np.ndarray, tones: list[_Tone]) -> _Steps[np.ndarray]:
        """The observed spectrum at ``bins`` minus the model of every tone in ``tones``."""
        yield from self.cache_models(tones, bins)
        y = self.observed(bins)
        for tone in tones:
            y = y - self.model(tone, bins)
        return y

    def cache_models(self, tones: list[_Tone], bins: np.ndarray) -> _Steps[None]:
        """Have the model of each of ``tones`` at ``bins`` in its cache: one :class:`_Model` request for the missing.

        Nothing for a directly summed kernel (:meth:`model` evaluates it each time).
        """
        if self.kernel.coeffs is None:
            return
        wanted = bins.tolist()
        todo = [(tone, missing) for tone in tones if (missing := [b for b in wanted if b not in tone.cache])]
        if todo:
            yield _Model(todo, self.kernel)

    def model(self, tone: _Tone, bins: np.ndarray) -> np.ndarray:
        """``tone.model`` at integer ``bins`` (shape (B,)), each bin evaluated once per tone and cached on it.

        A tone is subtracted at the bins around every later candidate and
        estimate, mostly the same few bins; a closed-form kernel is element-wise,
        so a cached value is the value any evaluation at that bin gives.  The
        direct sum's blocking depends on the number of points: it is not cached.
        """
        if self.kernel.coeffs is None:
            return tone.model(self.kernel, bins)
        cache, wanted = tone.cache, bins.tolist()
        missing = [b for b in wanted if b not in cache]
        if missing:
            cache.update(zip(missing, tone.model(self.kernel, np.array(missing)).tolist()))
        return np.array([cache[b] for b in wanted], dtype=np.complex128)

    def _kernel_fit(self, k0: int, tones: list[_Tone]) -> _Steps[_Tone]:
        """The exact-transform fit near bin ``k0`` on the residual of ``tones``, re-centred when on its edge."""
        for _ in range(_MAX_RECENTRE):
            bins = k0 + self.offsets
            y = yield from self.residual(bins, tones)
            tone = yield from _fit_kernel(y, bins, k0, float(self.half), self.n_grid, self.kernel)
            if abs(tone.kappa - k0) < self.half * (1.0 - _EDGE_MARGIN):
                break
            # The best fit is on the edge of the searched range: the maximum of
            # |X| was displaced (interference with the mirror or a neighbour).
            k0 = int(round(tone.kappa))
        return tone

    def _bin(self, k: int) -> _Tone:
        """The bin itself: frequency ``k``, amplitude and phase of the raw ``X[k]`` (no scalloping correction)."""
        kc = self.canonical_bin(k)
        edge = kc == 0 or 2 * kc == self.n_fft
        return _Tone(float(kc), complex(self.observed.X[kc]) / (2.0 * self.window_sum if edge else self.window_sum))

    def estimate(self, kind: str, start: int, k_peak: int, tones: list[_Tone]) -> _Steps[_Tone]:
        """One estimate (a kind of ``_ESTIMATES``) on the residual of ``tones``: the kernel fit from bin ``start``,
        the others at ``k_peak``."""
        if kind == "kernel":
            return _canonical((yield from self._kernel_fit(start, tones)), self.n_fft)
        if kind in ("quadratic-log", "peak-bin"):
            y3 = yield from self.residual(k_peak + np.arange(-1, 2), tones)
            return _canonical(_quadratic_log(y3, k_peak, self.kernel, lobe=kind == "quadratic-log"), self.n_fft)
        return self._bin(k_peak)

    def plausible(self, tone: _Tone, k_peak: int, tones: list[_Tone]) -> _Steps[bool]:
        """Whether an estimate stands, beside the (subtracted) ``tones``.

        It must be at least the minimum separation from each of them (else it
        collapsed onto one), and lie within the searched half width of ``k_peak``
        with an amplitude at most :attr:`bound` times the largest raw bin
        amplitude within that half width of it -- unless it explains its bins
        exactly (residual <= ``_EXACT_FIT`` of theirs: a synthetic tone whose
        mirror image or neighbour shares its bins moves their maximum and
        defeats the bound).
        """
        if self.collides(tone.kappa, tones):
            return False
        bins = int(round(tone.kappa)) + self.offsets
        largest = float(np.max(np.abs(self.observed(bins)) * self.amp_scale(bins)))
        near = abs(tone.kappa - self.canonical_bin(k_peak)) <= self.half
        if near and _amplitude(tone, self.n_fft) <= self.bound * largest * (1.0 + _BOUND_TOL):
            return True
        y = yield from self.residual(bins, tones)
        yield from self.cache_models([tone], bins)
        r = y - self.model(tone, bins)
        return float(np.vdot(r, r).real) <= _EXACT_FIT**2 * float(np.vdot(y, y).real)

    def reach(self, kind: str, start: int, k_peak: int) -> float:
        """How far (bins) an estimate of ``kind`` can lie from ``k_peak``: the kernel fit searches ``start ± half``,
        re-centred at most ``_MAX_RECENTRE - 1`` times; quadratic-log within 1/2 bin; the bin itself 0."""
        if kind == "kernel":
            return abs(start - k_peak) + _MAX_RECENTRE * (self.half + 0.5)
        return 0.0 if kind == "none" else 0.5

    def collides(self, kappa: float, tones: list[_Tone], margin: float = 0.0) -> bool:
        """Whether bin ``kappa`` is closer than the minimum separation minus ``margin`` to one of ``tones``."""
        return any(abs(kappa - other.kappa) < self.min_sep_bins - margin for other in tones)

    def best(self, start: int, k_peak: int, tones: list[_Tone]) -> _Steps[tuple[_Tone, str] | None]:
        """The first plausible estimate of :attr:`estimates` and its interpolation's name, or None."""
        kc = self.canonical_bin(k_peak)
        for method, kind in self.estimates:
            if self.collides(kc, tones, margin=self.reach(kind, start, k_peak)):
                continue  # every estimate of this kind would collide: skip its cost
            tone = yield from self.estimate(kind, start, k_peak, tones)
            if (yield from self.plausible(tone, k_peak, tones)):
                return tone, method
        return None


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
    if not (is_real(threshold_db) and threshold_db <= 0):
        raise ParameterError(f"invalid threshold_db {threshold_db!r}: must be a number <= 0 (dB below the maximum)")
    check_choice(interpolation, "interpolation", INTERPOLATIONS, message="invalid interpolation {value!r}: allowed are {allowed}")
    if min_separation_hz is None:
        min_separation_hz = enbw(spec.window) * spec.sr / spec.n
    elif not (is_real(min_separation_hz) and min_separation_hz >= 0):
        raise ParameterError(f"invalid min_separation_hz {min_separation_hz!r}: must be a number >= 0")
    return k, min_separation_hz


def _local_maxima(mag: np.ndarray, n_fft: int) -> np.ndarray:
    """Bins whose magnitude is >= the left and > the right neighbour (mirror-extended at the edges).

    The neighbours beyond the ends are mirror images: ``X[-1] = conj(X[1])``;
    ``X[n/2 + 1] = conj(X[n/2 - 1])`` for even ``n_fft``, and for odd ``n_fft``
    the last bin's right neighbour is itself (``X[(n+1)/2] = conj(X[(n-1)/2])``),
    so it is a maximum when above its left neighbour.  Compared on views: no
    shifted copy of a long spectrum.
    """
    nb = mag.size
    if nb == 1:
        return np.flatnonzero(mag > -np.inf)
    is_max = np.empty(nb, dtype=bool)
    middle = mag[1:-1]
    np.logical_and(middle >= mag[:-2], middle > mag[2:], out=is_max[1:-1])
    is_max[0] = mag[0] >= mag[1] and mag[0] > mag[1]
    is_max[-1] = mag[-1] >= mag[-2] and mag[-1] > mag[-2] if n_fft % 2 == 0 else mag[-1] > mag[-2]
    return np.flatnonzero(is_max)


def _strongest_first(candidates: np.ndarray, amplitude: np.ndarray, k: int) -> Iterator[np.intp]:
    """The candidate bins (ascending) by decreasing amplitude, ties in bin order, whatever ``k``.

    Partial sorts (a noisy spectrum has ~n_fft/3 local maxima, of which few are
    needed), the first of about ``32·k`` candidates; a batch takes every
    candidate tied with its smallest one, so the order never depends on ``k``.
    """
    batch = _FIRST_BATCH_PER_PEAK * k + _FIRST_BATCH_EXTRA
    while candidates.size:
        values = amplitude[candidates]
        if batch < values.size:
            cut = np.partition(values, values.size - batch)[values.size - batch]  # the batch-th largest
            part = np.flatnonzero(values >= cut)
        else:
            part = np.arange(values.size)
        yield from candidates[part[np.argsort(-values[part], kind="stable")]]
        candidates = np.delete(candidates, part)
        batch *= _BATCH_GROWTH


def _residual_peak(fitter: _ToneFitter, k0: int, tones: list[_Tone], floor: float) -> _Steps[int | None]:
    """The bin (k0 - 1, k0 or k0 + 1) where the residual of ``tones`` still peaks above ``floor``, else None.

    None when the residual has no maximum there (the candidate was leakage of
    stronger tones; a tie is the odd-``n_fft`` mirror) or the maximum is below
    the floor.
    """
    around = k0 + np.arange(-_RESIDUAL_REACH, _RESIDUAL_REACH + 1)
    res_mag = np.abs((yield from fitter.residual(around, tones)))
    # The residual's maximum within one bin of k0 (indices R-1..R+1 of ``around``, R = _RESIDUAL_REACH).
    centre = _RESIDUAL_REACH - 1 + int(np.argmax(res_mag[_RESIDUAL_REACH - 1 : _RESIDUAL_REACH + 2]))
    left, mid, right = res_mag[centre - 1 : centre + 2]
    if not (mid >= left and mid >= right and (mid > left or mid > right)):
        return None
    if res_mag[centre] * fitter.amp_scale(around[centre : centre + 1])[0] < floor:
        return None
    return int(around[centre])


class _Selection:
    """Level 0, the greedy pass: the picks in the order of the candidates' raw bin amplitudes.

    A candidate is picked when the residual of the tones picked before it still
    peaks there (:func:`_residual_peak`) and an estimate on that residual is
    plausible (:meth:`_ToneFitter.best`); each pick depends only on the picks
    before it, so the sequence is the same for every ``k``.
    """

    def __init__(self, fitter: _ToneFitter, candidates: np.ndarray, amplitude: np.ndarray, *, floor: float, k: int):
        self.fitter = fitter
        self.floor = floor
        self.order = _strongest_first(candidates, amplitude, k)
        self.picks: list[_Pick] = []
        self.tones: list[_Tone] = []
        self.used: set[int] = set()
        self.exhausted = False

    def extend(self, n: int) -> _Steps[None]:
        """Pick until there are ``n`` picks or no candidates left."""
        while len(self.picks) < n and not self.exhausted:
            k0 = next(self.order, None)
            if k0 is None:
                self.exhausted = True
                break
            k_new = yield from _residual_peak(self.fitter, int(k0), self.tones, self.floor)
            if k_new is None or self.fitter.canonical_bin(k_new) in self.used:
                continue
            found = yield from self.fitter.best(k_new, k_new, self.tones)
            if found is None:
                continue
            self.used.add(self.fitter.canonical_bin(k_new))
            self.picks.append(_Pick(k_new, *found))
            self.tones.append(found[0])


def _change(old: _Tone, new: _Tone) -> float:
    """How far a refit moved a tone: bins, or relative change of ``a``, whichever is larger."""
    return max(abs(new.kappa - old.kappa), abs(new.a - old.a) / max(abs(old.a), _TINY_AMPLITUDE))


class _Refit:
    """Levels 1.._REFIT_PASSES over :class:`_Selection`: each pick refitted, the others' leakage subtracted.

    Pick ``i`` of level ``s`` is estimated with pick ``j < i`` of level ``s`` and
    picks ``i < j <= i + _REFIT_BAND`` of level ``s - 1`` subtracted (a banded
    Gauss-Seidel pass); it depends on the first ``i + s·_REFIT_BAND`` picks of
    the selection only, never on how many peaks are asked for.  A pick that
    settled (moved by < ``_REFIT_TOL``) is kept by later levels; a refit with
    no plausible estimate keeps the previous level's pick.  Levels are computed
    lazily, as far as the requested pick needs.
    """

    def __init__(self, fitter: _ToneFitter, selection: _Selection, passes: int):
        self.fitter = fitter
        self.selection = selection
        self.levels: list[list[_Pick]] = [selection.picks] + [[] for _ in range(passes)]
        self.settled: list[list[bool]] = [[] for _ in range(passes + 1)]

    def pick(self, i: int) -> _Steps[_Pick | None]:
        """Pick ``i`` of the last level, None when the selection has fewer picks."""
        yield from self._ensure(len(self.levels) - 1, i + 1)
        top = self.levels[-1]
        return top[i] if i < len(top) else None

    def _ensure(self, s: int, n: int) -> _Steps[None]:
        """Compute level ``s`` up to ``n`` picks (fewer when the selection runs out)."""
        if s == 0:
            yield from self.selection.extend(n)
            return
        level, below = self.levels[s], self.levels[s - 1]
        while len(level) < n:
            i = len(level)
            yield from self._ensure(s - 1, i + 1)
            if len(below) <= i:
                return
            prev = below[i]
            if s > 1 and self.settled[s - 1][i]:
                level.append(prev)
                self.settled[s].append(True)
                continue
            yield from self._ensure(s - 1, i + 1 + _REFIT_BAND)
            context = [p.tone for p in level[:i]] + [p.tone for p in below[i + 1 : i + 1 + _REFIT_BAND]]
            found = yield from self.fitter.best(int(round(prev.tone.kappa)), prev.k_peak, context)
            new = prev if found is None else _Pick(prev.k_peak, *found)
            level.append(new)
            self.settled[s].append(_change(prev.tone, new.tone) < _REFIT_TOL)


def _report(refit: _Refit, k: int, min_sep_bins: float) -> _Steps[list[_Pick]]:
    """The first ``k`` refitted picks at least ``min_sep_bins`` from every pick reported before them."""
    chosen: list[_Pick] = []
    i = 0
    while len(chosen) < k:
        pick = yield from refit.pick(i)
        if pick is None:
            break
        if all(abs(pick.tone.kappa - c.tone.kappa) >= min_sep_bins for c in chosen):
            chosen.append(pick)
        i += 1
    return chosen


def _peak_from(pick: _Pick, spec: Spectrum) -> Peak:
    tone = pick.tone
    edge = tone.kappa == 0.0 or tone.kappa == spec.n_fft / 2
    amplitude = _amplitude(tone, spec.n_fft)
    phase = float(np.angle(tone.a.real if edge else tone.a))
    dbfs = 20.0 * math.log10(amplitude) if amplitude > 0 else -math.inf
    return Peak(
        freq_hz=tone.kappa * spec.sr / spec.n_fft, amplitude=amplitude, dbfs=dbfs, bin=tone.kappa, phase=phase, method=pick.method
    )


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
        Reported peaks are at least this far apart (their fitted frequencies);
        a candidate whose estimate lands closer to a peak picked before it is
        dropped.  Default: the window's equivalent noise bandwidth, ``ENBW·sr/N`` Hz
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
        0.01 dB flat-top).  An implausible estimate falls back to the next
        one (kernel, quadratic-log, none; see Notes); ``Peak.method`` says
        which was reported.

    Returns
    -------
    list of Peak
        In the order they were picked: by the raw amplitude of the local
        maximum of ``|X|`` that seeded them, strongest first (usually, not
        always, by decreasing fitted amplitude).  The first ``k`` peaks are
        the same whatever the ``k`` asked for: ``find_peaks(spec, k=k)`` equals
        ``find_peaks(spec, k=k + 1)[:k]``.  Empty for a silent spectrum (with a
        warning).

    Notes
    -----
    Candidates are the local maxima of ``|X|`` (DC and the last bin included,
    using the mirror symmetry), taken from the strongest down; the order is
    fixed by the raw spectrum, so no fit changes which peaks are picked.  Before
    a candidate is tested, the models of the peaks already picked are
    subtracted from the spectrum; it is picked if the residual still has a
    local maximum there whose amplitude passes ``threshold_db`` (so a tone's
    sidelobes, explained by its model, are not reported) and an estimate on
    that residual is plausible.  Then every peak is refitted with the peaks
    picked before it and the next two after it subtracted (two passes: a
    pick's value depends on the picks up to four after it, never on ``k``),
    and the refitted picks are reported in order, each at least
    ``min_separation_hz`` from those reported before it.  Residual bins within ``100·eps`` of the largest amplitude
    (rounding noise) never count as peaks.

    An estimate is plausible when it is at least ``min_separation_hz`` from
    every peak subtracted (it did not collapse onto one) and, unless it
    explains its bins exactly (a synthetic tone), lies within the searched half
    width (one bin of ``sr/N`` for Hann) of the bin where its residual peaks,
    with an amplitude at most ``1/g`` times the largest raw bin amplitude
    within that half width: ``g``, the window's worst scalloping gain
    ``min |W(δ)|/W(0)`` over ``δ <= 1/2`` bin, is computed from the window
    itself (periodic Hann 0.8488, i.e. 1.42 dB; rectangular 3.92 dB; flat-top
    0.01 dB; less with zero padding).  On recorded speech and music the kernel
    fit of a modulated partial often exceeds that bound; the quadratic-log
    estimate (least squares over three bins, else from the peak bin alone)
    then stands, or the bin itself.  The steps are listed in the module
    docstring.
    """
    return _find_peaks_together(
        [_PeakSearch(spec, k=k, threshold_db=threshold_db, min_separation_hz=min_separation_hz, interpolation=interpolation)]
    )[0]


class _PeakSearch:
    """:func:`find_peaks` of one spectrum, started: to be finished, alone or with others, by :func:`_find_peaks_together`.

    Private: the protocol by which :func:`find_peaks` and the ``spectrum`` pipeline
    (:mod:`audiokit.pipelines.spectrum`, the channels of one file) run their
    searches.  Its :attr:`request` is one of this module's private problem types
    and only :func:`_solve_all` answers it, so the class is of no use outside;
    the results are :func:`find_peaks`' bit for bit, which is the public API.

    The constructor takes :func:`find_peaks`' arguments, checks them, warns
    about a silent spectrum, finds the candidates and runs the search up to
    its first least-squares problem (:attr:`request`).  The search is a
    generator of such problems: searches finished together advance in
    lockstep, and each round's problems are solved in one batched call
    (:func:`_solve_all`), which gives every problem the bits it has alone, so
    each result is ``find_peaks(spec, ...)`` exactly.  It holds the spectrum
    (and two float64 arrays of its length) until it finishes.
    """

    def __init__(
        self,
        spec: Spectrum,
        *,
        k: int = 5,
        threshold_db: float = -60.0,
        min_separation_hz: float | None = None,
        interpolation: Interpolation = "kernel",
    ):
        #: The peaks once the search has finished, else None.
        self.result: list[Peak] | None = None
        #: The request the search waits for, to be answered in place (None once finished).
        self.request: _Solve | _Grid | _Model | None = None
        k, min_separation_hz = _check_arguments(spec, k, threshold_db, min_separation_hz, interpolation)
        scale = one_sided_weights(spec.n_fft) / spec.window_sum  # |X| -> amplitude, per bin
        raw_magnitude = np.abs(spec.X)
        # Shapes (local maxima) are judged on |X|, levels on the amplitude scale:
        # the one-sided factor 2 would distort the lobe of a tone at DC or Nyquist.
        magnitude = raw_magnitude.astype(np.float64, copy=False)
        amplitude = magnitude * scale
        top = float(np.max(amplitude))
        if top == 0.0:
            warnings.warn("spectrum is silent (all amplitudes are 0): no peaks", stacklevel=2)
            self.result = []
            return
        eps = float(np.finfo(raw_magnitude.dtype).eps)
        floor = top * max(10.0 ** (threshold_db / 20.0), _ROUNDING_FLOOR_EPS * eps)

        fitter = _ToneFitter(spec, scale, interpolation, min_separation_hz)
        candidates = _local_maxima(magnitude, spec.n_fft)
        candidates = candidates[amplitude[candidates] >= floor]
        selection = _Selection(fitter, candidates, amplitude, floor=floor, k=k + _REFIT_PASSES * _REFIT_BAND)
        # The bin estimate reads the raw spectrum: refitting it would change nothing.
        refit = _Refit(fitter, selection, 0 if interpolation == "none" else _REFIT_PASSES)
        self._steps: _Steps[list[Peak]] | None = _peaks(refit, spec, k, fitter.min_sep_bins)
        self.advance()

    def advance(self) -> None:
        """Resume the search (its :attr:`request` answered); keep its next request, or its result."""
        assert self._steps is not None
        try:
            self.request = next(self._steps)
        except StopIteration as done:
            self.result, self.request, self._steps = done.value, None, None


def _peaks(refit: _Refit, spec: Spectrum, k: int, min_sep_bins: float) -> _Steps[list[Peak]]:
    """The search of :class:`_PeakSearch`: the reported picks as :class:`Peak`."""
    picks = yield from _report(refit, k, min_sep_bins)
    return [_peak_from(pick, spec) for pick in picks]


def _find_peaks_together(searches: Sequence[_PeakSearch]) -> list[list[Peak]]:
    """Finish every search: the peaks of each, in order, each equal to :func:`find_peaks` of its spectrum alone.

    The searches advance in lockstep; each round solves the waiting
    least-squares problems of all of them in one batched call, so the cost per
    problem is a few microseconds instead of one ``lstsq`` call's overhead:
    the channels of a multichannel file are fitted together.
    """
    waiting = [search for search in searches if search.result is None]
    while waiting:
        _solve_all([search.request for search in waiting if search.request is not None])
        for search in waiting:
            search.advance()
        waiting = [search for search in waiting if search.result is None]
    return [search.result if search.result is not None else [] for search in searches]

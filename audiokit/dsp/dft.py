r"""Whole-signal spectrum, bin <-> Hz, one-sided amplitude scaling, interpolated peaks.

Conventions
-----------
Let ``x[n]``, ``n = 0..N-1``, be one channel of the signal, ``w[n]`` the
analysis window (length ``N``: the whole signal is windowed, then zero-padded
to ``n_fft >= N``) and ``sr`` the sample rate in Hz.

* DFT, unnormalised (the engine's convention)::

      X[k] = sum_{n=0}^{N-1} w[n] x[n] exp(-2πi k n / n_fft),   k = 0 .. n_fft//2

  Only the one-sided half is kept: for real ``x`` the rest is the mirror
  ``X[n_fft-k] = conj(X[k])``.
* Bin ``k`` is the frequency ``f_k = k·sr/n_fft`` Hz; the spacing is
  ``Δf = sr/n_fft``.  Zero padding (``n_fft > N``) samples the same spectrum
  more densely; it does not improve the resolution, which is set by the
  window over ``N`` samples (main lobe about ``ENBW·sr/N`` wide).
* The last bin, ``k = n_fft//2``, is the Nyquist frequency ``sr/2`` only
  when ``n_fft`` is even; an odd ``n_fft`` has no Nyquist bin.
* One-sided amplitude (:attr:`Spectrum.amplitude`)::

      A[k] = c_k · |X[k]| / sum(w),   c_k = 1 at DC and at the Nyquist bin, 2 elsewhere

  so a sinusoid ``A·cos(2π f_k t + φ)`` exactly on bin ``k`` reads ``A``
  (the window's coherent gain ``sum(w)/N`` is divided out), a constant ``c``
  reads ``|c|`` at DC, and full scale is 1.0 = 0 dBFS.
* Phase (:attr:`Spectrum.phase`, :attr:`Peak.phase`) is the cosine phase at
  the first sample of the segment: ``x[n] = A·cos(2π f n/sr + φ)``.  So
  ``A·sin(2π f t + p)`` has ``φ = p - π/2``.

Default window: periodic Hann.  On a bin, the rectangular window reads
amplitudes exactly too, but between bins it loses up to 3.9 dB and leaks with
-13 dB sidelobes decaying only 6 dB/octave, hiding weak tones; Hann's
sidelobes start at -31.5 dB and fall 18 dB/octave, its worst scalloping loss
is 1.4 dB, and :func:`find_peaks` removes that loss exactly.  Prefer
``blackmanharris`` (-92 dB sidelobes) to see weak tones next to strong ones;
``flattop`` reads amplitudes within 0.01 dB even without interpolation.

Peaks
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
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy.optimize import minimize_scalar

from ..engine import get_backend
from ..errors import ParameterError
from .windows import WindowSpec, enbw, parse_window_spec

__all__ = [
    "Interpolation",
    "Peak",
    "Spectrum",
    "bin_to_hz",
    "fft_frequencies",
    "find_peaks",
    "hz_to_bin",
    "one_sided_weights",
    "spectrum",
]

Interpolation = Literal["kernel", "quadratic-log", "none"]
INTERPOLATIONS: tuple[str, ...] = ("kernel", "quadratic-log", "none")

_MAX_REFIT_PASSES = 6

#: Default floor of :meth:`Spectrum.to_db`, in amplitude units (-200 dBFS).
DEFAULT_AMIN = 1e-10


# --------------------------------------------------------------------------- axes and scaling


def _check_sr(sr) -> float:
    if isinstance(sr, bool) or not isinstance(sr, (int, float, np.integer, np.floating)) or not (
        math.isfinite(sr) and sr > 0
    ):
        raise ParameterError(f"invalid sample rate {sr!r}: must be a finite number of Hz > 0")
    return sr


def _check_n_fft(n_fft, *, minimum: int = 1) -> int:
    if isinstance(n_fft, bool) or not isinstance(n_fft, (int, np.integer)) or n_fft < minimum:
        raise ParameterError(f"invalid n_fft {n_fft!r}: must be a whole number >= {minimum}")
    return int(n_fft)


def fft_frequencies(*, sr: float, n_fft: int) -> np.ndarray:
    """Centre frequencies of the one-sided DFT bins.

    Parameters
    ----------
    sr : float > 0
        Sample rate in Hz.
    n_fft : int > 0
        DFT length.

    Returns
    -------
    np.ndarray, shape (n_fft // 2 + 1,), float64
        ``f_k = k·sr/n_fft`` Hz for ``k = 0 .. n_fft//2``; the last one is
        ``sr/2`` for even ``n_fft`` and ``sr/2·(1 - 1/n_fft)`` for odd.
    """
    sr = _check_sr(sr)
    n_fft = _check_n_fft(n_fft)
    return np.arange(n_fft // 2 + 1) * (sr / n_fft)


def bin_to_hz(k, *, sr: float, n_fft: int):
    """Frequency in Hz of (fractional) bin ``k``: ``k·sr/n_fft`` (float or float64 array)."""
    out = np.asarray(k, dtype=np.float64) * _check_sr(sr) / _check_n_fft(n_fft)
    return float(out) if out.ndim == 0 else out


def hz_to_bin(freq, *, sr: float, n_fft: int):
    """Fractional bin of ``freq`` Hz: ``freq·n_fft/sr`` (round it for the nearest bin)."""
    out = np.asarray(freq, dtype=np.float64) * _check_n_fft(n_fft) / _check_sr(sr)
    return float(out) if out.ndim == 0 else out


def one_sided_weights(n_fft: int) -> np.ndarray:
    """Weights folding the two-sided DFT onto the one-sided bins.

    Returns
    -------
    np.ndarray, shape (n_fft // 2 + 1,), float64
        1 at DC and, for even ``n_fft``, at the Nyquist bin (they have no
        mirror twin); 2 elsewhere (the bin stands for itself and its mirror
        ``n_fft - k``).  Used for amplitudes (``c_k·|X|/sum(w)``) and for
        Parseval: ``sum(|x|²) = sum(c_k·|X[k]|²) / n_fft``.
    """
    n_fft = _check_n_fft(n_fft)
    c = np.full(n_fft // 2 + 1, 2.0)
    c[0] = 1.0
    if n_fft % 2 == 0:
        c[-1] = 1.0
    return c


# --------------------------------------------------------------------------- spectrum


@dataclass(frozen=True, eq=False)
class Spectrum:
    """One-sided DFT of a whole (windowed, zero-padded) signal.

    Parameters
    ----------
    X : np.ndarray, complex, shape (..., n_fft // 2 + 1)
        Unnormalised one-sided DFT of ``w·x`` (leading axes: channels).
    sr : float
        Sample rate in Hz.
    n : int
        Signal (and window) length ``N`` in samples.
    n_fft : int
        DFT length, ``>= n``.
    window : np.ndarray, float64, shape (n,)
        The window applied.
    window_name : str
        Its name (``"hann"``, ``"kaiser:8.6"``, ...) or ``"custom"``.
    periodic : bool
        Whether a named window was the periodic (DFT-even) variant.
    """

    X: np.ndarray
    sr: float
    n: int
    n_fft: int
    window: np.ndarray = field(repr=False)
    window_name: str = "hann"
    periodic: bool = True

    @property
    def n_bins(self) -> int:
        """Number of one-sided bins, ``n_fft // 2 + 1``."""
        return self.n_fft // 2 + 1

    @property
    def freqs(self) -> np.ndarray:
        """Bin centre frequencies in Hz, ``k·sr/n_fft``, shape (n_bins,)."""
        return fft_frequencies(sr=self.sr, n_fft=self.n_fft)

    @property
    def delta_f(self) -> float:
        """Bin spacing in Hz, ``sr / n_fft``."""
        return self.sr / self.n_fft

    @property
    def nyquist(self) -> float:
        """Nyquist frequency in Hz, ``sr / 2`` (a bin only when ``n_fft`` is even)."""
        return self.sr / 2

    @property
    def has_nyquist_bin(self) -> bool:
        """True when the last bin is exactly ``sr/2`` (``n_fft`` even)."""
        return self.n_fft % 2 == 0

    @property
    def window_sum(self) -> float:
        """``sum(w)``: the DFT of a unit constant at DC (``N·coherent_gain``)."""
        return float(np.sum(self.window))

    @property
    def coherent_gain(self) -> float:
        """Window coherent gain ``sum(w) / N`` (0.5 for periodic Hann)."""
        return self.window_sum / self.n

    @property
    def enbw(self) -> float:
        """Equivalent noise bandwidth in bins of ``sr/N``: ``N·sum(w²)/sum(w)²`` (Hann 1.5)."""
        return enbw(self.window)

    @property
    def magnitude(self) -> np.ndarray:
        """Raw magnitude ``|X[k]|`` (unnormalised), shape like ``X``."""
        return np.abs(self.X)

    @property
    def amplitude(self) -> np.ndarray:
        """One-sided amplitude ``c_k·|X[k]| / sum(w)`` in full-scale units (see module doc)."""
        mag = np.abs(self.X)
        scale = one_sided_weights(self.n_fft) / self.window_sum
        return mag * scale.astype(mag.dtype)

    @property
    def phase(self) -> np.ndarray:
        """``arg X[k]`` in radians, (-π, π]: cosine phase at the segment's first sample (on-bin tones)."""
        return np.angle(self.X)

    @property
    def db(self) -> np.ndarray:
        """Amplitude in dBFS, ``20·log10(max(amplitude, 1e-10))`` (1.0 = 0 dBFS, floor -200 dB)."""
        return self.to_db()

    @property
    def energy(self) -> np.ndarray:
        """``sum(c_k·|X[k]|²) / n_fft``, equal to ``sum((w·x)²)`` by Parseval."""
        c = one_sided_weights(self.n_fft)
        return np.sum(c * np.abs(self.X) ** 2, axis=-1) / self.n_fft

    def to_db(self, *, ref: float = 1.0, amin: float = DEFAULT_AMIN) -> np.ndarray:
        """Amplitude in dB relative to ``ref``: ``20·log10(max(amplitude, amin) / ref)``.

        Parameters
        ----------
        ref : float > 0
            Reference amplitude (1.0: dBFS).
        amin : float > 0
            Floor, so silence gives a finite value (``20·log10(amin/ref)``).
        """
        if not (ref > 0 and amin > 0):
            raise ParameterError(f"ref and amin must be > 0, got ref={ref!r}, amin={amin!r}")
        return 20.0 * np.log10(np.maximum(self.amplitude, amin) / ref)

    def channel(self, index: int) -> Spectrum:
        """The spectrum of one channel (``X[index]``) of a multi-channel spectrum."""
        if self.X.ndim < 2:
            raise ParameterError("this spectrum has a single channel; channel() needs a multi-channel spectrum")
        channels = self.X.shape[0]
        if not -channels <= index < channels:
            raise ParameterError(f"channel {index!r} out of range: the spectrum has {channels} channels")
        return Spectrum(self.X[index], self.sr, self.n, self.n_fft, self.window, self.window_name, self.periodic)


def _make_window(window, n: int, periodic: bool) -> tuple[np.ndarray, str]:
    if isinstance(window, WindowSpec):
        return window.get(n, periodic=periodic), str(window)
    if isinstance(window, str):
        spec = parse_window_spec(window)
        return spec.get(n, periodic=periodic), str(spec)
    w = np.asarray(window, dtype=np.float64)
    if w.shape != (n,):
        raise ParameterError(f"window array has shape {w.shape}; it must match the signal length ({n},)")
    if not np.all(np.isfinite(w)):
        raise ParameterError("window array contains NaN or infinity")
    return w, "custom"


def spectrum(
    x,
    *,
    sr: float,
    window: str | WindowSpec | np.ndarray = "hann",
    n_fft: int | None = None,
    periodic: bool = True,
    backend=None,
) -> Spectrum:
    """One-sided DFT of a whole signal, windowed and zero-padded.

    Parameters
    ----------
    x : array_like, real, shape (..., N)
        Samples (leading axes: channels); float32 stays float32 (complex64
        spectrum), other real types are computed in float64.
    sr : float > 0
        Sample rate in Hz.
    window : str, WindowSpec or array of shape (N,)
        Window over the whole signal: a name accepted by
        :func:`audiokit.dsp.windows.get_window` (``"hann"``, ``"rectangular"``,
        ``"blackmanharris"``, ``"kaiser:8.6"``, ...) or the samples.
        Default periodic Hann (see the module docstring for why).
    n_fft : int >= N, optional
        DFT length; default ``N``.  Larger values zero-pad.
    periodic : bool
        Periodic (DFT-even, default) or symmetric variant of a named window.
    backend : str, FFT backend object or None
        Passed to :func:`audiokit.engine.get_backend` (None: the default), or
        an object with an ``rfft(x, n)`` method.

    Returns
    -------
    Spectrum
        ``X`` shaped ``(..., n_fft // 2 + 1)``.

    Raises
    ------
    ParameterError
        Empty, complex or non-finite input, ``n_fft < N``, a bad window or
        sample rate.

    Warns
    -----
    UserWarning
        When the signal is all zeros (every amplitude is 0; the dB floor shows).
    """
    sr = _check_sr(sr)
    arr = np.asarray(x)
    if arr.dtype.kind == "c":
        raise ParameterError("spectrum() takes a real signal; got complex samples")
    if arr.dtype.kind not in "biuf":
        raise ParameterError(f"spectrum() takes real numeric samples, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ParameterError(f"cannot take the spectrum of an empty signal (shape {arr.shape})")
    dtype = np.float32 if arr.dtype.kind == "f" and arr.dtype.itemsize <= 4 else np.float64
    arr = arr.astype(dtype, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ParameterError("signal contains NaN or infinity")
    n = arr.shape[-1]
    n_fft = n if n_fft is None else _check_n_fft(n_fft)
    if n_fft < n:
        raise ParameterError(
            f"n_fft {n_fft} is shorter than the signal ({n} samples): the whole-signal spectrum needs "
            f"n_fft >= {n}; use the STFT for shorter frames"
        )
    w, name = _make_window(window, n, periodic)
    if not np.sum(w) > 0:
        raise ParameterError(f"window {name!r} sums to {np.sum(w)!r}: amplitudes need sum(w) > 0")
    engine = backend if hasattr(backend, "rfft") else get_backend(backend)
    X = engine.rfft(arr * w.astype(dtype), n=n_fft)
    if not np.any(arr):
        warnings.warn("signal is silent (all samples are 0): every amplitude is 0", stacklevel=2)
    return Spectrum(X=X, sr=sr, n=n, n_fft=n_fft, window=w, window_name=name, periodic=periodic)


# --------------------------------------------------------------------------- window kernel


def _dirichlet(theta: np.ndarray, n: int) -> np.ndarray:
    """``sum_{m=0}^{n-1} exp(-2πi θ m) = e^{-iπ(n-1)r}·sin(π n r)/sin(π r)``, ``r = θ - round(θ)``."""
    r = theta - np.round(theta)
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
            if period < 1 or (period == self.n - 1 and abs(w[-1] - w[0]) > 1e-12 * scale):
                continue
            spec = np.fft.rfft(w[:period])
            m = min(self.max_terms, spec.size - 1)
            total = float(np.sum(np.abs(spec) ** 2))
            leftover = float(np.sum(np.abs(spec[m + 1 :]) ** 2) + np.sum(spec[: m + 1].imag ** 2))
            if leftover <= 1e-24 * total:
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
            out = self.coeffs[0] * _dirichlet(u / n_fft, n)
            for m in range(1, self.coeffs.size):
                c = self.coeffs[m]
                if c == 0.0:
                    continue
                v = m * n_fft / self.period  # harmonic m in bins of n_fft
                out = out + (0.5 * c) * (_dirichlet((u - v) / n_fft, n) + _dirichlet((u + v) / n_fft, n))
            return out
        flat = u.ravel()
        out = np.zeros(flat.size, dtype=np.complex128)
        step = max(1, (1 << 20) // max(flat.size, 1))
        for start in range(0, self.n, step):
            idx = np.arange(start, min(start + step, self.n))
            cycles = np.multiply.outer(flat, idx) / self.n_fft
            cycles -= np.round(cycles)
            phase = (2.0 * np.pi) * cycles
            # Element-wise products and sums (a complex-by-real matmul is slow in numpy).
            out += (np.cos(phase) * self.w[idx]).sum(axis=-1) - 1j * (np.sin(phase) * self.w[idx]).sum(axis=-1)
        return out.reshape(u.shape)


# --------------------------------------------------------------------------- peaks


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
    sol, *_ = np.linalg.lstsq(A, rhs, rcond=1e-9)
    r = rhs - A @ sol
    return float(r @ r), complex(sol[0], sol[1])


def _fit_kernel(
    y: np.ndarray, bins: np.ndarray, k0: int, half_width: float, n_grid: int, kernel: _Kernel
) -> _Tone:
    """Least-squares fit of one real tone to the observed bins.

    The offset ``δ = κ - k0`` is searched on ``[-half_width, half_width]``: a
    grid of ``n_grid`` points, a bounded Brent search around every local
    minimum of the grid, then one parabola through close points to remove
    Brent's relative tolerance.
    """

    def cost(delta: float) -> float:
        return _lsq(y, bins, k0 + delta, kernel)[0]

    grid = np.linspace(-half_width, half_width, n_grid)
    costs = np.array([cost(d) for d in grid])
    best_delta, best_cost = float(grid[int(np.argmin(costs))]), float(np.min(costs))
    for i in range(n_grid):
        left = costs[i - 1] if i > 0 else np.inf
        right = costs[i + 1] if i < n_grid - 1 else np.inf
        if not (costs[i] <= left and costs[i] <= right):
            continue
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, n_grid - 1)]
        res = minimize_scalar(cost, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
        if res.fun < best_cost:
            best_delta, best_cost = float(res.x), float(res.fun)
    delta = best_delta
    h = 1e-6 * (grid[1] - grid[0])
    c0, cm, cp = cost(delta), cost(delta - h), cost(delta + h)
    curvature = cm - 2.0 * c0 + cp
    if curvature > 0:
        shifted = delta + 0.5 * h * (cm - cp) / curvature
        if abs(shifted - delta) <= h and cost(shifted) <= c0:
            delta = shifted
    kappa = k0 + delta
    # At DC and Nyquist (multiples of n_fft/2) the two model terms merge and the
    # cost is flat to 4th order in the distance: prefer the exact edge when it
    # fits as well (within rounding).
    half_n = kernel.n_fft / 2
    edge = round(kappa / half_n) * half_n
    if abs(kappa - edge) < 1e-2:
        # Rounding of the kernel sums grows like N·eps.
        noise = (16.0 * kernel.n * np.finfo(np.float64).eps) ** 2 * float(np.sum(np.abs(y) ** 2))
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
            delta = float(np.clip(0.5 * (lm - lp) / den, -0.5, 0.5))
    bins = k0 + np.arange(-1, 2)
    _, a = _lsq(y3, bins, k0 + delta, kernel)
    return _Tone(k0 + delta, a)


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
    subtracted, for a few passes until the estimates settle.  Residual bins within ``100·eps`` of the largest amplitude
    (rounding noise) never count as peaks.
    """
    if not isinstance(spec, Spectrum):
        raise ParameterError(f"find_peaks() needs a Spectrum, got {type(spec).__name__}")
    if spec.X.ndim != 1:
        raise ParameterError(
            f"find_peaks() needs a single-channel spectrum, got X shaped {spec.X.shape}; use spec.channel(i)"
        )
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"invalid k {k!r}: must be a whole number >= 1")
    if not (isinstance(threshold_db, (int, float, np.integer, np.floating)) and threshold_db <= 0):
        raise ParameterError(f"invalid threshold_db {threshold_db!r}: must be a number <= 0 (dB below the maximum)")
    if interpolation not in INTERPOLATIONS:
        raise ParameterError(f"invalid interpolation {interpolation!r}: allowed are {', '.join(INTERPOLATIONS)}")
    if min_separation_hz is None:
        min_separation_hz = enbw(spec.window) * spec.sr / spec.n
    elif not (isinstance(min_separation_hz, (int, float, np.integer, np.floating)) and min_separation_hz >= 0):
        raise ParameterError(f"invalid min_separation_hz {min_separation_hz!r}: must be a number >= 0")

    n_fft = spec.n_fft
    scale = one_sided_weights(n_fft) / spec.window_sum  # |X| -> amplitude, per bin
    amplitude = np.abs(spec.X).astype(np.float64) * scale
    top = float(np.max(amplitude))
    if top == 0.0:
        warnings.warn("spectrum is silent (all amplitudes are 0): no peaks", stacklevel=2)
        return []
    eps = float(np.finfo(np.abs(spec.X).dtype).eps)
    floor = top * max(10.0 ** (threshold_db / 20.0), 100.0 * eps)

    kernel = _Kernel(spec.window, n_fft)
    observed = _Observed(spec.X, n_fft)
    # Observed bins k0 ± half: about one main-lobe half width (1 bin of sr/N for
    # Hann, 3 for flat-top), in bins of n_fft; the fit searches the same range
    # on a grid of 1/8 bin of sr/N.
    lobe = max(1, int(round(enbw(spec.window) - 0.5)))
    pad = n_fft / spec.n
    half = max(1, int(round(lobe * pad)))
    n_grid = 16 * lobe + 1
    offsets = np.arange(-half, half + 1)
    # Amplitude scale of an arbitrary (possibly mirrored) integer bin.
    def amp_scale(bins: np.ndarray) -> np.ndarray:
        kk = np.mod(bins, n_fft)
        kk = np.where(kk > n_fft // 2, n_fft - kk, kk)
        return scale[kk]

    def residual(bins: np.ndarray, tones: list[_Tone], skip: int | None = None) -> np.ndarray:
        y = observed(bins)
        for j, tone in enumerate(tones):
            if j != skip:
                y = y - tone.model(kernel, bins)
        return y

    def fit(y_at, k0: int) -> _Tone:
        if interpolation == "kernel":
            for _ in range(3):
                bins = k0 + offsets
                tone = _fit_kernel(y_at(bins), bins, k0, float(half), n_grid, kernel)
                if abs(tone.kappa - k0) < half * (1.0 - 1e-9):
                    break
                # The best fit is on the edge of the searched range: the maximum of
                # |X| was displaced (interference with the mirror or a neighbour).
                k0 = int(round(tone.kappa))
            return tone
        return _fit_simple(y_at(k0 + np.arange(-1, 2)), k0, kernel, interpolation)

    # Shapes (local maxima) are judged on |X|, levels on the amplitude scale:
    # the one-sided factor 2 would distort the lobe of a tone at DC or Nyquist.
    magnitude = np.abs(spec.X).astype(np.float64)
    candidates = _local_maxima(magnitude, n_fft)
    candidates = candidates[amplitude[candidates] >= floor]

    def strongest_first(cands: np.ndarray):
        # Partial sorts: a noisy spectrum has ~n_fft/3 local maxima, few are needed.
        batch = 32 * k + 64
        while cands.size:
            m = min(batch, cands.size)
            part = np.argpartition(-amplitude[cands], m - 1)[:m] if m < cands.size else np.arange(cands.size)
            top = cands[part[np.argsort(-amplitude[cands[part]], kind="stable")]]
            yield from top
            cands = np.delete(cands, part)
            batch *= 4

    tones: list[_Tone] = []
    used: set[int] = set()
    for k0 in strongest_first(candidates):
        if len(tones) >= k:
            break
        around = int(k0) + np.arange(-2, 3)
        res_mag = np.abs(residual(around, tones))
        centre = 1 + int(np.argmax(res_mag[1:4]))  # the residual's maximum near k0
        left, mid, right = res_mag[centre - 1 : centre + 2]
        if not (mid >= left and mid >= right and (mid > left or mid > right)):
            continue  # no maximum left: leakage of stronger peaks (a tie is the odd-n_fft mirror)
        if res_mag[centre] * amp_scale(around[centre : centre + 1])[0] < floor:
            continue
        k_new = int(around[centre])
        k_canon = int(np.mod(k_new, n_fft))
        k_canon = min(k_canon, n_fft - k_canon)
        if k_canon in used:
            continue
        tone = _canonical(fit(lambda b: residual(b, tones), k_new), n_fft)
        freq = tone.kappa * spec.sr / n_fft
        if any(abs(freq - t.kappa * spec.sr / n_fft) < min_separation_hz for t in tones):
            continue
        used.add(k_canon)
        tones.append(tone)

    if interpolation != "none" and len(tones) > 1:
        # Refit each peak with every other one subtracted, until the estimates
        # settle: each pass shrinks the error left by the others' leakage.
        for _ in range(_MAX_REFIT_PASSES):
            change = 0.0
            for j in range(len(tones)):
                k0 = int(round(tones[j].kappa))
                new = _canonical(fit(lambda b, j=j: residual(b, tones, skip=j), k0), n_fft)
                old = tones[j]
                change = max(change, abs(new.kappa - old.kappa), abs(new.a - old.a) / max(abs(old.a), 1e-300))
                tones[j] = new
            if change < 1e-12:
                break

    peaks = [_peak_from(t, spec, interpolation) for t in tones]
    peaks.sort(key=lambda p: -p.amplitude)
    return peaks

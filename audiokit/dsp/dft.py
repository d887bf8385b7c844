r"""Whole-signal spectrum, bin <-> Hz, one-sided and two-sided amplitude scaling, decibels.

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
is 1.4 dB, and :func:`~audiokit.dsp.peaks.find_peaks` removes that loss exactly.  Prefer
``blackmanharris`` (-92 dB sidelobes) to see weak tones next to strong ones;
``flattop`` reads amplitudes within 0.01 dB even without interpolation.

Peaks
-----
:func:`audiokit.dsp.peaks.find_peaks` reads the sinusoids of a
:class:`Spectrum` (frequency, amplitude and phase fitted between bins with
the window's exact transform); it is re-exported here for older imports.

Decibels
--------
:func:`amplitude_to_db`, :meth:`Spectrum.to_db` and
:meth:`Spectrum.two_sided_db` give ``20·log10(max(A, amin) / ref)`` of an
amplitude ``A`` (full-scale units, so ``ref = 1`` reads dBFS), floored at
:data:`DEFAULT_AMIN` (-200 dBFS) so silence stays finite.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..engine import get_backend
from ..errors import ParameterError
from ..validate import check_int, is_real
from .windows import WindowSpec, enbw, parse_window_spec

__all__ = [
    "DEFAULT_AMIN",
    "Spectrum",
    "amplitude_to_db",
    "bin_to_hz",
    "fft_frequencies",
    "hz_to_bin",
    "one_sided_weights",
    "spectrum",
]

DEFAULT_AMIN = 1e-10
"""Floor of an amplitude before ``20·log10`` (full-scale units: 1.0 = a full-scale sine), i.e. -200 dBFS.

Used by :func:`amplitude_to_db`, :meth:`Spectrum.to_db` and
:meth:`Spectrum.two_sided_db`.  It equals ``audiokit.dsp.scaling.AMIN["power"]``
numerically but is not the same quantity: that one floors a *power* ``|X|²``
(-100 dB), this one an *amplitude* (-200 dB); the two are kept apart on purpose.
"""


# --------------------------------------------------------------------------- axes and scaling


def _check_sr(sr: Any) -> float:
    if not (is_real(sr) and math.isfinite(sr) and sr > 0):
        raise ParameterError(f"invalid sample rate {sr!r}: must be a finite number of Hz > 0")
    return sr  # as given, not float(sr): a numpy sample rate keeps its type in later arithmetic


def _check_n_fft(n_fft: object, *, minimum: int = 1) -> int:
    return check_int(n_fft, "n_fft", minimum=minimum, message="invalid n_fft {value!r}: must be a whole number >= {minimum}")


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


def bin_to_hz(k: ArrayLike, *, sr: float, n_fft: int) -> float | np.ndarray:
    """Frequency in Hz of (fractional) bin ``k``: ``k·sr/n_fft`` (float or float64 array)."""
    out = np.asarray(k, dtype=np.float64) * _check_sr(sr) / _check_n_fft(n_fft)
    return float(out) if out.ndim == 0 else out


def hz_to_bin(freq: ArrayLike, *, sr: float, n_fft: int) -> float | np.ndarray:
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


def amplitude_to_db(amplitude: ArrayLike, *, ref: float = 1.0, amin: float = DEFAULT_AMIN) -> np.ndarray:
    """Amplitude in dB relative to ``ref``: ``20·log10(max(amplitude, amin) / ref)``.

    Parameters
    ----------
    amplitude : array_like, float
        Amplitudes in full-scale units (one- or two-sided); float32 stays float32.
    ref : float > 0
        Reference amplitude (1.0: dBFS).
    amin : float > 0
        Floor (see :data:`DEFAULT_AMIN`), so silence gives the finite value ``20·log10(amin/ref)``.

    Raises
    ------
    ParameterError
        When ``ref`` or ``amin`` is not > 0.
    """
    if not (ref > 0 and amin > 0):
        raise ParameterError(f"ref and amin must be > 0, got ref={ref!r}, amin={amin!r}")
    return 20.0 * np.log10(np.maximum(amplitude, amin) / ref)


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
        """Amplitude in dBFS, ``20·log10(max(amplitude, DEFAULT_AMIN))`` (1.0 = 0 dBFS, floor -200 dB)."""
        return self.to_db()

    @property
    def energy(self) -> np.ndarray:
        """``sum(c_k·|X[k]|²) / n_fft``, equal to ``sum((w·x)²)`` by Parseval."""
        c = one_sided_weights(self.n_fft)
        return np.sum(c * np.abs(self.X) ** 2, axis=-1) / self.n_fft

    def to_db(self, *, ref: float = 1.0, amin: float = DEFAULT_AMIN) -> np.ndarray:
        """One-sided amplitude in dB relative to ``ref``: ``amplitude_to_db(amplitude, ref=ref, amin=amin)``.

        Parameters
        ----------
        ref : float > 0
            Reference amplitude (1.0: dBFS).
        amin : float > 0
            Floor, so silence gives a finite value (``20·log10(amin/ref)``).
        """
        return amplitude_to_db(self.amplitude, ref=ref, amin=amin)

    def two_sided(self) -> tuple[np.ndarray, np.ndarray]:
        """Frequencies and amplitudes of the full DFT, bins ``0 .. n_fft - 1`` (0 to ``sr``, excluded).

        The upper half is the mirror ``X[n_fft - k] = conj(X[k])`` of the
        one-sided bins, and every bin is scaled by ``1 / sum(w)`` only (no
        factor 2): a sinusoid of amplitude ``A`` on bin ``k`` reads ``A/2`` at
        ``k`` and at ``n_fft - k``; a constant ``c`` reads ``|c|`` at DC.

        Returns
        -------
        freqs : np.ndarray, shape (n_fft,), float64
            ``k·sr/n_fft`` Hz, ``k = 0 .. n_fft - 1``.
        amplitude : np.ndarray, shape (..., n_fft), float like :attr:`magnitude`
            ``|X[k]| / sum(w)`` in full-scale units.
        """
        magnitude = self.magnitude
        mirror = magnitude[..., 1 : self.n_fft - self.n_bins + 1][..., ::-1]
        amplitude = np.concatenate([magnitude, mirror], axis=-1) / self.window_sum
        return np.arange(self.n_fft) * self.delta_f, amplitude

    def two_sided_db(self, *, ref: float = 1.0, amin: float = DEFAULT_AMIN) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`two_sided` with the amplitude in dB: ``(freqs, amplitude_to_db(amplitude, ref=ref, amin=amin))``."""
        freqs, amplitude = self.two_sided()
        return freqs, amplitude_to_db(amplitude, ref=ref, amin=amin)

    def channel(self, index: int) -> Spectrum:
        """The spectrum of one channel (``X[index]``) of a multi-channel spectrum."""
        if self.X.ndim < 2:
            raise ParameterError("this spectrum has a single channel; channel() needs a multi-channel spectrum")
        channels = self.X.shape[0]
        if not -channels <= index < channels:
            raise ParameterError(f"channel {index!r} out of range: the spectrum has {channels} channels")
        return Spectrum(self.X[index], self.sr, self.n, self.n_fft, self.window, self.window_name, self.periodic)


def _make_window(window: str | WindowSpec | ArrayLike, n: int, periodic: bool) -> tuple[np.ndarray, str]:
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
    x: ArrayLike,
    *,
    sr: float,
    window: str | WindowSpec | ArrayLike = "hann",
    n_fft: int | None = None,
    periodic: bool = True,
    backend: Any = None,
    overwrite_x: bool = False,
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
    overwrite_x : bool
        Allow the windowed samples to be computed in place in ``x`` when it
        is already a float32/float64 array of the computing type (one copy of
        a long signal less; the values are the same).

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
    silent = not np.any(arr)
    in_place = overwrite_x and arr is x and arr.flags.writeable
    windowed = np.multiply(arr, w.astype(dtype, copy=False), out=arr if in_place else None)
    X = engine.rfft(windowed, n=n_fft)
    del windowed
    if silent:
        warnings.warn("signal is silent (all samples are 0): every amplitude is 0", stacklevel=2)
    return Spectrum(X=X, sr=sr, n=n, n_fft=n_fft, window=w, window_name=name, periodic=periodic)

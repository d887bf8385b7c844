"""Window functions, their figures of merit, and overlap-add (COLA/NOLA) checks.

Conventions
-----------
A window of length ``N`` is returned as a float64 array ``w[0..N-1]``.

* **periodic** (default, ``periodic=True``): the first ``N`` samples of the
  symmetric window of length ``N + 1``; the cosine windows use ``2*pi*n/N``.
  This is the DFT-even window meant for spectral analysis and overlap-add:
  shifted periodic Hann windows sum to a constant at ``hop = N/2`` or ``N/4``.
* **symmetric** (``periodic=False``): ``w[n] == w[N-1-n]``; the cosine windows
  use ``2*pi*n/(N-1)``.  This is the filter-design variant.

Both equal ``scipy.signal.get_window(name, N, fftbins=periodic)``.  A window of
length 1 is ``[1.0]`` in either variant.

The cosine-sum windows are ``w[n] = sum_k (-1)**k * a_k * cos(2*pi*k*n/D)``
with ``D = N`` (periodic) or ``N - 1`` (symmetric):

==================  ==============================================================
name (aliases)      coefficients / formula
==================  ==============================================================
rectangular         ``w[n] = 1`` (aliases ``boxcar``, ``rect``, ``ones``)
hann                ``a = (0.5, 0.5)`` (alias ``hanning``)
hamming             ``a = (0.54, 0.46)``
blackman            ``a = (0.42, 0.50, 0.08)``
blackmanharris      ``a = (0.35875, 0.48829, 0.14128, 0.01168)``
nuttall             ``a = (0.3635819, 0.4891775, 0.1365995, 0.0106411)``
flattop             ``a = (0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368)``
bartlett            ``w[n] = 1 - |2n/D - 1|`` (triangle with zero endpoints)
kaiser              ``w[n] = I0(beta * sqrt(1 - (2n/D - 1)**2)) / I0(beta)``;
                    ``beta`` defaults to :data:`DEFAULT_KAISER_BETA` (8.6, close to
                    Blackman's main lobe); text spec ``kaiser:BETA``
==================  ==============================================================

Overlap-add
-----------
For a window ``w`` (length ``N``) and hop ``H``, the steady-state overlap sum at
offset ``r`` (``0 <= r < H``) is ``s[r] = sum_k w[r + k*H]`` (``0 <= r + kH < N``).

* COLA (constant overlap-add): ``s`` is constant; then overlap-adding the
  windowed frames reproduces the signal up to that constant.
* NOLA (nonzero overlap-add): every ``sum_k w[r + k*H]**2 > 0``; this is the
  condition for inverting an STFT by weighted overlap-add (divide by the sum of
  squared windows).  ``nola_min`` gives the smallest such sum: the closer it is
  to 0, the worse the conditioning of the inverse.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from ..errors import ParameterError
from ..validate import check_int, is_real

__all__ = [
    "DEFAULT_KAISER_BETA",
    "DEFAULT_OLA_TOL",
    "WINDOWS",
    "WindowName",
    "WindowSpec",
    "canonical_window_name",
    "coherent_gain",
    "enbw",
    "get_window",
    "is_cola",
    "is_nola",
    "nola_min",
    "overlap_sum",
    "parse_window_spec",
]

WindowName = Literal["rectangular", "hann", "hamming", "blackman", "blackmanharris", "nuttall", "flattop", "bartlett", "kaiser"]
WINDOWS: tuple[str, ...] = get_args(WindowName)
"""Canonical window names, in the order shown to users."""

DEFAULT_KAISER_BETA = 8.6
"""Kaiser ``beta`` used when none is given (main lobe similar to Blackman)."""

_ALIASES = {"boxcar": "rectangular", "rect": "rectangular", "ones": "rectangular", "hanning": "hann"}

_COSINE_COEFFS: dict[str, tuple[float, ...]] = {
    "hann": (0.5, 0.5),
    "hamming": (0.54, 0.46),
    "blackman": (0.42, 0.50, 0.08),
    "blackmanharris": (0.35875, 0.48829, 0.14128, 0.01168),
    "nuttall": (0.3635819, 0.4891775, 0.1365995, 0.0106411),
    "flattop": (0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368),
}

#: Absolute tolerance of :func:`is_cola` and :func:`is_nola` (scipy's value).
DEFAULT_OLA_TOL = 1e-10


def canonical_window_name(name: str) -> str:
    """Return the canonical name of window ``name`` (case-insensitive, aliases resolved).

    Raises
    ------
    ParameterError
        If ``name`` is not a known window; the message lists the allowed names.
    """
    if not isinstance(name, str):
        raise ParameterError(f"window name must be a string, got {name!r}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in WINDOWS:
        raise ParameterError(f"unknown window {name!r}; allowed: {', '.join(WINDOWS)} (aliases: {', '.join(sorted(_ALIASES))})")
    return key


@dataclass(frozen=True)
class WindowSpec:
    """A window choice: canonical name plus the Kaiser ``beta`` (None for other windows).

    ``str(spec)`` gives the text form accepted by :func:`parse_window_spec`
    (``"hann"``, ``"kaiser:8.6"``).
    """

    name: str
    beta: float | None = None

    def __post_init__(self) -> None:
        name = canonical_window_name(self.name)
        object.__setattr__(self, "name", name)
        beta = self.beta
        if name == "kaiser":
            beta = DEFAULT_KAISER_BETA if beta is None else beta
            if not (is_real(beta) and math.isfinite(beta) and beta >= 0):
                raise ParameterError(f"kaiser beta must be a finite number >= 0, got {beta!r}")
            object.__setattr__(self, "beta", float(beta))
        elif beta is not None:
            raise ParameterError(f"beta applies to the kaiser window only, got beta={beta!r} for window {name!r}")

    def __str__(self) -> str:
        return f"kaiser:{self.beta:g}" if self.name == "kaiser" else self.name

    def get(self, length: int, *, periodic: bool = True) -> np.ndarray:
        """The window samples; see :func:`get_window`."""
        return get_window(self.name, length, periodic=periodic, beta=self.beta)


_SPEC_RE = re.compile(r"^\s*([A-Za-z_]+)\s*(?::\s*(\S+?)\s*)?$")


def parse_window_spec(text: str) -> WindowSpec:
    """Parse a window spec such as ``"hann"``, ``"Hamming"`` or ``"kaiser:8.6"``.

    Parameters
    ----------
    text : str
        ``NAME`` or ``kaiser:BETA``; names are case-insensitive and may be aliases.

    Returns
    -------
    WindowSpec

    Raises
    ------
    ParameterError
        Unknown name, a ``:BETA`` on a window other than kaiser, or a beta that
        is not a number >= 0.
    """
    m = _SPEC_RE.match(text) if isinstance(text, str) else None
    if m is None:
        raise ParameterError(f"invalid window spec {text!r}; expected NAME or kaiser:BETA, NAME one of {', '.join(WINDOWS)}")
    name, beta_text = m.group(1), m.group(2)
    beta: float | None = None
    if beta_text is not None:
        try:
            beta = float(beta_text)
        except ValueError:
            raise ParameterError(f"invalid kaiser beta {beta_text!r} in window spec {text!r}; expected a number >= 0") from None
    return WindowSpec(name, beta)


def _check_length(length: int) -> int:
    return check_int(length, "length", minimum=1, message="window length must be an integer > 0, got {value!r}")


def get_window(name: str, length: int, *, periodic: bool = True, beta: float | None = None) -> np.ndarray:
    """Window samples by name.

    Parameters
    ----------
    name : str
        One of :data:`WINDOWS` or an alias (case-insensitive).  A ``kaiser:BETA``
        spec is also accepted (then ``beta`` must be None).
    length : int > 0
        Number of samples ``N``.
    periodic : bool
        True (default): periodic (DFT-even) window, for spectral analysis and
        overlap-add.  False: symmetric window.
    beta : float >= 0, optional
        Kaiser shape parameter (default :data:`DEFAULT_KAISER_BETA`); an error
        for other windows.

    Returns
    -------
    w : np.ndarray, shape (length,), float64
        Equal to ``scipy.signal.get_window(name, length, fftbins=periodic)``
        (with ``("kaiser", beta)`` for kaiser) to rounding.
    """
    if isinstance(name, str) and ":" in name:
        spec = parse_window_spec(name)
        if beta is not None:
            raise ParameterError(f"give the kaiser beta once: window {name!r} and beta={beta!r}")
    else:
        spec = WindowSpec(name, beta)
    n = _check_length(length)
    if n == 1:
        return np.ones(1)
    # A periodic window of length n is the symmetric one of length n + 1, truncated.
    m = n + 1 if periodic else n
    denom = m - 1
    k = np.arange(n, dtype=np.float64)
    if spec.name == "rectangular":
        return np.ones(n)
    if spec.name in _COSINE_COEFFS:
        w = np.zeros(n)
        for j, a in enumerate(_COSINE_COEFFS[spec.name]):
            w += (-1.0) ** j * a * np.cos(2.0 * np.pi * j * k / denom)
        return w
    if spec.name == "bartlett":
        return 1.0 - np.abs(2.0 * k / denom - 1.0)
    # kaiser
    assert spec.beta is not None  # WindowSpec gives a kaiser window its beta (DEFAULT_KAISER_BETA when none)
    beta_v = float(spec.beta)
    r = 2.0 * k / denom - 1.0
    return np.i0(beta_v * np.sqrt(np.clip(1.0 - r * r, 0.0, None))) / np.i0(beta_v)


# --------------------------------------------------------------------------- figures


def _as_window(w: np.ndarray) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise ParameterError(f"window must be a non-empty 1-D array, got shape {w.shape}")
    return w


def coherent_gain(w: np.ndarray) -> float:
    """Coherent (DC) gain of a window: ``sum(w) / N``.

    A sinusoid of amplitude ``A`` on a bin centre reads ``A * N * coherent_gain / 2``
    in the one-sided unnormalised DFT; divide by it to read amplitudes.
    """
    w = _as_window(w)
    return float(np.sum(w) / w.size)


def enbw(w: np.ndarray) -> float:
    """Equivalent noise bandwidth in bins: ``N * sum(w**2) / sum(w)**2``.

    1.0 for the rectangular window, 1.5 for periodic Hann; multiply by
    ``sr / n_fft`` for Hz.
    """
    w = _as_window(w)
    s = np.sum(w)
    if s == 0:
        raise ParameterError("enbw is undefined for a window that sums to zero")
    return float(w.size * np.sum(w * w) / (s * s))


def _check_hop(hop: int) -> int:
    return check_int(hop, "hop", minimum=1, message="hop must be an integer > 0, got {value!r}")


def overlap_sum(w: np.ndarray, hop: int, *, squared: bool = False) -> np.ndarray:
    """Steady-state overlap-add of a window shifted by ``hop``.

    Parameters
    ----------
    w : np.ndarray, shape (N,)
    hop : int > 0
    squared : bool
        Sum ``w**2`` instead of ``w`` (the NOLA sum).

    Returns
    -------
    s : np.ndarray, shape (hop,), float64
        ``s[r] = sum_k w[r + k*hop]`` (or of ``w**2``) over ``0 <= r + k*hop < N``;
        zero where no shifted window covers ``r`` (``hop > N``).
    """
    w = _as_window(w)
    hop = _check_hop(hop)
    v = w * w if squared else w
    v = np.pad(v, (0, (-v.size) % hop))
    return v.reshape(-1, hop).sum(axis=0)


def is_cola(w: np.ndarray, hop: int, *, tol: float = DEFAULT_OLA_TOL) -> bool:
    """True if ``w`` shifted by ``hop`` overlap-adds to a constant (within ``tol``).

    Same criterion as ``scipy.signal.check_COLA``: the largest deviation of
    :func:`overlap_sum` from its median is below ``tol``.
    """
    s = overlap_sum(w, hop)
    return bool(np.max(np.abs(s - np.median(s))) < tol)


def nola_min(w: np.ndarray, hop: int) -> float:
    """Smallest steady-state sum of squared shifted windows, ``min(overlap_sum(w, hop, squared=True))``.

    Zero means some sample is seen by no frame with nonzero weight: the STFT
    cannot be inverted there.
    """
    return float(np.min(overlap_sum(w, hop, squared=True)))


def is_nola(w: np.ndarray, hop: int, *, tol: float = DEFAULT_OLA_TOL) -> bool:
    """True if every steady-state sum of squared shifted windows exceeds ``tol``.

    Same criterion as ``scipy.signal.check_NOLA``.
    """
    return nola_min(w, hop) > tol

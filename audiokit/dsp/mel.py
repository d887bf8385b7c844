"""Mel scales, triangular mel filter banks, and (log-)mel spectrograms.

Mel scales
----------
* ``'htk'`` (default): ``mel = 2595 * log10(1 + f / 700)``.
* ``'slaney'`` (Auditory Toolbox, librosa's default): linear below 1 kHz,
  ``mel = 3 * f / 200``; logarithmic above, ``mel = 15 + 27 * ln(f / 1000) / ln(6.4)``.

Filter bank
-----------
``n_mels`` triangles whose corner frequencies are ``n_mels + 2`` points equally
spaced in mel from ``fmin`` to ``fmax``.  Triangle ``i`` rises linearly from
corner ``i`` to ``i+1`` and falls to ``i+2``; its weight at DFT bin ``k``
(``f_k = k*sr/n_fft``) is ``max(0, min((f_k - c_i)/(c_{i+1} - c_i),
(c_{i+2} - f_k)/(c_{i+2} - c_{i+1})))``, so the peak is 1 (``norm=None``).
``norm='slaney'`` scales each triangle by ``2 / (c_{i+2} - c_i)`` (Hz) so that
its area is constant.  A filter that falls between DFT bins is all zeros: it
is kept (its band reads 0) and a warning names it; use fewer mels or a larger
``n_fft``.  Bands built from exactly the same DFT bins as the band below (at low
frequencies, where the triangles are narrower than ``sr/n_fft``) duplicate it:
a second warning counts them (:func:`warn_duplicate_bands`; a job calls it once per run).

This is ``librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin,
fmax=fmax, htk=(scale == 'htk'), norm=norm)``; librosa's *defaults* are
``scale='slaney', norm='slaney'``, ours are the article's ``'htk', None``.

Mel spectrogram
---------------
``M = F @ |X|**power`` per frame, with ``X`` the STFT of :class:`StftPlan`;
``librosa.feature.melspectrogram(y=x, sr=sr, n_fft=n_fft, hop_length=H,
win_length=W, window='hann', center=center, pad_mode=pad_mode, power=power,
n_mels=n_mels, fmin=fmin, fmax=fmax, htk=..., norm=...)`` gives the same
numbers.  The log-mel adds ``10*log10(max(amin, M))`` (power, ``log='db'``)
or ``log(max(amin, M))`` (``log='ln'``), fused into the same chunked pass.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal, cast, get_args

import numpy as np

from ..engine import FftBackend
from ..errors import ParameterError
from ..validate import check_choice, check_int, is_real
from .scaling import AMIN, DB_FACTOR, rescale_db
from .stft import LOG_KINDS, StftPlan, compute, output_for_power

__all__ = [
    "DuplicateBandsWarning",
    "warn_duplicate_bands",
    "MEL_SCALES",
    "MelNorm",
    "MelScale",
    "hz_to_mel",
    "log_melspectrogram",
    "mel_filterbank",
    "mel_frequencies",
    "mel_to_hz",
    "melspectrogram",
]

MelScale = Literal["htk", "slaney"]
MEL_SCALES: tuple[str, ...] = get_args(MelScale)
MelNorm = Literal["slaney"]

_HTK_MEL = 2595.0  # mel per decade of (1 + f / 700 Hz) (HTK)
_HTK_BREAK_HZ = 700.0  # Hz: the HTK scale is linear well below, logarithmic well above
_F_SP = 200.0 / 3  # Hz per mel below the break (Slaney)
_MIN_LOG_HZ = 1000.0  # Hz: Slaney's break between the linear and the log part
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP  # 15 mel
_LOGSTEP = np.log(6.4) / 27.0  # ln(Hz ratio) per mel above the break: 27 mel per 6.4x in Hz


def _check_scale(scale: str) -> MelScale:
    check_choice(scale, "mel scale", MEL_SCALES, message="{name} must be one of {allowed}; got {value!r}")
    return cast(MelScale, scale)


def hz_to_mel(f: float | np.ndarray, *, scale: MelScale = "htk") -> float | np.ndarray:
    """Frequency in Hz to mel.

    Parameters
    ----------
    f : float or np.ndarray
        Frequencies in Hz (>= 0).
    scale : {'htk', 'slaney'}
        ``'htk'``: ``2595 * log10(1 + f/700)``.  ``'slaney'``: ``3*f/200`` below
        1 kHz, ``15 + 27*ln(f/1000)/ln(6.4)`` above.

    Returns
    -------
    float or np.ndarray (float64), mel
    """
    scale = _check_scale(scale)
    fa = np.asarray(f, dtype=np.float64)
    if scale == "htk":
        m = _HTK_MEL * np.log10(1.0 + fa / _HTK_BREAK_HZ)
    else:
        m = fa / _F_SP
        hi = fa >= _MIN_LOG_HZ
        m = np.where(hi, _MIN_LOG_MEL + np.log(np.maximum(fa, _MIN_LOG_HZ) / _MIN_LOG_HZ) / _LOGSTEP, m)
    return float(m) if np.ndim(f) == 0 else m


def mel_to_hz(m: float | np.ndarray, *, scale: MelScale = "htk") -> float | np.ndarray:
    """Mel to frequency in Hz (inverse of :func:`hz_to_mel`).

    ``'htk'``: ``700 * (10**(m/2595) - 1)``.  ``'slaney'``: ``200*m/3`` below 15
    mel, ``1000 * exp(ln(6.4) * (m - 15) / 27)`` above.
    """
    scale = _check_scale(scale)
    ma = np.asarray(m, dtype=np.float64)
    if scale == "htk":
        f = _HTK_BREAK_HZ * (10.0 ** (ma / _HTK_MEL) - 1.0)
    else:
        f = _F_SP * ma
        hi = ma >= _MIN_LOG_MEL
        f = np.where(hi, _MIN_LOG_HZ * np.exp(_LOGSTEP * (np.maximum(ma, _MIN_LOG_MEL) - _MIN_LOG_MEL)), f)
    return float(f) if np.ndim(m) == 0 else f


def mel_frequencies(n: int, *, fmin: float = 0.0, fmax: float, scale: MelScale = "htk") -> np.ndarray:
    """``n`` frequencies (Hz) equally spaced in mel from ``fmin`` to ``fmax`` inclusive."""
    lo, hi = hz_to_mel(fmin, scale=scale), hz_to_mel(fmax, scale=scale)
    return np.asarray(mel_to_hz(np.linspace(lo, hi, n), scale=scale))


def _num(v: Any) -> bool:
    """True for a finite real number (not bool)."""
    return is_real(v) and bool(np.isfinite(v))


def mel_filterbank(
    *,
    sr: float,
    n_fft: int,
    n_mels: int = 80,
    fmin: float = 0.0,
    fmax: float | None = None,
    scale: MelScale = "htk",
    norm: MelNorm | None = None,
    dtype: Any = np.float64,
) -> np.ndarray:
    """Triangular mel filter bank (see the module docstring).

    Parameters
    ----------
    sr : float > 0
        Sample rate in Hz.
    n_fft : int > 0
        FFT size; the bank acts on ``n_fft//2 + 1`` one-sided bins.
    n_mels : int > 0
        Number of filters (default 80).
    fmin : float >= 0
        Lowest corner frequency in Hz (default 0).
    fmax : float, fmin < fmax <= sr/2, optional
        Highest corner frequency in Hz (default ``sr / 2``).
    scale : {'htk', 'slaney'}
        Mel scale used to space the corners (default ``'htk'``).
    norm : {None, 'slaney'}
        None: triangles peak at 1.  ``'slaney'``: each triangle scaled by
        ``2 / (upper corner - lower corner)`` in Hz (constant area).
    dtype : numpy dtype
        Output dtype (default float64).

    Returns
    -------
    F : np.ndarray, shape (n_mels, n_fft//2 + 1)

    Warns
    -----
    UserWarning
        If some filters cover no DFT bin (all-zero rows); if some are built from
        the same DFT bins as the filter below (duplicates).
    """
    if not _num(sr) or sr <= 0:
        raise ParameterError(f"sr must be a number > 0 (Hz), got {sr!r}")
    check_int(n_fft, "n_fft", minimum=1, message="{name} must be an integer > 0, got {value!r}")
    check_int(n_mels, "n_mels", minimum=1, message="{name} must be an integer > 0, got {value!r}")
    nyquist = float(sr) / 2
    if fmax is None:
        fmax = nyquist
    if not _num(fmin) or fmin < 0:
        raise ParameterError(f"fmin must be a number >= 0 (Hz), got {fmin!r}")
    if not _num(fmax) or not (fmin < fmax <= nyquist):
        raise ParameterError(f"fmax must satisfy fmin ({fmin:g} Hz) < fmax <= sr/2 ({nyquist:g} Hz), got {fmax!r}")
    scale = _check_scale(scale)
    if norm not in (None, "slaney"):
        raise ParameterError(f"norm must be None or 'slaney'; got {norm!r}")
    n_freqs = n_fft // 2 + 1
    fft_f = np.arange(n_freqs) * (float(sr) / n_fft)
    corners = mel_frequencies(n_mels + 2, fmin=float(fmin), fmax=float(fmax), scale=scale)
    widths = np.diff(corners)
    enorm = 2.0 / (corners[2:] - corners[:-2])
    # One band at a time, straight into the result's dtype: no (n_mels, n_freqs) float64 temporaries (a 75 000-point
    # frame at 3 MHz made five of them, 120 MiB); the same operations per element, so the same bits.
    weights = np.empty((n_mels, n_freqs), dtype=dtype)
    peaks = np.empty(n_mels)
    supports: list[tuple[int, int]] = []  # (first, last) bin of each band's non-zero weights
    for i in range(n_mels):
        lower = -(corners[i] - fft_f) / widths[i]  # (f - c_i) / (c_{i+1} - c_i)
        upper = (corners[i + 2] - fft_f) / widths[i + 1]  # (c_{i+2} - f) / (c_{i+2} - c_{i+1})
        band = np.maximum(0.0, np.minimum(lower, upper))
        if norm == "slaney":
            band *= enorm[i]
        peaks[i] = band.max() if n_freqs else 0.0
        weights[i] = band
        nonzero = np.flatnonzero(band > 0)
        supports.append((int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (-1, -1))
    empty = np.flatnonzero(~(peaks > 0))
    if empty.size:
        warnings.warn(
            f"{empty.size} of {n_mels} mel filters are empty (no DFT bin between their corners), "
            f"first at index {empty[0]}: n_mels={n_mels} is too many for n_fft={n_fft} at sr={sr:g} Hz; "
            f"those bands will read 0",
            UserWarning,
            stacklevel=2,
        )
    else:  # one warning: empty filters say the bank is too fine already
        _warn_duplicates(supports, corners, n_fft=n_fft, sr=float(sr))
    return weights


class DuplicateBandsWarning(UserWarning):
    """Mel bands built from the same DFT bins as the band below (``n_fft`` too small for ``n_mels`` at low frequencies)."""


def warn_duplicate_bands(
    filterbank: np.ndarray, *, sr: float, fmin: float = 0.0, fmax: float | None = None, scale: MelScale = "htk"
) -> int:
    """Warn (:class:`DuplicateBandsWarning`) when rows of ``filterbank`` are built from the same DFT bins as the row
    below; return how many are.

    :func:`mel_filterbank` calls it on every bank it builds; a caller holding a cached bank (a job, once per
    run) calls it again.  ``fmin``/``fmax``/``scale`` are the bank's, for the message.
    """
    fb = np.asarray(filterbank)
    n_fft = 2 * (fb.shape[1] - 1)
    supports = []
    for band in fb:
        nonzero = np.flatnonzero(band > 0)
        supports.append((int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (-1, -1))
    corners = mel_frequencies(fb.shape[0] + 2, fmin=float(fmin), fmax=float(sr) / 2 if fmax is None else float(fmax), scale=scale)
    return _warn_duplicates(supports, corners, n_fft=n_fft, sr=float(sr))


def _warn_duplicates(supports: list[tuple[int, int]], corners: np.ndarray, *, n_fft: int, sr: float) -> int:
    """Warn once when bands are built from exactly the same DFT bins as the band below (they duplicate it).

    A band's support is the run of bins where its weight is > 0 (a triangle's support is contiguous); two
    adjacent bands with the same run differ only by their weights on those bins, so they rise and fall together
    and the picture shows blocks.  The message also gives the frequency below which the triangles' half-widths
    (corner spacing) are narrower than the bin spacing ``sr/n_fft``.  Empty bands are the other warning's.
    """
    repeats = [i for i in range(1, len(supports)) if supports[i][0] >= 0 and supports[i] == supports[i - 1]]
    if not repeats:
        return 0
    df = sr / n_fft
    narrow = np.flatnonzero(np.diff(corners) < df)
    below = f"; the triangles are narrower than the bins below {corners[narrow[-1] + 1]:.0f} Hz" if narrow.size else ""
    warnings.warn(
        f"{len(repeats)} of {len(supports)} mel bands are built from the same DFT bins as the band below (bins "
        f"{df:g} Hz apart at n_fft={n_fft}, sr={sr:g} Hz{below}): they duplicate it; a larger n_fft (--nfft, "
        f"zero padding, e.g. {_next_pow2(4 * n_fft)}) or fewer mels separates them",
        DuplicateBandsWarning,
        stacklevel=3,
    )
    return len(repeats)


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n - 1).bit_length())


def _bank(
    plan: StftPlan,
    filterbank: np.ndarray | None,
    n_mels: int,
    fmin: float,
    fmax: float | None,
    scale: MelScale,
    norm: MelNorm | None,
) -> np.ndarray:
    if filterbank is not None:
        fb = np.asarray(filterbank)
        if fb.ndim != 2 or fb.shape[1] != plan.n_freqs:
            raise ParameterError(f"filterbank must be shaped (n_mels, n_freqs={plan.n_freqs}), got {fb.shape}")
        return fb
    return mel_filterbank(sr=plan.sr, n_fft=plan.n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, scale=scale, norm=norm)


def melspectrogram(
    x: np.ndarray,
    plan: StftPlan,
    *,
    n_mels: int = 80,
    fmin: float = 0.0,
    fmax: float | None = None,
    scale: MelScale = "htk",
    norm: MelNorm | None = None,
    filterbank: np.ndarray | None = None,
    power: float = 2.0,
    backend: FftBackend | None = None,
) -> np.ndarray:
    """Mel spectrogram ``F @ |STFT(x)|**power``.

    Parameters
    ----------
    x : np.ndarray, shape (..., n)
    plan : StftPlan
    n_mels, fmin, fmax, scale, norm
        Filter bank parameters (:func:`mel_filterbank`), ignored when
        ``filterbank`` is given.
    filterbank : np.ndarray, shape (n_mels, n_freqs), optional
        A precomputed bank.
    power : {2.0, 1.0}
        2: mel of the power spectrum (default); 1: of the magnitude.
    backend : FFT backend, optional

    Returns
    -------
    M : np.ndarray, shape (..., n_mels, n_frames), float32 or float64 (plan's working dtype)
    """
    fb = _bank(plan, filterbank, n_mels, fmin, fmax, scale, norm)
    return compute(plan, x, output=output_for_power(power), filterbank=fb, backend=backend)


def log_melspectrogram(
    x: np.ndarray,
    plan: StftPlan,
    *,
    n_mels: int = 80,
    fmin: float = 0.0,
    fmax: float | None = None,
    scale: MelScale = "htk",
    norm: MelNorm | None = None,
    filterbank: np.ndarray | None = None,
    power: float = 2.0,
    log: Literal["db", "ln"] = "db",
    amin: float | None = None,
    ref: float | Literal["max"] = 1.0,
    top_db: float | None = 80.0,
    backend: FftBackend | None = None,
) -> np.ndarray:
    """Log-mel spectrogram, the log fused into the chunked pass.

    Parameters
    ----------
    x, plan, n_mels, fmin, fmax, scale, norm, filterbank, power, backend
        As :func:`melspectrogram`.
    log : {'db', 'ln'}
        ``'db'`` (default): ``10*log10(max(amin, M) / ref)`` for ``power=2``
        (``20*log10`` for ``power=1``), i.e. ``librosa.power_to_db``.
        ``'ln'``: ``ln(max(amin, M) / ref)`` (natural log, Kaldi/Whisper style).
    amin : float > 0, optional
        Floor of the mel values before the log (default
        :data:`audiokit.dsp.scaling.AMIN`: 1e-10 for ``power=2``, 1e-5 for ``power=1``).
    ref : float > 0 or 'max'
        Reference giving 0 (dB or ln); ``'max'`` = the largest mel value.
    top_db : float >= 0 or None
        Clip at ``top_db`` decibels below the peak (default 80, librosa's
        ``power_to_db`` default; with ``log='ln'`` the same range in nepers:
        ``top_db * ln(10) / 10`` for power).

    Returns
    -------
    L : np.ndarray, shape (..., n_mels, n_frames)
    """
    if log not in LOG_KINDS:
        raise ParameterError(f"log must be one of {', '.join(LOG_KINDS)}; got {log!r}")
    output = output_for_power(power)
    if amin is None:
        amin = AMIN[output]
    fb = _bank(plan, filterbank, n_mels, fmin, fmax, scale, norm)
    L = compute(plan, x, output=output, filterbank=fb, log=log, amin=amin, backend=backend)
    # convert ref / top_db into the log unit of L
    unit = DB_FACTOR[output] if log == "db" else 1.0
    to_log = (lambda v: unit * np.log10(v)) if log == "db" else np.log
    if isinstance(ref, str):
        if ref != "max":
            raise ParameterError(f"ref must be a number > 0 or 'max', got {ref!r}")
        ref_l: float | Literal["max"] = "max"
    else:
        if not (_num(ref) and ref > 0):
            raise ParameterError(f"ref must be a number > 0 or 'max', got {ref!r}")
        ref_l = float(to_log(max(float(amin), float(ref))))
    top_l = None
    if top_db is not None:
        if not (_num(top_db) and top_db >= 0):
            raise ParameterError(f"top_db must be a number >= 0 or None, got {top_db!r}")
        # top_db decibels expressed in the unit of L
        top_l = float(top_db) if log == "db" else float(top_db) * np.log(10.0) / DB_FACTOR[output]
    if ref_l == 0.0 and top_l is None:
        return L
    return rescale_db(L, ref_db=ref_l, top_db=top_l, out=L)

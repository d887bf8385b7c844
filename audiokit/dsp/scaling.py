"""Magnitude, power and decibel scaling of spectra.

Conventions
-----------
* power ``P = |X|**2``, computed as ``re**2 + im**2`` (no square root);
  magnitude ``|X| = sqrt(P)``.
* decibels: ``10*log10(P / ref_power) == 20*log10(|X| / ref_magnitude)``.
  Values are floored at ``amin`` first (default :data:`AMIN`: ``1e-10`` for
  power, ``1e-5`` for magnitude, both -100 dB), so silence gives a finite
  value, never -inf:

      power:      dB = 10*log10(max(amin, P)) - 10*log10(max(amin, ref))
      magnitude:  dB = 20*log10(max(amin, M)) - 20*log10(max(amin, |ref|))

  ``ref='max'`` uses the largest value of the input; ``top_db`` then clips
  everything more than ``top_db`` dB below the peak of the result.  These are
  ``librosa.power_to_db`` / ``librosa.amplitude_to_db`` with the same
  arguments (``ref=np.max`` for ``'max'``).

Streaming
---------
``ref='max'`` and ``top_db`` need the global maximum, which a block-wise
computation only knows at the end.  Either compute dB per block with
``ref=1.0, top_db=None`` (:func:`to_db`, or ``log='db'`` in the STFT stream),
track the running maximum of the dB values, and finish with
:func:`rescale_db` on the stored result (in place, one pass); or run two
passes over the input.  The result is identical to the one-shot call because
``log10`` is monotonic: ``to_db(S, ref='max', top_db=t) ==
rescale_db(to_db(S, ref=1.0, top_db=None), ref_db='max', top_db=t)``.
"""

from __future__ import annotations

import math
from typing import Literal, cast, get_args

import numpy as np

from ..errors import ParameterError
from ..validate import check_choice, is_real

__all__ = [
    "AMIN",
    "DB_FACTOR",
    "KINDS",
    "Kind",
    "db_to_magnitude",
    "db_to_power",
    "magnitude",
    "power",
    "reference_db",
    "rescale_db",
    "to_db",
]

Kind = Literal["power", "magnitude"]
KINDS: tuple[str, ...] = get_args(Kind)

AMIN: dict[str, float] = {"power": 1e-10, "magnitude": 1e-5}
"""Default floor applied before a log, per kind of value: the one table of the package.

``AMIN["power"]`` floors a power ``|X|**2`` (unit: squared input unit, e.g.
full-scale**2) and ``AMIN["magnitude"]`` a magnitude ``|X|`` (input unit); both
are -100 dB (``10*log10(1e-10) == 20*log10(1e-5)``).  Used by :func:`to_db`,
the STFT/mel log (:class:`audiokit.dsp.stft.StftStream`,
:func:`audiokit.dsp.mel.log_melspectrogram`) and the CLI.
"""

DB_FACTOR: dict[str, float] = {"power": 10.0, "magnitude": 20.0}
"""Decibels per decade of the value: ``dB = DB_FACTOR[kind] * log10(value / ref)``.

10 for a power (``|X|**2``), 20 for a magnitude (``|X|``), so that both give
the same dB for the same signal.
"""


def power(X: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Power ``|X|**2`` of complex spectra, as ``re**2 + im**2``.

    Parameters
    ----------
    X : np.ndarray, complex64 or complex128 (real input is squared)
    out : np.ndarray, optional
        Destination of the real dtype matching ``X`` and the same shape.

    Returns
    -------
    P : np.ndarray, same shape as ``X``, float32 or float64
    """
    X = np.asarray(X)
    if not np.iscomplexobj(X):
        return np.square(X, out=out)
    re, im = X.real, X.imag
    out = np.multiply(re, re, out=out)
    out += im * im
    return out


def magnitude(X: np.ndarray) -> np.ndarray:
    """Magnitude ``|X| = sqrt(re**2 + im**2)`` (float32 or float64)."""
    P = power(X)
    return np.sqrt(P, out=P)


def _check_kind(kind: str) -> Kind:
    check_choice(kind, "kind", KINDS, message="{name} must be one of {allowed}; got {value!r}")
    return cast(Kind, kind)


def _check_amin(amin: float) -> float:
    if not (is_real(amin) and np.isfinite(amin) and amin > 0):
        raise ParameterError(f"amin must be a number > 0, got {amin!r}")
    return float(amin)


def _check_top_db(top_db: float | None) -> float | None:
    if top_db is None:
        return None
    if not (is_real(top_db) and np.isfinite(top_db) and top_db >= 0):
        raise ParameterError(f"top_db must be a number >= 0 or None, got {top_db!r}")
    return float(top_db)


def to_db(
    S: np.ndarray,
    *,
    kind: Kind = "power",
    ref: float | Literal["max"] = 1.0,
    amin: float | None = None,
    top_db: float | None = 80.0,
) -> np.ndarray:
    """Convert power or magnitude values to decibels.

    Parameters
    ----------
    S : np.ndarray
        Power (``kind='power'``) or magnitude (``kind='magnitude'``) values.
        Complex input is reduced to ``|S|`` first (``kind='magnitude'``) or
        ``|S|**2`` (``kind='power'``).
    kind : {'power', 'magnitude'}
        ``10*log10`` for power, ``20*log10`` for magnitude.
    ref : float > 0 or 'max'
        Reference value giving 0 dB (same unit as ``S``); ``'max'`` uses ``max(S)``.
    amin : float > 0, optional
        Floor applied to ``S`` and ``ref``, in the unit of ``S`` (default
        :data:`AMIN`: 1e-10 for power, 1e-5 for magnitude).
    top_db : float >= 0 or None
        If set (default 80), clip the result at ``max(result) - top_db``.

    Returns
    -------
    S_db : np.ndarray, same shape, float32 for float32/complex64 input else float64

    Notes
    -----
    Equals ``librosa.power_to_db(S, ref=ref, amin=amin, top_db=top_db)``
    (power) and ``librosa.amplitude_to_db(S, ...)`` (magnitude), with
    ``ref=np.max`` for ``'max'``.
    """
    kind = _check_kind(kind)
    amin = _check_amin(AMIN[kind] if amin is None else amin)
    top_db = _check_top_db(top_db)
    S = np.asarray(S)
    if np.iscomplexobj(S):
        S = power(S) if kind == "power" else magnitude(S)
    elif kind == "magnitude":
        S = np.abs(S)
    if not np.issubdtype(S.dtype, np.floating):
        S = S.astype(np.float64)
    if isinstance(ref, str):
        if ref != "max":
            raise ParameterError(f"ref must be a number > 0 or 'max', got {ref!r}")
        ref_v = float(np.max(S)) if S.size else 1.0
    else:
        if not (is_real(ref) and np.isfinite(ref)):
            raise ParameterError(f"ref must be a number > 0 or 'max', got {ref!r}")
        ref_v = abs(float(ref))
    factor = DB_FACTOR[kind]
    out = np.maximum(S, S.dtype.type(amin))
    np.log10(out, out=out)
    out *= factor
    ref_db = factor * np.log10(max(amin, ref_v))
    if ref_db != 0.0:
        out -= out.dtype.type(ref_db)
    if top_db is not None and out.size:
        np.maximum(out, out.max() - top_db, out=out)
    return out


def rescale_db(
    S_db: np.ndarray,
    *,
    ref_db: float | Literal["max"] = 0.0,
    top_db: float | None = None,
    max_db: float | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Apply a dB reference and a ``top_db`` clip after the fact (streaming second step).

    Parameters
    ----------
    S_db : np.ndarray
        Decibel values computed with ``ref=1``.
    ref_db : float or 'max'
        Level (dB) to subtract; ``'max'`` subtracts ``max_db``, i.e. the value
        of ``ref='max'`` in :func:`to_db`.
    top_db : float >= 0 or None
        Clip at ``(peak - ref_db) - top_db`` where peak is ``max_db``.
    max_db : float, optional
        Global maximum of ``S_db`` if already known (tracked while streaming);
        default ``S_db.max()``.
    out : np.ndarray, optional
        Destination; pass ``S_db`` itself to work in place.

    Returns
    -------
    np.ndarray
        ``max(S_db - ref_db, max_db - ref_db - top_db)``.
    """
    top_db = _check_top_db(top_db)
    S_db = np.asarray(S_db)
    need_max = ref_db == "max" or top_db is not None
    peak = 0.0  # global maximum of S_db in dB, read only for ref_db='max' or a top_db
    if need_max:
        peak = float(max_db) if max_db is not None else (float(S_db.max()) if S_db.size else 0.0)
    if isinstance(ref_db, str):
        if ref_db != "max":
            raise ParameterError(f"ref_db must be a number or 'max', got {ref_db!r}")
        ref_v = peak
    else:
        ref_v = float(ref_db)
    out = np.subtract(S_db, S_db.dtype.type(ref_v), out=out)
    if top_db is not None:
        np.maximum(out, S_db.dtype.type(peak - ref_v - top_db), out=out)
    return out


def reference_db(ref: float | Literal["max"], peak_db: float, kind: Kind) -> float:
    """The dB value that becomes 0 dB: ``peak_db`` for ``"max"``, else ``DB_FACTOR[kind]·log10(ref)``.

    ``ref`` is a linear value of the same kind (power or magnitude) as the data.
    """
    if ref == "max":
        return peak_db
    return DB_FACTOR[_check_kind(kind)] * math.log10(float(ref))


def db_to_power(S_db: np.ndarray, *, ref: float = 1.0) -> np.ndarray:
    """Inverse of :func:`to_db` for power (without the floor/clip): ``ref * 10**(S_db/10)``."""
    return ref * np.power(10.0, np.asarray(S_db) / DB_FACTOR["power"])


def db_to_magnitude(S_db: np.ndarray, *, ref: float = 1.0) -> np.ndarray:
    """Inverse of :func:`to_db` for magnitude (without the floor/clip): ``ref * 10**(S_db/20)``."""
    return ref * np.power(10.0, np.asarray(S_db) / DB_FACTOR["magnitude"])

"""Features computed from a (log-)mel or cepstral array: MFCC, deltas, CMVN.

Layout
------
Every function takes ``axis``, the **frames (time) axis**, default ``-1``: audiokit's and
librosa's ``(n_rows, n_frames)`` layout (bins x frames).  Kaldi matrices and the output of
:func:`audiokit.dsp.kaldi.kaldi_fbank` are **frames x bins** ``(n_frames, dim)``: pass
``axis=0`` for them.  The other axes are feature dimensions (or channels) and pass through.

=========================  ==================================================================
function                   reproduces
=========================  ==================================================================
:func:`mfcc`               ``librosa.feature.mfcc(S=log_mel, n_mfcc, dct_type=2, norm="ortho",
                           lifter)`` (the DCT over the **rows**, the non-time axis)
:func:`delta`              ``librosa.feature.delta(width=9, order, mode="interp")``
                           (``method="librosa"``) or Kaldi ``DeltaFeatures`` (``method="kaldi"``,
                           ``window=2``)
:func:`add_deltas`         Kaldi ``add-deltas`` (``--delta-order=2 --delta-window=2``): the
                           features followed by their deltas
:func:`cmvn`               Kaldi ``apply-cmvn`` with per-utterance stats (``mode="utterance"``),
                           Kaldi ``apply-cmvn-sliding`` (``mode="sliding"``, ``--cmn-window=600
                           --center=true --min-cmn-window=100``, ``--norm-vars=false``)
:class:`SlidingCmvn`       the same sliding CMVN over blocks of frames (bounded memory)
=========================  ==================================================================

All numpy (``scipy.fft.dct`` and ``scipy.signal.savgol_filter`` where librosa uses them);
float32 input stays float32 (computed in float64 where Kaldi uses double), others give float64.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import numpy as np

from ..errors import ParameterError
from ..validate import check_choice, check_int, check_real

__all__ = [
    "mfcc",
    "delta",
    "add_deltas",
    "kaldi_delta_window",
    "cmvn",
    "SlidingCmvn",
    "sliding_cmvn_window",
    "DeltaStream",
]

DeltaMethod = Literal["kaldi", "librosa"]
CmvnMode = Literal["utterance", "sliding"]


def _as_features(x: object, name: str = "features") -> np.ndarray:
    a = np.asarray(x)
    if a.ndim == 0:
        raise ParameterError(f"{name} must have at least one axis, got a scalar")
    if a.dtype.kind not in "fiu":
        raise ParameterError(f"{name} must be real numbers, got dtype {a.dtype}")
    if a.dtype.kind != "f" or a.dtype.itemsize > 8:
        a = a.astype(np.float64)
    elif a.dtype.itemsize < 4:
        a = a.astype(np.float32)
    return a


def _check_axis(axis: object, ndim: int) -> int:
    ax = check_int(axis, "axis")
    if not -ndim <= ax < ndim:
        raise ParameterError(f"axis {ax} is out of range for an array of {ndim} dimension(s)")
    return ax % ndim


# --------------------------------------------------------------------------------------------
# MFCC
# --------------------------------------------------------------------------------------------
def mfcc(
    log_mel: np.ndarray,
    *,
    n_mfcc: int = 20,
    dct_type: int = 2,
    norm: Literal["ortho"] | None = "ortho",
    lifter: float = 0.0,
    energy: np.ndarray | None = None,
    axis: int = -1,
) -> np.ndarray:
    """Cepstra of a log-mel spectrogram, as ``librosa.feature.mfcc(S=log_mel, ...)``.

    ``M = DCT(log_mel)`` over the mel axis (type ``dct_type``, ``norm``; with the defaults the
    orthonormal DCT-II ``M[k] = s_k * sum_j L[j] cos(pi*k*(2j+1)/(2n))``, ``s_0 = sqrt(1/n)``,
    ``s_k = sqrt(2/n)``), rows ``0 .. n_mfcc-1`` kept; ``lifter > 0`` multiplies row ``k`` by
    ``1 + (lifter/2) * sin(pi*(k+1)/lifter)`` (librosa's lifter; Kaldi's uses ``k`` instead of
    ``k+1``, see :func:`audiokit.dsp.kaldi.lifter_coeffs`).

    Parameters
    ----------
    log_mel : np.ndarray, shape (..., n_mels, n_frames) for ``axis=-1``
        Log-mel values (dB as librosa's ``power_to_db``, or natural log; the DCT is linear).
        The mel axis is the one before the frames axis for ``axis=-1``; for a frames x bins
        array (``axis=0``, Kaldi layout) it is the last axis.
    n_mfcc : int >= 1
        Coefficients kept (20); at most ``n_mels``.
    dct_type : {1, 2, 3}
        DCT type (2).
    norm : {"ortho", None}
        DCT normalisation ("ortho").
    lifter : float >= 0
        Cepstral lifter constant; 0 = none.
    energy : np.ndarray, optional, shape (n_frames,) or broadcastable to the frames axis
        Values that replace c0 (e.g. a log frame energy), after liftering.
    axis : int
        Frames axis (-1).  The mel axis is ``axis - 1`` if ``axis`` is the last axis, else the
        last axis.

    Returns
    -------
    np.ndarray
        Same layout as ``log_mel`` with the mel axis cut to ``n_mfcc`` rows.

    Raises
    ------
    ParameterError
        Bad ``n_mfcc``, ``dct_type``, ``norm``, ``lifter``, ``axis``, or an array with fewer than
        two axes.
    """
    s = _as_features(log_mel, "log_mel")
    if s.ndim < 2:
        raise ParameterError(f"log_mel must be 2-D or more (mels and frames), got shape {s.shape}")
    t_ax = _check_axis(axis, s.ndim)
    m_ax = t_ax - 1 if t_ax == s.ndim - 1 else s.ndim - 1
    n_mels = s.shape[m_ax]
    k = check_int(n_mfcc, "n_mfcc", minimum=1)
    if k > n_mels:
        raise ParameterError(f"n_mfcc ({k}) cannot exceed the number of mel bands ({n_mels})")
    if dct_type not in (1, 2, 3) or isinstance(dct_type, bool):
        raise ParameterError(f"dct_type must be 1, 2 or 3, got {dct_type!r}")
    if norm not in ("ortho", None):
        raise ParameterError(f"norm must be 'ortho' or None, got {norm!r}")
    lift = check_real(lifter, "lifter")
    if lift < 0:
        raise ParameterError(f"lifter must be >= 0, got {lifter!r}")
    import scipy.fft  # imported when used: scipy.signal alone costs more than numpy at start-up

    m = scipy.fft.dct(s, type=dct_type, norm=norm, axis=m_ax)
    m = np.take(m, np.arange(k), axis=m_ax)
    if lift > 0:
        shape = [1] * m.ndim
        shape[m_ax] = k
        li = np.sin(np.pi * np.arange(1, 1 + k, dtype=m.dtype) / lift)
        m *= (1 + (lift / 2) * li).reshape(shape)
    if energy is not None:
        e = np.asarray(energy, dtype=m.dtype)
        idx: list[Any] = [slice(None)] * m.ndim
        idx[m_ax] = 0
        target = m[tuple(idx)]
        t_in_target = t_ax if t_ax < m_ax else t_ax - 1
        if e.ndim == 1:
            if e.shape[0] != m.shape[t_ax]:
                raise ParameterError(f"energy has {e.shape[0]} values, expected one per frame ({m.shape[t_ax]})")
            shape = [1] * target.ndim
            shape[t_in_target] = e.shape[0]
            e = e.reshape(shape)
        target[...] = np.broadcast_to(e, target.shape)
    return m


# --------------------------------------------------------------------------------------------
# Deltas
# --------------------------------------------------------------------------------------------
def kaldi_delta_window(order: int, window: int = 2) -> np.ndarray:
    """Kaldi ``DeltaFeatures`` regression window of ``order`` (``scales_[order]``).

    ``w1[j] = j / sum_{i=-N..N} i**2`` for ``j = -N..N`` (``N = window``); order ``r`` is the
    ``r``-fold convolution of ``w1`` (order 0 is ``[1]``), length ``1 + 2*r*N``.  For ``N = 2``:
    ``w1 = [-0.2, -0.1, 0, 0.1, 0.2]``.

    Returns
    -------
    np.ndarray of float64, shape (1 + 2*order*window,)
        Taps for frame offsets ``-order*window .. +order*window``.
    """
    r = check_int(order, "order", minimum=0)
    n = check_int(window, "window", minimum=1)
    w1 = np.arange(-n, n + 1, dtype=np.float64) / float(np.sum(np.arange(-n, n + 1) ** 2))
    w = np.ones(1)
    for _ in range(r):
        w = np.convolve(w, w1)
    return w


def _kaldi_delta(x: np.ndarray, order: int, window: int, axis: int) -> np.ndarray:
    """``order``-th Kaldi delta along ``axis`` (edge frames replicated)."""
    taps = kaldi_delta_window(order, window)
    off = (taps.size - 1) // 2
    n = x.shape[axis]
    xm = np.moveaxis(x, axis, 0)
    idx = np.clip(np.arange(-off, n + off), 0, n - 1)
    padded = xm[idx].astype(np.float64)
    out = np.zeros(xm.shape, dtype=np.float64)
    for j, tap in enumerate(taps):
        if tap != 0.0:
            out += tap * padded[j : j + n]
    return np.moveaxis(out, 0, axis).astype(x.dtype, copy=False)


def delta(
    features: np.ndarray,
    *,
    order: int = 1,
    method: DeltaMethod = "kaldi",
    window: int = 2,
    width: int = 9,
    mode: str = "interp",
    axis: int = -1,
) -> np.ndarray:
    """The ``order``-th delta (time derivative) of features along the frames axis.

    * ``method="kaldi"``: Kaldi's ``DeltaFeatures`` (``add-deltas`` without the stacking):
      ``d[t] = sum_j w[j] * x[clamp(t + j)]`` with the window of :func:`kaldi_delta_window`
      (``window=2``: ``d1[t] = sum_{j=-2..2} j*x[t+j] / 10``; order 2 is the slope of the slope
      over ``+-4`` frames); frames beyond the ends repeat the first/last frame.
    * ``method="librosa"``: ``librosa.feature.delta(features, width, order, axis, mode)``:
      a Savitzky-Golay derivative (``scipy.signal.savgol_filter(x, width, polyorder=order,
      deriv=order, mode=mode)``); ``mode="interp"`` fits the edges by the window polynomial.

    Parameters
    ----------
    features : np.ndarray, shape (..., n_frames) for ``axis=-1``
    order : int >= 1
        Derivative order (1 = delta, 2 = delta-delta).
    method : {"kaldi", "librosa"}
    window : int >= 1
        Kaldi delta window ``N`` (``--delta-window``, 2); only for ``method="kaldi"``.
    width : odd int >= 3
        librosa window length in frames (9); with ``mode="interp"`` at most ``n_frames``.
    mode : str
        librosa / savgol edge mode ("interp", or "nearest", "mirror", "constant", "wrap").
    axis : int
        Frames axis (-1; 0 for a Kaldi frames x bins matrix).

    Returns
    -------
    np.ndarray
        Same shape as ``features``.
    """
    x = _as_features(features)
    ax = _check_axis(axis, x.ndim)
    r = check_int(order, "order", minimum=1)
    method = check_choice(method, "delta method", ("kaldi", "librosa"))
    if method == "kaldi":
        if x.shape[ax] == 0:
            return x.copy()
        return _kaldi_delta(x, r, check_int(window, "window", minimum=1), ax)
    w = check_int(width, "width", minimum=3)
    if w % 2 != 1:
        raise ParameterError(f"width must be an odd integer >= 3, got {width!r}")
    mode = check_choice(mode, "mode", ("interp", "nearest", "mirror", "constant", "wrap"))
    if mode == "interp" and w > x.shape[ax]:
        raise ParameterError(f"with mode='interp', width ({w}) cannot exceed the number of frames ({x.shape[ax]})")
    import scipy.signal  # imported when used (librosa's delta only)

    return scipy.signal.savgol_filter(x, w, polyorder=r, deriv=r, axis=ax, mode=mode)


def add_deltas(features: np.ndarray, *, order: int = 2, window: int = 2, axis: int = -1) -> np.ndarray:
    """Kaldi ``add-deltas``: the features followed by their deltas of order ``1 .. order``.

    Parameters
    ----------
    features : np.ndarray
        ``(dim, n_frames)`` with ``axis=-1``; Kaldi's ``(n_frames, dim)`` with ``axis=0``.
    order : int >= 0
        Highest delta order (``--delta-order``, 2).
    window : int >= 1
        ``--delta-window`` (2).

    Returns
    -------
    np.ndarray
        The blocks ``[x, d1, .., d_order]`` concatenated along the feature axis: ``((order+1)*dim,
        n_frames)`` for ``axis=-1``, ``(n_frames, (order+1)*dim)`` for ``axis=0`` (exactly
        Kaldi's column layout).  For more than 2 axes the blocks are concatenated along the
        last non-frames axis.
    """
    x = _as_features(features)
    if x.ndim < 2:
        raise ParameterError(f"features must be 2-D or more (frames and dims), got shape {x.shape}")
    ax = _check_axis(axis, x.ndim)
    r = check_int(order, "order", minimum=0)
    n = check_int(window, "window", minimum=1)
    feat_ax = x.ndim - 1 if ax != x.ndim - 1 else x.ndim - 2
    blocks = [x] + [_kaldi_delta(x, k, n, ax) if x.shape[ax] else x.copy() for k in range(1, r + 1)]
    return np.concatenate(blocks, axis=feat_ax)


# --------------------------------------------------------------------------------------------
# CMVN
# --------------------------------------------------------------------------------------------
def sliding_cmvn_window(
    n_frames: int, *, window: int = 600, center: bool = True, min_window: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """The frames ``[start[t], end[t])`` Kaldi's sliding CMVN averages for frame ``t``.

    Kaldi ``SlidingWindowCmnInternal``: centred, ``start = t - window//2``, ``end = start +
    window``; otherwise ``start = t - window``, ``end = t + 1``.  A window starting before 0 is
    shifted right; not centred, ``end`` is then ``max(t + 1, min_window)``; a window past the
    last frame is shifted left (and clipped at 0).

    Returns
    -------
    start, end : np.ndarray of int64, shape (n_frames,)
    """
    n = check_int(n_frames, "n_frames", minimum=0)
    win = check_int(window, "window", minimum=1)
    mw = check_int(min_window, "min_window", minimum=1)
    return _cmvn_windows(np.arange(n, dtype=np.int64), n, win, bool(center), mw)


def _cmvn_windows(t: np.ndarray, n: int | None, win: int, center: bool, mw: int) -> tuple[np.ndarray, np.ndarray]:
    """Kaldi's window bounds for frames ``t`` of ``n`` frames (``None``: end not known yet)."""
    if center:
        start = t - win // 2
        end = start + win
    else:
        start = t - win
        end = t + 1
    neg = start < 0
    end = np.where(neg, end - start, end)
    start = np.where(neg, 0, start)
    if not center:
        end = np.where(end > t, np.maximum(t + 1, mw), end)
    if n is not None:
        over = end > n
        start = np.where(over, np.maximum(start - (end - n), 0), start)
        end = np.where(over, n, end)
    return start, end


def _normalise(
    x: np.ndarray, s1: np.ndarray, s2: np.ndarray | None, count: np.ndarray, *, var_floor: float, zero_single: bool
) -> np.ndarray:
    """``(x - s1/count) / sqrt(max(s2/count - (s1/count)**2, floor))`` in float64 (time axis 0)."""
    mean = s1 / count
    out = x - mean
    if s2 is not None:
        var = s2 / count - mean * mean
        out *= np.maximum(var, var_floor) ** -0.5
        if zero_single:
            out[(count == 1).reshape(-1)] = 0.0
    return out


def cmvn(
    features: np.ndarray,
    *,
    mode: CmvnMode = "utterance",
    norm_vars: bool = False,
    window: int = 600,
    center: bool = True,
    min_window: int = 100,
    axis: int = -1,
) -> np.ndarray:
    """Cepstral mean (and variance) normalisation along the frames axis, as Kaldi.

    * ``mode="utterance"`` (Kaldi ``compute-cmvn-stats`` + ``apply-cmvn``, one utterance):
      ``x - mean``; with ``norm_vars``, ``(x - mean) / sqrt(var)``, ``var = E[x**2] - mean**2``
      floored at 1e-20.  Needs every frame first (the CLI makes two passes).
    * ``mode="sliding"`` (Kaldi ``apply-cmvn-sliding``): mean (and variance) over the window of
      :func:`sliding_cmvn_window` (``window`` 600 frames, ``center`` True, ``min_window`` 100
      used only when not centred); variance floored at 1e-10; a 1-frame window gives 0 with
      ``norm_vars``.  Kaldi's own default is ``--center=false``: pass ``center=False`` for it.

    Parameters
    ----------
    features : np.ndarray
        ``(dim, n_frames)`` for ``axis=-1``, ``(n_frames, dim)`` (Kaldi) for ``axis=0``.
    mode : {"utterance", "sliding"}
    norm_vars : bool
        Also divide by the standard deviation (False, as Kaldi).
    window, center, min_window
        Sliding window (frames), centring and Kaldi's minimum window (only ``mode="sliding"``).
    axis : int
        Frames axis.

    Returns
    -------
    np.ndarray
        Same shape; float32 stays float32 (computed in float64 as Kaldi), else float64.

    Raises
    ------
    ParameterError
        Bad mode / window values, or no frames with ``mode="utterance"`` (Kaldi: count < 1).
    """
    x = _as_features(features)
    ax = _check_axis(axis, x.ndim)
    mode = check_choice(mode, "cmvn mode", ("utterance", "sliding"))
    if not isinstance(norm_vars, (bool, np.bool_)) or not isinstance(center, (bool, np.bool_)):
        raise ParameterError("norm_vars and center must be True or False")
    xm = np.moveaxis(x, ax, 0).astype(np.float64)
    n = xm.shape[0]
    if mode == "utterance":
        if n == 0:
            raise ParameterError("utterance CMVN needs at least one frame")
        s1 = xm.sum(axis=0, keepdims=True)
        s2 = (xm * xm).sum(axis=0, keepdims=True) if norm_vars else None
        out = _normalise(xm, s1, s2, np.full((1,) * xm.ndim, float(n)), var_floor=1e-20, zero_single=False)
    else:
        start, end = sliding_cmvn_window(n, window=window, center=bool(center), min_window=min_window)
        flat = xm.reshape(n, -1)
        c1 = np.concatenate([np.zeros((1, flat.shape[1])), np.cumsum(flat, axis=0)])
        s1 = c1[end] - c1[start]
        s2 = None
        if norm_vars:
            c2 = np.concatenate([np.zeros((1, flat.shape[1])), np.cumsum(flat * flat, axis=0)])
            s2 = c2[end] - c2[start]
        count = (end - start).astype(np.float64)[:, None]
        out = _normalise(flat, s1, s2, count, var_floor=1e-10, zero_single=True).reshape(xm.shape)
    return np.moveaxis(out, 0, ax).astype(x.dtype, copy=False)


class SlidingCmvn:
    """:func:`cmvn` with ``mode="sliding"`` over blocks of frames, in bounded memory.

    Frame ``t``'s window is known once frame ``end[t] - 1`` has arrived (or at the end of the
    input, when windows near the end shift left); the stream keeps at most ``window`` past
    frames plus the frames still waiting (``window//2`` when centred).

    Parameters
    ----------
    window, center, min_window, norm_vars
        As :func:`cmvn`.
    axis : int
        Frames axis of the blocks passed to :meth:`accept` (-1 for ``(dim, k)`` blocks, 0 for
        Kaldi ``(k, dim)`` blocks).

    Notes
    -----
    ``accept(block)`` returns the normalised frames that became computable (possibly 0 of them),
    ``finish()`` the rest; their concatenation along ``axis`` equals ``cmvn(all, mode="sliding")``
    up to float64 rounding of the running sums.
    """

    def __init__(self, *, window: int = 600, center: bool = True, min_window: int = 100, norm_vars: bool = False, axis: int = -1):
        self.window = check_int(window, "window", minimum=1)
        self.min_window = check_int(min_window, "min_window", minimum=1)
        self.center = bool(center)
        self.norm_vars = bool(norm_vars)
        self.axis = check_int(axis, "axis")
        self._frames: np.ndarray | None = None  # (k, dim...) float64, absolute index _offset
        self._offset = 0
        self._received = 0
        self._next = 0
        self._dtype: np.dtype | None = None
        self._shape: tuple[int, ...] | None = None
        self._ndim = 0

    def _windows(self, first: int, last: int, n_total: int | None) -> tuple[np.ndarray, np.ndarray]:
        # windows of frames first..last-1 for a signal of n_total frames (None: not known yet)
        t = np.arange(first, last, dtype=np.int64)
        return _cmvn_windows(t, n_total, self.window, self.center, self.min_window)

    def _ready(self, n_total: int | None) -> int:
        """Frames whose window lies inside the frames received so far."""
        if n_total is not None:
            return n_total
        lo, hi = self._next, self._received
        if hi <= lo:
            return lo
        _, end = self._windows(lo, hi, None)
        ok = end <= self._received  # end[t] is non-decreasing in t
        return lo + int(np.count_nonzero(ok))

    def accept(self, block: np.ndarray) -> np.ndarray:
        """Add frames (frames along ``axis``); return the frames now normalised (same layout)."""
        x = _as_features(block, "block")
        ax = _check_axis(self.axis, x.ndim)
        xm = np.moveaxis(x, ax, 0)
        if self._shape is None:
            self._shape, self._dtype, self._ndim = xm.shape[1:], x.dtype, x.ndim
            self._frames = np.zeros((0,) + xm.shape[1:])
        elif xm.shape[1:] != self._shape:
            raise ParameterError(f"block feature shape {xm.shape[1:]} differs from the first block's {self._shape}")
        assert self._frames is not None
        self._frames = np.concatenate([self._frames, xm.astype(np.float64)])
        self._received += xm.shape[0]
        return self._emit(self._ready(None), None)

    def finish(self) -> np.ndarray:
        """No more frames: return the remaining normalised frames."""
        if self._shape is None:
            raise ParameterError("no frames were given to SlidingCmvn")
        return self._emit(self._received, self._received)

    def _emit(self, upto: int, n_total: int | None) -> np.ndarray:
        assert self._frames is not None and self._shape is not None
        first = self._next
        if upto > first:
            start, end = self._windows(first, upto, n_total)
            lo = int(start.min())
            rel = self._frames[lo - self._offset : int(end.max()) - self._offset]
            flat = rel.reshape(rel.shape[0], -1)
            c1 = np.concatenate([np.zeros((1, flat.shape[1])), np.cumsum(flat, axis=0)])
            s1 = c1[end - lo] - c1[start - lo]
            s2 = None
            if self.norm_vars:
                c2 = np.concatenate([np.zeros((1, flat.shape[1])), np.cumsum(flat * flat, axis=0)])
                s2 = c2[end - lo] - c2[start - lo]
            count = (end - start).astype(np.float64)[:, None]
            xs = self._frames[first - self._offset : upto - self._offset].reshape(upto - first, -1)
            out = _normalise(xs, s1, s2, count, var_floor=1e-10, zero_single=True).reshape((upto - first,) + self._shape)
            self._next = upto
        else:
            out = np.zeros((0,) + self._shape)
        # keep the frames any later window can start at: windows start >= next - window
        keep = max(self._offset, self._next - self.window - 1)
        if keep > self._offset:
            self._frames = self._frames[keep - self._offset :].copy()
            self._offset = keep
        ax = self.axis % self._ndim
        return np.moveaxis(out, 0, ax).astype(self._dtype, copy=False)


class DeltaStream:
    """Append deltas of order ``1 .. order`` to frames arriving in blocks ``(dim, k)``; output ``((order+1)*dim, k)``.

    Equal to ``concatenate([x] + [delta(x, order=r, method=...) for r in 1..order])`` over the whole input
    (:func:`audiokit.dsp.features.delta`): Kaldi ``add-deltas`` (``method="kaldi"``, ``window`` N; frames
    beyond the ends repeat the first/last) or ``librosa.feature.delta(width, order=r, mode="interp")``
    (``method="librosa"``).  A frame is emitted once the ``order*N`` (Kaldi) or ``width//2`` (librosa) frames
    after it have arrived, so memory holds a few frames of context.

    Parameters
    ----------
    order : int in {1, 2}
    method : {"kaldi", "librosa"}
    window : int >= 1
        Kaldi ``--delta-window``.
    width : odd int >= 3
        librosa ``width``; the input needs at least ``width`` frames.
    """

    def __init__(self, order: int, method: str, *, window: int = 2, width: int = 9):
        self.order = check_int(order, "order", minimum=1)
        self.method = check_choice(method, "delta method", get_args(DeltaMethod))
        self.window = check_int(window, "window", minimum=1)
        self.width = check_int(width, "width", minimum=3)
        if self.width % 2 != 1:
            raise ParameterError(f"--delta-width must be an odd integer >= 3, got {width!r}")
        self.context = self.order * self.window if self.method == "kaldi" else self.width // 2
        self._buf: np.ndarray | None = None  # (dim, k) frames from absolute index _start
        self._start = 0
        self._received = 0
        self._next = 0

    def accept(self, block: np.ndarray) -> np.ndarray:
        """Add frames ``(dim, k)``; return the frames now complete with their deltas ``((order+1)*dim, j)``."""
        block = np.asarray(block, dtype=np.float64)
        self._buf = block.copy() if self._buf is None else np.concatenate([self._buf, block], axis=1)
        self._received += block.shape[1]
        upto = self._received - self.context
        if self.method == "librosa" and self._next == 0 and self._received < self.width:
            upto = 0
        return self._emit(upto, final=False)

    def finish(self) -> np.ndarray:
        """No more frames: return the rest."""
        if self._buf is None:
            raise ParameterError("no frames reached the delta computation")
        if self.method == "librosa" and self._received < self.width:
            raise ParameterError(
                f"--delta-method librosa: width {self.width} needs at least {self.width} frames, the input has {self._received}"
            )
        return self._emit(self._received, final=True)

    def _emit(self, upto: int, *, final: bool) -> np.ndarray:
        assert self._buf is not None
        dim = self._buf.shape[0]
        if upto <= self._next:
            return np.zeros(((self.order + 1) * dim, 0))
        hi = self._received if final else min(self._received, upto + self.context)
        lo = max(0, self._next - self.context)
        if self.method == "librosa":
            lo = max(0, min(lo, hi - self.width))
        seg = self._buf[:, lo - self._start : hi - self._start]
        parts = [seg] + [
            delta(seg, order=r, method=self.method, window=self.window, width=self.width, axis=-1)
            for r in range(1, self.order + 1)
        ]
        out = np.concatenate(parts, axis=0)[:, self._next - lo : upto - lo]
        self._next = upto
        keep = max(0, min(upto - self.context, upto - self.width))
        if keep > self._start:
            self._buf = self._buf[:, keep - self._start :]
            self._start = keep
        return out

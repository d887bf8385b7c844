"""Remove the hum an analysis found: subtract its model, or erase its STFT bins; stream with :class:`HumRemover`.

* :class:`HumSubtractor` (``subtract``): ``y = x - h`` with ``h`` the model
  (:meth:`~audiokit.dsp.hum.model.HumAnalysis.model`), no delay.
* :class:`HumEraser` (``erase``): STFT, bins of the treated lines zeroed,
  weighted overlap-add; its output lags its input.
* :class:`HumRemover`: either of them behind one interface that yields
  ``(output, removed)`` blocks aligned with the input -- what
  :func:`~audiokit.dsp.hum.dehum` and the ``dehum`` pipeline stream.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Literal, get_args

import numpy as np

from ...errors import ParameterError
from ...validate import check_choice, check_int, check_real
from ..stft import IstftStream, StftPlan, StftStream
from ..stft.plan import chunk_frames_for
from .model import HumAnalysis, check_block

__all__ = [
    "ERASE_WINDOW_SECONDS",
    "METHODS",
    "HumEraser",
    "HumRemover",
    "HumSubtractor",
    "Method",
    "check_method",
]

Method = Literal["subtract", "erase"]
METHODS: tuple[str, ...] = get_args(Method)
"""Removal methods, default first."""

#: Default erase window (s).
ERASE_WINDOW_SECONDS = 1.0

_ERASE_MIN_PERIODS = 4  # the erase window holds at least this many periods of the fundamental
_ERASE_WIDTH_BINS = 4.0  # default erased band: the main lobe of the Hann window, 4 bins = 4·sr/W Hz
_ERASE_HOPS_PER_WINDOW = 4  # hop = W/4 (periodic Hann: constant overlap-add)
_ERASE_BATCH_FRAMES = 32  # STFT frames per FFT batch (1 s windows: 4 MB of float64 per buffer at 16 kHz)


def check_method(method: object, win_length: object = None, width_hz: object = None) -> str:
    """Return ``method`` when it is one of :data:`METHODS` and the erase parameters are given only with ``erase``.

    Raises
    ------
    ParameterError
        ``unknown method 'x'; allowed: subtract, erase``, or
        ``win_length and width_hz apply to method='erase' only``.
    """
    method = check_choice(method, "method", METHODS)
    if method != "erase" and (win_length is not None or width_hz is not None):
        raise ParameterError("win_length and width_hz apply to method='erase' only")
    return method


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
        block = check_block(block, self.analysis.channels)
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

    Raises
    ------
    ParameterError
        ``win_length`` not a whole number or shorter than 4 periods;
        ``width_hz`` not a number > 0.

    Notes
    -----
    Periodic Hann, hop ``W/4``, ``n_fft = W``, ``center=True`` (so every
    sample is rebuilt).  In frame ``m`` (centre ``t_m = m·hop/sr``) the bins
    ``i`` with ``|i·sr/W - k·f0(t_m)| <= width_hz/2 + k·|f0'(t_m)|·W/(2·sr)``
    are zeroed for every treated harmonic ``k``.  ``push(block)`` returns the
    output samples that are final so far (the overlap-add lags the input by
    up to ``W`` samples), ``finish()`` the rest; the output has
    ``analysis.n_samples`` samples and matches the one-shot result to float
    rounding (batched FFTs).  When no harmonic is treated the input is
    passed through unchanged (no STFT).
    """

    def __init__(self, analysis: HumAnalysis, *, win_length: int | None = None, width_hz: float | None = None):
        self.analysis = analysis
        sr = analysis.sr
        if win_length is None:
            win_length = int(round(ERASE_WINDOW_SECONDS * sr))
            win_length += win_length % 2
        win_length = check_int(win_length, "win_length", message="win_length must be a whole number of samples, got {value!r}")
        f0 = analysis.f_ref
        if win_length < _ERASE_MIN_PERIODS * sr / f0:
            raise ParameterError(
                f"the erase window must hold at least {_ERASE_MIN_PERIODS} periods of the fundamental "
                f"({_ERASE_MIN_PERIODS / f0:.3g} s = {int(math.ceil(_ERASE_MIN_PERIODS * sr / f0))} samples) "
                f"to resolve the hum lines; got {win_length} samples"
            )
        if width_hz is None:
            width_hz = _ERASE_WIDTH_BINS * sr / win_length
        self.win_length = win_length
        self.width_hz = check_real(
            width_hz, "width_hz", positive=True, message="width_hz must be a number of Hz > 0, got {value!r}"
        )
        hop = max(1, self.win_length // _ERASE_HOPS_PER_WINDOW)
        self.plan = StftPlan(sr=sr, win_length=self.win_length, hop_length=hop, window="hann", center=True)
        # FFT batches of at most _ERASE_BATCH_FRAMES frames (the default 256 frames of a 1 s window at 16 kHz are
        # 33 MB of float64 per buffer, several buffers each way): the same bytes (10 min at 16 kHz: 274 -> 186 MiB peak)
        chunk = chunk_frames_for(self.plan.n_fft, 8, _ERASE_BATCH_FRAMES)
        self._stft = StftStream(self.plan, chunk_frames=chunk)
        self._istft = IstftStream(self.plan, length=analysis.n_samples, chunk_frames=chunk)
        self._frame = 0

    def _erase(self, X: np.ndarray) -> np.ndarray:
        """Zero the line bins of STFT frames ``X`` ``(channels, n_freqs, nm)`` in place; return ``X``."""
        a = self.analysis
        n_frames = X.shape[-1]
        if n_frames == 0 or not a.found:
            return X
        m = self._frame + np.arange(n_frames)
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
                for j in range(n_frames):
                    X[c, lo[j] : hi[j], j] = 0
        return X

    def push(self, block: np.ndarray) -> np.ndarray:
        """Feed samples ``(channels, n)``; return the finished output samples ``(channels, n_out)``, float64."""
        block = check_block(block, self.analysis.channels).astype(np.float64)
        if not self.analysis.found:
            return block
        X = self._stft.push(block)
        X = self._erase(X)
        self._frame += X.shape[-1]
        return self._istft.push(X)

    def finish(self) -> np.ndarray:
        """End of input: return the remaining output samples ``(channels, n_out)``, float64."""
        if not self.analysis.found:
            return np.zeros((self.analysis.channels, 0))
        X = self._erase(self._stft.finish())
        self._frame += X.shape[-1]
        head = self._istft.push(X)
        return np.concatenate([head, self._istft.finish()], axis=-1)


class HumRemover:
    """Remove the hum of an analysis from a stream of blocks: ``(output, removed)``, aligned with the input.

    Parameters
    ----------
    analysis : HumAnalysis
    method : {'subtract', 'erase'}
        :class:`HumSubtractor` (default) or :class:`HumEraser`.
    win_length : int, optional
        ``erase`` only: STFT window in samples (default 1 s).
    width_hz : float > 0, optional
        ``erase`` only: erased band per line (Hz, default ``4·sr/win_length``).

    Raises
    ------
    ParameterError
        Unknown ``method``; ``win_length``/``width_hz`` with ``subtract``;
        bad erase parameters (the messages of :class:`HumEraser`).  All at
        construction, before any sample is read.

    Notes
    -----
    :meth:`run` hides the erase method's delay: it keeps the input until the
    overlap-add has produced the matching output, so every yielded pair
    covers the same samples.  It may be called again for another pass over
    the same signal (the streaming state is fresh each time).
    """

    def __init__(
        self, analysis: HumAnalysis, method: str = "subtract", *, win_length: int | None = None, width_hz: float | None = None
    ):
        self.analysis = analysis
        self.method = check_method(method, win_length, width_hz)
        self._win_length, self._width_hz = win_length, width_hz
        self._eraser = HumEraser(analysis, win_length=win_length, width_hz=width_hz) if self.method == "erase" else None
        self._unused = True  # the eraser built here serves the first run

    @property
    def eraser(self) -> HumEraser | None:
        """The :class:`HumEraser` settings (``win_length``, ``width_hz``, ``plan``) with ``erase``, else None."""
        return self._eraser

    def run(self, blocks: Iterable[np.ndarray]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(output, removed)`` float64 blocks shaped ``(channels, n)``, aligned with the input, covering it exactly.

        Parameters
        ----------
        blocks : iterable of np.ndarray, shape (channels, n_i)
            Consecutive blocks of the signal; with ``erase`` they must add up
            to ``analysis.n_samples`` (``subtract`` takes any length).

        Yields
        ------
        output : np.ndarray, shape (channels, n), float64
            The signal without the treated hum.
        removed : np.ndarray, shape (channels, n), float64
            ``input - output`` for the same samples (computed in float64).

        Notes
        -----
        With ``subtract`` each pair covers one input block; with ``erase`` the
        pairs follow the overlap-add, whose boundaries differ from the
        input's.  Empty pieces are not yielded.  The output does not depend on
        the block sizes (``erase``: up to FFT rounding).
        """
        if self._eraser is None:
            yield from self._subtract(blocks)
        else:
            yield from self._erase(blocks)

    def _subtract(self, blocks: Iterable[np.ndarray]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        sub = HumSubtractor(self.analysis)
        for block in blocks:
            x = check_block(block, self.analysis.channels).astype(np.float64, copy=False)
            if x.shape[1]:
                y = sub.process(x)
                yield y, x - y

    def _erase(self, blocks: Iterable[np.ndarray]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        eraser = self._eraser if self._unused else HumEraser(self.analysis, win_length=self._win_length, width_hz=self._width_hz)
        self._unused = False
        assert eraser is not None
        n_samples = self.analysis.n_samples
        pending: deque[np.ndarray] = deque()  # input not yet matched by output
        seen = 0
        for block in blocks:
            x = check_block(block, self.analysis.channels).astype(np.float64, copy=False)
            if not x.shape[1]:
                continue
            seen += x.shape[1]
            if seen > n_samples:
                raise ParameterError(f"erase: the blocks hold more than the analysed {n_samples} samples")
            pending.append(x)
            y = eraser.push(x)
            if y.shape[1]:
                yield y, _take(pending, y.shape[1]) - y
        if not seen:
            return
        if seen != n_samples:
            raise ParameterError(f"erase: the blocks hold {seen} samples, the analysis {n_samples}")
        y = eraser.finish()
        if y.shape[1]:
            yield y, _take(pending, y.shape[1]) - y


def _take(pending: deque[np.ndarray], n: int) -> np.ndarray:
    """Remove the first ``n`` samples from the queued blocks and return them ``(channels, n)``."""
    parts = []
    while n:
        head = pending[0]
        if head.shape[1] <= n:
            parts.append(pending.popleft())
            n -= head.shape[1]
        else:
            parts.append(head[:, :n])
            pending[0] = head[:, n:]
            n = 0
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)

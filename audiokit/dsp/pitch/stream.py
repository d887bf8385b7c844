"""YIN/pYIN over a stream of sample blocks, with the results of the whole-signal functions.

:class:`PitchTracker` keeps the samples of the frames not yet analysed (under ``frame_length + block`` samples),
analyses every completed frame through the same functions as :func:`~.yin.yin` / :func:`~.pyin.pyin`
(:data:`~.yin.BLOCK_FRAMES` at a time) and, for pYIN, decodes online (:class:`~.viterbi.OnlineViterbi`).  The
framing is ``center=True`` with zero padding: ``frame_length // 2`` zeros before the first sample and after the last.
Memory: the pending samples, one block of frames' analysis (``BLOCK_FRAMES x 2 n_pitch_bins`` floats, ~20 MB), the
decoder's undecided frames (one byte per state and frame, at most ``max_lag + max_lag // 8`` frames: 36 MiB by
default), and the per-frame results (17 bytes a frame: 1 MiB per 16 min at a 16 ms hop, 15 MB for 4 h).  The result
is the whole-signal functions' unless the decoder's lag bound was reached with its survivors still disagreeing
(then a warning names the frames; :class:`~.viterbi.OnlineViterbi`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ...errors import ParameterError
from .difference import cmnd, frame_signal, parabolic_shifts
from .pyin import PyinModel
from .viterbi import OnlineViterbi
from .yin import BLOCK_FRAMES, yin_and_flags

__all__ = ["PitchTracker"]

Method = Literal["pyin", "yin"]


class PitchTracker:
    """Push mono blocks, get f0 per frame at the end.

    Parameters
    ----------
    model : PyinModel
        Geometry (and, for pYIN, the observation model and transitions).
    method : {"pyin", "yin"}
    trough_threshold : float
        YIN's absolute threshold (``method="yin"``).
    unvoiced_bins : bool
        pYIN: track the unvoiced frames' pitch bins too (needed for ``finish(fill_na=None)``; without, all-unvoiced
        stretches such as silence are final at once).
    max_lag : int or None
        pYIN: the decoder's lag bound in frames (:class:`~.viterbi.OnlineViterbi`; None: 32 MiB of backpointers).
    """

    def __init__(
        self,
        model: PyinModel,
        method: Method = "pyin",
        *,
        trough_threshold: float = 0.1,
        unvoiced_bins: bool = False,
        max_lag: int | None = None,
    ):
        if method not in ("pyin", "yin"):
            raise ParameterError(f"method {method!r} is not one of: pyin, yin")
        self.model, self.method, self.threshold = model, method, trough_threshold
        g = model.geometry
        self._pending = np.zeros(g.frame_length // 2)
        self._dtype: np.dtype | None = None
        self._decoder = OnlineViterbi(model.band, unvoiced_bins=unvoiced_bins, max_lag=max_lag) if method == "pyin" else None
        self._f0: list[np.ndarray] = []
        self._prob: list[np.ndarray] = []
        self._states: list[np.ndarray] = []
        self.n_samples = 0

    def push(self, block: np.ndarray) -> None:
        """Feed the next samples, shape ``(n,)``, float32 or float64 (the first block fixes the precision)."""
        block = np.asarray(block)
        if block.ndim != 1 or not np.issubdtype(block.dtype, np.floating):
            raise ParameterError("PitchTracker.push takes a 1-D floating-point block")
        if self._dtype is None:
            self._dtype = block.dtype
            self._pending = self._pending.astype(block.dtype)
        self.n_samples += block.size
        self._pending = np.concatenate([self._pending, block.astype(self._dtype, copy=False)])
        self._analyse()

    def _analyse(self) -> None:
        g = self.model.geometry
        if self._pending.size < g.frame_length:
            return
        frames = frame_signal(self._pending, g.frame_length, g.hop_length)
        for start in range(0, frames.shape[0], BLOCK_FRAMES):
            chunk = frames[start : start + BLOCK_FRAMES]
            if self._decoder is None:
                rows = cmnd(chunk, g)
                f0, periodic = yin_and_flags(rows, parabolic_shifts(rows), g, self.threshold)
                self._f0.append(f0)
                self._prob.append(periodic.astype(np.float64))
            else:
                obs, prob = self.model.observe(chunk)
                self._decoder.push(obs)
                self._prob.append(prob)
                self._states.append(self._decoder.take())
        self._pending = self._pending[frames.shape[0] * g.hop_length :].copy()

    def finish(self, fill_na: float | None = np.nan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """End of input: ``(f0, voiced_flag, voiced_prob)`` of every frame.  YIN gives an f0 on every frame (never
        ``fill_na``); its flag (and "probability", 0 or 1) says whether a trough was below the threshold.

        Raises
        ------
        ParameterError
            The input was too short for one frame (fewer than ``frame_length - 2 (frame_length // 2)`` samples), or
            ``fill_na=None`` for pYIN without ``unvoiced_bins``.
        """
        g = self.model.geometry
        if fill_na is None and self._decoder is not None and not self._decoder.unvoiced_bins:
            raise ParameterError("PitchTracker.finish(fill_na=None) needs PitchTracker(..., unvoiced_bins=True)")
        if self._dtype is None:
            self._dtype = np.dtype(np.float64)
        self._pending = np.concatenate([self._pending, np.zeros(g.frame_length // 2, dtype=self._dtype)])
        self._analyse()
        if self._decoder is None:
            f0 = np.concatenate(self._f0) if self._f0 else np.zeros(0)
            if f0.size == 0:
                raise ParameterError(f"input is too short (n={self.n_samples}) for frame_length={g.frame_length}")
            periodic = np.concatenate(self._prob)
            return f0, periodic > 0, periodic
        self._states.append(self._decoder.finish())
        self._decoder.warn_guessed(g.hop_length / g.sr)
        states = np.concatenate(self._states)
        if states.size == 0:
            raise ParameterError(f"input is too short (n={self.n_samples}) for frame_length={g.frame_length}")
        f0, flag = self.model.states_to_f0(states, fill_na)
        return f0, flag, np.concatenate(self._prob)

    @property
    def pending_frames(self) -> int:
        """Frames the decoder holds undecided (since its last convergence point, at most ``max_lag + max_lag // 8``)."""
        return 0 if self._decoder is None else len(self._decoder.pending)

    @property
    def guessed_frames(self) -> int:
        """pYIN frames the lag bound decided while the survivors disagreed (0: the whole-signal decoding's result)."""
        return 0 if self._decoder is None else self._decoder.n_guessed

    @property
    def guessed(self) -> list[tuple[int, int]]:
        """The inclusive frame spans of those decisions (every frame outside them is the whole-signal result)."""
        return [] if self._decoder is None else list(self._decoder.guessed)

"""Silence detection on frame levels, streamed block by block: the silent spans of a signal.

The signal is cut into frames of ``frame`` samples (``m·frame … (m+1)·frame - 1``; the last frame may be
shorter).  A frame's level is the mean square of each channel over the frame, the loudest channel's:
``L_m = 10·log10(max_c mean(x_c²))`` dBFS, and the frame is silent when ``L_m < threshold``.  With ``frame = 1``
this is ffmpeg ``silencedetect``'s per-sample definition, ``max_c |x_c| < 10**(threshold/20)`` (a sample of any
channel at or above that amplitude ends a silence).

From the maximal runs of silent frames (sample spans ``[start, end)``):

1. sound shorter than ``min_speech`` samples between two runs, before the first or after the last, is taken as
   silence (a click in a pause does not end it);
2. runs (so joined) shorter than ``min_silence`` samples are taken as sound;
3. every remaining silence gives ``hangover`` samples back to the sound on each side it touches (the start and
   the end of the file are not sound); a silence that this consumes disappears.

:class:`SilenceTracker` does steps 1-2 as the blocks come (memory: the silences found, one partial frame) and
step 3 at :meth:`SilenceTracker.finish`; :class:`PeakFrameLevel` finds the loudest frame, for a threshold
relative to it.  :func:`complement` gives the spans of sound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PeakFrameLevel", "SilenceTracker", "Span", "complement"]


@dataclass(frozen=True)
class Span:
    """The samples ``[start, end)``; ``length = end - start``."""

    start: int
    end: int

    @property
    def length(self) -> int:
        """``end - start`` (samples)."""
        return self.end - self.start


class _Framer:
    """Cuts a stream of blocks ``(channels, n)`` into frames: the loudest channel's mean square per complete frame."""

    def __init__(self, frame: int):
        if frame < 1:
            raise ValueError(f"frame ({frame}) must be >= 1")
        self.frame = int(frame)
        self.count = 0  # samples seen
        self.framed = 0  # samples in complete frames returned so far
        self._carry: np.ndarray | None = None

    def powers(self, block: np.ndarray) -> np.ndarray:
        """``max_c mean(x_c²)`` of each frame completed by ``block`` (those frames start at sample ``framed``
        before the call)."""
        self.count += block.shape[1]
        x = block if self._carry is None else np.concatenate((self._carry, block), axis=1)
        whole = x.shape[1] // self.frame * self.frame
        self._carry = x[:, whole:].copy() if whole < x.shape[1] else None
        self.framed += whole
        if not whole:
            return np.zeros(0)
        if self.frame == 1:
            return np.square(x, dtype=np.float64).max(axis=0)
        frames = x[:, :whole].reshape(x.shape[0], -1, self.frame)
        return (np.einsum("cmf,cmf->cm", frames, frames, dtype=np.float64) / self.frame).max(axis=0)

    def last(self) -> np.ndarray:
        """The partial last frame's power (mean over the samples it has), or nothing."""
        if self._carry is None:
            return np.zeros(0)
        tail = self._carry.astype(np.float64)
        self._carry = None
        self.framed = self.count
        return np.mean(tail * tail, axis=1).max(keepdims=True)


def _db(power: float) -> float:
    """``10·log10(power)`` dBFS, ``-inf`` for 0."""
    return 10.0 * math.log10(power) if power > 0 else -math.inf


class PeakFrameLevel:
    """The loudest frame's level (dBFS) of a stream of blocks: the reference of a relative threshold."""

    def __init__(self, frame: int):
        self._framer = _Framer(frame)
        self.peak = 0.0

    def update(self, block: np.ndarray) -> None:
        """Add a block ``(channels, n)``."""
        powers = self._framer.powers(block)
        if powers.size:
            self.peak = max(self.peak, float(powers.max()))

    @property
    def level_db(self) -> float:
        """``10·log10`` of the largest frame power so far, partial last frame included (``-inf`` for silence)."""
        tail = self._framer.last()
        if tail.size:
            self.peak = max(self.peak, float(tail[0]))
        return _db(self.peak)


class SilenceTracker:
    """The silences of a stream of blocks (module docstring), found as the blocks come.

    Parameters
    ----------
    frame : int >= 1
        Samples per frame (1: per-sample amplitude, ffmpeg ``silencedetect``'s definition).
    threshold_db : float
        A frame is silent when its level is below this (dBFS).
    min_silence : int >= 1
        Shortest silence kept (samples).
    min_speech : int >= 0
        Shorter sound between silences (or at the edges) is silence (samples).
    hangover : int >= 0
        Samples of each silence given back to the sound it touches.
    """

    def __init__(self, frame: int, threshold_db: float, *, min_silence: int, min_speech: int = 0, hangover: int = 0):
        self._framer = _Framer(frame)
        self.threshold = 10.0 ** (threshold_db / 10.0)  # power: level < T dB  <=>  power < 10**(T/10)
        self.min_silence, self.min_speech, self.hangover = max(int(min_silence), 1), int(min_speech), int(hangover)
        self.silences: list[Span] = []
        self._pending = (0, 0)  # the last (joined) silence, which the next run may still join; (0, 0): none yet
        self._open: int | None = None  # start of a silent run still going at the end of the last block

    def update(self, block: np.ndarray) -> None:
        """Add a block ``(channels, n)`` of float samples (full scale 1.0)."""
        first = self._framer.framed
        self._runs(self._framer.powers(block), first)

    def _runs(self, powers: np.ndarray, first: int) -> None:
        if powers.size == 0:
            return
        frame = self._framer.frame
        silent = powers < self.threshold
        edges = np.flatnonzero(np.diff(silent.astype(np.int8), prepend=np.int8(0), append=np.int8(0)))
        starts, ends = first + edges[0::2] * frame, first + edges[1::2] * frame
        if self._open is not None and silent[0]:
            starts[0] = self._open
        elif self._open is not None:  # the open run ended exactly at the block boundary
            starts, ends = np.concatenate(([self._open], starts)), np.concatenate(([first], ends))
        self._open = None
        if silent[-1]:  # the last run may go on in the next block
            self._open = int(starts[-1])
            starts, ends = starts[:-1], ends[:-1]
        self._join(starts, ends)

    def _join(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Steps 1-2 on finished runs: join across sound shorter than min_speech; keep joined runs >= min_silence."""
        if starts.size == 0:
            return
        all_starts = np.concatenate(([self._pending[0]], starts))
        all_ends = np.concatenate(([self._pending[1]], ends))
        new = np.concatenate(([True], all_starts[1:] - all_ends[:-1] >= self.min_speech))
        heads = np.flatnonzero(new)
        group_starts = all_starts[heads]
        group_ends = all_ends[np.concatenate((heads[1:] - 1, [all_ends.size - 1]))]
        self._pending = (int(group_starts[-1]), int(group_ends[-1]))
        done = group_ends[:-1] - group_starts[:-1] >= self.min_silence
        self.silences.extend(Span(int(s), int(e)) for s, e in zip(group_starts[:-1][done], group_ends[:-1][done], strict=True))

    def finish(self) -> list[Span]:
        """The silences of the whole stream (steps 1-3), sorted; ``n_samples`` is the samples seen."""
        n = self._framer.count
        first = self._framer.framed
        self._runs(self._framer.last(), first)
        if self._open is not None:
            self._join(np.array([self._open]), np.array([n]))
            self._open = None
        self._join(np.array([n]), np.array([n]))  # the end of the file: sound shorter than min_speech before it joins
        if self._pending[1] - self._pending[0] >= self.min_silence:
            self.silences.append(Span(*self._pending))
        self._pending = (n, n)
        out = []
        for span in self.silences:
            start = span.start + (self.hangover if span.start > 0 else 0)
            end = span.end - (self.hangover if span.end < n else 0)
            if end > start:
                out.append(Span(start, end))
        return out

    @property
    def n_samples(self) -> int:
        """Samples seen."""
        return self._framer.count


def complement(spans: list[Span], n_samples: int) -> list[Span]:
    """The spans of ``[0, n_samples)`` not covered by the sorted, disjoint ``spans`` (the sound between silences)."""
    out, at = [], 0
    for span in spans:
        if span.start > at:
            out.append(Span(at, span.start))
        at = span.end
    if at < n_samples:
        out.append(Span(at, n_samples))
    return out

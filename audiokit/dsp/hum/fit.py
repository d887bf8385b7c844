"""Steps 4-7 of the hum analysis, on the frame arrays (no pass over the signal).

Each step takes the :class:`~audiokit.dsp.hum.state.AnalysisState` that passes 1-3 filled
(:mod:`audiokit.dsp.hum.analysis`) and adds its fields:

* :func:`refine_phase` -- ``ψ`` corrected from the phase residuals of all harmonics;
* :func:`choose_spans` -- span of the amplitude average per harmonic, by cross-validation;
* :func:`average_amplitudes` -- robust average of the amplitudes and the variance the noise alone would give it;
* :func:`detect` -- which harmonics are treated.

The rows (channel, harmonic) are independent but for the phase refinement,
which sums over them; they are handled :data:`_ROW_CHUNK` at a time, and for
a long signal (more than 512 frames) a few rows of a chunk at a time
(:func:`~audiokit.dsp.hum.spill.row_pieces`: at most 512 KiB of complex frames
each; the maths is row by row, and the refinement's sums over a chunk add its
rows in the order one ``np.sum(axis=0)`` does), so that the temporaries stay
small however long the signal.  The frame arrays may live in a temporary file
(:mod:`~audiokit.dsp.hum.spill`); each piece releases their pages.  The
numbers do not depend on either.
"""

from __future__ import annotations

import math

import numpy as np

from .model import SHORT_FRAME_SECONDS, power_db
from .smoothing import (
    BANDED_MAX_FRAMES,
    convolve_frames,
    hann_kernel,
    kernel_smooth,
    overlap_factor,
    robust_average,
    sandwich_variance,
)
from .spill import frame_array, release, row_pieces, split_rows
from .state import AnalysisState
from .track import hann_positive, odd

__all__ = ["REFINE_SPAN", "SPANS", "average_amplitudes", "choose_spans", "detect", "do_no_harm", "refine_phase"]

#: Candidate spans (s) of the amplitude average, chosen per harmonic.
SPANS = (2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: Span of the average used while refining the phase track (s).
REFINE_SPAN = 8.0

_REFINE_ROUNDS = 3
_REFINE_LIMIT = 0.02  # cycles per round
_REFINE_SLOPE = 0.02  # Hz per round
_PILOT_ROUNDS = 3  # reweighting rounds of the pilot average whose residuals weight the span cross-validation
_ROBUST_ROUNDS = 6  # reweighting rounds of the amplitude average itself
_PRECISION_FLOOR = 1e-9  # lowest line power measured, relative to the signal's mean power
_GAP_RELIEF_DB = 3.0  # detection threshold relief for a harmonic between two treated ones
_SPAN_TOLERANCE = 1.3  # a span this much worse than the best in cross-validation is still preferred if longer
_LOW_HARMONICS = 3  # hum shows its fundamental, or at least _MIN_SERIES harmonics with one among the first three
_MIN_SERIES = 2
_NOTE_MIN_MULTIPLE = 3  # treated harmonics above the fundamental all multiples of this or more: a note's series
_NOTE_EXCESS_DB = 12.0  # ... or all even and this much louder than the fundamental (median power, dB)
_ROW_CHUNK = 16  # (channel, harmonic) rows processed together: bounds the temporaries
_HARM_MIN_SPAN = 4.0  # s: the do-no-harm prediction spans at least this, so that frames beyond the overlap remain


def _none() -> np.ndarray:
    return np.zeros(0)


def _chunks(s: AnalysisState) -> list[slice]:
    """The rows in slices of :data:`_ROW_CHUNK`."""
    n = s.channels * len(s.harmonics)
    return [slice(i, min(i + _ROW_CHUNK, n)) for i in range(0, n, _ROW_CHUNK)]


def _pieces(rows: slice, m: int, m_bytes: int | None = None) -> list[slice]:
    """``rows`` a few at a time when the signal has more than 512 frames ``m`` (sized by ``m_bytes`` frames), else whole.

    Up to :data:`~audiokit.dsp.hum.smoothing.BANDED_MAX_FRAMES` frames the
    kernel averages are one banded matrix product over the rows, whose
    rounding could depend on how many rows it gets: those stay whole.
    """
    return row_pieces(rows, m if m_bytes is None else m_bytes, whole=m <= BANDED_MAX_FRAMES)


def _add_rows(acc: np.ndarray, x: np.ndarray) -> None:
    """``acc += x[0]; acc += x[1]; ...``: the order in which ``np.sum(x, axis=0)`` adds the rows."""
    for row in x:
        acc += row


def refine_phase(s: AnalysisState) -> None:
    """Correct ``ψ`` from the phase residuals of all harmonics, :data:`_REFINE_ROUNDS` times.

    ``Δψ[m] = Σ w·k·∠(v_k·conj(v̄_k)) / (2π Σ w·k²)`` with ``w = |v̄_k|²/r_k``
    (``v̄_k``: :data:`REFINE_SPAN` average); each round may shift the phase
    by at most :data:`_REFINE_LIMIT` cycles and bend the frequency by at most
    :data:`_REFINE_SLOPE` Hz.  Sets ``rot``, ``rr``, ``rot_short``,
    ``rr_short`` (the measurements as rows, turned by the correction) and
    ``psi``.
    """
    tiny = np.finfo(float).tiny
    m, m2, times = s.v.shape[-1], s.v_short.shape[-1], s.times
    n = s.channels * len(s.harmonics)
    # the measurements become the rows in place (no copy: a long signal holds them once)
    rot, rot2 = s.v.reshape(n, m), s.v_short.reshape(n, m2)
    rr, rr2 = s.r.reshape(n, m), s.r_short.reshape(n, m2)
    s.v, s.r, s.v_short, s.r_short = _none(), _none(), _none(), _none()
    kk = np.tile(s.harmonics.astype(float), s.channels)[:, None]
    chunks = _chunks(s)
    pieces = [_pieces(c, m, m2) for c in chunks]
    for p in (p for cut in pieces for p in cut):
        np.maximum(rr[p], tiny, out=rr[p])
        np.maximum(rr2[p], tiny, out=rr2[p])
        release(rr, rr2)
    psi = s.psi.copy()
    ker = hann_kernel(REFINE_SPAN / s.hop_s)
    for _ in range(_REFINE_ROUNDS):
        num, den = np.zeros(m), np.zeros(m)
        for cut in pieces:
            part_num, part_den = np.zeros(m), np.zeros(m)  # the chunk's sums over its rows
            for p in cut:
                mean, _ = kernel_smooth(rot[p], 1.0 / rr[p], ker)
                w = (mean.real**2 + mean.imag**2) / rr[p]
                _add_rows(part_num, w * kk[p] * np.angle(rot[p] * np.conj(mean)))
                _add_rows(part_den, w * kk[p] ** 2)
                release(rot, rr)
            num += part_num
            den += part_den
        dpsi = np.where(den > 0, num / np.maximum(den, tiny), 0.0) / (2 * np.pi)
        # a correction, not a new track: each round may shift the phase by at most
        # _REFINE_LIMIT cycles and bend the frequency by at most _REFINE_SLOPE Hz
        steps = np.clip(np.diff(dpsi), -_REFINE_SLOPE * np.diff(times), _REFINE_SLOPE * np.diff(times))
        dpsi = np.clip(dpsi[:1], -_REFINE_LIMIT, _REFINE_LIMIT) + np.concatenate([[0.0], np.cumsum(steps)])
        psi += dpsi
        turn2 = np.interp(s.times_short, times, dpsi)
        for p in (p for cut in pieces for p in cut):  # elementwise, as one product would: the same numbers
            rot2[p] *= np.exp(-2j * np.pi * kk[p] * turn2)
            release(rot2)
        for p in (p for cut in pieces for p in cut):
            rot[p] *= np.exp(-2j * np.pi * kk[p] * dpsi)
            release(rot)
    s.rot, s.rr, s.rot_short, s.rr_short, s.psi = rot, rr, rot2, rr2, psi


def choose_spans(s: AnalysisState) -> None:
    """Span of the amplitude average per row, by cross-validation over the 1 s frames.

    Each frame is predicted by the :data:`SPANS` averages of the frames that
    share at most half its window, weighted by ``1/(r + |v - v̄|²)`` (``v̄``:
    pilot average over :data:`REFINE_SPAN`); the longest span whose mean
    squared prediction error is within :data:`_SPAN_TOLERANCE` of the best
    is chosen (the hum is stationary; the scores are noisy).  Sets ``choice``.
    """
    tiny = np.finfo(float).tiny
    exclude = int(np.ceil(s.length / s.hop / 2.0))  # frames sharing over half their window
    ker = hann_kernel(REFINE_SPAN / s.hop_s)
    choice = np.zeros(s.rot.shape[0], np.int64)
    m = s.rot.shape[-1]
    for p in (p for c in _chunks(s) for p in _pieces(c, m)):
        y, rc = s.rot[p], s.rr[p]
        mean0, _ = robust_average(y, rc, ker, rounds=_PILOT_ROUNDS)
        w0 = 1.0 / (rc + np.abs(y - mean0) ** 2)
        scores = []
        for span in SPANS:
            pred, den = kernel_smooth(y, w0, hann_kernel(span / s.hop_s, exclude=exclude))
            ok = den > 0
            err = np.where(ok, w0 * np.abs(y - pred) ** 2, 0.0).sum(-1)
            tot = np.where(ok, w0, 0.0).sum(-1)
            scores.append(np.where(tot > 0, err / np.maximum(tot, tiny), np.inf))
        sc = np.stack(scores)
        # the hum is stationary: the longest span whose score is within _SPAN_TOLERANCE of the best
        ok_span = sc <= sc.min(axis=0) * _SPAN_TOLERANCE
        choice[p] = len(SPANS) - 1 - np.argmax(ok_span[::-1], axis=0)
        release(s.rot, s.rr)
    s.choice = choice


def average_amplitudes(s: AnalysisState) -> None:
    """Robust average of each row over its span, and the variance the noise alone would give it.

    ``A = Σ ker·w·v / Σ ker·w`` with ``w = 1/(r + |v - A|²)``
    (:data:`_ROBUST_ROUNDS` reweightings).  The same average over the short
    frames replaces it (interpolated to the 1 s frame times) where its spread
    (``κ·Σ ker² w² |v - A|² / (Σ ker w)²``, ``κ`` the overlap factor of the
    frames) is the smaller: a steady partial beside a line leaks into short
    frames and shows there as a large residual.  Sets ``amplitudes``,
    ``power = mean_m |A|²`` (of the 1 s average) and
    ``noise = mean_m κ·Σ ker² w² r / (Σ ker w)²``.
    """
    tiny = np.finfo(float).tiny
    rot, rr, rot2, rr2 = s.rot, s.rr, s.rot_short, s.rr_short
    m, times, hop_s = rot.shape[-1], s.times, s.hop_s
    hop2_s = s.hop_short / s.rate
    kappa = overlap_factor(hann_positive(s.length), s.hop)
    # the short frames' window and hop, computed from the 1 s hop as they always were: bit for bit
    # the short framer's, but for sample rates where 0.5·rate is an exact half-integer (e.g. 203 Hz)
    kappa2 = overlap_factor(
        hann_positive(max(1, odd(int(round(SHORT_FRAME_SECONDS * s.hop / hop_s))))), max(1, int(round(s.hop * hop2_s / hop_s)))
    )
    power, noise = np.zeros(rot.shape[0]), np.zeros(rot.shape[0])
    amps = frame_array(rot.shape, rot.dtype)
    weights = frame_array(rot.shape, float)
    for c in (p for chunk in _chunks(s) for p in _pieces(chunk, m, rot2.shape[-1])):
        pick = s.choice[c]
        rows = np.arange(c.start, c.stop)
        for i, span in enumerate(SPANS):
            sel = rows[pick == i]
            if not sel.size:
                continue
            kx = hann_kernel(span / hop_s)
            mean, w = robust_average(rot[sel], rr[sel], kx, rounds=_ROBUST_ROUNDS)
            amps[sel] = mean
            weights[sel] = w
            if rot2.shape[-1] >= 2 and m >= 1:
                kx2 = hann_kernel(span / hop2_s)
                mean2, w2 = robust_average(rot2[sel], rr2[sel], kx2, rounds=_ROBUST_ROUNDS)
                s1 = kappa * np.mean(sandwich_variance(rot[sel], mean, w, kx), axis=-1)
                s2 = kappa2 * np.mean(sandwich_variance(rot2[sel], mean2, w2, kx2), axis=-1)
                use = s2 < s1
                if use.any():
                    mi = np.array([np.interp(times, s.times_short, z) for z in mean2[use].real]) + 1j * np.array(
                        [np.interp(times, s.times_short, z) for z in mean2[use].imag]
                    )
                    amps[sel[use]] = mi
            den = convolve_frames(w, kx)
            var = convolve_frames(w**2 * rr[sel], kx**2)
            power[sel] = np.mean(mean.real**2 + mean.imag**2, axis=-1)
            noise[sel] = np.mean(kappa * var / np.maximum(den, tiny) ** 2, axis=-1)
        release(rot, rr, rot2, rr2, amps, weights)
    s.amplitudes, s.power, s.noise, s.weights = amps, power, noise, weights
    s.rot_short, s.rr_short = _none(), _none()  # no later step reads the short frames


def detect(s: AnalysisState) -> None:
    """Which harmonics (per channel) are treated.  Sets ``snr_db`` and ``treated``.

    ``snr_db = 10·log10(power / noise)``, the noise floored at
    :data:`_PRECISION_FLOOR` times the channel's mean power; treated when
    ``snr_db >= threshold_db``, or ``threshold_db - 3 dB`` between two
    treated neighbours (:data:`_GAP_RELIEF_DB`); and only in a channel that
    shows its fundamental, or at least two treated harmonics of which one is
    among the first three (a held note's partials can sit on ``k·f0`` far up;
    :func:`_plausible`).
    """
    tiny = np.finfo(float).tiny
    n_k = len(s.harmonics)
    # the demodulation runs in float32: its rounding, some 100 dB under the signal, is not
    # white and does not average out, so nothing that far down counts as a line
    noise = np.maximum(s.noise, _PRECISION_FLOOR * np.repeat(np.asarray(s.signal_power, float), n_k))
    snr = np.where(s.power > 0, power_db(s.power / np.maximum(noise, tiny)), -np.inf).reshape(s.channels, n_k)
    treated = snr >= s.threshold_db
    # a gap in a detected series: a harmonic whose two neighbours are treated needs less
    if n_k >= 3:
        gap = np.zeros_like(treated)
        gap[:, 1:-1] = treated[:, :-2] & treated[:, 2:]
        treated |= gap & (snr >= s.threshold_db - _GAP_RELIEF_DB)
    s.snr_db, s.detected, s.treated = snr, treated, _plausible(treated, s.power.reshape(s.channels, n_k))


def _plausible(treated: np.ndarray, power: np.ndarray | None = None) -> np.ndarray:
    """``treated`` (C, K) with the channels that do not look like hum cleared.

    A held note's partials can sit on ``k·f0``: hum shows its fundamental, or
    at least :data:`_MIN_SERIES` harmonics of which one is among the first
    :data:`_LOW_HARMONICS` and which are not all multiples of one ``m >= 2``
    (2, 4, 6, ...: the series of a note near ``m·f0``; a buzz at ``m·f0``
    is removed with ``freq = m·f0``).  With the fundamental, harmonics above
    it that are all multiples of one ``m >= 3`` (4, 8, 12), or even and
    :data:`_NOTE_EXCESS_DB` louder than the fundamental (median of their
    ``power``, shape (C, K)), are a note's series too, and only the
    fundamental stays.
    """
    treated = treated.copy()
    low = treated[:, : min(_LOW_HARMONICS, treated.shape[1])].any(axis=1)
    plausible = treated[:, 0] | ((treated.sum(axis=1) >= _MIN_SERIES) & low)
    # without the fundamental, a series of multiples of m >= 2 (2, 4, 6, ...) is the series of a
    # note at m·f0 (or a buzz, whose fundamental --freq can name): not this mains hum
    for c in np.flatnonzero(plausible & ~treated[:, 0]):
        if math.gcd(*(int(k) for k in np.flatnonzero(treated[c]) + 1)) >= 2:
            plausible[c] = False
    treated[~plausible] = False
    # with the fundamental, the harmonics above it all multiples of m >= 3 (4, 8, 12, ...), or of 2
    # and far louder than the fundamental, are a note at m·f0 that the track followed: only the
    # fundamental is hum
    for c in np.flatnonzero(treated[:, 0]):
        upper = np.flatnonzero(treated[c, 1:]) + 2
        if upper.size < _MIN_SERIES:
            continue
        m = math.gcd(*(int(k) for k in upper))
        louder = power is not None and np.median(power[c, upper - 1]) > power[c, 0] * 10 ** (_NOTE_EXCESS_DB / 10)
        if m >= _NOTE_MIN_MULTIPLE or (m == 2 and louder):
            treated[c, 1:] = False
    return treated


def do_no_harm(s: AnalysisState) -> None:
    """Drop the treatment of a harmonic that would not lower the hum-coherent level at its line.

    For every treated row the amplitude ``v[m]`` of each 1 s frame is
    predicted from the frames that share no sample with it: ``p[m]``, the
    robust weights ``w`` of the amplitude average under a Hann kernel over
    the chosen span (at least :data:`_HARM_MIN_SPAN`).  The level at the
    line before is ``Σ w·|v|²``, after subtracting the prediction
    ``Σ w·|v - p|²`` (frames with a prediction).  A line that is really
    hum -- steady, locked to the tracked phase -- is predicted by the other
    frames and comes down; a line where the "hum" is speech, a note beside
    it, or a phase track that follows something else is not, and
    subtracting a model of it would only add that model's error.  Such a
    harmonic is not treated; a channel left without a plausible series (see
    :func:`detect`) is not treated at all; and when most of the detected
    harmonics that steered the drift track are dropped, the track followed
    something else (a note's partials) and nothing is treated.  Sets ``treated`` and
    ``harmless`` (detected but dropped here), both (C, K).
    """
    n_k = len(s.harmonics)
    treated = s.treated.reshape(-1).copy()
    exclude = int(np.ceil(s.length / s.hop))  # frames closer than this share samples
    rows = np.flatnonzero(treated)
    if rows.size:
        spans = np.maximum(np.asarray(SPANS)[s.choice[rows]], _HARM_MIN_SPAN)
        m = s.rot.shape[-1]
        for span in np.unique(spans):
            for sel in split_rows(rows[spans == span], m, whole=m <= BANDED_MAX_FRAMES):
                y, w = s.rot[sel], s.weights[sel]
                pred, den = kernel_smooth(y, w, hann_kernel(span / s.hop_s, exclude=exclude))
                use = np.where(den > 0, w, 0.0)
                before = np.sum(use * (y.real**2 + y.imag**2), axis=-1)
                e = y - pred
                after = np.sum(use * (e.real**2 + e.imag**2), axis=-1)
                treated[sel] = after < before
                release(s.rot, s.weights)
    kept = _plausible(treated.reshape(s.channels, n_k), s.power.reshape(s.channels, n_k) if s.power.size else None)
    # the lines that steered the drift track are hum if the track is: when most of those detected
    # are dropped here, the track followed something else (a note's series) and nothing is hum
    steer = np.zeros(n_k, bool)
    steer[np.asarray(s.tracked, np.int64) - 1] = True
    detected = s.detected & steer
    if detected.any() and np.sum(detected & ~kept) > np.sum(detected & kept):
        kept[:] = False
    s.harmless = s.treated & ~kept
    s.treated = kept

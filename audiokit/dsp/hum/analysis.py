"""Measure the hum: :func:`analyze_hum` (in memory) and :func:`analyze_hum_blocks` (block by block).

The analysis is a sequence of named steps passing one
:class:`~audiokit.dsp.hum.state.AnalysisState` (the method is told in :mod:`audiokit.dsp.hum`):

1. :func:`_estimate_f0` -- pass 1: long-term spectrum, harmonic-sum search of
   the reference frequency ``f_ref`` (choosing 50 or 60 Hz with ``auto``);
2. :func:`_track_drift` -- pass 2: per-frame offset of the fundamental from the
   prominent harmonics, integrated into the phase deviation ``ψ``;
3. :func:`_measure_lines` -- pass 3: complex amplitude and noise floor of every
   harmonic in every 1 s and 0.5 s frame, along the tracked phase;
4. :func:`~audiokit.dsp.hum.fit.refine_phase` -- ``ψ`` corrected from the
   phase residuals of all harmonics;
5. :func:`~audiokit.dsp.hum.fit.choose_spans` -- span of the amplitude
   average per harmonic, by cross-validation;
6. :func:`~audiokit.dsp.hum.fit.average_amplitudes` -- robust average of the
   amplitudes over the chosen span (1 s or 0.5 s frames, whichever spreads
   less) and its noise variance;
7. :func:`~audiokit.dsp.hum.fit.detect` -- which harmonics are treated.

Steps 1-3 read the signal (``blocks()`` is called once by each); steps 4-7
work on the frame arrays only (:mod:`audiokit.dsp.hum.fit`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator

import numpy as np
from numpy.typing import ArrayLike

from ...errors import ParameterError
from ...validate import check_int
from .fit import SPANS, average_amplitudes, choose_spans, detect, do_no_harm, refine_phase
from .model import FRAME_SECONDS, HOP_SECONDS, SHORT_FRAME_SECONDS, SHORT_HOP_SECONDS, HumAnalysis, PhaseSpline, power_db
from .spill import frame_array, release, row_pieces
from .state import AUTO_NOMINALS, MAX_HARMONICS, NOMINAL_TOLERANCE, NYQUIST_MARGIN_HZ, AnalysisState, search_window
from .track import (
    FUNDAMENTAL_STEP_HZ,
    PROBE_FRACTIONS,
    PROMINENCE_DB,
    Demodulator,
    Framer,
    GroupedFrames,
    LongTermSpectrum,
    decimation_factor,
    find_fundamental,
    frame_geometry,
    frame_hop,
    frame_length,
    frame_times,
    n_decimated,
    project,
    search_offsets,
)

__all__ = [
    "AUTO_NOMINALS",
    "BLOCK_SIZE",
    "DEFAULT_THRESHOLD_DB",
    "MAX_HARMONICS",
    "MIN_SECONDS",
    "NOMINAL_TOLERANCE",
    "NYQUIST_MARGIN_HZ",
    "analyze_hum",
    "analyze_hum_blocks",
    "as_2d",
]

#: Detection threshold: amplitude power over its noise-only variance (dB).
DEFAULT_THRESHOLD_DB = 8.0
#: Shortest signal analysed (s); shorter input is passed through with a warning.
MIN_SECONDS = 0.5
#: Samples per block of the in-memory entry points (the analysis does not depend on it).
BLOCK_SIZE = 1 << 16

_FMAX_MARGIN_HZ = 5.0  # the long-term spectrum reaches this far above the highest harmonic (Hz)
_MAX_TRACKED = 12  # at most this many harmonics (the most prominent) steer the drift search
_SEARCH_WIDENING = 0.5  # the drift search reaches this fraction of the window's width beyond it
_EDGE_STEPS = 2  # f0 this many search steps from the window's edge may be the flank of a line outside it ...
_OUTSIDE_RATIO = 2.0  # ... when a series outside the window scores this many times as much
_OUTSIDE_SERIES = 2  # ... and has at least this many harmonics PROMINENCE_DB above their surroundings
_HINT_SCORE_DB = 20.0  # harmonic-sum score (dB) of a series at the other mains frequency worth a hint
# warnings are raised in a step: stacklevel counts the step, analyze_hum_blocks, its caller
# (analyze_hum, the CLI) and the caller's caller (user code calling analyze_hum)
_STACKLEVEL = 4


# ----------------------------------------------------------------------------- the input


def as_2d(x: ArrayLike) -> tuple[np.ndarray, bool]:
    """``x`` as ``(channels, n)`` float samples and whether it was 1-D; ParameterError for other shapes, NaN, Inf."""
    x = np.asarray(x)
    if x.ndim not in (1, 2) or not np.issubdtype(x.dtype, np.floating):
        raise ParameterError(f"x must be a float array shaped (n,) or (channels, n), got {x.dtype} {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ParameterError("x contains NaN or Inf samples")
    return (x[None, :], True) if x.ndim == 1 else (x, False)


# ----------------------------------------------------------------------------- entry points


def analyze_hum(
    x: np.ndarray,
    *,
    sr: int,
    freq: float | None = None,
    harmonics: int | None = None,
    threshold_db: float = DEFAULT_THRESHOLD_DB,
    block_size: int = BLOCK_SIZE,
) -> HumAnalysis:
    """Measure the mains hum of a signal held in memory.

    Parameters
    ----------
    x : np.ndarray, shape (n,) or (channels, n), float
        Samples, full scale ±1.
    sr : int > 0
        Sample rate (Hz).
    freq : float or None
        Nominal fundamental (Hz): the estimate is searched within ±1 % of it.
        None: try 50 and 60 Hz (:data:`AUTO_NOMINALS`) and keep the better.
    harmonics : int >= 1 or None
        Highest harmonic considered (default :data:`MAX_HARMONICS`), capped
        :data:`NYQUIST_MARGIN_HZ` below the Nyquist frequency.  Only the
        harmonics that pass the detection are treated.
    threshold_db : float
        Detection threshold (dB; see :mod:`audiokit.dsp.hum`).
    block_size : int >= 1
        Samples per block of the passes (the result does not depend on it).

    Returns
    -------
    HumAnalysis

    Raises
    ------
    ParameterError
        Bad ``x``, ``sr``, ``freq``, ``harmonics`` or ``threshold_db``.

    Warns
    -----
    UserWarning
        Input shorter than :data:`MIN_SECONDS`, no harmonic below the Nyquist
        frequency, ``harmonics`` above it, or no hum found.
    """
    x2, _ = as_2d(x)
    block_size = check_int(block_size, "block_size", minimum=1)
    n = x2.shape[1]

    def blocks() -> Iterator[np.ndarray]:
        for i in range(0, n, block_size):
            yield x2[:, i : i + block_size]

    return analyze_hum_blocks(
        blocks, sr=sr, channels=x2.shape[0], n_samples=n, freq=freq, harmonics=harmonics, threshold_db=threshold_db
    )


def analyze_hum_blocks(
    blocks: Callable[[], Iterable[np.ndarray]],
    *,
    sr: int,
    channels: int,
    n_samples: int,
    freq: float | None = None,
    harmonics: int | None = None,
    threshold_db: float = DEFAULT_THRESHOLD_DB,
) -> HumAnalysis:
    """Measure the mains hum of a signal read block by block (three passes).

    Parameters
    ----------
    blocks : callable
        ``blocks()`` returns a fresh iterable of consecutive blocks shaped
        ``(channels, n_i)`` covering the whole signal; it is called three
        times.
    sr, freq, harmonics, threshold_db
        As :func:`analyze_hum`.
    channels : int >= 1
    n_samples : int >= 0
        Total length (samples per channel); the blocks must add up to it.

    Returns
    -------
    HumAnalysis
    """
    state = AnalysisState.checked(sr, channels, n_samples, freq, harmonics, threshold_db)
    if not _measurable(state) or not _estimate_f0(state, blocks):
        return state.empty()
    _track_drift(state, blocks)
    if _tracked_outside(state):
        _flank_warning(state)
        return state.empty()
    _measure_lines(state, blocks)
    refine_phase(state)
    choose_spans(state)
    average_amplitudes(state)
    detect(state)
    do_no_harm(state)
    return _result(state)


# ----------------------------------------------------------------------------- the steps


def _measurable(s: AnalysisState) -> bool:
    """Some harmonic lies below the Nyquist frequency and the signal is long enough (else warn)."""
    lo, hi = s.search
    if max(s.highest_harmonic(w[2]) for w in s.windows) < 1:
        warnings.warn(
            f"no harmonic of {lo:g}..{hi:g} Hz lies below the Nyquist frequency {s.sr / 2:g} Hz: nothing to remove",
            stacklevel=_STACKLEVEL,
        )
        return False
    if s.n_samples < MIN_SECONDS * s.sr:
        warnings.warn(
            f"the signal lasts {s.n_samples / s.sr:.3g} s, too short to measure hum (< {MIN_SECONDS:g} s): nothing removed",
            stacklevel=_STACKLEVEL,
        )
        return False
    return True


def _estimate_f0(s: AnalysisState, blocks: Callable[[], Iterable[np.ndarray]]) -> bool:
    """Pass 1: long-term spectrum, then the reference frequency (the best-scoring window when auto).

    Sets ``nominal``, ``search``, ``f_ref``, ``prominence``, ``harmonics`` and
    the frame grid; False (with a warning) when the signal is silent.
    """
    sr = s.sr
    fmax_all = min(sr / 2.0, max(s.highest_harmonic(w[2]) * w[2] for w in s.windows) + _FMAX_MARGIN_HZ)
    lts = LongTermSpectrum(sr=sr, n_samples=s.n_samples, fmax=fmax_all)
    for block in blocks():
        lts.push(block)
    power = lts.finish()
    if not np.any(power > 0):
        warnings.warn("the signal is silent: no hum to remove", stacklevel=_STACKLEVEL)
        return False
    s.lts, s.lts_df = power, lts.df
    best = None
    for nom, w_lo, w_hi in s.windows:
        k_w = s.highest_harmonic(w_hi)
        if k_w < 1:
            continue
        f_w = min(sr / 2.0, k_w * w_hi + _FMAX_MARGIN_HZ)
        found = find_fundamental(power, lts.df, lo=w_lo, hi=w_hi, kmax=k_w, fmax=f_w)
        if _line_outside(s, found[0], found[1], lo=w_lo, hi=w_hi, kmax=k_w):
            continue  # the window holds only the flank of a line beyond its edge
        if best is None or found[1] > best[1][1]:
            best = ((nom, w_lo, w_hi, k_w), found)
    if best is None:
        _flank_warning(s)
        return False
    (s.nominal, lo, hi, kmax), (s.f_ref, s.score, s.prominence) = best
    s.search = (lo, hi)
    if s.harmonics_given and s.kmax_req > kmax:
        warnings.warn(
            f"harmonics above {kmax} would reach the Nyquist frequency {sr / 2:g} Hz; considering 1..{kmax}",
            stacklevel=_STACKLEVEL,
        )
    s.harmonics = np.arange(1, kmax + 1)
    s.decim = decimation_factor(sr)
    s.rate = sr / s.decim
    s.length = frame_length(FRAME_SECONDS, s.rate)
    s.hop = frame_hop(HOP_SECONDS, s.rate)
    return True


def _line_outside(s: AnalysisState, f0: float, score: float, *, lo: float, hi: float, kmax: int) -> bool:
    """True when ``f0`` (Hz) sits at an edge of ``[lo, hi]`` only as the flank of a stronger series outside.

    ``f0`` within :data:`_EDGE_STEPS` candidate steps of an edge (or
    beyond it) and the search repeated over the window widened by its width
    on each side finding a much higher-scoring fundamental outside the window:
    tracking the window would follow the flank of the line outside.  The
    series outside must have :data:`_OUTSIDE_SERIES` prominent harmonics
    and score :data:`_OUTSIDE_RATIO` times as much: music
    partials near the lines make a crowded spectrum in which the best of a
    wider search is often only a little better.
    """
    edge = _EDGE_STEPS * FUNDAMENTAL_STEP_HZ
    if lo + edge < f0 < hi - edge:
        return False
    width = hi - lo
    fmax = min(s.sr / 2.0, kmax * hi + _FMAX_MARGIN_HZ)
    wide = find_fundamental(s.lts, s.lts_df, lo=max(lo - width, FUNDAMENTAL_STEP_HZ), hi=hi + width, kmax=kmax, fmax=fmax)
    series = int(np.sum(wide[2] >= PROMINENCE_DB))  # a lone tone that happens to sit on k·f is no hum outside
    return not lo <= wide[0] <= hi and wide[1] >= _OUTSIDE_RATIO * score and series >= _OUTSIDE_SERIES


def _flank_warning(s: AnalysisState) -> None:
    lo, hi = s.search
    where = "near 50 or 60 Hz" if s.auto else f"near {s.nominal:g} Hz"
    warnings.warn(
        f"no hum found {where}: the search window {lo:g}..{hi:g} Hz (±{100 * NOMINAL_TOLERANCE:g} %) holds only "
        f"the flank of lines outside it: nothing removed{_hint(s)}",
        stacklevel=_STACKLEVEL + 1,
    )


def _hint(s: AnalysisState) -> str:
    """``"; a strong line at 50.0 Hz: try --freq 50"`` when another mains frequency shows hum, else ``""``."""
    if s.auto or not s.lts.size:
        return ""
    best = None
    for nominal in AUTO_NOMINALS:
        lo, hi = search_window(nominal)
        if lo <= s.nominal <= hi:
            continue
        kmax = s.highest_harmonic(hi)
        if kmax < 1:
            continue
        fmax = min(s.sr / 2.0, kmax * hi + _FMAX_MARGIN_HZ)
        f0, score, _ = find_fundamental(s.lts, s.lts_df, lo=lo, hi=hi, kmax=kmax, fmax=fmax)
        if score >= _HINT_SCORE_DB and (best is None or score > best[2]):
            best = (nominal, f0, score)
    if best is None:
        return ""
    return f"; a strong line at {best[1]:.1f} Hz: try --freq {best[0]:g}"


def _framer(s: AnalysisState) -> Framer:
    return Framer(n_samples=n_decimated(s.n_samples, s.decim), length=s.length, hop=s.hop)


def _track_drift(s: AnalysisState, blocks: Callable[[], Iterable[np.ndarray]]) -> None:
    """Pass 2: offset of the fundamental per 1 s frame from the harmonics that stand out, integrated into ``ψ``.

    Sets ``tracked``, ``times`` and ``psi``: ``ψ[m] = Σ_{i<m} (δ_i + δ_{i+1})/2 · (t_{i+1} - t_i)``
    (trapezoids, cycles).
    """
    sr, lo, hi, prom = s.sr, s.search[0], s.search[1], s.prominence
    strong = np.flatnonzero(prom >= PROMINENCE_DB)
    strong = strong[np.argsort(-prom[strong])][:_MAX_TRACKED]
    s.tracked = track_k = np.sort(s.harmonics[strong])
    framer = _framer(s)
    times = frame_times(framer, s.decim, sr)
    delta = np.zeros(framer.n_frames)
    if track_k.size:
        margin = _SEARCH_WIDENING * (hi - lo) / 2.0
        # weights: line-to-floor power ratio minus 1, divided by k: an offset δ moves harmonic k by k·δ,
        # so a high harmonic reaches a note's partial a few hertz away with a small δ (music at -20 dB
        # HSR: remaining hum -10.0 -> -25.4 dB at 16 kHz, 50 Hz; bench_dehum)
        weights = (10.0 ** (prom[track_k - 1] / 10.0) - 1.0) / track_k.astype(float)
        step = s.f_ref / sr
        dem = Demodulator(harmonics=track_k, channels=s.channels, decim=s.decim, phase=lambda n: n * step)
        offsets = (lo - margin - s.f_ref, hi + margin - s.f_ref)
        for block in blocks():
            frames, data = framer.push(dem.push(block))
            if frames.size:
                g, _, _, _ = frame_geometry(framer, frames, s.decim, sr)
                delta[frames] = search_offsets(data, g, track_k, weights, rate=s.rate, offsets=offsets)
        # a frame whose best fit lies outside the window is following something else (a note
        # beside a line): its offset is interpolated from the frames that stay inside
        inside = (s.f_ref + delta >= lo) & (s.f_ref + delta <= hi)
        if inside.any():
            delta = np.interp(times, times[inside], delta[inside])
        else:
            delta = np.clip(delta, lo - s.f_ref, hi - s.f_ref)
    psi = np.zeros(len(times))
    if len(times) > 1:
        psi[1:] = np.cumsum(0.5 * (delta[1:] + delta[:-1]) * np.diff(times))
    s.times, s.psi = times, psi


def _tracked_outside(s: AnalysisState) -> bool:
    """The drift track's mean frequency sits at an edge of the search window, on the flank of a series outside it."""
    if len(s.times) < 2:
        return False
    mean_f0 = s.f_ref + (s.psi[-1] - s.psi[0]) / (s.times[-1] - s.times[0])
    return _line_outside(s, mean_f0, s.score, lo=s.search[0], hi=s.search[1], kmax=len(s.harmonics))


def _measure_lines(s: AnalysisState, blocks: Callable[[], Iterable[np.ndarray]]) -> None:
    """Pass 3: amplitude and floor of every harmonic along the tracked phase, in 1 s and 0.5 s frames.

    Sets ``v``, ``r`` (1 s frames), ``v_short``, ``r_short``, ``times_short``,
    ``hop_short`` (0.5 s frames: speech at a line comes and goes within a
    second) and ``signal_power``; the floor is read at
    ``±(0.12, 0.16, 0.20, 0.24)·f_ref`` from each line.
    """
    sr, decim, channels, kmax = s.sr, s.decim, s.channels, len(s.harmonics)
    spline = PhaseSpline(s.times, s.psi)
    step = s.f_ref / sr

    def framers() -> list[Framer]:
        long = _framer(s)
        short_length, short_hop = frame_length(SHORT_FRAME_SECONDS, s.rate), frame_hop(SHORT_HOP_SECONDS, s.rate)
        return [long, Framer(n_samples=long.n_samples, length=short_length, hop=short_hop)]

    # the channels of a wide signal a group at a time (track.channel_groups): the same numbers, smaller temporaries
    grouped = GroupedFrames(
        channels=channels, harmonics=s.harmonics, decim=decim, phase=lambda n: n * step + spline(n / sr), framers=framers
    )
    framer, short = grouped.framers[0]
    probes = s.f_ref * np.array([sign * p for p in PROBE_FRACTIONS for sign in (1.0, -1.0)])
    times2 = frame_times(short, decim, sr)
    # (channels, K, frames) each: in a temporary file when large (spill.frame_array), its pages dropped after each block
    v = [frame_array((channels, kmax, f.n_frames), complex) for f in (framer, short)]
    r = [frame_array((channels, kmax, f.n_frames), float) for f in (framer, short)]
    energy = np.zeros(channels)
    for block in blocks():
        block = np.asarray(block)
        energy += np.einsum("cn,cn->c", block, block, dtype=np.float64) if block.size else 0.0
        for grp, i, fr, frames, data in grouped.push(block):
            if frames.size:
                g, norm, _, tau = frame_geometry(fr, frames, decim, sr)
                v[i][grp, :, frames], r[i][grp, :, frames] = project(data, g, norm, tau, probes)
        release(*v, *r)
    s.v, s.r, s.v_short, s.r_short, s.times_short, s.hop_short = v[0], r[0], v[1], r[1], times2, short.hop
    # per row, a few rows at a time: each row's mean is its own pairwise sum (the numbers of one call)
    m = framer.n_frames
    level, floor = np.zeros(channels * kmax), np.zeros(channels * kmax)
    rows_v, rows_r = v[0].reshape(channels * kmax, m), r[0].reshape(channels * kmax, m)
    for p in row_pieces(slice(0, channels * kmax), m):
        level[p], floor[p] = np.mean(np.abs(rows_v[p]) ** 2, axis=-1), np.mean(rows_r[p], axis=-1)
        release(v[0], r[0])
    s.level_db, s.floor_db = power_db(level.reshape(channels, kmax)), power_db(floor.reshape(channels, kmax))
    s.signal_power = energy / max(s.n_samples, 1)


def _result(s: AnalysisState) -> HumAnalysis:
    """The :class:`HumAnalysis` of the state; warns when no harmonic is treated."""
    channels, n_k, m = s.channels, len(s.harmonics), s.rot.shape[-1]
    analysis = HumAnalysis(
        sr=s.sr,
        channels=channels,
        n_samples=s.n_samples,
        nominal=s.nominal,
        auto=s.auto,
        search=s.search,
        f_ref=float(s.f_ref),
        harmonics=s.harmonics.astype(np.int64),
        times=s.times,
        psi=s.psi,
        amplitudes=s.amplitudes.reshape(channels, n_k, m),
        treated=s.treated,
        level_db=s.level_db,
        floor_db=s.floor_db,
        snr_db=s.snr_db,
        span_s=np.asarray(SPANS)[s.choice].reshape(channels, n_k),
        tracked=tuple(int(k) for k in s.tracked),
        threshold_db=s.threshold_db,
        dropped=s.harmless,
        weights=s.weights.reshape(channels, n_k, m),
        frames=s.rot.reshape(channels, n_k, m),
        noise=s.noise.reshape(channels, n_k),
    )
    if not analysis.found:
        where = "near 50 or 60 Hz" if s.auto else f"near {s.nominal:g} Hz"
        if s.harmless.any():
            ks = ", ".join(str(int(k)) for k in s.harmonics[s.harmless.any(axis=0)])
            why = f"harmonics {ks} stand out but do not behave like steady hum (removing them would not lower them)"
        else:
            why = f"no harmonic {s.threshold_db:g} dB above its noise"
        warnings.warn(f"no hum found {where} ({why}): nothing removed{_hint(s)}", stacklevel=_STACKLEVEL)
    return analysis

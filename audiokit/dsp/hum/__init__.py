r"""Mains hum: measure it, then remove it by model subtraction or by erasing STFT bins.

Model
-----
Mains hum is a sum of harmonics of one fundamental ``f0(t)`` (nominally 50 or
60 Hz) that drifts slowly (a few hundredths of a hertz per second on a power
grid)::

    h[n] = Σ_k  Re( A_k(t) · exp(2πi·k·Φ[n]) ),   Φ[n] = f_ref·n/sr + ψ(n/sr)   (cycles)

``Φ`` is the phase of the fundamental: a fixed reference frequency ``f_ref``
plus a smooth deviation ``ψ(t)`` (cycles, ``f0(t) = f_ref + ψ'(t)``).  Every
harmonic follows ``k·Φ`` exactly; its complex amplitude ``A_k(t)`` (peak
amplitude and phase) varies slowly.

Analysis (:func:`analyze_hum`; three passes over the signal)
------------------------------------------------------------
1. **Fundamental.**  A Welch average of the power spectrum (Hann segments of
   ``clip(duration/2, 1 s, 4 s)``, channels summed) is searched for the
   fundamental ``f_ref`` that maximises the harmonic sum
   ``Σ_k clip(prom(k·f) - 6 dB, 0, 30 dB)``, ``prom`` being the level over the
   median within ±10 Hz (:func:`audiokit.dsp.hum.track.find_fundamental`);
   candidates every 5 mHz in ``nominal ± 1 %`` (``freq=50`` searches
   49.5..50.5 Hz), then a parabola.  ``freq=None`` (auto) searches both mains
   windows, 50 ± 1 % and 60 ± 1 % Hz, and keeps the one with the larger
   harmonic sum.  Capping each harmonic's vote keeps one strong music partial
   near a line from pulling the estimate; keeping the fundamental within
   ± 1 % of a nominal value keeps held notes (G1 = 49.0 Hz, a 102 Hz note
   seen as the 2nd harmonic of 51 Hz) from being taken for hum.
2. **Drift.**  Every harmonic whose long-term prominence exceeds 6 dB is
   shifted to 0 Hz at ``k·f_ref`` and decimated to about 200 Hz
   (:class:`~audiokit.dsp.hum.track.Demodulator`).  In frames of
   :data:`FRAME_SECONDS` (Hann, hop :data:`HOP_SECONDS`) the offset ``δ`` of
   the fundamental maximising the weighted harmonic energy
   ``Σ_k w_k |Σ_j g_j d_k[j] e^{-2πi kδτ_j}|²`` is searched over the search
   window widened by half its width (weights ``w_k`` = long-term
   line-to-floor power ratio minus 1, divided by ``k``: a small ``δ`` moves
   a high harmonic onto a note's partial a few hertz away); a frame whose best fit falls outside
   the window is following something else (a note beside a line) and gets
   the offset interpolated from its neighbours; ``ψ`` is
   its integral over the frame times (trapezoids), a natural cubic spline in
   between and a straight line beyond the first and last frame.
3. **Amplitudes.**  All harmonics ``k = 1 .. K`` are demodulated along the
   tracked ``Φ`` and projected per frame: ``v_k[m]`` (complex peak amplitude)
   and the noise floor ``r_k[m]`` beside the line (median power of the same
   projection at ``±(0.12, 0.16, 0.20, 0.24)·f0`` from it).  Then, on these
   small arrays:

   * ``ψ`` is refined three times from the phase residuals of all harmonics,
     ``Δψ[m] = Σ w·k·∠(v_k·conj(v̄_k)) / (2π Σ w·k²)`` with ``w = |v̄_k|²/r_k``
     (``v̄_k``: 8-second average; each round may bend the frequency by at most
     0.02 Hz, so a partial beside a line cannot drag the track away) -- a
     phase detector is far more precise than a frequency search;
   * ``A_k`` is a robust, noise-weighted Hann-kernel average of ``v_k`` over a
     *span* chosen per harmonic among :data:`SPANS` by cross-validation
     (prediction error of each frame from frames that do not overlap it):
     weights ``1/(r + |v - v̄|²)``, six reweighting rounds, so frames where
     speech or music crosses the line count less.  The span is the longest
     whose score is within 30 % of the best (the hum is stationary; the
     scores of a few seconds of frames are noisy).  The same average is also
     taken over 0.5 s frames (:data:`SHORT_FRAME_SECONDS`, hop 1/8 s, projected
     in the same pass): speech at a line comes and goes within a second, and
     the short frames let the weights find the gaps.  It replaces the 1 s
     average (interpolated to the 1 s frame times) when its spread, estimated
     from the residuals (``Σ ker² w² |v - v̄|² / (Σ ker w)²`` times the overlap
     factor), is the smaller: a steady partial 2 Hz from a line, which the 1 s
     Hann frame nulls but a 0.5 s frame lets through, shows there as a large
     residual and keeps the 1 s estimate;
   * **detection**: a harmonic (per channel) is treated when the power of
     ``A_k`` exceeds the variance that the floor alone would give it (noise
     averaged by the same kernel, overlap of the frames included) by
     ``threshold_db`` (default :data:`DEFAULT_THRESHOLD_DB`), and the
     channel shows its fundamental, or at least two harmonics of which one is
     among the first three and which are not all multiples of one ``m >= 2``
     (hum always has a strong low line; partials of a held note that happen
     to sit on ``k·f0`` far up, or a note near ``2·f0`` whose partials are
     the even harmonics, are not hum).  A gap in a
     detected series -- a harmonic whose two neighbours are treated -- needs
     3 dB less (:data:`_GAP_RELIEF_DB`);
   * **do no harm**: a detected harmonic stays treated only if a prediction
     of each 1 s frame from the frames that share no sample with it (the
     same weighted average) lowers the line, ``Σ w|v - p|² < Σ w|v|²``: a
     steady line locked to the tracked phase is predicted, speech or a phase
     track following something else is not
     (:func:`~audiokit.dsp.hum.fit.do_no_harm`; such harmonics are
     :attr:`HumAnalysis.dropped`).  Untreated
     harmonics are left exactly as they are, so a clean signal passes through
     untouched.

The search window
-----------------
``freq`` given: the fundamental is searched within ``freq ± 1 %`` only.  When
the window's best (or the drift track's mean) sits at its edge and a search
widened by the window's width finds a series outside scoring twice as much,
the window holds only the flank of a line outside it: nothing is treated and
a warning says so.  When no hum is found and another mains frequency (50 or
60 Hz) shows a strong series (harmonic-sum score >= 20 dB) the warning adds
``a strong line at 50.0 Hz: try --freq 50``.

A music partial a few hertz from a line rotates against it: the 1 s frames
attenuate it (Hann main lobe ±2 Hz) and the multi-second average cancels
what is left.  What no method can separate is signal energy *at* the line;
it sets the floor of the residual (see benchmarks/bench_dehum.py).

Removal
-------
``subtract`` (default, :class:`HumSubtractor`): ``y = x - h`` with ``h``
synthesised sample by sample from ``Φ`` and the amplitudes (linear
interpolation between frame times, held constant before the first and after
the last).  No window, no overlap-add: the model is smooth in time by
construction, and stream processing gives the same samples as one-shot (to
float32 rounding of the synthesis, below 1e-6).

``erase`` (:class:`HumEraser`): the method of the STFT tutorials.  A
periodic-Hann STFT with window ``W`` (default 1 s, so ``Δf = 1 Hz``), hop
``W/4``, ``center=True``; in frame ``m`` (centre ``t_m``) every bin within
``width/2 + k·|f0'(t_m)|·W/2`` of ``k·f0(t_m)`` is set to zero for each
treated harmonic, and the signal is rebuilt by weighted overlap-add
(:class:`~audiokit.dsp.stft.IstftStream`).  Default ``width = 4/W`` Hz (4 Hz
for 1 s): the main lobe of the Hann window.  The hum's sidelobes outside the
erased bins stay (Hann: -31 dB at 2.5 bins), and so does a hole in whatever
the signal had inside them.

:class:`HumRemover` runs either method over a stream of blocks and yields
``(output, removed)`` pairs aligned with the input (it holds the input back
while the overlap-add catches up); :func:`dehum` and the ``dehum`` pipeline
both use it.

Levels (:class:`HumAnalysis`, :class:`HumMeter`)
-------------------------------------------------
:func:`hum_levels` (:class:`HumLevels`) estimates the hum itself the same way
for both methods: the 1 s frame amplitudes of the input, of what was removed
and of the output, averaged over each harmonic's span with the analysis'
weights (hum-locked), their power: ``before`` (the floor taken off),
``removed``, ``remaining`` (never below the floor: the estimation error of a
subtracted model is about the floor) and ``other_removed`` (what was removed
at the line that is not hum-locked: the signal ``erase`` cuts).

In dB re a full-scale sine (peak amplitude 1.0 = 0 dB), per channel and
harmonic: ``level_db = 10·log10(mean_m |v_k[m]|²)``: what a 1 s frame reads
at the line (hum plus whatever signal is there; from pass 3, before the
phase refinement); ``floor_db = 10·log10(mean_m r_k[m])``: what it reads
beside the line; ``snr_db``: the detection statistic.  :class:`HumMeter`
applies the same projection (along the refined phase) to the output
(``after_db``): a treated harmonic comes down to about the floor, or to what
the signal itself has at the line, whichever is higher.

The fundamental is reported as :attr:`HumAnalysis.f0` (mean over the signal)
and :attr:`HumAnalysis.f0_track` (per frame, the slope of ``ψ`` over ±0.5 s).

Memory and passes
-----------------
The three analysis passes read the signal block by block; what is kept is
per frame (1 s frames at 4 per second, 0.5 s frames at 8): ``channels × K``
complex amplitudes, floors, weights, about 18 kB per second per channel at
40 harmonics (4 h of mono: 260 MB in all).  An array of them larger than
1 MiB lives in an unlinked temporary file (:mod:`~audiokit.dsp.hum.spill`;
``TMPDIR``), and every step walks the arrays a few rows -- or a block of
frames -- at a time, dropping their pages after each piece: the resident
memory does not grow with the length (4 h of 16 kHz mono: 181 MiB peak for
the whole ``dehum`` command, 620 before).  The numbers are the same either
way.  Removal is a fourth pass (the CLI's ``--normalize`` adds one).

Modules
-------
=====================================  ====================================================
:mod:`~audiokit.dsp.hum.model`         :class:`HumAnalysis`: the phase spline and the hum model
:mod:`~audiokit.dsp.hum.analysis`      :func:`analyze_hum`, :func:`analyze_hum_blocks`: the
                                       three passes (estimate f0, track drift, measure lines)
:mod:`~audiokit.dsp.hum.fit`           refine phase, choose spans, average amplitudes, detect
:mod:`~audiokit.dsp.hum.state`         :class:`~audiokit.dsp.hum.state.AnalysisState`: the checked request and
                                       what each step adds (analysis and fit both use it)
:mod:`~audiokit.dsp.hum.track`         long-term spectrum, demodulator, framer, projections
:mod:`~audiokit.dsp.hum.smoothing`     kernel averages along the frame axis
:mod:`~audiokit.dsp.hum.spill`         per-frame arrays in memory or in a temporary file
:mod:`~audiokit.dsp.hum.removal`       :class:`HumSubtractor`, :class:`HumEraser`, :class:`HumRemover`
:mod:`~audiokit.dsp.hum.meter`         :class:`HumMeter`
:mod:`~audiokit.dsp.hum.oneshot`       :func:`dehum`
=====================================  ====================================================
"""

from __future__ import annotations

from .analysis import BLOCK_SIZE, DEFAULT_THRESHOLD_DB, MIN_SECONDS, analyze_hum, analyze_hum_blocks
from .fit import REFINE_SPAN, SPANS
from .meter import HumLevels, HumMeter, hum_levels
from .model import FRAME_SECONDS, HOP_SECONDS, SHORT_FRAME_SECONDS, SHORT_HOP_SECONDS, HumAnalysis, PhaseSpline
from .oneshot import DehumResult, dehum
from .removal import ERASE_WINDOW_SECONDS, METHODS, HumEraser, HumRemover, HumSubtractor, Method
from .state import AUTO_NOMINALS, MAX_HARMONICS, NOMINAL_TOLERANCE, NYQUIST_MARGIN_HZ

__all__ = [
    "AUTO_NOMINALS",
    "BLOCK_SIZE",
    "DEFAULT_THRESHOLD_DB",
    "ERASE_WINDOW_SECONDS",
    "FRAME_SECONDS",
    "HOP_SECONDS",
    "MAX_HARMONICS",
    "METHODS",
    "MIN_SECONDS",
    "NOMINAL_TOLERANCE",
    "NYQUIST_MARGIN_HZ",
    "REFINE_SPAN",
    "SHORT_FRAME_SECONDS",
    "SHORT_HOP_SECONDS",
    "SPANS",
    "DehumResult",
    "HumAnalysis",
    "HumEraser",
    "HumLevels",
    "HumMeter",
    "HumRemover",
    "HumSubtractor",
    "Method",
    "PhaseSpline",
    "analyze_hum",
    "analyze_hum_blocks",
    "dehum",
    "hum_levels",
]

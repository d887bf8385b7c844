"""Kaldi ``compute-fbank-feats`` / ``compute-mfcc-feats``, number for number.

This module reproduces Kaldi's feature extraction (``src/feat/feature-window.cc``,
``feature-fbank.cc``, ``feature-mfcc.cc``, ``mel-computations.cc``; the same code as the
``kaldi-native-fbank`` wheel) with numpy, vectorised over frames, the FFTs going through
:func:`audiokit.engine.get_backend`.

Layout and scale
----------------
* **Input**: audiokit samples, full scale +/-1, shape ``(n_samples,)`` or ``(..., n_samples)``.
  Kaldi works on the integer values of 16-bit PCM, so the samples are multiplied by
  ``sample_scale`` (default ``32768.0`` = 2**15) before anything else.  Every absolute
  quantity (log energies, ``dither``, ``energy_floor``, the ``FLT_EPSILON`` floor) is in
  those int16 units: a log-mel value shifts by ``2*ln(sample_scale)`` when the scale changes
  (except where a floor applies).  Pass ``sample_scale=1.0`` for samples already in int16
  units (integer arrays are scaled like floats: raw int16 PCM codes need ``1.0`` too).
* **Output**: ``(n_frames, dim)`` -- **frames x bins**, as Kaldi's feature matrices and
  ``kaldi-native-fbank`` (the transpose of audiokit's ``(n_rows, n_frames)`` spectrograms);
  ``(..., n_frames, dim)`` for leading axes.  float64 by default (``dtype``; Kaldi computes and writes float32).

Per frame (Kaldi's ``ExtractWindow`` + ``ProcessWindow`` + the computer's ``Compute``)
------------------------------------------------------------------------------------
With ``W = window_size`` (``int(samp_freq * 0.001 * frame_length_ms)``), ``H = window_shift``
(same with ``frame_shift_ms``), ``N = padded_window_size`` (``W`` rounded up to a power of two
when ``round_to_power_of_two``):

1. framing: frame ``m`` holds samples ``[s_m, s_m + W)`` with ``s_m = m*H`` (``snip_edges``:
   ``1 + (n - W)//H`` frames if ``n >= W`` else 0) or ``s_m = m*H + H//2 - W//2``
   (``snip_edges=False``: ``(n + H//2)//H`` frames, samples outside ``[0, n)`` reflected:
   ``-1 -> 0, -2 -> 1, n -> n-1, n+1 -> n-2``, repeatedly if needed).  The window sits at
   the **start** of the ``N``-point FFT frame, zero padded after it.
2. ``dither > 0``: ``x += dither * g`` with ``g`` standard Gaussian, drawn per frame sample
   (overlapping frames get independent noise, as in Kaldi) from a seeded
   :class:`numpy.random.Generator`.  Kaldi's default is 1.0; here it is 0 (reproducible).
3. ``remove_dc_offset``: ``x -= mean(x)`` over the ``W`` samples.
4. raw log energy (``use_energy`` and ``raw_energy``): ``ln(max(sum x**2, FLT_EPSILON))``.
5. pre-emphasis: ``y[i] = x[i] - c*x[i-1]`` for ``i >= 1`` and ``y[0] = x[0] - c*x[0]``
   (Kaldi's first-sample rule), ``c = preemph_coeff`` (0.97).
6. window ``w[i]``, ``a = 2*pi/(W-1)`` (symmetric, "N - 1" as Kaldi):
   ``hanning: 0.5 - 0.5*cos(a*i)``; ``hamming: 0.54 - 0.46*cos(a*i)``;
   ``povey: (0.5 - 0.5*cos(a*i))**0.85``; ``rectangular: 1``; ``sine: sin(a*i/2)``;
   ``blackman: b - 0.5*cos(a*i) + (0.5 - b)*cos(2*a*i)`` with ``b = blackman_coeff`` (0.42).
7. non-raw log energy (``use_energy``, not ``raw_energy``): ``ln(max(sum y_w**2, FLT_EPSILON))``.
8. power spectrum ``P[k] = |sum_t y_w[t] exp(-2*pi*i*k*t/N)|**2``, ``k = 0..N/2``
   (``|.|`` instead of ``|.|**2`` when ``use_power`` is false, fbank only).
9. mel energies ``E[j] = sum_k M[j, k] P[k]`` with Kaldi's triangles (:func:`mel_banks`).
10. fbank: ``ln(max(E, FLT_EPSILON))`` when ``use_log_fbank``; MFCC: always.
11. MFCC: ``c = D @ ln(max(E, eps))`` with Kaldi's DCT-II (:func:`dct_matrix`), times the
    lifter ``1 + Q/2 * sin(pi*i/Q)`` (:func:`lifter_coeffs`, ``Q = cepstral_lifter``).
12. ``use_energy``: the log energy (floored at ``ln(energy_floor)`` when ``energy_floor > 0``)
    is prepended (fbank, column 0) or replaces ``c0`` (MFCC).  ``htk_compat``: fbank puts
    the energy last; MFCC moves ``c0``/energy last, ``c0`` times ``sqrt(2)`` without energy.

``FLT_EPSILON`` = 2**-23 = 1.1920929e-07 (:data:`FLT_EPSILON`).

Numerics
--------
Frame sums are taken in float64 over chunks of ``gcd(W, H)`` samples (the frames themselves
when that is < 8): the DC mean exact for int16-valued audio, the raw energy as the chunks'
centred sums of squares plus the spread of their means (never ``sum x**2 - (sum x)**2 / W``,
which cancels against a DC offset: 0.47 nats off at 4000 LSB of offset in float input); DC removal
and pre-emphasis are applied as ``y = e - (1 - c)*mean`` with ``e`` the pre-emphasised signal
(``y[0]`` apart), identical to Kaldi's order of operations up to rounding.  All of that is float64
whatever ``dtype``, and each frame ``y`` is rounded to ``dtype`` once (frames gathered at the edges
or dithered likewise); the rest (window, FFT, power, band sums, log, DCT) runs in ``dtype``, blocks
of 256 frames written straight into a cached FFT plan.

* float64 (the default) gives the exact value of Kaldi's formulas with Kaldi's float32 tables (a
  naive float64 per-frame loop agrees to 1e-9, tested).
* float32 (what ``mel``/``mfcc --compat kaldi|lhotse`` compute; 1.2-1.4x faster) is within float32
  rounding of that value, per cell: ``|a - exact| <= 2 ulp + K eps sqrt(S/m)`` with
  ``eps = 2**-23``, ``m`` the cell's band energy and ``S`` its frame's sum over the bands, ``K = 8``
  (tested; measured at most 2.0 over 300 utterances of speech, noise floors and DC offsets, 23 and
  80 bands): the float32 FFT's own rounding, a few ``eps`` of the frame's amplitude in every bin.
  The raw log energy (MFCC c0, ``use_energy``) is the float64 value rounded.
* Kaldi and kaldi-native-fbank compute everything in float32, DC removal and pre-emphasis
  included: the same FFT noise and more (``K`` up to ~100 with a DC offset in float input, ~1e7
  on frames that are a DC offset alone): ~1e-4 log units at 10 nats below a frame's strongest
  band, ~1e-3 at 20-25 nats, and MFCCs that noise times the lifter (up to ``1 + Q/2`` = 12).

The bounds against kaldi-native-fbank, per case, are in ``docs/conventions.md`` ("Kaldi precision").

Streaming
---------
Frames are independent, so :class:`KaldiFeatureStream` takes the signal in pieces of any size
(``accept_waveform``), returns the frames completed so far in whole blocks of 256, and the last
ones (among them those that need the end reflection when ``snip_edges=False``) at
``input_finished``.  The blocks are always frames ``[0, 256)``, ``[256, 512)``, ..., so the
concatenation is bit for bit :func:`kaldi_fbank` / :func:`kaldi_mfcc` of the whole signal, dither
included (one Generator drawing frame after frame), whatever the pieces.  Memory is bounded by the
piece, 256 frames and ``W``.

Example
-------
>>> import numpy as np
>>> from audiokit.dsp.kaldi import FbankOptions, kaldi_fbank, kaldi_mfcc
>>> x = np.random.default_rng(0).standard_normal(16000) * 0.1
>>> kaldi_fbank(x, sr=16000).shape          # 1 + (16000 - 400)//160 frames, 23 bins
(98, 23)
>>> kaldi_mfcc(x, sr=16000, snip_edges=False).shape   # (16000 + 80)//160 frames, 13 cepstra
(100, 13)
"""

from __future__ import annotations

from .compute import KaldiFeatureStream, kaldi_fbank, kaldi_features_blocks, kaldi_mfcc
from .options import (
    DEFAULT_SAMPLE_SCALE,
    FLT_EPSILON,
    FbankOptions,
    MfccOptions,
    WindowType,
    frame_starts,
    num_frames,
)
from .tables import dct_matrix, inverse_mel_scale, lifter_coeffs, mel_banks, mel_scale, window_function

__all__ = [
    "FLT_EPSILON",
    "DEFAULT_SAMPLE_SCALE",
    "WindowType",
    "FbankOptions",
    "MfccOptions",
    "KaldiFeatureStream",
    "kaldi_fbank",
    "kaldi_mfcc",
    "kaldi_features_blocks",
    "num_frames",
    "frame_starts",
    "window_function",
    "mel_scale",
    "inverse_mel_scale",
    "mel_banks",
    "dct_matrix",
    "lifter_coeffs",
]

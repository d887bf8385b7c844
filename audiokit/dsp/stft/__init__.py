r"""Short-time Fourier transform: plan, forward (one-shot and streaming), inverse.

Modules
-------
=====================  ============================================================
:mod:`.plan`           :class:`StftPlan`: parameters, frame counts and times, bin
                       frequencies, padded window, window sum-square tables
:mod:`.forward`        :class:`StftStream`, :func:`compute`, :func:`stft`,
                       :func:`spectrogram` (power/magnitude, filter bank, log)
:mod:`.inverse`        :class:`IstftStream`, :func:`istft` (weighted overlap-add)
:mod:`.polyphase`      batch layout that windows many frames in one product,
                       with its shared cache
=====================  ============================================================

Definition
----------
For a signal ``x`` (sample rate ``sr``), window ``w`` of ``W = win_length``
samples, hop ``H = hop_length`` and FFT size ``N = n_fft >= W``::

    X[k, m] = sum_{n=0}^{N-1} p[m*H + n] * v[n] * exp(-2j*pi*k*n/N),   k = 0 .. N//2

* ``v`` is ``w`` zero-padded to ``N`` samples **centred**: ``v[o:o+W] = w`` with
  ``o = (N - W) // 2`` (:attr:`StftPlan.win_offset`), zeros elsewhere.  This is
  librosa's placement; scipy's ``ShortTimeFFT(mfft=N)`` puts the window at the
  start instead, which changes the phase by ``exp(-2j*pi*k*o/N)`` but not the
  magnitude.  With ``N == W`` (the default) ``v == w``.
* ``p`` is ``x`` itself when ``center=False`` (the default): frame ``m`` covers
  samples ``[m*H, m*H + N)``, i.e. ``[m*H, m*H + W)`` when ``N == W``.  With
  ``center=True``, ``p`` is ``x`` padded by ``N//2`` samples on each side
  (zeros for ``pad_mode='constant'``, mirror images without repeating the edge
  sample for ``'reflect'``), so frame ``m`` is centred on sample ``m*H``.
* Forward DFT unnormalised, one-sided (``N//2 + 1`` bins, bin ``k`` at
  ``k*sr/N`` Hz); the inverse DFT carries the ``1/N``.
* "frames" are always STFT frames (columns ``m`` of ``X``); sample counts are
  ``n_samples``.

Frame count (:meth:`StftPlan.n_frames`) for ``n`` samples:

* ``center=False``: ``1 + (n - N) // H`` for ``n >= N``.  Samples after the last
  full frame are not analysed.  An input shorter than one frame (``n < N``) is
  zero-padded to one frame, with a warning.  (52225 samples, N = W = 512,
  H = 128 give 405 frames.)
* ``center=True``: ``1 + (n + 2*(N//2) - N) // H`` (``1 + n // H`` for even N).

These match ``librosa.stft(y, n_fft=N, hop_length=H, win_length=W,
window=<name>, center=..., pad_mode=...)`` sample for sample (including the
phase), and ``scipy.signal.ShortTimeFFT(w, H, sr, phase_shift=None)`` for
``N == W`` (``center=True, pad_mode='constant'`` is scipy's zero padding with
slices ``p = 0 .. M-1``).

Reductions (:func:`spectrogram`, :class:`StftStream`): power ``|X|**2``
(computed as ``abs(X)**2``) or magnitude ``|X|``, an optional filter bank
(``F @ S`` per frame), and an optional log, ``10*log10(max(amin, S))`` for
power or ``20*log10(max(amin, S))`` for magnitude (``ref = 1``) or
``ln(max(amin, S))``; the default floors ``amin`` are
:data:`audiokit.dsp.scaling.AMIN` (1e-10 for power, 1e-5 for magnitude).

Inverse
-------
:meth:`StftPlan.istft` is the weighted overlap-add (Griffin & Lim's
least-squares inverse)::

    y[t] = sum_m v[t - m*H] * irfft(X[:, m])[t - m*H]  /  sum_m v[t - m*H]**2

It exists when the window satisfies NOLA for the hop (:attr:`StftPlan.invertible`)
and reconstructs ``x`` exactly (to rounding) at every sample where the
denominator, the *window sum-square* (:meth:`StftPlan.window_sumsquare`), is
nonzero.  Where it is numerically zero -- below ``eps`` (of the working dtype)
times its steady-state maximum, e.g. Blackman's ``w[0] ~ 1e-17`` -- the output
is 0 rather than amplified rounding noise (librosa divides wherever the sum
exceeds the smallest normal number; the two agree elsewhere).  The rounding
error at sample ``t`` is about ``eps * max|x| * ||v||_2 * sum_m |v| / sum_m v**2``,
so it grows where few frames with small weights cover ``t``.  Two consequences
for ``center=False``:

* samples after the last frame are not covered and come back as 0;
* samples covered only by zero or tiny window values are lost or
  ill-conditioned: with the periodic Hann window ``w[0] = 0``, so sample 0 is
  seen by frame 0 alone with weight 0 and comes back as 0, and samples
  ``1 .. H-1`` are seen by frame 0 alone with small weights ``w[t]``, which
  amplifies rounding by ``1 / w[t]``.

With ``center=True`` every sample of ``x`` is near the centre of some frame and
the whole signal comes back (use ``length=len(x)``); prefer it when exact
full-length reconstruction matters.

Streaming
---------
:class:`StftStream` accepts the signal in blocks of any size and returns the
frames completed by each block (keeping the overlap as state); ``finish()``
pads the end (``center=True``) and returns the last frames.  The concatenated
output equals the one-shot transform: the windowed frames are identical, and
so are the spectra bit for bit when each frame is transformed alone
(``chunk_frames=1``); with batches, FFT libraries may round a row differently
depending on the batch it falls in (differences of a few ulps).
:class:`IstftStream` is the matching block-wise overlap-add.

Performance
-----------
Frames are processed in batches of about :data:`DEFAULT_CHUNK_FRAMES` through
the zero-copy plans of the FFT backend, windowed in place and reduced while
in cache; see :mod:`.forward` and :mod:`.polyphase`.
"""

from __future__ import annotations

from ..scaling import AMIN
from .forward import (
    LOG_KINDS,
    OUTPUTS,
    LogKind,
    Output,
    StftStream,
    compute,
    output_for_power,
    spectrogram,
    stft,
)
from .inverse import IstftStream, istft
from .plan import (
    DEFAULT_CHUNK_FRAMES,
    DTYPES,
    PAD_MODES,
    DTypeName,
    FrameTime,
    PadMode,
    StftPlan,
)

__all__ = [
    "AMIN_MAGNITUDE",
    "AMIN_POWER",
    "DEFAULT_CHUNK_FRAMES",
    "DTYPES",
    "LOG_KINDS",
    "OUTPUTS",
    "PAD_MODES",
    "DTypeName",
    "FrameTime",
    "IstftStream",
    "LogKind",
    "Output",
    "PadMode",
    "StftPlan",
    "StftStream",
    "compute",
    "istft",
    "output_for_power",
    "spectrogram",
    "stft",
]

#: Former names of the default log floors, kept for existing imports; the one
#: table is :data:`audiokit.dsp.scaling.AMIN` (floor of ``|X|**2`` resp. ``|X|``).
AMIN_POWER = AMIN["power"]
AMIN_MAGNITUDE = AMIN["magnitude"]

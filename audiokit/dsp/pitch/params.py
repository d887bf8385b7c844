"""The pitch analysis geometry: period range, pitch grid and framing, checked once (librosa 0.11's rules).

With ``sr`` the sample rate (Hz), ``fmin < fmax <= sr / 2`` (Hz) and ``frame_length`` (samples):

* periods searched: ``min_period = floor(sr / fmax)`` .. ``max_period = min(ceil(sr / fmin), frame_length - 1)``
  samples, so a difference-function row has ``n_periods = max_period - min_period + 1`` lags;
* pYIN's pitch grid: ``n_bins_per_semitone = ceil(1 / resolution)`` and
  ``n_pitch_bins = floor(12 * n_bins_per_semitone * log2(fmax / fmin)) + 1`` bins at
  ``fmin * 2**(b / (12 * n_bins_per_semitone))`` Hz;
* frames: with ``center``, the signal is padded by ``frame_length // 2`` on both sides and frame ``m`` covers
  padded samples ``[m * hop_length, m * hop_length + frame_length)`` (centred on input sample ``m * hop_length``);
  ``n_frames = 1 + (n_padded - frame_length) // hop_length``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ...errors import ParameterError
from ...validate import check_int, check_real

__all__ = ["FRAME_LENGTH", "PRIOR", "SR", "PitchGeometry", "PitchGrid", "PyinPrior", "check_audio", "next_fast_len"]

#: librosa 0.11's default sample rate of ``yin``/``pyin`` (Hz).
SR = 22050
#: librosa 0.11's default frame length of ``yin``/``pyin`` (samples; the hop defaults to a quarter of it).
FRAME_LENGTH = 2048


def next_fast_len(n: int) -> int:
    """The smallest ``2**a * 3**b * 5**c >= n`` (scipy.fft.next_fast_len(n, real=True): the FFT length of the
    autocorrelation, ``n_fft >= 2 * frame_length - 1``)."""
    best = 1 << max(int(n - 1).bit_length(), 0)
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            p = p35
            while p < n:
                p *= 2
            best = min(best, p)
            p35 *= 3
        p5 *= 5
    return best


def check_audio(y: object) -> np.ndarray:
    """``y`` as a floating-point array with at least one axis and only finite samples (ParameterError else)."""
    if not isinstance(y, np.ndarray):
        raise ParameterError("audio data must be a numpy.ndarray")
    if not np.issubdtype(y.dtype, np.floating):
        raise ParameterError(f"audio data must be floating-point, got {y.dtype}")
    if y.ndim == 0:
        raise ParameterError("audio data must have at least one axis")
    if not np.isfinite(y).all():
        raise ParameterError("audio data is not finite everywhere")
    return y


@dataclass(frozen=True)
class PitchGeometry:
    """Framing and period range of YIN/pYIN, checked as librosa checks them.

    Attributes
    ----------
    sr : float
        Sample rate (Hz).
    fmin, fmax : float
        Frequency range (Hz), ``0 < fmin < fmax <= sr / 2`` and ``sr / fmin < frame_length - 1``.
    frame_length : int
        Frame length (samples).
    hop_length : int
        Hop (samples); librosa's default is ``frame_length // 4``.
    """

    sr: float
    fmin: float
    fmax: float
    frame_length: int
    hop_length: int

    @classmethod
    def make(cls, *, sr: float, fmin: float, fmax: float, frame_length: int, hop_length: int | None) -> PitchGeometry:
        """Check the values (ParameterError) and warn, as librosa does, when fewer than two periods of ``fmin`` fit
        in a frame (``sr / fmin >= frame_length // 2``)."""
        if fmin is None or fmax is None:
            raise ParameterError('both "fmin" and "fmax" must be provided')
        sr = check_real(sr, "sr", positive=True)
        fmin = check_real(fmin, "fmin")
        fmax = check_real(fmax, "fmax")
        frame_length = check_int(frame_length, "frame_length", minimum=3)
        hop = frame_length // 4 if hop_length is None else check_int(hop_length, "hop_length", minimum=1)
        if fmax > sr / 2:
            raise ParameterError(f"fmax={fmax:.3f} cannot exceed the Nyquist frequency {sr / 2}")
        if fmin >= fmax:
            raise ParameterError(f"fmin={fmin:.3f} must be less than fmax={fmax:.3f}")
        if fmin <= 0:
            raise ParameterError(f"fmin={fmin:.3f} must be strictly positive")
        if sr / fmin >= frame_length - 1:
            raise ParameterError(
                f"fmin={fmin:.3f} is too small for frame_length={frame_length} and sr={sr:g}: raise fmin to "
                f"{sr / (frame_length - 1):.3f} or frame_length to {int(np.ceil(sr / fmin) + 1)}"
            )
        if sr / fmin >= frame_length // 2:
            warnings.warn(
                f"with fmin={fmin:.3f}, sr={sr:g} and frame_length={frame_length}, fewer than two periods of fmin "
                f"fit in a frame, which can make the pitch inaccurate; consider fmin={sr / (frame_length / 2):.3f} "
                f"or frame_length={int(np.ceil(sr / fmin) * 2 + 1)}",
                stacklevel=3,
            )
        return cls(sr=sr, fmin=fmin, fmax=fmax, frame_length=frame_length, hop_length=hop)

    @property
    def min_period(self) -> int:
        """Shortest period searched, ``floor(sr / fmax)`` samples."""
        return int(np.floor(self.sr / self.fmax))

    @property
    def max_period(self) -> int:
        """Longest period searched, ``min(ceil(sr / fmin), frame_length - 1)`` samples."""
        return min(int(np.ceil(self.sr / self.fmin)), self.frame_length - 1)

    @property
    def n_periods(self) -> int:
        """Lags of a difference-function row, ``max_period - min_period + 1``."""
        return self.max_period - self.min_period + 1

    @property
    def n_fft(self) -> int:
        """Autocorrelation FFT length: the smallest 5-smooth ``n >= 2 * frame_length - 1``."""
        return next_fast_len(2 * self.frame_length - 1)

    def n_frames(self, n_samples: int, *, center: bool = True) -> int:
        """Frames of a signal of ``n_samples`` (``1 + (n_padded - frame_length) // hop_length``; 0 if too short)."""
        padded = n_samples + (2 * (self.frame_length // 2) if center else 0)
        return 0 if padded < self.frame_length else 1 + (padded - self.frame_length) // self.hop_length

    def times(self, n_frames: int, *, center: bool = True) -> np.ndarray:
        """Frame times (s): ``m * hop_length / sr`` with ``center``, else the frame middles
        ``(m * hop_length + frame_length / 2) / sr``."""
        start = 0.0 if center else self.frame_length / 2
        return (np.arange(n_frames) * self.hop_length + start) / self.sr


@dataclass(frozen=True)
class PitchGrid:
    """pYIN's pitch grid: ``n_pitch_bins`` log-spaced bins from ``fmin``, ``1 / n_bins_per_semitone`` semitone apart.

    Attributes
    ----------
    fmin, fmax : float
        Range (Hz).
    resolution : float
        Bin spacing in semitones, ``0 < resolution < 1`` (0.01 = cents); rounded up to
        ``n_bins_per_semitone = ceil(1 / resolution)``.
    """

    fmin: float
    fmax: float
    resolution: float

    def __post_init__(self) -> None:
        res = check_real(self.resolution, "resolution", positive=True)
        if not res < 1:
            raise ParameterError(f"resolution={res} must be in (0, 1)")

    @property
    def n_bins_per_semitone(self) -> int:
        """``ceil(1 / resolution)``."""
        return int(np.ceil(1.0 / self.resolution))

    @property
    def n_pitch_bins(self) -> int:
        """``floor(12 * n_bins_per_semitone * log2(fmax / fmin)) + 1``."""
        return int(np.floor(12 * self.n_bins_per_semitone * np.log2(self.fmax / self.fmin))) + 1

    @property
    def freqs(self) -> np.ndarray:
        """Bin frequencies (Hz), ``fmin * 2**(b / (12 * n_bins_per_semitone))``, shape ``(n_pitch_bins,)``."""
        return self.fmin * 2 ** (np.arange(self.n_pitch_bins) / (12 * self.n_bins_per_semitone))

    def transition_width(self, max_transition_rate: float, hop_length: int, sr: float) -> int:
        """Width (bins) of the local pitch transition: ``round(max_transition_rate * 12 * hop_length / sr)``
        semitones per frame times ``n_bins_per_semitone``, plus one."""
        semitones = round(max_transition_rate * 12 * hop_length / sr)
        return int(semitones * self.n_bins_per_semitone + 1)


@dataclass(frozen=True)
class PyinPrior:
    """pYIN's model besides the framing, under librosa 0.11's names, with its defaults (:data:`PRIOR`, written here
    once; :func:`~.pyin.pyin`'s signature reads them); checked by :meth:`~.pyin.PyinModel.make`.

    Attributes
    ----------
    n_thresholds : int
        Thresholds of the beta prior (>= 1).
    beta_parameters : (float, float)
        Beta distribution shape parameters of the threshold prior (> 0).
    boltzmann_parameter : float
        Boltzmann prior shape over troughs (> 0; larger favours shorter periods).
    resolution : float in (0, 1)
        Pitch bin spacing (semitones; 0.01 = cents).
    max_transition_rate : float
        Largest pitch change (octaves per second, > 0).
    switch_prob : float in (0, 1)
        Voiced/unvoiced switch probability per frame.
    no_trough_prob : float in [0, 1]
        Weight given to the global minimum for thresholds no trough is below.
    """

    n_thresholds: int = 100
    beta_parameters: tuple[float, float] = (2, 18)
    boltzmann_parameter: float = 2
    resolution: float = 0.1
    max_transition_rate: float = 35.92
    switch_prob: float = 0.01
    no_trough_prob: float = 0.01


#: librosa 0.11's pYIN defaults.
PRIOR = PyinPrior()

"""Kaldi feature options (``FbankOptions``, ``MfccOptions``) and frame arithmetic.

Field names and defaults are Kaldi's (``feature-window.h``, ``mel-computations.h``,
``feature-fbank.h``, ``feature-mfcc.h``) except ``dither`` (0 here).  See :mod:`audiokit.dsp.kaldi`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, cast, get_args

import numpy as np

from ...errors import ParameterError
from ...validate import check_choice, check_int, check_real

__all__ = [
    "FLT_EPSILON",
    "DEFAULT_SAMPLE_SCALE",
    "WindowType",
    "FbankOptions",
    "MfccOptions",
    "Options",
    "num_frames",
    "frame_starts",
]

#: C's ``FLT_EPSILON`` (``std::numeric_limits<float>::epsilon()``): Kaldi's floor on energies.
FLT_EPSILON = float(np.finfo(np.float32).eps)

#: audiokit full scale (+/-1) -> int16 units, the scale Kaldi's numbers are in.
DEFAULT_SAMPLE_SCALE = 32768.0

WindowType = Literal["povey", "hamming", "hanning", "rectangular", "blackman", "sine"]
_WINDOW_TYPES: tuple[str, ...] = get_args(WindowType)


def _f32(value: float) -> float:
    """The value of a C ``float`` (Kaldi's BaseFloat options are floats)."""
    return float(np.float32(value))


def _round_up_pow2(n: int) -> int:
    return 1 << (n - 1).bit_length() if n > 1 else 1


@dataclass(frozen=True)
class _CommonOptions:
    """Frame extraction, mel bank and energy options shared by fbank and MFCC (Kaldi names)."""

    samp_freq: float = 16000.0
    frame_length_ms: float = 25.0
    frame_shift_ms: float = 10.0
    dither: float = 0.0
    preemph_coeff: float = 0.97
    remove_dc_offset: bool = True
    window_type: WindowType = "povey"
    round_to_power_of_two: bool = True
    blackman_coeff: float = 0.42
    snip_edges: bool = True
    num_mel_bins: int = 23
    low_freq: float = 20.0
    high_freq: float = 0.0
    use_energy: bool = False
    energy_floor: float = 0.0
    raw_energy: bool = True
    htk_compat: bool = False
    #: audiokit: the frame length and shift in samples exactly (a length given in samples, ``--win 400``); when set
    #: they are :attr:`window_size` / :attr:`window_shift` and the ms fields only record the Kaldi options giving
    #: them.  None (Kaldi's way): truncated from the ms fields.
    window_samples: int | None = None
    shift_samples: int | None = None

    def __post_init__(self) -> None:
        for name in ("samp_freq", "frame_length_ms", "frame_shift_ms"):
            object.__setattr__(self, name, check_real(getattr(self, name), name, positive=True))
        for name in ("dither", "preemph_coeff", "blackman_coeff", "low_freq", "high_freq", "energy_floor"):
            object.__setattr__(self, name, check_real(getattr(self, name), name))
        for f in fields(self):
            if f.type in ("bool", bool) and not isinstance(getattr(self, f.name), (bool, np.bool_)):
                raise ParameterError(f"{f.name} must be True or False, got {getattr(self, f.name)!r}")
            if f.type in ("bool", bool):
                object.__setattr__(self, f.name, bool(getattr(self, f.name)))
        for name in ("window_samples", "shift_samples"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_int(getattr(self, name), name, minimum=1))
        check_choice(self.window_type, "window_type", _WINDOW_TYPES)
        object.__setattr__(self, "num_mel_bins", check_int(self.num_mel_bins, "num_mel_bins", minimum=3))
        if self.dither < 0:
            raise ParameterError(f"dither must be >= 0, got {self.dither!r}")
        if not 0.0 <= self.preemph_coeff <= 1.0:
            raise ParameterError(f"preemph_coeff must be in [0, 1], got {self.preemph_coeff!r}")
        if self.energy_floor < 0:
            raise ParameterError(f"energy_floor must be >= 0, got {self.energy_floor!r}")
        if self.window_size < 2:
            raise ParameterError(
                f"frame_length_ms {self.frame_length_ms!r} at samp_freq {self.samp_freq!r} gives "
                f"{self.window_size} samples; need at least 2"
            )
        if self.window_shift < 1:
            raise ParameterError(
                f"frame_shift_ms {self.frame_shift_ms!r} at samp_freq {self.samp_freq!r} gives "
                f"{self.window_shift} samples; need at least 1"
            )
        if self.padded_window_size % 2:
            raise ParameterError(
                f"the FFT length must be even, got {self.padded_window_size} "
                "(use round_to_power_of_two=True or an even window length)"
            )
        nyquist = 0.5 * self.samp_freq
        low, high = self.low_freq, self.mel_high_freq_hz
        if low < 0.0 or low >= nyquist or high <= 0.0 or high > nyquist or high <= low:
            raise ParameterError(
                f"bad mel band edges: low_freq {self.low_freq!r} and high_freq {self.high_freq!r} "
                f"give [{low!r}, {high!r}] Hz; need 0 <= low < high <= nyquist ({nyquist!r} Hz)"
            )

    # Derived sizes, as Kaldi's FrameExtractionOptions computes them.
    @property
    def window_size(self) -> int:
        """Frame length in samples, ``W = int(samp_freq * 0.001 * frame_length_ms)`` (truncated, as Kaldi), or
        :attr:`window_samples`."""
        if self.window_samples is not None:
            return self.window_samples
        return int(_f32(self.samp_freq) * 0.001 * _f32(self.frame_length_ms))

    @property
    def window_shift(self) -> int:
        """Frame shift in samples, ``H = int(samp_freq * 0.001 * frame_shift_ms)`` (truncated, as Kaldi), or
        :attr:`shift_samples`."""
        if self.shift_samples is not None:
            return self.shift_samples
        return int(_f32(self.samp_freq) * 0.001 * _f32(self.frame_shift_ms))

    @property
    def padded_window_size(self) -> int:
        """FFT length ``N``: ``W`` rounded up to a power of two if ``round_to_power_of_two``, else ``W``."""
        w = self.window_size
        return _round_up_pow2(w) if self.round_to_power_of_two else w

    @property
    def mel_high_freq_hz(self) -> float:
        """Upper mel edge in Hz: ``high_freq`` if > 0, else ``samp_freq/2 + high_freq``."""
        return self.high_freq if self.high_freq > 0.0 else 0.5 * self.samp_freq + self.high_freq

    def num_frames(self, n_samples: int) -> int:
        """Frames of a signal of ``n_samples`` samples (see :func:`num_frames`)."""
        return num_frames(n_samples, cast("FbankOptions | MfccOptions", self))


@dataclass(frozen=True)
class FbankOptions(_CommonOptions):
    """Options of Kaldi ``compute-fbank-feats`` (``FbankOptions`` + ``FrameExtractionOptions`` + ``MelBanksOptions``).

    Field names are Kaldi's (``--num-mel-bins`` -> ``num_mel_bins``); defaults are Kaldi's
    except ``dither`` (0 here, 1.0 in Kaldi).

    Parameters
    ----------
    samp_freq : float > 0
        Sample rate in Hz the options are meant for (``--sample-frequency``, 16000).
    frame_length_ms, frame_shift_ms : float > 0
        Window length (25) and shift (10) in ms; truncated to samples (:attr:`window_size`).
    dither : float >= 0
        Gaussian dither standard deviation in int16 units (0 = off).
    preemph_coeff : float in [0, 1]
        Pre-emphasis coefficient (0.97).
    remove_dc_offset : bool
        Subtract each frame's mean (True).
    window_type : {"povey", "hamming", "hanning", "rectangular", "blackman", "sine"}
        Window (povey); formulas in the module docstring.
    round_to_power_of_two : bool
        Zero-pad the frame to the next power of two (True).
    blackman_coeff : float
        The constant of the generalised Blackman window (0.42).
    snip_edges : bool
        True: only frames that fit in the signal; False: ``round(n / H)`` frames, ends reflected.
    num_mel_bins : int >= 3
        Mel bands (23).
    low_freq : float
        Lower mel edge in Hz (20).
    high_freq : float
        Upper mel edge in Hz; ``<= 0`` means nyquist + high_freq (0 -> nyquist).
    use_energy : bool
        Add the log energy as an extra column 0 (False).
    energy_floor : float >= 0
        Floor on the energy (not its log) when > 0 (0).
    raw_energy : bool
        Energy before pre-emphasis and window (True).
    htk_compat : bool
        Put the energy column last (False).
    use_log_fbank : bool
        Natural log of the mel energies floored at FLT_EPSILON (True); False gives linear energies.
    use_power : bool
        Power spectrum (True) or magnitude (False) into the mel bank.
    """

    use_log_fbank: bool = True
    use_power: bool = True

    @property
    def dim(self) -> int:
        """Columns of the output: ``num_mel_bins + use_energy``."""
        return self.num_mel_bins + int(self.use_energy)


@dataclass(frozen=True)
class MfccOptions(_CommonOptions):
    """Options of Kaldi ``compute-mfcc-feats`` (``MfccOptions`` + ``FrameExtractionOptions`` + ``MelBanksOptions``).

    The frame and mel fields are those of :class:`FbankOptions` (same defaults; ``dither`` 0
    here); the MFCC ones:

    Parameters
    ----------
    num_ceps : int in [1, num_mel_bins]
        Cepstra kept, c0 included (13).
    cepstral_lifter : float >= 0
        Lifter constant ``Q`` (22); 0 disables liftering.
    use_energy : bool
        Replace c0 by the log energy (True, as Kaldi).
    htk_compat : bool
        Move c0 (or the energy) last; without energy c0 is multiplied by sqrt(2).
    """

    use_energy: bool = True
    num_ceps: int = 13
    cepstral_lifter: float = 22.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "num_ceps", check_int(self.num_ceps, "num_ceps", minimum=1))
        if self.num_ceps > self.num_mel_bins:
            raise ParameterError(f"num_ceps ({self.num_ceps}) cannot be larger than num_mel_bins ({self.num_mel_bins})")
        object.__setattr__(self, "cepstral_lifter", check_real(self.cepstral_lifter, "cepstral_lifter"))
        if self.cepstral_lifter < 0:
            raise ParameterError(f"cepstral_lifter must be >= 0, got {self.cepstral_lifter!r}")

    @property
    def dim(self) -> int:
        """Columns of the output: ``num_ceps``."""
        return self.num_ceps


Options = FbankOptions | MfccOptions


# --------------------------------------------------------------------------------------------
# Framing
# --------------------------------------------------------------------------------------------
def num_frames(n_samples: int, options: Options) -> int:
    """Number of frames Kaldi extracts from ``n_samples`` samples (``NumFrames`` with flush).

    Parameters
    ----------
    n_samples : int >= 0
    options : FbankOptions or MfccOptions

    Returns
    -------
    int
        ``snip_edges``: ``1 + (n - W)//H`` if ``n >= W`` else 0; otherwise ``(n + H//2)//H``.
    """
    n = check_int(n_samples, "n_samples", minimum=0)
    w, h = options.window_size, options.window_shift
    if options.snip_edges:
        return 0 if n < w else 1 + (n - w) // h
    return (n + h // 2) // h


def frame_starts(n_frames: int, options: Options, *, first: int = 0) -> np.ndarray:
    """First sample of frames ``first .. first + n_frames - 1`` (Kaldi ``FirstSampleOfFrame``).

    Returns
    -------
    np.ndarray of int64, shape (n_frames,)
        ``m*H`` (``snip_edges``) or ``m*H + H//2 - W//2`` (may be negative: reflected samples).
    """
    h = options.window_shift
    m = np.arange(first, first + n_frames, dtype=np.int64)
    return m * h if options.snip_edges else m * h + (h // 2 - options.window_size // 2)


def _reflect(idx: np.ndarray, n: int) -> np.ndarray:
    """Kaldi's edge reflection (-1 -> 0, n -> n-1, repeated): the period-2n symmetric extension."""
    idx = np.mod(idx, 2 * n)
    return np.where(idx >= n, 2 * n - 1 - idx, idx)

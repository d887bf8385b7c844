"""The state the steps of the hum analysis pass on (:class:`AnalysisState`), and the request it starts from.

:func:`~audiokit.dsp.hum.analysis.analyze_hum_blocks` checks the request into an :class:`AnalysisState`;
passes 1-3 (:mod:`audiokit.dsp.hum.analysis`) and steps 4-7 (:mod:`audiokit.dsp.hum.fit`) each fill the
fields listed under their name.  Both import this module, neither imports the other's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...errors import ParameterError
from ...validate import check_int, check_real
from .model import HumAnalysis

__all__ = ["AUTO_NOMINALS", "MAX_HARMONICS", "NOMINAL_TOLERANCE", "NYQUIST_MARGIN_HZ", "AnalysisState", "search_window"]

#: Nominal mains frequencies tried by ``freq=None`` (auto), Hz.
AUTO_NOMINALS = (50.0, 60.0)
#: Half-width of the search around a given nominal frequency, relative.
NOMINAL_TOLERANCE = 0.01
#: Highest harmonic considered by default.
MAX_HARMONICS = 40
#: Harmonics stop this far below the Nyquist frequency (Hz).
NYQUIST_MARGIN_HZ = 5.0

_MIN_SEARCH_HALF_WIDTH_HZ = 0.05  # the search window is at least ±0.05 Hz wide around the nominal


# ----------------------------------------------------------------------------- the request


def _check_sr(sr: object) -> int:
    return check_int(sr, "sr", minimum=1, message="sr must be a whole number of Hz > 0, got {value!r}")


def search_window(f: float) -> tuple[float, float]:
    """``(lo, hi)`` Hz searched around the nominal ``f``: ±:data:`NOMINAL_TOLERANCE`, at least ±0.05 Hz."""
    half = max(NOMINAL_TOLERANCE * f, _MIN_SEARCH_HALF_WIDTH_HZ)
    return f - half, f + half


def _search_windows(freq: object, sr: int) -> list[tuple[float, float, float]]:
    """``[(nominal, lo, hi), ...]``: the nominal frequencies to try and their search windows (Hz)."""
    nyq = sr / 2.0
    if freq is None:
        below = [(f,) + search_window(f) for f in AUTO_NOMINALS if search_window(f)[1] < nyq]
        return below or [(AUTO_NOMINALS[0],) + search_window(AUTO_NOMINALS[0])]
    f = check_real(freq, "freq", message="freq must be a frequency in Hz or None (auto), got {value!r}")
    if not 0 < f < nyq:
        raise ParameterError(f"freq must be > 0 and below the Nyquist frequency {nyq:g} Hz, got {f:g} Hz")
    return [(f,) + search_window(f)]


def _check_harmonics(harmonics: object) -> int:
    if harmonics is None:
        return MAX_HARMONICS
    return check_int(harmonics, "harmonics", minimum=1)


def _check_threshold(threshold_db: object) -> float:
    return check_real(threshold_db, "threshold_db", message="threshold_db must be a finite number of dB, got {value!r}")


# ----------------------------------------------------------------------------- the state


def _none() -> np.ndarray:
    return np.zeros(0)


@dataclass(eq=False)
class AnalysisState:
    """What the steps of :func:`analyze_hum_blocks` pass on.

    The request (checked) comes first; each step fills the fields listed under
    its name.  ``C`` channels, ``K`` harmonics, ``M`` 1 s frames, ``M2`` short
    frames; "rows" are the ``C·K`` (channel, harmonic) pairs, channel-major.
    """

    # the request
    sr: int
    channels: int
    n_samples: int
    auto: bool
    windows: list[tuple[float, float, float]]  # (nominal, lo, hi) Hz per nominal tried
    kmax_req: int
    harmonics_given: bool
    threshold_db: float
    nominal: float = 0.0  # Hz; the first window's until _estimate_f0 chooses
    search: tuple[float, float] = (0.0, 0.0)  # Hz
    # _estimate_f0
    lts: np.ndarray = field(default_factory=_none)  # long-term power spectrum (channels summed)
    lts_df: float = 1.0  # its bin spacing (Hz)
    f_ref: float = 0.0  # Hz
    score: float = 0.0  # harmonic-sum score of f_ref (dB)
    prominence: np.ndarray = field(default_factory=_none)  # (K,) dB, long-term prominence of each harmonic
    harmonics: np.ndarray = field(default_factory=_none)  # (K,) 1..K
    decim: int = 1  # samples per decimated sample
    rate: float = 0.0  # decimated rate, sr / decim (Hz)
    length: int = 1  # 1 s frame length (decimated samples, odd)
    hop: int = 1  # hop between 1 s frames (decimated samples)
    # _track_drift
    tracked: np.ndarray = field(default_factory=_none)  # harmonic numbers that steered the search
    times: np.ndarray = field(default_factory=_none)  # (M,) frame times (s)
    psi: np.ndarray = field(default_factory=_none)  # (M,) phase deviation (cycles); refined by refine_phase
    # _measure_lines
    v: np.ndarray = field(default_factory=_none)  # (C, K, M) complex peak amplitudes, 1 s frames
    r: np.ndarray = field(default_factory=_none)  # (C, K, M) noise power beside each line
    v_short: np.ndarray = field(default_factory=_none)  # (C, K, M2), 0.5 s frames
    r_short: np.ndarray = field(default_factory=_none)
    times_short: np.ndarray = field(default_factory=_none)  # (M2,) s
    hop_short: int = 1  # decimated samples
    signal_power: np.ndarray = field(default_factory=_none)  # (C,) mean square of each channel
    level_db: np.ndarray = field(default_factory=_none)  # (C, K) 10·log10(mean_m |v|²), before refine_phase turns v
    floor_db: np.ndarray = field(default_factory=_none)  # (C, K) 10·log10(mean_m r)
    # refine_phase: v, r, v_short, r_short as rows, turned by the phase correction, noise floored -- in place: v, r,
    # v_short and r_short are emptied (their buffers become these rows), so a long signal holds them once
    rot: np.ndarray = field(default_factory=_none)  # (rows, M) complex
    rr: np.ndarray = field(default_factory=_none)  # (rows, M)
    rot_short: np.ndarray = field(default_factory=_none)  # (rows, M2) complex
    rr_short: np.ndarray = field(default_factory=_none)
    # choose_spans
    choice: np.ndarray = field(default_factory=_none)  # (rows,) index into SPANS
    # average_amplitudes
    amplitudes: np.ndarray = field(default_factory=_none)  # (rows, M) complex
    power: np.ndarray = field(default_factory=_none)  # (rows,) mean |A|²
    noise: np.ndarray = field(default_factory=_none)  # (rows,) what the noise alone would give it
    weights: np.ndarray = field(default_factory=_none)  # (rows, M) the robust weights of the 1 s average
    # detect
    snr_db: np.ndarray = field(default_factory=_none)  # (C, K)
    detected: np.ndarray = field(default_factory=_none)  # (C, K) bool: above the threshold, before the plausibility rules
    treated: np.ndarray = field(default_factory=_none)  # (C, K) bool
    # do_no_harm
    harmless: np.ndarray = field(default_factory=_none)  # (C, K) bool: detected, but treating it would not lower the line

    @classmethod
    def checked(
        cls, sr: object, channels: int, n_samples: int, freq: object, harmonics: object, threshold_db: object
    ) -> AnalysisState:
        """The request, each parameter checked (ParameterError)."""
        sr = _check_sr(sr)
        windows = _search_windows(freq, sr)
        kmax_req = _check_harmonics(harmonics)
        threshold_db = _check_threshold(threshold_db)
        nominal, lo, hi = windows[0]
        return cls(
            sr=sr,
            channels=int(channels),
            n_samples=int(n_samples),
            auto=freq is None,
            windows=windows,
            kmax_req=kmax_req,
            harmonics_given=harmonics is not None,
            threshold_db=threshold_db,
            nominal=nominal,
            search=(lo, hi),
        )

    def highest_harmonic(self, hi: float) -> int:
        """Highest harmonic of a fundamental up to ``hi`` Hz considered: capped by the request and below Nyquist."""
        return min(self.kmax_req, max(int(math.floor((self.sr / 2.0 - NYQUIST_MARGIN_HZ) / hi)), 0))

    @property
    def hop_s(self) -> float:
        """Hop between 1 s frames (s)."""
        return self.hop / self.rate

    def empty(self) -> HumAnalysis:
        """Nothing measured: no harmonic (the signal passes through)."""
        return HumAnalysis.empty(
            sr=self.sr,
            channels=self.channels,
            n_samples=self.n_samples,
            nominal=self.nominal,
            auto=self.auto,
            search=self.search,
            threshold_db=self.threshold_db,
        )

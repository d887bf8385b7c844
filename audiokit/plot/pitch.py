"""The PNG of a ``pitch`` job: the f0 track over the input's spectrogram, unvoiced stretches shaded.

Everything is computed by the pipeline (the pooled spectrogram in dB, the track); here it is only drawn: the
spectrogram relative to its maximum (an 80 dB range, colorbar in dB), a logarithmic frequency axis up to Nyquist or
a linear one up to the first ten harmonics (at least 1 kHz; the axis label says so), the
voiced frames' f0 as a line (gaps where unvoiced), and a grey band along the bottom where frames are unvoiced.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..io import write_bytes_atomic
from .figure import _figure, png_bytes
from .layout import parse_size, title_name

__all__ = ["PitchPicture", "draw_pitch"]

#: dB below the spectrogram's maximum shown by the colour scale.
RANGE_DB = 80.0


@dataclass(frozen=True)
class PitchPicture:
    """What :func:`draw_pitch` draws.

    Attributes
    ----------
    path : str
        The input, as the title names it.
    sr : int
        Sample rate (Hz).
    duration_s : float
        Input length (s).
    image_db : np.ndarray, shape (n_freqs, columns)
        Power spectrogram in dB, max-pooled over time to the figure's width; row ``k`` is ``k * sr / n_fft`` Hz.
    times, f0 : np.ndarray, shape (n_frames,)
        Frame times (s) and f0 (Hz, 0 where unvoiced).
    voiced : np.ndarray, shape (n_frames,), bool
    method : str
        ``pyin`` or ``yin``.
    fmin, fmax : float
        The search range (Hz).
    win_ms, hop_ms : float
        Framing.
    median : float or None
        Median f0 of the voiced frames (Hz).
    log_freq : bool
        Logarithmic frequency axis.
    """

    path: str
    sr: int
    duration_s: float
    image_db: np.ndarray
    times: np.ndarray
    f0: np.ndarray
    voiced: np.ndarray
    method: str
    fmin: float
    fmax: float
    win_ms: float
    hop_ms: float
    median: float | None
    log_freq: bool = False


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` index runs where ``mask`` is True."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


#: A linear axis shows up to this many times the voiced f0's 95th percentile (the first harmonics), at least
#: :data:`MIN_TOP_HZ`, at most Nyquist.
HARMONICS_SHOWN = 10
MIN_TOP_HZ = 1000.0


def _linear_top(picture: PitchPicture, nyquist: float) -> float:
    voiced = picture.f0[picture.voiced]
    if voiced.size == 0:
        return nyquist
    return float(min(nyquist, max(MIN_TOP_HZ, HARMONICS_SHOWN * np.percentile(voiced, 95))))


def draw_pitch(png: str, picture: PitchPicture, *, size: str = "1200x500") -> None:
    """Draw ``picture`` into the PNG ``png`` (atomically; ``-`` is stdout)."""
    width, height = parse_size(size)
    minutes = picture.duration_s > 600
    scale = 60.0 if minutes else 1.0
    fig = _figure((width, height))
    ax = fig.subplots()
    image = picture.image_db
    top = float(np.max(image)) if image.size and np.isfinite(image).any() else 0.0
    nyquist = picture.sr / 2
    n_freqs, columns = image.shape
    x_edges = np.linspace(0, picture.duration_s / scale, columns + 1)
    df = nyquist / max(n_freqs - 1, 1)
    y_edges = np.clip((np.arange(n_freqs + 1) - 0.5) * df, 0, nyquist)
    low = max(picture.fmin / 2, df) if picture.log_freq else 0.0
    if picture.log_freq:
        y_edges[0] = low / 2  # the DC row, drawn below the axis' bottom
    mesh = ax.pcolormesh(x_edges, y_edges, image, cmap="magma", vmin=top - RANGE_DB, vmax=top, shading="flat", rasterized=True)
    if picture.log_freq:
        ax.set_yscale("log")
    top_hz = nyquist if picture.log_freq else _linear_top(picture, nyquist)
    ax.set_ylim(low, top_hz)
    track = np.where(picture.voiced, picture.f0, np.nan)
    ax.plot(picture.times / scale, track, color="cyan", linewidth=1.4, label=f"f0 ({picture.method}, voiced frames)")
    # unvoiced frames: a grey band along the bottom (and a light veil over the spectrogram)
    hop = picture.hop_ms / 1000
    for start, stop in _runs(~picture.voiced):
        a = max(picture.times[start] - hop / 2, 0) / scale
        b = min(picture.times[stop - 1] + hop / 2, picture.duration_s) / scale
        ax.axvspan(a, b, ymin=0, ymax=0.025, color="0.75", linewidth=0)
        ax.axvspan(a, b, color="white", alpha=0.12, linewidth=0)
    ax.axvspan(0, 0, color="0.75", label="unvoiced")
    ax.set_xlim(0, picture.duration_s / scale)
    ax.set_xlabel("time (min)" if minutes else "time (s)")
    shown = "" if top_hz >= nyquist else f", 0-{top_hz:.0f} Hz shown"
    ax.set_ylabel(f"frequency (Hz{shown})")
    median = "-" if picture.median is None else f"{picture.median:.1f} Hz"
    ax.set_title(
        f"{title_name(picture.path)}: {picture.method} f0 {picture.fmin:g}-{picture.fmax:g} Hz, "
        f"win {picture.win_ms:.3g} ms, hop {picture.hop_ms:.3g} ms, median {median}",
        fontsize=10,
    )
    ax.legend(loc="upper right", fontsize=8)
    bar = fig.colorbar(mesh, ax=ax, pad=0.01)
    bar.set_label("power (dB)")
    write_bytes_atomic(png, png_bytes(fig))

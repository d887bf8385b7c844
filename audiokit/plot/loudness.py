"""The PNG of a ``loudness`` job: momentary and short-term loudness against time, the integrated loudness, the
target, and where each channel's true peak is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..io import write_bytes_atomic
from .figure import _figure, png_bytes
from .layout import parse_size, title_name

__all__ = ["LoudnessPicture", "draw_loudness"]

#: dB shown below the top of the plot (the loudest value, the target or the integrated loudness, + 3 dB).
SPAN_DB = 50.0


@dataclass(frozen=True)
class LoudnessPicture:
    """What :func:`draw_loudness` draws (all computed by the pipeline).

    Attributes
    ----------
    path : str
        The input, as the title names it.
    sr, channels, duration_s
        The input's rate (Hz), channel count and length (s).
    momentary, short_term : np.ndarray
        LUFS every 100 ms (-inf for silence), value ``k`` ending at ``(k + 4) / 10`` s and ``(k + 30) / 10`` s.
    integrated : float or None
        LUFS (None: undefined).
    lra : float or None
        LU.
    target : float or None
        The ``--target`` in LUFS.
    true_peaks : sequence of (time_s, dBTP or dBFS)
        One per channel, where its peak is.
    peak_kind : str
        ``"dBTP"`` or ``"dBFS"`` (sample peak, when true peak was not measured).
    """

    path: str
    sr: int
    channels: int
    duration_s: float
    momentary: np.ndarray
    short_term: np.ndarray
    integrated: float | None
    lra: float | None
    target: float | None
    true_peaks: Sequence[tuple[float, float]]
    peak_kind: str = "dBTP"


def _envelope(times: np.ndarray, values: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``2 * columns`` points: the maximum of each run of values (a loud moment stays visible)."""
    if values.size <= 2 * columns:
        return times, values
    runs = np.linspace(0, values.size, 2 * columns + 1).round().astype(np.int64)
    return times[runs[:-1]], np.maximum.reduceat(values, runs[:-1])


def _shown(values: np.ndarray) -> np.ndarray:
    """The values as plotted: silence (-inf) as gaps."""
    return np.where(np.isfinite(values), values, np.nan)


def draw_loudness(png: str, picture: LoudnessPicture, *, size: str = "1200x500") -> None:
    """Draw ``picture`` into the PNG ``png`` (atomically; ``-`` is stdout)."""
    width, height = parse_size(size)
    minutes = picture.duration_s > 600
    scale = 60.0 if minutes else 1.0
    fig = _figure((width, height))
    peaks_ax, ax = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [1, 4]})
    tops: list[float] = []
    for values, first, label, style in (
        (picture.momentary, 4, "momentary (400 ms)", {"linewidth": 0.6, "color": "tab:blue", "alpha": 0.55}),
        (picture.short_term, 30, "short-term (3 s)", {"linewidth": 1.3, "color": "tab:orange"}),
    ):
        if values.size:
            times = (np.arange(values.size) + first) * 0.1 / scale
            times, values = _envelope(times, values, width)
            ax.plot(times, _shown(values), label=label, **style)
            finite = values[np.isfinite(values)]
            tops += [float(finite.max())] if finite.size else []
    if picture.integrated is not None:
        lra = f", LRA {picture.lra:.1f} LU" if picture.lra is not None else ""
        ax.axhline(
            picture.integrated,
            color="tab:green",
            linestyle="--",
            linewidth=1.1,
            label=f"integrated {picture.integrated:.1f} LUFS{lra}",
        )
        tops.append(picture.integrated)
    if picture.target is not None:
        ax.axhline(picture.target, color="tab:red", linestyle=":", linewidth=1.3, label=f"target {picture.target:g} LUFS")
        tops.append(picture.target)
    top = (max(tops) if tops else -20.0) + 3.0
    ax.set_ylim(top - SPAN_DB, top)
    ax.set_xlim(0, max(picture.duration_s, 0.1) / scale)
    _draw_peaks(peaks_ax, picture, scale)
    ax.set_xlabel("time (min)" if minutes else "time (s)")
    ax.set_ylabel("loudness (LUFS)")
    integrated = "-" if picture.integrated is None else f"{picture.integrated:.1f}"
    peaks_ax.set_title(
        f"{title_name(picture.path)}: integrated {integrated} LUFS, {picture.sr} Hz, {picture.channels} ch "
        "(EBU R128 / ITU-R BS.1770-4)",
        fontsize=10,
    )
    ax.grid(True, linewidth=0.3, alpha=0.6)
    ax.legend(loc="lower right", fontsize=8)
    write_bytes_atomic(png, png_bytes(fig))


def _draw_peaks(ax, picture: LoudnessPicture, scale: float) -> None:
    """The top panel: each channel's peak (a marker at its time and level) and the 0 / -1 dB lines."""
    levels = [level for _, level in picture.true_peaks]
    low = min(levels + [-1.0]) - 3.0
    high = max(levels + [0.0]) + 1.5
    ax.axhline(0.0, color="tab:red", linewidth=0.8, linestyle="-")
    ax.axhline(-1.0, color="tab:red", linewidth=0.8, linestyle=":")
    for channel, (time_s, level) in enumerate(picture.true_peaks):
        ax.plot([time_s / scale], [level], marker="v", linestyle="none", markersize=6, label=f"ch {channel} {level:.1f}")
    ax.set_ylim(low, high)
    ax.set_ylabel(f"peak ({picture.peak_kind})", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, linewidth=0.3, alpha=0.6)
    if picture.true_peaks:
        ax.legend(loc="lower right", fontsize=7, ncol=min(len(picture.true_peaks), 8))

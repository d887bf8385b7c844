"""The PNG of a ``spectrum`` job: one line per channel (linear or dBFS), its fitted peaks marked, the title."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..io import write_bytes_atomic
from .figure import png_bytes, spectrum_figure
from .layout import parse_size, title_name

__all__ = ["DB_RANGE", "ENVELOPE_POINTS_PER_PIXEL", "MAX_LINES", "SpectrumFigureOptions", "draw_spectrum", "spectrum_line"]

#: Dynamic range shown by the dB plot, below its highest value (dB).
DB_RANGE = 140.0
#: Most channels drawn as lines (with their peak labels) in one spectrum PNG.
MAX_LINES = 8


class SpectrumFigureOptions(Protocol):
    """What :func:`draw_spectrum` reads of the job's options (``pipelines.spectrum.SpectrumOptions``)."""

    @property
    def linear(self) -> bool: ...  # amplitude in full-scale units, not dBFS

    @property
    def two_sided(self) -> bool: ...  # 0 .. sr, the mirror half drawn

    @property
    def size(self) -> str: ...  # WxH pixels


#: A line longer than this many points per pixel column is reduced to its envelope (:func:`spectrum_line`).
ENVELOPE_POINTS_PER_PIXEL = 4


def spectrum_line(
    spec: Any, options: SpectrumFigureOptions, xlim: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray, float]:
    """One channel's line as :func:`draw_spectrum` draws it: ``(freqs_hz, values, top)``, dBFS or linear.

    The values are :attr:`Spectrum.db` / :attr:`Spectrum.amplitude` (or their
    two-sided forms); ``top`` is their maximum over every bin (the dB plot's
    range is counted from it).  A line of more than
    :data:`ENVELOPE_POINTS_PER_PIXEL` points per pixel column of
    ``options.size`` is cut to the bins shown (``xlim``, one bin beyond each
    end) and becomes its envelope: the minimum and the maximum of each of
    ``2·width`` equal runs of bins, a vertical stroke at the run's centre
    frequency -- what the full line paints at that resolution, every peak
    included, in memory independent of the DFT length.
    """
    if options.linear:
        freqs, values = spec.two_sided() if options.two_sided else (spec.freqs, spec.amplitude)
    else:  # Spectrum.db / two_sided_db: amplitude_to_db of the same amplitudes
        freqs, values = spec.two_sided_db() if options.two_sided else (spec.freqs, spec.db)
    top = float(np.max(values))
    width = parse_size(options.size)[0]
    if freqs.size <= ENVELOPE_POINTS_PER_PIXEL * width:
        return freqs, values, top
    if xlim is not None:
        lo = max(int(np.searchsorted(freqs, xlim[0], side="left")) - 1, 0)
        hi = min(int(np.searchsorted(freqs, xlim[1], side="right")) + 1, freqs.size)
        freqs, values = freqs[lo:hi], values[lo:hi]
        if freqs.size <= ENVELOPE_POINTS_PER_PIXEL * width:
            return freqs, values, top
    edges = np.linspace(0, freqs.size, 2 * width + 1).round().astype(np.int64)
    starts, stops = edges[:-1], edges[1:]
    centres = 0.5 * (freqs[starts] + freqs[stops - 1])
    low, high = np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)
    return np.repeat(centres, 2), np.stack([low, high], axis=1).ravel(), top


def draw_spectrum(
    path: str,
    lines: Sequence[tuple[np.ndarray, np.ndarray, float]],
    found: Sequence[Sequence[Any]],
    report: dict[str, Any],
    options: SpectrumFigureOptions,
    xlim: tuple[float, float] | None,
    *,
    n_channels: int | None = None,
) -> None:
    """Draw the channels' lines and their peaks; write the PNG atomically.

    Parameters
    ----------
    path : str
        The PNG to write (``-``: standard output).
    lines : sequence of (freqs_hz, values, top)
        One per drawn channel, from :func:`spectrum_line` (all with the same frequencies); at most
        :data:`MAX_LINES` are drawn.
    found : sequence of sequences of peaks
        Each channel's fitted peaks (``freq_hz``, ``amplitude``, ``dbfs``), marked and labelled.
    report : dict
        The job's ``--json`` report: ``path``, ``n``, ``n_fft``, ``sr``, ``df``, ``window``, ``nyquist`` name the title.
    options : SpectrumFigureOptions
        ``linear``, ``two_sided`` and ``size``.
    xlim : (float, float) or None
        Frequency range shown (Hz), from ``--fmin``/``--fmax``; None: 0 to past Nyquist.
    n_channels : int, optional
        Channels analysed (default ``len(lines)``): beyond :data:`MAX_LINES` a warning names those drawn.
    """
    linear, two_sided = options.linear, options.two_sided
    n_channels = len(lines) if n_channels is None else n_channels
    if n_channels > MAX_LINES:
        warnings.warn(
            f"{report['path']}: drawing channels 0-{MAX_LINES - 1} of {n_channels} in the PNG "
            "(--channel N or --mix for another; the report and the .npy hold every channel)",
            stacklevel=3,
        )
    lines, found = lines[:MAX_LINES], found[:MAX_LINES]
    nyquist = report["nyquist"]
    freqs = lines[0][0]
    values = lines[0][1] if len(lines) == 1 else np.stack([v for _, v, _ in lines])
    marks = []
    for channel_peaks in found:
        for peak in channel_peaks:
            value = peak.amplitude if linear else peak.dbfs
            if two_sided and 0 < peak.freq_hz < nyquist:  # DC and Nyquist have no mirror to share with
                value = value / 2 if linear else value - 20 * math.log10(2)
            marks.append((peak.freq_hz, value, f"{peak.freq_hz:.2f} Hz, {round(peak.dbfs, 1) + 0.0:.1f} dBFS"))
            if two_sided and 0 < peak.freq_hz < nyquist:
                marks.append((report["sr"] - peak.freq_hz, value, f"mirror of {peak.freq_hz:.2f} Hz"))
    name = title_name(report["path"])
    title = (
        f"{name} — N {report['n']}, n_fft {report['n_fft']}, sr {report['sr']} Hz, Δf {report['df']:.4g} Hz, "
        f"window {report['window']}" + (" — two-sided" if two_sided else "")
    )
    fig = spectrum_figure(
        freqs,
        values,
        title=title,
        nyquist=nyquist,
        peaks=marks,
        two_sided=two_sided,
        size=parse_size(options.size),
        ylabel="amplitude (linear, 1 = full scale)" if linear else "amplitude (dBFS)",
        floor=None if linear else max(top for _, _, top in lines) - DB_RANGE,
        xlim=xlim,
    )
    write_bytes_atomic(path, png_bytes(fig))

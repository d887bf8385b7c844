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

__all__ = ["DB_RANGE", "MAX_LINES", "SpectrumFigureOptions", "draw_spectrum"]

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


def draw_spectrum(
    path: str,
    spectra: Sequence[Any],
    found: Sequence[Sequence[Any]],
    report: dict[str, Any],
    options: SpectrumFigureOptions,
    xlim: tuple[float, float] | None,
) -> None:
    """Draw the spectra (one :class:`~audiokit.dsp.dft.Spectrum` per channel) and their peaks; write the PNG atomically.

    Parameters
    ----------
    path : str
        The PNG to write (``-``: standard output).
    spectra : sequence of Spectrum
        One per channel; at most :data:`MAX_LINES` are drawn (with a warning naming them).
    found : sequence of sequences of peaks
        Each channel's fitted peaks (``freq_hz``, ``amplitude``, ``dbfs``), marked and labelled.
    report : dict
        The job's ``--json`` report: ``path``, ``n``, ``n_fft``, ``sr``, ``df``, ``window`` name the title.
    options : SpectrumFigureOptions
        ``linear``, ``two_sided`` and ``size``.
    xlim : (float, float) or None
        Frequency range shown (Hz), from ``--fmin``/``--fmax``; None: 0 to past Nyquist.
    """
    linear, two_sided = options.linear, options.two_sided
    if len(spectra) > MAX_LINES:
        warnings.warn(
            f"{report['path']}: drawing channels 0-{MAX_LINES - 1} of {len(spectra)} in the PNG "
            "(--channel N or --mix for another; the report and the .npy hold every channel)",
            stacklevel=3,
        )
        spectra, found = spectra[:MAX_LINES], found[:MAX_LINES]
    spec = spectra[0]
    if linear:
        lines = [s.two_sided() if two_sided else (s.freqs, s.amplitude) for s in spectra]
    else:  # Spectrum.db / two_sided_db: amplitude_to_db of the same amplitudes
        lines = [s.two_sided_db() if two_sided else (s.freqs, s.db) for s in spectra]
    freqs = lines[0][0]
    values = lines[0][1] if len(lines) == 1 else np.stack([v for _, v in lines])
    marks = []
    for channel_peaks in found:
        for peak in channel_peaks:
            value = peak.amplitude if linear else peak.dbfs
            if two_sided and 0 < peak.freq_hz < spec.nyquist:  # DC and Nyquist have no mirror to share with
                value = value / 2 if linear else value - 20 * math.log10(2)
            marks.append((peak.freq_hz, value, f"{peak.freq_hz:.2f} Hz, {round(peak.dbfs, 1) + 0.0:.1f} dBFS"))
            if two_sided and 0 < peak.freq_hz < spec.nyquist:
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
        nyquist=spec.nyquist,
        peaks=marks,
        two_sided=two_sided,
        size=parse_size(options.size),
        ylabel="amplitude (linear, 1 = full scale)" if linear else "amplitude (dBFS)",
        floor=None if linear else float(np.max(values)) - DB_RANGE,
        xlim=xlim,
    )
    write_bytes_atomic(path, png_bytes(fig))

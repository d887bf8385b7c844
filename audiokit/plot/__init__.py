"""Figures from computed arrays: the layer that draws, and only draws.

=======================  ==================================================================================
:mod:`.layout`           the resolution (:data:`DPI`), ``--size WxH`` (:func:`parse_size`), :func:`title_name`
:mod:`.pooling`          display max-pooling of long images (:class:`ColumnPooler`, :func:`max_pool_columns`)
:mod:`.picture`          :class:`TimeFreqPicture`: a time-frequency PNG's axes, labels, colours and size, for either renderer
:mod:`.figure`           matplotlib figures (Agg, no pyplot): spectrogram, mel filter bank; :func:`png_bytes`
:mod:`.raster`           the spectrogram/mel PNG with numpy + Pillow, same layout, no matplotlib import (start-up cost)
:mod:`.timefreq`         the ``spectrogram``/``mel``/``mfcc`` PNGs (and ``mel --filterbank``): titles, mel ticks, panels,
                         raster-or-matplotlib
:mod:`.spectrum`         the ``spectrum`` PNG: lines per channel, peak marks and labels, headroom, title
:mod:`.labels`           the layout step of labels: measured boxes placed near their points without overlaps
:mod:`.waveform`         the ``waveform`` picture: min/max envelope panels laid out in pixels, clipped columns in red
:mod:`.waveform_raster`  the ``waveform`` PNG with numpy + Pillow (what the CLI draws; no matplotlib import)
=======================  ==================================================================================

Nothing here computes a spectrum, reads an input or prints: the pipelines hand over arrays (pooled images, the
:class:`~audiokit.dsp.dft.Spectrum` and peaks they computed) and the path to write.  The only conversions are the
picture's own -- dB of the pooled image (:func:`audiokit.dsp.scaling.to_db`, as the job's ``--ref``/``--top-db``
say) and where round frequencies sit on a mel axis (:func:`audiokit.dsp.mel.hz_to_mel`) -- called, never copied.
matplotlib and Pillow are imported inside the functions that draw, and the names of :mod:`.raster`,
:mod:`.timefreq` and :mod:`.spectrum` load on first use, so ``import audiokit.plot`` costs numpy only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .figure import filterbank_figure, png_bytes, spectrogram_figure
from .layout import DPI, parse_size, title_name
from .picture import TimeFreqPicture
from .pooling import ColumnPooler, max_pool_columns

if TYPE_CHECKING:
    from .raster import LayoutError, spectrogram_png
    from .spectrum import draw_spectrum, spectrum_figure
    from .timefreq import check_cmap, draw_features, draw_filterbank, draw_timefreq, mel_ticks, render_timefreq

#: Names loaded from their module on first use (each module's imports stay off ``import audiokit.plot``).
_LAZY = {
    "LayoutError": "raster",
    "spectrogram_png": "raster",
    "draw_spectrum": "spectrum",
    "spectrum_figure": "spectrum",
    "check_cmap": "timefreq",
    "draw_features": "timefreq",
    "draw_filterbank": "timefreq",
    "draw_timefreq": "timefreq",
    "mel_ticks": "timefreq",
    "render_timefreq": "timefreq",
}

__all__ = [
    "DPI",
    "ColumnPooler",
    "LayoutError",
    "TimeFreqPicture",
    "check_cmap",
    "draw_features",
    "draw_filterbank",
    "draw_spectrum",
    "draw_timefreq",
    "filterbank_figure",
    "max_pool_columns",
    "mel_ticks",
    "parse_size",
    "png_bytes",
    "render_timefreq",
    "spectrogram_figure",
    "spectrogram_png",
    "spectrum_figure",
    "title_name",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'audiokit.plot' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

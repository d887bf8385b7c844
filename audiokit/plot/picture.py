"""What a time-frequency PNG shows besides its image: axes, title, colours and size, as one frozen value.

The caller (:mod:`.timefreq`: ``spectrogram``, ``mel``, ``mfcc`` and the Kaldi features) builds a
:class:`TimeFreqPicture` once and hands it, with the display image, to either renderer: numpy + Pillow
(:func:`audiokit.plot.raster.spectrogram_png`) or matplotlib (:func:`audiokit.plot.figure.spectrogram_figure`),
which draw the same picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .axes import Scale

__all__ = ["TimeFreqPicture", "as_panels"]


@dataclass(frozen=True, eq=False)
class TimeFreqPicture:
    """The axes, labels and colours of a time-frequency picture of ``(rows, columns)`` cells per panel.

    Attributes
    ----------
    t_start, t_end : float
        Time (s) at the left edge of the first column and the right edge of the last (the time axis).
    f_low, f_high : float
        Value (Hz, band or coefficient index) at the bottom edge of row 0 and the top edge of the last row.
    title : str
        Names the file and the parameters.
    colorbar_label : str
        The colour scale's unit (one colorbar for every panel).
    cmap : str
        matplotlib colormap name.
    size : (int, int)
        The PNG's width and height (pixels), whatever the number of panels.
    mel_ticks : (positions, labels), optional
        For mel images: y positions in band units and their Hz labels.
    ylabel : str
        The y axis' label (a panel of several is labelled with its channel).
    x_edges : np.ndarray, shape (columns + 1,), optional
        Each column's time edges (s, non-decreasing, from ``t_start`` to ``t_end``); default equal widths.
    y_edges : np.ndarray, shape (rows + 1,), optional
        Each row's edges in y units; default equal heights from ``f_low`` to ``f_high``.
    y_scale : {"linear", "log"}
        The y axis; ``log`` needs ``y_range`` (or ``f_low``) above 0.
    y_range : (float, float), optional
        The y axis' extent, default ``(f_low, f_high)`` (rows outside it are not drawn).
    y_integer : bool
        Integer ticks only (coefficient indices).
    vmin, vmax : float, optional
        The colour range (values outside take the end colours); default the finite minimum and maximum, so two
        pictures drawn with one pair map equal values to equal colours.
    """

    t_start: float
    t_end: float
    f_low: float
    f_high: float
    title: str
    colorbar_label: str = "dB"
    cmap: str = "magma"
    size: tuple[int, int] = (1200, 600)
    mel_ticks: tuple[Sequence[float], Sequence[str]] | None = None
    ylabel: str = "frequency (Hz)"
    x_edges: np.ndarray | None = None
    y_edges: np.ndarray | None = None
    y_scale: Scale = "linear"
    y_range: tuple[float, float] | None = None
    y_integer: bool = False
    vmin: float | None = None
    vmax: float | None = None

    @property
    def y_limits(self) -> tuple[float, float]:
        """The y axis' extent: ``y_range``, else ``(f_low, f_high)``."""
        return self.y_range if self.y_range is not None else (self.f_low, self.f_high)

    def column_edges(self, n_columns: int) -> np.ndarray:
        """``x_edges`` (float64), or ``n_columns + 1`` equal steps from ``t_start`` to ``t_end`` (s)."""
        if self.x_edges is None:
            return np.linspace(self.t_start, self.t_end, n_columns + 1)
        return np.asarray(self.x_edges, dtype=np.float64)

    def row_edges(self, n_rows: int) -> np.ndarray:
        """``y_edges`` (float64), or ``n_rows + 1`` equal steps from ``f_low`` to ``f_high``."""
        if self.y_edges is None:
            return np.linspace(self.f_low, self.f_high, n_rows + 1)
        return np.asarray(self.y_edges, dtype=np.float64)


def as_panels(images: np.ndarray) -> np.ndarray:
    """``images`` shaped ``(rows, columns)`` or ``(channels, rows, columns)`` as ``(panels, rows, columns)``."""
    return images if images.ndim == 3 else images[None]

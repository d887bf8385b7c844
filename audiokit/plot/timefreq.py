"""The PNGs of the time-frequency jobs: ``spectrogram``/``mel`` (:func:`draw_timefreq`) and the speech features
(``mfcc``, Kaldi fbank, deltas, CMVN: :func:`draw_features`).

Each takes the display images the job pooled while streaming (:class:`~audiokit.plot.pooling.ColumnPooler`, one per
channel), picks the panels, writes the title naming the file and parameters, and renders with
:func:`render_timefreq`: numpy + Pillow (:mod:`audiokit.plot.raster`, no matplotlib import) when it can, matplotlib
(:func:`audiokit.plot.figure.spectrogram_figure`) when the raster cannot lay the figure out.  The PNG is written with
:func:`audiokit.io.write_bytes_atomic`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import numpy as np

from ..errors import ParameterError
from ..io import is_stdio, write_bytes_atomic
from .layout import title_name

if TYPE_CHECKING:
    from ..dsp.mel import MelScale
    from ..dsp.scaling import Kind
    from ..io.reader import AudioSource

__all__ = [
    "FeatureFigure",
    "check_cmap",
    "draw_features",
    "draw_timefreq",
    "mel_ticks",
    "panels",
    "render_timefreq",
]

#: Round frequencies (Hz) labelled on a mel image's y axis when they fall inside [fmin, fmax].
MEL_TICK_HZ = (50, 100, 200, 300, 500, 1000, 2000, 3000, 4000, 6000, 8000, 12000, 16000, 20000)


def mel_ticks(n_mels: int, fmin: float, fmax: float, mel_scale: str) -> tuple[list[float], list[str]]:
    """Positions (fractional band index) and labels of :data:`MEL_TICK_HZ` on a mel image's y axis.

    Band ``b`` (0-based) is centred at mel ``m_lo + (b + 1)·(m_hi - m_lo)/(n_mels + 1)``,
    so a frequency ``f`` sits at ``(mel(f) - m_lo)/(m_hi - m_lo)·(n_mels + 1) - 1``.
    """
    from ..dsp.mel import hz_to_mel

    scale = cast("MelScale", mel_scale)
    m_lo, m_hi = hz_to_mel(fmin, scale=scale), hz_to_mel(fmax, scale=scale)
    positions, labels = [], []
    for hz in MEL_TICK_HZ:
        if fmin <= hz <= fmax:
            frac = (hz_to_mel(hz, scale=scale) - m_lo) / (m_hi - m_lo)
            positions.append(float(frac * (n_mels + 1) - 1))
            labels.append(f"{hz // 1000}k" if hz >= 1000 and hz % 1000 == 0 else str(hz))
    return positions, labels


#: Most channels drawn in one PNG (one panel each); a file with more draws its first ones and says so.
MAX_PANELS = 8
#: Pixels of figure height each panel needs for its labels not to overlap; a taller --size is kept.
PANEL_HEIGHT = 150
#: Height (pixels) of the title and time axis around the panels.
FRAME_HEIGHT = 100


def panels(items: list[Any], size: tuple[int, int], name: str) -> tuple[list[Any], tuple[int, int]]:
    """The channels to draw (at most :data:`MAX_PANELS`, with a warning naming them) and the figure size.

    The height grows to ``FRAME_HEIGHT + PANEL_HEIGHT·panels`` when ``size`` is shorter, so labels stay readable
    (128 channels used to take over a minute to squeeze into 600 pixels, unreadably).
    """
    if len(items) > MAX_PANELS:
        warnings.warn(
            f"{name}: drawing channels 0-{MAX_PANELS - 1} of {len(items)} in the PNG (--mix draws their average; the "
            ".npy holds every channel)",
            stacklevel=3,
        )
        items = items[:MAX_PANELS]
    if len(items) > 1:
        size = (size[0], max(size[1], FRAME_HEIGHT + PANEL_HEIGHT * len(items)))
    return items, size


def check_cmap(name: str) -> None:
    """Refuse an unknown ``--cmap`` before any work (ParameterError listing matplotlib's names).

    The default ``magma`` needs no matplotlib (the raster is drawn without it); any other name loads it.
    """
    if name == "magma":
        return
    from matplotlib import colormaps

    if name not in colormaps:
        known = ", ".join(sorted(n for n in colormaps if not n.endswith("_r")))
        raise ParameterError(f"--cmap: unknown colormap {name!r}; matplotlib has: {known} (and each name + '_r')")


def render_timefreq(images: np.ndarray, **kwargs: Any) -> bytes:
    """PNG bytes of :func:`~audiokit.plot.raster.spectrogram_png` (same arguments), or of matplotlib's figure.

    The raster needs no matplotlib (issue 13); matplotlib draws when Pillow lacks FreeType or the font, and when
    the raster cannot lay the figure out (many channels in a small ``--size``: matplotlib squeezes them).
    """
    from . import raster

    if raster.available():
        try:
            return raster.spectrogram_png(images, **kwargs)
        except raster.LayoutError:
            pass
    from .figure import png_bytes, spectrogram_figure

    return png_bytes(spectrogram_figure(images, **kwargs))


def draw_timefreq(
    png_path: str,
    options: Any,
    *,
    source_name: str,
    plan: Any,
    poolers: list[Any],
    kind: Kind,
    ref: float | Literal["max"],
    row_freqs: np.ndarray,
    mel_meta: dict[str, Any],
    size: tuple[int, int],
) -> None:
    """Render the pooled image(s) as dB (re ``ref``, clipped at ``options.top_db``) and write the PNG atomically."""
    from ..dsp.scaling import to_db

    total = len(poolers)
    poolers, size = panels(poolers, size, source_name)
    stacked = poolers[0].image[None] if len(poolers) == 1 else np.stack([p.image for p in poolers])
    top = options.top_db if options.top_db > 0 else None
    db = to_db(stacked, kind=kind, ref=ref, top_db=top)
    n_frames = poolers[0].edges[-1]
    centres = plan.times(int(n_frames), where="centre") if n_frames else np.zeros(1)
    half = plan.hop_length / plan.sr / 2
    t0, t1 = float(centres[0] - half), float(centres[-1] + half)
    name = title_name(source_name)
    title = (
        f"{name} — {options.kind}, sr {plan.sr} Hz, win {plan.win_length} ({1000 * plan.win_length / plan.sr:g} ms), "
        f"hop {plan.hop_length} ({1000 * plan.hop_length / plan.sr:g} ms), n_fft {plan.n_fft}, {plan.window_spec}"
        + (", centred" if plan.center else "")
        + (f", channel {options.channel}" if options.channel is not None else "")
        + (f", channels 0-{len(poolers) - 1} of {total}" if len(poolers) < total else "")
    )
    ref_label = "dB re max" if ref == "max" else f"dB re {ref:g}"
    if options.kind == "mel":
        title += f", {mel_meta['n_mels']} mel ({mel_meta['mel_scale']})"
        ticks = mel_ticks(mel_meta["n_mels"], mel_meta["fmin_hz"], mel_meta["fmax_hz"], mel_meta["mel_scale"])
        png = render_timefreq(
            db,
            t_start=t0,
            t_end=t1,
            f_low=-0.5,
            f_high=mel_meta["n_mels"] - 0.5,
            title=title,
            colorbar_label=ref_label,
            cmap=options.cmap,
            size=size,
            mel_ticks=ticks,
            ylabel="frequency (Hz, mel-spaced)",
        )
    else:
        df = plan.delta_f
        png = render_timefreq(
            db,
            t_start=t0,
            t_end=t1,
            f_low=float(row_freqs[0] - df / 2),
            f_high=float(row_freqs[-1] + df / 2),
            title=title,
            colorbar_label=ref_label,
            cmap=options.cmap,
            size=size,
        )
    write_bytes_atomic(png_path, png)


class FeatureFigure(Protocol):
    """What :func:`draw_features` reads of a features job (``pipelines/features.py``'s ``_FeatureJob``)."""

    @property
    def o(self) -> Any: ...  # FeatureOptions: kind, is_kaldi, compat, timefreq.channel, timefreq.cmap

    @property
    def source(self) -> AudioSource: ...

    @property
    def plan(self) -> Any: ...  # the StftPlan (STFT front end) or None

    @property
    def kopts(self) -> Any: ...  # Kaldi's FbankOptions / MfccOptions (Kaldi front end) or None

    @property
    def n_frames(self) -> int: ...

    @property
    def dim(self) -> int: ...  # rows drawn (mel bands, cepstra, with their deltas)

    @property
    def log(self) -> str | None: ...  # the log unit of the mel values

    @property
    def size(self) -> tuple[int, int]: ...  # WxH pixels


def draw_features(png_path: str, poolers: list[Any], job: FeatureFigure) -> None:
    """Draw a features job's pooled rows (one panel per channel), non-finite values at the lowest drawn, as a PNG.

    The time axis spans the first frame's start to the last frame's end (Kaldi: frame ``m`` covers
    ``[m·hop, m·hop + win)`` samples; STFT: as its plan places the frames); rows are indices (``-0.5 .. dim - 0.5``).
    """
    images = poolers[0].image[None] if len(poolers) == 1 else np.stack([p.image for p in poolers])
    images = np.where(np.isfinite(images), images, np.nanmin(np.where(np.isfinite(images), images, np.inf)))
    o = job.o
    if o.is_kaldi:
        hop, win = job.kopts.window_shift, job.kopts.window_size
        t0 = 0.0
    else:
        hop, win = job.plan.hop_length, job.plan.win_length
        t0 = float(job.plan.times(1, where="start")[0])
    sr = job.source.sr
    t1 = t0 + (job.n_frames - 1) * hop / sr + win / sr
    name = job.source.name if is_stdio(job.source.name) else job.source.name.rsplit("/", 1)[-1]
    what = {"mfcc": f"{job.dim} MFCC", "mel": f"{job.dim} log-mel"}[o.kind]
    if o.is_kaldi:
        what = f"Kaldi {'fbank' if o.kind == 'mel' else 'MFCC'} ({job.dim})"
    title = f"{name} — {what}, sr {sr} Hz, win {win}, hop {hop}" + (f", compat {o.compat}" if o.compat else "")
    if o.timefreq.channel is not None:
        title += f", channel {o.timefreq.channel}"
    label = "coefficient" if o.kind == "mfcc" else ("ln energy" if o.is_kaldi else f"log-mel ({job.log})")
    png = render_timefreq(
        images,
        t_start=t0,
        t_end=t1,
        f_low=-0.5,
        f_high=job.dim - 0.5,
        title=title,
        colorbar_label=label,
        cmap=o.timefreq.cmap,
        size=job.size,
        ylabel="row",
    )
    write_bytes_atomic(png_path, png)


class FilterbankLabels(Protocol):
    """What :func:`draw_filterbank`'s title reads of the mel options (``pipelines.timefreq.MelOptions``)."""

    @property
    def n_mels(self) -> int: ...

    @property
    def mel_scale(self) -> str: ...

    @property
    def norm(self) -> Any: ...  # "slaney", None or a number


def draw_filterbank(png_path: str, bank: np.ndarray, plan: Any, mel: FilterbankLabels, size: str) -> None:
    """Draw the mel filter bank ``bank`` (n_mels, n_freqs) over the plan's bin frequencies (Hz); write the PNG atomically.

    ``plan`` is the job's :class:`~audiokit.dsp.stft.StftPlan` (``sr``, ``n_fft``, ``n_freqs``, ``freqs``);
    ``size`` is the ``--size`` text.
    """
    from .figure import filterbank_figure, png_bytes
    from .layout import parse_size

    title = (
        f"{mel.n_mels} mel filters ({mel.mel_scale}, norm {mel.norm}) over {plan.n_freqs} bins, "
        f"sr {plan.sr} Hz, n_fft {plan.n_fft}"
    )
    write_bytes_atomic(png_path, png_bytes(filterbank_figure(bank, plan.freqs, title=title, size=parse_size(size))))

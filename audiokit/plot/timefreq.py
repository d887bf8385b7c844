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
from .picture import TimeFreqPicture

if TYPE_CHECKING:
    from ..dsp.mel import MelScale
    from ..dsp.scaling import Kind
    from ..io.reader import AudioSource
    from .axes import Scale

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


def panels(items: list[Any], name: str) -> list[Any]:
    """The channels to draw: at most :data:`MAX_PANELS`, with a warning naming them.

    The panels share the figure's height: the PNG is exactly ``--size`` whatever the channel count (the layout
    shortens each panel's label and thins its ticks, :func:`audiokit.plot.raster.figure_layout`).
    """
    if len(items) > MAX_PANELS:
        warnings.warn(
            f"{name}: drawing channels 0-{MAX_PANELS - 1} of {len(items)} in the PNG (--mix draws their average; the "
            ".npy holds every channel)",
            stacklevel=3,
        )
        items = items[:MAX_PANELS]
    return items


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


def render_timefreq(images: np.ndarray, picture: TimeFreqPicture) -> bytes:
    """PNG bytes of :func:`~audiokit.plot.raster.spectrogram_png` (same arguments), or of matplotlib's figure.

    The raster needs no matplotlib (issue 13); matplotlib draws when Pillow lacks FreeType or the font, and when
    the raster cannot lay the figure out (many channels in a small ``--size``: matplotlib squeezes them).
    """
    from . import raster

    if raster.available():
        try:
            return raster.spectrogram_png(images, picture)
        except raster.LayoutError:
            pass
    from .figure import png_bytes, spectrogram_figure

    return png_bytes(spectrogram_figure(images, picture))


def time_edges(poolers: list[Any], *, first_centre: float, hop: float, duration: float) -> np.ndarray:
    """The pooled columns' time edges (s): the picture spans ``[0, duration]`` (:func:`~.axes.frame_time_edges`)."""
    from .axes import frame_time_edges

    return frame_time_edges(poolers[0].edges, first_centre=first_centre, hop=hop, duration=duration)


def _stacked(poolers: list[Any]) -> np.ndarray:
    return poolers[0].image[None] if len(poolers) == 1 else np.stack([p.image for p in poolers])


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
    n_samples: int,
) -> None:
    """Render the pooled image(s) as dB (re ``ref``, clipped at ``options.top_db``) and write the PNG atomically.

    The time axis runs from 0 to ``n_samples/sr`` (each frame drawn over the span nearest its centre); the
    colours span ``options.vmin .. options.vmax`` dB when given (then no ``top_db`` clip), else the image's range;
    ``options.freq_scale`` ``log`` draws the spectrogram's frequency axis logarithmic, from the first bin above
    0 Hz.
    """
    from ..dsp.scaling import to_db

    total = len(poolers)
    poolers = panels(poolers, source_name)
    top = options.top_db if options.top_db > 0 and options.vmin is None else None
    db = to_db(_stacked(poolers), kind=kind, ref=ref, top_db=top)
    hop = plan.hop_length / plan.sr
    x_edges = time_edges(poolers, first_centre=float(plan.times(1, where="centre")[0]), hop=hop, duration=n_samples / plan.sr)
    name = title_name(source_name)
    title = (
        f"{name} — {options.kind}, sr {plan.sr} Hz, win {plan.win_length} ({1000 * plan.win_length / plan.sr:g} ms), "
        f"hop {plan.hop_length} ({1000 * plan.hop_length / plan.sr:g} ms), n_fft {plan.n_fft}, {plan.window_spec}"
        + (", centred" if plan.center else "")
        + (f", channel {options.channel}" if options.channel is not None else "")
        + (f", channels 0-{len(poolers) - 1} of {total}" if len(poolers) < total else "")
    )
    ticks: tuple[list[float], list[str]] | None = None
    y_range: tuple[float, float] | None = None
    y_scale: Scale = "linear"
    if options.kind == "mel":
        title += f", {mel_meta['n_mels']} mel ({mel_meta['mel_scale']})"
        ticks = mel_ticks(mel_meta["n_mels"], mel_meta["fmin_hz"], mel_meta["fmax_hz"], mel_meta["mel_scale"])
        f_low, f_high, ylabel = -0.5, mel_meta["n_mels"] - 0.5, "frequency (Hz, mel-spaced)"
    else:
        df = plan.delta_f
        f_low, f_high = float(row_freqs[0] - df / 2), float(row_freqs[-1] + df / 2)
        log = options.freq_scale == "log"
        low = max(f_low, df / 2) if log else max(f_low, 0.0)
        y_range = (low, min(f_high, plan.sr / 2))
        y_scale = "log" if log else "linear"
        ylabel = "frequency (Hz, log)" if log else "frequency (Hz)"
    picture = TimeFreqPicture(
        t_start=0.0,
        t_end=float(x_edges[-1]),
        f_low=f_low,
        f_high=f_high,
        title=title,
        colorbar_label="dB re max" if ref == "max" else f"dB re {ref:g}",
        cmap=options.cmap,
        size=size,
        mel_ticks=ticks,
        ylabel=ylabel,
        x_edges=x_edges,
        y_scale=y_scale,
        y_range=y_range,
        vmin=options.vmin,
        vmax=options.vmax,
    )
    write_bytes_atomic(png_path, render_timefreq(db, picture))


class FeatureFigure(Protocol):
    """What :func:`draw_features` reads of a features job (``pipelines/features.py``'s ``_FeatureJob``)."""

    @property
    def o(self) -> Any: ...  # FeatureOptions: kind, is_kaldi, compat, deltas, timefreq (channel, cmap, vmin, vmax)

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

    @property
    def n_samples(self) -> int: ...  # samples per channel the frames cover (the time axis: 0 .. n_samples/sr)

    @property
    def mel_meta(self) -> dict[str, Any]: ...  # the STFT front end's mel bank (n_mels, fmin_hz, fmax_hz, mel_scale)


#: The cepstra's default colormap: diverging, white at 0 (``--cmap`` overrides it).
CEPSTRA_CMAP = "RdBu_r"


def draw_features(png_path: str, poolers: list[Any], job: FeatureFigure) -> None:
    """Draw a features job's pooled rows (one panel per channel), non-finite values at the lowest drawn, as a PNG.

    The time axis runs from 0 to the input's duration, each frame drawn over the span nearest its centre (Kaldi:
    frame ``m``'s window ``[m·hop + first, m·hop + first + win)`` samples; STFT: as its plan places the frames).
    Rows: log-mel and Kaldi fbank bands are labelled with the frequencies of their centres (as the ``mel``
    spectrogram; with deltas or an energy row, integer row indices); cepstra with integer coefficient indices.

    Cepstra (``mfcc``) are drawn per coefficient: row ``k`` divided by ``max |c_k|`` over the picture, on a
    diverging colormap (:data:`CEPSTRA_CMAP`) centred at 0 -- c0 (the log energy, hundreds of units) would
    otherwise flatten c1, c2, ... to one colour.  With ``vmin``/``vmax`` the values are drawn as they are, on
    that range (a series of pictures compares).
    """
    images = _stacked(poolers)
    images = np.where(np.isfinite(images), images, np.nanmin(np.where(np.isfinite(images), images, np.inf)))
    o = job.o
    tf = o.timefreq
    sr = job.source.sr
    if o.is_kaldi:
        hop, win = job.kopts.window_shift, job.kopts.window_size
        first_centre = ((0 if job.kopts.snip_edges else hop // 2 - win // 2) + win / 2) / sr
    else:
        hop, win = job.plan.hop_length, job.plan.win_length
        first_centre = float(job.plan.times(1, where="centre")[0])
    x_edges = time_edges(poolers, first_centre=first_centre, hop=hop / sr, duration=job.n_samples / sr)
    name = job.source.name if is_stdio(job.source.name) else job.source.name.rsplit("/", 1)[-1]
    what = {"mfcc": f"{job.dim} MFCC", "mel": f"{job.dim} log-mel"}[o.kind]
    if o.is_kaldi:
        what = f"Kaldi {'fbank' if o.kind == 'mel' else 'MFCC'} ({job.dim})"
    title = (
        f"{title_name(name)} — {what}, sr {sr} Hz, win {win} ({1000 * win / sr:g} ms), hop {hop} ({1000 * hop / sr:g} ms)"
        + (f", compat {o.compat}" if o.compat else "")
        + (f", channel {tf.channel}" if tf.channel is not None else "")
    )
    kw: dict[str, Any] = dict(vmin=tf.vmin, vmax=tf.vmax, cmap=tf.cmap)
    if o.kind == "mfcc":
        label = "coefficient" + (" (c, Δ, ΔΔ)" if o.deltas else "")
        if tf.vmin is None and tf.vmax is None:
            peak = np.max(np.abs(images), axis=(0, 2), keepdims=True)
            images = images / np.where(peak > 0, peak, 1.0)
            kw.update(vmin=-1.0, vmax=1.0, colorbar_label="c_k / max|c_k| (each coefficient)")
        else:
            kw.update(colorbar_label="value" if o.is_kaldi else f"cepstrum ({job.log})")
        kw.update(y_integer=True, ylabel=label)
    else:
        kw.update(colorbar_label="ln energy" if o.is_kaldi else f"log-mel ({job.log})")
        bands = _band_ticks(job)
        if bands is None:
            kw.update(y_integer=True, ylabel="row" + (" (bands, Δ, ΔΔ)" if o.deltas else ""))
        else:
            kw.update(mel_ticks=bands, ylabel="frequency (Hz, mel-spaced)")
    picture = TimeFreqPicture(
        t_start=0.0, t_end=float(x_edges[-1]), x_edges=x_edges, f_low=-0.5, f_high=job.dim - 0.5, title=title, size=job.size, **kw
    )
    write_bytes_atomic(png_path, render_timefreq(images, picture))


def _band_ticks(job: FeatureFigure) -> tuple[list[float], list[str]] | None:
    """Frequency ticks of a log-mel / Kaldi fbank picture whose rows are exactly the bands (else None)."""
    o = job.o
    if o.deltas:
        return None
    if o.is_kaldi:
        k = job.kopts
        if k.use_energy:
            return None
        return mel_ticks(job.dim, k.low_freq, k.mel_high_freq_hz, "htk")  # Kaldi's 1127 ln(1 + f/700) is HTK's mel
    meta = job.mel_meta
    if not meta or meta.get("n_mels") != job.dim:
        return None
    return mel_ticks(meta["n_mels"], meta["fmin_hz"], meta["fmax_hz"], meta["mel_scale"])


class FilterbankLabels(Protocol):
    """What :func:`draw_filterbank`'s title reads of the mel options (``pipelines.timefreq.MelOptions``)."""

    @property
    def n_mels(self) -> int: ...

    @property
    def mel_scale(self) -> str: ...

    @property
    def norm(self) -> Any: ...  # "slaney", None or a number


def draw_filterbank(png_path: str, bank: np.ndarray, plan: Any, mel: FilterbankLabels, size: str, *, scale: str = "mel") -> None:
    """Draw the mel filter bank ``bank`` (n_mels, n_freqs) over the plan's bin frequencies (Hz); write the PNG atomically.

    ``plan`` is the job's :class:`~audiokit.dsp.stft.StftPlan` (``sr``, ``n_fft``, ``n_freqs``, ``freqs``);
    ``size`` is the ``--size`` text.  ``scale`` ``mel`` spaces the frequency axis by the bank's own mel scale
    (equal triangles side by side, each readable; ticks at round Hz), ``linear`` by Hz.
    """
    from .figure import filterbank_figure, png_bytes
    from .layout import parse_size

    title = (
        f"{mel.n_mels} mel filters ({mel.mel_scale}, norm {mel.norm}) over {plan.n_freqs} bins, "
        f"sr {plan.sr} Hz, n_fft {plan.n_fft}"
    )
    figure = filterbank_figure(
        bank, plan.freqs, title=title, size=parse_size(size), mel_scale=mel.mel_scale if scale == "mel" else None
    )
    write_bytes_atomic(png_path, png_bytes(figure))

"""The ``spectrogram`` and ``mel`` jobs: file → STFT (→ mel) → ``.npy`` + sidecar and/or PNG, streamed.

file → blocks → :class:`~audiokit.dsp.stft.StftStream` (power, magnitude or
complex; mel filter bank for ``mel``) → per chunk: scaled and appended to the
``.npy``, and max-pooled into the display image → PNG.  Memory holds one
block, one chunk of frames and the display image, whatever the input length.
Options arrive as the user typed them (:class:`StftOptions`,
:class:`MelOptions`, :class:`TimeFreqOptions`) and are resolved once the
input's sample rate is known.
"""

from __future__ import annotations

import contextlib
import functools
import math
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from .. import defaults
from ..errors import InputError, ParameterError
from ..io import check_distinct, check_output_path, derived_output, is_stdio, outputs_together
from ..io.npy import NpyFrameWriter, sidecar_path, write_sidecar
from ..io.reader import BLOCK_SAMPLES, AudioSource
from .params import InputOptions, check_channel, check_channel_of, check_figure_path, choice, duration_samples, frequency_hz
from .progress import SILENT, Reporter
from .registry import SourceFacts
from .sidecar import timefreq_metadata

if TYPE_CHECKING:
    from ..dsp.mel import MelNorm, MelScale
    from ..dsp.scaling import Kind
    from ..dsp.stft.forward import Output
    from ..dsp.stft.plan import PadMode

__all__ = [
    "StftOptions",
    "MelOptions",
    "TimeFreqOptions",
    "TimeFreqResult",
    "timefreq",
    "mel_bank",
    "pick_channels",
    "SCALES",
]

SCALES = ("db", "power", "magnitude")
#: A bare-number window shorter than this (seconds) draws a "did you mean ms?" warning (5 ms: speech uses 20-50 ms).
PLAUSIBLE_WINDOW_S = 5e-3
PAD_MODES = ("constant", "reflect")
LOGS = ("db", "ln", "log10")


@dataclass(frozen=True)
class StftOptions:
    """STFT options as typed: durations (``25ms``, ``0.025s``, samples), window name, framing."""

    win: str = defaults.WIN
    hop: str = defaults.HOP
    nfft: str | None = defaults.NFFT
    window: str = defaults.WINDOW
    symmetric: bool = False
    center: bool = defaults.CENTER
    pad_mode: str = defaults.PAD_MODE
    fft: str | None = None

    def plan(self, sr: int, *, dtype: Literal["float32", "float64"] = "float32") -> Any:
        """The :class:`~audiokit.dsp.stft.StftPlan` at ``sr`` (durations rounded to samples), computing in ``dtype``."""
        from ..dsp.stft import StftPlan

        win = duration_samples("--win", self.win, sr, plausible_s=PLAUSIBLE_WINDOW_S)
        hop = duration_samples("--hop", self.hop, sr)
        n_fft = duration_samples("--nfft", self.nfft, sr) if self.nfft is not None else win
        if n_fft < win:
            raise ParameterError(f"--nfft: {n_fft} samples is shorter than the window ({win} samples); it must be >= --win")
        if hop > win:
            warnings.warn(
                f"--hop {hop} samples is longer than the window ({win} samples): {hop - win} samples between frames "
                "are never analysed",
                stacklevel=2,
            )
        pad_mode = choice("--pad-mode", self.pad_mode, PAD_MODES)
        return StftPlan(
            sr=sr,
            win_length=win,
            hop_length=hop,
            n_fft=n_fft,
            window=self.window,
            periodic=not self.symmetric,
            center=self.center,
            pad_mode=cast("PadMode", pad_mode),
            dtype=dtype,
        )


@dataclass(frozen=True)
class MelOptions:
    """Mel filter bank options: band count, scale (``htk``/``slaney``), norm (``none``/``slaney``), log (db/ln/log10)."""

    n_mels: int = defaults.N_MELS
    mel_scale: str = defaults.MEL_SCALE
    norm: str = defaults.MEL_NORM
    log: str = defaults.LOG

    def checked(self) -> MelOptions:
        """A copy with the choices lower-cased and validated (ParameterError naming the option)."""
        return MelOptions(
            n_mels=self.n_mels,
            mel_scale=choice("--mel-scale", self.mel_scale, ("htk", "slaney")),
            norm=choice("--norm", self.norm, ("none", "slaney")),
            log=choice("--log", self.log, LOGS),
        )


@dataclass(frozen=True)
class TimeFreqOptions:
    """Everything a ``spectrogram`` (``mel is None``) or ``mel`` job was asked to compute and draw.

    ``ref`` and ``top_db`` None ("unset") take each output's default (:mod:`audiokit.defaults`): absolute dB
    without a clip in the ``.npy`` (:attr:`npy_ref`, :attr:`npy_top_db`; features compare across files), ``max``
    and 80 dB in the PNG (:attr:`png_ref`, :attr:`png_top_db`); a value given applies to both.  ``top_db`` 0
    disables the clip.  ``channel`` (0-based) analyses one channel of the input, ``mix`` their average.
    """

    stft: StftOptions = field(default_factory=StftOptions)
    mel: MelOptions | None = None
    fmin: str | None = None
    fmax: str | None = None
    mix: bool = False
    scale: str = defaults.SCALE
    ref: str | None = None
    top_db: float | None = None
    cmap: str = "magma"
    size: str = "1200x600"
    complex_out: bool = False
    #: Floor before the log (``--amin``); None: :data:`audiokit.dsp.scaling.AMIN` (1e-10 power, 1e-5 magnitude).
    amin: float | None = None
    channel: int | None = None

    @property
    def kind(self) -> Literal["spectrogram", "mel"]:
        """``mel`` when a mel bank is asked for, else ``spectrogram``."""
        return "spectrogram" if self.mel is None else "mel"

    @property
    def npy_ref(self) -> str:
        """``--ref`` of the saved array: as given, else :data:`audiokit.defaults.FEATURE_REF` (absolute)."""
        return f"{defaults.FEATURE_REF:g}" if self.ref is None else self.ref

    @property
    def png_ref(self) -> str:
        """``--ref`` of the PNG: as given, else :data:`audiokit.defaults.PICTURE_REF` (``max``)."""
        return defaults.PICTURE_REF if self.ref is None else self.ref

    @property
    def npy_top_db(self) -> float | None:
        """Clip of the saved array in dB below its peak: as given (0: none), else none (None)."""
        top = defaults.FEATURE_TOP_DB if self.top_db is None else self.top_db
        return top if top is not None and top > 0 else None

    @property
    def png_top_db(self) -> float | None:
        """Range of the PNG in dB below its peak: as given (0: none), else :data:`audiokit.defaults.PICTURE_TOP_DB`."""
        top = defaults.PICTURE_TOP_DB if self.top_db is None else self.top_db
        return top if top > 0 else None


@dataclass(frozen=True)
class TimeFreqResult:
    """Written files (``.npy``, sidecar, then PNG; no ``-``), whether the PNG went to stdout, the array shape,
    and the input as opened (None for the filter bank, which reads no input)."""

    written: list[str]
    png_to_stdout: bool
    shape: tuple[int, ...] | None
    source: SourceFacts | None = None


def parse_ref(text: str | None) -> float | Literal["max"]:
    """``--ref``: ``max`` or a positive number (the linear value that reads 0 dB); None (unset) is the ``.npy``'s
    default, :data:`audiokit.defaults.FEATURE_REF`."""
    if text is None:
        return float(defaults.FEATURE_REF)
    if text.lower() == "max":
        return "max"
    try:
        value = float(text)
    except ValueError:
        raise ParameterError(f"--ref: {text!r} is not 'max' or a positive number") from None
    if not value > 0 or not math.isfinite(value):
        raise ParameterError(f"--ref: {text!r} must be 'max' or a number > 0")
    return value


def default_outputs(path: str, kind: str, png: str | None, npy: str | None) -> tuple[str | None, str | None]:
    """(png, npy) destinations: as given; a PNG beside the input when neither is given. Checked, not created."""
    if png is None and npy is None:
        png = str(derived_output(path, kind, ".png"))
    if npy is not None and is_stdio(npy):
        raise ParameterError("--npy: give a file path (the JSON sidecar is written beside it)")
    if npy is not None and not npy.endswith(".npy"):
        raise ParameterError(f"--npy: {npy!r} must end in .npy")
    check_distinct({"-o": png, "--npy": npy, "the sidecar of --npy": npy and sidecar_path(npy)})
    for out in (png, npy, npy and sidecar_path(npy)):
        if out is not None:
            check_output_path(out, [path])
    check_figure_path(png)
    return png, npy


def band_rows(options: TimeFreqOptions, plan: Any) -> tuple[slice, np.ndarray]:
    """Rows of the spectrogram kept by ``--fmin/--fmax`` (a slice of bins) and their centre frequencies (Hz)."""
    fmin = frequency_hz("--fmin", options.fmin) if options.fmin is not None else 0.0
    fmax = frequency_hz("--fmax", options.fmax) if options.fmax is not None else float(plan.freqs[-1])
    if fmax > plan.sr / 2:  # as the mel bank refuses it: nothing lies above the Nyquist frequency
        raise ParameterError(f"--fmax {fmax:g} Hz is above the Nyquist frequency sr/2 = {plan.sr / 2:g} Hz")
    rows = plan.bins_between(fmin, fmax)
    return rows, plan.freqs[rows]


def mel_bank(options: TimeFreqOptions, plan: Any) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
    """The float32 mel filter bank ``(n_mels, n_freqs)``, its sidecar fields and its band centres (Hz)."""
    from ..dsp.mel import mel_frequencies

    mel = (options.mel or MelOptions()).checked()
    norm = None if mel.norm == "none" else cast("MelNorm", mel.norm)
    mel_scale = cast("MelScale", mel.mel_scale)
    fmin = frequency_hz("--fmin", options.fmin) if options.fmin is not None else 0.0
    fmax = frequency_hz("--fmax", options.fmax) if options.fmax is not None else plan.sr / 2
    bank = _cached_bank(plan.sr, plan.n_fft, mel.n_mels, fmin, fmax, mel_scale, norm)
    centres = mel_frequencies(mel.n_mels + 2, fmin=fmin, fmax=fmax, scale=mel_scale)[1:-1]
    meta = {"n_mels": mel.n_mels, "fmin_hz": fmin, "fmax_hz": fmax, "mel_scale": mel.mel_scale, "norm": mel.norm}
    return bank, meta, centres


@functools.lru_cache(maxsize=8)
def _cached_bank(
    sr: int, n_fft: int, n_mels: int, fmin: float, fmax: float, mel_scale: MelScale, norm: MelNorm | None
) -> np.ndarray:
    """The float32 mel bank, built once per set of parameters (a batch of thousands of files reuses it); read-only."""
    from ..dsp.mel import mel_filterbank

    bank = mel_filterbank(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, scale=mel_scale, norm=norm, dtype=np.float32)
    bank.flags.writeable = False
    return bank


def _values_text(kind: str, power_kind: Kind, scale: str, log: str, complex_out: bool) -> str:
    """The sidecar's ``values`` formula."""
    linear = "|X|^2" if power_kind == "power" else "|X|"
    if kind == "mel":
        linear = f"mel filterbank @ {linear}"
    if complex_out:
        return "complex STFT X[k, m] (unnormalised forward DFT)"
    if scale == "db" and log in ("ln", "log10"):
        return f"{log}(max({linear}, amin)) - log_ref, clipped below (max - log_ref - top_db in {log} units)"
    if scale == "db":
        factor = 10 if power_kind == "power" else 20
        return f"{factor}*log10(max({linear}, amin)) - ref_db, clipped below (max - ref_db - top_db)"
    return linear


def timefreq(
    path: str,
    options: TimeFreqOptions,
    *,
    png: str | None = None,
    npy: str | None = None,
    inputs: InputOptions = InputOptions(),
    reporter: Reporter = SILENT,
) -> TimeFreqResult:  # noqa: B008
    """Compute the spectrogram or mel spectrogram of ``path``; save ``npy`` (+ sidecar) and/or draw ``png``.

    With neither ``png`` nor ``npy``, the PNG goes to ``<stem>.<kind>.png`` beside the input.
    ``png`` ``-`` writes the PNG bytes to standard output.

    The STFT runs in single precision.  A float input with samples beyond :data:`SAFE_PEAK` (where ``|X|²``
    could overflow float32) is transformed again in double precision; values that still cannot be stored
    (power beyond the float32 range) are an :class:`~audiokit.errors.InputError`, never NaN/Inf in the output.
    """
    from ..plot import parse_size

    check_channel(options.channel, options.mix)
    job = _Job(
        options=options,
        scale=choice("--scale", options.scale, SCALES),
        log=(options.mel or MelOptions()).checked().log,
        ref=parse_ref(options.npy_ref),
        size=parse_size(options.size),
    )
    with inputs.open(path) as source:
        check_channel_of(options.channel, source)
        png_path, npy_path = default_outputs(path, options.kind, png, npy)
        if png_path is not None:
            from ..plot.timefreq import check_cmap

            check_cmap(options.cmap)
        if job.want_complex and npy_path is None:
            raise ParameterError("--complex needs --npy PATH (the complex STFT is saved for istft)")
        try:
            written, shape = job.run(source, png_path, npy_path, reporter, "float32")
        except _BeyondSinglePrecision:
            written, shape = job.run(source, png_path, npy_path, reporter, "float64")
    return TimeFreqResult(written=written, png_to_stdout=is_stdio(png_path), shape=shape, source=SourceFacts.of(source))


#: Largest input sample (full-scale units) for which single precision is safe: |X| <= n_fft·peak stays below
#: 2**(24+20) for n_fft <= 2**24, so |X|² < 2**88, far inside float32 (2**128) after the mel sums too.
SAFE_PEAK = float(2**20)


class _BeyondSinglePrecision(Exception):
    """A float input exceeds :data:`SAFE_PEAK`: the job restarts in double precision."""


@dataclass
class _Job:
    """One spectrogram/mel computation: the resolved options and the streaming loop."""

    options: TimeFreqOptions
    scale: str
    log: str
    ref: float | Literal["max"]
    size: tuple[int, int]

    @property
    def want_complex(self) -> bool:
        return self.options.complex_out and self.options.kind == "spectrogram"

    def run(
        self,
        source: AudioSource,
        png_path: str | None,
        npy_path: str | None,
        reporter: Reporter,
        dtype: Literal["float32", "float64"],
    ) -> tuple[list[str], tuple[int, ...]]:
        """Stream ``source`` through the STFT in ``dtype``; write the outputs together; return (written, shape)."""
        from ..dsp.stft import StftStream
        from ..engine import get_backend
        from ..plot import ColumnPooler

        options, kind = self.options, self.options.kind
        plan = options.stft.plan(source.sr, dtype=dtype)
        channels = 1 if options.mix or options.channel is not None else source.channels
        filterbank: np.ndarray | None = None
        mel_meta: dict[str, Any] = {}
        row_slice = slice(None)
        if kind == "mel":
            filterbank, mel_meta, row_freqs = mel_bank(options, plan)
            rows = filterbank.shape[0]
        else:
            row_slice, row_freqs = band_rows(options, plan)
            rows = row_freqs.size
        power_kind: Kind = "magnitude" if self.scale == "magnitude" else "power"
        output: Output = "complex" if self.want_complex else power_kind
        stream = StftStream(plan, output=output, filterbank=filterbank, backend=get_backend(options.stft.fft))
        n_frames = plan.n_frames(source.n_samples)
        shape = (rows, n_frames) if channels == 1 else (channels, rows, n_frames)
        npy_dtype = np.complex64 if self.want_complex else np.float32
        # the display image is pooled only when a PNG is drawn; silence is then detected on the input
        poolers = [ColumnPooler(rows, n_frames, self.size[0]) for _ in range(channels)] if png_path is not None else []
        heard = False
        peak_db = -math.inf
        db_out = self.scale == "db" and not self.want_complex
        watch_input = source.is_float and dtype == "float32"
        amin = _amin(options.amin, power_kind)

        def consume(chunk: np.ndarray, npy_writer: NpyFrameWriter | None) -> None:
            nonlocal peak_db
            if chunk.shape[-1] == 0:
                return
            chunk = chunk[..., row_slice, :]
            if poolers:
                display = chunk.real**2 + chunk.imag**2 if self.want_complex else chunk
                for c, pooler in enumerate(poolers):
                    pooler.add(display[c])
            if npy_writer is None:
                return
            saved = chunk
            if db_out:
                saved = _to_log(chunk, power_kind, self.log, amin)
                peak_db = max(peak_db, float(saved.max()))
            if dtype == "float64":
                saved = _storable(saved, npy_dtype, source.name, linear=not db_out and not self.want_complex)
            npy_writer.write(saved[0] if channels == 1 else saved)

        written: list[str] = []
        with outputs_together(), contextlib.ExitStack() as stack:
            if dtype == "float64":  # overflow is possible here and checked on the results (_storable)
                stack.enter_context(np.errstate(over="ignore", invalid="ignore"))
            npy_writer = stack.enter_context(NpyFrameWriter(npy_path, shape, npy_dtype)) if npy_path else None
            with reporter.progress(f"{kind} {source.name}", source.n_samples) as advance:
                # DOUBLE samples are read as such: beyond the float32 range they would read as Inf
                read_dtype = "float64" if dtype == "float64" or source.subtype == "DOUBLE" else "float32"
                for block in source.blocks(BLOCK_SAMPLES, dtype=read_dtype):
                    if watch_input and block.size and float(np.abs(block).max()) > SAFE_PEAK:
                        raise _BeyondSinglePrecision
                    heard = heard or bool(np.any(block))
                    block = pick_channels(block, options.channel, options.mix)
                    consume(stream.push(block.astype(dtype, copy=False)), npy_writer)
                    advance(block.shape[1])
                consume(stream.finish(), npy_writer)
            if npy_writer is not None and npy_path is not None:
                ref_db = None
                if db_out:
                    ref_db = _apply_reference(npy_writer, self.ref, options.npy_top_db, peak_db, power_kind, self.log, amin)
                rows_meta: dict[str, Any]
                if kind == "mel":
                    rows_meta = {"mel": mel_meta, "mel_centre_hz": [round(float(f), 6) for f in row_freqs]}
                else:
                    first_bin = int(round(row_freqs[0] / plan.delta_f))
                    rows_meta = {"freq_hz": {"formula": "k * sr / n_fft", "first_bin": first_bin, "count": int(row_freqs.size)}}
                if db_out and self.log != "db":  # ln/log10: the reference subtracted, in the log's unit
                    rows_meta["log_ref"] = ref_db
                meta = timefreq_metadata(
                    kind=kind,
                    source=source,
                    plan=plan,
                    channels=channels,
                    mixed=options.mix,
                    shape=shape,
                    dtype=npy_dtype,
                    values=_values_text(kind, power_kind, self.scale, self.log, self.want_complex),
                    scale="complex" if self.want_complex else (self.log if db_out and self.log != "db" else self.scale),
                    amin=amin if db_out else None,
                    ref=self.ref if ref_db is not None else None,
                    ref_db=ref_db if self.log == "db" else None,
                    top_db=options.npy_top_db if ref_db is not None else None,
                    rows=rows_meta,
                    fft=options.stft.fft,
                )
                meta["channel"] = options.channel  # the input channel analysed (None: all, or their mix)
                written += [npy_path, str(write_sidecar(npy_path, meta))]
            if not heard:
                warnings.warn(f"{source.name}: the input is digital silence; every value is the floor", stacklevel=3)
            if png_path is not None:
                from ..plot.timefreq import draw_timefreq

                draw_timefreq(
                    png_path,
                    replace(options, top_db=options.png_top_db or 0.0),
                    source_name=source.name,
                    plan=plan,
                    poolers=poolers,
                    kind="power" if self.want_complex else power_kind,
                    ref=parse_ref(options.png_ref),
                    row_freqs=row_freqs,
                    mel_meta=mel_meta,
                    size=self.size,
                )
                if not is_stdio(png_path):
                    written.insert(0, png_path)
        return written, shape


def pick_channels(block: np.ndarray, channel: int | None, mix: bool) -> np.ndarray:
    """The ``(channels, n)`` block analysed: channel ``channel`` alone (``--channel``), the mean (``--mix``) or all.

    Both keep the channel axis (``(1, n)``); the channel is a view, so its samples are those of the file, bit for bit.
    """
    if mix:
        return np.asarray(block.mean(axis=0, keepdims=True))
    if channel is not None:
        return block[channel : channel + 1]
    return block


def _storable(values: np.ndarray, dtype: Any, name: str, *, linear: bool) -> np.ndarray:
    """``values`` cast to the stored ``dtype``; an InputError when they do not fit (never NaN/Inf in a file)."""
    with np.errstate(over="ignore", invalid="ignore"):
        cast_values = values.astype(dtype)
    if not np.isfinite(cast_values).all():
        hint = "use --scale db, or scale the input down" if linear else "scale the input down"
        raise InputError(f"the input's values are too large for a finite {np.dtype(dtype).name} result ({hint})", name)
    return cast_values


def _amin(amin: float | None, power_kind: Kind) -> float:
    """``--amin`` checked, or the default floor of :data:`audiokit.dsp.scaling.AMIN` for ``power_kind``."""
    from ..dsp.scaling import AMIN

    if amin is None:
        return AMIN[power_kind]
    if not (isinstance(amin, (int, float)) and math.isfinite(amin) and amin > 0):
        raise ParameterError(f"--amin must be a number > 0, got {amin!r}")
    return float(amin)


def _to_log(chunk: np.ndarray, power_kind: Kind, log: str, amin: float) -> np.ndarray:
    """Power/magnitude chunk to the saved log scale, floored at ``amin``: dB re 1 (unclipped), ln or log10."""
    from ..dsp.scaling import to_db

    if log == "ln":
        return cast(np.ndarray, np.log(np.maximum(chunk, amin)))
    if log == "log10":
        return cast(np.ndarray, np.log10(np.maximum(chunk, amin)))
    return to_db(chunk, kind=power_kind, ref=1.0, amin=amin, top_db=None)


def _apply_reference(
    npy: NpyFrameWriter,
    ref: float | Literal["max"],
    top_db: float | None,
    peak: float,
    power_kind: Kind,
    log: str = "db",
    amin: float | None = None,
) -> float | None:
    """Second pass over the saved log values: subtract the reference, clip at ``top_db``; return the reference.

    The same rule as :func:`audiokit.log_melspectrogram` for every log: the reference is ``log(max(amin, ref))``
    (``ref max``: the peak) and ``top_db`` decibels become ``top_db * ln(10) / 10`` nepers (``ln``, power) or
    ``top_db / 10`` decades (``log10``, power; ``/ 20`` for magnitude).  Returns the reference in the log's unit
    (dB for ``db``), or None for ``ln``/``log10`` when nothing was changed (reference 0 and no clip).
    """
    from ..dsp.scaling import DB_FACTOR, reference_db, rescale_db

    top = top_db if top_db is not None and top_db > 0 else None
    if log == "db":
        ref_db = (
            reference_db(ref, peak, power_kind)
            if amin is None or ref == "max"
            else DB_FACTOR[power_kind] * math.log10(max(amin, float(ref)))
        )
        if ref_db != 0.0 or top is not None:
            npy.rewrite(lambda chunk: rescale_db(chunk, ref_db=ref_db, top_db=top, max_db=peak))
        return ref_db
    floor = amin if amin is not None else 0.0
    to_unit = math.log if log == "ln" else math.log10
    ref_l = peak if ref == "max" else to_unit(max(floor, float(ref)))
    top_l = None if top is None else (top * math.log(10.0) if log == "ln" else top) / DB_FACTOR[power_kind]
    if ref_l == 0.0 and top_l is None:
        return None
    npy.rewrite(lambda chunk: rescale_db(chunk, ref_db=ref_l, top_db=top_l, max_db=peak))
    return ref_l


def filterbank_job(
    path: str, options: TimeFreqOptions, *, png: str | None, npy: str | None, inputs: InputOptions = InputOptions()
) -> TimeFreqResult:  # noqa: B008 (frozen)
    """``mel --filterbank``: draw the triangles and/or save the ``(n_mels, n_freqs)`` matrix (rate from ``path``)."""
    with inputs.open(path) as source:
        sr = source.sr
    png, npy = default_outputs(path, "melfb", png, npy)
    plan = options.stft.plan(sr)
    mel = (options.mel or MelOptions()).checked()
    bank, mel_meta, _ = mel_bank(options, plan)
    written: list[str] = []
    with outputs_together():
        _save_filterbank(npy, png, bank, mel_meta, plan, mel, options.size, written)
    return TimeFreqResult(written=written, png_to_stdout=is_stdio(png), shape=tuple(bank.shape))


def _save_filterbank(
    npy: str | None,
    png: str | None,
    bank: np.ndarray,
    mel_meta: dict[str, Any],
    plan: Any,
    mel: MelOptions,
    size: str,
    written: list[str],
) -> None:
    """Save the bank's matrix (+ sidecar) and/or draw its triangles; append the written paths."""
    from ..io.npy import save_npy

    sr = plan.sr
    if npy is not None:
        from .. import __version__

        meta = {
            "kind": "mel_filterbank",
            "shape": list(bank.shape),
            "dtype": "float32",
            "layout": "(n_mels, n_freqs)",
            "sr": sr,
            "n_fft": plan.n_fft,
            **mel_meta,
            "freq_hz": {"formula": "k * sr / n_fft", "count": plan.n_freqs},
            "audiokit_version": __version__,
        }
        written += [npy, str(save_npy(npy, bank, meta))]
    if png is not None:
        from ..plot.timefreq import draw_filterbank

        draw_filterbank(png, bank, plan, mel, size)
        if not is_stdio(png):
            written.insert(0, png)

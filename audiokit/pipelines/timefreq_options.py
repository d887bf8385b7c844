"""Options of the time-frequency jobs (``spectrogram``, ``mel``, ``mfcc``) as typed, and their one rate-free parse.

=====================  ============================================================================================
:class:`StftOptions`   framing as typed (``25ms``, samples), window, centring; :meth:`~StftOptions.plan` at a rate
:class:`MelOptions`    the mel bank (bands, scale, norm) and the log unit of ``--scale db``
:class:`TimeFreqOptions`  a ``spectrogram``/``mel``: the STFT front end, log/``--ref``/``--top-db``/``--amin``,
                       the outputs (PNG size and colours, ``--channel``/``--mix``, ``--complex``)
:class:`KaldiFrontend` the Kaldi-only switches (``--dither``, ``--snip-edges``, ...; ``--compat kaldi``)
:class:`FeatureOptions`  a :class:`TimeFreqOptions` plus the steps after the spectrum: the kind (``mel``/``mfcc``),
                       the preset (Kaldi's or Whisper's front end), DCT, CMVN, deltas, Whisper's 30 s window
=====================  ============================================================================================

Values stay as the user typed them (the batch fingerprints them as such); :meth:`FeatureOptions.check` (and
:meth:`TimeFreqOptions.check`) parse everything that needs no sample rate, once, into a :class:`Parsed`, raising
:class:`~audiokit.errors.ParameterError` naming the option.  The job resolves the rest (durations to samples,
the mel bank) once the input's rate is known.  Nothing here imports the pipeline, a front end or a plot.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from .. import defaults
from ..errors import ParameterError
from ..validate import check_choice, check_int
from .compat import KALDI_COMPATS
from .memo import memoized
from .params import check_channel, check_syntax, choice, duration_samples

if TYPE_CHECKING:
    from ..dsp.scaling import Kind
    from ..dsp.stft.plan import PadMode

__all__ = [
    "CMVN_MODES",
    "DELTA_METHODS",
    "FREQ_SCALES",
    "FeatureOptions",
    "KALDI_WINDOWS",
    "KaldiFrontend",
    "LOGS",
    "MelOptions",
    "PAD_MODES",
    "Parsed",
    "SCALES",
    "StftOptions",
    "TimeFreqOptions",
    "WINDOW_POSITIONS",
    "parse_ref",
]

SCALES = ("db", "power", "magnitude")
PAD_MODES = ("constant", "reflect")
#: ``--log`` choices: dB (10*log10 of power), natural log, log10.
LOGS = ("db", "ln", "log10")
DELTA_METHODS = ("kaldi", "librosa")
CMVN_MODES = ("none", "utterance", "sliding")
WINDOW_POSITIONS = ("center", "start")
#: ``--freq-scale`` choices of the spectrogram PNG.
FREQ_SCALES = ("linear", "log")
KALDI_WINDOWS = ("povey", "hamming", "hanning", "rectangular", "blackman", "sine")
#: A bare-number window shorter than this (seconds) draws a "did you mean ms?" warning (5 ms: speech uses 20-50 ms).
PLAUSIBLE_WINDOW_S = 5e-3
#: Kaldi's floor on energies, C's ``FLT_EPSILON`` (the only ``--amin`` ``--compat kaldi`` accepts).
_FLT_EPSILON = float(2.0**-23)


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
        """The :class:`~audiokit.dsp.stft.StftPlan` at ``sr`` (durations rounded to samples), computing in ``dtype``
        (made once per process for these options, rate and dtype: a batch reuses it; its warnings are replayed)."""
        return _stft_plan(self, sr, dtype)

    def _plan(self, sr: int, dtype: Literal["float32", "float64"]) -> Any:
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
    and 80 dB in the PNG (:attr:`png_top_db`); a value given applies to both.  ``top_db`` 0 disables the clip.
    ``channel`` (0-based) analyses one channel of the input, ``mix`` their average.
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
    #: The PNG's colour range in dB (the colorbar's unit) re the PNG's ``--ref``: None takes the image's own range.
    vmin: float | None = None
    vmax: float | None = None
    #: The spectrogram PNG's frequency axis: ``linear`` or ``log`` (from the first bin above 0 Hz).
    freq_scale: str = "linear"

    @property
    def kind(self) -> Literal["spectrogram", "mel"]:
        """``mel`` when a mel bank is asked for, else ``spectrogram``."""
        return "spectrogram" if self.mel is None else "mel"

    @property
    def npy_ref(self) -> str:
        """``--ref`` of the saved array as typed: as given, else :data:`audiokit.defaults.FEATURE_REF` (absolute)."""
        return f"{defaults.FEATURE_REF:g}" if self.ref is None else self.ref

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

    def check(self) -> Parsed:
        """Parse and check what needs no sample rate (ParameterError naming the option); see :class:`Parsed`."""
        return FeatureOptions(kind=self.kind, timefreq=self).check()


@dataclass(frozen=True)
class KaldiFrontend:
    """Kaldi-only options as typed (``--dither``, ``--seed``, ``--preemphasis``, ...); Kaldi's meaning each."""

    dither: float = 0.0
    seed: int | None = None
    preemphasis: float = 0.97
    remove_dc: bool = True
    snip_edges: bool = True
    use_energy: bool = False
    raw_energy: bool = True
    htk_compat: bool = False
    energy_floor: float = 0.0


@dataclass(frozen=True)
class FeatureOptions:
    """A time-frequency job with the steps after the spectrum (values as typed).

    A ``mel`` job is ``FeatureOptions(kind="mel", ...)`` whatever its steps; ``spectrogram`` is a bare
    :class:`TimeFreqOptions` (:meth:`of` wraps it).

    Attributes
    ----------
    kind : {"spectrogram", "mel", "mfcc"}
    timefreq : TimeFreqOptions
        Framing, mel bank, log, ``ref``/``top_db``/``amin``, ``mix``, PNG options (``mel`` set but for spectrogram).
    compat : {"kaldi", "torchaudio", "librosa", "whisper"} or None
        The preset the values came from; ``"kaldi"`` selects Kaldi's computation, ``"whisper"`` Whisper's
        front end (the last STFT frame dropped, ``(x + 4) / 4`` after the clip).
    window_position : {"center", "start"}
        Where a window shorter than ``n_fft`` sits in the FFT frame (Kaldi: start; audiokit: centre).
    kaldi : KaldiFrontend
        Kaldi-only options (``compat="kaldi"``).
    n_mfcc, lifter, energy
        ``mfcc`` only: coefficients kept (c0 included), lifter ``Q`` (0 = none; Kaldi's ``1 + Q/2 sin(pi i/Q)``
        with Kaldi, librosa's ``1 + Q/2 sin(pi (i+1)/Q)`` otherwise), replace c0 by the log frame energy.
    deltas : {0, 1, 2}
        Append the first (and second) deltas.
    delta_method : {"kaldi", "librosa"}
        Kaldi ``add-deltas`` (``delta_window`` 2) or ``librosa.feature.delta`` (``delta_width`` 9, mode interp).
    cmvn : {"none", "utterance", "sliding"}
        Mean normalisation per utterance (Kaldi ``apply-cmvn``) or over a sliding window (Kaldi
        ``apply-cmvn-sliding --cmn-window=cmvn_window --center=true``).
    pad_or_trim : str or None
        A duration as typed (``30s``, samples): the input is cut to it, or zero-padded at the end to it, before
        the STFT (Whisper's ``pad_or_trim``, transformers' ``padding="max_length"``); None: as it is.
    """

    kind: str = "mfcc"
    timefreq: TimeFreqOptions = field(default_factory=TimeFreqOptions)
    compat: str | None = None
    window_position: str = "center"
    kaldi: KaldiFrontend = field(default_factory=KaldiFrontend)
    n_mfcc: int = 20
    lifter: float = 0.0
    energy: bool = False
    deltas: int = 0
    delta_method: str = "kaldi"
    delta_window: int = 2
    delta_width: int = 9
    cmvn: str = "none"
    cmvn_window: int = 600
    pad_or_trim: str | None = None

    @classmethod
    def of(cls, options: TimeFreqOptions | FeatureOptions) -> FeatureOptions:
        """``options`` as FeatureOptions: a bare :class:`TimeFreqOptions` is its ``kind`` with no further step."""
        return options if isinstance(options, FeatureOptions) else cls(kind=options.kind, timefreq=options)

    @property
    def is_kaldi(self) -> bool:
        """Kaldi's computation (``--compat kaldi``, and ``lhotse``: Lhotse's Kaldi-style extractors)."""
        return self.compat in KALDI_COMPATS

    @property
    def is_whisper(self) -> bool:
        return self.compat == "whisper"

    def check(self) -> Parsed:
        """Parse and check what needs no sample rate (ParameterError naming the option); see :class:`Parsed`.

        Parsed once per process for equal options (a batch checks them for every input); warnings are replayed."""
        return _checked(self)

    def _check(self) -> Parsed:
        tf = self.timefreq
        check_channel(tf.channel, tf.mix)
        if self.kind not in ("spectrogram", "mel", "mfcc"):
            raise ParameterError(f"kind: {self.kind!r} is not one of spectrogram, mel, mfcc")
        choice("--window-position", self.window_position, WINDOW_POSITIONS)
        choice("--delta-method", self.delta_method, DELTA_METHODS)
        choice("--cmvn", self.cmvn, CMVN_MODES)
        check_int(self.deltas, "--deltas", minimum=0, maximum=2, message="{name} must be 0, 1 or 2, got {value!r}")
        check_int(self.cmvn_window, "--cmvn-window", minimum=1)
        if self.kind == "mfcc":
            check_int(self.n_mfcc, "--n-mfcc", minimum=1)
            if not self.lifter >= 0:
                raise ParameterError(f"--lifter must be >= 0, got {self.lifter!r}")
        if self.kind != "spectrogram" and tf.mel is None:
            raise ParameterError(f"{self.kind}: the options have no mel bank (TimeFreqOptions.mel)")
        log = choice("--log", tf.mel.log if tf.mel is not None else defaults.LOG, LOGS)
        given_ref = parse_ref(tf.ref) if tf.ref is not None else None
        scale = choice("--scale", tf.scale, SCALES)
        power_kind: Kind = "magnitude" if scale == "magnitude" else "power"
        size = _parse_size(tf.size)
        _check_colours(tf)
        if choice("--freq-scale", tf.freq_scale, FREQ_SCALES) == "log" and self.kind != "spectrogram":
            raise ParameterError(f"--freq-scale log: the {self.kind} picture's rows are mel bands (already mel-spaced)")
        if self.is_kaldi:
            _kaldi_checks(self, given_ref)
            mel, amin = tf.mel, _FLT_EPSILON
        else:
            mel = tf.mel.checked() if tf.mel is not None else None
            amin = _amin(tf.amin, power_kind)
            choice("--pad-mode", tf.stft.pad_mode, PAD_MODES)
            if self.window_position == "start" and tf.stft.nfft is not None:
                raise ParameterError(
                    "--window-position start is available with --compat kaldi only "
                    "(audiokit centres a window shorter than --nfft in the FFT frame)"
                )
            if self.kind == "mfcc" and scale != "db":
                raise ParameterError(
                    "mfcc: --scale must be db (the cepstrum is the DCT of the log-mel values; pick the log with --log)"
                )
            if self.kind == "mfcc" and mel is not None and self.n_mfcc > mel.n_mels:
                raise ParameterError(f"--n-mfcc ({self.n_mfcc}) cannot exceed --n-mels ({mel.n_mels})")
        check_syntax(
            durations={"--win": tf.stft.win, "--hop": tf.stft.hop, "--nfft": tf.stft.nfft, "--pad-or-trim": self.pad_or_trim},
            frequencies={"--fmin": tf.fmin} if self.is_kaldi else {"--fmin": tf.fmin, "--fmax": tf.fmax},
        )  # the window name is checked where it is built (the STFT plan, Kaldi's checks), with the allowed names
        features = self.kind == "mfcc" or self.is_kaldi or self.is_whisper or self.deltas > 0 or self.cmvn != "none"
        return Parsed(
            options=self,
            mel=mel,
            scale=scale,
            power_kind=power_kind,
            log=log,
            ref=float(defaults.FEATURE_REF) if given_ref is None else given_ref,
            png_ref=_png_ref(given_ref, tf),
            top_db=tf.npy_top_db,
            amin=amin,
            size=size,
            features=features,
        )


@dataclass(frozen=True)
class Parsed:
    """The rate-free values of a :class:`FeatureOptions`, parsed once by :meth:`FeatureOptions.check`.

    Attributes
    ----------
    options : FeatureOptions
        The options as typed (durations are resolved at the input's rate by the front end).
    mel : MelOptions or None
        The checked mel options (choices lower-cased; Kaldi's as given); None for a spectrogram.
    scale : {"db", "power", "magnitude"}
    power_kind : {"power", "magnitude"}
        What the STFT front end outputs: ``|X|`` for ``--scale magnitude``, else ``|X|²``.
    log : {"db", "ln", "log10"}
        The log of ``--scale db`` (``db`` for a spectrogram).
    ref, png_ref : float or "max"
        The reference of the ``.npy`` and of the PNG (unset: absolute 1 and ``max``).
    top_db : float or None
        The clip of the ``.npy`` in dB below its peak (None: none).
    amin : float
        The floor before the log (``--amin``, else 1e-10 power / 1e-5 magnitude).
    size : (int, int)
        The PNG size in pixels.
    features : bool
        The job computes features (``mfcc``; ``mel`` with a Kaldi or Whisper front end, CMVN or deltas): the array
        holds the chain's output and the PNG draws it; otherwise the job is a (log-)spectrogram, whose ``.npy``
        takes the log in the STFT's precision and the reference after the fact, and whose PNG draws the linear
        values in dB (so a picture normalises on its own).
    """

    options: FeatureOptions
    mel: MelOptions | None
    scale: str
    power_kind: Kind
    log: str
    ref: float | Literal["max"]
    png_ref: float | Literal["max"]
    top_db: float | None
    amin: float
    size: tuple[int, int]
    features: bool

    @property
    def kind(self) -> str:
        return self.options.kind

    @property
    def tf(self) -> TimeFreqOptions:
        return self.options.timefreq

    @property
    def want_complex(self) -> bool:
        """``--complex``: the complex STFT is saved (spectrogram only)."""
        return self.tf.complex_out and self.kind == "spectrogram"

    @property
    def db_out(self) -> bool:
        """The saved values are logs (``--scale db``; not with ``--complex``)."""
        return self.scale == "db" and not self.want_complex


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


def _amin(amin: float | None, power_kind: Kind) -> float:
    """``--amin`` checked, or the default floor of :data:`audiokit.dsp.scaling.AMIN` for ``power_kind``."""
    from ..dsp.scaling import AMIN

    if amin is None:
        return AMIN[power_kind]
    if not (isinstance(amin, (int, float)) and math.isfinite(amin) and amin > 0):
        raise ParameterError(f"--amin must be a number > 0, got {amin!r}")
    return float(amin)


def _png_ref(given: float | Literal["max"] | None, tf: TimeFreqOptions) -> float | Literal["max"]:
    """The PNG's ``--ref``: as given; unset, absolute (1, as the ``.npy``) with ``--vmin``/``--vmax`` (a series of
    pictures must share its reference to compare), else :data:`audiokit.defaults.PICTURE_REF` (its loudest cell)."""
    if given is not None:
        return given
    return float(defaults.FEATURE_REF) if tf.vmin is not None or tf.vmax is not None else defaults.PICTURE_REF


def _check_colours(tf: TimeFreqOptions) -> None:
    """``--vmin``/``--vmax``: finite, and ``vmin < vmax`` when both are given."""
    for name, value in (("--vmin", tf.vmin), ("--vmax", tf.vmax)):
        if value is not None and not math.isfinite(value):
            raise ParameterError(f"{name}: {value!r} is not a finite number")
    if tf.vmin is not None and tf.vmax is not None and not tf.vmin < tf.vmax:
        raise ParameterError(f"--vmin {tf.vmin:g} must be below --vmax {tf.vmax:g}")


def _parse_size(text: str) -> tuple[int, int]:
    from ..plot import parse_size

    return parse_size(text)


def _kaldi_checks(o: FeatureOptions, given_ref: float | Literal["max"] | None) -> None:
    """Refuse options that have no meaning in Kaldi's computation (explicit flags against the preset)."""
    tf, mel = o.timefreq, o.timefreq.mel
    problems = []
    if tf.stft.center:
        problems.append("--center (Kaldi frames with --snip-edges / --no-snip-edges)")
    if tf.stft.symmetric:
        problems.append("--symmetric (Kaldi's windows are symmetric already)")
    if mel is not None and mel.mel_scale != "kaldi":
        problems.append(f"--mel-scale {mel.mel_scale} (Kaldi's mel is 1127*ln(1+f/700))")
    if mel is not None and mel.norm != "none":
        problems.append(f"--norm {mel.norm}")
    if mel is not None and mel.log != "ln":
        problems.append(f"--log {mel.log} (Kaldi takes the natural log)")
    if given_ref not in (None, 1.0) or tf.top_db:
        problems.append("--ref / --top-db")
    if tf.amin is not None and tf.amin != _FLT_EPSILON:
        problems.append("--amin (Kaldi floors at FLT_EPSILON)")
    if tf.stft.pad_mode != "reflect":
        problems.append("--pad-mode (Kaldi reflects the ends with --no-snip-edges)")
    if o.window_position != "start":
        problems.append("--window-position center (Kaldi puts the window at the frame start)")
    if problems:
        raise ParameterError("--compat kaldi: not available with " + "; ".join(problems))
    window = "hanning" if tf.stft.window == "hann" else tf.stft.window
    check_choice(
        window,
        "--window",
        KALDI_WINDOWS + ("hann",),
        message="--compat kaldi: --window must be one of povey, hamming, hanning, rectangular, blackman, sine; got {value!r}",
    )


@memoized()
def _stft_plan(options: StftOptions, sr: int, dtype: Literal["float32", "float64"]) -> Any:
    return options._plan(sr, dtype)


@memoized()
def _checked(options: FeatureOptions) -> Parsed:
    return options._check()

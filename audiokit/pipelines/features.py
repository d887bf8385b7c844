"""The post-processing chain of the time-frequency job: what happens to a front end's frames before they are saved.

A front end (:class:`~audiokit.pipelines.stft_frontend.StftFrontEnd`, or
:class:`~audiokit.pipelines.kaldi_frontend.KaldiFrontEnd`) gives ``(channels, rows, k)`` chunks; :func:`build_chain`
turns the checked options into an ordered list of steps, each a small object whose ``apply(block)`` maps a chunk to
the next (``finish()`` hands over the frames it held back for look-ahead, ``finalize`` reworks the saved array):

==========================  ===================================================================================
:class:`Log`                floor at ``amin``, then dB (``10·log10`` of power, ``20·log10`` of magnitude), ln or log10
                            (this and :class:`Rows` of features: a float32 front end's Inf is an input error)
:class:`Reference`          ``--ref``/``--top-db``: subtract the reference, clip ``top_db`` dB below the peak (in
                            the log's unit: ``top_db·ln(10)/10`` nepers, ``top_db/10`` decades for power); the peak
                            is found by a first pass over the input, or -- when nothing follows the step -- the
                            step runs after the fact, as a second pass over the saved array
:class:`Rows`               linear mel values (``--scale power|magnitude``) in float64, for CMVN or deltas
:class:`Dct`                ``mfcc``: orthonormal DCT-II over the mel rows (:func:`audiokit.dsp.features.mfcc`,
                            ``--lifter``, ``--energy`` replacing c0 by the log frame power)
:class:`Affine`             Whisper's ``(x + 4) / 4``, after its clip 8 decades (80 dB) below the peak
:class:`UtteranceCmvn`      Kaldi ``apply-cmvn`` with the file's own means: sums while streaming, subtracted from
                            the saved array afterwards (a delta of a constant is 0: the delta rows need nothing)
:class:`SlidingCmvn`        Kaldi ``apply-cmvn-sliding --cmn-window=N --center=true``, means only
:class:`Deltas`             Kaldi ``add-deltas --delta-window=2`` or ``librosa.feature.delta(width=9)``, rows
                            ``[x; d1; d2]`` (Kaldi's column order)
:class:`Store`              the values cast to the saved dtype, checked finite (a spectrogram's float64 retry,
                            features in float64, Kaldi's)
==========================  ===================================================================================

Two kinds of job use the chain (:attr:`~audiokit.pipelines.timefreq_options.Parsed.features`):

* a **(log-)spectrogram** (``spectrogram``, ``mel``): :class:`Log` in the STFT's precision, then :class:`Reference`
  after the fact -- one read of the input, whatever ``--ref``/``--top-db``;
* **features** (``mfcc``; ``mel`` with a Kaldi or Whisper front end, CMVN or deltas): the steps after the log
  compute in float64 (as Kaldi does), so the log does too; with ``--ref max`` or ``--top-db`` the peak comes from a
  first pass.

Memory holds one chunk, the CMVN window and the deltas' look-ahead (4 frames), whatever the input length.  The
``.npy`` keeps audiokit's ``(n_rows, n_frames)`` (``(channels, n_rows, n_frames)``) layout for every preset, Kaldi
included; Kaldi's matrices (and ``kaldi-native-fbank``) are frames x bins: ``np.load(path).T``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import InputError
from .timefreq_options import CMVN_MODES, DELTA_METHODS, LOGS, FeatureOptions

if TYPE_CHECKING:
    from ..dsp.scaling import Kind
    from ..io.npy import NpyFrameWriter
    from .timefreq_options import Parsed

__all__ = [
    "Affine",
    "CMVN_MODES",
    "Chain",
    "DELTA_METHODS",
    "Dct",
    "Deltas",
    "FeatureOptions",
    "LOG_UNITS",
    "Log",
    "Reference",
    "Rows",
    "SlidingCmvn",
    "Step",
    "Store",
    "UtteranceCmvn",
    "build_chain",
]

#: ``--log`` choices: dB (10*log10 of power), natural log, log10.
LOG_UNITS = LOGS
#: Frames per chunk of the second pass over the saved array.
_CHUNK = 4096


class Step:
    """One step of the chain: ``apply`` maps a ``(channels, rows, k)`` block to the next; the defaults do nothing."""

    def apply(self, block: np.ndarray) -> np.ndarray:
        return block

    def finish(self) -> np.ndarray | None:
        """Frames held back for look-ahead, once the input has ended (None: none)."""
        return None

    def finalize(self, writer: NpyFrameWriter | None, images: list[np.ndarray]) -> None:
        """After the last frame: rework the saved array (``writer``) and the display images, if the step must."""


def _held(block: np.ndarray, name: str | None) -> np.ndarray:
    """A front end's ``block``, refused when a float32 value overflowed (a float input far beyond full scale:
    ``|X|²`` past float32's 3.4e38) -- an :class:`~audiokit.errors.InputError` naming ``name``, never NaN/Inf."""
    if name is not None and block.dtype == np.float32 and not np.isfinite(block).all():
        raise InputError("the input's values overflow the float32 STFT (|X|^2 beyond 3.4e+38); scale the input down", name)
    return block


class Log(Step):
    """``max(x, amin)``, then dB (``factor·log10``), ln or log10, in ``dtype`` (None: the block's own).

    ``name`` (features): the input's, for refusing a float32 front end's overflowed values (:func:`_held`).
    """

    def __init__(self, log: str, power_kind: Kind, amin: float, dtype: Any = None, *, name: str | None = None):
        from ..dsp.scaling import DB_FACTOR

        self.log, self.amin, self.dtype, self.factor, self.name = log, amin, dtype, DB_FACTOR[power_kind], name

    def apply(self, block: np.ndarray) -> np.ndarray:
        block = _held(block, self.name)
        x = block if self.dtype is None else block.astype(self.dtype)
        out: np.ndarray = np.maximum(x, x.dtype.type(self.amin))
        if self.log == "ln":
            np.log(out, out=out)
            return out
        np.log10(out, out=out)
        if self.log == "db":
            out *= self.factor
        return out


class Reference(Step):
    """``--ref`` and ``--top-db`` on log values: ``max(L - ref_l, peak_l - ref_l - top_l)`` in the log's unit.

    ``deferred``: the peak is tracked while streaming and the saved array is rewritten afterwards (the chain's last
    step); otherwise :meth:`set_peak` gives the peak of the linear values first when it is needed (``needs_peak``).
    After the run, :attr:`value` is the reference subtracted, in the log's unit (dB for ``db``), or None when a
    deferred ``ln``/``log10`` reference changed nothing (reference 0 and no clip).
    """

    def __init__(
        self, ref: float | Literal["max"], top_db: float | None, log: str, power_kind: Kind, amin: float, *, deferred: bool
    ):
        from ..dsp.scaling import DB_FACTOR

        self.ref, self.top_db, self.log, self.power_kind, self.amin = ref, top_db, log, power_kind, amin
        self.deferred = deferred
        self.needs_peak = not deferred and (ref == "max" or top_db is not None)
        factor = DB_FACTOR[power_kind]
        #: (log of a linear value, dB per unit of the log)
        self._unit: tuple[Any, float] = {
            "db": ((lambda v: factor * np.log10(v)), 1.0),
            "ln": (np.log, factor / math.log(10.0)),
        }.get(log, (np.log10, factor))
        self._peak = -math.inf
        self.value: float | None = None
        self.clip: float | None = None
        if not deferred and not self.needs_peak:
            self.set_peak(None)

    def set_peak(self, peak: float | None) -> None:
        """The peak of the linear values (None: not needed) fixes the reference of ``--ref max`` and the clip."""
        log, per_db = self._unit
        peak_l = float(log(max(peak, self.amin))) if peak is not None else math.nan
        self.value = peak_l if self.ref == "max" else float(log(max(self.amin, float(self.ref))))
        self.clip = peak_l - self.value - self.top_db / per_db if self.top_db is not None else None

    def apply(self, block: np.ndarray) -> np.ndarray:
        if self.deferred:
            if block.size:
                self._peak = max(self._peak, float(block.max()))
            return block
        if self.value:
            block -= self.value
        if self.clip is not None:
            np.maximum(block, self.clip, out=block)
        return block

    @property
    def rewrites(self) -> bool:
        """True when :meth:`finalize` reworks the saved values (a deferred reference that is not ``log(1) = 0``)."""
        if not self.deferred:
            return False
        return self.ref == "max" or self.top_db is not None or float(self.ref) != 1.0

    def finalize(self, writer: NpyFrameWriter | None, images: list[np.ndarray]) -> None:
        if self.deferred and writer is not None:
            self.value = _rescale(writer, self.ref, self.top_db, self._peak, self.power_kind, self.log, self.amin)


def _rescale(
    npy: NpyFrameWriter, ref: float | Literal["max"], top: float | None, peak: float, power_kind: Kind, log: str, amin: float
) -> float | None:
    """Second pass over the saved log values: subtract the reference, clip ``top`` dB below the peak; the reference.

    The same rule as :func:`audiokit.log_melspectrogram` for every log: the reference is ``log(max(amin, ref))``
    (``ref max``: the peak) and ``top`` decibels become ``top * ln(10) / 10`` nepers (``ln``, power) or
    ``top / 10`` decades (``log10``, power; ``/ 20`` for magnitude).
    """
    from ..dsp.scaling import DB_FACTOR, rescale_db

    if log == "db":
        ref_db = peak if ref == "max" else DB_FACTOR[power_kind] * math.log10(max(amin, float(ref)))
        if ref_db != 0.0 or top is not None:
            npy.rewrite(lambda chunk: rescale_db(chunk, ref_db=ref_db, top_db=top, max_db=peak))
        return ref_db
    to_unit = math.log if log == "ln" else math.log10
    ref_l = peak if ref == "max" else to_unit(max(amin, float(ref)))
    top_l = None if top is None else (top * math.log(10.0) if log == "ln" else top) / DB_FACTOR[power_kind]
    if ref_l == 0.0 and top_l is None:
        return None
    npy.rewrite(lambda chunk: rescale_db(chunk, ref_db=ref_l, top_db=top_l, max_db=peak))
    return ref_l


class Rows(Step):
    """The first ``n`` rows, in float64 (linear mel values feeding CMVN or deltas); ``name`` as :class:`Log`'s."""

    def __init__(self, n: int, *, name: str | None = None):
        self.n, self.name = n, name

    def apply(self, block: np.ndarray) -> np.ndarray:
        return np.asarray(_held(block, self.name).astype(np.float64)[:, : self.n])


class Dct(Step):
    """MFCC: the orthonormal DCT-II over the first ``n_mels`` rows, ``lifter``; ``energy``: row ``n_mels`` replaces c0."""

    def __init__(self, n_mels: int, n_mfcc: int, lifter: float, energy: bool):
        self.n_mels, self.n_mfcc, self.lifter, self.energy = n_mels, n_mfcc, lifter, energy

    def apply(self, block: np.ndarray) -> np.ndarray:
        from ..dsp.features import mfcc

        energy = block[:, self.n_mels] if self.energy else None
        return np.asarray(mfcc(block[:, : self.n_mels], n_mfcc=self.n_mfcc, lifter=self.lifter, axis=-1, energy=energy))


class Affine(Step):
    """``(x + offset) / divisor`` (Whisper: ``(x + 4) / 4``)."""

    def __init__(self, offset: float, divisor: float):
        self.offset, self.divisor = offset, divisor

    def apply(self, block: np.ndarray) -> np.ndarray:
        return (block + self.offset) / self.divisor


class UtteranceCmvn(Step):
    """Kaldi ``apply-cmvn`` with the utterance's own means: the static rows summed while streaming, subtracted after."""

    def __init__(self, channels: int, dim: int, rows: int, n_frames: int):
        self.sums = np.zeros((channels, dim))
        self.rows, self.n_frames = rows, n_frames

    def apply(self, block: np.ndarray) -> np.ndarray:
        for c in range(block.shape[0]):
            self.sums[c] += block[c].sum(axis=1)
        return block

    def finalize(self, writer: NpyFrameWriter | None, images: list[np.ndarray]) -> None:
        channels, dim = self.sums.shape
        means = self.sums / self.n_frames  # (C, dim)
        if writer is not None:  # the on-disk chunk is (k, rows[, C]); the delta rows need no change
            full = np.zeros((channels, self.rows))
            full[:, :dim] = means
            offset = (full[0] if channels == 1 else full.T).astype(np.float32)
            writer.rewrite(lambda chunk: chunk - offset, chunk_frames=_CHUNK)
        for c, image in enumerate(images):
            image -= means[c][:, None]


class _PerChannel(Step):
    """A streaming step with one state per channel (the channels are independent signals)."""

    def __init__(self, streams: list[Any]):
        self.streams = streams

    def apply(self, block: np.ndarray) -> np.ndarray:
        return np.stack([s.accept(block[c]) for c, s in enumerate(self.streams)])

    def finish(self) -> np.ndarray | None:
        return np.stack([s.finish() for s in self.streams])


class SlidingCmvn(_PerChannel):
    """Kaldi ``apply-cmvn-sliding --cmn-window=window --center=true`` (means only), streamed
    (:class:`audiokit.dsp.features.SlidingCmvn`)."""

    def __init__(self, channels: int, window: int):
        from ..dsp.features import SlidingCmvn as Stream  # imported when a feature job runs

        super().__init__([Stream(window=window, center=True, axis=-1) for _ in range(channels)])


class Deltas(_PerChannel):
    """The features followed by their deltas of order ``1 .. order`` (:class:`audiokit.dsp.features.DeltaStream`)."""

    def __init__(self, channels: int, order: int, method: str, window: int, width: int):
        from ..dsp.features import DeltaStream

        super().__init__([DeltaStream(order, method, window=window, width=width) for _ in range(channels)])


class Store(Step):
    """The values cast to the saved dtype, refused when they do not fit (never NaN/Inf in a file).

    ``cast`` False: checked only, passed on as they are (features: the writer casts, the PNG pools the float64 values).
    """

    def __init__(self, dtype: Any, name: str, *, linear: bool, cast: bool = True):
        self.dtype, self.name, self.linear, self.cast = dtype, name, linear, cast

    def apply(self, block: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            stored = block.astype(self.dtype)
        if not np.isfinite(stored).all():
            hint = "use --scale db, or scale the input down" if self.linear else "scale the input down"
            raise InputError(
                f"the input's values are too large for a finite {np.dtype(self.dtype).name} result ({hint})", self.name
            )
        return stored if self.cast else block


class Chain:
    """The ordered steps of one job (see the module docstring); :meth:`describe` says what the values are.

    Attributes
    ----------
    steps : list of Step
    dim : int
        Rows per frame before the deltas (mel bands, cepstra, Kaldi's columns): what a features PNG draws.
    rows : int
        Rows per frame of a features array (``dim`` times ``deltas + 1``).
    """

    def __init__(self, parsed: Parsed, steps: list[Step], dim: int, *, kaldi: bool):
        self.parsed, self.steps, self.dim, self.kaldi = parsed, steps, dim, kaldi
        self.rows = dim * (parsed.options.deltas + 1)

    @property
    def reference(self) -> Reference | None:
        """The :class:`Reference` step, if the chain has one."""
        return next((s for s in self.steps if isinstance(s, Reference)), None)

    @property
    def rewrites(self) -> bool:
        """True when a step reworks the saved array after the last frame (``--ref max``/``--top-db`` after the
        fact, utterance CMVN): a corpus store then holds the utterance in memory (:class:`~audiokit.io.members.
        TimeMajorFrames`)."""
        return any(isinstance(s, UtteranceCmvn) or (isinstance(s, Reference) and s.rewrites) for s in self.steps)

    def apply(self, block: np.ndarray) -> np.ndarray:
        for step in self.steps:
            block = step.apply(block)
        return block

    def finish(self) -> np.ndarray | None:
        """The frames the streaming steps held back, through the steps after them."""
        carry: np.ndarray | None = None
        for step in self.steps:
            if carry is not None:
                carry = step.apply(carry)
            tail = step.finish()
            if tail is not None:
                carry = tail if carry is None else np.concatenate([carry, tail], axis=-1)
        return carry

    def finalize(self, writer: NpyFrameWriter | None, images: list[np.ndarray]) -> None:
        for step in self.steps:
            step.finalize(writer, images)

    # ---------------------------------------------------------------- what the sidecar says
    def describe(self) -> dict[str, Any]:
        """The sidecar keys of the values (scale, log, reference, clip, formula; deltas, CMVN, DCT)."""
        return self._features() if self.parsed.features else self._spectrum()

    def _spectrum(self) -> dict[str, Any]:
        p = self.parsed
        ref = self.reference
        ref_value = ref.value if ref is not None else None
        fields: dict[str, Any] = {
            "scale": "complex" if p.want_complex else (p.log if p.db_out and p.log != "db" else p.scale),
            "values": _spectrum_values(p),
            "amin": p.amin if p.db_out else None,
            "ref": p.ref if ref_value is not None else None,
            "ref_db": ref_value if p.log == "db" else None,
            "top_db": p.top_db if ref_value is not None else None,
        }
        if p.db_out and p.log != "db":  # ln/log10: the reference subtracted, in the log's unit
            fields["log_ref"] = ref_value
        return fields

    def _features(self) -> dict[str, Any]:
        p, o = self.parsed, self.parsed.options
        fields: dict[str, Any] = {
            "deltas": {
                "order": o.deltas,
                "method": o.delta_method,
                "window": o.delta_window if o.delta_method == "kaldi" else None,
                "width": o.delta_width if o.delta_method == "librosa" else None,
            }
            if o.deltas
            else None,
            "cmvn": None
            if o.cmvn == "none"
            else {
                "mode": o.cmvn,
                "norm_vars": False,
                **({"window": o.cmvn_window, "center": True} if o.cmvn == "sliding" else {}),
                "order": "CMVN before deltas (Kaldi: apply-cmvn | add-deltas)",
            },
        }
        if self.kaldi:
            return fields
        log = p.log if p.scale == "db" or o.kind == "mfcc" else None
        ref = self.reference
        fields.update(
            scale=p.scale,
            log=log,
            amin=p.amin,
            ref=p.tf.npy_ref,
            log_ref=ref.value if ref is not None else _linear_log_ref(p),
            top_db=p.top_db,
            values=_features_values(p, log),
        )
        if o.kind == "mfcc":
            fields["mfcc"] = {
                "n_mfcc": o.n_mfcc,
                "dct": "DCT-II orthonormal over the mel axis (scipy.fft.dct type 2, norm 'ortho')",
                "lifter": o.lifter,
                "lifter_formula": "1 + lifter/2 * sin(pi*(k+1)/lifter) (librosa)" if o.lifter else None,
                "energy": "row 0 = the log of the frame's total power sum_k |X[k]|^2 (one-sided bins), "
                "same log, floor and reference as the mel values"
                if o.energy
                else None,
            }
        return fields

    def row_names(self, base: list[str] | None = None) -> list[str]:
        """Names of the saved rows: ``base`` (the front end's; default ``mel0..``/``c0..``), then ``d(..)``, ``dd(..)``."""
        o = self.parsed.options
        if base is None:
            base = [f"c{i}" for i in range(self.dim)] if o.kind == "mfcc" else [f"mel{i}" for i in range(self.dim)]
            if o.kind == "mfcc" and o.energy:
                base[0] = "energy"
        names = list(base)
        for r in range(1, o.deltas + 1):
            names += [f"{'d' * r}({b})" for b in base]
        return names


def build_chain(parsed: Parsed, *, kaldi: bool, n_mels: int, channels: int, n_frames: int, dtype: str, name: str) -> Chain:
    """The steps of a job, in order (see the module docstring).

    Parameters
    ----------
    parsed : Parsed
        The checked options.
    kaldi : bool
        The front end is Kaldi's (its frames are log energies or cepstra already).
    n_mels : int
        Mel bands (Kaldi: its feature dimension): the rows the DCT reads, or of a features array.
    channels, n_frames : int
        Channels analysed and frames over the input.
    dtype : {"float32", "float64"}
        Working precision of the front end (float64: a spectrogram's retry beyond float32's range).
    name : str
        The input's name, for errors.
    """
    o, p = parsed.options, parsed
    steps: list[Step] = []
    dim = n_mels
    if not kaldi and p.features:
        if p.scale == "db" or o.kind == "mfcc":
            steps.append(Log(p.log, p.power_kind, p.amin, np.float64, name=name))
            steps.append(Reference(p.ref, p.top_db, p.log, p.power_kind, p.amin, deferred=False))
        else:
            steps.append(Rows(n_mels, name=name))
        if o.kind == "mfcc":
            steps.append(Dct(n_mels, o.n_mfcc, o.lifter, o.energy))
            dim = o.n_mfcc
        if o.is_whisper:
            steps.append(Affine(4.0, 4.0))
    elif not kaldi:
        if p.db_out:
            steps.append(Log(p.log, p.power_kind, p.amin))
            steps.append(Reference(p.ref, p.top_db, p.log, p.power_kind, p.amin, deferred=True))
        if dtype == "float64":
            steps.append(Store(np.complex64 if p.want_complex else np.float32, name, linear=not p.db_out and not p.want_complex))
    if o.cmvn == "utterance":
        steps.append(UtteranceCmvn(channels, dim, dim * (o.deltas + 1), n_frames))
    elif o.cmvn == "sliding":
        steps.append(SlidingCmvn(channels, o.cmvn_window))
    if o.deltas:
        steps.append(Deltas(channels, o.deltas, o.delta_method, o.delta_window, o.delta_width))
    if p.features and (kaldi or dtype == "float64"):  # the features' float64 values, checked as the .npy stores them
        steps.append(Store(np.float32, name, linear=not kaldi and p.scale != "db" and o.kind != "mfcc", cast=False))
    return Chain(parsed, steps, dim, kaldi=kaldi)


def _linear_log_ref(p: Parsed) -> float | None:
    """The ``log_ref`` a linear features array records: its reference in log10 (not applied to linear values)."""
    return None if p.ref == "max" else float(np.log10(max(p.amin, float(p.ref))))


def _spectrum_values(p: Parsed) -> str:
    """The ``values`` formula of a (log-)spectrogram."""
    linear = "|X|^2" if p.power_kind == "power" else "|X|"
    if p.kind == "mel":
        linear = f"mel filterbank @ {linear}"
    if p.want_complex:
        return "complex STFT X[k, m] (unnormalised forward DFT)"
    if p.scale == "db" and p.log in ("ln", "log10"):
        return f"{p.log}(max({linear}, amin)) - log_ref, clipped below (max - log_ref - top_db in {p.log} units)"
    if p.scale == "db":
        factor = 10 if p.power_kind == "power" else 20
        return f"{factor}*log10(max({linear}, amin)) - ref_db, clipped below (max - ref_db - top_db)"
    return linear


def _features_values(p: Parsed, log: str | None) -> str:
    """The ``values`` formula of STFT features."""
    linear = "mel filterbank @ " + ("|X|^2" if p.power_kind == "power" else "|X|")
    if log is None:
        return linear
    f = {"db": ("10" if p.power_kind == "power" else "20") + "*log10", "ln": "ln", "log10": "log10"}[log]
    text = f"{f}(max({linear}, amin)) - log_ref"
    if p.top_db is not None:
        text += ", clipped top_db dB (in this log's unit) below the peak"
    if p.kind == "mfcc":
        text = f"DCT-II ortho over the mel rows of [{text}]"
    if p.options.is_whisper:
        text = f"({text} + 4) / 4 (Whisper's scaling)"
    return text

"""The ``mfcc`` job, and ``mel`` with ``--compat kaldi``, ``--deltas`` or ``--cmvn``: speech features, streamed.

file → blocks → either

* ``--compat kaldi``: :class:`~audiokit.dsp.kaldi.KaldiFeatureStream` (``compute-fbank-feats`` for ``mel``,
  ``compute-mfcc-feats`` for ``mfcc``; one stream per channel), or
* otherwise :class:`~audiokit.dsp.stft.StftStream` with the mel bank → log (``db``/``ln``/``log10``, floor
  ``amin``, ``ref``, ``top_db`` in the log's unit) → for ``mfcc`` the orthonormal DCT-II
  (:func:`audiokit.dsp.features.mfcc`, ``lifter``, ``--energy`` replacing c0 by the log frame power);

→ sliding CMVN (:class:`~audiokit.dsp.features.SlidingCmvn`, Kaldi ``apply-cmvn-sliding --cmn-window=600
--center=true``) → deltas (:class:`DeltaStream`: Kaldi ``add-deltas --delta-window=2`` or librosa
``feature.delta(width=9)``) → ``.npy`` frame by frame (+ sidecar) and the display image → PNG.

Utterance CMVN (Kaldi ``apply-cmvn`` with the utterance's own stats, means only) is a second pass over the
saved array (:meth:`~audiokit.io.npy.NpyFrameWriter.rewrite`): the means of the static rows are summed while
streaming and subtracted afterwards; the delta rows need no change (a delta of a constant is 0).  With
``ref max`` or ``top_db`` (not Kaldi) the peak mel value must be known before the DCT/deltas, so the input is
read twice (a first pass computes only the mel peak).  Memory holds one block, one chunk of frames, the CMVN
window (600 frames) and the display image, whatever the input length.

Layout: the ``.npy`` keeps audiokit's ``(n_rows, n_frames)`` (``(channels, n_rows, n_frames)``) layout for every
preset, Kaldi included; Kaldi's matrices (and ``kaldi-native-fbank``) are frames x bins: ``np.load(path).T``.
The sidecar says so (``layout``, ``kaldi_layout``).  Rows: the static features (mel bands low to high, or
cepstra c0..), then their first and second deltas when ``--deltas`` is 1 or 2 (Kaldi's column order).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import ParameterError
from ..io import is_stdio, outputs_together
from ..io.npy import NpyFrameWriter, write_sidecar
from ..io.reader import BLOCK_SAMPLES, AudioSource
from ..validate import check_int
from .kaldi_frontend import KALDI_SAMPLE_SCALE, KaldiFrontend, kaldi_checks, kaldi_options
from .params import InputOptions, check_channel, check_channel_of, choice
from .progress import SILENT, Reporter
from .registry import SourceFacts
from .sidecar import plan_fields, provenance
from .timefreq import TimeFreqOptions, TimeFreqResult, default_outputs, mel_bank, parse_ref, pick_channels

if TYPE_CHECKING:
    pass

__all__ = [
    "FeatureOptions",
    "features_file",
    "run_timefreq",
    "LOG_UNITS",
    "DELTA_METHODS",
    "CMVN_MODES",
]

#: ``--log`` choices: dB (10*log10 of power), natural log, log10.
LOG_UNITS = ("db", "ln", "log10")
DELTA_METHODS = ("kaldi", "librosa")
CMVN_MODES = ("none", "utterance", "sliding")
WINDOW_POSITIONS = ("center", "start")
#: Frames per chunk of the second (peak) pass and of the post-processing.
_CHUNK = 4096


@dataclass(frozen=True)
class FeatureOptions:
    """A ``mfcc`` job, or a ``mel`` job with a Kaldi front end, deltas or CMVN (values as typed).

    Attributes
    ----------
    kind : {"mel", "mfcc"}
    timefreq : TimeFreqOptions
        Framing, mel bank, log, ``ref``/``top_db``/``amin``, ``mix``, PNG options (``mel`` must be set).
    compat : {"kaldi", "torchaudio", "librosa"} or None
        The preset the values came from; ``"kaldi"`` selects the Kaldi computation.
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

    def check(self) -> None:
        """Validate what needs no sample rate (ParameterError naming the option)."""
        choice("--window-position", self.window_position, WINDOW_POSITIONS)
        choice("--delta-method", self.delta_method, DELTA_METHODS)
        choice("--cmvn", self.cmvn, CMVN_MODES)
        check_int(self.deltas, "--deltas", minimum=0, maximum=2, message="{name} must be 0, 1 or 2, got {value!r}")
        check_int(self.cmvn_window, "--cmvn-window", minimum=1)
        if self.kind == "mfcc":
            check_int(self.n_mfcc, "--n-mfcc", minimum=1)
            if not self.lifter >= 0:
                raise ParameterError(f"--lifter must be >= 0, got {self.lifter!r}")
        tf = self.timefreq
        check_channel(tf.channel, tf.mix)
        choice("--log", (tf.mel.log if tf.mel else "db"), LOG_UNITS)
        parse_ref(tf.ref)
        if self.compat == "kaldi":
            kaldi_checks(self)
        elif self.window_position == "start" and tf.stft.nfft is not None:
            raise ParameterError(
                "--window-position start is available with --compat kaldi only "
                "(audiokit centres a window shorter than --nfft in the FFT frame)"
            )

    @property
    def is_kaldi(self) -> bool:
        return self.compat == "kaldi"


class _Post:
    """Per-channel chain: sliding CMVN → deltas; sums for utterance CMVN.  Blocks are ``(dim, k)`` float64."""

    def __init__(self, o: FeatureOptions, dim: int):
        from ..dsp.features import DeltaStream, SlidingCmvn  # scipy: only when a feature job runs

        self.cmvn = SlidingCmvn(window=o.cmvn_window, center=True, axis=-1) if o.cmvn == "sliding" else None
        self.deltas = DeltaStream(o.deltas, o.delta_method, window=o.delta_window, width=o.delta_width) if o.deltas else None
        self.sums = np.zeros(dim) if o.cmvn == "utterance" else None

    def accept(self, x: np.ndarray) -> np.ndarray:
        if self.sums is not None:
            self.sums += x.sum(axis=1)
        if self.cmvn is not None:
            x = self.cmvn.accept(x)
        return self.deltas.accept(x) if self.deltas is not None else x

    def finish(self) -> np.ndarray | None:
        tail = None
        if self.cmvn is not None:
            tail = self.cmvn.finish()
            if self.deltas is not None:
                tail = self.deltas.accept(tail)
        if self.deltas is not None:
            last = self.deltas.finish()
            tail = last if tail is None else np.concatenate([tail, last], axis=1)
        return tail


# --------------------------------------------------------------------------------------------
# The job
# --------------------------------------------------------------------------------------------
def run_timefreq(
    path: str,
    options: Any,
    *,
    png: str | None = None,
    npy: str | None = None,
    inputs: InputOptions = InputOptions(),
    reporter: Reporter = SILENT,
) -> TimeFreqResult:  # noqa: B008
    """:func:`features_file` for :class:`FeatureOptions`, else :func:`~audiokit.pipelines.timefreq.timefreq`."""
    if isinstance(options, FeatureOptions):
        return features_file(path, options, png=png, npy=npy, inputs=inputs, reporter=reporter)
    from .timefreq import timefreq

    return timefreq(path, options, png=png, npy=npy, inputs=inputs, reporter=reporter)


def features_file(
    path: str,
    options: FeatureOptions,
    *,
    png: str | None = None,
    npy: str | None = None,
    inputs: InputOptions = InputOptions(),
    reporter: Reporter = SILENT,
) -> TimeFreqResult:  # noqa: B008
    """Compute MFCCs (``kind="mfcc"``) or log-mel/Kaldi fbank features of ``path``; save ``npy`` and/or draw ``png``.

    With neither ``png`` nor ``npy``, the PNG goes to ``<stem>.<kind>.png`` beside the input.  The ``.npy`` is
    float32 ``(n_rows, n_frames)`` (``(channels, n_rows, n_frames)``), its sidecar describing the rows, the
    framing and every option (see the module docstring).
    """
    from ..plot import parse_size

    options.check()
    size = parse_size(options.timefreq.size)
    with inputs.open(path) as source:
        png_path, npy_path = default_outputs(path, options.kind, png, npy)
        if png_path is not None:
            from ..plot.timefreq import check_cmap

            check_cmap(options.timefreq.cmap)
        job = _FeatureJob(options, source, size)
        written, shape = job.run(png_path, npy_path, reporter)
    return TimeFreqResult(written=written, png_to_stdout=is_stdio(png_path), shape=shape, source=SourceFacts.of(source))


class _FeatureJob:
    """The resolved computation of one input: front end (Kaldi or STFT + mel + log [+ DCT]), post chain, outputs."""

    def __init__(self, o: FeatureOptions, source: AudioSource, size: tuple[int, int]):
        self.o, self.source, self.size = o, source, size
        tf = o.timefreq
        check_channel_of(tf.channel, source)
        self.channels = 1 if tf.mix or tf.channel is not None else source.channels
        self.meta: dict[str, Any] = {}
        self.plan: Any = None  # the StftPlan (STFT front end)
        self.kopts: Any = None  # FbankOptions / MfccOptions (Kaldi front end)
        if o.is_kaldi:
            self.kopts = kaldi_options(o, source.sr)
            self.dim = self.kopts.dim
            self.n_frames = self.kopts.num_frames(source.n_samples)
        else:
            self._setup_stft()

    # ---------------------------------------------------------------- STFT front end
    def _setup_stft(self) -> None:
        from ..dsp.scaling import AMIN

        o, tf = self.o, self.o.timefreq
        assert tf.mel is not None
        self.plan = tf.stft.plan(self.source.sr, dtype="float32")
        bank, self.mel_meta, self.row_freqs = mel_bank(tf, self.plan)
        self.n_mels = bank.shape[0]
        self.power_kind: Any = "magnitude" if tf.scale == "magnitude" else "power"
        if tf.scale not in ("db", "power", "magnitude"):
            raise ParameterError(f"--scale: {tf.scale!r} is not one of db, power, magnitude")
        self.log = tf.mel.log if tf.scale == "db" or o.kind == "mfcc" else None
        if o.kind == "mfcc" and tf.scale != "db":
            raise ParameterError(
                "mfcc: --scale must be db (the cepstrum is the DCT of the log-mel values; pick the log with --log)"
            )
        if o.kind == "mfcc" and o.n_mfcc > self.n_mels:
            raise ParameterError(f"--n-mfcc ({o.n_mfcc}) cannot exceed --n-mels ({self.n_mels})")
        if o.energy:  # one more row summing every bin: the frame's total power
            bank = np.vstack([bank, np.ones((1, bank.shape[1]), dtype=bank.dtype)])
        self.bank = bank
        self.amin = float(tf.amin) if tf.amin is not None else AMIN[self.power_kind]
        if not (self.amin > 0 and math.isfinite(self.amin)):
            raise ParameterError(f"--amin must be a number > 0, got {tf.amin!r}")
        self.ref = parse_ref(tf.npy_ref)
        self.top_db = tf.npy_top_db
        self.dim = o.n_mfcc if o.kind == "mfcc" else self.n_mels
        self.n_frames = self.plan.n_frames(self.source.n_samples)
        self.ref_l: float | None = None
        self.clip_l: float | None = None

    def _unit(self) -> tuple[Any, float]:
        """(log function of a linear value, dB per unit of the log): ``db`` 10*log10 (power), ``ln``, ``log10``."""
        from ..dsp.scaling import DB_FACTOR

        factor = DB_FACTOR[self.power_kind]
        if self.log == "db":
            return (lambda v: factor * np.log10(v)), 1.0
        if self.log == "ln":
            return np.log, factor / math.log(10.0)
        return np.log10, factor

    def _stft_stream(self) -> Any:
        from ..dsp.stft import StftStream
        from ..engine import get_backend

        return StftStream(self.plan, output=self.power_kind, filterbank=self.bank, backend=get_backend(self.o.timefreq.stft.fft))

    def _blocks(self, advance: Any = None) -> Any:
        for block in self.source.blocks(BLOCK_SAMPLES, dtype="float64" if self.o.is_kaldi else "float32"):
            block = pick_channels(block, self.o.timefreq.channel, self.o.timefreq.mix)
            yield block
            if advance is not None:
                advance(block.shape[1])

    def _peak_pass(self, reporter: Reporter) -> None:
        """First pass: the largest mel value (for ``ref max`` and ``top_db``); sets ``ref_l`` and ``clip_l``."""
        log, per_db = self._unit()
        peak = -math.inf
        if self.ref == "max" or self.top_db is not None:
            stream = self._stft_stream()
            with reporter.progress(f"{self.o.kind} {self.source.name} (peak)", self.source.n_samples) as advance:
                for block in self._blocks(advance):
                    out = stream.push(block)
                    if out.shape[-1]:
                        peak = max(peak, float(out[..., : self.n_mels, :].max()))
                out = stream.finish()
                if out.shape[-1]:
                    peak = max(peak, float(out[..., : self.n_mels, :].max()))
            peak_l = float(log(max(peak, self.amin)))
        ref_l = peak_l if self.ref == "max" else float(log(max(self.amin, float(self.ref))))
        self.ref_l = ref_l
        self.clip_l = peak_l - ref_l - self.top_db / per_db if self.top_db is not None else None

    def _stft_features(self, chunk: np.ndarray) -> np.ndarray:
        """``(C, n_mels(+1), k)`` linear mel values -> ``(C, dim, k)`` log-mel or cepstra (float64)."""
        from ..dsp.features import mfcc

        log, _ = self._unit()
        x = chunk.astype(np.float64)
        if self.log is None:  # linear mel output (--scale power/magnitude, mel only)
            return np.asarray(x[:, : self.n_mels])
        L = log(np.maximum(x, self.amin))
        assert self.ref_l is not None
        if self.ref_l:
            L -= self.ref_l
        if self.clip_l is not None:
            np.maximum(L, self.clip_l, out=L)
        if self.o.kind != "mfcc":
            return np.asarray(L)
        energy = L[:, self.n_mels] if self.o.energy else None
        return np.asarray(mfcc(L[:, : self.n_mels], n_mfcc=self.o.n_mfcc, lifter=self.o.lifter, axis=-1, energy=energy))

    # ---------------------------------------------------------------- the loop
    def _front(self, reporter: Reporter) -> Any:
        """Yield ``(C, dim, k)`` float64 feature chunks over the whole input."""
        o, C = self.o, self.channels
        if o.is_kaldi:
            from ..dsp.kaldi import KaldiFeatureStream

            seeds = [None if o.kaldi.seed is None else o.kaldi.seed + c for c in range(C)]  # channel c: seed + c
            streams = [
                KaldiFeatureStream(self.kopts, sample_scale=KALDI_SAMPLE_SCALE, seed=seed, fft=self.o.timefreq.stft.fft)
                for seed in seeds
            ]
            with reporter.progress(f"{o.kind} {self.source.name}", self.source.n_samples) as advance:
                for block in self._blocks(advance):
                    outs = [s.accept_waveform(block[c]) for c, s in enumerate(streams)]
                    if outs[0].shape[0]:
                        yield np.stack([a.T for a in outs])
                outs = [s.input_finished() for s in streams]
                if outs[0].shape[0]:
                    yield np.stack([a.T for a in outs])
            return
        self._peak_pass(reporter)
        stream = self._stft_stream()
        with reporter.progress(f"{o.kind} {self.source.name}", self.source.n_samples) as advance:
            for block in self._blocks(advance):
                out = stream.push(block)
                if out.shape[-1]:
                    yield self._stft_features(out)
            out = stream.finish()
            if out.shape[-1]:
                yield self._stft_features(out)

    def run(self, png_path: str | None, npy_path: str | None, reporter: Reporter) -> tuple[list[str], tuple[int, ...]]:
        from ..plot import ColumnPooler

        o, C = self.o, self.channels
        rows = self.dim * (o.deltas + 1)
        shape = (rows, self.n_frames) if C == 1 else (C, rows, self.n_frames)
        if self.n_frames == 0:
            raise ParameterError(
                f"{self.source.name}: the input ({self.source.n_samples} samples) is shorter than one frame: no features"
            )
        posts = [_Post(o, self.dim) for _ in range(C)]
        poolers = [ColumnPooler(self.dim, self.n_frames, self.size[0]) for _ in range(C)]
        written: list[str] = []

        def consume(block: np.ndarray, writer: NpyFrameWriter | None) -> None:
            if block.shape[-1] == 0:
                return
            for c, pooler in enumerate(poolers):
                pooler.add(block[c, : self.dim])
            if writer is not None:
                writer.write(block[0] if C == 1 else block)

        with outputs_together(), contextlib.ExitStack() as stack:
            writer = stack.enter_context(NpyFrameWriter(npy_path, shape, np.float32)) if npy_path else None
            for chunk in self._front(reporter):
                consume(np.stack([p.accept(chunk[c]) for c, p in enumerate(posts)]), writer)
            tails = [p.finish() for p in posts]
            if tails[0] is not None:
                consume(np.stack([t for t in tails if t is not None]), writer)
            if o.cmvn == "utterance":
                means = np.stack([np.asarray(p.sums) / self.n_frames for p in posts])  # (C, dim)
                if writer is not None:
                    self._subtract_means(writer, means, rows)
                for c, pooler in enumerate(poolers):
                    pooler.image -= means[c][:, None]
            if npy_path is not None:
                meta = self._sidecar(shape)
                written += [npy_path, str(write_sidecar(npy_path, meta))]
            if png_path is not None:
                from ..plot.timefreq import draw_features

                draw_features(png_path, poolers, self)
                if not is_stdio(png_path):
                    written.insert(0, png_path)
        return written, shape

    def _subtract_means(self, writer: NpyFrameWriter, means: np.ndarray, rows: int) -> None:
        """Utterance CMVN, second pass: subtract each static row's mean (the on-disk chunk is (k, rows[, C]))."""
        full = np.zeros((self.channels, rows))
        full[:, : self.dim] = means
        offset = full[0] if self.channels == 1 else full.T  # (rows,) or (rows, C)
        writer.rewrite(lambda chunk: chunk - offset.astype(np.float32), chunk_frames=_CHUNK)

    # ---------------------------------------------------------------- sidecar and PNG
    def _row_names(self) -> list[str]:
        base = [f"c{i}" for i in range(self.dim)] if self.o.kind == "mfcc" else [f"mel{i}" for i in range(self.dim)]
        if self.o.is_kaldi and self.o.kind == "mel" and self.kopts.use_energy:
            base = (
                ([f"mel{i}" for i in range(self.dim - 1)] + ["energy"])
                if self.kopts.htk_compat
                else (["energy"] + [f"mel{i}" for i in range(self.dim - 1)])
            )
        if self.o.kind == "mfcc" and (self.o.energy if not self.o.is_kaldi else self.kopts.use_energy):
            base = ["energy" if b == "c0" else b for b in base]
        if self.o.is_kaldi and self.o.kind == "mfcc" and self.kopts.htk_compat:
            base = base[1:] + base[:1]
        names = list(base)
        for r in range(1, self.o.deltas + 1):
            names += [f"{'d' * r}({b})" for b in base]
        return names

    def _sidecar(self, shape: tuple[int, ...]) -> dict[str, Any]:
        o, tf, src = self.o, self.o.timefreq, self.source
        from pathlib import Path

        meta: dict[str, Any] = {
            **provenance(tf.stft.fft),
            "kind": "fbank" if o.is_kaldi and o.kind == "mel" else o.kind,
            "compat": o.compat,
            "source": src.name if is_stdio(src.name) else str(Path(src.name).resolve()),
            "source_frames": src.n_samples,
            "source_subtype": src.subtype,
            "sr": src.sr,
            "channels": self.channels,
            "mixed": tf.mix,
            "channel": tf.channel,
            "layout": "(n_rows, n_frames)" if self.channels == 1 else "(channels, n_rows, n_frames)",
            "kaldi_layout": "Kaldi and kaldi-native-fbank matrices are (n_frames, n_rows): use np.load(path).T "
            "(or .swapaxes(-1, -2))",
            "shape": list(shape),
            "dtype": "float32",
            "rows": self._row_names(),
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
        if o.is_kaldi:
            from dataclasses import asdict

            k = self.kopts
            W, H = k.window_size, k.window_shift
            first = 0 if k.snip_edges else H // 2 - W // 2
            meta.update(
                {
                    "kaldi": {
                        **asdict(k),
                        "window_size": W,
                        "window_shift": H,
                        "padded_window_size": k.padded_window_size,
                        "sample_scale": KALDI_SAMPLE_SCALE,
                        "seed": o.kaldi.seed,
                    },
                    "values": ("Kaldi compute-mfcc-feats" if o.kind == "mfcc" else "Kaldi compute-fbank-feats")
                    + " of the samples times 32768 (int16 units): "
                    + (
                        "ln(max(mel energy, FLT_EPSILON))"
                        if o.kind == "mfcc" or k.use_log_fbank
                        else "mel energies (linear, --use-log-fbank=false" + (", --use-power=false)" if not k.use_power else ")")
                    ),
                    "win_length": W,
                    "hop_length": H,
                    "n_fft": k.padded_window_size,
                    "window": k.window_type,
                    "window_position": "start",
                    "frame_time_s": {
                        "formula": "start of frame m = (m*hop_length + first) / sr; centre = start + win_length/2/sr",
                        "first": first,
                        "step": H / src.sr,
                    },
                }
            )
            return meta
        plan = self.plan
        meta.update(
            {
                **plan_fields(plan),
                "window_position": "center",
                "mel": self.mel_meta,
                "mel_centre_hz": [round(float(f), 6) for f in self.row_freqs],
                "scale": tf.scale,
                "log": self.log,
                "amin": self.amin,
                "ref": tf.npy_ref,
                "log_ref": self.ref_l,
                "top_db": self.top_db,
                "values": self._values_text(),
                "frame_time_s": {
                    "formula": "centre of frame m = (m*hop_length - pad + n_fft//2) / sr",
                    "pad": plan.pad,
                    "step": plan.hop_length / plan.sr,
                },
            }
        )
        if o.kind == "mfcc":
            meta["mfcc"] = {
                "n_mfcc": o.n_mfcc,
                "dct": "DCT-II orthonormal over the mel axis (scipy.fft.dct type 2, norm 'ortho')",
                "lifter": o.lifter,
                "lifter_formula": "1 + lifter/2 * sin(pi*(k+1)/lifter) (librosa)" if o.lifter else None,
                "energy": "row 0 = the log of the frame's total power sum_k |X[k]|^2 (one-sided bins), "
                "same log, floor and reference as the mel values"
                if o.energy
                else None,
            }
        return meta

    def _values_text(self) -> str:
        linear = "mel filterbank @ " + ("|X|^2" if self.power_kind == "power" else "|X|")
        if self.log is None:
            return linear
        f = {"db": ("10" if self.power_kind == "power" else "20") + "*log10", "ln": "ln", "log10": "log10"}[self.log]
        text = f"{f}(max({linear}, amin)) - log_ref"
        if self.top_db is not None:
            text += ", clipped top_db dB (in this log's unit) below the peak"
        if self.o.kind == "mfcc":
            text = f"DCT-II ortho over the mel rows of [{text}]"
        return text


LogUnit = Literal["db", "ln", "log10"]

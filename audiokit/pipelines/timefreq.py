"""The time-frequency job (``spectrogram``, ``mel``, ``mfcc``): file → front end → chain → ``.npy`` + sidecar / PNG.

file → blocks (``--channel``/``--mix``, ``--pad-or-trim``) → a front end: the STFT (+ mel filter bank;
:mod:`.stft_frontend`) or Kaldi's fbank/MFCC (:mod:`.kaldi_frontend`) → the post-processing chain (log, ``--ref``,
``--top-db``, DCT, Whisper's scaling, CMVN, deltas; :mod:`.features`) → the ``.npy`` frame by frame, its sidecar
(:func:`~audiokit.pipelines.sidecar.timefreq_sidecar`) and the display image → PNG (:mod:`audiokit.plot.timefreq`).
Memory holds one block, one chunk of frames, the chain's state and the display image, whatever the input length.

:func:`run_timefreq` is the one entry point: its options are a :class:`TimeFreqOptions` (``spectrogram``) or a
:class:`FeatureOptions` (``mel``, ``mfcc``), as typed (:mod:`.timefreq_options`); :meth:`FeatureOptions.check`
parses them once, and the front end resolves the durations at the input's rate.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from ..errors import ParameterError
from ..io import check_distinct, check_output_path, derived_output, is_stdio, outputs_together
from ..io.members import OpenMember, TimeMajorFrames
from ..io.npy import NpyFrameWriter, sidecar_path, write_sidecar
from ..io.reader import BLOCK_SAMPLES
from .params import InputOptions, check_channel_of, check_figure_path, choice, duration_samples
from .progress import SILENT, Reporter
from .registry import MemberGeometry, SourceFacts
from .stft_frontend import StftFrontEnd, mel_bank, pick_channels
from .timefreq_options import (
    PAD_MODES,
    PLAUSIBLE_WINDOW_S,
    SCALES,
    FeatureOptions,
    MelOptions,
    Parsed,
    StftOptions,
    TimeFreqOptions,
    parse_ref,
)
from .timefreq_split import pool_in_ranges, splittable

if TYPE_CHECKING:
    from ..io.reader import AudioSource
    from .features import Chain

__all__ = [
    "FeatureOptions",
    "MelOptions",
    "PAD_MODES",
    "PLAUSIBLE_WINDOW_S",
    "SAFE_PEAK",
    "SCALES",
    "StftOptions",
    "TimeFreqOptions",
    "TimeFreqResult",
    "WHISPER_SR",
    "default_outputs",
    "filterbank_job",
    "member_geometry",
    "parse_ref",
    "pick_channels",
    "run_timefreq",
]


@dataclass(frozen=True)
class TimeFreqResult:
    """Written files (``.npy``, sidecar, then PNG; no ``-``), whether the PNG went to stdout, the saved array's
    shape, and the input as opened (None for the filter bank, which reads no samples)."""

    written: list[str]
    png_to_stdout: bool
    shape: tuple[int, ...] | None
    source: SourceFacts | None = None
    #: With ``member``: the sidecar the ``.npy`` would have had (what a corpus store records once, per store).
    sidecar: dict[str, Any] | None = None

    @property
    def n_samples(self) -> int | None:
        """Samples per channel of the input as opened (a segment's length for a segment)."""
        return None if self.source is None else self.source.n_samples

    @property
    def sr(self) -> int | None:
        """Sample rate of the input (Hz)."""
        return None if self.source is None else self.source.sr

    @property
    def channels(self) -> int | None:
        """Channels of the input as opened (the array has one with ``--channel``/``--mix``)."""
        return None if self.source is None else self.source.channels


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


def run_timefreq(
    path: str,
    options: TimeFreqOptions | FeatureOptions,
    *,
    png: str | None = None,
    npy: str | None = None,
    inputs: InputOptions = InputOptions(),  # noqa: B008 (frozen)
    reporter: Reporter = SILENT,
    member: OpenMember | None = None,
    layout: str = "rows",
    describe: bool = True,
) -> TimeFreqResult:
    """Compute the spectrogram, mel spectrogram or features of ``path``; save ``npy`` (+ sidecar) and/or draw ``png``.

    With neither ``png`` nor ``npy``, the PNG goes to ``<stem>.<kind>.png`` beside the input; ``png`` ``-`` writes
    the PNG bytes to standard output.  The ``.npy`` is float32 (complex64 for ``--complex``) ``(n_rows,
    n_frames)``, ``(channels, n_rows, n_frames)`` for several channels, its sidecar describing the rows, the
    framing and every option.

    A (log-)spectrogram's STFT runs in single precision; a float input with samples beyond :data:`SAFE_PEAK`
    (where ``|X|²`` could overflow float32) is transformed again in double precision, and values that still
    cannot be stored are an :class:`~audiokit.errors.InputError`, never NaN/Inf in the output.

    ``layout`` ``"frames"`` (``--layout frames``) saves the ``.npy`` time-major, ``(n_frames, n_rows)`` (``(n_frames,
    n_rows, channels)`` for several channels): the same bytes with the reversed axes in C order, as Kaldi, Lhotse
    and PyTorch readers index it; the sidecar's ``layout`` and ``shape`` say so.

    ``member`` (a corpus store, :mod:`audiokit.batch.stores`): ``member(n_frames, n_feats)`` gives the sink of the
    utterance's time-major ``(n_frames, n_feats)`` float32 rows, written instead of ``npy`` (the values are the
    ``.npy``'s, transposed); with ``describe`` the result's ``sidecar`` is what the ``.npy`` sidecar would hold.
    One channel only.
    """
    parsed = FeatureOptions.of(options).check()
    tf = parsed.tf
    if layout not in LAYOUTS:
        raise ParameterError(f"--layout: {layout!r} is not one of {', '.join(LAYOUTS)}")
    with inputs.open(path) as opened:
        check_channel_of(tf.channel, opened)
        if member is not None:
            return _run_member(path, parsed, opened, member, reporter, describe)
        png_path, npy_path = default_outputs(path, parsed.kind, png, npy)
        if png_path is not None:
            from ..plot.timefreq import check_cmap

            check_cmap(tf.cmap)
        if parsed.want_complex and npy_path is None:
            raise ParameterError("--complex needs --npy PATH (the complex STFT is saved for istft)")
        if layout == "frames" and npy_path is None:
            raise ParameterError("--layout frames describes the --npy array: give --npy PATH")
        source = _fitted(opened, parsed)
        time_major = layout == "frames"
        try:
            job = _Job(parsed, source, opened, "float32", time_major)
            job.reopen = (path, lambda: inputs.open(path))
            written, shape = job.run(png_path, npy_path, reporter)
        except _BeyondSinglePrecision:
            written, shape = _Job(parsed, source, opened, "float64", time_major).run(png_path, npy_path, reporter)
    return TimeFreqResult(written=written, png_to_stdout=is_stdio(png_path), shape=shape, source=SourceFacts.of(opened))


def _run_member(
    path: str, parsed: Parsed, opened: AudioSource, member: OpenMember, reporter: Reporter, describe: bool
) -> TimeFreqResult:
    """:func:`run_timefreq` into a store's member: one channel, real values, no figure."""
    if parsed.want_complex:
        raise ParameterError("--complex: a corpus store holds real features (save complex STFTs with --store files)")
    source = _fitted(opened, parsed)
    channels = 1 if parsed.tf.mix or parsed.tf.channel is not None else source.channels
    if channels > 1:
        raise ParameterError(
            f"the input has {channels} channels; a corpus store holds one per utterance (give --channel N or --mix)",
            path,
        )
    try:
        job = _Job(parsed, source, opened, "float32")
        shape = job.run(None, None, reporter, member=member)[1]
    except _BeyondSinglePrecision:
        job = _Job(parsed, source, opened, "float64")
        shape = job.run(None, None, reporter, member=member)[1]
    sidecar = job._sidecar(np.float32) if describe else None
    return TimeFreqResult(written=[], png_to_stdout=False, shape=shape, source=SourceFacts.of(opened), sidecar=sidecar)


def member_geometry(options: TimeFreqOptions | FeatureOptions, sr: int, command: str) -> MemberGeometry:
    """The :class:`~audiokit.pipelines.registry.MemberGeometry` of a store's arrays of job ``command``
    (``spectrogram``, ``mel``, ``mfcc``) with ``options`` on inputs at ``sr`` Hz (reads no input).

    ``n_feats`` and ``hop_length`` are those of a one-channel run; ``feature_type`` is ``kaldi-fbank`` /
    ``kaldi-mfcc`` under ``--compat kaldi`` (Lhotse's names of the same features), else ``audiokit-<command>``;
    ``channel`` is ``--channel N``, ``"mix"`` for ``--mix``, or None.
    """
    parsed = FeatureOptions.of(options).check()
    stand_in = _StandIn(sr)
    job = _Job(parsed, stand_in, cast("AudioSource", stand_in), "float32")
    o = parsed.options
    if o.is_kaldi:
        feature_type = "kaldi-fbank" if o.kind == "mel" else "kaldi-mfcc"
    else:
        feature_type = f"audiokit-{command}"
    return MemberGeometry(
        n_feats=job.rows,
        hop_length=int(job.frontend.hop_length),
        sr=sr,
        feature_type=feature_type,
        channel="mix" if parsed.tf.mix else parsed.tf.channel,
    )


class _StandIn:
    """A silent 10 s mono PCM input at ``sr`` Hz, never read: enough to build a job's front end and chain."""

    channels, subtype, is_float, name = 1, "PCM_16", False, "(geometry)"

    def __init__(self, sr: int) -> None:
        self.sr, self.n_samples = int(sr), 10 * int(sr)


#: ``--layout`` choices of the ``.npy``: audiokit's ``(n_rows, n_frames)``, or time-major ``(n_frames, n_rows)``.
LAYOUTS = ("rows", "frames")
#: Largest input sample (full-scale units) for which single precision is safe: |X| <= n_fft·peak stays below
#: 2**(24+20) for n_fft <= 2**24, so |X|² < 2**88, far inside float32 (2**128) after the mel sums too.
SAFE_PEAK = float(2**20)
#: Whisper's sample rate: its front end (n_fft 400 and hop 160 samples, mel bands up to 8 kHz) is defined there.
WHISPER_SR = 16000


class _BeyondSinglePrecision(Exception):
    """A float input exceeds :data:`SAFE_PEAK`: a (log-)spectrogram restarts in double precision."""


class _Job:
    """One computation: front end, chain, outputs; :meth:`run` streams the input through them."""

    def __init__(
        self, parsed: Parsed, source: Any, opened: AudioSource, dtype: Literal["float32", "float64"], time_major: bool = False
    ):
        from .features import build_chain

        self.time_major = time_major
        o, tf = parsed.options, parsed.tf
        self.parsed, self.source, self.opened, self.dtype = parsed, source, opened, dtype
        self.channels = 1 if tf.mix or tf.channel is not None else source.channels
        if o.is_whisper:
            _check_whisper_input(source, self.channels)
        self.frontend: Any
        if o.is_kaldi:
            from .kaldi_frontend import KaldiFrontEnd

            self.frontend = KaldiFrontEnd(parsed, source, self.channels)
        else:
            self.frontend = _stft_frontend(parsed, source, dtype)
        self.n_frames = self.frontend.n_frames
        if parsed.features and self.n_frames == 0:
            raise ParameterError(f"{source.name}: the input ({source.n_samples} samples) is shorter than one frame: no features")
        self.chain: Chain = build_chain(
            parsed,
            kaldi=o.is_kaldi,
            n_mels=self.frontend.peak_rows,
            channels=self.channels,
            n_frames=self.n_frames,
            dtype=dtype,
            name=source.name,
        )
        self.rows = self.chain.rows if parsed.features else self.frontend.rows
        self.shape = (self.rows, self.n_frames) if self.channels == 1 else (self.channels, self.rows, self.n_frames)
        self.heard = False
        #: (path, open again): a long PNG-only picture may be computed in frame ranges on threads (:mod:`.timefreq_split`)
        self.reopen: tuple[str, Any] | None = None

    def _frames(self, reporter: Reporter, label: str, *, watch: bool = False) -> Any:
        """One pass over the input: yield the front end's non-empty ``(channels, rows, k)`` chunks.

        A float input in single precision restarts the job in double precision beyond :data:`SAFE_PEAK` (every
        job: a spectrogram saves its linear values, the features' float32 STFT would overflow); ``watch``: note
        whether any sample is non-zero (:attr:`heard`).
        """
        tf, fe = self.parsed.tf, self.frontend
        fe.start()
        beyond = self.source.is_float and self.dtype == "float32"
        with reporter.progress(label, self.source.n_samples) as advance:
            for block in self.source.blocks(BLOCK_SAMPLES, dtype=fe.read_dtype):
                if beyond and block.size and float(np.abs(block).max()) > SAFE_PEAK:
                    raise _BeyondSinglePrecision
                if watch:
                    self.heard = self.heard or bool(np.any(block))
                block = pick_channels(block, tf.channel, tf.mix)
                chunk = fe.push(block)
                if chunk.shape[-1]:
                    yield chunk
                advance(block.shape[1])
            chunk = fe.finish()
            if chunk.shape[-1]:
                yield chunk

    def run(
        self, png_path: str | None, npy_path: str | None, reporter: Reporter, member: OpenMember | None = None
    ) -> tuple[list[str], tuple[int, ...]]:
        """Stream the input through the front end and the chain; write the outputs together; return (written, shape).

        ``member``: write the frames, time-major, to ``member(n_frames, n_rows)`` instead of a ``.npy``.
        """
        from ..plot import ColumnPooler

        parsed, chain, C = self.parsed, self.chain, self.channels
        features = parsed.features
        label = f"{parsed.kind} {self.source.name}"
        reference = chain.reference
        if reference is not None and reference.needs_peak:
            with np.errstate(over="ignore", invalid="ignore") if self.dtype == "float64" else contextlib.nullcontext():
                reference.set_peak(self._peak(reporter, label))  # float64: checked on the results (Store)
        display_rows = chain.dim if features else self.frontend.rows
        poolers = [ColumnPooler(display_rows, self.n_frames, parsed.size[0]) for _ in range(C)] if png_path else []
        npy_dtype = np.complex64 if parsed.want_complex else np.float32
        written: list[str] = []

        def save(block: np.ndarray, writer: NpyFrameWriter | None) -> None:
            if block.shape[-1] == 0:
                return
            if features:
                for c, pooler in enumerate(poolers):
                    pooler.add(block[c, : chain.dim])
            if writer is not None:
                writer.write(block[0] if C == 1 else block)

        with outputs_together(), contextlib.ExitStack() as stack:
            if self.dtype == "float64":  # overflow is possible here and checked on the results (the Store step)
                stack.enter_context(np.errstate(over="ignore", invalid="ignore"))
            writer: Any = None
            if member is not None:
                writer = stack.enter_context(TimeMajorFrames(member(self.n_frames, self.rows), self.shape, chain.rewrites))
            elif npy_path:
                writer = stack.enter_context(NpyFrameWriter(npy_path, self.shape, npy_dtype, time_major=self.time_major))
            # a spectrogram's picture pools the linear values (drawn in dB re the PNG's own reference) and needs no
            # chain; features are drawn as computed
            run_chain = writer is not None or features
            split = self.reopen is not None and not run_chain and splittable(self, self.reopen[0], png_path, npy_path)
            if split and self.reopen is not None:
                with reporter.progress(label, self.source.n_samples) as advance:
                    self.heard = pool_in_ranges(self, poolers, self.reopen[1], advance, _BeyondSinglePrecision, SAFE_PEAK)
            for chunk in () if split else self._frames(reporter, label, watch=not features):
                if not features:
                    display = chunk.real**2 + chunk.imag**2 if parsed.want_complex else chunk
                    for c, pooler in enumerate(poolers):
                        pooler.add(display[c])
                if run_chain:
                    save(chain.apply(chunk), writer)
            tail = chain.finish() if run_chain else None
            if tail is not None:
                save(tail, writer)
            chain.finalize(writer, [p.image for p in poolers])
            if writer is not None and npy_path is not None:
                written += [npy_path, str(write_sidecar(npy_path, self._sidecar(npy_dtype)))]
            if not features and not self.heard:
                warnings.warn(f"{self.source.name}: the input is digital silence; every value is the floor", stacklevel=3)
            if png_path is not None:
                self._draw(png_path, poolers)
                if not is_stdio(png_path):
                    written.insert(0, png_path)
        return written, self.shape

    def _peak(self, reporter: Reporter, label: str) -> float:
        """First pass: the largest linear value of the mel rows (``--ref max`` / ``--top-db`` before more steps)."""
        peak = -math.inf
        for chunk in self._frames(reporter, f"{label} (peak)"):
            peak = max(peak, float(chunk[..., : self.frontend.peak_rows, :].max()))
        return peak

    def _sidecar(self, npy_dtype: Any) -> dict[str, Any]:
        from .sidecar import timefreq_sidecar

        parsed, o, fe = self.parsed, self.parsed.options, self.frontend
        layout = "kaldi" if o.is_kaldi else ("features" if parsed.features else "spectrum")
        fields = {**fe.framing(features=parsed.features), **self.chain.describe()}
        if o.is_kaldi:
            fields.update(rows=self.chain.row_names(fe.row_names()), values=fe.values_text())
        elif parsed.features:
            fields["rows"] = self.chain.row_names()
        if isinstance(self.source, _PadOrTrim):
            fields["pad_or_trim"] = self.source.describe(fe.hop_length, self.n_frames)
        return timefreq_sidecar(
            layout,
            kind="fbank" if o.is_kaldi and o.kind == "mel" else o.kind,
            compat=o.compat,
            source=self.opened,
            channels=self.channels,
            mixed=parsed.tf.mix,
            channel=parsed.tf.channel,
            shape=self.shape,
            dtype=npy_dtype,
            fft=parsed.tf.stft.fft,
            time_major=self.time_major,
            **fields,
        )

    def _draw(self, png_path: str, poolers: list[Any]) -> None:
        from ..plot.timefreq import draw_features, draw_timefreq

        parsed, fe = self.parsed, self.frontend
        if parsed.features:
            draw_features(png_path, poolers, _FigureFacts.of(self))
            return
        draw_timefreq(
            png_path,
            replace(parsed.tf, top_db=parsed.tf.png_top_db or 0.0),
            source_name=self.source.name,
            plan=fe.plan,
            poolers=poolers,
            kind="power" if parsed.want_complex else parsed.power_kind,
            ref=parsed.png_ref,
            row_freqs=fe.row_freqs,
            mel_meta=fe.mel_meta,
            size=parsed.size,
            n_samples=self.source.n_samples,
        )


@dataclass(frozen=True)
class _FigureFacts:
    """What :func:`audiokit.plot.timefreq.draw_features` reads of a features job (its ``FeatureFigure``)."""

    o: FeatureOptions
    source: Any
    plan: Any
    kopts: Any
    n_frames: int
    dim: int
    log: str | None
    size: tuple[int, int]
    n_samples: int
    mel_meta: dict[str, Any]

    @classmethod
    def of(cls, job: _Job) -> _FigureFacts:
        fe, parsed = job.frontend, job.parsed
        return cls(
            o=parsed.options,
            source=job.source,
            plan=getattr(fe, "plan", None),
            kopts=getattr(fe, "kopts", None),
            n_frames=job.n_frames,
            dim=job.chain.dim,
            log=parsed.log if parsed.scale == "db" or parsed.kind == "mfcc" else None,
            size=parsed.size,
            n_samples=job.source.n_samples,
            mel_meta=getattr(fe, "mel_meta", {}),
        )


def _stft_frontend(parsed: Parsed, source: Any, dtype: Literal["float32", "float64"]) -> StftFrontEnd:
    """The STFT front end; its mel bank's duplicate bands warned about once per job (the bank is cached per process,
    so the warning of its first build is not relied on), never under a ``--compat`` preset (a toolkit's own bank,
    asked for as it is: no advice to change its n_fft)."""
    from ..dsp.mel import DuplicateBandsWarning, warn_duplicate_bands

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicateBandsWarning)
        frontend = StftFrontEnd(parsed, source, dtype)
    meta = frontend.mel_meta
    if parsed.options.compat is None and frontend.filterbank is not None and meta:
        bands = frontend.filterbank[: meta["n_mels"]]  # not mfcc --energy's total-power row
        warn_duplicate_bands(bands, sr=source.sr, fmin=meta["fmin_hz"], fmax=meta["fmax_hz"], scale=meta["mel_scale"])
    return frontend


def _check_whisper_input(source: Any, channels: int) -> None:
    """Whisper's front end takes one channel at 16 kHz (its n_fft, hop and 8 kHz mel top are in samples there)."""
    if source.sr != WHISPER_SR:
        raise ParameterError(
            f"--compat whisper: the input is {source.sr} Hz; Whisper's front end is defined at {WHISPER_SR} Hz "
            "(resample it first: audiokit resample FILE --to 16k)",
            source.name,
        )
    if channels > 1:
        raise ParameterError(
            f"--compat whisper: the input has {channels} channels; Whisper's front end takes one (--channel N or --mix)",
            source.name,
        )


def _fitted(source: AudioSource, parsed: Parsed) -> Any:
    """``source``, or with ``--pad-or-trim`` a view of it cut or zero-padded to that length (:class:`_PadOrTrim`)."""
    text = parsed.options.pad_or_trim
    if text is None:
        return source
    return _PadOrTrim(source, duration_samples("--pad-or-trim", text, source.sr))


class _PadOrTrim:
    """The first ``n_samples`` of ``source``, zeros after its end: Whisper's ``pad_or_trim``, transformers'
    ``padding="max_length", truncation=True`` (``padding_value`` 0, on the right); the STFT sees ``n_samples``."""

    def __init__(self, source: AudioSource, n_samples: int):
        self._source, self.n_samples = source, n_samples

    def __getattr__(self, name: str) -> Any:  # name, sr, channels, subtype, is_float: the input's
        return getattr(self._source, name)

    def blocks(self, block_size: int = BLOCK_SAMPLES, *, dtype: str = "float32") -> Any:
        """The input's blocks up to ``n_samples``, then blocks of zeros up to ``n_samples``."""
        left = self.n_samples
        for block in self._source.blocks(block_size, dtype=dtype, n_samples=min(left, self._source.n_samples)):
            left -= block.shape[1]
            yield block
        while left > 0:
            n = min(block_size, left)
            left -= n
            yield np.zeros((self._source.channels, n), dtype=dtype)

    def describe(self, hop: int, n_frames: int) -> dict[str, Any]:
        """The sidecar's ``pad_or_trim``: the lengths, and how many frames start inside the input."""
        given = min(self._source.n_samples, self.n_samples)
        return {
            "n_samples": self.n_samples,
            "input_samples": self._source.n_samples,
            "input_frames": min(n_frames, -(-given // hop)),
            "input_frames_formula": "frames m with m*hop_length < min(input_samples, n_samples) (transformers' "
            "attention_mask); the others start in the zero padding",
        }


def filterbank_job(
    path: str,
    options: TimeFreqOptions | FeatureOptions,
    *,
    png: str | None,
    npy: str | None,
    inputs: InputOptions = InputOptions(),  # noqa: B008 (frozen)
    scale: str = "mel",
) -> TimeFreqResult:
    """``mel --filterbank``: draw the triangles and/or save the ``(n_mels, n_freqs)`` matrix (rate from ``path``).

    ``scale`` (``--filterbank-scale``): the PNG's frequency axis, ``mel`` (mel-spaced) or ``linear`` (Hz)."""
    o = FeatureOptions.of(options)
    scale = choice("--filterbank-scale", scale, ("mel", "linear"))
    if o.is_kaldi or o.deltas or o.cmvn != "none":
        raise ParameterError("--filterbank draws audiokit's mel bank: not with --compat kaldi, --deltas or --cmvn")
    parsed = o.check()
    with inputs.open(path) as source:
        sr = source.sr
    png, npy = default_outputs(path, "melfb", png, npy)
    plan = parsed.tf.stft.plan(sr)
    mel = parsed.mel or MelOptions()
    bank, mel_meta, _ = mel_bank(mel, parsed.tf, plan)
    written: list[str] = []
    with outputs_together():
        if npy is not None:
            from .. import __version__
            from ..io.npy import save_npy

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

            draw_filterbank(png, bank, plan, mel, parsed.tf.size, scale=scale)
            if not is_stdio(png):
                written.insert(0, png)
    return TimeFreqResult(written=written, png_to_stdout=is_stdio(png), shape=tuple(bank.shape))

"""The ``pitch`` job: f0 of one input by pYIN or YIN (librosa 0.11's, bit for bit), streamed block by block.

The numbers are :mod:`audiokit.dsp.pitch`'s (:class:`~audiokit.dsp.pitch.stream.PitchTracker`); this module opens
the input, mixes its channels to mono (the mean of the channels), feeds the tracker and, for ``-o``, a magnitude
STFT of the same framing (max-pooled to the figure's width as it streams), and turns the result into the report,
the ``--npy`` rows and the PNG.

In a corpus store (``audiokit batch pitch --store npy|shards|kaldi|parquet``, :func:`pitch_member`) one utterance
is a time-major ``(n_frames, 3)`` float32 array of the columns :data:`MEMBER_COLUMNS` -- the ``--npy`` rows 1..3
(``f0_hz``, ``voiced_flag``, ``voiced_prob``) cast to float32; the time is implicit (frame ``m`` at
``m * hop / sr``), as in every store.

Options as typed: ``--fmin 65Hz --fmax 2093Hz`` (C2..C7, librosa's recommendation), ``--win 64ms`` (the frame,
rounded to samples at the input's rate), ``--hop`` (default a quarter of the frame, librosa's rule: 16 ms).  Frames
are centred: frame ``m`` is centred on sample ``m * hop`` (time ``m * hop / sr``), with ``win // 2`` zeros before
the first sample and after the last.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..dsp.pitch import PyinModel
from ..dsp.pitch.params import PitchGeometry
from ..dsp.pitch.stream import PitchTracker
from ..errors import ParameterError
from ..io import check_distinct, check_output_path, outputs_together
from ..io.npy import save_npy, sidecar_path
from ..io.reader import BLOCK_SAMPLES
from ..units import parse_duration
from .params import InputOptions, check_figure_path, choice, duration_samples, finite_or_none, frequency_hz, option_error
from .progress import SILENT, Reporter
from .registry import JobResult, JobSpec, MemberGeometry, SourceFacts

__all__ = [
    "MEMBER_COLUMNS",
    "METHODS",
    "PITCH_SPEC",
    "PitchOptions",
    "check_options",
    "member_geometry",
    "pitch_file",
    "pitch_member",
]

METHODS = ("pyin", "yin")
#: The ``--npy`` rows, in order.
ROWS = ("time_s", "f0_hz", "voiced_flag", "voiced_prob")
#: The columns of a corpus store's ``(n_frames, 3)`` array: ``ROWS[1:]`` (the time is ``m * hop_length / sr``).
MEMBER_COLUMNS = ROWS[1:]
#: Frames cast and written to a store's member at a time (``MEMBER_CHUNK x 3`` float64: 1.5 MiB).
MEMBER_CHUNK = 65536


@dataclass(frozen=True)
class PitchOptions:
    """Options of ``audiokit pitch`` as typed.

    Attributes
    ----------
    method : {"pyin", "yin"}
        pYIN (probabilistic, HMM-decoded voicing) or YIN (an f0 on every frame; "voiced" = a trough below
        ``threshold``).
    fmin, fmax : str
        Frequency range (``65Hz``, ``2.093kHz``; a bare number is Hz).
    win : str
        Frame length (``64ms``; a bare number is samples).
    hop : str or None
        Hop (``16ms``); None: a quarter of the frame (rounded down).
    threshold : float
        YIN's absolute trough threshold on the normalised difference (``--method yin``).
    log_freq : bool
        PNG: logarithmic frequency axis.
    size : str
        PNG size, ``WIDTHxHEIGHT`` pixels.
    """

    method: str = "pyin"
    fmin: str = "65Hz"
    fmax: str = "2093Hz"
    win: str = "64ms"
    hop: str | None = None
    threshold: float = 0.1
    log_freq: bool = False
    size: str = "1200x500"

    @property
    def method_name(self) -> Literal["pyin", "yin"]:
        return "yin" if choice("--method", self.method, METHODS) == "yin" else "pyin"

    def model(self, sr: int) -> PyinModel:
        """The analysis at ``sr`` Hz (ParameterError naming the option whose value does not fit the rate)."""
        fmin, fmax, frame, hop = self._at_rate(sr)
        return PyinModel.make(sr=sr, fmin=fmin, fmax=fmax, frame_length=frame, hop_length=hop)

    def framing(self, sr: int) -> PitchGeometry:
        """The framing alone at ``sr`` Hz (what :meth:`model` checks, without building the model; its warnings are
        dropped: the run of every input records them)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fmin, fmax, frame, hop = self._at_rate(sr)
            return PitchGeometry.make(sr=sr, fmin=fmin, fmax=fmax, frame_length=frame, hop_length=hop)

    def _at_rate(self, sr: int) -> tuple[float, float, int, int | None]:
        """``(fmin, fmax, frame_length, hop_length or None)`` at ``sr`` Hz, checked against the rate."""
        fmin, fmax = frequency_hz("--fmin", self.fmin), frequency_hz("--fmax", self.fmax)
        frame = duration_samples("--win", self.win, sr, plausible_s=0.005)
        hop = None if self.hop is None else duration_samples("--hop", self.hop, sr)
        if fmax > sr / 2:
            raise ParameterError(f"--fmax: {fmax:g} Hz is above the Nyquist frequency of the {sr} Hz input ({sr / 2:g} Hz)")
        if frame < 3 or sr / fmin >= frame - 1:
            raise ParameterError(
                f"--win: a {frame}-sample frame at {sr} Hz holds less than one period of --fmin {fmin:g} Hz "
                f"(needs > {math.ceil(sr / fmin) + 1} samples, {1000 * (sr / fmin + 1) / sr:.1f} ms)"
            )
        return fmin, fmax, frame, hop


def check_options(options: PitchOptions) -> None:
    """Rate-free checks (exit 2 before any input is read)."""
    from ..plot.layout import parse_size

    _ = options.method_name
    fmin, fmax = frequency_hz("--fmin", options.fmin), frequency_hz("--fmax", options.fmax)
    if not 0 < fmin < fmax:
        raise ParameterError(f"--fmin {fmin:g} Hz and --fmax {fmax:g} Hz: need 0 < fmin < fmax")
    for name, text in (("--win", options.win), ("--hop", options.hop)):
        if text is not None:
            try:
                parse_duration(text)
            except ParameterError as exc:
                raise option_error(name, exc) from None
    if not (isinstance(options.threshold, (int, float)) and 0 < options.threshold <= 1):
        raise ParameterError(f"--threshold: {options.threshold!r} must be in (0, 1]")
    parse_size(options.size)


@dataclass(frozen=True)
class PitchTrack:
    """The per-frame result: times (s), f0 (Hz, 0 where unvoiced), voicing and its probability."""

    times: np.ndarray
    f0: np.ndarray
    voiced: np.ndarray
    prob: np.ndarray


def _report(track: PitchTrack, name: str, source: Any, model: PyinModel, method: str) -> dict[str, Any]:
    g = model.geometry
    voiced = track.f0[track.voiced]
    undefined: dict[str, str] = {}

    def stat(key: str, value: float | None) -> float | None:
        if value is None:
            undefined[key] = "no voiced frame"
        return None if value is None else finite_or_none(value)

    some = voiced.size > 0
    return {
        "path": name,
        "sr": int(source.sr),
        "channels": int(source.channels),
        "duration_s": source.n_samples / source.sr,
        "method": method,
        "fmin_hz": g.fmin,
        "fmax_hz": g.fmax,
        "frame_length": g.frame_length,
        "hop_length": g.hop_length,
        "n_frames": int(track.f0.size),
        "voiced_frames": int(voiced.size),
        "voiced_fraction": round(voiced.size / max(track.f0.size, 1), 6),
        "f0_median_hz": stat("f0_median_hz", float(np.median(voiced)) if some else None),
        "f0_mean_hz": stat("f0_mean_hz", float(np.mean(voiced)) if some else None),
        "f0_min_hz": stat("f0_min_hz", float(voiced.min()) if some else None),
        "f0_max_hz": stat("f0_max_hz", float(voiced.max()) if some else None),
        "undefined": undefined,
    }


def _sidecar(report: dict[str, Any], n_frames: int) -> dict[str, Any]:
    return {
        "kind": "pitch",
        "path": report["path"],
        "sr": report["sr"],
        "shape": [len(ROWS), n_frames],
        "dtype": "float64",
        "layout": "(rows, frames)",
        "rows": list(ROWS),
        "method": report["method"],
        "fmin_hz": report["fmin_hz"],
        "fmax_hz": report["fmax_hz"],
        "frame_length": report["frame_length"],
        "hop_length": report["hop_length"],
        "center": True,
        "time_s": "m * hop_length / sr: frame m is centred on sample m * hop_length (zero padding at both ends)",
        "unvoiced": "f0_hz 0 and voiced_flag 0 (pyin: the HMM's unvoiced states; yin: no trough below the threshold)",
        "channels": "the mean of the input's channels",
    }


def _check_outputs(path: str, png: str | None, npy: str | None) -> None:
    if npy is not None:
        if npy == "-" or not npy.lower().endswith(".npy"):
            raise ParameterError(f"--npy: {npy!r} must be a file path ending in .npy")
        check_output_path(npy, [path])
        check_output_path(sidecar_path(npy), [path])
    if png is not None:
        check_output_path(png, [path])
    check_distinct({"-o": png, "--npy": npy, "the sidecar of --npy": npy and sidecar_path(npy)})
    check_figure_path(png)


def pitch_file(
    path: str,
    options: PitchOptions = PitchOptions(),
    *,
    npy: str | None = None,
    png: str | None = None,
    inputs: InputOptions = InputOptions(),
    reporter: Reporter = SILENT,
) -> JobResult:
    """Track the f0 of ``path`` (its report in ``.report``); write the ``npy`` rows (+ sidecar) and the ``png``."""
    check_options(options)
    with inputs.open(path) as source:
        _check_outputs(path, png, npy)
        model, track, picture = _track(source, options, reporter, png is not None)
        report = _report(track, source.name, source, model, options.method_name)
        with outputs_together():
            if npy is not None:
                rows = np.stack([track.times, track.f0, track.voiced.astype(np.float64), track.prob])
                save_npy(npy, rows, _sidecar(report, track.f0.size))
            if png is not None and picture is not None:
                _draw(png, picture, track, report, options)
    return JobResult(SourceFacts.of(source), shape=(len(ROWS), int(track.f0.size)), report=report)


def pitch_member(
    path: str,
    options: PitchOptions,
    inputs: InputOptions,
    open_member: Callable[[int, int], Any],
    describe: bool,
) -> JobResult:
    """Track the f0 of ``path`` into a corpus store's member (``PITCH_SPEC.run_member``).

    The member is ``open_member(n_frames, 3)``; its rows are the frames, its columns :data:`MEMBER_COLUMNS`, the
    values those of the single-file ``--npy`` rows 1..3, written :data:`MEMBER_CHUNK` frames at a time (the store's
    sink casts them to float32).  The result has the report (what ``--json`` prints) and, with ``describe``, the
    sidecar of the store's arrays (:func:`_member_sidecar`).
    """
    check_options(options)
    with inputs.open(path) as source:
        model, track, _ = _track(source, options, SILENT, False)
        report = _report(track, source.name, source, model, options.method_name)
        n_frames = int(track.f0.size)
        sink = open_member(n_frames, len(MEMBER_COLUMNS))
        for start in range(0, n_frames, MEMBER_CHUNK):
            part = slice(start, start + MEMBER_CHUNK)
            sink.write(np.stack([track.f0[part], track.voiced[part].astype(np.float64), track.prob[part]], axis=1))
    sidecar = _member_sidecar(report) if describe else None
    return JobResult(SourceFacts.of(source), shape=(len(MEMBER_COLUMNS), n_frames), report=report, sidecar=sidecar)


def _track(
    source: Any, options: PitchOptions, reporter: Reporter, picture: bool
) -> tuple[PyinModel, PitchTrack, _SpectrogramStream | None]:
    """Stream ``source`` (opened) through the tracker, channels mixed by their mean; the model, the track (f0 0 Hz
    where unvoiced) and, with ``picture``, the pooled spectrogram of the figure."""
    model = options.model(int(source.sr))
    tracker = PitchTracker(model, options.method_name, trough_threshold=float(options.threshold))
    stream = _SpectrogramStream(model, source.n_samples, options.size) if picture else None
    dtype = "float64" if source.subtype in ("PCM_32", "DOUBLE") else "float32"
    with reporter.progress(f"pitch {source.name}", source.n_samples) as advance:
        for block in source.blocks(4 * BLOCK_SAMPLES, dtype=dtype):
            mono = block[0] if block.shape[0] == 1 else block.mean(axis=0)
            tracker.push(mono)
            if stream is not None:
                stream.push(mono)
            advance(block.shape[1])
    f0, voiced, prob = tracker.finish(fill_na=0.0)
    return model, PitchTrack(model.geometry.times(f0.size), np.where(voiced, f0, 0.0), voiced, prob), stream


def _member_sidecar(report: dict[str, Any]) -> dict[str, Any]:
    """The sidecar of a store's pitch arrays (``store.json``'s ``plan``): the single-file one, with the store's
    time-major columns instead of the ``.npy`` rows."""
    sidecar = _sidecar(report, 0)
    for key in ("path", "shape", "rows", "time_s"):  # per input, or the .npy's layout
        sidecar.pop(key)
    sidecar.update(
        dtype="float32",
        layout="(n_frames, n_feats)",
        columns=list(MEMBER_COLUMNS),
        frame_time_s={
            "formula": "row m is frame m, centred on sample m * hop_length: m * hop_length / sr (not stored)",
            "first": 0.0,
            "step": report["hop_length"] / report["sr"],
        },
    )
    return sidecar


def member_geometry(options: PitchOptions, sr: int) -> MemberGeometry:
    """The store arrays of ``options`` at ``sr`` Hz: 3 columns, the pitch hop, ``feature_type``
    ``audiokit-pitch-pyin`` / ``audiokit-pitch-yin``, channel ``"mix"`` (the mean of the channels)."""
    return MemberGeometry(
        n_feats=len(MEMBER_COLUMNS),
        hop_length=int(options.framing(sr).hop_length),
        sr=sr,
        feature_type=f"audiokit-pitch-{options.method_name}",
        channel="mix",
    )


class _SpectrogramStream:
    """|STFT| in dB (Hann, ``n_fft = frame_length``, the pitch framing), max-pooled to the figure's width."""

    def __init__(self, model: PyinModel, n_samples: int, size: str):
        from ..dsp.stft import StftPlan
        from ..dsp.stft.forward import StftStream
        from ..plot.layout import parse_size
        from ..plot.pooling import ColumnPooler

        g = model.geometry
        self.plan = StftPlan(sr=g.sr, win_length=g.frame_length, hop_length=g.hop_length, center=True)
        self.stream = StftStream(self.plan, output="power", log="db")
        width = parse_size(size)[0]
        self.pooler = ColumnPooler(self.plan.n_freqs, g.n_frames(n_samples), width)

    def push(self, mono: np.ndarray) -> None:
        self.pooler.add(self.stream.push(mono))

    def image(self) -> np.ndarray:
        self.pooler.add(self.stream.finish())
        return self.pooler.image


def _draw(png: str, spec: _SpectrogramStream, track: PitchTrack, report: dict[str, Any], options: PitchOptions) -> None:
    from ..plot.pitch import PitchPicture, draw_pitch

    picture = PitchPicture(
        path=report["path"],
        sr=report["sr"],
        duration_s=report["duration_s"],
        image_db=spec.image(),
        times=track.times,
        f0=track.f0,
        voiced=track.voiced,
        method=report["method"],
        fmin=report["fmin_hz"],
        fmax=report["fmax_hz"],
        win_ms=1000 * report["frame_length"] / report["sr"],
        hop_ms=1000 * report["hop_length"] / report["sr"],
        median=report["f0_median_hz"],
        log_freq=options.log_freq,
    )
    draw_pitch(png, picture, size=options.size)


def _outputs(options: PitchOptions, stem: str, png: bool) -> dict[str, str]:
    names = {"npy": f"{stem}.pitch.npy", "json": f"{stem}.pitch.json"}
    if png:
        names["png"] = f"{stem}.pitch.png"
    return names


def _run(path: str, outputs: Mapping[str, str], options: PitchOptions, inputs: InputOptions) -> JobResult:
    return pitch_file(path, options, npy=outputs.get("npy"), png=outputs.get("png"), inputs=inputs)


#: The registry's spec of ``pitch`` (:mod:`audiokit.pipelines.registry`): rows + sidecar and a report per input, or
#: a corpus store's ``(n_frames, 3)`` arrays (:func:`pitch_member`, :func:`member_geometry`).
PITCH_SPEC = JobSpec(
    name="pitch",
    options=PitchOptions,
    check=check_options,
    outputs=_outputs,
    run=_run,
    draws=True,
    reports=True,
    run_member=pitch_member,
    member_geometry=member_geometry,
)

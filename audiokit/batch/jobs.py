"""What a batch computes per input: the job, its fingerprint, its output names, and one input run.

A :class:`Job` is the command name, the pipeline options dataclass built by
the single-file command's ``options_from`` (values as typed), the
:class:`~audiokit.pipelines.params.InputOptions` and ``png``.  Each input runs
the very pipeline function of the single-file command
(:mod:`audiokit.pipelines`) with the outputs the single-file command would
name: ``<id>.mel.npy`` + ``<id>.mel.json`` (+ ``<id>.mel.png`` with ``png``),
``<id>.spectrogram.npy``, ``<id>.<rate>.wav`` (resample), ``<id>.<B>bit.wav``
(quantize), ``<id>.dehum.wav``, ``<id>.mfcc.npy`` (mfcc); ``info`` and ``spectrum`` return their JSON
report instead (the runner appends it to ``results.jsonl``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import __version__
from ..errors import AudiokitError, ParameterError
from ..pipelines.params import InputOptions
from .inputs import InputItem

__all__ = ["COMMANDS", "RESULT_COMMANDS", "Job", "output_names", "validate", "run_item", "segment_text"]

#: Commands a batch can run.
COMMANDS = ("mel", "spectrogram", "mfcc", "resample", "dehum", "quantize", "info", "spectrum")
#: Commands whose per-input result is a JSON object appended to ``results.jsonl``.
RESULT_COMMANDS = ("info", "spectrum")


@dataclass(frozen=True)
class Job:
    """One batch job: the same for every input.

    Attributes
    ----------
    command : str
        One of :data:`COMMANDS`.
    options : dataclass
        The pipeline options (``TimeFreqOptions``, ``ResampleOptions``, ...).
    inputs : InputOptions
        How inputs are opened (raw PCM, NaN policy); segments are per item.
    png : bool
        Also draw ``<id>.<kind>.png`` (``mel``/``spectrogram``).
    """

    command: str
    options: Any
    inputs: InputOptions = field(default_factory=InputOptions)
    png: bool = False

    def fingerprint(self) -> str:
        """``sha256:`` + 16 hex digits of the canonical JSON of everything that shapes the outputs.

        That is the command, the options dataclass (its type name and fields),
        the input options but the segment, ``png``, the audiokit version and
        the FFT backend the ``--fft`` option resolves to here, with its library
        version (one backend gives the same bytes everywhere; two agree to
        float rounding only).  The input itself is identified separately
        (path, size, mtime, segment).
        """
        from ..engine import provenance

        inputs = dataclasses.asdict(self.inputs)
        inputs.pop("start", None)
        inputs.pop("duration", None)
        options = dataclasses.asdict(self.options)
        payload = {
            "command": self.command,
            "options_type": type(self.options).__name__,
            "options": options,
            "inputs": inputs,
            "png": self.png,
            "audiokit": __version__,
            "fft": provenance(_fft_option(options)),
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _fft_option(options: Mapping[str, Any]) -> str | None:
    """The ``fft`` field (``--fft``) anywhere in the nested options dict, or None (auto)."""
    if isinstance(options.get("fft"), str):
        return options["fft"]
    for value in options.values():
        if isinstance(value, Mapping):
            found = _fft_option(value)
            if found is not None:
                return found
    return None


def output_names(job: Job, item_id: str) -> dict[str, str]:
    """Outputs of one input, relative to the output folder: ``{"npy": "a/utt.mel.npy", "json": ..., ...}``."""
    command = job.command
    if command in ("mel", "spectrogram", "mfcc"):
        names = {"npy": f"{item_id}.{command}.npy", "json": f"{item_id}.{command}.json"}
        if job.png:
            names["png"] = f"{item_id}.{command}.png"
        return names
    if command == "resample":
        from ..pipelines.resample import rate_tag, target_rate

        return {"wav": f"{item_id}.{rate_tag(target_rate(job.options.to))}.wav"}
    if command == "quantize":
        return {"wav": f"{item_id}.{job.options.bits}bit.wav"}
    if command == "dehum":
        return {"wav": f"{item_id}.dehum.wav"}
    return {}


def validate(job: Job) -> None:
    """Refuse, before any input is read, options that would fail on every input (ParameterError, exit 2)."""
    if job.command not in COMMANDS:
        raise ParameterError(f"batch: unknown command {job.command!r} (allowed: {', '.join(COMMANDS)})")
    if job.png and job.command not in ("mel", "spectrogram", "mfcc"):
        raise ParameterError("--png applies to mel, spectrogram and mfcc only")
    job.inputs.raw_format()
    options = job.options
    if hasattr(options, "timefreq"):  # mfcc, or mel with --compat kaldi / --deltas / --cmvn (FeatureOptions)
        options.check()
        options = options.timefreq
    if job.command in ("mel", "spectrogram", "mfcc", "spectrum"):
        from ..pipelines.params import check_channel

        check_channel(options.channel, options.mix)
    if job.command in ("mel", "spectrogram", "mfcc"):
        from ..pipelines.params import choice
        from ..pipelines.timefreq import PAD_MODES, SCALES, parse_ref

        kaldi = getattr(job.options, "compat", None) == "kaldi"  # Kaldi's windows and --fmax < 0 are checked above
        _syntax(
            durations={"--win": options.stft.win, "--hop": options.stft.hop, "--nfft": options.stft.nfft},
            frequencies={"--fmin": options.fmin} if kaldi else {"--fmin": options.fmin, "--fmax": options.fmax},
            window=None if kaldi else options.stft.window,
        )
        choice("--scale", options.scale, SCALES)
        choice("--pad-mode", options.stft.pad_mode, PAD_MODES)
        parse_ref(options.ref)
        if job.png:
            from ..plot import parse_size

            parse_size(options.size)
    elif job.command == "resample":
        from ..pipelines.resample import _quality, target_rate

        target_rate(job.options.to)
        _quality(job.options)
    elif job.command == "quantize":
        job.options.check()
    elif job.command == "dehum":
        from ..dsp.hum import METHODS
        from ..pipelines.dehum import parse_freq

        if job.options.method not in METHODS:
            raise ParameterError(f"--method: unknown method {job.options.method!r} (allowed: {', '.join(METHODS)})")
        parse_freq(options.freq)
        _syntax(durations={"--win": options.win}, frequencies={"--width": options.width})
    elif job.command == "spectrum":
        _syntax(
            durations={"--dur": options.dur, "--nfft": options.nfft},
            zero_durations={"--start": options.start},
            frequencies={"--min-sep": options.min_sep, "--fmin": options.fmin, "--fmax": options.fmax},
            window=options.window,
        )


#: An empty, read-only option table (a default that cannot be mutated between calls).
_NO_OPTIONS: Mapping[str, str | None] = MappingProxyType({})


def _syntax(
    *,
    durations: Mapping[str, str | None] = _NO_OPTIONS,
    zero_durations: Mapping[str, str | None] = _NO_OPTIONS,
    frequencies: Mapping[str, str | None] = _NO_OPTIONS,
    window: str | None = None,
) -> None:
    """Check the spelling of duration, frequency and window options (their values in samples need the rate)."""
    from ..pipelines.params import frequency_hz, option_error
    from ..units import parse_duration

    for allow_zero, group in ((False, durations), (True, zero_durations)):
        for option, text in group.items():
            if text is not None:
                try:
                    parse_duration(text, allow_zero=allow_zero)
                except ParameterError as exc:
                    raise option_error(option, exc) from None
    for option, text in frequencies.items():
        if text is not None:
            frequency_hz(option, text)
    if window is not None:
        from ..dsp.windows import parse_window_spec

        parse_window_spec(window)


def segment_text(seconds: float) -> str:
    """Seconds as an exact duration text for :class:`InputOptions` (``1.25`` -> ``"1.25s"``)."""
    from decimal import Decimal

    return f"{Decimal(repr(float(seconds))):f}s"


@dataclass(frozen=True)
class _ProbingInputs(InputOptions):
    """:class:`InputOptions` that remember what the pipeline opened (length, rate, channels) for the manifest.

    Saves opening each input a second time just to learn its duration.
    """

    seen: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def open(self, path: str, *, allow_empty: bool = False) -> Any:
        source = super().open(path, allow_empty=allow_empty)
        if not self.seen:
            self.seen.update(n_samples=source.n_samples, sr=source.sr, channels=source.channels)
        return source


def _inputs_for(job: Job, item: InputItem) -> _ProbingInputs:
    values = {f.name: getattr(job.inputs, f.name) for f in dataclasses.fields(InputOptions)}
    if item.start is not None or item.duration is not None:
        values.update(
            start=segment_text(item.start) if item.start else None,
            duration=segment_text(item.duration) if item.duration is not None else None,
        )
    return _ProbingInputs(**values)


def _call_pipeline(job: Job, path: str, inputs: InputOptions, out: dict[str, str]) -> tuple[Any, list[int] | None]:
    """Run the single-file command's pipeline; return (JSON result or None, shape of the main output)."""
    command, options = job.command, job.options
    if command in ("mel", "spectrogram", "mfcc"):
        from ..pipelines.features import run_timefreq

        result = run_timefreq(path, options, png=out.get("png"), npy=out["npy"], inputs=inputs)
        return None, list(result.shape) if result.shape is not None else None
    if command == "info":
        from ..pipelines.info import info

        return info(path, options, inputs=inputs), None
    if command == "spectrum":
        from ..pipelines.spectrum import spectrum_file

        return spectrum_file(path, options, inputs=inputs), None
    if command == "resample":
        from ..pipelines.resample import resample_file

        resample_file(path, out["wav"], options, inputs=inputs)
    elif command == "quantize":
        from ..pipelines.quantize import quantize_file

        quantize_file(path, out["wav"], options, inputs=inputs)
    elif command == "dehum":
        from ..pipelines.dehum import dehum_file

        dehum_file(path, out["wav"], options, inputs=inputs)
    import soundfile as sf

    written = sf.info(out["wav"])
    return None, [int(written.channels), int(written.frames)]


def run_item(job: Job, item: InputItem, out_dir: str, made_dirs: set[str] | None = None) -> dict[str, Any]:
    """Run one input; return its manifest fields (never raises for a bad input).

    ``made_dirs`` holds the output folders already created by the caller's task (saves a ``mkdir`` per input).

    Returns
    -------
    dict
        ``id, path, segment, size, mtime_ns, status, error, outputs, shape,
        duration, sr, channels, warnings, seconds`` and, for ``info``/``spectrum``,
        ``result`` (the report).  ``error`` is the one-line text the
        single-file command prints after ``error:``.
    """
    started = time.perf_counter()
    made_dirs = set() if made_dirs is None else made_dirs
    record: dict[str, Any] = {
        "id": item.id,
        "path": item.path,
        "segment": item.segment,
        "size": None,
        "mtime_ns": None,
        "duration": None,
        "sr": None,
        "channels": None,
    }
    caught: list[warnings.WarningMessage] = []
    try:
        if item.problem is not None:
            raise ParameterError(item.problem, item.path)
        try:
            st = os.stat(item.path)
            record.update(size=st.st_size, mtime_ns=st.st_mtime_ns)
        except OSError:
            pass  # the pipeline names the problem (no such file, permission denied)
        inputs = _inputs_for(job, item)
        names = output_names(job, item.id)
        out = {kind: os.path.join(out_dir, *name.split("/")) for kind, name in names.items()}
        for path in {os.path.dirname(p) for p in out.values()} - made_dirs:
            Path(path).mkdir(parents=True, exist_ok=True)
            made_dirs.add(path)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result, shape = _call_pipeline(job, item.path, inputs, out)
        finally:
            if inputs.seen:
                seen = inputs.seen
                record.update(duration=seen["n_samples"] / seen["sr"], sr=seen["sr"], channels=seen["channels"])
        record.update(status="ok", error=None, outputs=names, shape=shape)
        if job.command in RESULT_COMMANDS:
            record["result"] = result
    except AudiokitError as exc:
        record.update(status="failed", error=str(exc), exit_code=exc.exit_code, outputs={}, shape=None)
    except Exception as exc:  # noqa: BLE001 - a file that makes a pipeline raise fails alone, as "internal error"
        text = " ".join(str(exc).split())
        record.update(
            status="failed",
            error=f"{item.path}: internal error: {type(exc).__name__}: {text}",
            exit_code=1,
            outputs={},
            shape=None,
        )
    record["warnings"] = [str(w.message) for w in caught]
    record["seconds"] = round(time.perf_counter() - started, 6)
    return record

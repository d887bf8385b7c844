"""The job registry: every command audiokit runs, declared once (as Lhotse registers its feature extractors).

Two levels, so that listing the commands imports nothing heavy (``audiokit --help`` loads neither numpy nor a
pipeline):

* an :class:`Entry` per command -- its name, the one-line summary ``audiokit --help`` and the docs show, the
  Typer command that declares its options (``"module:attribute"``) and, for a job that runs per input file,
  its :class:`JobSpec` (``"module:attribute"``, imported on first use);
* a :class:`JobSpec` beside each pipeline (at the end of its module): the options type, a rate-free
  ``check(options)``, the output names of one input, ``run(...)`` returning a :class:`JobResult`, and whether
  the job draws (``--png``) or reports (a JSON object per input).

Who reads it: the CLI's lazy command table (:mod:`audiokit.cli.lazy`), ``audiokit batch`` (one subcommand per
job with a spec: :mod:`audiokit.cli.batch`, :mod:`audiokit.batch.jobs`) and the generated command table of
the docs (:func:`command_table`, ``docs/commands.md``).  Adding a command is a pipeline module with its spec, a
CLI module, and one :func:`register` call in :data:`BUILTIN` below (CONTRIBUTING.md, "Add a command").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ParameterError

if TYPE_CHECKING:
    from .params import InputOptions

__all__ = [
    "BUILTIN",
    "Entry",
    "JobResult",
    "JobSpec",
    "MemberGeometry",
    "SourceFacts",
    "batch_jobs",
    "command_table",
    "commands_doc",
    "entries",
    "entry",
    "load",
    "no_outputs",
    "register",
    "spec",
    "unregister",
]


@dataclass(frozen=True)
class SourceFacts:
    """The input as a pipeline opened it: ``n_samples`` per channel (a segment's length for a segment), ``sr`` (Hz),
    ``channels``."""

    n_samples: int
    sr: int
    channels: int

    @classmethod
    def of(cls, source: Any) -> SourceFacts:
        """The facts of an opened :class:`~audiokit.io.reader.AudioSource` (or anything with those attributes)."""
        return cls(n_samples=int(source.n_samples), sr=int(source.sr), channels=int(source.channels))

    @property
    def duration(self) -> float:
        """Duration in seconds, ``n_samples / sr``."""
        return self.n_samples / self.sr


@dataclass(frozen=True)
class JobResult:
    """What one run of a job tells its caller (the batch manifest line): the input as opened and the output.

    Attributes
    ----------
    source : SourceFacts
        The input as the pipeline opened it.
    shape : tuple of int or None
        Shape of the main output: the saved array (``(n_rows, n_frames)`` or ``(channels, n_rows, n_frames)``),
        or ``(channels, n_samples)`` of a written WAV; None for a job that writes no file.
    report : dict or None
        The JSON object of a reporting job (``info``, ``spectrum``: what ``--json`` prints), else None.
    sidecar : dict or None
        A run into a corpus store's member (``JobSpec.run_member``): the sidecar the single-file ``.npy`` would
        have had (the store records its utterance-independent part once).
    """

    source: SourceFacts
    shape: tuple[int, ...] | None = None
    report: dict[str, Any] | None = None
    sidecar: dict[str, Any] | None = None


def no_outputs(options: Any, stem: str, png: bool) -> dict[str, str]:
    """``JobSpec.outputs`` of a job that writes no file (it reports)."""
    return {}


#: ``run(path, outputs, options, inputs) -> JobResult``: ``outputs`` maps an output kind (``"npy"``, ``"json"``,
#: ``"png"``, ``"wav"``) to the absolute path to write.
RunJob = Callable[[str, Mapping[str, str], Any, "InputOptions"], JobResult]


@dataclass(frozen=True)
class MemberGeometry:
    """What every array a job writes into a corpus store has at one sample rate (the store's ``store.json`` and its
    Lhotse manifests say it once): ``n_feats`` values per frame, one frame every ``hop_length`` samples.

    Attributes
    ----------
    n_feats : int
        Values per frame: the array of one utterance is ``(n_frames, n_feats)``.
    hop_length : int
        Samples between frames.
    sr : int
        Sample rate (Hz) of the inputs it was made for.
    feature_type : str
        The features' name in the Lhotse manifests (``"kaldi-fbank"``, ``"audiokit-mel"``, ``"audiokit-pitch-pyin"``).
    channel : int, "mix" or None
        The channel analysed: ``--channel N``, ``"mix"`` (the channels mixed), None (every input must be mono).
    """

    n_feats: int
    hop_length: int
    sr: int
    feature_type: str
    channel: int | str | None

    @property
    def frame_shift(self) -> float:
        """Seconds between frames, ``hop_length / sr``."""
        return self.hop_length / self.sr


#: ``run_member(path, options, inputs, open_member, describe) -> JobResult``: the job's array, time-major, into a
#: corpus store's member (``open_member(n_frames, n_feats)`` gives its sink; :mod:`audiokit.io.members`); with
#: ``describe``, the result's ``sidecar`` too (a store needs it once).
RunMember = Callable[[str, Any, "InputOptions", Callable[[int, int], Any], bool], JobResult]
#: ``member_geometry(options, sr) -> MemberGeometry``: the arrays ``run_member`` writes at ``sr`` Hz (reads no input;
#: ParameterError, exit 2, when the options do not fit the rate).
MemberGeometryOf = Callable[[Any, int], MemberGeometry]


@dataclass(frozen=True)
class JobSpec:
    """How a job runs on one input file: everything ``audiokit batch`` needs, nothing about the command line.

    Attributes
    ----------
    name : str
        The command name (the :class:`Entry` it belongs to).
    options : type
        The frozen options dataclass of the job (``ResampleOptions``, ...); batch fingerprints its fields.
    check : callable
        ``check(options)``: raise :class:`~audiokit.errors.ParameterError` (exit 2) for option values that would
        fail on every input; needs no sample rate, reads no input.
    outputs : callable
        ``outputs(options, stem, png) -> {kind: name}``: the files one input writes, named from ``stem``
        (``"spk1/utt"`` -> ``{"npy": "spk1/utt.mel.npy", "json": "spk1/utt.mel.json"}``), as the single-file
        command names them; ``png`` adds the figure of a drawing job.
    run : callable
        ``run(path, outputs, options, inputs) -> JobResult`` (see :data:`RunJob`).
    draws : bool
        The job can also draw its PNG (``audiokit batch --png``).
    reports : bool
        The job returns a JSON report per input (``audiokit batch`` appends it to ``results.jsonl``).
    run_member : callable or None
        For a job whose output is one real array per input (``mel``, ``mfcc``, ``spectrogram``, ``pitch``): the run
        into a corpus store (``--store npy|shards|kaldi|parquet``; see :data:`RunMember`); None for the others.
    member_geometry : callable or None
        With ``run_member`` (and only then): the :class:`MemberGeometry` of its arrays (see :data:`MemberGeometryOf`).
    """

    name: str
    options: type
    check: Callable[[Any], None]
    outputs: Callable[[Any, str, bool], dict[str, str]]
    run: RunJob
    draws: bool = False
    reports: bool = False
    run_member: RunMember | None = None
    member_geometry: MemberGeometryOf | None = None

    def __post_init__(self) -> None:
        if (self.run_member is None) != (self.member_geometry is None):
            raise TypeError(f"JobSpec {self.name!r}: run_member and member_geometry go together")


@dataclass(frozen=True)
class Entry:
    """One command of ``audiokit``.

    Attributes
    ----------
    name : str
        The command name (``audiokit NAME``).
    summary : str
        The first paragraph of its help, verbatim: what ``audiokit --help`` lists without importing the command.
    cli : str
        ``"module:attribute"`` of the Typer command function (or ``typer.Typer`` group) declaring its options;
        its module also defines ``options_from(params)`` when the job has a spec.
    spec : str or None
        ``"module:attribute"`` of its :class:`JobSpec`, for a job that runs per input (and so in ``audiokit
        batch``); None for the others (``generate``, ``istft``, ``griffinlim``, ``batch`` itself).
    """

    name: str
    summary: str
    cli: str
    spec: str | None = None


_REGISTRY: dict[str, Entry] = {}


def register(item: Entry) -> Entry:
    """Add a command to the registry (its name must be new); return it.

    Raises
    ------
    ParameterError
        A command of that name is registered already, or a reference is not ``"module:attribute"``.
    """
    if item.name in _REGISTRY:
        raise ParameterError(f"a command named {item.name!r} is registered already")
    for ref in (item.cli, item.spec):
        if ref is not None and ref.count(":") != 1:
            raise ParameterError(f"{item.name}: {ref!r} is not 'module:attribute'")
    _REGISTRY[item.name] = item
    return item


def unregister(name: str) -> None:
    """Remove command ``name`` (tests that register a throwaway job)."""
    _REGISTRY.pop(name, None)


def entries() -> tuple[Entry, ...]:
    """Every registered command, in registration order (the order of ``audiokit --help``)."""
    return tuple(_REGISTRY.values())


def entry(name: str) -> Entry:
    """The :class:`Entry` of command ``name``; ParameterError naming the known ones if there is none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ParameterError(f"unknown command {name!r} (allowed: {', '.join(_REGISTRY)})") from None


def batch_jobs() -> tuple[str, ...]:
    """Names of the commands ``audiokit batch`` runs: those with a :class:`JobSpec`."""
    return tuple(name for name, item in _REGISTRY.items() if item.spec is not None)


def load(ref: str) -> Any:
    """The object an ``"module:attribute"`` reference names (importing its module with Ctrl-C/SIGTERM held back: a
    signal handler's exception inside a compiled extension's initialisation can crash the interpreter; the signal is
    delivered once the import is done, :mod:`audiokit.held`)."""
    from ..held import signals_held

    module, _, attribute = ref.partition(":")
    with signals_held():
        imported = importlib.import_module(module)
    return getattr(imported, attribute)


def spec(name: str) -> JobSpec:
    """The :class:`JobSpec` of command ``name`` (imports its pipeline module)."""
    item = entry(name)
    if item.spec is None:
        raise ParameterError(f"{name!r} does not run per input (batch runs: {', '.join(batch_jobs())})")
    found = load(item.spec)
    if not isinstance(found, JobSpec) or found.name != name:
        raise TypeError(f"{item.spec} is not the JobSpec of {name!r}")
    return found


def command_table() -> str:
    """The Markdown table of every command (``docs/commands.md``): name, summary, whether ``batch`` runs it."""
    lines = ["| command | what it does | in `audiokit batch` |", "|---|---|---|"]
    for item in entries():
        in_batch = "yes" if item.spec is not None else ""
        lines.append(f"| `audiokit {item.name}` | {item.summary.replace('|', chr(92) + '|')} | {in_batch} |")
    return "\n".join(lines) + "\n"


def commands_doc() -> str:
    """The text of ``docs/commands.md``: a heading, where it comes from, and :func:`command_table`."""
    return (
        "# Commands\n\n"
        "Generated from the job registry (`audiokit/pipelines/registry.py`) by "
        "`python -m audiokit.pipelines.registry > docs/commands.md`; a test keeps it equal.  Every command has "
        "`--help` with a worked example; the commands marked for batch run over a corpus with "
        "`audiokit batch COMMAND INPUTS --out DIR`.\n\n" + command_table()
    )


def _builtin(name: str, summary: str, *, spec: bool, module: str | None = None, attribute: str | None = None) -> Entry:
    """An audiokit command: CLI in ``audiokit.cli.<module>:<name>_command``, spec ``audiokit.pipelines.<module>:SPEC``."""
    module = module or name
    return register(
        Entry(
            name=name,
            summary=summary,
            cli=f"audiokit.cli.{name}:{attribute or name + '_command'}",
            spec=f"audiokit.pipelines.{module}:{name.upper()}_SPEC" if spec else None,
        )
    )


#: The commands of audiokit, in the order of ``audiokit --help``.
BUILTIN: tuple[Entry, ...] = (
    _builtin("info", "Show format, duration and levels (peak, RMS, DC offset, clipped samples).", spec=True),
    _builtin("generate", "Generate a test signal and write it as WAV (to -o PATH, or stdout).", spec=False),
    _builtin("loudness", "Loudness (EBU R128 / ITU-R BS.1770-4): integrated, momentary, short-term, LRA, true peak.", spec=True),
    _builtin(
        "waveform", "Waveform PNG: the min/max envelope per pixel column of each channel, clipped samples in red.", spec=True
    ),
    _builtin("pitch", "Fundamental frequency (f0) by pYIN or YIN: equal to librosa 0.11's, streamed.", spec=True),
    _builtin(
        "spectrum", "One-sided DFT of the signal (or a segment): resolution, Nyquist and peaks.", spec=True, module="spectrum"
    ),
    _builtin(
        "spectrogram",
        "Spectrogram: |STFT| of frames [m*hop, m*hop + n_fft), as a PNG and/or .npy.",
        spec=True,
        module="timefreq_spec",
    ),
    _builtin(
        "mel", "Log-mel spectrogram: mel filter bank applied to |STFT|^2, in dB (or ln).", spec=True, module="timefreq_spec"
    ),
    _builtin(
        "mfcc",
        "MFCC: orthonormal DCT-II of the log-mel spectrogram, or Kaldi's with --compat kaldi.",
        spec=True,
        module="timefreq_spec",
    ),
    _builtin("istft", "Inverse STFT by weighted overlap-add, exact wherever the window sum is nonzero.", spec=False),
    _builtin("griffinlim", "Rebuild audio from a magnitude, power, dB or mel spectrogram by fast Griffin-Lim.", spec=False),
    _builtin("resample", "Convert the sample rate (band-limited, or naive with --no-filter) and write WAV.", spec=True),
    _builtin("quantize", "Requantize to B bits on the mid-tread grid k / 2^(B-1) and report the SQNR.", spec=True),
    _builtin("dehum", "Remove mains hum (50/60 Hz and harmonics) and write the cleaned WAV.", spec=True),
    _builtin(
        "stats",
        "Level statistics as SoX's stats (DC, peak, RMS, RMS peak/trough, crest, flat factor, bit depth) and more.",
        spec=True,
    ),
    _builtin(
        "silence",
        "Find silent spans (frame level below a dBFS or relative threshold); write a segments manifest or a trimmed file.",
        spec=True,
    ),
    _builtin(
        "batch",
        "Run a command over a corpus: resumable, failure-tolerant, on local processes or a Dask cluster.",
        spec=False,
        attribute="batch_app",
    ),
)


if __name__ == "__main__":
    print(commands_doc(), end="")

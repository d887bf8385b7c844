"""Which parameters of a single-file command ``audiokit batch`` takes, turns into a switch, or refuses.

:mod:`audiokit.cli.batch` builds ``audiokit batch NAME`` from the signature of ``audiokit NAME``.  Each of its
parameters is one of:

* **taken** as declared: the same option, the same meaning (the command's ``options_from`` or ``inputs_from``
  reads it, exactly as in the single-file command);
* a **switch** (:data:`SWITCHES`): a single-file option that names one more output file (``loudness --series
  PATH.npy``) becomes a flag that writes that output for every input, named as the other batch outputs
  (``<id>.loudness.npy`` + ``<id>.loudness.json``);
* **refused** (:data:`REFUSED`): an option that names one output or prints to stdout, for which batch has no
  per-input meaning.  It stays declared (hidden from ``--help``) so that giving it stops the run before any input is
  read, exit 2, with why and what batch writes instead -- rather than click's "No such option" (which reads like a
  typo) or, worse, an option parsed and then ignored.  A refused option whose flag batch declares itself is batch's
  (``--json``: the run's summary; ``--manifest``: the segments to run).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, get_args

import typer
from typer.models import OptionInfo

from ..errors import ParameterError
from ..pipelines import registry
from .batch_options import batch_option

__all__ = ["ARGUMENTS", "DROPPED", "REFUSED", "SWITCHES", "batch_parameters", "flags_of", "refuse_given"]

#: The input arguments of the single-file commands (batch has its own: INPUTS...).
ARGUMENTS = frozenset({"file", "files"})
#: The switches, by (command, parameter): the batch option that replaces the single-file one.
SWITCHES: Mapping[tuple[str, str], inspect.Parameter] = {
    ("loudness", "series"): batch_option(
        "series",
        bool,
        False,
        "--series",
        help="Also write <id>.loudness.npy + <id>.loudness.json: the momentary and short-term loudness every 100 ms, "
        "as 'audiokit loudness --series PATH.npy' writes them.",
    ),
}
#: The refused parameters (any command that has one): why batch does not take it.
REFUSED: Mapping[str, str] = {
    "output": "names each input's outputs itself",
    "npy": "names each input's outputs itself",
    "json_out": "writes each input's report to DIR/results.jsonl",
    "json_lines": "writes each input's report to DIR/results.jsonl",
    "layout": "writes (n_rows, n_frames) arrays with --store files and time-major (n_frames, n_feats) ones in the corpus stores",
    "residual": "writes the cleaned audio only (the residual of one file: 'audiokit dehum FILE -o OUT --residual PATH')",
    "filterbank": "computes features (the filter bank is the same for every input: 'audiokit mel FILE --filterbank "
    "PATH' writes it once)",
    "filterbank_scale": "computes features (--filterbank-scale goes with 'audiokit mel FILE --filterbank PATH')",
    "trim": "measures only (the trimmed file: 'audiokit silence FILE --trim -o OUT' per file)",
    "manifest": "writes no segments manifest (each input's sound spans are \"sound\" in DIR/results.jsonl; batch's own "
    "--manifest names the segments to run; the manifest of files: 'audiokit silence FILES -m PATH')",
}
#: Parameters of the single-file commands that batch does not take as declared.
DROPPED = ARGUMENTS | frozenset(REFUSED)
#: What batch writes, where the registry cannot name it without options.
_WRITES = {"resample": "<id>.<rate>.wav", "quantize": "<id>.<bits>bit.wav"}


def flags_of(param: inspect.Parameter) -> tuple[str, ...]:
    """The command-line flags of an ``Annotated[..., typer.Option(...)]`` parameter (``()`` for an argument)."""
    info = next((m for m in getattr(param.annotation, "__metadata__", ()) if isinstance(m, typer.models.ParameterInfo)), None)
    if not isinstance(info, OptionInfo):
        return ()
    decls = ((info.default,) if isinstance(info.default, str) else ()) + tuple(info.param_decls or ())
    decls = decls or ("--" + param.name.replace("_", "-"),)
    return tuple(flag.strip() for decl in decls for flag in decl.split("/") if flag.strip())


def _hidden(param: inspect.Parameter, flags: tuple[str, ...]) -> inspect.Parameter:
    """``param`` declared with ``flags`` only, hidden from ``--help`` (a refused option)."""
    kind, *metadata = get_args(param.annotation)
    info = next(m for m in metadata if isinstance(m, OptionInfo))
    info = copy.copy(info)
    info.default, info.param_decls, info.hidden, info.help = flags[0], flags[1:], True, None
    return param.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind, info])


def batch_parameters(
    name: str, single: Iterable[inspect.Parameter], extra: Iterable[inspect.Parameter]
) -> tuple[list[inspect.Parameter], dict[str, inspect.Parameter]]:
    """The parameters ``audiokit batch NAME`` takes from ``audiokit NAME``'s (``single``) beside batch's own
    (``extra``), and the refused ones it declares hidden (by name, for :func:`refuse_given`)."""
    taken = {flag for param in extra for flag in flags_of(param)}
    own: list[inspect.Parameter] = []
    refused: dict[str, inspect.Parameter] = {}
    for param in single:
        if (name, param.name) in SWITCHES:
            own.append(SWITCHES[name, param.name])
        elif param.name in REFUSED:
            flags = tuple(flag for flag in flags_of(param) if flag not in taken)
            if flags:
                refused[param.name] = _hidden(param, flags)
                own.append(refused[param.name])
        elif param.name not in ARGUMENTS:
            own.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    return own, refused


def _writes(name: str) -> str:
    """What ``audiokit batch NAME`` writes under ``--out`` (for the message of a refused option)."""
    spec = registry.spec(name)
    try:
        files = ", ".join(spec.outputs(spec.options(), "<id>", False).values())
    except (TypeError, ValueError):  # options without defaults (resample --to, quantize --bits)
        files = _WRITES.get(name, f"the outputs 'audiokit batch {name} --help' names")
    parts = [f"each input's array in the --store ({files} with --store files)"] if spec.run_member is not None else []
    parts += [files] if files and spec.run_member is None else []
    parts += ["DIR/results.jsonl (the reports)"] if spec.reports else []
    parts += [f"<id>.{name}.png with --png"] if spec.draws else []
    for (command, pname), switch in SWITCHES.items():
        if command == name:
            extra = spec.outputs(dataclasses.replace(spec.options(), **{pname: True}), "<id>", False)
            parts.append(f"{', '.join(extra.values())} with {'/'.join(flags_of(switch))}")
    return "; ".join(parts)


def refuse_given(name: str, refused: Mapping[str, inspect.Parameter], params: Mapping[str, Any]) -> None:
    """ParameterError (exit 2) naming the first refused option given, why, and what ``batch NAME`` writes."""
    for pname, param in refused.items():
        if params.get(pname, param.default) != param.default:  # given (its default changes nothing)
            flags = "/".join(flags_of(param))
            raise ParameterError(
                f"{flags}: not an option of 'audiokit batch {name}', which {REFUSED[pname]}; under --out it writes "
                f"{_writes(name)}"
            )

"""Every option of a single-file command is honoured by ``audiokit batch`` or refused by it, never ignored.

The registry is walked: for every job ``audiokit batch`` runs, each option of ``audiokit NAME`` is one of

* taken: ``audiokit batch NAME`` declares it (same flags, visible) and building the batch job reads it (the
  command's ``options_from`` / ``inputs_from`` look the parameter up, and a flag turned on changes the job);
* refused: declared hidden, and giving it exits 2 before anything is written, with one line naming the flag and
  saying what batch writes instead (:mod:`audiokit.cli.batch_params`);
* a flag batch declares itself with another meaning, listed in :data:`BATCH_OWN` (so a new collision fails here).

``silence -m PATH`` and ``silence --trim`` were the cases found by this walk: batch parsed both and ignored them
(exit 0, no manifest, no trimmed file); ``loudness --series`` was dropped (click's "No such option").
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import soundfile as sf
import typer

from audiokit.cli.batch import batch_app, single_file_command
from audiokit.cli.batch_params import SWITCHES
from audiokit.cli.lazy import load_command
from audiokit.cli.options import inputs_from
from audiokit.pipelines import registry

#: Flags of single-file options that batch declares for itself, with the batch parameter they are.
BATCH_OWN = {"--json": "summary_json", "--manifest": "segments"}
#: Values the batch job needs to be built at all (options without defaults).
REQUIRED = {"resample": {"to": "8k"}, "quantize": {"bits": 8}}
#: A value for an option that takes one (a refused option is refused before its value means anything).
VALUE = "x.out"


@functools.cache
def _batch(name: str) -> Any:
    return typer.main.get_command(batch_app).commands[name]


@functools.cache
def _single(name: str) -> Any:
    return load_command(name)


def _options(command: Any) -> Iterator[Any]:
    yield from (p for p in command.params if p.param_type_name == "option" and p.name not in ("help",))


def _flags(param: Any) -> tuple[str, ...]:
    return tuple(param.opts) + tuple(param.secondary_opts)


def _classified(name: str) -> Iterator[tuple[str, Any, Any]]:
    """(kind, single-file option, batch option or None) of every option of ``audiokit NAME``."""
    batch = {flag: p for p in _batch(name).params for flag in _flags(p)}
    for option in _options(_single(name)):
        there = [(flag, batch[flag]) for flag in _flags(option) if flag in batch]
        if not there:
            yield "missing", option, None
        elif all(BATCH_OWN.get(flag) == p.name for flag, p in there):
            yield "batch-own", option, there[0][1]
        elif any(p.hidden for _, p in there):
            yield "refused", option, next(p for _, p in there if p.hidden)
        elif all(p.name == option.name for _, p in there):
            yield "taken", option, there[0][1]
        else:
            yield "collision", option, there[0][1]


CASES = [(name, kind, option.name) for name in registry.batch_jobs() for kind, option, _ in _classified(name)]


def _defaults(name: str) -> dict[str, Any]:
    values = {p.name: p.default for p in _batch(name).params}
    return values | REQUIRED.get(name, {})


def _job(name: str, params: dict[str, Any]) -> tuple[Any, Any]:
    """What batch builds from the parameter values: the pipeline options and the input options."""
    _, options_from = single_file_command(name)
    return options_from(params), inputs_from(params)


def _other_value(param: Any, current: Any) -> Any:
    """A value of ``param`` other than ``current`` (valid or not: an option that is read either changes the job or
    is refused by the options' checks)."""
    kind = param.type_descriptor.annotation
    if param.is_flag or kind is bool:
        return not current
    if kind is int:
        return (current or 0) + 3
    if kind is float:
        return (current or 0.0) + 0.5
    return "7"  # a text option: a number of samples / a level / a name, whichever it parses


TAKEN = [(n, o) for n, k, o in CASES if k == "taken"]


@pytest.mark.parametrize(("name", "option"), TAKEN)
def test_a_taken_option_changes_the_batch_job(name, option):
    from audiokit.errors import AudiokitError

    param = next(p for p in _batch(name).params if p.name == option)
    defaults = _defaults(name)
    before = _job(name, defaults)
    try:
        after = _job(name, defaults | {option: _other_value(param, defaults[option])})
    except AudiokitError:  # refused by the options' own checks: it was read
        return
    assert after != before, f"batch {name}: --{option} is declared but changes nothing in the job"


@pytest.fixture
def clip(tmp_path):
    path = tmp_path / "in" / "clip.wav"
    path.parent.mkdir()
    sf.write(path, (0.3 * np.sin(np.arange(8000) / 3)).astype(np.float32), 16000, subtype="PCM_16")
    return path


@pytest.mark.parametrize(("name", "option"), [(n, o) for n, k, o in CASES if k == "refused"])
def test_a_refused_option_exits_2_naming_it_before_any_output(cli, clip, tmp_path, name, option):
    param = next(p for p in _batch(name).params if p.name == option)
    flag = _flags(param)[0]
    out = tmp_path / "out"
    given = [flag] if param.is_flag else [flag, VALUE]
    required = [f"--{key}={value}" for key, value in REQUIRED.get(name, {}).items()]
    code, stdout, err = cli("batch", name, clip, "--out", out, *required, *given)
    assert code == 2, err
    assert stdout == "" and err.count("\n") == 1
    assert err.startswith(f"error: {'/'.join(_flags(param))}: not an option of 'audiokit batch {name}'")
    assert "under --out it writes " in err
    assert not out.exists()


@pytest.mark.parametrize(("name", "option"), [(n, o) for n, k, o in CASES if k == "refused"])
def test_a_refused_option_stays_out_of_the_batch_help(name, option):
    assert next(p for p in _batch(name).params if p.name == option).hidden


def test_switches_are_batch_flags_of_options_that_name_a_file():
    for name, option in SWITCHES:
        single = next(p for p in _single(name).params if p.name == option)
        batch = next(p for p in _batch(name).params if p.name == option)
        assert not single.is_flag and batch.is_flag and not batch.hidden
        assert _flags(single) == _flags(batch)
        spec = registry.spec(name)
        base = spec.options()
        on = dataclasses.replace(base, **{option: True})
        assert set(spec.outputs(on, "a/b", False)) > set(spec.outputs(base, "a/b", False))

"""Every use of Typer's private modules, in one place: plain option values converted without pydantic, plain
metavars in the help, and the click exceptions the CLI maps to exit codes.

Typer has no public API for these, so ``pyproject.toml`` pins typer to the tested range and
``tests/cli/test_startup.py::test_typer_is_the_tested_range_and_has_the_private_names_audiokit_uses`` fails
loudly when an upgrade moves one of them (rather than start-up or the help silently degrading):

* :func:`fast_coercion`: Typer converts every option value (even an unset flag) through a pydantic
  ``TypeAdapter`` (``typer._coercion``), which costs importing pydantic (~40 ms) and building one adapter per
  parameter (~1 ms each, ~30 per command).  Plain values -- ``str``, ``bool``, a decimal ``int``/``float``
  inside its ``min``/``max``, lists of those -- are converted here exactly as pydantic would (``"25ms"`` ->
  ``"25ms"``, ``"80"`` -> ``80``); anything else (a bad number, a value out of range, choices, paths, files,
  parsers, clamping) goes to Typer's own pydantic path, so every error message stays Typer's.
* :func:`plain_metavars`: ``FILE``/``TEXT``/``INT`` in the help where Typer writes ``{FILE}`` and ``<str>``
  (an argument's ``_usage_display_name`` and ``display_type_rich``).
* :data:`click_exceptions`: Typer's vendored click (``typer._click``): ``NoArgsIsHelpError``, ``UsageError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from typer._click import exceptions as click_exceptions
from typer._coercion import RuntimeParam, build_runtime_param

__all__ = ["click_exceptions", "fast_coercion", "plain_metavars"]

# ----------------------------------------------------------------------------------------- metavars

#: What the help shows after an option that takes a value, by the value's Python type (Typer would show ``<str>``).
_METAVARS = {str: "TEXT", int: "INT", float: "NUMBER"}


def _plain_argument(param: Any) -> None:
    """``FILE`` / ``FILES...`` in the usage line and the help (Typer writes ``{FILE}`` and ``<str>``)."""
    name = (param.metavar or param.name.upper()).rstrip(".")
    param.metavar = name + ("..." if param.nargs != 1 else "")
    param._usage_display_name = lambda: param.metavar if param.required else f"[{param.metavar}]"
    param.display_type_rich = lambda ctx: None


def plain_metavars(command: Any) -> None:
    """Help without Python type names: flags show no value, other options ``TEXT``/``INT``/``NUMBER``, arguments
    their name in capitals (``FILE``, ``FILES...``) -- for ``command`` and its subcommands."""
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)
    make_help = getattr(command, "get_help_option", None)
    if make_help is not None:  # click builds --help on demand: it is a flag too

        def help_option(ctx: Any) -> Any:
            option = make_help(ctx)
            if option is not None and option.metavar is None:
                option.metavar = ""
            return option

        command.get_help_option = help_option
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") == "argument":
            _plain_argument(param)
            continue
        if param.metavar is not None:
            continue
        if getattr(param, "is_flag", False):
            param.metavar = ""
            continue
        annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
        if annotation in _METAVARS:
            param.metavar = _METAVARS[annotation]


# ----------------------------------------------------------------------------------------- coercion

_INT = re.compile(r"[+-]?[0-9]{1,18}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]{1,300}(?:\.[0-9]{0,300})?|\.[0-9]{1,300})")


class _Delegate(Exception):
    """This value is not a plain one: let Typer (pydantic) convert it."""


def _plain_str(value: Any) -> str:
    if type(value) is str:
        return value
    raise _Delegate


def _plain_bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    raise _Delegate


def _plain_number(kind: type, low: Any, high: Any) -> Callable[[Any], Any]:
    pattern = _INT if kind is int else _FLOAT

    def convert(value: Any) -> Any:
        if type(value) is kind:
            number = value
        elif type(value) is str and pattern.fullmatch(value):
            number = kind(value)
        else:
            raise _Delegate
        if number != number or (low is not None and number < low) or (high is not None and number > high):
            raise _Delegate  # NaN or out of range: Typer's message
        return number

    return convert


def _list_of(item: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            raise _Delegate
        return [item(v) for v in value]

    return convert


def _plain_converter(descriptor: Any) -> Callable[[Any], Any] | None:
    """The fast converter of a parameter's type descriptor, or None when only Typer's path is right for it."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or getattr(info, "parser", None) is not None or descriptor.is_choice:
        return None
    annotation = descriptor.annotation
    item = annotation
    if descriptor.is_list:
        args: tuple[Any, ...] = getattr(annotation, "__args__", ())
        if len(args) != 1:
            return None
        item = args[0]
    if item is str:
        if descriptor.is_path:
            return None
        one: Callable[[Any], Any] = _plain_str
    elif item is bool:
        one = _plain_bool
    elif item in (int, float):
        if getattr(info, "clamp", False):
            return None
        one = _plain_number(item, info.min, info.max)
    else:
        return None
    return _list_of(one) if descriptor.is_list else one


class PlainValue(RuntimeParam):
    """Typer's None/multi-value handling (:meth:`RuntimeParam.coerce`), then the plain conversion or Typer's own."""

    _convert: Callable[[Any], Any]
    _typer: Any

    def __init__(self, parameter_info: Any, annotation: Any, convert: Callable[[Any], Any]) -> None:
        object.__setattr__(self, "parameter_info", parameter_info)
        object.__setattr__(self, "annotation", annotation)
        object.__setattr__(self, "_convert", convert)
        object.__setattr__(self, "_typer", None)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return self._convert(value)
        except _Delegate:
            pass
        if self._typer is None:
            object.__setattr__(self, "_typer", build_runtime_param(param.type_descriptor))
        return self._typer._coerce_value(value, param=param, ctx=ctx)


def _install(param: Any) -> None:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or param._runtime_param is not None:
        return
    convert = _plain_converter(descriptor)
    if convert is not None:
        param._runtime_param = PlainValue(descriptor.parameter_info, descriptor.annotation, convert)


def fast_coercion(command: Any) -> None:
    """Give the plain parameters of ``command`` (and of its subcommands) the fast converter; see the module doc."""
    for param in getattr(command, "params", ()):
        _install(param)
    help_option = getattr(command, "get_help_option", None)
    if help_option is not None and not hasattr(help_option, "_audiokit_fast"):

        def get_help_option(ctx: Any) -> Any:  # made on demand by click, one per command
            option = help_option(ctx)
            if option is not None:
                _install(option)
            return option

        get_help_option._audiokit_fast = True  # type: ignore[attr-defined]
        command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        fast_coercion(sub)

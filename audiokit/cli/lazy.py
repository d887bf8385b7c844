"""What keeps a small command cheap: commands loaded on demand, plain option values converted without pydantic.

Start-up is most of what a short job costs (``audiokit mel utt.wav --npy ...`` on a 12 s file), so:

* :class:`LazyGroup` lists the commands of the job registry (:mod:`audiokit.pipelines.registry`: name,
  summary -- the first paragraph of the command's help -- and its CLI module) without importing their modules; a command's module -- and with it numpy, soundfile, the
  pipelines -- is imported only when that command runs or shows its own ``--help``.  ``audiokit --help``
  therefore costs Typer and rich only.
* :func:`fast_coercion`: Typer >= 0.2x converts every option value (even an unset flag) through a pydantic ``TypeAdapter``,
  which costs importing pydantic (~40 ms) and building one adapter per parameter (~1 ms each, ~30 per
  command).  Plain values -- ``str``, ``bool``, a decimal ``int``/``float`` inside its ``min``/``max``, lists
  of those -- are converted here exactly as pydantic would (``"25ms"`` -> ``"25ms"``, ``"80"`` -> ``80``);
  anything else (a bad number, a value out of range, choices, paths, files, parsers, clamping) goes to
  Typer's own pydantic path, so every error message stays Typer's.  With an older Typer (no
  ``typer._coercion``) nothing is changed.

A new command is one entry in the registry; ``tests/cli/test_startup.py`` checks that its summary matches
the command's docstring.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from ..pipelines import registry

__all__ = ["LazyGroup", "fast_coercion", "load_command", "plain_metavars"]

def load_command(name: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None) -> Any:
    """Import command ``name`` and build its click command exactly as ``app.command(name)`` / ``app.add_typer`` would.

    ``wrap`` is applied to every command callback (those of a group too).
    """
    target = registry.load(registry.entry(name).cli)
    holder = typer.Typer()
    holder.callback()(_nothing)  # a group, so that get_command returns it with `name` registered inside
    if isinstance(target, typer.Typer):
        if wrap is not None:
            _wrap_callbacks(target, wrap)
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(wrap(target) if wrap is not None else target)
    command = typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]
    fast_coercion(command)
    plain_metavars(command)
    return command


#: What the help shows after an option that takes a value, by the value's Python type (Typer would show ``<str>``).
_METAVARS = {str: "TEXT", int: "INT", float: "NUMBER"}


def _plain_argument(param: Any) -> None:
    """``FILE`` / ``FILES...`` in the usage line and the help (this Typer writes ``{FILE}`` and ``<str>``)."""
    name = (param.metavar or param.name.upper()).rstrip(".")
    param.metavar = name + ("..." if param.nargs != 1 else "")
    if hasattr(param, "_usage_display_name"):  # Typer's own hooks, where this version has them
        param._usage_display_name = lambda: param.metavar if param.required else f"[{param.metavar}]"
    if hasattr(param, "display_type_rich"):
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
        descriptor = getattr(param, "type_descriptor", None)
        annotation = getattr(descriptor, "annotation", None)
        if annotation in _METAVARS:
            param.metavar = _METAVARS[annotation]


def _nothing() -> None:
    """Placeholder group callback."""


def _wrap_callbacks(typer_app: typer.Typer, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    for command in typer_app.registered_commands:
        if command.callback is not None and not getattr(command.callback, "_audiokit_wrapped", False):
            command.callback = wrap(command.callback)
            command.callback._audiokit_wrapped = True  # type: ignore[attr-defined]
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _wrap_callbacks(group.typer_instance, wrap)


class LazyGroup(TyperGroup):
    """The root group: lists the registry's commands from their summaries, imports a command when it is used.

    Subclasses set :attr:`wrap` (applied to every command callback).
    """

    wrap: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        plain_metavars(self)  # the root's own flags (--version, --help)
        self._listing = 0
        for item in registry.entries():
            if item.name not in self.commands:
                stub = TyperCommand(name=item.name, help=item.summary, rich_markup_mode=self.rich_markup_mode)
                stub._audiokit_stub = True  # type: ignore[attr-defined]
                self.commands[item.name] = stub
        fast_coercion(self)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if command is None or self._listing or not getattr(command, "_audiokit_stub", False):
            return command
        wrap = type(self).wrap
        command = self.commands[cmd_name] = load_command(cmd_name, wrap)
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing += 1  # the command list needs names and summaries only
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing -= 1


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


def fast_coercion(command: Any) -> None:
    """Give the plain parameters of ``command`` (and of its subcommands) the fast converter; see the module doc."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # an older Typer: click types, no pydantic
        return

    class PlainValue(RuntimeParam):  # type: ignore[misc]
        """Typer's None/multi-value handling, then the plain conversion or Typer's own."""

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

    def install(param: Any) -> None:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", False) is not None:
            return
        convert = _plain_converter(descriptor)
        if convert is not None:
            param._runtime_param = PlainValue(descriptor.parameter_info, descriptor.annotation, convert)

    for param in getattr(command, "params", ()):
        install(param)
    help_option = getattr(command, "get_help_option", None)
    if help_option is not None and not hasattr(help_option, "_audiokit_fast"):

        def get_help_option(ctx: Any) -> Any:  # made on demand by click, one per command
            option = help_option(ctx)
            if option is not None:
                install(option)
            return option

        get_help_option._audiokit_fast = True  # type: ignore[attr-defined]
        command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        fast_coercion(sub)

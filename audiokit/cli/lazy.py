"""What keeps a small command cheap: commands loaded on demand, plain option values converted without pydantic.

Start-up is most of what a short job costs (``audiokit mel utt.wav --npy ...`` on a 12 s file), so:

* :class:`LazyGroup` lists the commands of the job registry (:mod:`audiokit.pipelines.registry`: name,
  summary -- the first paragraph of the command's help -- and its CLI module) without importing their modules; a command's module -- and with it numpy, soundfile, the
  pipelines -- is imported only when that command runs or shows its own ``--help``.  ``audiokit --help``
  therefore costs Typer and rich only.
* every command's plain option values are converted without pydantic, and its help shows plain metavars
  (:func:`~audiokit.cli.typer_hooks.fast_coercion`, :func:`~audiokit.cli.typer_hooks.plain_metavars`:
  Typer's private modules, used in that one module only).

A new command is one entry in the registry; ``tests/cli/test_startup.py`` checks that its summary matches
the command's docstring.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from ..pipelines import registry
from .typer_hooks import fast_coercion, plain_metavars

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
    group: Any = typer.main.get_command(holder)  # a click Group: the holder has a callback
    command = group.commands[name]
    fast_coercion(command)
    plain_metavars(command)
    return command


def _nothing() -> None:
    """Placeholder group callback."""


#: Callbacks already wrapped (a Typer group's commands are wrapped once, however often it is loaded).
_WRAPPED: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


def _wrap_callbacks(typer_app: typer.Typer, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    for command in typer_app.registered_commands:
        if command.callback is not None and command.callback not in _WRAPPED:
            command.callback = wrap(command.callback)
            _WRAPPED.add(command.callback)
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
        self._stubs: set[str] = set()  # commands listed by summary, not loaded yet
        for item in registry.entries():
            if item.name not in self.commands:
                self.commands[item.name] = TyperCommand(name=item.name, help=item.summary, rich_markup_mode=self.rich_markup_mode)
                self._stubs.add(item.name)
        fast_coercion(self)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if command is None or self._listing or cmd_name not in self._stubs:
            return command
        wrap = type(self).wrap
        command = self.commands[cmd_name] = load_command(cmd_name, wrap)
        self._stubs.discard(cmd_name)
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing += 1  # the command list needs names and summaries only
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing -= 1

"""The root Typer application: the lazy command list, ``--version``, the common options and help shown as written.

Typer, rich and the command modules are imported on demand (start-up cost, issue 13): ``audiokit --version``
imports none of them, ``audiokit --help`` Typer and rich only, and a command its own module (see
:mod:`audiokit.cli.lazy`); rich only when a help text is shown (:func:`literal_when_shown`), a table printed
or a progress bar drawn (:mod:`audiokit.cli.console`).  :mod:`audiokit.cli.app` builds the application on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["build_app", "literal_help", "literal_when_shown", "version_text"]


def version_text() -> str:
    """``audiokit <version>``: what ``--version`` prints."""
    from .. import __version__

    return f"audiokit {__version__}"


def build_app(guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Any:
    """The Typer application; every command callback (``audiokit batch``'s too) is wrapped in ``guard``, then given
    the common options (:func:`audiokit.cli.common.with_common_options`)."""
    from typing import Annotated, Optional

    import typer

    from .common import with_common_options
    from .lazy import LazyGroup

    def wrap_command(callback: Callable[..., Any]) -> Callable[..., Any]:
        return with_common_options(guard(callback))

    class Commands(LazyGroup):
        wrap = staticmethod(wrap_command)

        def get_command(self, ctx: Any, cmd_name: str) -> Any:
            return literal_when_shown(super().get_command(ctx, cmd_name))

        def format_help(self, ctx: Any, formatter: Any) -> None:
            literal_help(self)  # the root's options and the command list (summaries)
            super().format_help(ctx, formatter)

    def _version(value: bool) -> None:
        if value:
            print(version_text())
            raise typer.Exit()

    typer_app = typer.Typer(
        name="audiokit",
        cls=Commands,
        help="Audio analysis from PCM to the mel spectrogram, and back.  Every command takes --help.",
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    def _root(version=None) -> None:  # type: ignore[no-untyped-def]
        """Audio analysis from PCM to the mel spectrogram, and back."""

    # Set as objects: under ``from __future__ import annotations`` the names would be looked up in this module.
    _root.__annotations__ = {
        "version": Annotated[
            Optional[bool],  # noqa: UP045
            typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
        ],
        "return": None,
    }
    typer_app.callback()(_root)
    return typer_app


def literal_when_shown(command: Any) -> Any:
    """Make ``command`` (and its subcommands) apply :func:`literal_help` to itself when its help is formatted; return
    it.

    Every help text is shown through a command's ``format_help`` (``--help``, a group run without a command, the
    command lists of ``audiokit --help`` and ``audiokit batch --help`` are their group's), so escaping there gives
    the help :func:`literal_help` always gave, while a run that shows no help never imports ``rich.markup``
    (start-up: ~20 ms).  A ``None`` command (unknown name) is returned as is.
    """
    if command is None or "format_help" in vars(command):
        return command
    shown = command.format_help

    def format_help(ctx: Any, formatter: Any) -> None:
        literal_help(command)
        shown(ctx, formatter)

    command.format_help = format_help
    for sub in getattr(command, "commands", {}).values():
        literal_when_shown(sub)
    return command


def literal_help(command: Any) -> Any:
    """Make ``command`` (and its subcommands) show every help text as written; return it.

    Typer renders help with rich markup on, so a bracket that looks like a tag was eaten: ``--npy`` read "Save rows
    as .npy" (``[freq_hz, amplitude(, phase)]``), ``[on]``/``[sr/2]`` left " ." and ``|X[k]|^2`` "|X|^2".  No help
    in audiokit uses markup, so the texts are escaped here, once, for every command (rich's own rule: only what
    would be read as a tag gets a backslash).  A ``None`` command (unknown name) is returned as is.
    """
    if command is None or getattr(command, "_audiokit_literal", False) or getattr(command, "rich_markup_mode", None) != "rich":
        return command
    from rich.markup import escape

    command._audiokit_literal = True
    for attribute in ("help", "short_help", "epilog"):
        if getattr(command, attribute, None):
            setattr(command, attribute, escape(getattr(command, attribute)))
    for param in getattr(command, "params", ()):
        for attribute in ("help", "rich_help_panel"):
            if getattr(param, attribute, None):
                setattr(param, attribute, escape(getattr(param, attribute)))
    for sub in getattr(command, "commands", {}).values():
        literal_help(sub)
    return command

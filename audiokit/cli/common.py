"""The options every command takes, declared once: ``-q/--quiet`` and ``--debug`` (sqlite-utils' option bundles).

:func:`with_common_options` adds them to a command callback's parameters; the root application
(:mod:`audiokit.cli.root`) applies it to every command and every ``audiokit batch`` subcommand as it loads them,
so no command declares them and each accepts them among its own options (``audiokit mel f.wav -q``).
``--quiet`` configures :mod:`.console` as the command starts; ``--debug`` is eager (read before any other option
is converted), so an error in a later option's value shows its traceback too.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from . import console

__all__ = ["COMMON", "Debug", "Quiet", "with_common_options"]


def _record_debug(value: bool) -> bool:
    console.set_debug(value)
    return value


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on stderr but errors.")]
Debug = Annotated[
    bool, typer.Option("--debug", help="Show the Python traceback on errors.", is_eager=True, callback=_record_debug)
]
#: The common parameters, added after a command's own (the help lists them last, as it always did).
COMMON = (
    inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, annotation=Quiet, default=False),
    inspect.Parameter("debug", inspect.Parameter.KEYWORD_ONLY, annotation=Debug, default=False),
)


def with_common_options(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` with the :data:`COMMON` parameters added: they configure the run, the rest goes to ``callback``.

    Parameters
    ----------
    callback : callable
        A command function, its parameters declared with Typer annotations (none named ``quiet`` or ``debug``).

    Returns
    -------
    callable
        A function whose signature (what Typer reads) is ``callback``'s plus ``quiet`` and ``debug``.
    """
    signature = inspect.signature(callback, eval_str=True)
    clash = sorted({p.name for p in COMMON} & set(signature.parameters))
    if clash:
        raise TypeError(f"{callback.__name__} declares {clash}: every command gets them from audiokit.cli.common")

    @functools.wraps(callback)
    def command(*args: Any, quiet: bool = False, debug: bool = False, **kwargs: Any) -> Any:
        console.configure(quiet=quiet)
        return callback(*args, **kwargs)

    parameters = [*signature.parameters.values(), *COMMON]
    command.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters if p.annotation is not p.empty}
    if signature.return_annotation is not signature.empty:
        command.__annotations__["return"] = signature.return_annotation
    return command

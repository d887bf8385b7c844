"""The options every command takes, declared once: ``-q/--quiet``, ``--debug`` (sqlite-utils' option bundles) and,
for every command that reads audio inputs, ``--storage-option KEY=VALUE``.

:func:`with_common_options` adds them to a command callback's parameters; the root application
(:mod:`audiokit.cli.root`) applies it to every command and every ``audiokit batch`` subcommand as it loads them,
so no command declares them and each accepts them among its own options (``audiokit mel f.wav -q``).
``--quiet`` configures :mod:`.console` as the command starts; ``--debug`` is eager (read before any other option
is converted), so an error in a later option's value shows its traceback too.  ``--storage-option`` (fsspec's
options for URL inputs, :mod:`audiokit.io.remote`) is added to a command that takes the shared input options
(:data:`INPUT_PARAMS`, what :func:`audiokit.cli.options.inputs_from` reads, also in ``audiokit batch``); its
values are held for the command's run and read by ``inputs_from`` (:func:`given_storage_options`), which parses
them inside the command, where errors are reported.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Optional

import typer

from . import console

__all__ = ["COMMON", "INPUT_PARAMS", "Debug", "Quiet", "StorageOption", "given_storage_options", "with_common_options"]


def _record_debug(value: bool) -> bool:
    console.set_debug(value)
    return value


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on stderr but errors.")]
Debug = Annotated[
    bool, typer.Option("--debug", help="Show the Python traceback on errors.", is_eager=True, callback=_record_debug)
]
StorageOption = Annotated[
    Optional[list[str]],  # noqa: UP045 (Typer reads the annotation)
    typer.Option(
        "--storage-option",
        metavar="KEY=VALUE",
        help="fsspec storage option for URL inputs (s3://, gs://, https://), repeatable: key=..., secret=..., "
        "endpoint_url=http://host:9000, anon=true; JSON values are decoded, a.b=v nests.  Default: "
        "AUDIOKIT_STORAGE_OPTIONS (a JSON object), then fsspec's and the filesystem's own configuration.",
    ),
]
#: The common parameters, added after a command's own (the help lists them last, as it always did).
COMMON = (
    inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, annotation=Quiet, default=False),
    inspect.Parameter("debug", inspect.Parameter.KEYWORD_ONLY, annotation=Debug, default=False),
)
#: The parameters of the shared input options (:func:`audiokit.cli.options.inputs_from`): a command declaring them
#: all reads audio inputs and gets ``--storage-option`` too.
INPUT_PARAMS = frozenset({"rate", "fmt", "channels", "fix_nonfinite"})
_STORAGE_PARAM = inspect.Parameter("storage_option", inspect.Parameter.KEYWORD_ONLY, annotation=StorageOption, default=None)
#: The ``--storage-option`` texts of the command running in this context.
_GIVEN_STORAGE: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("storage_option", default=())


def given_storage_options() -> tuple[str, ...]:
    """The ``--storage-option KEY=VALUE`` texts of the running command, as typed (empty outside a command)."""
    return _GIVEN_STORAGE.get()


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
    common = COMMON + ((_STORAGE_PARAM,) if INPUT_PARAMS <= signature.parameters.keys() else ())
    clash = sorted({p.name for p in common} & set(signature.parameters))
    if clash:
        raise TypeError(f"{callback.__name__} declares {clash}: every command gets them from audiokit.cli.common")

    @functools.wraps(callback)
    def command(
        *args: Any, quiet: bool = False, debug: bool = False, storage_option: list[str] | None = None, **kwargs: Any
    ) -> Any:
        console.configure(quiet=quiet)
        token = _GIVEN_STORAGE.set(tuple(storage_option or ()))
        try:
            return callback(*args, **kwargs)
        finally:
            _GIVEN_STORAGE.reset(token)

    parameters = [*signature.parameters.values(), *common]
    command.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters if p.annotation is not p.empty}
    if signature.return_annotation is not signature.empty:
        command.__annotations__["return"] = signature.return_annotation
    return command

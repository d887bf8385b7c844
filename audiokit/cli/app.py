"""The Typer application and the one place where errors become exit codes.

Exit codes (also in README "Exit codes"):

====  =====================================================================
0     success
1     internal error (a bug: please report it with ``--debug`` output)
2     usage: unknown option, bad option value
3     bad input: missing, unreadable or invalid audio
4     output cannot be written (folder missing, disk full, output = input)
130   interrupted by Ctrl-C (SIGINT); 143 terminated by SIGTERM
141   stdout closed early by the reader (broken pipe), silently
====  =====================================================================
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import sys
from typing import Any

from ..errors import AudiokitError, OutputError
from . import console

# Typer, the command modules and everything under them are imported on demand (start-up cost, issue 13):
# ``audiokit --version`` imports none of them, ``audiokit --help`` Typer and rich only, and a command its
# own module (see :mod:`audiokit.cli.lazy`).  ``app`` (the Typer application) is built on first use.


#: What an internal error adds to its message, by whether --debug was given (then the traceback is shown).
_DEBUG_HINT = {False: " (rerun with --debug for the traceback)", True: " (a bug: please report it with this traceback)"}
#: Exit code of an interrupted run (128 + SIGINT).
INTERRUPTED = 130


def _version_text() -> str:
    from .. import __version__

    return f"audiokit {__version__}"


def _build_app() -> Any:
    from typing import Annotated, Optional

    import typer

    from .lazy import LazyGroup

    class Commands(LazyGroup):
        wrap = staticmethod(_guarded)

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            literal_help(self)  # the root's options and the command list (summaries)

        def get_command(self, ctx: Any, cmd_name: str) -> Any:
            return literal_help(super().get_command(ctx, cmd_name))

    def _version(value: bool) -> None:
        if value:
            print(_version_text())
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


def __getattr__(name: str) -> Any:
    if name == "app":
        value = globals()["app"] = _build_app()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives, so cleanup code runs."""


#: Signals received during this run (SIGINT, SIGTERM), whether or not their exception reached :func:`main`.
_RECEIVED: list[int] = []
#: Exit code and message of a run ended by a signal.
_ENDED_BY: dict[int, tuple[int, str]] = {int(signal.SIGINT): (130, "interrupted"), int(signal.SIGTERM): (143, "terminated")}


def _on_sigterm(signum, frame) -> None:
    _RECEIVED.append(signum)
    raise Terminated()


def _on_sigint(signum, frame) -> None:
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def _quiet_unraisable(unraisable: Any) -> None:
    """Python drops an exception raised inside a callback (a weakref or import-lock callback, ``__del__``) and
    prints it as "Exception ignored".  Ours are recorded in :data:`_RECEIVED` and acted on by :func:`main`."""
    if isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)):
        return
    sys.__unraisablehook__(unraisable)


class _Escaped(BaseException):
    """Carries a KeyboardInterrupt or BrokenPipeError from a command past Typer to :func:`main`.

    Typer (>= 0.2x) catches both itself and only returns 130 / exits 1, which
    would lose the "interrupted" message, ``--debug`` and the 141 exit code.
    """

    def __init__(self, original: BaseException):
        super().__init__(original)
        self.original = original


def _guarded(callback):
    @functools.wraps(callback)
    def run_command(*args, **kwargs):
        try:
            return callback(*args, **kwargs)
        except (KeyboardInterrupt, BrokenPipeError) as exc:
            raise _Escaped(exc) from exc

    return run_command


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and, as a script, exit with) the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    # Ctrl-C stays ignored when the run was started with it ignored (a background job); otherwise it is recorded too
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_unraisable
    _RECEIVED.clear()
    _reopen_closed_stdio()
    try:
        if args == ["--version"]:  # the common case without Typer (same output as the eager option)
            print(_version_text())
            code = 0
        else:
            code = _run_app(args, debug)
    except KeyboardInterrupt as exc:  # before Typer was imported
        _report(exc, debug, "interrupted")
        code = 130
    except Terminated as exc:
        _report(exc, debug, "terminated")
        code = 143
    except BrokenPipeError:
        _silence_stdout()
        code = 141
    except SystemExit as exc:  # rich's Console and Typer end a write to a closed pipe with exit(1): it is a 141
        if not _closed_pipe(exc):
            raise
        _silence_stdout()
        code = 141
    except OSError as exc:  # writing a command's data to standard output (a full disk behind a redirection, ...)
        _report(exc, debug, f"standard output: {_os_reason(exc)}")
        code = 4
    except AudiokitError as exc:  # standard output closed (see _ClosedOutput)
        _report(exc, debug, str(exc))
        code = exc.exit_code
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)
    if _RECEIVED and code not in (130, 143):
        # The signal's exception was swallowed inside a callback and the command went on to the end: its outputs
        # are complete (committed together), but the run was still interrupted, and says so.
        code, word = _ENDED_BY[_RECEIVED[0]]
        console.error(word)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        code = code or 141
    except OSError as exc:
        console.error(f"standard output: {_os_reason(exc)}")
        _silence_stdout()
        code = code or 4
    except AudiokitError as exc:
        console.error(str(exc))
        code = code or exc.exit_code
    return code


def _closed_pipe(exc: BaseException | None) -> bool:
    """True when ``exc`` is a write to a closed pipe, or was raised while handling one.

    rich (``Console.on_broken_pipe``: a result table, the help) and Typer (an ``EPIPE`` outside a command) catch the
    ``BrokenPipeError`` themselves and raise ``SystemExit(1)`` in its place; the original stays as its context.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _os_reason(exc: OSError) -> str:
    """One-line reason for a failed write (imported late: :mod:`audiokit.io` loads numpy)."""
    from ..io.atomic import describe_os_error

    return describe_os_error(exc)


class _ClosedOutput:
    """Stands for a standard output that was closed when audiokit started: writing data to it is an error (exit 4)."""

    def write(self, text: str) -> int:
        if text:
            raise OutputError("standard output is closed; nowhere to write the result")
        return 0

    def flush(self) -> None:
        """Nothing is buffered."""

    @property
    def buffer(self) -> _ClosedOutput:
        return self

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return 1


def _reopen_closed_stdio() -> None:
    """Give closed descriptors 0-2 a /dev/null, so that no file opened later takes their number.

    Without this, a file opened while fd 2 is closed becomes "standard error" (error messages would land in it, or
    on stdout).  A closed stdin then reads as closed (``-`` is refused), a closed stdout refuses data (exit 4),
    and a closed stderr silences messages (there is nowhere to print them).
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            if fd == 0:
                sys.stdin = None  # type: ignore[assignment]
            elif fd == 1:
                sys.stdout = _ClosedOutput()  # type: ignore[assignment]
            else:
                sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


def _run_app(args: list[str], debug: bool) -> int:
    import typer

    try:  # Typer >= 0.22 vendors its own copy of click
        from typer._click import exceptions as click_exceptions
    except ImportError:  # pragma: no cover - older Typer uses click itself
        from click import exceptions as click_exceptions  # type: ignore[no-redef]

    typer_app = globals().get("app") or __getattr__("app")
    try:
        try:
            result = typer_app(args=args, prog_name="audiokit", standalone_mode=False)
        except _Escaped as escaped:
            raise escaped.original from None
        if result == INTERRUPTED:
            # Typer turns a Ctrl-C that lands outside a command (parsing, loading it) into a silent 130;
            # no command returns 130 itself.
            console.error("interrupted")
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except click_exceptions.NoArgsIsHelpError:
        return 2  # the help text was already printed
    except click_exceptions.ClickException as exc:
        unknown_command = isinstance(exc, click_exceptions.UsageError) and exc.message.startswith("No such command")
        _report(exc, debug, f"{exc.format_message()} (see 'audiokit {'' if unknown_command else _command(args)}--help')")
        return 2
    except AudiokitError as exc:
        _report(exc, debug, str(exc))
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort) as exc:  # a command may say how far it got (batch: "interrupted: 9 of 30 done; ...")
        _report(exc, debug, str(exc) or "interrupted")
        return 130
    except Terminated as exc:
        _report(exc, debug, str(exc) or "terminated")
        return 143
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is None:  # no file named: a write to standard output (main reports it)
            raise
        _report(exc, debug, f"internal error: {type(exc).__name__}: {exc}{_DEBUG_HINT[debug]}")
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        _report(exc, debug, f"internal error: {type(exc).__name__}: {exc}{_DEBUG_HINT[debug]}")
        return 1


def _command(args: list[str]) -> str:
    name = next((a for a in args if not a.startswith("-")), None)
    return f"{name} " if name else ""


def _report(exc: BaseException, debug: bool, message: str) -> None:
    if debug:
        import traceback  # only with --debug (start-up)

        traceback.print_exception(exc, file=sys.stderr)
    console.error(message)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so interpreter exit stays quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())

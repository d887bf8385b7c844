"""The one place where errors become exit codes (the ``audiokit`` entry point).

Exit codes (the :class:`~audiokit.errors.ExitStatus` enum; also in README "Exit codes"):

====  =====================================================================
0     success
1     internal error (a bug: please report it with ``--debug`` output)
2     usage: unknown option, bad option value
3     bad input: missing, unreadable or invalid audio
4     output cannot be written (folder missing, disk full, output = input)
130   interrupted by Ctrl-C (SIGINT); 143 terminated by SIGTERM
141   stdout closed early by the reader (broken pipe), silently
====  =====================================================================

The application itself (Typer, the lazy command list, ``--version``, the common ``-q``/``--debug``) is
:mod:`audiokit.cli.root`, built on first use; signals are :mod:`.signals`, the standard streams :mod:`.stdio`.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from ..errors import AudiokitError, ExitStatus
from . import console, signals, stdio
from .signals import Terminated

__all__ = ["Terminated", "main", "run"]

#: What an internal error adds to its message, by whether --debug was given (then the traceback is shown).
_DEBUG_HINT = {False: " (rerun with --debug for the traceback)", True: " (a bug: please report it with this traceback)"}


def __getattr__(name: str) -> Any:
    if name == "app":
        from .root import build_app

        value = globals()["app"] = build_app(_guarded)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    console.set_debug(False)  # until the command's --debug is read
    signals.forget_written()
    code: int = ExitStatus.OK
    with signals.recorded() as received:  # also removes the temp files a signal stranded (signals.recorded)
        stdio.reopen_closed_stdio()
        code = _run(args)
    if received and code not in (ExitStatus.INTERRUPTED, ExitStatus.TERMINATED):
        # The signal's exception was swallowed inside a callback, or landed just after _run returned: the command
        # went on to the end and its outputs are complete (committed together), but the run was still interrupted.
        code, word = signals.ENDED_BY[received[0]]
        console.error(signals.after_writing(word))
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        stdio.silence_stdout()
        code = code or ExitStatus.BROKEN_PIPE
    except OSError as exc:
        console.error(f"standard output: {stdio.os_reason(exc)}")
        stdio.silence_stdout()
        code = code or ExitStatus.OUTPUT
    except AudiokitError as exc:
        console.error(str(exc))
        code = code or exc.exit_code
    return int(code)


def _run(args: list[str]) -> int:
    """The exit code of one run, whatever it raised (signals, closed pipes and failed writes included)."""
    try:
        if args == ["--version"]:  # the common case without Typer (same output as the eager option)
            from .root import version_text

            print(version_text())
            return ExitStatus.OK
        return _run_app(args)
    except KeyboardInterrupt as exc:  # before Typer was imported
        _report(exc, signals.after_writing("interrupted"))
        return ExitStatus.INTERRUPTED
    except Terminated as exc:
        _report(exc, signals.after_writing("terminated"))
        return ExitStatus.TERMINATED
    except BrokenPipeError:
        stdio.silence_stdout()
        return ExitStatus.BROKEN_PIPE
    except SystemExit as exc:  # rich's Console and Typer end a write to a closed pipe with exit(1): it is a 141
        if not stdio.closed_pipe(exc):
            raise
        stdio.silence_stdout()
        return ExitStatus.BROKEN_PIPE
    except OSError as exc:  # writing a command's data to standard output (a full disk behind a redirection, ...)
        _report(exc, f"standard output: {stdio.os_reason(exc)}")
        return ExitStatus.OUTPUT
    except AudiokitError as exc:  # standard output closed (see stdio._ClosedOutput)
        _report(exc, str(exc))
        return exc.exit_code
    finally:
        signals.stop_raising()  # the work is over: a signal now is recorded, and main reports it


def _run_app(args: list[str]) -> int:
    import typer

    from .typer_hooks import click_exceptions

    typer_app = globals().get("app") or __getattr__("app")
    try:
        try:
            result = typer_app(args=args, prog_name="audiokit", standalone_mode=False)
        except _Escaped as escaped:
            raise escaped.original from None
        if result == ExitStatus.INTERRUPTED:
            # Typer turns a Ctrl-C that lands outside a command (parsing, loading it) into a silent 130;
            # no command returns 130 itself.
            console.error("interrupted")
        return result if isinstance(result, int) else ExitStatus.OK
    except typer.Exit as exc:
        return exc.exit_code
    except click_exceptions.NoArgsIsHelpError:
        return ExitStatus.USAGE  # the help text was already printed
    except click_exceptions.ClickException as exc:
        unknown_command = isinstance(exc, click_exceptions.UsageError) and exc.message.startswith("No such command")
        _report(exc, f"{exc.format_message()} (see 'audiokit {'' if unknown_command else _command(args)}--help')")
        return ExitStatus.USAGE
    except AudiokitError as exc:
        _report(exc, str(exc))
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort) as exc:  # a command may say how far it got (batch: "interrupted: 9 of 30 done; ...")
        _report(exc, str(exc) or signals.after_writing("interrupted"))
        return ExitStatus.INTERRUPTED
    except Terminated as exc:
        _report(exc, str(exc) or signals.after_writing("terminated"))
        return ExitStatus.TERMINATED
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is None:  # no file named: a write to standard output (main reports it)
            raise
        _report(exc, f"internal error: {type(exc).__name__}: {exc}{_DEBUG_HINT[console.debugging()]}")
        return ExitStatus.INTERNAL
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        ended = signals.ended_by()
        if ended is not None:  # what a signal broke is the signal (an import it interrupts raises ImportError)
            _report(exc, signals.after_writing(ended[1]))
            return ended[0]
        _report(exc, f"internal error: {type(exc).__name__}: {exc}{_DEBUG_HINT[console.debugging()]}")
        return ExitStatus.INTERNAL


def _command(args: list[str]) -> str:
    name = next((a for a in args if not a.startswith("-")), None)
    return f"{name} " if name else ""


def _report(exc: BaseException, message: str) -> None:
    """``error: <message>`` on stderr, after the traceback with ``--debug``."""
    if console.debugging():
        import traceback  # only with --debug (start-up)

        traceback.print_exception(exc, file=sys.stderr)
    console.error(message)


def run() -> None:
    """Console-script entry point: a signal outside the run prints its line too (:func:`signals.install_for_process`)."""
    signals.install_for_process()
    code = main()
    signals.ignore_while_exiting()
    sys.exit(code)

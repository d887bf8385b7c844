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

import functools
import os
import signal
import sys
import traceback
from typing import Annotated, Optional

import typer

try:  # Typer >= 0.22 vendors its own copy of click
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - older Typer uses click itself
    from click import exceptions as click_exceptions

from .. import __version__
from ..errors import AudiokitError
from . import console
from .batch import batch_app
from .dehum import dehum_command
from .generate import generate_command
from .info import info_command
from .istft import istft_command
from .mel import mel_command
from .spectrogram import spectrogram_command
from .spectrum import spectrum_command
from .quantize import quantize_command
from .resample import resample_command

app = typer.Typer(
    name="audiokit",
    help="Audio analysis from PCM to the mel spectrogram, and back.  Every command takes --help.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"audiokit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = None,
) -> None:
    """Audio analysis from PCM to the mel spectrogram, and back."""


app.command("info")(info_command)
app.command("generate")(generate_command)
app.command("spectrum")(spectrum_command)
app.command("spectrogram")(spectrogram_command)
app.command("mel")(mel_command)
app.command("istft")(istft_command)
app.command("resample")(resample_command)
app.command("quantize")(quantize_command)
app.command("dehum")(dehum_command)
app.add_typer(batch_app, name="batch")


class Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives, so cleanup code runs."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


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

    run_command._audiokit_guarded = True
    return run_command


def _guard_commands(typer_app: typer.Typer) -> None:
    """Wrap every registered command callback (once) with :func:`_guarded`."""
    for command in typer_app.registered_commands:
        if command.callback is not None and not getattr(command.callback, "_audiokit_guarded", False):
            command.callback = _guarded(command.callback)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _guard_commands(group.typer_instance)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and, as a script, exit with) the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    _guard_commands(app)
    try:
        try:
            result = app(args=args, prog_name="audiokit", standalone_mode=False)
        except _Escaped as escaped:
            raise escaped.original from None
        code = result if isinstance(result, int) else 0
    except typer.Exit as exc:
        code = exc.exit_code
    except click_exceptions.NoArgsIsHelpError:
        code = 2  # the help text was already printed
    except click_exceptions.ClickException as exc:
        _report(exc, debug, f"{exc.format_message()} (see 'audiokit {_command(args)}--help')")
        code = 2
    except AudiokitError as exc:
        _report(exc, debug, str(exc))
        code = exc.exit_code
    except (KeyboardInterrupt, typer.Abort) as exc:
        _report(exc, debug, "interrupted")
        code = 130
    except Terminated as exc:
        _report(exc, debug, "terminated")
        code = 143
    except BrokenPipeError:
        _silence_stdout()
        code = 141
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        _report(exc, debug, f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        code = 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        code = code or 141
    return code


def _command(args: list[str]) -> str:
    name = next((a for a in args if not a.startswith("-")), None)
    return f"{name} " if name else ""


def _report(exc: BaseException, debug: bool, message: str) -> None:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    console.error(message)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so interpreter exit stays quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())

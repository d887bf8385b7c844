"""What keeps a small command cheap: commands loaded on demand.

Start-up is most of what a short job costs (``audiokit mel utt.wav --npy ...`` on a 12 s file), so
:class:`LazyGroup` lists the commands of :data:`COMMANDS` (name, module, the first paragraph of the
docstring) without importing their modules; a command's module -- and with it numpy, soundfile, the
pipelines -- is imported only when that command runs or shows its own ``--help``.  ``audiokit --help``
therefore costs Typer and rich only.

A new command is one line in :data:`COMMANDS`; ``tests/cli/test_startup.py`` checks that its summary
matches the command's docstring.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["COMMANDS", "LazyGroup", "load_command"]

#: name -> (module under ``audiokit.cli``, attribute: a command function or a Typer group, summary line).
#: The summary is what ``audiokit --help`` shows: the first paragraph of the command's help, verbatim.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "info": ("info", "info_command", "Show format, duration and levels (peak, RMS, DC offset, clipped samples)."),
    "generate": ("generate", "generate_command", "Generate a test signal and write it as WAV (to -o PATH, or stdout)."),
    "spectrum": ("spectrum", "spectrum_command",
                 "One-sided DFT of the signal (or a segment): resolution, Nyquist and peaks."),
    "spectrogram": ("spectrogram", "spectrogram_command",
                    "Spectrogram: |STFT| of frames [m*hop, m*hop + n_fft), as a PNG and/or .npy."),
    "mel": ("mel", "mel_command", "Log-mel spectrogram: mel filter bank applied to |STFT|^2, in dB (or ln)."),
    "istft": ("istft", "istft_command",
              "Inverse STFT by weighted overlap-add, exact wherever the window sum is nonzero."),
    "resample": ("resample", "resample_command",
                 "Convert the sample rate (band-limited, or naive with --no-filter) and write WAV."),
    "quantize": ("quantize", "quantize_command",
                 "Requantize to B bits on the mid-tread grid k / 2^(B-1) and report the SQNR."),
    "dehum": ("dehum", "dehum_command", "Remove mains hum (50/60 Hz and harmonics) and write the cleaned WAV."),
    "batch": ("batch", "batch_app",
              "Run a command over a corpus: resumable, failure-tolerant, on local processes or a Dask cluster."),
}


def load_command(name: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None) -> Any:
    """Import command ``name`` and build its click command exactly as ``app.command(name)`` / ``app.add_typer`` would.

    ``wrap`` is applied to every command callback (those of a group too).
    """
    module, attribute, _ = COMMANDS[name]
    target = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
    holder = typer.Typer()
    holder.callback()(_nothing)  # a group, so that get_command returns it with `name` registered inside
    if isinstance(target, typer.Typer):
        if wrap is not None:
            _wrap_callbacks(target, wrap)
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(wrap(target) if wrap is not None else target)
    command = typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]
    return command


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
    """The root group: lists :data:`COMMANDS` from their summaries, imports a command when it is used.

    Subclasses set :attr:`wrap` (applied to every command callback).
    """

    wrap: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._listing = 0
        for name, (_, _, summary) in COMMANDS.items():
            if name not in self.commands:
                stub = TyperCommand(name=name, help=summary, rich_markup_mode=self.rich_markup_mode)
                stub._audiokit_stub = True  # type: ignore[attr-defined]
                self.commands[name] = stub

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


"""``audiokit pitch``: f0 by pYIN or YIN, librosa 0.11's bit for bit (the job: :mod:`audiokit.pipelines.pitch`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Optional

import typer

from ..pipelines.pitch import PitchOptions, check_options, pitch_file
from . import console
from .options import OUT_PANEL, JsonLinesPerFile, JsonPerFile, inputs_from, reads_audio, reporter
from .reports import FileOutputs, run_measuring, value_text
from .stft_options import Size


def options_from(params: Mapping[str, Any]) -> PitchOptions:
    """The pipeline options from the parameter values of :func:`pitch_command` (also ``audiokit batch pitch``)."""
    names = ("method", "fmin", "fmax", "win", "hop", "threshold", "log_freq", "size")
    return PitchOptions(**{name: params[name] for name in names})


def _print_table(report: dict) -> None:
    head = (
        f"{report['path']}: {report['sr']} Hz, {report['channels']} ch, {report['duration_s']:.6g} s, "
        f"{report['method']} {report['fmin_hz']:g}-{report['fmax_hz']:g} Hz, "
        f"frames {report['frame_length']}/{report['hop_length']} samples"
    )
    rows = [
        ["frames", str(report["n_frames"]), ""],
        ["voiced", f"{100 * report['voiced_fraction']:.1f} %", f"{report['voiced_frames']} frames"],
        ["median f0", value_text(report["f0_median_hz"], "Hz", 2), "voiced frames"],
        ["mean f0", value_text(report["f0_mean_hz"], "Hz", 2), "voiced frames"],
        ["range", f"{value_text(report['f0_min_hz'], 'Hz', 2)} .. {value_text(report['f0_max_hz'], 'Hz', 2)}", "voiced frames"],
    ]
    console.print_table(head, ["field", "value", "note"], rows)


@reads_audio
def pitch_command(
    files: Annotated[list[str], typer.Argument(help="Audio files (WAV, FLAC, OGG, MP3, raw PCM with --format), or - for stdin.")],
    method: Annotated[str, typer.Option("--method", help="pyin (HMM voicing, librosa.pyin) or yin (librosa.yin).")] = "pyin",
    fmin: Annotated[str, typer.Option("--fmin", help="Lowest f0 searched (Hz; 65Hz = C2).")] = "65Hz",
    fmax: Annotated[str, typer.Option("--fmax", help="Highest f0 searched (Hz; 2093Hz = C7), at most sr/2.")] = "2093Hz",
    win: Annotated[str, typer.Option("--win", help="Frame length (64ms; a bare number is samples).")] = "64ms",
    hop: Annotated[Optional[str], typer.Option("--hop", help="Hop between frames [default: win/4, 16ms].")] = None,
    threshold: Annotated[float, typer.Option("--threshold", help="yin: trough threshold on the normalised difference.")] = 0.1,
    json_out: JsonPerFile = False,
    json_lines: JsonLinesPerFile = False,
    npy: Annotated[
        Optional[str],
        typer.Option(
            "--npy",
            help="Write rows [time_s, f0_hz, voiced_flag, voiced_prob] x frames to PATH.npy + sidecar (0 Hz if unvoiced).",
            rich_help_panel=OUT_PANEL,
        ),
    ] = None,
    output: Annotated[
        Optional[str],
        typer.Option(
            "-o", "--output", help="PNG of the f0 track over the spectrogram (- for stdout).", rich_help_panel=OUT_PANEL
        ),
    ] = None,
    log_freq: Annotated[
        bool, typer.Option("--log-freq", help="PNG: logarithmic frequency axis.", rich_help_panel=OUT_PANEL)
    ] = False,
    size: Size = "1200x500",
    **raw: Any,
) -> int:
    """Fundamental frequency (f0) by pYIN or YIN: equal to librosa 0.11's, streamed.

    Frames of --win (default 64 ms) every --hop (default a quarter of the
    frame), centred on m*hop; channels mixed to mono.  pYIN decodes voiced /
    unvoiced states with an HMM (librosa's model, decoded exactly and far
    faster); YIN gives an f0 on every frame and calls a frame voiced when a
    trough lies below --threshold.  The table (or --json, one object per file)
    gives the median, mean and range of the voiced f0 and the voiced fraction.
    --npy and -o take one file.

    Example:

        audiokit pitch speech.wav

        audiokit pitch song.wav --fmin 80Hz --fmax 1kHz -o song.pitch.png --log-freq --npy song.pitch.npy

        audiokit pitch *.wav --jsonl | jq -r '[.path, .f0_median_hz] | @tsv'
    """
    params = dict(locals())
    outputs = FileOutputs(png=output, data=npy, flag="--npy", sidecar=True, batch="audiokit batch pitch")

    def prepare() -> Callable[[str], dict]:
        options = options_from(params)
        check_options(options)
        inputs = inputs_from(raw)
        return lambda path: pitch_file(path, options, npy=npy, png=output, inputs=inputs, reporter=reporter()).report or {}

    return run_measuring(files, outputs, prepare, _print_table, json_out=json_out, json_lines=json_lines)

"""``audiokit spectrum``: the DFT of a whole signal or a segment, with its peaks (the job: :mod:`audiokit.pipelines.spectrum`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from ..errors import ParameterError
from ..io.npy import sidecar_path
from ..pipelines.spectrum import MAX_DFT_SAMPLES, SpectrumOptions, spectrum_file
from . import console
from .options import OUT_PANEL, Channel, Json, inputs_from, print_paths, reads_audio, refuse_terminal, reporter
from .stft_options import Fft, Mix, Size, Symmetric, Window

PEAKS_PANEL = "Peaks"


def options_from(params: Mapping[str, Any]) -> SpectrumOptions:
    """The pipeline options from the parameter values of :func:`spectrum_command` (also ``audiokit batch``)."""
    names = (
        "start",
        "dur",
        "window",
        "symmetric",
        "nfft",
        "peaks",
        "threshold",
        "min_sep",
        "phase",
        "linear",
        "two_sided",
        "size",
        "fmin",
        "fmax",
        "channel",
        "mix",
        "fft",
    )
    return SpectrumOptions(**{name: params[name] for name in names})


def _print_report(report: dict, with_phase: bool) -> None:
    head = (
        f"{report['path']}: N = {report['n']} samples (n_fft {report['n_fft']}), sr {report['sr']} Hz, "
        f"Δf = {report['df']:.6g} Hz, Nyquist {report['nyquist']:g} Hz, window {report['window']}"
    )
    columns = ["channel", "freq Hz", "amplitude", "dBFS", "bin"] + (["phase rad"] if with_phase else [])
    rows = []
    for entry in report["channels"]:
        for peak in entry["peaks"]:
            row = [
                str(entry["channel"]),
                f"{peak['freq_hz']:.4f}",
                f"{peak['amplitude']:.6g}",
                f"{peak['dbfs']:.2f}",
                f"{peak['bin']:.3f}",
            ]
            rows.append(row + ([f"{peak['phase']:.4f}"] if with_phase else []))
    console.print_table(head, columns, rows)


@reads_audio
def spectrum_command(
    file: Annotated[str, typer.Argument(help="Audio file, or - for stdin.")],
    start: Annotated[str, typer.Option("--start", help="Segment start: 1.5s, 200ms or samples.")] = "0",
    dur: Annotated[
        Optional[str],
        typer.Option(
            "--dur",
            help=f"Segment length (default: to the end). The whole-segment DFT holds at most {MAX_DFT_SAMPLES} samples per "
            "channel in memory (87 s at 48 kHz): a longer segment is refused (exit 3).",
        ),
    ] = None,
    window: Window = "hann",
    symmetric: Symmetric = False,
    nfft: Annotated[
        Optional[str],
        typer.Option(
            "--nfft", help=f"DFT size >= segment length (zero padding), <= {MAX_DFT_SAMPLES}; default: the segment length."
        ),
    ] = None,
    peaks: Annotated[int, typer.Option("--peaks", min=0, help="Report the K strongest peaks.", rich_help_panel=PEAKS_PANEL)] = 5,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", help="Ignore peaks below the strongest by more than this many dB.", rich_help_panel=PEAKS_PANEL
        ),
    ] = 60.0,
    min_sep: Annotated[
        Optional[str],
        typer.Option(
            "--min-sep", help="Minimum distance between peaks (Hz); default the window's ENBW.", rich_help_panel=PEAKS_PANEL
        ),
    ] = None,
    phase: Annotated[
        bool,
        typer.Option(
            "--phase",
            help="Add the phase (radians, cosine phase at the segment start) of each peak / bin.",
            rich_help_panel=PEAKS_PANEL,
        ),
    ] = False,
    json_out: Json = False,
    npy: Annotated[
        Optional[str],
        typer.Option("--npy", help="Save rows [freq_hz, amplitude(, phase)] as .npy + JSON sidecar.", rich_help_panel=OUT_PANEL),
    ] = None,
    output: Annotated[
        Optional[str], typer.Option("-o", "--output", help="PNG of the spectrum (- for stdout).", rich_help_panel=OUT_PANEL)
    ] = None,
    linear: Annotated[
        bool, typer.Option("--linear", help="PNG in linear amplitude instead of dBFS.", rich_help_panel=OUT_PANEL)
    ] = False,
    two_sided: Annotated[
        bool,
        typer.Option(
            "--two-sided", help="PNG over 0..fs with the mirror image above Nyquist (for teaching).", rich_help_panel=OUT_PANEL
        ),
    ] = False,
    size: Size = "1200x500",
    fmin: Annotated[
        Optional[str], typer.Option("--fmin", help="PNG: lowest frequency shown (Hz).", rich_help_panel=OUT_PANEL)
    ] = None,
    fmax: Annotated[
        Optional[str], typer.Option("--fmax", help="PNG: highest frequency shown (Hz).", rich_help_panel=OUT_PANEL)
    ] = None,
    channel: Channel = None,
    mix: Mix = False,
    fft: Fft = None,
    **raw: Any,
) -> int:
    """One-sided DFT of the signal (or a segment): resolution, Nyquist and peaks.

    Amplitudes are corrected for the window's coherent gain and the one-sided
    factor 2 (not at DC and Nyquist), so a sine of amplitude A reads A
    (20*log10(A) dBFS).  Peak frequencies and amplitudes are fitted between
    bins with the window's exact transform.

    Example:

        audiokit generate "sine:50:0.5 + sine:120:0.25 + sine:300:0.125" --rate 8k --dur 1s | audiokit spectrum - --peaks 5

        audiokit spectrum rec.wav --start 1s --dur 0.5s --nfft 32768 -o rec.spectrum.png --json
    """
    params = dict(locals())
    if json_out and output == "-":
        raise ParameterError("--json and -o - both write to stdout; choose one")
    refuse_terminal(output, "PNG")
    job = spectrum_file(file, options_from(params), png=output, npy=npy, inputs=inputs_from(raw), reporter=reporter())
    report = job.report or {}
    written = [path for path in (output, npy) if path not in (None, "-")] + ([str(sidecar_path(npy))] if npy else [])
    if json_out:  # the report alone: stdout is one JSON document (as quantize --json, dehum --json)
        print(json.dumps(report, indent=2))
    elif output == "-":  # stdout holds the PNG bytes only; the other paths become notes
        print_paths(written, to_stderr=True)
    else:  # the table, then the written paths, on stdout (data, as every command prints them)
        _print_report(report, phase)
        print_paths(written)
    return 0

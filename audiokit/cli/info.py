"""``audiokit info``: format and levels of audio files, streamed block by block."""

from __future__ import annotations

import json
import math
from typing import Annotated

import typer

from ..dsp.levels import LevelMeter, dbfs
from ..errors import InputError
from ..io.writer import SUBTYPE_BITS
from . import console
from .options import Debug, FixNonFinite, Json, Quiet, RawChannels, RawFormatOpt, RawRate, open_input

BLOCK_FRAMES = 1 << 16
_BITS = {**{k: v for k, v in SUBTYPE_BITS.items() if v}, "PCM_S8": 8, "FLOAT": 32, "DOUBLE": 64}


def file_info(source) -> dict:
    """Measure one opened source; the JSON object documented in the README."""
    bits = _BITS.get(source.subtype)
    clip_level = 1.0 if source.is_float or bits is None else 1.0 - 2.0 ** -(bits - 1)
    meter = LevelMeter(source.channels, clip_level)
    with console.progress(f"info {source.name}", source.frames) as advance:
        # float32 holds FLOAT and <= 24-bit codes exactly; PCM_32/DOUBLE need float64, else
        # values just below full scale round to 1.0 and are miscounted as clipped.
        exact32 = source.subtype == "FLOAT" or (bits is not None and bits <= 24)
        dtype = "float32" if exact32 else "float64"
        for block in source.blocks(BLOCK_FRAMES, dtype=dtype):
            meter.update(block)
            advance(block.shape[1])
    return {
        "path": source.name,
        "container": source.container,
        "subtype": source.subtype,
        "bits": bits,
        "sr": source.sr,
        "channels": source.channels,
        "frames": meter.count,
        "duration_s": meter.count / source.sr,
        "levels": [
            {
                "channel": c,
                "peak_dbfs": _finite_or_none(dbfs(meter.peak[c])),
                "rms_dbfs": _finite_or_none(dbfs(meter.rms[c])),
                "dc_offset": float(meter.dc_offset[c]),
                "clipped": int(meter.clipped[c]),
            }
            for c in range(source.channels)
        ],
    }


def _finite_or_none(value: float) -> float | None:
    return round(value, 4) if math.isfinite(value) else None


def _db_text(value: float | None) -> str:
    return "-inf" if value is None else f"{value:.2f}"


def _print_table(report: dict) -> None:
    head = (
        f"{report['path']}: {report['container']} {report['subtype']}, {report['sr']} Hz, "
        f"{report['channels']} ch, {report['frames']} frames, {report['duration_s']:.6g} s"
    )
    rows = [
        [str(lv["channel"]), _db_text(lv["peak_dbfs"]), _db_text(lv["rms_dbfs"]), f"{lv['dc_offset']:.3g}", str(lv["clipped"])]
        for lv in report["levels"]
    ]
    console.print_table(head, ["channel", "peak dBFS", "RMS dBFS", "DC offset", "clipped"], rows)


def info_command(
    files: Annotated[list[str], typer.Argument(help="Audio files (WAV, FLAC, OGG, raw PCM with --format), or - for stdin.")],
    json_out: Json = False,
    rate: RawRate = None,
    fmt: RawFormatOpt = None,
    channels: RawChannels = 1,
    fix_nonfinite: FixNonFinite = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Show format, duration and levels (peak, RMS, DC offset, clipped samples).

    Files are read in blocks, so an hour-long WAV needs little memory.  A file
    that cannot be read gets an error line; the others are still reported, and
    the exit code is 3.

    Example:

        audiokit info examples/data/speech.wav

        audiokit generate "sine:1k" --dur 1s | audiokit info - --json | jq .levels
    """
    console.configure(quiet=quiet)
    reports, failed = [], None
    for path in files:
        try:
            with open_input(path, rate, fmt, channels, fix_nonfinite) as source:
                reports.append(file_info(source))
        except InputError as exc:
            if len(files) == 1:
                raise
            console.error(str(exc))
            failed = exc
    if json_out:
        payload = reports[0] if len(files) == 1 else reports
        print(json.dumps(payload, indent=2))
    else:
        for report in reports:
            _print_table(report)
    return failed.exit_code if failed else 0

"""``audiokit dehum``: find the mains hum, remove it, write the cleaned WAV (and what was removed).

The core (:mod:`audiokit.dsp.hum`) does the maths; this module reads the input
block by block for the three analysis passes, streams the removal into a
:class:`~audiokit.io.WavWriter`, measures the lines left in the output and
reports.

Conventions (also in README "audiokit dehum")
---------------------------------------------
* Passes over the input: 3 (analysis) + 1 (removal) + 1 more with
  ``--normalize``.  Standard input is spooled by the reader, so it can be
  read several times.  Memory does not grow with the length of the input
  beyond a few kilobytes per second (the per-frame amplitudes).
* Output: same rate, channels and subtype as the input unless ``--subtype``;
  default path ``<stem>.dehum.wav`` beside the input; the written path(s) are
  printed on stdout (output first, then ``--residual``), nothing with ``-o -``.
* ``--json`` prints one JSON object on stdout instead of the paths; the paths
  are in it (``output``, ``residual``).  ``-o -`` with ``--json`` is refused
  (both want stdout).
* ``--residual PATH`` gets ``input - output`` computed in float64 before the
  output is encoded (and before the ``--normalize`` gain).
* Beyond full scale: FLOAT/DOUBLE output keeps the values, PCM output clips
  them; either way a warning gives the peak.  ``--normalize`` scales the
  output down to fit instead (an extra pass).
* Levels are dB re a full-scale sine (peak amplitude 1.0 = 0 dB), read with
  1 s frames at each line; ``null`` in JSON stands for ``-inf``.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from collections import deque
from collections.abc import Iterator
from typing import Annotated, Optional

import numpy as np
import typer

from ..dsp.hum import (
    DEFAULT_THRESHOLD_DB,
    ERASE_WINDOW_SECONDS,
    METHODS,
    HumAnalysis,
    HumEraser,
    HumMeter,
    HumSubtractor,
    analyze_hum_blocks,
)
from ..dsp.levels import dbfs
from ..dsp.resample import measure_overshoot
from ..errors import ParameterError
from ..io import SUBTYPE_BITS, WavWriter, check_output_path, derived_output, is_stdio, resolve_subtype
from ..io.reader import AudioSource
from . import console
from .options import (
    Debug,
    FixNonFinite,
    Quiet,
    RawChannels,
    RawFormatOpt,
    RawRate,
    duration_option,
    frequency_option,
    open_input,
)

BLOCK_FRAMES = 1 << 16
HUM_PANEL = "Hum"
ERASE_PANEL = "--method erase"
OUT_PANEL = "Output"


def parse_freq(text: str) -> float | None:
    """``--freq``: ``auto`` -> None, else a frequency in Hz (``50``, ``60Hz``, ``16.7``)."""
    if text.strip().lower() == "auto":
        return None
    try:
        return frequency_option("--freq", text)
    except ParameterError:
        raise ParameterError(f"--freq: invalid value {text!r}: use 50, 60, another frequency such as 16.7Hz, or auto") from None


def _null(value: float) -> float | None:
    return None if not math.isfinite(value) else round(float(value), 3)


def _total_db(levels: np.ndarray, mask: np.ndarray) -> list[float | None]:
    """Total power of the masked harmonics per channel, in dB (None when nothing is masked)."""
    out = []
    for lv, m in zip(levels, mask):
        if not m.any():
            out.append(None)
            continue
        p = np.sum(10.0 ** (lv[m] / 10.0))
        out.append(_null(10.0 * math.log10(p)) if p > 0 else None)
    return out


def report(analysis: HumAnalysis, after_db: np.ndarray, *, source: AudioSource, target: str, residual: str | None,
           method: str, eraser: HumEraser | None, gain: float, peak: float) -> dict:
    """The ``--json`` object (see the README for its fields)."""
    a = analysis
    times = a.times
    track = a.f0_track if times.size else np.zeros(0)
    harmonics = []
    for i, k in enumerate(a.harmonics):
        harmonics.append({
            "k": int(k),
            "freq_hz": round(float(k) * a.f0, 4),
            "treated": [bool(t) for t in a.treated[:, i]],
            "level_db": [_null(v) for v in a.level_db[:, i]],
            "after_db": [_null(v) for v in after_db[:, i]],
            "floor_db": [_null(v) for v in a.floor_db[:, i]],
            "snr_db": [_null(v) for v in a.snr_db[:, i]],
            "span_s": [float(v) for v in a.span_s[:, i]],
        })
    out = {
        "input": source.name,
        "output": target,
        "residual": residual,
        "method": method,
        "sr": a.sr,
        "channels": a.channels,
        "frames": a.n_samples,
        "duration_s": a.n_samples / a.sr,
        "nominal_hz": a.nominal,
        "auto": a.auto,
        "search_hz": [round(a.search[0], 4), round(a.search[1], 4)],
        "found": a.found,
        "f0_hz": round(a.f0, 4) if times.size else None,
        "f0_min_hz": round(float(track.min()), 4) if track.size else None,
        "f0_max_hz": round(float(track.max()), 4) if track.size else None,
        "threshold_db": a.threshold_db,
        "harmonics_considered": len(a.harmonics),
        "treated": list(a.treated_harmonics),
        "tracked": list(a.tracked),
        "hum_db": {"before": _total_db(a.level_db, a.treated), "after": _total_db(after_db, a.treated)},
        "harmonics": harmonics,
        "gain_db": round(dbfs(gain), 3),
        "peak_dbfs": _null(dbfs(peak)),
    }
    if eraser is not None:
        out["erase"] = {"win_s": eraser.win_length / a.sr, "width_hz": eraser.width_hz}
    return out


def _summary(analysis: HumAnalysis, after_db: np.ndarray) -> str:
    a = analysis
    if not len(a.harmonics):
        return "hum: not measured"
    track = a.f0_track
    head = f"hum: f0 {a.f0:.3f} Hz ({track.min():.3f}..{track.max():.3f} Hz)"
    if not a.found:
        return f"{head}; no harmonic {a.threshold_db:g} dB above its noise: output = input"
    before, after = _total_db(a.level_db, a.treated), _total_db(after_db, a.treated)
    levels = ", ".join(
        f"{'-inf' if b is None else f'{b:.1f}'} -> {'-inf' if f is None else f'{f:.1f}'} dB" for b, f in zip(before, after)
    )
    ks = a.treated_harmonics
    return f"{head}; treated {len(ks)} of {len(a.harmonics)} harmonics ({_ranges(ks)}); level {levels}"


def _ranges(ks: tuple[int, ...]) -> str:
    parts, start, prev = [], None, None
    for k in ks:
        if start is None:
            start = prev = k
        elif k == prev + 1:
            prev = k
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = k
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def _removal(analysis: HumAnalysis, source: AudioSource, method: str, erase_args: dict) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(output, residual)`` blocks, float64, aligned, covering the whole input."""
    if method == "subtract":
        sub = HumSubtractor(analysis)
        for block in source.blocks(BLOCK_FRAMES, dtype="float64"):
            y = sub.process(block)
            yield y, block - y
        return
    eraser = HumEraser(analysis, **erase_args)
    pending: deque[np.ndarray] = deque()
    held = 0

    def aligned(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal held
        need, parts = y.shape[1], []
        while need:
            head = pending[0]
            take = head[:, :need]
            parts.append(take)
            if take.shape[1] == head.shape[1]:
                pending.popleft()
            else:
                pending[0] = head[:, need:]
            need -= take.shape[1]
            held -= take.shape[1]
        x = np.concatenate(parts, axis=1) if parts else y[:, :0]
        return y, x - y

    seen = 0
    for block in source.blocks(BLOCK_FRAMES, dtype="float64"):
        pending.append(block)
        held += block.shape[1]
        seen += block.shape[1]
        y = eraser.push(block)
        if y.shape[1]:
            yield aligned(y)
    if seen:
        y = eraser.finish()
        if y.shape[1]:
            yield aligned(y)


def dehum_command(
    file: Annotated[str, typer.Argument(help="Audio file (WAV, FLAC, OGG, raw PCM with --format), or - for stdin.")],
    freq: Annotated[
        str,
        typer.Option("--freq", help="Mains frequency: 50, 60 or any frequency in Hz (the estimate is searched within ±1 %), or auto (tries 50 and 60).",
                     rich_help_panel=HUM_PANEL),
    ] = "auto",
    method: Annotated[
        str,
        typer.Option("--method", help="subtract (model the hum and subtract it) or erase (zero its STFT bins, overlap-add).",
                     rich_help_panel=HUM_PANEL),
    ] = "subtract",
    harmonics: Annotated[
        Optional[int],
        typer.Option("--harmonics", min=1, help="Highest harmonic considered (default 40, below Nyquist); only those detected are treated.",
                     rich_help_panel=HUM_PANEL),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option("--threshold", help="Detection threshold in dB: a harmonic is treated when its fitted power exceeds what the local noise alone would give by this much.",
                     rich_help_panel=HUM_PANEL),
    ] = DEFAULT_THRESHOLD_DB,
    width: Annotated[
        Optional[str],
        typer.Option("--width", help="Band erased around each line, e.g. 4 or 4Hz (default: the window's main lobe, 4/WIN Hz) plus the drift within a frame.",
                     rich_help_panel=ERASE_PANEL),
    ] = None,
    win: Annotated[
        Optional[str],
        typer.Option("--win", help=f"STFT window, e.g. 1s, 2s or samples (default {ERASE_WINDOW_SECONDS:g}s; at least 4 periods of the hum).",
                     rich_help_panel=ERASE_PANEL),
    ] = None,
    output: Annotated[
        Optional[str],
        typer.Option("-o", "--output", help="WAV file to write, or - for stdout.  Default: <stem>.dehum.wav beside the input.",
                     rich_help_panel=OUT_PANEL),
    ] = None,
    residual: Annotated[
        Optional[str],
        typer.Option("--residual", help="Also write what was removed (input - output) to this WAV.", rich_help_panel=OUT_PANEL),
    ] = None,
    subtype: Annotated[
        Optional[str],
        typer.Option("--subtype", help="Output PCM_U8, PCM_16, PCM_24, PCM_32, FLOAT or DOUBLE.  Default: as the input.",
                     rich_help_panel=OUT_PANEL),
    ] = None,
    normalize: Annotated[
        bool,
        typer.Option("--normalize", help="If the output would exceed full scale, scale it down to fit (one more pass).",
                     rich_help_panel=OUT_PANEL),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a JSON report on stdout (it holds the written paths) instead of the paths.")
    ] = False,
    rate: RawRate = None,
    fmt: RawFormatOpt = None,
    channels: RawChannels = 1,
    fix_nonfinite: FixNonFinite = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Remove mains hum (50/60 Hz and harmonics) and write the cleaned WAV.

    The fundamental is estimated to about 0.01 Hz and tracked as it drifts;
    each harmonic's amplitude and phase are fitted over seconds (weighted
    towards frames where nothing else sits on the line) and, with the
    default --method subtract, the modelled hum is subtracted sample by
    sample.  Harmonics that do not stand --threshold dB above their local
    noise are left alone, so clean audio passes through untouched.
    --method erase zeroes the hum's bins of a 1 s STFT and overlap-adds
    (simpler, but it also cuts whatever the signal has in those bins).

    Prints the written path(s) on stdout (output, then --residual); with
    --json one JSON report (estimated f0 and, per harmonic, the level before
    and after, the local floor and whether it was treated).

    Example:

        audiokit dehum rec.wav --freq 50

        audiokit dehum rec.wav --freq auto --residual hum.wav --json
    """
    console.configure(quiet=quiet)
    nominal = parse_freq(freq)
    if method not in METHODS:
        raise ParameterError(f"--method: unknown method {method!r} (allowed: {', '.join(METHODS)})")
    if method != "erase":
        for name, value in (("--width", width), ("--win", win)):
            if value is not None:
                raise ParameterError(f"{name} applies to --method erase only")
    width_hz = None
    if width is not None:
        width_hz = frequency_option("--width", width)
        if width_hz <= 0:
            raise ParameterError(f"--width: must be > 0 Hz, got {width!r}")
    if not math.isfinite(threshold):
        raise ParameterError(f"--threshold: must be a finite number of dB, got {threshold!r}")
    if subtype is not None:
        subtype = resolve_subtype(subtype)
    target = output if output is not None else str(derived_output(file, "dehum", ".wav"))
    if is_stdio(target) and json_out:
        raise ParameterError("--json and -o - both write to stdout: give -o PATH with --json")
    if is_stdio(target) and sys.stdout.isatty():
        raise ParameterError("refusing to write WAV bytes to a terminal: give -o PATH or pipe the output")
    check_output_path(target, [file])
    if residual is not None:
        if is_stdio(residual):
            raise ParameterError("--residual needs a file path (stdout is for the output or the report)")
        check_output_path(residual, [file])
        if not is_stdio(target) and residual == target:
            raise ParameterError("--residual: same path as the output")

    with open_input(file, rate, fmt, channels, fix_nonfinite) as source:
        erase_args: dict = {}
        if method == "erase":
            erase_args = {"width_hz": width_hz}
            if win is not None:
                erase_args["win_length"] = duration_option("--win", win, source.sr)
        kind = resolve_subtype(subtype, source.subtype)
        bits = SUBTYPE_BITS[kind]
        passes = 4 + (1 if normalize else 0)
        with console.progress(f"dehum {source.name}", passes * max(source.frames, 1)) as advance:

            def blocks() -> Iterator[np.ndarray]:
                for block in source.blocks(BLOCK_FRAMES, dtype="float64"):
                    advance(block.shape[1])
                    yield block

            analysis = analyze_hum_blocks(
                blocks, sr=source.sr, channels=source.channels, n_samples=source.frames, freq=nominal,
                harmonics=harmonics, threshold_db=threshold,
            )
            eraser = HumEraser(analysis, **erase_args) if method == "erase" else None  # validates --win/--width
            gain, fit = 1.0, 1.0
            if normalize:
                peak = 0.0
                for y, _ in _removal(analysis, source, method, erase_args):
                    peak = max(peak, measure_overshoot(y).peak)
                    advance(y.shape[1])
                fit = 1.0 if bits is None else 1.0 - 2.0 ** -(bits - 1)
                if peak > 1.0:
                    gain = fit / peak
                    console.info(f"{target}: output peak {dbfs(peak):+.2f} dBFS; --normalize applies {dbfs(gain):.2f} dB")
                else:
                    console.info(f"{target}: output peak {dbfs(peak):+.2f} dBFS is within full scale; no gain applied")
            meter = HumMeter(analysis)
            peak, n_over = 0.0, 0
            res_kind = kind
            with WavWriter(target, sr=source.sr, channels=source.channels, subtype=kind, expected_frames=source.frames) as writer:
                res_writer = (
                    WavWriter(residual, sr=source.sr, channels=source.channels, subtype=res_kind, expected_frames=source.frames)
                    if residual is not None else None
                )
                with res_writer if res_writer is not None else _nothing():
                    for y, removed in _removal(analysis, source, method, erase_args):
                        meter.push(y)
                        if gain != 1.0:
                            y = np.clip(y * gain, -fit, fit)
                        over = measure_overshoot(y)
                        peak, n_over = max(peak, over.peak), n_over + over.n_over
                        if bits is not None and over.n_over:
                            y = np.clip(y, -1.0, 1.0)
                        writer.write(y)
                        if res_writer is not None:
                            res_writer.write(removed)
                        advance(y.shape[1])
    after = meter.finish()
    if n_over:
        fate = f"clipped to fit {kind}" if bits is not None else f"kept as they are in {kind}"
        warnings.warn(
            f"{target}: the output exceeds full scale (peak {dbfs(peak):+.2f} dBFS): {n_over} samples beyond ±1.0 "
            f"{fate}; use --normalize to scale it down",
            stacklevel=1,
        )
    console.info(_summary(analysis, after))
    if json_out:
        payload = report(analysis, after, source=source, target=target, residual=residual, method=method,
                         eraser=eraser, gain=gain, peak=peak)
        print(json.dumps(payload, indent=2))
    elif not is_stdio(target):
        print(target)
        if residual is not None:
            print(residual)
    return 0


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False

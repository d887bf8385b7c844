"""``audiokit istft``: rebuild a waveform from ``spectrogram --complex`` output."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from ..errors import InputError
from ..io import WavWriter, check_output_path, derived_output, resolve_subtype
from ..io.npy import read_sidecar
from . import console
from .options import Debug, Quiet

CHUNK_FRAMES = 2048


def _load_complex(path: str):
    """Memory-map the complex STFT and read its sidecar; validate both."""
    if path != "-" and not Path(path).is_file():
        # before the sidecar: a mistyped SPEC.npy is "no such file", not "missing sidecar"
        raise InputError("no such file", path)
    meta = read_sidecar(path)
    if meta.get("scale") != "complex":
        raise InputError(
            f"holds {meta.get('scale', 'unknown')!r} values, not a complex STFT; make it with "
            "'audiokit spectrogram FILE --complex --npy SPEC.npy'",
            path,
        )
    try:
        spec = np.load(path, mmap_mode="r")
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"not a readable .npy array: {exc}", path) from None
    if not np.iscomplexobj(spec) or list(spec.shape) != list(meta["shape"]):
        raise InputError(f"array {spec.dtype} {spec.shape} does not match its sidecar ({meta['shape']})", path)
    return spec, meta


def plan_from_sidecar(meta: dict):
    """The :class:`StftPlan` that produced an array, from its sidecar."""
    from ..dsp.stft import StftPlan

    return StftPlan(
        sr=meta["sr"], win_length=meta["win_length"], hop_length=meta["hop_length"], n_fft=meta["n_fft"],
        window=meta["window"], periodic=meta["periodic"], center=meta["center"], pad_mode=meta["pad_mode"],
        dtype="float32",
    )


def istft_command(
    spec_path: Annotated[str, typer.Argument(metavar="SPEC.npy", help="Complex STFT saved by 'audiokit spectrogram --complex --npy'.")],
    output: Annotated[Optional[str], typer.Option("-o", "--output", help="WAV to write (- for stdout). Default: <SPEC>.istft.wav.")] = None,
    subtype: Annotated[Optional[str], typer.Option("--subtype", help="PCM_16, PCM_24, PCM_32, PCM_U8, FLOAT, DOUBLE (default: the source's).")] = None,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Inverse STFT by weighted overlap-add, exact wherever the window sum is nonzero.

    Reads the sidecar (SPEC.json) for sr, window, hop, n_fft, centring and the
    original length.  Uncentred framing cannot bring back the samples no frame
    covers (after the last frame; sample 0 under a periodic Hann window):
    they come out as 0; and the first and last hop, seen by one frame through
    small window values, come back with amplified rounding errors (up to full
    scale next to the ends with a float32 STFT) — use 'spectrogram --center'
    for a full-length round trip.

    Example:

        audiokit spectrogram speech.wav --center --complex --npy spec.npy

        audiokit istft spec.npy -o speech.rebuilt.wav
    """
    console.configure(quiet=quiet)
    spec, meta = _load_complex(spec_path)
    target = output if output is not None else str(derived_output(spec_path, "istft", ".wav"))
    check_output_path(target, [spec_path, str(Path(spec_path).with_suffix(".json")), meta.get("source", "-")])
    plan = plan_from_sidecar(meta)
    from ..dsp.stft import IstftStream

    kind = resolve_subtype(subtype, meta.get("source_subtype"))
    channels = 1 if spec.ndim == 2 else spec.shape[0]
    length = int(meta["source_frames"])
    stream = IstftStream(plan, length=length)
    n_frames = spec.shape[-1]
    with WavWriter(target, sr=int(meta["sr"]), channels=channels, subtype=kind, expected_frames=length) as writer:
        with console.progress(f"istft {spec_path}", n_frames) as advance:
            for first in range(0, n_frames, CHUNK_FRAMES):
                chunk = np.asarray(spec[..., first : first + CHUNK_FRAMES])
                _write(writer, stream.push(chunk), channels)
                advance(chunk.shape[-1])
        _write(writer, stream.finish(), channels)
    if target != "-":
        print(target)
    return 0


def _write(writer: WavWriter, samples: np.ndarray, channels: int) -> None:
    if samples.shape[-1]:
        writer.write(samples.reshape(channels, -1))

"""The ``istft`` job: rebuild a waveform from ``spectrogram --complex`` output by weighted overlap-add."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import WavWriter, check_output_path, derived_output
from ..io.npy import map_npy, read_sidecar, sidecar_path
from ..io.reader import MAX_CHANNELS
from ..io.subtypes import resolve_subtype
from ..io.writer import audio_container
from .progress import SILENT, Reporter
from .sidecar import check_stft_sidecar, plan_from_sidecar, recorded_input, rows_first

__all__ = ["FLOAT32_MAX", "SAFE_CELL", "IstftOptions", "IstftResult", "check_storable", "istft_file", "load_complex_stft"]

#: STFT frames read from the memory-mapped array per step (bounds memory: 2048 × n_freqs × channels complex64).
CHUNK_FRAMES = 2048
#: Largest ``|Re X|``, ``|Im X|`` the single-precision inverse takes: an inverse DFT sums ``n_fft <= 2**24`` cells, so
#: its sums stay below ``2**124``, inside float32 (``2**128``); beyond it the inverse runs in double precision.
SAFE_CELL = float(2**100)
#: Largest magnitude a FLOAT (float32) output sample holds.
FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class IstftOptions:
    """``subtype`` of the output WAV (default: the source's, from the sidecar); ``fix_nonfinite``: NaN/Inf → 0."""

    subtype: str | None = None
    fix_nonfinite: bool = False


@dataclass(frozen=True)
class IstftResult:
    """The written WAV (``-``: stdout), its rate (Hz) and length (samples per channel)."""

    output: str
    sr: int
    n_samples: int


def load_complex_stft(path: str) -> tuple[np.ndarray, dict[str, Any]]:
    """Memory-map the complex STFT at ``path`` and read its sidecar; validate both (InputError naming ``path``)."""
    if path != "-" and not Path(path).is_file():
        # before the sidecar: a mistyped SPEC.npy is "no such file", not "missing sidecar"
        raise InputError("no such file", path)
    meta = read_sidecar(path)
    if not isinstance(meta, dict) or meta.get("scale") != "complex":
        scale = meta.get("scale", "unknown") if isinstance(meta, dict) else "unknown"
        raise InputError(
            f"holds {scale!r} values, not a complex STFT; make it with 'audiokit spectrogram FILE --complex --npy SPEC.npy'",
            path,
        )
    check_stft_sidecar(meta, path)
    spec = map_npy(path)
    if not np.iscomplexobj(spec) or list(spec.shape) != list(meta["shape"]):
        raise InputError(f"array {spec.dtype} {spec.shape} does not match its sidecar ({meta['shape']})", path)
    spec = rows_first(spec, meta)
    if spec.ndim not in (2, 3) or (spec.ndim == 3 and not 1 <= spec.shape[0] <= MAX_CHANNELS):
        raise InputError(f"array shape {spec.shape} is not (n_freqs, n_frames) or (channels <= {MAX_CHANNELS}, ...)", path)
    return spec, meta


def _check_geometry(spec: np.ndarray, meta: dict[str, Any], plan: Any, path: str) -> None:
    """The array must have the rows and frames its sidecar's plan gives for ``source_frames`` samples."""
    n_frames = plan.n_frames(meta["source_frames"])
    if spec.shape[-2] != plan.n_freqs or spec.shape[-1] != n_frames:
        raise InputError(
            f"array has {spec.shape[-2]} rows x {spec.shape[-1]} frames; its sidecar's STFT gives {plan.n_freqs} x "
            f"{n_frames} for source_frames {meta['source_frames']}",
            path,
        )


def _finite(chunk: np.ndarray, first_frame: int, fix: bool, path: str) -> np.ndarray:
    """Refuse (or with ``fix`` zero) NaN/Inf values of a chunk of STFT frames."""
    finite = np.isfinite(chunk)
    if finite.all():
        return chunk
    if fix:
        return np.where(finite, chunk, 0)
    bad = int(np.flatnonzero(~finite.reshape(-1, chunk.shape[-1]).all(axis=0))[0])
    raise InputError(
        f"holds NaN or Inf values (first in frame {first_frame + bad}); use --fix-nonfinite to replace them with 0",
        path,
    )


def _cell_peak(spec: np.ndarray) -> float:
    """Largest ``|Re|``/``|Im|`` of the finite cells, one chunk of frames at a time (NaN/Inf are :func:`_finite`'s)."""
    peak = 0.0
    for first in range(0, spec.shape[-1], CHUNK_FRAMES):
        chunk = np.asarray(spec[..., first : first + CHUNK_FRAMES])
        parts = np.abs(np.stack([chunk.real, chunk.imag]))
        finite = parts[np.isfinite(parts)]
        if finite.size:
            peak = max(peak, float(finite.max()))
    return peak


def check_storable(samples: np.ndarray, subtype: str, path: str) -> np.ndarray:
    """``samples`` if the ``subtype`` WAV holds them as finite values (PCM clips, FLOAT holds ``|x| <= FLOAT32_MAX``).

    Raises
    ------
    InputError
        Naming ``path`` (the spectrogram): a rebuilt sample is beyond the output's range.
    """
    if subtype == "FLOAT" and samples.size and not float(np.abs(samples).max()) <= FLOAT32_MAX:
        raise InputError(
            f"the rebuilt samples reach {float(np.abs(samples).max()):.3g}, beyond what a FLOAT WAV holds "
            f"({FLOAT32_MAX:.3g}); scale the spectrogram down or write --subtype DOUBLE",
            path,
        )
    return samples


def istft_file(
    spec_path: str, output: str | None, options: IstftOptions = IstftOptions(), *, reporter: Reporter = SILENT
) -> IstftResult:
    """Invert the complex STFT in ``spec_path`` into ``output`` (default ``<SPEC>.istft.wav``; ``-``: stdout).

    The inverse runs in single precision, or in double precision when a cell exceeds :data:`SAFE_CELL` (where the
    float32 sums could overflow); samples a FLOAT output cannot hold are an :class:`~audiokit.errors.InputError`
    (:func:`check_storable`), never NaN/Inf in the WAV.
    """
    from ..dsp.stft import IstftStream

    spec, meta = load_complex_stft(spec_path)
    target = output if output is not None else str(derived_output(spec_path, "istft", ".wav"))
    check_output_path(target, [spec_path, str(sidecar_path(spec_path)), *recorded_input(meta)])
    plan = plan_from_sidecar(meta, spec_path)
    _check_geometry(spec, meta, plan, spec_path)
    subtype = resolve_subtype(options.subtype, meta.get("source_subtype"), target=target)
    audio_container(target, subtype)
    channels = 1 if spec.ndim == 2 else spec.shape[0]
    length = int(meta["source_frames"])
    if _cell_peak(spec) > SAFE_CELL:
        plan = replace(plan, dtype="float64")
    stream = IstftStream(plan, length=length)
    n_frames = spec.shape[-1]

    def write(writer: WavWriter, samples: np.ndarray) -> None:
        if samples.shape[-1]:
            writer.write(check_storable(samples.reshape(channels, -1), subtype, spec_path))

    with WavWriter(target, sr=plan.sr, channels=channels, subtype=subtype, expected_samples=length) as writer:
        with reporter.progress(f"istft {spec_path}", n_frames) as advance:
            for first in range(0, n_frames, CHUNK_FRAMES):
                chunk = _finite(np.asarray(spec[..., first : first + CHUNK_FRAMES]), first, options.fix_nonfinite, spec_path)
                write(writer, stream.push(chunk))
                advance(chunk.shape[-1])
        write(writer, stream.finish())
    return IstftResult(output=target, sr=plan.sr, n_samples=length)

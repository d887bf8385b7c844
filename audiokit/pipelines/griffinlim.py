"""The ``griffinlim`` job: rebuild a waveform from a saved magnitude, power, dB or mel spectrogram (no phase).

``SPEC.npy`` + its sidecar (``spectrogram``/``mel --npy``) → linear magnitude ``|X|`` → fast Griffin-Lim
(:func:`audiokit.dsp.griffinlim.griffinlim`) under the sidecar's STFT plan → WAV of the source's length and rate.

Undoing the saved scale (the sidecar's ``scale``, ``values``, ``ref_db``, ``top_db``, ``amin``, ``mel``):

==============  =====================================================================================
``magnitude``   ``|X|`` as saved
``power``       ``|X| = sqrt(P)``
``db``          ``P = 10**((D + ref_db)/10)`` (``20*log10`` values: ``|X| = 10**((D + ref_db)/20)``).  Cells
                clipped ``top_db`` below the maximum come back at the clip level, not at their true
                (lower) level, which is lost; cells at the floor ``amin`` come back as ``amin``.
``ln``          ``P = exp(L)`` (floored at ``amin`` like dB)
mel             the linear value above is a mel spectrogram ``M = F @ P``; ``P`` is estimated with the
                filter bank's pseudo-inverse, ``max(0, pinv(F) @ M)``, or by non-negative least squares
                (``mel_inverse='nnls'``), see :func:`audiokit.dsp.griffinlim.mel_to_linear`; bins
                outside the bank's ``fmin..fmax`` come back as 0
==============  =====================================================================================

A spectrogram saved with ``--fmin/--fmax`` (only some rows) is placed at its bins; the other bins are
rebuilt as silence.  A complex STFT already has its phase: ``audiokit istft`` inverts it exactly.

The whole spectrogram is held in memory (Griffin-Lim iterates over all of it), about 3.5 times the
complex STFT in float32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from ..errors import InputError, ParameterError
from ..io import WavWriter, check_output_path, derived_output, outputs_together
from ..io.npy import map_npy, read_sidecar, sidecar_path
from ..io.reader import MAX_CHANNELS
from ..io.subtypes import resolve_subtype
from ..io.writer import audio_container
from ..validate import is_int, is_real
from .istft import check_storable
from .params import choice, finite_or_none
from .progress import SILENT, Reporter
from .sidecar import check_stft_sidecar, plan_from_sidecar, recorded_input, rows_first

__all__ = ["GriffinLimOptions", "GriffinLimResult", "MEL_INVERSES", "griffinlim_file", "load_magnitude"]

#: Ways to undo a mel filter bank (see :func:`audiokit.dsp.griffinlim.mel_to_linear`).
MEL_INVERSES = ("pinv", "nnls")
INITS = ("random", "zeros")
#: Largest iteration count accepted (a typo guard: 10 000 iterations of a 1-minute file take hours).
MAX_ITERS = 10_000
#: dB slack when counting cells at the top_db clip level (float32 rounding of the saved values).
_CLIP_SLACK_DB = 1e-3
#: Largest magnitude Griffin-Lim takes in single precision: ``|S|²`` summed over up to ``2**40`` cells stays below
#: ``2**128``; beyond it the iterations run in double precision.
SAFE_MAGNITUDE = float(2**44)


@dataclass(frozen=True)
class GriffinLimOptions:
    """Options as typed: iterations, momentum, seed (None: a fresh random phase), initial phase, mel inverse, subtype."""

    n_iter: int = 32
    momentum: float = 0.99
    seed: int | None = 0
    init: str = "random"
    mel_inverse: str = "pinv"
    subtype: str | None = None

    def check(self) -> GriffinLimOptions:
        """A copy with the choices validated (ParameterError naming the option)."""
        if isinstance(self.n_iter, bool) or not isinstance(self.n_iter, int) or not 0 <= self.n_iter <= MAX_ITERS:
            raise ParameterError(f"--iters must be a whole number from 0 to {MAX_ITERS}, got {self.n_iter!r}")
        if not (isinstance(self.momentum, (int, float)) and math.isfinite(self.momentum) and self.momentum >= 0):
            raise ParameterError(
                f"--momentum must be a number >= 0 (0.99: fast Griffin-Lim, 0: the original), got {self.momentum!r}"
            )
        if self.seed is not None and not 0 <= self.seed < 2**32:
            raise ParameterError(f"--seed must be from 0 to 2**32 - 1, got {self.seed!r}")
        return GriffinLimOptions(
            n_iter=self.n_iter,
            momentum=float(self.momentum),
            seed=self.seed,
            init=choice("--init", self.init, INITS),
            mel_inverse=choice("--mel-inverse", self.mel_inverse, MEL_INVERSES),
            subtype=self.subtype,
        )


@dataclass(frozen=True)
class GriffinLimResult:
    """The written WAV (``-``: stdout), its rate (Hz), length (samples per channel) and the run's figures.

    ``convergence`` holds ``n_iter + 1`` values: the spectral convergence ``||S - |STFT(x_i)| ||_F / ||S||_F`` of
    the estimate entering iteration ``i`` (``i = 0``: the initial phase), then of the written signal.  ``S`` is
    the magnitude Griffin-Lim aimed at: for a mel input, the estimate rebuilt from the mel bands, not the unknown
    true spectrogram; for clipped dB input, the values as clipped.
    """

    output: str
    sr: int
    n_samples: int
    channels: int
    source_scale: str
    kind: str
    options: GriffinLimOptions
    convergence: list[float] = field(default_factory=list)
    clipped_cells: int = 0
    missing_bins: int = 0

    @property
    def final_convergence(self) -> float:
        """Spectral convergence of the written signal (the last value of :attr:`convergence`)."""
        return self.convergence[-1]

    def report(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {
            "output": self.output,
            "sr": self.sr,
            "n_samples": self.n_samples,
            "channels": self.channels,
            "input": {
                "kind": self.kind,
                "scale": self.source_scale,
                "clipped_cells": self.clipped_cells,
                "missing_bins": self.missing_bins,
            },
            "iterations": self.options.n_iter,
            "momentum": self.options.momentum,
            "seed": self.options.seed,
            "init": self.options.init,
            "mel_inverse": self.options.mel_inverse if self.kind == "mel" else None,
            "spectral_convergence": {
                "definition": "||S - |STFT(x_i)| ||_F / ||S||_F; index i = estimate entering iteration i "
                "(0: initial phase), last = output",
                "per_iteration": [finite_or_none(v, 8) for v in self.convergence],
                "final": finite_or_none(self.final_convergence, 8),
            },
        }

    def summary(self) -> str:
        """One line for stderr."""
        first, last = self.convergence[0], self.convergence[-1]
        return (
            f"griffinlim: {self.options.n_iter} iterations, spectral convergence {first:.4f} -> {last:.4f}, "
            f"{self.n_samples} samples at {self.sr} Hz"
        )


def _fail(reason: str, path: str) -> InputError:
    return InputError(reason, path)


def load_magnitude(path: str) -> tuple[np.ndarray, dict[str, Any]]:
    """Load the real spectrogram at ``path`` and its sidecar; validate both (InputError naming ``path``).

    Returns the array (float32, in memory) and the sidecar.  A complex STFT, an array that is not a
    spectrogram (``spectrum``, a filter bank), or one that disagrees with its sidecar is refused.
    """
    if path != "-" and not Path(path).is_file():
        raise _fail("no such file", path)
    if path == "-":
        raise ParameterError("griffinlim reads a .npy file and its sidecar; standard input is not supported")
    meta = read_sidecar(path)
    if not isinstance(meta, dict):
        raise _fail(f"sidecar is a JSON {type(meta).__name__}, not an object", path)
    kind = meta.get("kind")
    scale = meta.get("scale")
    if scale == "complex":
        raise _fail("holds a complex STFT, which has its phase: invert it exactly with 'audiokit istft SPEC.npy'", path)
    make = "make one with 'audiokit spectrogram FILE --scale magnitude --npy SPEC.npy' (or 'audiokit mel FILE --npy ...')"
    if kind not in ("spectrogram", "mel"):
        raise _fail(f"holds a {kind or 'unknown'!s} array, not a spectrogram; {make}", path)
    if scale not in ("magnitude", "power", "db", "ln"):
        raise _fail(f"holds {scale!r} values, not magnitude, power, db or ln; {make}", path)
    check_stft_sidecar(meta, path)
    arr = map_npy(path)
    if np.iscomplexobj(arr):
        raise _fail(
            "holds complex values but its sidecar says a real spectrogram; invert a complex STFT with 'audiokit istft'", path
        )
    if arr.dtype.kind not in "fiu" or list(arr.shape) != list(meta["shape"]):
        raise _fail(f"array {arr.dtype} {arr.shape} does not match its sidecar ({meta['shape']})", path)
    arr = rows_first(arr, meta)
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and not 1 <= arr.shape[0] <= MAX_CHANNELS):
        raise _fail(f"array shape {arr.shape} is not (n_rows, n_frames) or (channels <= {MAX_CHANNELS}, ...)", path)
    values = np.array(arr, dtype=np.float32)
    if not np.isfinite(values).all():
        raise _fail("holds NaN or Inf values", path)
    return values, meta


def _number(meta: dict[str, Any], key: str, path: str, *, default: float | None = None) -> float:
    value = meta.get(key, default)
    if not is_real(value) or not abs(value) < 1e308:  # NaN, Inf and 10**400 (which float() cannot convert) fail
        shown = repr(value)
        raise _fail(f"sidecar {key!r} is {shown[:40]}{'...' * (len(shown) > 40)}, not a finite number", path)
    return float(value)


def _linear(values: np.ndarray, meta: dict[str, Any], path: str) -> tuple[np.ndarray, bool, int]:
    """Undo the saved scale: (linear values, whether they are a power, cells found at the top_db clip)."""
    scale = meta["scale"]
    clipped = 0
    if scale == "magnitude":
        if values.size and values.min() < 0:
            raise _fail("magnitude values must be >= 0", path)
        return values.astype(np.float64), False, 0
    if scale == "power":
        if values.size and values.min() < 0:
            raise _fail("power values must be >= 0", path)
        return values.astype(np.float64), True, 0
    if scale == "ln":
        with np.errstate(over="ignore"):
            return _bounded(np.exp(values.astype(np.float64)), values, path), True, 0
    # dB: 10*log10(P) - ref_db (or 20*log10(|X|) - ref_db), clipped top_db below the maximum
    factor = 20.0 if str(meta.get("values", "")).startswith("20*log10") else 10.0
    ref_db = _number(meta, "ref_db", path, default=0.0) if meta.get("ref_db") is not None else 0.0
    top_db = meta.get("top_db")
    if top_db is not None and values.size:
        top = _number(meta, "top_db", path)
        clipped = int(np.count_nonzero(values <= float(values.max()) - top + _CLIP_SLACK_DB))
    with np.errstate(over="ignore"):
        linear = np.power(10.0, (values.astype(np.float64) + ref_db) / factor)
    return _bounded(linear, values, path), factor == 10.0, clipped


def _bounded(linear: np.ndarray, values: np.ndarray, path: str) -> np.ndarray:
    """``linear`` (float64) when finite: a saved dB/ln value too large to undo is refused, never Inf."""
    if np.isfinite(linear).all():
        return linear
    raise _fail(
        f"holds a value of {float(values.max()):.3g}, beyond what a linear spectrogram holds once undone "
        "(its power overflows float64); scale the spectrogram down",
        path,
    )


def _mel_bank(meta: dict[str, Any], plan: Any, path: str) -> np.ndarray:
    """The filter bank a mel array was computed with, from its sidecar's ``mel`` fields."""
    from ..dsp.mel import mel_filterbank

    mel = meta.get("mel")
    if not isinstance(mel, dict):
        raise _fail("sidecar has no 'mel' object (n_mels, fmin_hz, fmax_hz, mel_scale, norm)", path)
    n_mels = mel.get("n_mels")
    if not is_int(n_mels) or n_mels < 1:
        raise _fail(f"sidecar mel 'n_mels' is {n_mels!r}, not a whole number > 0", path)
    scale, norm = mel.get("mel_scale"), mel.get("norm")
    if scale not in ("htk", "slaney") or norm not in ("none", "slaney"):
        raise _fail(f"sidecar mel scale {scale!r} / norm {norm!r} unknown (htk|slaney, none|slaney)", path)
    fmin, fmax = _number(mel, "fmin_hz", path), _number(mel, "fmax_hz", path)
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # empty filters were reported when the array was made
            return mel_filterbank(
                sr=plan.sr,
                n_fft=plan.n_fft,
                n_mels=n_mels,
                fmin=fmin,
                fmax=fmax,
                scale=cast("Literal['htk', 'slaney']", scale),
                norm=None if norm == "none" else "slaney",
            )
    except ParameterError as exc:
        raise _fail(f"sidecar describes no valid mel filter bank: {exc.reason}", path) from None


def _spectrogram_rows(linear: np.ndarray, meta: dict[str, Any], plan: Any, path: str) -> tuple[np.ndarray, int]:
    """Put saved rows (maybe a ``--fmin/--fmax`` band) at their bins of the full ``n_freqs`` axis; count missing bins."""
    rows = linear.shape[-2]
    if rows == plan.n_freqs:
        return linear, 0
    freq = meta.get("freq_hz")
    first = freq.get("first_bin") if isinstance(freq, dict) else None
    if not is_int(first) or first < 0 or first + rows > plan.n_freqs:
        raise _fail(f"array has {rows} rows; its sidecar's STFT has {plan.n_freqs} bins and no valid 'first_bin'", path)
    full = np.zeros(linear.shape[:-2] + (plan.n_freqs, linear.shape[-1]))
    full[..., first : first + rows, :] = linear
    return full, plan.n_freqs - rows


def griffinlim_file(
    spec_path: str, output: str | None, options: GriffinLimOptions = GriffinLimOptions(), *, reporter: Reporter = SILENT
) -> GriffinLimResult:
    """Rebuild audio from the spectrogram in ``spec_path`` into ``output`` (default ``<SPEC>.griffinlim.wav``; ``-``: stdout)."""
    from ..dsp.griffinlim import griffinlim, mel_to_linear

    options = options.check()
    values, meta = load_magnitude(spec_path)
    target = output if output is not None else str(derived_output(spec_path, "griffinlim", ".wav"))
    check_output_path(target, [spec_path, str(sidecar_path(spec_path)), *recorded_input(meta)])
    plan = plan_from_sidecar(meta, spec_path)
    if not plan.invertible:
        raise _fail(
            f"its STFT (window {plan.window_spec}, hop {plan.hop_length}, n_fft {plan.n_fft}) violates NOLA: "
            "no signal can be rebuilt from it",
            spec_path,
        )
    length = int(meta["source_frames"])
    if length < 1:
        raise _fail("its source had no samples", spec_path)
    n_frames = plan.n_frames(length)
    if values.shape[-1] != n_frames:
        raise _fail(
            f"array has {values.shape[-1]} frames; its sidecar's STFT gives {n_frames} for source_frames {length}", spec_path
        )
    subtype = resolve_subtype(options.subtype, meta.get("source_subtype"), target=target)
    audio_container(target, subtype)
    linear, is_power, clipped = _linear(values, meta, spec_path)
    missing = 0
    if meta["kind"] == "mel":
        bank = _mel_bank(meta, plan, spec_path)
        if linear.shape[-2] != bank.shape[0]:
            raise _fail(f"array has {linear.shape[-2]} rows; its sidecar's mel bank has {bank.shape[0]} bands", spec_path)
        linear = mel_to_linear(linear, bank, method=cast("Literal['pinv', 'nnls']", options.mel_inverse))
        # bins outside every triangle (DC and Nyquist always are, with fmin 0 and fmax sr/2: not worth a notice)
        missing = int(np.count_nonzero(bank.max(axis=0)[1:-1] <= 0))
        what = "lie outside every mel filter"
    else:
        linear, missing = _spectrogram_rows(linear, meta, plan, spec_path)
        what = "were not saved (--fmin/--fmax)"
    magnitude = np.sqrt(linear) if is_power else linear
    # single precision unless |S|² (summed over the array for the convergence) could overflow it
    S = magnitude.astype(np.float32 if not magnitude.size or float(magnitude.max()) <= SAFE_MAGNITUDE else np.float64)
    if clipped:
        reporter.info(
            f"{spec_path}: {clipped} cells were clipped at top_db {meta.get('top_db')} dB below the maximum "
            "when saved; their true level is lost (rebuilt at the clip level)"
        )
    if missing:
        reporter.info(f"{spec_path}: {missing} of {plan.n_freqs} bins {what}; they are rebuilt as silence")
    channels = 1 if S.ndim == 2 else S.shape[0]
    if S.dtype == np.float64:
        plan = replace(plan, dtype="float64")
    with reporter.progress(f"griffinlim {spec_path}", options.n_iter + 1) as advance:
        result = griffinlim(
            S,
            plan,
            n_iter=options.n_iter,
            momentum=options.momentum,
            init=cast("Literal['random', 'zeros']", options.init),
            random_state=options.seed,
            length=length,
            callback=lambda i, sc: advance(1),
        )
    with outputs_together(), WavWriter(target, sr=plan.sr, channels=channels, subtype=subtype, expected_samples=length) as writer:
        writer.write(check_storable(result.y.reshape(channels, length), subtype, spec_path))
    return GriffinLimResult(
        output=target,
        sr=plan.sr,
        n_samples=length,
        channels=channels,
        source_scale=meta["scale"],
        kind=meta["kind"],
        options=options,
        convergence=[float(v) for v in result.convergence],
        clipped_cells=clipped,
        missing_bins=missing,
    )

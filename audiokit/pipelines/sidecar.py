"""The JSON sidecar of every array audiokit saves: written and read in this one module.

A ``.npy`` written by ``spectrogram``/``mel``/``spectrum``/``mel --filterbank``
has a sidecar ``<stem>.json`` beside it holding what is needed to interpret
it.  The time-frequency schema is :data:`LAYOUTS` (the keys in the order
:func:`timefreq_sidecar` writes them): ``spectrum`` for ``spectrogram``/``mel``
(``audiokit_version, fft_backend, fft_library, kind, source, source_frames,
source_subtype, sr, channels, mixed, layout, shape, dtype, win_length,
hop_length, n_fft, window, periodic, center, pad_mode, scale, values, amin,
ref, ref_db, top_db, frame_time_s, delta_f_hz``, ``mel``/``mel_centre_hz``
(mel) or ``freq_hz`` (spectrogram), ``log_ref``, ``channel``); ``features``
for the speech features of the STFT front end (``compat``, ``rows`` naming
every row, ``deltas``, ``cmvn``, ``mfcc``, ``pad_or_trim``, ...) and
``kaldi`` for Kaldi's (``kaldi`` holding its options).  ``source_frames`` is
the input length in samples per channel (the audio-file meaning of "frames";
the key is kept for compatibility).

:func:`plan_from_sidecar` rebuilds the :class:`~audiokit.dsp.stft.StftPlan`
from it, after :func:`check_stft_sidecar` has validated every key it reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import is_stdio
from ..io.reader import MAX_SR, MIN_SR
from ..io.remote import is_url

__all__ = [
    "LAYOUTS",
    "provenance",
    "recorded_input",
    "rows_first",
    "timefreq_sidecar",
    "plan_fields",
    "check_stft_sidecar",
    "plan_from_sidecar",
    "PLAN_KEYS",
]

#: Largest DFT size a sidecar may ask for (2**24 samples: 6 minutes at 48 kHz, far beyond any STFT frame).
MAX_N_FFT = 1 << 24
#: Sidecar keys :func:`plan_from_sidecar` needs, with their JSON types.
PLAN_KEYS: dict[str, type | tuple[type, ...]] = {
    "sr": int,
    "win_length": int,
    "hop_length": int,
    "n_fft": int,
    "window": str,
    "periodic": bool,
    "center": bool,
    "pad_mode": str,
    "shape": list,
    "source_frames": int,
}


def provenance(fft: str | None) -> dict[str, Any]:
    """``audiokit_version``, ``fft_backend`` and ``fft_library``: what the bytes of an array depend on besides the options.

    One FFT backend gives the same bytes in every process and run on a machine; two backends agree to float
    rounding only (docs/conventions.md, "Reproducibility").  ``fft`` is the ``--fft`` option (None: auto).
    """
    from .. import __version__  # here, not at import: importlib.metadata is only needed when a sidecar is written
    from ..engine import provenance as engine_provenance

    return {"audiokit_version": __version__, **engine_provenance(fft)}


#: The keys of a time-frequency sidecar, in the order they are written, per layout (the schema of
#: :func:`timefreq_sidecar`).  ``spectrum``: ``spectrogram``/``mel`` (rows are frequencies or mel bands: ``mel`` and
#: ``mel_centre_hz``, or ``freq_hz``); ``features``: ``mfcc`` and the feature ``mel`` jobs of the STFT front end
#: (``rows`` names every row); ``kaldi``: those of Kaldi's front end (``kaldi`` holds its options).
_HEADER = ("audiokit_version", "fft_backend", "fft_library", "kind")
_SOURCE = ("source", "source_frames", "source_subtype", "sr", "channels", "mixed")
_PLAN = ("win_length", "hop_length", "n_fft", "window", "periodic", "center", "pad_mode")
_FEATURES_HEAD = (*_HEADER, "compat", *_SOURCE, "channel", "layout", "kaldi_layout", "shape", "dtype", "rows", "deltas", "cmvn")
LAYOUTS: dict[str, tuple[str, ...]] = {
    "spectrum": (
        *_HEADER,
        *_SOURCE,
        "layout",
        "shape",
        "dtype",
        *_PLAN,
        "scale",
        "values",
        "amin",
        "ref",
        "ref_db",
        "top_db",
        "frame_time_s",
        "delta_f_hz",
        "mel",
        "mel_centre_hz",
        "freq_hz",
        "log_ref",
        "channel",
    ),
    "features": (
        *_FEATURES_HEAD,
        *_PLAN,
        "window_position",
        "mel",
        "mel_centre_hz",
        "scale",
        "log",
        "amin",
        "ref",
        "log_ref",
        "top_db",
        "values",
        "frame_time_s",
        "pad_or_trim",
        "mfcc",
    ),
    "kaldi": (
        *_FEATURES_HEAD,
        "kaldi",
        "values",
        "win_length",
        "hop_length",
        "n_fft",
        "window",
        "window_position",
        "frame_time_s",
        "pad_or_trim",
    ),
}
#: What every feature sidecar says of Kaldi's layout.
KALDI_LAYOUT = "Kaldi and kaldi-native-fbank matrices are (n_frames, n_rows): use np.load(path).T (or .swapaxes(-1, -2))"


def _layout_text(channels: int, time_major: bool) -> str:
    if time_major:
        return "(n_frames, n_rows)" if channels == 1 else "(n_frames, n_rows, channels)"
    return "(n_rows, n_frames)" if channels == 1 else "(channels, n_rows, n_frames)"


def recorded_input(meta: dict[str, Any]) -> list[str]:
    """The input file a sidecar's ``source`` names, as a list for an output check (empty for ``-``, standard input
    then, or a value that is not a path): an output may not overwrite it."""
    source = meta.get("source")
    return [source] if isinstance(source, str) and not is_stdio(source) else []


def rows_first(array: np.ndarray, meta: dict[str, Any]) -> np.ndarray:
    """``array`` in audiokit's ``(..., n_rows, n_frames)`` order: transposed when its sidecar says ``--layout frames``."""
    return array.T if str(meta.get("layout", "")).startswith("(n_frames") else array


def timefreq_sidecar(
    layout: str,
    *,
    kind: str,
    source: Any,
    channels: int,
    mixed: bool,
    channel: int | None,
    shape: tuple[int, ...],
    dtype: Any,
    fft: str | None,
    compat: str | None = None,
    time_major: bool = False,
    **fields: Any,
) -> dict[str, Any]:
    """The sidecar of a time-frequency array, its keys in the order of :data:`LAYOUTS` ``[layout]``.

    Parameters
    ----------
    layout : {"spectrum", "features", "kaldi"}
    kind : str
        ``spectrogram``, ``mel``, ``mfcc`` or ``fbank`` (Kaldi's ``mel``).
    source : AudioSource
        The input as opened (name, rate, n_samples, subtype).
    channels, mixed, channel
        Channels in the array, whether they are the input's average (``--mix``), the input channel analysed.
    shape, dtype
        Of the saved array.
    fft : str or None
        The FFT backend option (``--fft``); its resolved name and library are recorded (:func:`provenance`).
    compat : str or None
        The ``--compat`` preset (recorded by the feature layouts).
    time_major : bool
        The array was saved with its axes reversed (``--layout frames``): ``layout`` and ``shape`` say so.
    **fields
        The front end's framing keys and the chain's value keys (each a key of the layout).

    Raises
    ------
    KeyError
        A field the layout does not have (a programming error: the schema is this module's).
    """
    order = LAYOUTS[layout]
    meta: dict[str, Any] = {
        **provenance(fft),
        "kind": kind,
        "source": source.name if is_stdio(source.name) or is_url(source.name) else str(Path(source.name).resolve()),
        "source_frames": source.n_samples,
        "source_subtype": source.subtype,
        "sr": source.sr,
        "channels": channels,
        "mixed": mixed,
        "channel": channel,
        "layout": _layout_text(channels, time_major),
        "shape": list(shape)[::-1] if time_major else list(shape),
        "dtype": np.dtype(dtype).name,
        **fields,
    }
    if layout != "spectrum":
        meta.update(compat=compat, kaldi_layout=KALDI_LAYOUT)
    unknown = sorted(set(meta) - set(order))
    if unknown:
        raise KeyError(f"sidecar layout {layout!r} has no key(s) {unknown}")
    return {key: meta[key] for key in order if key in meta}


def plan_fields(plan: Any) -> dict[str, Any]:
    """The sidecar keys that describe an :class:`~audiokit.dsp.stft.StftPlan` (what :func:`plan_from_sidecar` reads)."""
    return {
        "win_length": plan.win_length,
        "hop_length": plan.hop_length,
        "n_fft": plan.n_fft,
        "window": str(plan.window_spec),
        "periodic": plan.periodic,
        "center": plan.center,
        "pad_mode": plan.pad_mode,
    }


def check_stft_sidecar(meta: object, path: str) -> dict[str, Any]:
    """Validate the keys :func:`plan_from_sidecar` reads: present, of the right JSON type, in range.

    ``source`` and ``source_subtype`` are optional but strings when present (the input an output may not overwrite,
    the default output subtype).

    Raises
    ------
    InputError
        Naming the array ``path`` and the first problem found.
    """
    if not isinstance(meta, dict):
        raise InputError(f"sidecar is a JSON {type(meta).__name__}, not an object", path)
    for key, kind in PLAN_KEYS.items():
        if key not in meta:
            raise InputError(f"sidecar has no {key!r}", path)
        value = meta[key]
        ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
        if not ok:
            raise InputError(f"sidecar {key!r} is {value!r}, not a JSON {getattr(kind, '__name__', kind)}", path)
    for key in ("sr", "win_length", "hop_length", "n_fft"):
        if meta[key] <= 0:
            raise InputError(f"sidecar {key!r} is {meta[key]!r}; it must be > 0", path)
    if not MIN_SR <= meta["sr"] <= MAX_SR:
        raise InputError(f"sidecar 'sr' {meta['sr']} Hz is outside {MIN_SR}..{MAX_SR} Hz", path)
    if meta["n_fft"] > MAX_N_FFT or meta["win_length"] > meta["n_fft"]:
        raise InputError(
            f"sidecar 'n_fft' {meta['n_fft']} / 'win_length' {meta['win_length']} must satisfy "
            f"win_length <= n_fft <= {MAX_N_FFT}",
            path,
        )
    if meta["hop_length"] > MAX_N_FFT:
        raise InputError(f"sidecar 'hop_length' {meta['hop_length']} is beyond {MAX_N_FFT} samples", path)
    if meta["source_frames"] < 0:
        raise InputError(f"sidecar 'source_frames' is {meta['source_frames']!r}; it must be >= 0", path)
    for key in ("source", "source_subtype"):  # optional (older sidecars), but text when present: a path, a subtype
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise InputError(f"sidecar {key!r} is {meta[key]!r}, not a JSON string", path)
    shape = meta["shape"]
    if not shape or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise InputError(f"sidecar 'shape' {shape!r} is not a list of whole numbers >= 0", path)
    return meta


def plan_from_sidecar(meta: dict[str, Any], path: str) -> Any:
    """The :class:`~audiokit.dsp.stft.StftPlan` that produced the array at ``path``, from its (validated) sidecar."""
    from ..dsp.stft import StftPlan
    from ..errors import ParameterError

    try:
        return StftPlan(
            sr=meta["sr"],
            win_length=meta["win_length"],
            hop_length=meta["hop_length"],
            n_fft=meta["n_fft"],
            window=meta["window"],
            periodic=meta["periodic"],
            center=meta["center"],
            pad_mode=meta["pad_mode"],
            dtype="float32",
        )
    except ParameterError as exc:  # a window name or pad mode the STFT does not know
        raise InputError(f"sidecar describes no valid STFT: {exc.reason}", path) from None

"""audiokit: audio analysis from PCM to the mel spectrogram, and back.

The conventions every number follows (framing, scaling, floors, units, array
shapes) are in ``docs/conventions.md``.  The flat API is importable from here
and loaded lazily, so ``import audiokit`` stays cheap:

>>> import audiokit
>>> sig = audiokit.read("examples/data/speech.wav")      # doctest: +SKIP
>>> S = audiokit.spectrogram(sig.samples, n_fft=512, hop_length=160, win_length=400)  # doctest: +SKIP
>>> M = audiokit.log_melspectrogram(sig.samples, sr=sig.sr, n_fft=512, hop_length=160)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import AudiokitError, InputError, OutputError, ParameterError

if TYPE_CHECKING:
    from .api import (
        dehum,
        find_peaks,
        generate,
        griffinlim,
        istft,
        log_melspectrogram,
        mel_filterbank,
        melspectrogram,
        mfcc,
        quantize,
        resample,
        spectrogram,
        spectrum,
        stft,
    )
    from .io import open_audio, read, write
    from .signal import Signal

#: Where each lazily imported public name lives.
_LAZY = {
    "read": "io",
    "write": "io",
    "open_audio": "io",
    "Signal": "signal",
    **{
        name: "api"
        for name in (
            "stft",
            "istft",
            "spectrogram",
            "melspectrogram",
            "log_melspectrogram",
            "mel_filterbank",
            "spectrum",
            "find_peaks",
            "resample",
            "quantize",
            "dehum",
            "generate",
            "griffinlim",
            "mfcc",
        )
    },
}

#: Submodules reachable as attributes of the package without an explicit import.
_SUBMODULES = ("corpus",)

__all__ = ["AudiokitError", "InputError", "OutputError", "ParameterError", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = _dist_info_version()
        if value is None:  # not a plain dist-info on sys.path (zip, egg, ...): ask importlib.metadata
            from importlib.metadata import PackageNotFoundError, version

            try:
                value = version("audiokit")
            except PackageNotFoundError:  # running from a source tree
                value = "0.1.0"
        globals()["__version__"] = value
        return value
    if name in _SUBMODULES:  # audiokit.corpus.open(DIR) without importing audiokit.corpus first
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'audiokit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def _dist_info_version() -> str | None:
    """``Version`` of the first ``audiokit-*.dist-info`` on ``sys.path``, as ``importlib.metadata.version`` finds it.

    Read directly: importing ``importlib.metadata`` (email, zipfile, csv, ...) costs ~25 ms, more than the rest of
    ``audiokit --version`` and a noticeable part of a short job that writes a sidecar (issue 13).
    """
    import os
    import sys

    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for dist in names:
            stem, _, suffix = dist.rpartition(".")
            if suffix == "dist-info" and stem.split("-", 1)[0].lower().replace("_", "-") == "audiokit":
                try:
                    with open(os.path.join(entry or ".", dist, "METADATA"), encoding="utf-8") as metadata:
                        for line in metadata:
                            if line.startswith("Version:"):
                                return line.partition(":")[2].strip()
                            if not line.strip():
                                break  # end of the headers
                except OSError:
                    pass
                return None
    return None


def __dir__() -> list[str]:
    return sorted(__all__)

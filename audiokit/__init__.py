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
        pyin,
        quantize,
        resample,
        spectrogram,
        spectrum,
        stft,
        yin,
    )
    from .io import open_audio, read, write
    from .io.signal import Signal

#: Where each lazily imported public name lives.
_LAZY = {
    "read": "io",
    "write": "io",
    "open_audio": "io",
    "Signal": "io.signal",
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
            "yin",
            "pyin",
        )
    },
}

#: Submodules reachable as attributes of the package without an explicit import (``corpus`` is
#: :mod:`audiokit.batch.corpus`, under the name the README documents).
_SUBMODULES = ("corpus",)

__all__ = ["AudiokitError", "InputError", "OutputError", "ParameterError", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from ._version import __version__ as value

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


def __dir__() -> list[str]:
    return sorted(__all__)

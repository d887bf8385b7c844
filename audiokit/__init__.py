"""audiokit: audio analysis from PCM to the mel spectrogram, and back.

The public API follows the CLI's conventions (see README "Conventions"):

>>> import audiokit
>>> sig = audiokit.read("examples/data/speech.wav")      # doctest: +SKIP
>>> sig.samples.shape, sig.sr                             # doctest: +SKIP
((1, 52225), 22050)
"""

from importlib.metadata import PackageNotFoundError, version

from .errors import AudiokitError, InputError, OutputError, ParameterError
from .io import open_audio, read, write
from .signal import Signal

try:
    __version__ = version("audiokit")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.1.0"

__all__ = ["AudiokitError", "InputError", "OutputError", "ParameterError", "Signal", "open_audio", "read", "write", "__version__"]

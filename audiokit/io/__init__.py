"""Audio input and output: files, raw PCM, stdin/stdout, atomic writes."""

from .atomic import (
    atomic_output,
    check_distinct,
    check_output_path,
    derived_output,
    is_stdio,
    outputs_together,
    write_bytes_atomic,
    write_text_atomic,
)
from .raw import RAW_FORMATS, RawFormat
from .reader import AudioSource, open_audio, read
from .subtypes import DEFAULT_SUBTYPE, SUBTYPE_BITS, resolve_subtype
from .writer import WavWriter, write

__all__ = [
    "AudioSource",
    "RawFormat",
    "RAW_FORMATS",
    "WavWriter",
    "DEFAULT_SUBTYPE",
    "SUBTYPE_BITS",
    "atomic_output",
    "check_distinct",
    "check_output_path",
    "derived_output",
    "is_stdio",
    "open_audio",
    "outputs_together",
    "read",
    "resolve_subtype",
    "write",
    "write_bytes_atomic",
    "write_text_atomic",
]

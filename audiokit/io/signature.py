"""Container signatures: which audio format the first bytes of an input announce.

Used to give the right message when libsndfile refuses a stream (a known signature means a corrupt file, no
signature means not audio), and to refuse the raw PCM options on an input that has a header (they would read
the header as samples).
"""

from __future__ import annotations

__all__ = ["SIGNATURE_BYTES", "container_signature"]

#: Bytes of an input's start that :func:`container_signature` looks at.
SIGNATURE_BYTES = 12
#: (leading bytes, format name) of the containers libsndfile reads; the RIFF/FORM kinds are refined below.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"RIFF", "RIFF"),
    (b"RIFX", "RIFF"),
    (b"RF64", "RF64 WAV"),
    (b"BW64", "BW64 WAV"),
    (b"riff\x2e\x91\xcf\x11", "Wave64"),
    (b"fLaC", "FLAC"),
    (b"OggS", "Ogg"),
    (b"FORM", "IFF"),
    (b"ID3", "MP3 (ID3 tag)"),
    (b".snd", "AU"),
    (b"caff", "CAF"),
    (b"NIST_1A", "NIST SPHERE"),
)
#: Form types at offset 8 of a RIFF/FORM file that name the audio formats.
_FORM_TYPES = {b"WAVE": "WAV", b"AIFF": "AIFF", b"AIFC": "AIFF-C", b"8SVX": "8SVX", b"16SV": "16SV"}


def container_signature(head: bytes) -> str | None:
    """The format whose signature ``head`` (the first :data:`SIGNATURE_BYTES` bytes or more) starts with.

    Returns
    -------
    str or None
        ``"WAV"``, ``"RF64 WAV"``, ``"FLAC"``, ``"Ogg"``, ``"AIFF"``, ``"MP3 (ID3 tag)"``, ``"AU"``, ``"CAF"``,
        ... (``"RIFF"``/``"IFF"`` for another form type), or None when no known signature matches.
    """
    for magic, name in _SIGNATURES:
        if head.startswith(magic):
            if name in ("RIFF", "IFF"):
                return _FORM_TYPES.get(head[8:12], name)
            return name
    return None

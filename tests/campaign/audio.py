"""Mutated audio files (WAV, FLAC, RF64, OGG Vorbis) through the commands that read audio.

:func:`seeds` makes the valid files, :func:`mutate` damages one (header bytes, any bytes, truncation, an extreme
header field, inserted bytes, a zeroed tail, or samples set to extreme finite values), :func:`case` builds one run:
a mutant through one command, or now and then an attempt to write over the input (by name, through a symlink or
through stdin), which must be refused.
"""

from __future__ import annotations

import io
import os
import random
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from .runner import Case

#: Per command: ``argv(src, out)`` with out a folder name; the outputs a success may write (relative to the case).
COMMANDS: dict[str, tuple[Callable[[str, str], list[str]], tuple[str, ...]]] = {
    "info": (lambda src, out: ["info", src, "--json"], ()),
    "spectrum": (lambda src, out: ["spectrum", src, "--json", "--peaks", "3"], ()),
    "spectrogram": (lambda src, out: ["spectrogram", src, "--npy", f"{out}/s.npy"], ("s.npy", "s.json")),
    "mel": (lambda src, out: ["mel", src, "--npy", f"{out}/m.npy"], ("m.npy", "m.json")),
    "mfcc": (lambda src, out: ["mfcc", src, "--npy", f"{out}/c.npy"], ("c.npy", "c.json")),
    "mfcc-kaldi": (lambda src, out: ["mfcc", src, "--compat", "kaldi", "--npy", f"{out}/k.npy"], ("k.npy", "k.json")),
    "resample": (lambda src, out: ["resample", src, "--to", "8k", "-o", f"{out}/r.wav"], ("r.wav",)),
    "quantize": (lambda src, out: ["quantize", src, "--bits", "8", "--seed", "1", "-o", f"{out}/q.wav"], ("q.wav",)),
    "dehum": (lambda src, out: ["dehum", src, "--freq", "50", "-o", f"{out}/d.wav"], ("d.wav",)),
}
#: Commands that write an audio file with ``-o`` (the overwrite attempts use them).
WRITERS = ("resample", "quantize", "dehum")
#: Share of runs that try to overwrite their input.
OVERWRITE_SHARE = 0.03


def seeds() -> dict[str, bytes]:
    """Valid stereo files of 4000 samples at 16 kHz: ``{name: bytes}`` for PCM_16/FLOAT WAV, FLAC, RF64, OGG."""
    rng = np.random.default_rng(11)
    x = 0.3 * rng.standard_normal((4000, 2))
    out = {}
    for name, fmt, subtype in (
        ("pcm16.wav", "WAV", "PCM_16"),
        ("float.wav", "WAV", "FLOAT"),
        ("double.wav", "WAV", "DOUBLE"),
        ("x.flac", "FLAC", "PCM_16"),
        ("rf64.wav", "RF64", "PCM_24"),
        ("x.ogg", "OGG", "VORBIS"),
    ):
        buf = io.BytesIO()
        sf.write(buf, x, 16000, format=fmt, subtype=subtype)
        out[name] = buf.getvalue()
    return out


#: Finite values a float sample may be set to (3e38 overflows float32 squares, 1e307 float64 ones).
EXTREMES = (3e38, -3e38, 1e307, 1.0e-45, 65504.0)


def _extreme_samples(data: bytes, rng: random.Random) -> bytes:
    """A FLOAT/DOUBLE WAV with a few samples set to extreme finite values (other files: one flipped byte)."""
    try:
        info = sf.info(io.BytesIO(data))
    except (RuntimeError, sf.LibsndfileError):
        info = None
    if info is None or info.subtype not in ("FLOAT", "DOUBLE") or info.format != "WAV":
        b = bytearray(data)
        b[rng.randrange(len(b))] ^= 0xFF
        return bytes(b)
    fmt, width = ("<f", 4) if info.subtype == "FLOAT" else ("<d", 8)
    b = bytearray(data)
    start = data.index(b"data") + 8
    value = rng.choice(EXTREMES)
    if info.subtype == "FLOAT" and abs(value) > 3.4e38:
        value = 3e38
    for _ in range(rng.randint(1, 3)):
        at = start + width * rng.randrange((len(b) - start) // width)
        b[at : at + width] = struct.pack(fmt, value)
    return bytes(b)


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One random mutation of ``data``: ``(new bytes, its kind)``."""
    b = bytearray(data)
    kind = rng.choice(["flip_header", "flip_any", "truncate", "field", "insert", "zero_tail", "extreme"])
    if kind == "flip_header":
        for _ in range(rng.randint(1, 6)):
            b[rng.randrange(min(96, len(b)))] = rng.randrange(256)
    elif kind == "flip_any":
        for _ in range(rng.randint(1, 30)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == "truncate":
        b = b[: rng.randrange(len(b))]
    elif kind == "field":  # a 16/32-bit header field set to an extreme
        at = rng.randrange(0, min(80, len(b) - 4))
        value = rng.choice([0, 1, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 3, 257, 1_000_000_000])
        if rng.random() < 0.5:
            b[at : at + 4] = struct.pack("<I", value & 0xFFFFFFFF)
        else:
            b[at : at + 2] = struct.pack("<H", value & 0xFFFF)
    elif kind == "insert":
        at = rng.randrange(len(b))
        b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    elif kind == "zero_tail":
        tail = rng.randrange(len(b))
        b[tail:] = bytes(len(b) - tail)
    else:
        return _extreme_samples(data, rng), kind
    return bytes(b), kind


def case(folder: Path, rng: random.Random, commands: list[str], seed_files: dict[str, bytes]) -> Case:
    """One audio run in ``folder`` (created): a mutant through a command, or an overwrite attempt."""
    folder.mkdir(parents=True)
    name = rng.choice(sorted(seed_files))
    writers = [c for c in commands if c in WRITERS]
    if writers and rng.random() < OVERWRITE_SHARE:
        return _overwrite(folder, rng, rng.choice(writers), name, seed_files[name])
    command = rng.choice(commands)
    data, kind = mutate(seed_files[name], rng)
    (folder / name).write_bytes(data)
    (folder / "out").mkdir()
    argv, outputs = COMMANDS[command]
    return Case("audio", f"{command} {kind} {name}", folder, argv(name, "out"), {f"out/{o}" for o in outputs})


def _overwrite(folder: Path, rng: random.Random, command: str, name: str, data: bytes) -> Case:
    """``command`` told to write over its own (valid) input: by name, through a symlink, or through stdin."""
    (folder / name).write_bytes(data)
    how = rng.choice(["name", "symlink", "stdin", "hardlink"])
    argv = COMMANDS[command][0](name, "out")
    at = argv.index("-o") + 1
    stdin = None
    if how == "symlink":
        os.symlink(name, folder / "alias.wav")
        argv[at] = "alias.wav"
    elif how == "hardlink":
        os.link(folder / name, folder / "twin.wav")
        argv[at] = "twin.wav"
    elif how == "stdin":
        argv[1], stdin = "-", name
        argv[at] = name
    else:
        argv[at] = name
    return Case("audio", f"{command} overwrite via {how} {name}", folder, argv, set(), overwrite=True, stdin=stdin)

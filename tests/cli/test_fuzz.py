"""A bounded, seeded fuzz run: mutated WAV/FLAC headers and bytes through ``info``, ``spectrogram`` and ``resample``.

Every run must end with exit 0, 2, 3 or 4, one line of error at most, no traceback, no "error: internal error" (a bug), no file
left behind on failure and only finite values in a written array.  ``AUDIOKIT_FUZZ_CASES`` (default 120 per
command) sets the size; the seed makes a failure reproducible.
"""

from __future__ import annotations

import io
import os
import random
import struct

import numpy as np
import pytest
import soundfile as sf

CASES = int(os.environ.get("AUDIOKIT_FUZZ_CASES", "120"))
COMMANDS = {
    "info": lambda src, out: ["info", src, "--json"],
    "spectrogram": lambda src, out: ["spectrogram", src, "--npy", out / "s.npy"],
    "resample": lambda src, out: ["resample", src, "--to", "8k", "-o", out / "r.wav"],
}


def _seeds() -> dict[str, bytes]:
    rng = np.random.default_rng(11)
    x = 0.3 * rng.standard_normal((4000, 2))
    seeds = {}
    for name, fmt, subtype in (
        ("pcm16.wav", "WAV", "PCM_16"),
        ("float.wav", "WAV", "FLOAT"),
        ("x.flac", "FLAC", "PCM_16"),
        ("rf64.wav", "RF64", "PCM_24"),
    ):
        buf = io.BytesIO()
        sf.write(buf, x, 16000, format=fmt, subtype=subtype)
        seeds[name] = buf.getvalue()
    return seeds


def _mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    kind = rng.choice(["flip_header", "flip_any", "truncate", "field", "insert", "zero_tail"])
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
    else:
        tail = rng.randrange(len(b))
        b[tail:] = bytes(len(b) - tail)
    return bytes(b)


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_mutated_inputs_never_crash(cli, tmp_path, command):
    seeds = _seeds()
    rng = random.Random(f"fuzz-{command}")
    codes: dict[int, int] = {}
    for case in range(CASES):
        name = rng.choice(sorted(seeds))
        src = tmp_path / f"case{case}_{name}"
        src.write_bytes(_mutate(seeds[name], rng))
        out = tmp_path / f"out{case}"
        out.mkdir()
        code, stdout, err = cli(*COMMANDS[command](src, out))
        where = f"case {case} ({name}): exit {code}: {err[-400:]}"
        assert code in (0, 2, 3, 4), where
        assert "Traceback" not in err and "error: internal error" not in err, where
        assert sum(line.startswith("error:") for line in err.splitlines()) <= 1, where
        written = sorted(p.name for p in out.iterdir())
        if code != 0:
            assert written == [], where
        elif command == "spectrogram":
            assert np.isfinite(np.load(out / "s.npy")).all(), where
        codes[code] = codes.get(code, 0) + 1
    print(f"fuzz {command}: exit codes {dict(sorted(codes.items()))}")  # shown with pytest -s
    assert sum(codes.values()) == CASES

"""Mutated ``.npy`` + JSON sidecar pairs through ``istft`` and ``griffinlim``.

:func:`seeds` makes valid pairs with the CLI itself (a complex STFT for ``istft``; magnitude, dB and mel
spectrograms for ``griffinlim``).  :func:`mutate_pair` damages the array (its header text, its bytes, one cell set
to an extreme finite value or to NaN/Inf, an ``.npz`` under the ``.npy`` name) or the sidecar (a key set to a value
of the wrong type or size, a key removed, invalid UTF-8, nesting 100 000 deep, truncated text, no sidecar at all).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import tempfile
from pathlib import Path

import numpy as np

from .runner import Case, execute

#: ``{seed name: (command, spectrogram options)}``.
PAIRS = {
    "complex": ("istft", ["spectrogram", "--complex", "--center"]),
    "magnitude": ("griffinlim", ["spectrogram", "--scale", "magnitude"]),
    "db": ("griffinlim", ["spectrogram", "--scale", "db"]),
    "mel": ("griffinlim", ["mel"]),
}
#: Sidecar values of the wrong type, sign or size.
ODD_VALUES: tuple[object, ...] = (5, -1, 0, 0.5, [1, 2], {"a": 1}, "x", "", None, True, 10**400, 1e308, -1e308, 2**64, [], "NaN")
#: Cell values: finite extremes, and the non-finite ones a command must refuse.
CELLS = (3e38, -3e38, 1e30, 1e-45, float("nan"), float("inf"), -float("inf"))
#: Characters put into a ``.npy`` header (its Python-literal dict).
HEADER_CHARS = "()[]{},:'\"0123456789e_-+.x \\"


def seeds() -> dict[str, tuple[str, bytes, bytes]]:
    """``{name: (command, npy bytes, sidecar bytes)}``: valid pairs written by ``audiokit spectrogram``/``mel``."""
    import audiokit

    out = {}
    with tempfile.TemporaryDirectory(prefix="campaign-sidecar-") as tmp:
        folder = Path(tmp)
        x = 0.5 * np.random.default_rng(3).uniform(-1, 1, (1, 4000))
        audiokit.write(folder / "x.wav", x, 16000, subtype="PCM_16")
        for name, (command, make) in PAIRS.items():
            argv = [make[0], "x.wav", *make[1:], "--npy", f"{name}.npy"]
            res = execute(Case("seed", name, folder, argv), inproc=True)
            if res.code != 0:
                raise RuntimeError(f"making the {name} seed failed: {res.stderr}")
            out[name] = (command, (folder / f"{name}.npy").read_bytes(), (folder / f"{name}.json").read_bytes())
    return out


def _mutate_header(npy: bytes, rng: random.Random) -> bytes:
    end = npy.index(b"\n") if b"\n" in npy[:256] else min(len(npy), 128)
    b = bytearray(npy)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(10, max(11, end))
        if rng.random() < 0.5:
            b[at] = ord(rng.choice(HEADER_CHARS))
        else:
            b[at:at] = rng.choice(HEADER_CHARS).encode()
    return bytes(b)


def _mutate_cells(npy: bytes, rng: random.Random) -> bytes:
    a = np.load(io.BytesIO(npy))
    flat = a.reshape(-1)
    for _ in range(rng.randint(1, 3)):
        flat[rng.randrange(flat.size)] = rng.choice(CELLS)
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def mutate_pair(npy: bytes, side: bytes, rng: random.Random) -> tuple[bytes | None, bytes | None, str]:
    """One mutation: ``(npy bytes or None for an .npz, sidecar bytes or None for no sidecar, its kind)``."""
    kind = rng.choice(["header", "npy_bytes", "truncate", "cells", "npz", "key", "drop_key", "json_bytes", "no_sidecar"])
    if kind == "header":
        return _mutate_header(npy, rng), side, kind
    if kind == "npy_bytes":
        b = bytearray(npy)
        for _ in range(rng.randint(1, 20)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), side, kind
    if kind == "truncate":
        return npy[: rng.randrange(len(npy))], side, kind
    if kind == "cells":
        return _mutate_cells(npy, rng), side, kind
    if kind == "npz":
        return None, side, kind
    if kind == "no_sidecar":
        return npy, None, kind
    meta = json.loads(side)
    if kind in ("key", "drop_key"):
        key = rng.choice(sorted(meta))
        if kind == "drop_key":
            del meta[key]
        else:
            meta[key] = rng.choice(ODD_VALUES)
        return npy, json.dumps(meta).encode(), f"{kind} {key}"
    choice = rng.choice(["utf8", "deep", "truncated", "empty", "nan"])
    data = {
        "utf8": side.replace(b'"source": "', b'"source": "\xff\xfe', 1),
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "truncated": side[: rng.randrange(len(side))],
        "empty": b"",
        "nan": side.replace(b'"sr": ', b'"sr": NaN, "x": ', 1),
    }[choice]
    return npy, data, f"json {choice}"


def case(folder: Path, rng: random.Random, pairs: dict[str, tuple[str, bytes, bytes]], commands: list[str]) -> Case:
    """One run in ``folder`` (created): a mutated pair through its inverse command, writing ``out/y.wav``."""
    folder.mkdir(parents=True)
    names = [n for n, (command, _, _) in sorted(pairs.items()) if command in commands]
    name = rng.choice(names)
    command, npy, side = pairs[name]
    new_npy, new_side, kind = mutate_pair(npy, side, rng)
    if new_npy is None:
        np.savez(folder / "z.npz", a=np.load(io.BytesIO(npy)))
        shutil.move(folder / "z.npz", folder / "spec.npy")
    else:
        (folder / "spec.npy").write_bytes(new_npy)
    if new_side is not None:
        (folder / "spec.json").write_bytes(new_side)
    (folder / "out").mkdir()
    argv = [command, "spec.npy", "-o", "out/y.wav"] + (["--iters", "8"] if command == "griffinlim" else [])
    return Case("sidecar", f"{command} {name} {kind}", folder, argv, {"out/y.wav"})

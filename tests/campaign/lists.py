"""Malformed ``--manifest`` files and odd ``@list`` / stdin / folder inputs through ``audiokit batch``.

The fixed cases of tests/batch/test_malformed_lists.py (``MANIFESTS``, ``LISTS``, ``ODD_NAMES``) are the seeds;
:func:`manifest_case` adds generated lines (paths, ids, ``start``/``duration`` of every odd kind) and damages their
bytes, :func:`list_case` mixes valid, missing, odd-named and special entries (folders, FIFOs, broken links) with
BOMs, CRLF, NULs and invalid UTF-8.  A FIFO listed in a batch must not stall it.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np

from tests.batch.test_malformed_lists import LISTS, MANIFESTS, ODD_NAMES

from .runner import Case

#: ``audiokit batch`` jobs the list and manifest runs use (one in-process worker: no pool start-up per run).
JOBS = {
    "info": ["batch", "info"],
    "mel": ["batch", "mel", "--store", "files", "--n-mels", "20"],
    "spectrogram": ["batch", "spectrogram", "--store", "npy"],
    "resample": ["batch", "resample", "--to", "8k"],
}
IDS: tuple[object, ...] = ("a", "b/c", ".", "..", "./", "/abs", "a" * 300, "a\x00b", "\ud800", "é", " ", "", 5, None, ["x"])
TIMES: tuple[object, ...] = (0, 0.05, 0.1, -1, 1e400, "1s", None, True, 1e-300, 10**30, float("nan"))
PATHS: tuple[str, ...] = ("x.wav", "missing.wav", "sub", "", ".", "/", "junk.wav", "empty.wav", "x.wav ", "fifo.wav")
#: A batch waits this long at most (a FIFO must not stall it).
TIMEOUT_S = 30.0


def _corpus(folder: Path, rng: random.Random, *, fifo: bool, hostile: bool) -> None:
    """A valid ``x.wav``, a ``sub`` folder with one file, junk, an empty file, a broken link, a link that cannot be
    followed (``/proc/1/cwd``, with ``hostile``), three of the odd names, maybe a FIFO."""
    import audiokit

    x = 0.1 * np.random.default_rng(5).uniform(-1, 1, (1, 1600))
    audiokit.write(folder / "x.wav", x, 16000, subtype="PCM_16")
    (folder / "sub").mkdir()
    os.link(folder / "x.wav", folder / "sub" / "y.wav")
    (folder / "junk.wav").write_bytes(bytes(rng.randrange(256) for _ in range(200)))
    (folder / "empty.wav").write_bytes(b"")
    os.symlink("nowhere.wav", folder / "broken.wav")
    if hostile:  # stat() raises PermissionError unless run as pid 1's owner
        os.symlink("/proc/1/cwd", folder / "denied.wav")
    for name in rng.sample(ODD_NAMES, 3):
        os.link(folder / "x.wav", folder / name)
    if fifo:
        os.mkfifo(folder / "fifo.wav")


def _damage(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    how = rng.choice(["none", "none", "none", "flip", "truncate", "bom", "crlf", "utf8", "nul"])
    if how == "flip" and b:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif how == "truncate" and b:
        b = b[: rng.randrange(len(b))]
    elif how == "bom":
        b[:0] = b"\xef\xbb\xbf"
    elif how == "crlf":
        b = bytearray(bytes(b).replace(b"\n", b"\r\n"))
    elif how == "utf8":
        at = rng.randrange(len(b) + 1)
        b[at:at] = b"\xc3"
    elif how == "nul":
        b.insert(rng.randrange(len(b) + 1), 0)
    return bytes(b)


def _clean_line(rng: random.Random, i: int) -> bytes:
    """A well-formed line: an existing, missing or junk file, a unique id, maybe a segment inside the file."""
    row: dict[str, object] = {"path": rng.choice(["x.wav", "x.wav", "sub/y.wav", "missing.wav", "junk.wav", "empty.wav"])}
    row["id"] = f"u{i}"
    if rng.random() < 0.5:
        row["start"], row["duration"] = rng.choice([(0, 0.05), (0.02, 0.01), (0.09, 0.5), (0, 0)])
    return json.dumps(row).encode()


def _manifest_line(rng: random.Random, paths: list[str]) -> bytes:
    if rng.random() < 0.25:
        return rng.choice(sorted(MANIFESTS.items()))[1][0].rstrip(b"\n")
    row: dict[str, object] = {"path": rng.choice(paths)}
    if rng.random() < 0.4:  # a valid line: the odd ones must not stop the good ones
        return json.dumps({"path": "x.wav", "id": f"u{rng.randrange(10**6)}"}).encode()
    for key, values in (("id", IDS), ("start", TIMES), ("duration", TIMES)):
        if rng.random() < 0.4:
            row[key] = rng.choice(values)
    if rng.random() < 0.05:
        return json.dumps(rng.choice([[row], 5, "x.wav", None])).encode()
    text = json.dumps(row, ensure_ascii=rng.random() < 0.5)
    return text.encode("utf-8", "surrogatepass")


def manifest_case(folder: Path, rng: random.Random, jobs: list[str], hostile: bool = True) -> Case:
    """One ``batch JOB --manifest m.jsonl`` run (or ``--manifest -`` from stdin) in ``folder`` (created)."""
    folder.mkdir(parents=True)
    _corpus(folder, rng, fifo=False, hostile=hostile)
    paths = [p for p in PATHS if p != "fifo.wav"] + [str(folder / "x.wav"), *ODD_NAMES] + (["denied.wav"] if hostile else [])
    n = rng.randint(1, 4)
    if rng.random() < 0.4:  # well-formed: the runs themselves may fail, the manifest is read
        data = b"\n".join(_clean_line(rng, i) for i in range(n)) + b"\n"
    else:
        data = _damage(b"\n".join(_manifest_line(rng, paths) for _ in range(n)) + b"\n", rng)
    (folder / "m.jsonl").write_bytes(data)
    job = rng.choice(jobs)
    via_stdin = rng.random() < 0.2
    argv = [*JOBS[job], "--manifest", "-" if via_stdin else "m.jsonl", "--out", "out", "--jobs", "1"]
    return Case(
        "manifest", f"batch {job} manifest", folder, argv, batch=True, stdin="m.jsonl" if via_stdin else None, timeout=TIMEOUT_S
    )


def list_case(folder: Path, rng: random.Random, jobs: list[str], hostile: bool = True) -> Case:
    """One ``batch JOB @l.txt`` / stdin list / folder run in ``folder`` (created), the corpus beside it."""
    folder.mkdir(parents=True)
    fifo = rng.random() < 0.1
    _corpus(folder, rng, fifo=fifo, hostile=hostile)
    job = rng.choice(jobs)
    how = rng.choice(["@list", "@list", "stdin", "folder"])
    tail = ["--out", "out", "--jobs", "1"]
    if how == "folder":
        return Case("list", f"batch {job} folder fifo={fifo}", folder, [*JOBS[job], ".", *tail], batch=True, timeout=TIMEOUT_S)
    names = [p for p in PATHS if fifo or p != "fifo.wav"] + list(ODD_NAMES) + ["broken.wav", "# comment", "   "]
    names += ["denied.wav"] if hostile else []
    names.remove("/")  # a listed folder is walked: not the whole file system
    lines = [rng.choice(names).encode("utf-8") for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.2:
        lines.append(rng.choice(sorted(LISTS.items()))[1][0].rstrip(b"\n"))
    (folder / "l.txt").write_bytes(_damage(b"\n".join(lines) + b"\n", rng))
    if how == "stdin":
        return Case(
            "list", f"batch {job} stdin list", folder, [*JOBS[job], "-", *tail], batch=True, stdin="l.txt", timeout=TIMEOUT_S
        )
    return Case("list", f"batch {job} @list fifo={fifo}", folder, [*JOBS[job], "@l.txt", *tail], batch=True, timeout=TIMEOUT_S)

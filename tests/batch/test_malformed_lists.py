"""Malformed ``--manifest`` files and ``@list``/stdin lists (issue 20): one line ``error: ...``, exit 2 naming the file
and line, never exit 1 ("internal error") or a traceback, and nothing created; list lines split on ``\\n`` only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import audiokit
from audiokit.batch.inputs import MAX_ID_PART_BYTES, read_list_bytes, read_path_list
from audiokit.errors import ParameterError

SR = 16000


@pytest.fixture
def wav(tmp_path: Path) -> Path:
    path = tmp_path / "x.wav"
    audiokit.write(path, 0.1 * np.random.default_rng(5).uniform(-1, 1, (1, 1600)), SR, subtype="PCM_16")
    return path


def batch(tmp_path: Path, *args: object, stdin: bytes | None = None) -> tuple[int, str]:
    """``audiokit batch ARGS`` in a real process in ``tmp_path``: ``(exit code, stderr)``."""
    proc = subprocess.run(
        [sys.executable, "-m", "audiokit", "batch", *map(str, args)],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def assert_usage(code: int, err: str, where: str, reason: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert lines == [lines[0]] and lines[0].startswith(f"error: {where}"), err
    assert reason in lines[0], err
    assert "Traceback" not in err and "internal error" not in err


MANIFESTS = {
    "invalid-utf8": (b'{"path": "x.wav", "id": "\xff"}\n', "line 1: not UTF-8 text (byte 0xff"),
    "nested-100000": (b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 1: JSON nested too deep"),
    "nul-in-path": (b'{"path": "x\\u0000.wav"}\n', '"path" holds a NUL character'),
    "start-10^400": (b'{"path": "x.wav", "start": 1' + b"0" * 400 + b"}\n", "'start' must be a number of seconds >= 0"),
    "duration-10^400": (b'{"path": "x.wav", "duration": 1' + b"0" * 400 + b"}\n", "'duration' must be a number"),
    "nul-in-id": (b'{"path": "x.wav", "id": "a\\u0000b"}\n', "a NUL or lone surrogate"),
    "surrogate-in-id": (b'{"path": "x.wav", "id": "a\\udc80b"}\n', "a NUL or lone surrogate"),
    "high-surrogate-in-id": (b'{"path": "x.wav", "id": "\\ud800"}\n', "a NUL or lone surrogate"),
    "id-dot": (b'{"path": "x.wav", "id": "."}\n', "id '.' must be a relative name"),
    "id-dot-slash": (b'{"path": "x.wav", "id": "./"}\n', "must be a relative name"),
    "id-too-long": (b'{"path": "x.wav", "id": "' + b"a" * 300 + b'"}\n', "has a part of 300 bytes"),
    "empty-path": (b'{"path": ""}\n', "\"path\" '' names no file"),
    "dot-path": (b'{"path": "."}\n', "\"path\" '.' names no file"),
    "folder-path": (b'{"path": "/"}\n', "names no file"),
    "unencodable-path": (b'{"path": "x\\ud800.wav", "id": "x"}\n', "a lone surrogate that is no file name"),
    "second-line-bad": (b'{"path": "x.wav"}\n{"path": "x.wav", "id": "y\xfe"}\n', "line 2: not UTF-8 text"),
}


@pytest.mark.parametrize("case", sorted(MANIFESTS))
def test_malformed_manifest_is_exit_2(wav, tmp_path, case):
    data, reason = MANIFESTS[case]
    (tmp_path / "m.jsonl").write_bytes(data)
    code, err = batch(tmp_path, "mel", "--store", "files", "--manifest", "m.jsonl", "--out", "out")
    assert_usage(code, err, "--manifest m.jsonl line ", reason)
    assert not (tmp_path / "out").exists()


def test_malformed_manifest_on_stdin_is_exit_2(wav, tmp_path):
    code, err = batch(tmp_path, "info", "--manifest", "-", "--out", "out", stdin=b'{"path": "x.wav", "id": "\xff"}\n')
    assert_usage(code, err, "--manifest - line 1", "not UTF-8 text")


def test_manifest_lines_split_on_newline_only(wav, tmp_path):
    """A raw U+2028 inside a JSON string is text, not a line break (str.splitlines split the line in two)."""
    (tmp_path / "m.jsonl").write_text('{"path": "x.wav", "id": "a\u2028b"}\n', encoding="utf-8")
    code, err = batch(tmp_path, "mel", "--store", "files", "--manifest", "m.jsonl", "--out", "out")
    assert code == 0, err
    assert (tmp_path / "out" / "a\u2028b.mel.npy").is_file()


def test_manifest_with_a_bom_reads_its_first_line(wav, tmp_path):
    (tmp_path / "m.jsonl").write_bytes(b'\xef\xbb\xbf{"path": "x.wav", "id": "a"}\n')
    code, err = batch(tmp_path, "info", "--manifest", "m.jsonl", "--out", "out")
    assert code == 0, err


LISTS = {
    "invalid-utf8": (b"x.wav\n\xff.wav\n", "line 2: not UTF-8 text (byte 0xff at column 1)"),
    "nul": (b"x.wav\nx\x00.wav\n", "line 2: holds a NUL character"),
}


@pytest.mark.parametrize("case", sorted(LISTS))
@pytest.mark.parametrize("via", ["@list", "stdin"])
def test_malformed_list_is_exit_2(wav, tmp_path, case, via):
    data, reason = LISTS[case]
    if via == "stdin":
        code, err = batch(tmp_path, "info", "-", "--out", "out", stdin=data)
        where = "- line"
    else:
        (tmp_path / "l.txt").write_bytes(data)
        code, err = batch(tmp_path, "info", "@l.txt", "--out", "out")
        where = "@l.txt line"
    assert_usage(code, err, where, reason)
    assert not (tmp_path / "out").exists()


ODD_NAMES = ["a b .wav ", " lead.wav", "c\rd.wav", "e\ff.wav", "g\u2028h.wav", "i\u0085j.wav", "k\x1dl.wav", "m\vn.wav"]


@pytest.mark.parametrize("via", ["@list", "stdin"])
def test_list_paths_keep_spaces_and_odd_line_breaks(wav, tmp_path, via):
    folder = tmp_path / "odd"
    folder.mkdir()
    for name in ODD_NAMES:
        shutil.copy(wav, folder / name)
    data = ("# odd names\n\n" + "".join(f"odd/{name}\n" for name in ODD_NAMES)).encode("utf-8")
    if via == "stdin":
        code, err = batch(tmp_path, "mel", "--store", "files", "-", "--out", "out", stdin=data)
    else:
        (tmp_path / "l.txt").write_bytes(data)
        code, err = batch(tmp_path, "mel", "--store", "files", "@l.txt", "--out", "out")
    assert code == 0, err
    assert f"{len(ODD_NAMES)} ok, 0 failed" in err
    written = sorted(p.name for p in (tmp_path / "out").iterdir() if p.name.endswith(".mel.npy"))
    assert written == sorted(name.rpartition(".")[0] + ".mel.npy" for name in ODD_NAMES)


def test_list_with_a_bom_and_crlf_lines(wav, tmp_path):
    """A BOM is not part of the first path; a list whose every line ends in CRLF (Windows) reads its paths."""
    (tmp_path / "l.txt").write_bytes(b"\xef\xbb\xbfx.wav\r\n# note\r\nx.wav\r\n")
    code, err = batch(tmp_path, "info", "@l.txt", "--out", "out")
    assert code == 0, err
    assert "1 ok, 0 failed" in err


def test_read_path_list_library_calls():
    assert read_path_list(["a.wav\n", "  \n", "# c\n", "b c .wav \n"]) == ["a.wav", "b c .wav "]
    assert read_path_list(["x\ry\n", "z\u2028w"]) == ["x\ry", "z\u2028w"]
    assert read_path_list(["a\r", "b\r", "\r"]) == ["a", "b"]
    assert read_path_list(["a\r", "b"]) == ["a\r", "b"]
    assert read_list_bytes(b"\xef\xbb\xbfa.wav\nb.wav", "@l") == ["a.wav", "b.wav"]
    with pytest.raises(ParameterError, match=r"@l line 3: not UTF-8"):
        read_list_bytes(b"a\n\nb\x80\n", "@l")
    with pytest.raises(ParameterError, match=r"- line 1: holds a NUL"):
        read_path_list(["a\x00"], "-")


def test_a_walked_file_whose_id_is_too_long_fails_alone(wav, tmp_path):
    """A file name longer than an output name can be fails on its own (exit 3, one line), the others run."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(wav, folder / "ok.wav")
    shutil.copy(wav, folder / ("b" * (MAX_ID_PART_BYTES + 20) + ".wav"))
    code, err = batch(tmp_path, "mel", "--store", "files", "in", "--out", "out")
    assert code == 3, err
    assert "1 ok, 1 failed" in err
    assert f"has a part of {MAX_ID_PART_BYTES + 20} bytes" in err
    assert "Errno" not in err and "the task running it failed" not in err
    assert json.loads((tmp_path / "out" / "manifest.jsonl").read_text().splitlines()[0])


def test_a_walked_file_name_that_is_not_utf8_still_runs(wav, tmp_path):
    """A name read from disk may hold any bytes (``os.fsdecode`` surrogates): its outputs carry the same bytes."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(wav, os.fsdecode(bytes(folder) + b"/z\xff.wav"))
    code, err = batch(tmp_path, "mel", "--store", "files", "in", "--out", "out")
    assert code == 0, err
    assert os.path.isfile(bytes(tmp_path / "out") + b"/z\xff.mel.npy")

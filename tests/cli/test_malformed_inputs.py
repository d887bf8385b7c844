"""Malformed non-audio inputs (issue 20): one line ``error: <file>: <reason>``, exit 3 for a bad input file, exit 2
for a bad manifest line, never exit 1 ("internal error"), never a traceback or a bare warning, no output left."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import audiokit

SR = 16000
#: The inverse job of each kind of spectrogram, with the options that make it.
KINDS = {"istft": ("--complex", "--center"), "griffinlim": ("--scale", "magnitude")}


@pytest.fixture(params=sorted(KINDS))
def made(request, run, tmp_path):
    """``(command, spec.npy)``: a valid spectrogram and its sidecar for ``istft`` or ``griffinlim``."""
    wav = tmp_path / "x.wav"
    audiokit.write(wav, 0.5 * np.random.default_rng(3).uniform(-1, 1, (1, 4000)), SR, subtype="PCM_16")
    npy = tmp_path / "spec.npy"
    code, _, err = run("spectrogram", wav, *KINDS[request.param], "--npy", npy)
    assert code == 0, err
    return request.param, npy


def assert_one_line(code, err, expected_code, path, reason):
    lines = err.strip().splitlines()
    assert code == expected_code, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}: "), err
    assert reason in lines[0], err
    assert "Traceback" not in err and "internal error" not in err and "Warning" not in err


def test_the_valid_pair_inverts(made, run, tmp_path):
    command, npy = made
    code, _, err = run(command, npy, "-o", tmp_path / "out.wav")
    assert code == 0, err
    assert (tmp_path / "out.wav").is_file()


def test_npz_renamed_npy_is_exit_3(made, run, tmp_path):
    command, npy = made
    np.savez(tmp_path / "z.npz", a=np.load(npy))
    shutil.move(tmp_path / "z.npz", tmp_path / "z.npy")
    shutil.copy(npy.with_suffix(".json"), tmp_path / "z.json")
    code, _, err = run(command, "z.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "z.npy", "is a .npz archive")
    assert not (tmp_path / "out.wav").exists()


@pytest.mark.parametrize(
    ("key", "value"),
    [("source", 5), ("source", [1, 2]), ("source", {"a": 1}), ("source_subtype", ["PCM_16"]), ("source_subtype", 16)],
)
def test_sidecar_source_not_a_string_is_exit_3(made, run, tmp_path, key, value):
    command, npy = made
    sidecar = npy.with_suffix(".json")
    sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), key: value}))
    code, _, err = run(command, "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", f"sidecar {key!r} is {value!r}, not a JSON string")
    assert not (tmp_path / "out.wav").exists()


def _header_edit(npy, old: bytes, new: bytes) -> None:
    raw = npy.read_bytes()
    start = raw.index(b"'shape': (")
    npy.write_bytes(raw[:start] + raw[start:].replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"(", b"(("),
        (b")", b" "),
        (b"(", b"[("),
        (b"'shape': (", b"'shape': (1e999999999999, "),
        (b"'shape': (", b"'shape': (1_2x, "),
    ],
    ids=["open-twice", "never-closed", "bracket-mismatch", "huge-float", "bad-literal"],
)
def test_npy_header_not_a_literal_is_exit_3(made, run, tmp_path, old, new):
    command, npy = made
    _header_edit(npy, old, new)
    code, _, err = run(command, "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", "not a readable .npy array")
    assert not (tmp_path / "out.wav").exists()


@pytest.mark.parametrize("size", [0, 5, 40])
def test_npy_truncated_is_exit_3(made, run, tmp_path, size):
    command, npy = made
    npy.write_bytes(npy.read_bytes()[:size])
    code, _, err = run(command, "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", "not a readable .npy array")


def test_sidecar_invalid_utf8_is_exit_3(made, run, tmp_path):
    command, npy = made
    npy.with_suffix(".json").write_bytes(b'{"source": "\xff\xfe"}')
    code, _, err = run(command, "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", "cannot read sidecar spec.json")


def test_sidecar_nested_deep_is_exit_3(made, run, tmp_path):
    command, npy = made
    npy.with_suffix(".json").write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(command, "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", "cannot read sidecar spec.json")


def test_npy_header_with_an_invalid_escape_is_one_line(made, run, tmp_path):
    """numpy compiles the header text: an invalid escape printed a bare 'invalid escape sequence' warning."""
    command, npy = made
    raw = npy.read_bytes()
    start = raw.index(b"'descr': '") + len(b"'descr': '")
    npy.write_bytes(raw[:start] + b"\\c" + raw[start + 2 :])
    code, _, err = run(command, "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", "not a readable .npy array")


@pytest.mark.parametrize("value", [10**19, 2**64 + 3, 2**25])
def test_sidecar_hop_beyond_the_largest_dft_is_exit_3(made, run, tmp_path, value):
    command, npy = made
    sidecar = npy.with_suffix(".json")
    sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "hop_length": value}))
    code, _, err = run(command, "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", f"sidecar 'hop_length' {value} is beyond")


@pytest.mark.parametrize("key", ["ref_db", "top_db"])
def test_griffinlim_db_keys_of_400_digits_are_exit_3(run, tmp_path, key):
    wav = tmp_path / "x.wav"
    audiokit.write(wav, 0.5 * np.random.default_rng(3).uniform(-1, 1, (1, 4000)), SR, subtype="PCM_16")
    code, _, err = run("spectrogram", wav, "--scale", "db", "--npy", "spec.npy")
    assert code == 0, err
    sidecar = tmp_path / "spec.json"
    sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), key: 10**400}))
    code, _, err = run("griffinlim", "spec.npy", "-o", "out.wav")
    assert_one_line(code, err, 3, "spec.npy", f"sidecar {key!r} is 1000000000")
    assert not (tmp_path / "out.wav").exists()

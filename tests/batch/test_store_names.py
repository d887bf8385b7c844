"""Odd file names in the corpus stores: a name that is not UTF-8 (os.fsdecode's lone surrogates) in every store, a
name too long for the file system in the npy store, an output subfolder replaced by a file (``--store files``):
each input succeeds or fails alone with one line, never an internal error (issue 20)."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import audiokit.corpus
from tests.helpers.cli import SR, write


@pytest.fixture
def odd_corpus(tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    write(corpus / "ok.wav", np.sin(np.arange(SR // 2) * 0.05).astype(np.float32) * 0.3)
    shutil.copy(corpus / "ok.wav", os.fsdecode(os.fsencode(str(corpus)) + b"/caf\xe9.wav"))
    return corpus


@pytest.mark.parametrize("store", ["npy", "shards", "kaldi", "parquet"])
def test_a_file_name_that_is_not_utf8_is_stored_and_found(cli, odd_corpus, tmp_path, store):
    out = tmp_path / store
    code, _, err = cli("batch", "mel", odd_corpus, "--out", out, "--store", store, "--speaker-from", "parent", "-j", "1")
    assert code == 0, err
    corpus = audiokit.corpus.open(out)
    assert len(corpus) == 2 and "caf\udce9" in corpus  # looked up by the id os.fsdecode gives
    np.testing.assert_array_equal(corpus["caf\udce9"].array, corpus["ok"].array)
    assert not list(out.glob("*.tmp-*"))


def test_an_id_too_long_for_the_file_system_fails_alone_in_the_npy_store(cli, tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    write(corpus / "ok.wav", np.zeros(SR // 4, dtype=np.float32) + 0.01)
    long_name = "x" * 120 + "." * 40  # dots escape to %2E then %252E: 480 bytes > NAME_MAX
    write(corpus / f"{long_name}.wav", np.zeros(SR // 4, dtype=np.float32) + 0.01)
    out = tmp_path / "out"
    code, _, err = cli("batch", "mel", corpus, "--out", out, "-j", "1")
    assert code == 3
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and long_name in lines[0] and "internal error" not in lines[0] and "task running" not in lines[0]
    assert audiokit.corpus.open(out).ids == ["ok"]


def test_an_output_subfolder_replaced_by_a_file_fails_that_input_alone(cli, tmp_path):
    corpus = tmp_path / "in"
    (corpus / "sub").mkdir(parents=True)
    write(corpus / "ok.wav", np.zeros(SR // 4, dtype=np.float32) + 0.01)
    write(corpus / "sub" / "a.wav", np.zeros(SR // 4, dtype=np.float32) + 0.01)
    out = tmp_path / "out"
    out.mkdir()
    (out / "sub").write_text("not a folder")
    code, _, err = cli("batch", "mel", corpus, "--out", out, "--store", "files", "-j", "1")
    assert code == 3
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "cannot create the output folder" in lines[0] and "internal error" not in lines[0]
    assert (out / "ok.mel.npy").exists()

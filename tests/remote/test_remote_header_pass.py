"""Ctrl-C while the client reads the headers of a batch's URL inputs on threads (issue 22, the concurrent pass).

A sharded store's plan needs every input's frame count, so the client reads the headers of URL inputs before any
worker starts (:mod:`audiokit.batch.stores.headers`, 16 reads in flight).  With one input's header read stalled
(tests/remote/stall.py), SIGINT must end the batch with its one line and 130, no traceback, nothing on stdout and no
shard written -- the stalled read thread is abandoned, not waited for (the transport's timeout is 30 s).
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import soundfile as sf

from tests.remote.stall import signal_while_stalled

N_INPUTS = 24


@pytest.fixture(scope="module")
def prefix(s3) -> str:
    """``header-pass/u00.flac`` ... ``u23.flac`` in the bucket: 0.5 s of 16 kHz mono noise each."""
    client = s3.server.client()
    rng = np.random.default_rng(23)
    for k in range(N_INPUTS):
        path = s3.local / f"header-pass-u{k:02d}.flac"
        sf.write(path, 0.1 * rng.standard_normal(8000), 16000, format="FLAC", subtype="PCM_16")
        client.upload_file(str(path), s3.bucket, f"header-pass/u{k:02d}.flac")
    return s3.url("header-pass/")


@pytest.mark.slow  # a subprocess with worker processes
def test_ctrl_c_during_the_header_pass_of_a_batch(prefix, s3_env, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, **s3_env.env, "PYTHONFAULTHANDLER": ""}
    args = ["batch", "mel", prefix, "--out", str(out), "--store", "shards", "--jobs", "2", "-q"]
    code, stdout, stderr = signal_while_stalled(
        s3_env.server.log, "header-pass/u13.flac", args, signal.SIGINT, env=env, cwd=tmp_path
    )
    assert (code, stderr.decode()) == (130, "error: interrupted\n")
    assert stdout == b""
    assert (sorted(out.rglob("*.tar")) if out.exists() else []) == []  # no shard written

"""Ctrl-C while the client reads the headers of a batch's URL inputs on threads (issue 22, the concurrent pass).

A sharded store's plan needs every input's frame count, so the client reads the headers of URL inputs before any
worker starts (:mod:`audiokit.batch.stores.headers`, 16 reads in flight).  With one input's header read stalled
(tests/remote/stall.py), SIGINT must end the batch with its one line and 130, no traceback, nothing on stdout and no
shard written -- the stalled read thread is abandoned, not waited for (the transport's timeout is 30 s).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import numpy as np
import pytest
import soundfile as sf

from tests.remote.stall import Stall
from tests.remote.test_remote_signals import DEFAULT_SIGINT, GUARD

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
    with Stall(s3_env.server.log, "header-pass/u13.flac", from_byte=0) as stall:
        proc = subprocess.Popen(
            [*DEFAULT_SIGINT, "batch", "mel", prefix, "--out", str(out), "--store", "shards", "--jobs", "2", "-q"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=tmp_path,
        )
        try:
            assert stall.stalled.wait(120), "the batch never reached the stalled header read"
            time.sleep(0.2)  # well inside the stalled read
            assert proc.poll() is None, proc.communicate()
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=GUARD)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert (proc.returncode, stderr.decode()) == (130, "error: interrupted\n")
    assert stdout == b""
    assert (sorted(out.rglob("*.tar")) if out.exists() else []) == []  # no shard written

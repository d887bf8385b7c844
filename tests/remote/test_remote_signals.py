"""Ctrl-C and SIGTERM on a command whose URL input hangs (issue 22, part 2b).

The moto server accepts the read and stalls mid-body (tests/remote/stall.py).  Reads of a URL input made from
libsndfile's callbacks run with the signals held (an exception raised inside a C callback would be lost), so before
this fix a stalled read held Ctrl-C until botocore's read timeout (60 s, then retries).  Now the read is the one
place in the held call where the signal acts (:class:`audiokit.held.signals_released`): the command ends with its one
line and 130/143, no traceback, no output -- long before the transport's timeouts (:data:`READ_TIMEOUT` 30 s).
The stall is either in the first read (the header, outside libsndfile) or at 1 MiB (inside libsndfile's reads).
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import soundfile as sf

from audiokit.io.remote import READ_TIMEOUT
from tests.remote.stall import signal_while_stalled


@pytest.fixture(scope="module")
def long_wav(s3) -> str:
    """``stall/two-minutes.wav`` in the bucket: 2 min of 16 kHz 16-bit mono (3.8 MB, 15 blocks of 256 KiB)."""
    path = s3.local / "two-minutes.wav"
    rng = np.random.default_rng(7)
    sf.write(path, 0.1 * rng.standard_normal(120 * 16000), 16000, subtype="PCM_16")
    s3.server.client().upload_file(str(path), s3.bucket, "stall/two-minutes.wav")
    return s3.url("stall/two-minutes.wav")


@pytest.mark.slow  # a subprocess each
@pytest.mark.parametrize(("where", "signum"), [("body", signal.SIGINT), ("body", signal.SIGTERM), ("header", signal.SIGINT)])
def test_signal_ends_a_command_on_a_stalled_read(where, signum, long_wav, s3_env, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    from_byte = 0 if where == "header" else 1 << 20
    env = {**os.environ, **s3_env.env, "PYTHONFAULTHANDLER": ""}
    args = ["resample", long_wav, "--to", "8k", "-o", str(out / "r.wav")]
    code, stdout, stderr = signal_while_stalled(
        s3_env.server.log, "stall/two-minutes.wav", args, signum, env=env, cwd=tmp_path, from_byte=from_byte
    )
    expected = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}[signum]
    assert (code, stderr.decode()) == (expected[0], f"error: {expected[1]}\n")
    assert stdout == b""
    assert list(out.iterdir()) == []  # nothing partial, no temp file


def test_default_timeouts_reach_the_filesystems():
    """The defaults are in every s3fs and HTTP filesystem audiokit makes, unless the storage options set their own."""
    from audiokit.io.remote import CONNECT_TIMEOUT, filesystem

    fs, _ = filesystem("s3://bucket/a.flac", {"anon": True})
    assert fs.config_kwargs["connect_timeout"] == CONNECT_TIMEOUT and fs.config_kwargs["read_timeout"] == READ_TIMEOUT
    fs, _ = filesystem("s3://bucket/a.flac", {"anon": True, "config_kwargs": {"read_timeout": 5}})
    assert fs.config_kwargs["read_timeout"] == 5 and fs.config_kwargs["connect_timeout"] == CONNECT_TIMEOUT
    fs, _ = filesystem("http://127.0.0.1:9/a.wav", {})
    timeout = fs.client_kwargs["timeout"]
    assert (timeout.total, timeout.sock_connect, timeout.sock_read) == (None, CONNECT_TIMEOUT, READ_TIMEOUT)
    fs, _ = filesystem("http://127.0.0.1:9/a.wav", {"client_kwargs": {"timeout": 7}})
    assert fs.client_kwargs["timeout"].sock_read == 7.0

"""Fixtures of the object-storage tests: a real moto S3 server and a ranged HTTP server on 127.0.0.1.

``s3`` (session): the server, its bucket ``audio`` holding the corpus made by ``corpus`` and the environment
(endpoint, fake credentials) that points s3fs at it; ``s3_env`` puts that environment in place for one test.
``http_server`` serves the same corpus over plain HTTP.  Both are stopped at the end of the session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("moto.server", reason="the test extra (moto[server]) is not installed")
pytest.importorskip("s3fs", reason="the remote extra (s3fs) is not installed")

from tests.helpers.remote import CountingMotoServer, RangeHTTPServer, server_environment  # noqa: E402

BUCKET = "audio"
SR = 16000


@dataclass
class S3:
    """The running S3 server, its bucket and the local copies of the objects in it."""

    server: CountingMotoServer
    bucket: str
    local: Path  # the folder whose files are the bucket's objects, by name
    env: dict[str, str]

    def url(self, name: str) -> str:
        return f"s3://{self.bucket}/{name}"


def _corpus(folder: Path) -> dict[str, Path]:
    """The test inputs: a 1.5 s stereo speech-like WAV, its FLAC, a 2 s mono FLAC and a 20 min mono FLAC/WAV."""
    rng = np.random.default_rng(22)
    t = np.arange(int(1.5 * SR)) / SR
    stereo = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.2 * np.sin(2 * np.pi * 50 * t) + 0.05 * rng.standard_normal(t.size)])
    mono = 0.25 * np.sin(2 * np.pi * 1000 * np.arange(2 * SR) / SR) + 0.01 * rng.standard_normal(2 * SR)
    files = {
        "stereo.wav": (stereo.T, "WAV", "PCM_16"),
        "stereo.flac": (stereo.T, "FLAC", "PCM_16"),
        "mono.flac": (mono, "FLAC", "PCM_24"),
    }
    out = {}
    for name, (data, fmt, subtype) in files.items():
        sf.write(folder / name, data, SR, format=fmt, subtype=subtype)
        out[name] = folder / name
    long = folder / "long.flac"  # 20 minutes of noise at -20 dBFS: ~36 MB of FLAC
    with sf.SoundFile(long, "w", SR, 1, format="FLAC", subtype="PCM_16") as fh:
        for _ in range(20):
            fh.write((0.1 * rng.standard_normal(60 * SR)).astype(np.float32))
    out["long.flac"] = long
    return out


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    """moto's S3 server on 127.0.0.1 with bucket ``audio`` holding :func:`_corpus` (stopped after the session)."""
    folder = tmp_path_factory.mktemp("bucket")
    files = _corpus(folder)
    server = CountingMotoServer()
    try:
        client = server.client()
        client.create_bucket(Bucket=BUCKET)
        for name, path in files.items():
            client.upload_file(str(path), BUCKET, name)
        server.log.clear()
        yield S3(server, BUCKET, folder, server_environment(server.endpoint))
    finally:
        server.stop()


@pytest.fixture
def s3_env(s3: S3, monkeypatch: pytest.MonkeyPatch) -> S3:
    """:func:`s3` with its environment set for this test (endpoint, fake credentials, no profile) and its log cleared."""
    for key, value in s3.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AUDIOKIT_STORAGE_OPTIONS", raising=False)
    s3.server.log.clear()
    return s3


@pytest.fixture(scope="session")
def http_server(s3: S3) -> Iterator[RangeHTTPServer]:
    """A ranged HTTP server of the same files (stopped after the session)."""
    server = RangeHTTPServer(s3.local)
    try:
        yield server
    finally:
        server.stop()

"""Shared fixtures (a seeded rng, byte-level WAV crafting, the in-process CLI) and the one Hypothesis profile."""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.wav import chunk, riff_wav

# A test run started in the background (`cmd &`, some CI runners) inherits SIGINT *ignored*, and so would every
# command the signal tests start (an ignored signal stays ignored across exec): their Ctrl-C would do nothing.
# Handled here, it is back to the default in the children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The one Hypothesis profile, for every property test (a test sets only its own max_examples).  Nothing depends on
# timing: no deadline and no too_slow health check (a loaded machine must not fail a test).  derandomize: the same
# examples in every run and on every machine, so a failure reproduces and a green run stays green; no example
# database is written into the checkout (print_blob prints the reproduction decorator of a failure instead).
settings.register_profile(
    "audiokit",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("audiokit")

SEED = 20240611


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: every run draws the same numbers."""
    return np.random.default_rng(SEED)


@pytest.fixture
def craft_wav(tmp_path: Path):
    """``craft_wav(name, data, **header_fields) -> Path``: write :func:`riff_wav` bytes to tmp_path."""

    def make(name: str, data: bytes = b"", **fields) -> Path:
        path = tmp_path / name
        path.write_bytes(riff_wav(data, **fields))
        return path

    return make


@pytest.fixture
def wav_chunk():
    """The :func:`chunk` helper, as a fixture (tests do not import conftest)."""
    return chunk


@pytest.fixture
def pcm16():
    """``pcm16(codes) -> bytes``: little-endian int16 bytes of integer codes, shaped (n_samples, channels)."""

    def make(codes) -> bytes:
        return np.asarray(codes, dtype="<i2").tobytes()

    return make


@pytest.fixture
def cli(capsys):
    """``cli(*args) -> (exit_code, stdout_text, stderr_text)``, running ``audiokit.cli.app.main(argv)`` in this process.

    An ImportError of the CLI is raised here, so the tests using it error loudly (never a skip).
    """
    from audiokit.cli.app import main

    def call(*args) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return call


#: The fixtures that start ``python -m audiokit`` as a subprocess (``run`` in tests/cli/conftest.py and
#: tests/batch/conftest.py): a test using one is ``slow`` without saying so itself.
SUBPROCESS_FIXTURES = frozenset({"run"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that uses a subprocess fixture."""
    for item in items:
        if SUBPROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)

"""Memory of ``audiokit stats`` and ``audiokit silence``: streamed, so the peak RSS does not grow with the length
(≤ 300 MiB for any length, rate or channel count; 42 MiB measured for an hour by ``benchmarks/bench_stats.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.memory import RSS_LIMIT_MIB, peak_rss_mib

pytestmark = pytest.mark.slow

SR = 16000


def _write(path, seconds: float, channels: int) -> str:
    """A 16-bit WAV of noise with pauses, written a minute at a time."""
    n, step = int(seconds * SR), 60 * SR
    rng = np.random.default_rng(0)
    with sf.SoundFile(path, "w", SR, channels, "PCM_16") as f:
        for start in range(0, n, step):
            m = min(step, n - start)
            gate = (np.arange(start, start + m) / SR) % 3 < 2
            f.write((0.1 * rng.standard_normal((m, channels)) * gate[:, None]).astype(np.float32))
    return str(path)


@pytest.mark.parametrize("command", [["stats"], ["silence", "--min-silence", "0.2s"], ["silence", "--frame", "1"]])
def test_peak_memory_does_not_grow_with_length(tmp_path, command):
    short = peak_rss_mib(*command, _write(tmp_path / "short.wav", 60, 1))
    long = peak_rss_mib(*command, _write(tmp_path / "long.wav", 20 * 60, 1))
    assert short.returncode == long.returncode == 0, short.stderr + long.stderr
    assert long.peak_rss_mib < RSS_LIMIT_MIB
    assert long.peak_rss_mib - short.peak_rss_mib < 16, (short.peak_rss_mib, long.peak_rss_mib)


@pytest.mark.parametrize("command", [["stats"], ["silence"]])
def test_many_channels_stay_bounded(tmp_path, command):
    measured = peak_rss_mib(*command, _write(tmp_path / "wide.wav", 8, 256))
    assert measured.returncode == 0, measured.stderr
    assert measured.peak_rss_mib < RSS_LIMIT_MIB, measured.peak_rss_mib

"""``audiokit loudness`` in bounded memory: peak RSS of the whole command on a 30-minute 48 kHz stereo file.

The bound of issue 21 is 100 MiB for 4 h (``benchmarks/bench_loudness.py --rss-hours 4`` measures that); the meter
keeps one energy per channel and 100 ms (2.3 MB for 4 h of stereo), so 30 min within the bound, true peak and PNG
included, shows the streaming works.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.memory import peak_rss_mib

pytestmark = pytest.mark.slow

LIMIT_MIB = 100.0


def test_thirty_minutes_of_stereo_in_under_100_mib(tmp_path):
    sr, block = 48000, 1 << 20
    path = tmp_path / "long.wav"
    rng = np.random.default_rng(7)
    with sf.SoundFile(path, "w", samplerate=sr, channels=2, subtype="PCM_16") as f:
        for start in range(0, 30 * 60 * sr, block):
            t = (start + np.arange(block)) / sr
            tone = 0.2 * np.sin(2 * np.pi * 440 * t) * (1 + 0.5 * np.sin(2 * np.pi * 0.05 * t))
            f.write(np.stack([tone + 0.05 * rng.standard_normal(block), tone], axis=1))
    measured = peak_rss_mib("loudness", path, "--json", "-o", tmp_path / "long.png", "--series", tmp_path / "s.npy")
    assert measured.returncode == 0, measured.stderr
    assert measured.peak_rss_mib <= LIMIT_MIB, f"peak RSS {measured.peak_rss_mib:.1f} MiB"

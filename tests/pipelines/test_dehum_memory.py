"""Memory of ``audiokit dehum`` (issue 20): ≤ 300 MiB peak RSS for wide inputs, and the channel groups change no bit.

What grew before, and what bounds it now:

* channels: pass 3 of the analysis and the meter framed all channels at once (``channels × 40 harmonics × frames ×
  201`` complex values, twice in complex128) and the long-term spectrum transformed them at once: 720 MiB for 256
  channels × 1 s.  Now the framing and projections run in groups of 8-16 channels
  (``dsp.hum.track.channel_groups``, :class:`~audiokit.dsp.hum.track.GroupedFrames`) and the blocks of a wide
  input are shorter (``pipelines.dehum.block_samples``);
* length: the analysis keeps per-frame arrays (a few KiB per second per channel): 30 min of mono stays well
  under the bound (the 4-hour case is in the issue's notes).

Up to :data:`~audiokit.dsp.hum.track.CHANNEL_GROUP` channels nothing changed (one group, 65 536-sample blocks);
the unit tests below check that the groups give the all-at-once numbers bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

import audiokit.dsp.hum.track as track
from audiokit.dsp.hum import HumMeter, analyze_hum
from audiokit.dsp.hum.track import (
    CHANNEL_GROUP,
    Framer,
    channel_groups,
    decimation_factor,
    frame_geometry,
    frame_hop,
    frame_length,
    frame_times,
    n_decimated,
)
from audiokit.io.reader import BLOCK_SAMPLES
from audiokit.pipelines.dehum import block_samples
from tests.helpers.memory import RSS_LIMIT_MIB, peak_rss_mib

SR = 16000


def _hummed(n: int, channels: int, seed: int) -> np.ndarray:
    """Noise plus a drifting-free 50.02 Hz hum of 3 harmonics, shaped (channels, n)."""
    t = np.arange(n) / SR
    h = 0.05 * np.sin(2 * np.pi * 50.02 * t) + 0.02 * np.sin(2 * np.pi * 100.04 * t + 0.3) + 0.01 * np.sin(2 * np.pi * 150.06 * t)
    return 0.05 * np.random.default_rng(seed).standard_normal((channels, n)) + h


def _write(path, seconds: float, channels: int) -> str:
    """A 16-bit WAV of ``_hummed`` written a minute at a time (a long file never sits in the test's memory)."""
    n, step = int(seconds * SR), 60 * SR
    with sf.SoundFile(path, "w", SR, channels, "PCM_16") as f:
        for i, start in enumerate(range(0, n, step)):
            f.write(_hummed(min(step, n - start), channels, i).T.astype(np.float32))
    return str(path)


def _bounded(*args: object) -> None:
    m = peak_rss_mib(*args, timeout=1800.0)  # minutes of audio on a loaded machine: a generous limit, never a measure
    assert m.returncode == 0, m.stderr
    assert m.peak_rss_mib < RSS_LIMIT_MIB, f"audiokit {' '.join(map(str, args))}: {m.peak_rss_mib:.0f} MiB"


# --------------------------------------------------------------------------- the rules


def test_channel_groups_cover_the_channels_in_groups_of_two_or_more():
    for channels in range(1, 300):
        groups = channel_groups(channels)
        assert groups[0].start == 0 and groups[-1].stop == channels
        assert all(a.stop == b.start for a, b in zip(groups[:-1], groups[1:], strict=True))
        sizes = [g.stop - g.start for g in groups]
        if channels <= CHANNEL_GROUP:
            assert sizes == [channels]
        else:
            assert (
                len(sizes) == -(-channels // CHANNEL_GROUP) and min(sizes) >= CHANNEL_GROUP // 2 and max(sizes) <= CHANNEL_GROUP
            )


def test_block_samples_unchanged_up_to_a_group_then_bounded_in_bytes():
    assert [block_samples(c) for c in (1, 2, CHANNEL_GROUP)] == [BLOCK_SAMPLES] * 3
    for channels in (17, 256, 4096, 100_000):
        n = block_samples(channels)
        assert n == max(1024, BLOCK_SAMPLES * CHANNEL_GROUP // channels)
        assert channels * n * 8 <= max(8 << 20, channels * 1024 * 8)


def test_frame_times_in_chunks_equal_one_call():
    """The frame times of 20 min at 8 frames/s (9 600 frames, three chunks) are frame_geometry's, bit for bit."""
    decim = decimation_factor(SR)
    for length_s, hop_s in ((1.0, 0.25), (0.5, 0.125)):
        rate = SR / decim
        framer = Framer(
            n_samples=n_decimated(1200 * SR + 77, decim), length=frame_length(length_s, rate), hop=frame_hop(hop_s, rate)
        )
        assert framer.n_frames > 2 * 4096 or hop_s == 0.25
        whole = frame_geometry(framer, np.arange(framer.n_frames), decim, SR)[2]
        np.testing.assert_array_equal(frame_times(framer, decim, SR), whole)


def test_grouped_analysis_and_meter_equal_all_channels_at_once(monkeypatch):
    """20 channels (two groups of 10) against one group of 20: every array of the analysis and the meter, bit for bit."""
    n = 3 * SR + 321
    x = _hummed(n, 20, 5) * np.linspace(0.5, 1.5, 20)[:, None]
    grouped = analyze_hum(x, sr=SR, freq=50)
    meter = HumMeter(grouped)
    for i in range(0, n, 4096):
        meter.push(x[:, i : i + 4096])
    assert len(channel_groups(20)) == 2 and grouped.found
    monkeypatch.setattr(track, "channel_groups", lambda channels: [slice(0, channels)])
    whole = analyze_hum(x, sr=SR, freq=50)
    meter_whole = HumMeter(whole)
    for i in range(0, n, 4096):
        meter_whole.push(x[:, i : i + 4096])
    for name in ("psi", "amplitudes", "weights", "frames", "noise", "level_db", "floor_db", "snr_db", "treated"):
        np.testing.assert_array_equal(getattr(grouped, name), getattr(whole, name), err_msg=name)
    np.testing.assert_array_equal(meter.frames, meter_whole.frames)
    np.testing.assert_array_equal(meter.finish(), meter_whole.finish())


# --------------------------------------------------------------------------- peak RSS of the command


@pytest.mark.slow
def test_dehum_256_channels_is_bounded(tmp_path):
    """256 channels × 1 s: 720 MiB before (every channel framed at once)."""
    path = _write(tmp_path / "wide.wav", 1.0, 256)
    _bounded("dehum", path, "-o", tmp_path / "out.wav", "--residual", tmp_path / "res.wav")
    assert sf.info(tmp_path / "res.wav").channels == 256


@pytest.mark.slow
def test_batch_dehum_256_channels_is_bounded(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "wide.wav", 1.0, 256)
    _bounded("batch", "dehum", "--freq", "50", folder, "--out", tmp_path / "out", "-q")
    assert sf.info(tmp_path / "out" / "wide.dehum.wav").channels == 256


@pytest.mark.slow
def test_dehum_30_minutes_mono_is_bounded(tmp_path):
    path = _write(tmp_path / "long.wav", 1800.0, 1)
    _bounded("dehum", path, "-o", tmp_path / "out.wav")
    assert sf.info(tmp_path / "out.wav").frames == 1800 * SR

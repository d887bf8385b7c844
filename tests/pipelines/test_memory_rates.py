"""Memory at extreme rates and ratios (issue 20): ≤ 300 MiB peak RSS, whatever the window length or up-ratio.

What grew before, and what bounds it now:

* the time-frequency jobs at 3 MHz (25 ms = 75 000 samples): FFT batches and the polyphase layout of 256 frames
  (``dsp.stft.plan.chunk_frames_for``: at most ``CHUNK_BYTES`` of samples a batch), the mel bank's float64
  ``(n_mels, n_freqs)`` temporaries (built band by band), Kaldi's blocks of 256 frames of 131 072 points
  (``dsp.kaldi.block_frames``: at most 32 MiB a block) -- 387-534 MiB before;
* ``resample`` by a large up-ratio or of many channels: one 65 536-sample input block became 8 million output
  samples per channel (``dsp.resample.block_samples``: input and output blocks of at most 2**21 samples) -- 1 219
  MiB before for 6 channels 127 Hz -> 16 kHz, 1 156 MiB for 256 channels 16 kHz -> 48 kHz.

The peak is the child's own ``ru_maxrss`` (:mod:`tests.helpers.memory`, which measures from a small launcher
interpreter).  The unit tests check the block-size rules
against their closed forms and that the smaller blocks give the one-shot values: exactly where the arithmetic is
per sample (``nearest`` picks, soxr streams), to Kaldi's per-frame loop where the FFT batch changes.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from audiokit.dsp.kaldi import FbankOptions, KaldiFeatureStream, kaldi_fbank
from audiokit.dsp.kaldi.compute import _BLOCK_BYTES, _BLOCK_FRAMES, block_frames
from audiokit.dsp.resample import BLOCK_ELEMENTS, block_samples, first_nearest_output, nearest_indices, resample
from audiokit.dsp.stft.plan import CHUNK_BYTES, DEFAULT_CHUNK_FRAMES, chunk_frames_for
from tests.helpers.kaldi_reference import naive_kaldi
from tests.helpers.memory import RSS_LIMIT_MIB, peak_rss_mib

HIGH_SR = 3_000_000
LOW_SR = 127


@pytest.fixture(scope="module")
def high_rate(tmp_path_factory) -> str:
    """2 s of noise at 3 MHz, 16-bit mono."""
    path = tmp_path_factory.mktemp("mem") / "hf.wav"
    x = 0.1 * np.random.default_rng(0).standard_normal(2 * HIGH_SR)
    sf.write(path, x.astype(np.float32), HIGH_SR, subtype="PCM_16")
    return str(path)


@pytest.fixture(scope="module")
def low_rate_6ch(tmp_path_factory) -> str:
    """6 channels at 127 Hz, 70 000 samples (more than one 65 536-sample read block), 16-bit."""
    path = tmp_path_factory.mktemp("mem") / "lo6.wav"
    x = 0.1 * np.random.default_rng(1).standard_normal((70_000, 6))
    sf.write(path, x.astype(np.float32), LOW_SR, subtype="PCM_16")
    return str(path)


def _bounded(*args: object) -> None:
    measured = peak_rss_mib(*args)
    assert measured.returncode == 0, measured.stderr
    assert measured.peak_rss_mib < RSS_LIMIT_MIB, f"audiokit {' '.join(map(str, args))}: {measured.peak_rss_mib:.0f} MiB"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "extra", "rows"),
    [("mel", (), 80), ("spectrogram", (), 37_501), ("mfcc", (), 20), ("mfcc", ("--compat", "kaldi"), 13)],
    ids=["mel", "spectrogram", "mfcc", "mfcc-kaldi"],
)
def test_timefreq_at_3mhz_is_bounded(high_rate, tmp_path, command, extra, rows):
    npy = tmp_path / "out.npy"
    _bounded(command, high_rate, *extra, "--npy", npy)
    assert np.load(npy, mmap_mode="r").shape[0] == rows  # the job ran to the end, at that rate's window


@pytest.mark.slow
@pytest.mark.parametrize("extra", [(), ("--no-filter",)], ids=["soxr", "nearest"])
def test_resample_large_up_ratio_many_channels_is_bounded(low_rate_6ch, tmp_path, extra):
    out = tmp_path / "out.wav"
    _bounded("resample", low_rate_6ch, "--to", "16k", *extra, "-o", out)
    info = sf.info(out)
    assert (info.samplerate, info.channels, info.frames) == (16000, 6, (2 * 70_000 * 16000 + LOW_SR) // (2 * LOW_SR))


@pytest.mark.slow
def test_kaldi_six_channels_at_3mhz_is_bounded(tmp_path):
    """One Kaldi stream per channel, each holding its block: 2 056 MiB before for 1 s of 6 channels."""
    path, npy = tmp_path / "hf6.wav", tmp_path / "out.npy"
    x = 0.1 * np.random.default_rng(7).standard_normal((HIGH_SR, 6))
    sf.write(path, x.astype(np.float32), HIGH_SR, subtype="PCM_16")
    _bounded("mfcc", path, "--compat", "kaldi", "--npy", npy)
    assert np.load(npy, mmap_mode="r").shape[:2] == (6, 13)


@pytest.mark.slow
def test_resample_256_channels_is_bounded(tmp_path):
    """256 channels 16 kHz -> 48 kHz, 3 s: 1 156 MiB before (65 536-sample blocks of every channel)."""
    path, out = tmp_path / "w256.wav", tmp_path / "out.wav"
    x = 0.1 * np.random.default_rng(8).standard_normal((3 * 16000, 256))
    sf.write(path, x.astype(np.float32), 16000, subtype="PCM_16")
    _bounded("resample", path, "--to", "48k", "-o", out)
    assert (sf.info(out).channels, sf.info(out).frames) == (256, 3 * 48000)


# ---------------------------------------------------------------------------------------------- the block-size rules
@pytest.mark.parametrize("itemsize", [4, 8])
@pytest.mark.parametrize("n_fft", [1, 400, 512, 2048, 8192, 16_384, 75_000, 1 << 24])
def test_chunk_frames_for(n_fft, itemsize):
    got = chunk_frames_for(n_fft, itemsize)
    assert 1 <= got <= DEFAULT_CHUNK_FRAMES
    assert got == DEFAULT_CHUNK_FRAMES or got * n_fft * itemsize <= CHUNK_BYTES or got == 1
    assert got == DEFAULT_CHUNK_FRAMES or (got + 1) * n_fft * itemsize > CHUNK_BYTES  # the most that fit
    if n_fft * itemsize <= 8192 * 8:  # every window up to 8 192 samples keeps its 256-frame batches (same bits)
        assert got == DEFAULT_CHUNK_FRAMES


@pytest.mark.parametrize("sr", [8000, 16000, 44100, 48000, 96000, 3_000_000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kaldi_block_frames(sr, dtype):
    o = FbankOptions(samp_freq=sr)
    per_frame = o.padded_window_size * np.dtype(dtype).itemsize + 8 * o.window_size + 24 * o.window_shift
    got = block_frames(o, np.dtype(dtype))
    assert got == min(_BLOCK_FRAMES, max(1, _BLOCK_BYTES // per_frame))
    if sr <= 96000:
        assert got == _BLOCK_FRAMES  # the rates Kaldi is used at keep their blocks (same bits)
    else:
        assert got * per_frame <= _BLOCK_BYTES


@pytest.mark.parametrize(
    ("sr_in", "sr_out", "channels"),
    [(44100, 16000, 2), (16000, 48000, 1), (127, 16000, 6), (8000, 3_072_000, 1), (48000, 48000, 256), (100, 3_072_000, 64)],
)
def test_block_samples_bounds_input_and_output(sr_in, sr_out, channels):
    k = block_samples(65536, sr_in=sr_in, sr_out=sr_out, channels=channels)
    assert 1 <= k <= 65536
    assert k == 1 or k * channels <= BLOCK_ELEMENTS
    assert k == 1 or k * sr_out // sr_in * channels <= BLOCK_ELEMENTS  # the output it makes
    if channels * 65536 * max(1, sr_out / sr_in) <= BLOCK_ELEMENTS:
        assert k == 65536  # common ratios keep their blocks


@pytest.mark.parametrize(("sr_in", "sr_out"), [(127, 16000), (44100, 37993), (48000, 16000), (16000, 44100), (7, 3)])
def test_first_nearest_output_is_the_first_pick_at_or_after_k(sr_in, sr_out):
    n_out = 3000
    picks = nearest_indices(0, n_out, sr_in=sr_in, sr_out=sr_out)
    m = np.arange(n_out)
    assert np.array_equal(picks, np.floor(m * sr_in / sr_out + 0.5).astype(np.int64))  # exact at these sizes
    for k in range(0, int(picks[-1]) + 1):
        naive = int(np.flatnonzero(picks >= k)[0])  # search
        assert first_nearest_output(k, sr_in=sr_in, sr_out=sr_out) == naive


@pytest.mark.parametrize(("sr_in", "sr_out"), [(127, 16000), (44100, 37993), (48000, 16000), (16000, 44100)])
@pytest.mark.parametrize("block", [1, 7, 1000])
def test_naive_blocks_equal_the_one_shot_picks(monkeypatch, tmp_path, sr_in, sr_out, block):
    from audiokit.io.reader import open_audio
    from audiokit.pipelines import resample as job

    x = np.random.default_rng(2).uniform(-0.9, 0.9, (2, 2345)).astype(np.float32)
    path = tmp_path / "x.wav"
    sf.write(path, x.T, sr_in, subtype="FLOAT")
    monkeypatch.setattr(job, "BLOCK_SAMPLES", block)
    with open_audio(str(path)) as source:
        got = np.concatenate(list(job._naive_blocks(source, sr_out)), axis=1)
    ref = resample(x.astype(np.float64), sr_in=sr_in, sr_out=sr_out, method="nearest")
    assert got.shape == ref.shape
    assert got.tobytes() == ref.tobytes()


@pytest.mark.slow
def test_kaldi_at_3mhz_in_small_blocks_matches_the_per_frame_loop():
    """32 frames of 131 072 points in blocks of 14 (float64): Kaldi's loop to 1e-9, and any feeding gives the same bits."""
    o = FbankOptions(samp_freq=HIGH_SR)
    assert block_frames(o, np.dtype(np.float64)) < 32
    x = (0.1 * np.random.default_rng(4).standard_normal(HIGH_SR + 12_345)).astype(np.float32)
    ours = kaldi_fbank(x, options=o)
    np.testing.assert_allclose(ours, naive_kaldi(x, o), rtol=1e-9, atol=1e-9)
    stream = KaldiFeatureStream(o)
    cuts = [0, 65536, 65537, 900_000, 2_000_000, x.size]
    pieces = [stream.accept_waveform(x[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)] + [stream.input_finished()]
    assert np.concatenate(pieces).tobytes() == ours.tobytes()

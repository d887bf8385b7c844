"""YIN's fast rows (audiokit.dsp.pitch.difference.cmnd over blockacf) against librosa 0.11's yin, frame by frame.

audiokit.yin takes the autocorrelation at the searched lags only, from 2 hop-point block transforms, and keeps every
step in the input's precision; librosa takes a ``2 L - 1``-point transform per frame and divides in float64.  The
f0 therefore differ by float rounding, and the tests bound that difference frame by frame.

Tolerance (from the dtype).  With ``u = eps(dtype) / 2``, a frame's energy ``r0 = sum x**2`` and its rows ``d'``:
both autocorrelations are FFT correlations, whose errors are normwise, ``|dr_k| <= c u r0`` with ``c ~ log2(n_fft)``;
the energy term ``e`` is the same float sequence in both (bit-identical cumsum), so ``|dd_k| <= 4 c u r0`` for
``d_k = 2 (r0 - r_k) - e_{k-1}``, and ``d'_k = d_k / mean_k`` moves by at most
``delta = 4 c u r0 (1 + |d'|) / mean`` (``mean``: the smallest cumulative mean of the three lags around the chosen
one, ``|d'|`` the largest of their values).  The parabola's vertex ``s = -b / a`` then moves by at most
``delta (1 + 4 |s|) / |a|`` (``|db| <= delta``, ``|da| <= 4 delta``), and ``f0 = sr / period`` by ``f0 |ds| /
period``, plus 4 float64 ulps of f0 (the vertex, the period's sum and the division are float64 on both sides: the
whole bound for float64 input, where the rows differ by ~1e-16).  We take ``c = log2(2048) = 11`` (librosa's transform at 1024 samples, the larger of the two), so the
constant is ``C = 4 c = 44``; the largest ratio ``|ds| |a| / (u r0 (1 + |d'|) / mean (1 + 4 |s|))`` measured on the
material below is under 6.  A frame counts as different when its f0 is beyond that bound, when its chosen lag
differs from librosa's (a rounding difference flipping a trough or threshold decision), or when its periodic flag
does -- each count must be 0 on: the yin test inputs of test_pitch (float32 and float64, four option sets),
60 s of espeak-ng speech (the benchmark's), and the benchmark's accuracy signals (glides with vibrato, silence or
white/pink noise at 20/10/0 dB).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from audiokit.dsp.pitch import yin
from audiokit.dsp.pitch.blockacf import autocorrelation, uses_blocks
from audiokit.dsp.pitch.difference import cmnd, cmnd_exact, frame_signal, parabolic_shifts, troughs
from audiokit.dsp.pitch.params import PitchGeometry
from audiokit.dsp.pitch.yin import pad_centered, yin_and_flags, yin_block
from tests.helpers.pitch import voice

SR = 16000
FMIN, FMAX = 65.4, 2093.0
#: The bound's constant: 4 (two lags of d, each doubled) times c = log2(2048) (see the module docstring).
C = 4 * 11


def _choice(rows: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(chosen lag index, periodic) of YIN's search over rows, written out from librosa's steps."""
    below = troughs(rows) & (rows < threshold)
    index = np.argmax(below, axis=-1)
    none = ~below.any(axis=-1)
    index[none] = np.argmin(rows[none], axis=-1)
    return index, ~none


def differing_frames(y: np.ndarray, got: np.ndarray | None = None, **options: object) -> dict[str, float]:
    """Frame counts of audiokit.yin (or ``got``) against librosa.yin: chosen lag, periodic flag, f0 beyond the
    bound."""
    librosa = pytest.importorskip("librosa")
    assert librosa.__version__.startswith("0.11")
    opts: dict = dict(options)
    threshold = float(opts.pop("trough_threshold", 0.1))
    center, pad_mode = bool(opts.pop("center", True)), str(opts.pop("pad_mode", "constant"))
    frame_length = int(opts.pop("frame_length", 2048))
    hop = opts.pop("hop_length", None)
    assert not opts
    common = dict(sr=SR, fmin=FMIN, fmax=FMAX, frame_length=frame_length, hop_length=hop)
    expected = librosa.yin(y, trough_threshold=threshold, center=center, pad_mode=pad_mode, **common)
    ours = yin(y, trough_threshold=threshold, center=center, pad_mode=pad_mode, **common)
    g = PitchGeometry.make(sr=SR, fmin=FMIN, fmax=FMAX, frame_length=frame_length, hop_length=hop)
    frames = frame_signal(pad_centered(y, frame_length, center=center, pad_mode=pad_mode), frame_length, g.hop_length)
    exact, fast = cmnd_exact(frames, g), cmnd(frames, g)
    # librosa's f0 is yin_and_flags over the exact rows; ours over the fast rows (the fused search gives its bits)
    assert np.array_equal(yin_and_flags(exact, parabolic_shifts(exact), g, threshold)[0], expected)
    assert np.array_equal(yin_and_flags(fast, parabolic_shifts(fast), g, threshold)[0], ours)
    got = ours if got is None else got
    index, periodic = _choice(exact, threshold)
    index_fast, periodic_fast = _choice(fast, threshold)
    # the bound, from float64 quantities of librosa's rows
    x = frames.astype(np.float64)
    hi, lo = g.max_period, g.min_period
    r = np.fft.irfft(np.abs(np.fft.rfft(x, 2 * frame_length)) ** 2, 2 * frame_length)[:, : hi + 1]
    e = np.cumsum(x[:, :hi] ** 2, axis=1)
    e[:, 0] = 0
    d = 2 * (r[:, :1] - r[:, 1:]) - e
    mean = np.cumsum(d, axis=1) / np.arange(1, hi + 1)  # column j: lags 1 .. j + 1
    n, width = exact.shape
    at, f = np.clip(index, 1, width - 2), np.arange(n)
    left, mid, right = exact[f, at - 1], exact[f, at], exact[f, at + 1]
    a = right + left - 2 * mid
    shift = parabolic_shifts(exact)[f, index]
    denominator = np.min([mean[f, lo + at - 2 + j] for j in range(3)], axis=0)
    peak = np.max(np.abs([left, mid, right]), axis=0)
    u = np.finfo(y.dtype).eps / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(r[:, 0] > 0, C * u * r[:, 0] * (1 + peak) / denominator, 0.0)
        ds = np.where(delta > 0, delta * (1 + 4 * np.abs(shift)) / np.abs(a), 0.0)
    period = g.sr / expected
    # + the float64 rounding of -b / a, lo + i + s and sr / period on both sides: 4 ulps of f0
    tolerance = expected * np.nan_to_num(ds, nan=np.inf) / period + 4 * np.finfo(np.float64).eps * expected
    same = index == index_fast
    beyond = same & ~(np.abs(got - expected) <= tolerance)
    return {
        "frames": n,
        "lag": int((~same).sum()),
        "periodic": int((periodic != periodic_fast).sum()),
        "beyond": int(beyond.sum()),
        "max_rel": float(np.max(np.abs(got - expected) / expected)),
        "worst": int(np.argmax(np.where(same, np.abs(got - expected) / np.maximum(tolerance, 1e-300), 0))),
        "worst_ratio": float(np.max(np.where(same, np.abs(got - expected) / np.maximum(tolerance, 1e-300), 0))),
    }


def assert_within_rounding(y: np.ndarray, **options: object) -> None:
    counts = differing_frames(y, **options)
    assert counts["lag"] == 0 and counts["periodic"] == 0 and counts["beyond"] == 0, counts
    assert counts["frames"] > 50


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "options",
    [
        dict(frame_length=1024),
        dict(frame_length=2048, hop_length=160, trough_threshold=0.2),  # one transform pair per frame (no blocks)
        dict(frame_length=1024, center=False),
        dict(frame_length=1024, pad_mode="reflect"),
    ],
)
def test_yin_within_rounding_of_librosa(dtype: type, options: dict) -> None:
    assert_within_rounding(voice(2.0).astype(dtype), **options)


def _synthetic(seconds: float, snr_db: float | None, noise: str, seed: int = 1) -> np.ndarray:
    """benchmarks/bench_pitch.py's accuracy signal: glide 60 -> 1000 Hz with 6 Hz vibrato, 10 harmonics, 0.5 s
    voiced / 0.3 s silent, white or pink noise at ``snr_db`` over the voiced parts (float32)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    f0 = 60 * (1000 / 60) ** (t / seconds) * (1 + 0.03 * np.sin(2 * np.pi * 6 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SR
    x = sum(np.where(k * f0 < SR / 2 - 200, np.sin(k * phase) / k, 0.0) for k in range(1, 11))
    voiced = (t % 0.8) < 0.5
    x = x * voiced
    x *= 0.3 / np.abs(x).max()
    if snr_db is not None:
        if noise == "white":
            n = rng.standard_normal(t.size)
        else:
            spec = np.fft.rfft(rng.standard_normal(t.size))
            spec[1:] /= np.sqrt(np.arange(1, spec.size))
            spec[0] = 0
            n = np.fft.irfft(spec, t.size)
        n *= np.sqrt(np.mean(x[voiced] ** 2) / np.mean(n**2)) * 10 ** (-snr_db / 20)
        x = x + n
    return np.asarray(x, dtype=np.float32)


@pytest.mark.slow
@pytest.mark.parametrize(
    "snr_db, noise", [(None, "white"), (20, "white"), (10, "white"), (0, "white"), (20, "pink"), (10, "pink"), (0, "pink")]
)
def test_yin_within_rounding_on_the_accuracy_signals(snr_db: float | None, noise: str) -> None:
    assert_within_rounding(_synthetic(12.0, snr_db, noise), frame_length=1024, hop_length=256)


SENTENCES = [
    "The quick brown fox jumps over the lazy dog while the band plays on.",
    "Pitch tracking is the next thing speech and music users compute after a spectrogram.",
    "Prosody features, text to speech data checks and singing analysis all start from it.",
    "She sells sea shells by the sea shore, and the shells she sells are surely sea shells.",
]


@pytest.mark.slow
def test_yin_within_rounding_on_espeak_speech(tmp_path: Path) -> None:
    """60 s of espeak-ng speech at pitches 20..80, resampled to 16 kHz by sox (the benchmark's input), float32 and
    float64."""
    import soundfile as sf

    if not (shutil.which("espeak-ng") and shutil.which("sox")):
        pytest.skip("espeak-ng and sox are needed to make the speech")
    parts = []
    for i, pitch in enumerate((20, 35, 50, 65, 80)):
        for j, text in enumerate(SENTENCES):
            raw, out = tmp_path / f"s{i}{j}.wav", tmp_path / f"s{i}{j}_16k.wav"
            subprocess.run(["espeak-ng", "-p", str(pitch), "-w", str(raw), text], check=True, capture_output=True)
            subprocess.run(["sox", str(raw), "-r", str(SR), str(out)], check=True, capture_output=True)
            parts.append(sf.read(out, dtype="float32")[0])
    y = np.concatenate(parts)[: 60 * SR]
    assert y.size == 60 * SR
    assert_within_rounding(y, frame_length=1024, hop_length=256)
    assert_within_rounding(y.astype(np.float64), frame_length=1024, hop_length=256)


def test_the_count_sees_f0_beyond_the_bound() -> None:
    """The counter is not blind: f0 moved by a part in 10^5 (~100 float32 ulps) count on nearly every frame."""
    pytest.importorskip("librosa")
    y = voice(1.0).astype(np.float32)
    ours = yin(y, sr=SR, fmin=FMIN, fmax=FMAX, frame_length=1024)
    assert differing_frames(y, frame_length=1024)["beyond"] == 0
    counts = differing_frames(y, ours * (1 + 1e-5), frame_length=1024)
    assert counts["beyond"] >= 0.9 * counts["frames"], counts


def _naive_acf(frames: np.ndarray, lags: int) -> np.ndarray:
    x = frames.astype(np.float64)
    n = x.shape[1]
    return np.array([[row[: n - k] @ row[k:] for k in range(lags)] for row in x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "frame_length, hop, fmin",
    [(1024, 256, 65.4), (2048, 512, 65.4), (512, 512, 100.0), (512, 256, 100.0), (1024, 160, 65.4), (1000, 300, 80.0)],
)
def test_autocorrelation_equals_the_naive_sums(dtype: type, frame_length: int, hop: int, fmin: float) -> None:
    """Block and per-frame transforms against the float64 sums, ``|dr_k| <= 4 log2(n_fft) u r0`` (the FFT
    correlation's normwise bound), for both geometries (``uses_blocks`` true and false among the cases)."""
    g = PitchGeometry.make(sr=SR, fmin=fmin, fmax=FMAX, frame_length=frame_length, hop_length=hop)
    y = voice(1.0).astype(dtype)
    y[4000:9000] = 0  # silent frames: exact zeros
    frames = frame_signal(pad_centered(y, frame_length, center=True), frame_length, hop)
    got = autocorrelation(frames, g)
    assert got.dtype == dtype and got.shape == (len(frames), g.max_period + 1)
    expected = _naive_acf(frames, g.max_period + 1)
    n_fft = 2 * hop if uses_blocks(g) else frame_length + g.max_period
    u = np.finfo(dtype).eps / 2
    assert np.all(np.abs(got - expected) <= 4 * np.log2(n_fft) * u * expected[:, :1])
    silent = expected[:, 0] == 0
    assert silent.any() and np.all(got[silent] == 0)


@pytest.mark.parametrize("frame_length, hop", [(1024, 256), (1024, 160)])
def test_rows_depend_on_their_frame_only(frame_length: int, hop: int) -> None:
    """Any batch of frames -- other offsets, contiguous copies, one frame -- gives each frame the same bits (the
    streamed tracker relies on it)."""
    g = PitchGeometry.make(sr=SR, fmin=FMIN, fmax=FMAX, frame_length=frame_length, hop_length=hop)
    frames = frame_signal(pad_centered(voice(2.0).astype(np.float32), frame_length, center=True), frame_length, hop)
    whole = cmnd(frames, g)
    for start, stop in [(0, 1), (3, 200), (17, 18), (100, len(frames))]:
        assert np.array_equal(cmnd(frames[start:stop], g), whole[start:stop])
        assert np.array_equal(cmnd(np.ascontiguousarray(frames[start:stop]), g), whole[start:stop])
    assert np.array_equal(cmnd(frames[::3], g), whole[::3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_search_equals_yin_and_flags(dtype: type) -> None:
    """yin_block (one shift per frame) gives yin_and_flags' bits over every row's shifts, silence and row ends
    included (a threshold of 1e-9 leaves most frames aperiodic: their global minimum is taken)."""
    g = PitchGeometry.make(sr=SR, fmin=FMIN, fmax=FMAX, frame_length=1024, hop_length=256)
    y = voice(2.0).astype(dtype)
    y[10000:14000] = 0
    frames = frame_signal(pad_centered(y, 1024, center=True), 1024, 256)
    rows = cmnd(frames, g)
    for threshold in (0.1, 0.5, 1e-9):
        f0, periodic = yin_block(frames, g, threshold)
        expected, expected_periodic = yin_and_flags(rows, parabolic_shifts(rows), g, threshold)
        assert np.array_equal(f0, expected) and np.array_equal(periodic, expected_periodic)
    assert (~yin_block(frames, g, 1e-9)[1]).sum() > len(frames) // 2

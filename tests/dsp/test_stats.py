"""audiokit.dsp.stats against naive references and the real ``sox FILE -n stats`` / ``ffmpeg -af astats``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import soundfile as sf
from numpy.lib.stride_tricks import sliding_window_view

from audiokit.dsp.stats import StatsMeter, bit_depth, sox_codes, window_max_floor
from audiokit.pipelines.stats import StatsOptions, stats
from tests.helpers.sox_stats import ffmpeg_astats, sigfigs3, sox_stats

SR = 16000


def _meter(x: np.ndarray, *, block: int = 4096, sr: int = SR, pcm: bool = False, **kwargs) -> StatsMeter:
    x = np.atleast_2d(x)
    meter = StatsMeter(x.shape[0], sr, pcm=pcm, **kwargs)
    for start in range(0, x.shape[1], block):
        meter.update(x[:, start : start + block])
    return meter


def _naive_mean_square(x: np.ndarray, sr: int, window_s: float = 0.05) -> tuple[float, float]:
    """SoX's loop, one sample at a time."""
    mult, settle = math.exp(-1 / window_s / sr), int(5 * window_s * sr + 0.5)
    average, high, low = 0.0, 0.0, 2.0
    for i, d in enumerate(x):
        average = average * mult + (1 - mult) * d * d
        if i >= settle:
            high, low = max(high, average), min(low, average)
    return high, low


def _naive_runs(x: np.ndarray, value: float) -> tuple[int, float]:
    """Samples equal to ``value`` and the sum of squared lengths of their maximal runs."""
    count, runs, run = 0, 0.0, 0
    for d in x:
        if d == value:
            count, run = count + 1, run + 1
        else:
            runs, run = runs + run * run, 0
    return count, runs + run * run


# --- naive references ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [1, 7, 1000, 4096, 100_000])
@pytest.mark.parametrize("kind", ["ramp", "noise", "sine", "pauses"])
def test_running_mean_square_is_soxs_loop(block: int, kind: str) -> None:
    """Every path: segments picked by their bounds (noise), all of them (a steady sine), silence in between."""
    rng = np.random.default_rng(1)
    n = 9000 if kind == "ramp" or block == 1 else 120_000
    t = np.arange(n) / 8000
    x = {
        "ramp": rng.standard_normal(n) * np.linspace(0.01, 1, n),
        "noise": rng.standard_normal(n),
        "sine": np.sin(2 * np.pi * 997.3 * t),
        "pauses": rng.standard_normal(n) * (t % 2 < 1.3),
    }[kind]
    high, low = _naive_mean_square(x, 8000)
    level = _meter(x, block=block, sr=8000).overall()
    assert level.rms_peak == pytest.approx(math.sqrt(high), rel=1e-12)
    assert level.rms_trough == pytest.approx(math.sqrt(low), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("window_s, sr", [(0.01, 800), (0.01, 100), (10.0, 100)])
def test_running_mean_square_at_extreme_windows(window_s: float, sr: int) -> None:
    x = np.random.default_rng(3).standard_normal(3000) * np.repeat([1.0, 0.1, 2.0], 1000)
    high, low = _naive_mean_square(x, sr, window_s)
    level = _meter(x, block=777, sr=sr, window_s=window_s).overall()
    settle = int(5 * window_s * sr + 0.5)
    if x.size <= settle:
        assert level.rms_peak == level.rms_trough == pytest.approx(level.rms)
    else:
        assert level.rms_peak == pytest.approx(math.sqrt(high), rel=1e-12)
        assert level.rms_trough == pytest.approx(math.sqrt(low), rel=1e-12)


@pytest.mark.parametrize("block", [1, 3, 64, 5000])
def test_peak_count_and_flat_factor_are_the_runs_of_the_extremes(block: int) -> None:
    rng = np.random.default_rng(2)
    x = np.clip(np.round(rng.standard_normal(4000) * 3) / 4, -1, 1)  # long runs at -1 and 1
    x[:5] = -1.0  # a run at the very start, and one across every block boundary below
    x[-7:] = 1.0
    level = _meter(x, block=block).overall()
    low_count, low_runs = _naive_runs(x, x.min())
    high_count, high_runs = _naive_runs(x, x.max())
    assert level.peak_count == low_count + high_count
    assert level.flat_factor == pytest.approx(20 * math.log10((low_runs + high_runs) / (low_count + high_count)), abs=1e-12)


def test_a_new_extreme_resets_the_count_and_runs() -> None:
    x = np.array([0.5, 0.5, 0.1, 0.5, 0.9, -0.2, 0.9, 0.9, 0.9, -0.2])
    level = _meter(x, block=3).overall()
    assert level.peak_count == 4 + 2  # 0.9 four times (runs 1, 3), -0.2 twice
    assert level.flat_factor == pytest.approx(20 * math.log10((1 + 9 + 1 + 1) / 6))


@pytest.mark.parametrize("n, width", [(5000, 800), (5000, 801), (70000, 800), (3000, 37), (900, 900), (2000, 129)])
@pytest.mark.parametrize("kind", ["noise", "sine", "steps", "zeros"])
def test_window_max_floor_is_the_direct_definition(n: int, width: int, kind: str) -> None:
    t = np.arange(n) / SR
    rng = np.random.default_rng(n + width)
    signal = {
        "noise": rng.standard_normal(n) * np.where(t % 0.3 < 0.1, 0.01, 1),
        "sine": np.sin(2 * np.pi * 997.3 * t),
        "steps": np.round(3 * np.sin(2 * np.pi * 9 * t)),
        "zeros": np.zeros(n),
    }[kind]
    magnitude = np.abs(signal)
    direct = sliding_window_view(magnitude, width).max(axis=1)
    assert window_max_floor(magnitude, width) == (direct.min(), np.count_nonzero(direct == direct.min()))


@pytest.mark.parametrize("seed", range(30))
def test_window_max_floor_random(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(130, 20000))
    width = int(rng.integers(128, min(n, 3000) + 1))
    t = np.arange(n)
    magnitude = [
        np.abs(rng.standard_normal(n)),
        np.abs(np.sin(2 * np.pi * t * rng.uniform(0.001, 0.2))),
        np.abs(np.round(rng.standard_normal(n))),
    ][seed % 3].astype(np.float32 if seed % 2 else np.float64)
    direct = sliding_window_view(magnitude, width).max(axis=1)
    assert window_max_floor(magnitude, width) == (direct.min(), np.count_nonzero(direct == direct.min()))


@pytest.mark.parametrize("block", [1, 13, 4096])
def test_noise_floor_across_blocks(block: int) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal(6000) * np.where(np.arange(6000) % 2500 < 900, 0.001, 1)
    direct = sliding_window_view(np.abs(x), 800).max(axis=1)
    level = _meter(x, block=block).overall()
    assert level.noise_floor == direct.min()
    assert level.noise_floor_count == np.count_nonzero(direct == direct.min())


@pytest.mark.parametrize("block", [1, 5, 4096])
def test_zero_crossings_skip_zeros(block: int) -> None:
    x = np.array([0, 0, 0.5, 0, -0.5, -0.1, 0, 0, 0.2, 0.3, 0, -0.4, 0])
    level = _meter(x, block=block).overall()
    assert level.zero_crossings == 3
    assert level.zero_crossing_rate == 3 / x.size
    assert level.dynamic_range_db == pytest.approx(20 * math.log10(2 * 0.5 / 0.1))


@pytest.mark.parametrize("seed", range(20))
def test_zero_crossings_and_smallest_value_for_any_blocks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.choice([-1.0, -0.25, 0.0, 0.0, 0.0, 0.5, 2.0], size=int(rng.integers(1, 400)))
    nonzero = x[x != 0]
    meter = _meter(x, block=int(rng.integers(1, 60)))
    assert meter.crossings[0] == np.count_nonzero(np.signbit(nonzero[1:]) != np.signbit(nonzero[:-1]))
    assert meter.min_nonzero[0] == (np.abs(nonzero).min() if nonzero.size else np.inf)


@pytest.mark.parametrize("block", [1000, 4097])
def test_every_field_is_independent_of_the_blocks(block: int) -> None:
    rng = np.random.default_rng(11)
    t = np.arange(50_000) / SR
    x = np.stack([np.round(np.clip(0.3 * rng.standard_normal(t.size) * (t % 1 < 0.6), -1, 1) * 32767) / 32768,
                  np.round(0.5 * np.sin(2 * np.pi * 997 * t) * 32767) / 32768])  # fmt: skip
    whole = _meter(x, block=x.shape[1], pcm=True, exact32=True)
    split = _meter(x, block=block, pcm=True, exact32=True)
    for c in (0, 1):
        a, b = whole.channel(c), split.channel(c)
        for name, value in vars(a).items():
            other = vars(b)[name]
            if isinstance(value, float):
                assert other == pytest.approx(value, rel=1e-12, abs=1e-300), name
            else:
                assert other == value, name


def test_bit_depth_examples() -> None:
    half16 = int(sox_codes(np.array([0.5]))[0])
    assert bit_depth(half16 | (1 << 16), -0.5, 0.5) == (15, 16)
    assert bit_depth(1 << 8, -1.0, 1 - 2**-23) == (24, 24)
    assert bit_depth(0, 0.0, 0.0) == (0, 0)
    assert bit_depth(1 << 4, 0.1, 0.1) == (24, 28)  # positive only: the leading zeros of code(max)


def test_sox_codes_round_halves_away_and_clip() -> None:
    x = np.array([0.5 * 2**-31, -0.5 * 2**-31, 1.0, -1.5, 1.5 * 2**-31])
    assert sox_codes(x).tolist() == [1, -1, 2**31 - 1, -(2**31), 2]


def test_nonfinite_and_subnormal_samples_are_counted_then_read_as_zero() -> None:
    x = np.array([[0.5, np.nan, -0.25, np.inf, -np.inf, 1e-40, -0.5]])
    level = StatsMeter(1, SR)
    level.update(x.astype(np.float64))
    result = level.overall()
    assert (result.nan_count, result.inf_count, result.subnormal_count) == (1, 2, 1)
    assert result.max_level == 0.5 and result.min_level == -0.5
    assert all(math.isfinite(v) for v in (result.rms, result.rms_peak, result.dc_offset))


def test_huge_float_samples_stay_finite() -> None:
    x = np.full((1, 5000), 1e300)
    x[0, ::2] = -1e300
    level, unit = _meter(x).overall(), _meter(x / 1e300).overall()
    assert level.rms == pytest.approx(1e300)
    assert level.rms_peak == pytest.approx(unit.rms_peak * 1e300, rel=1e-12)
    assert level.rms_trough == pytest.approx(unit.rms_trough * 1e300, rel=1e-12)


def test_overall_of_several_channels_follows_sox() -> None:
    rng = np.random.default_rng(7)
    x = np.stack([0.1 * rng.standard_normal(8000) + 0.01, 0.5 * np.sin(np.arange(8000) / 5)])
    meter = _meter(x)
    left, right, overall = meter.channel(0), meter.channel(1), meter.overall()
    assert overall.dc_offset == left.dc_offset  # the channel value largest in magnitude
    assert overall.rms == pytest.approx(math.sqrt((left.rms**2 + right.rms**2) / 2))
    assert overall.rms_peak == max(left.rms_peak, right.rms_peak)
    assert overall.rms_trough == min(left.rms_trough, right.rms_trough)
    assert overall.peak_count == (left.peak_count + right.peak_count) / 2
    assert overall.crest_factor is None and left.crest_factor == pytest.approx(left.peak / left.rms)


# --- the real SoX --------------------------------------------------------------------------------------------


def _signal(kind: str, n: int) -> np.ndarray:
    t = np.arange(n) / SR
    rng = np.random.default_rng(len(kind))
    if kind == "sine":
        return 0.5 * np.sin(2 * np.pi * 440 * t)
    if kind == "noise":
        return np.clip(0.2 * rng.standard_normal(n), -1, 1)
    if kind == "clipped":
        return np.clip(1.7 * np.sin(2 * np.pi * 100 * t), -1, 1)
    if kind == "dc":
        return 0.25 + 0.01 * np.sin(2 * np.pi * 50 * t)
    if kind == "silence":
        return np.zeros(n)
    if kind == "bursts":
        return 0.8 * np.sin(2 * np.pi * 1000 * t) * (t % 0.5 < 0.1) + 0.001 * rng.standard_normal(n)
    raise AssertionError(kind)


CASES = [
    ("sine", "PCM_16", 1),
    ("noise", "PCM_16", 1),
    ("clipped", "PCM_16", 1),
    ("dc", "PCM_24", 1),
    ("silence", "PCM_16", 1),
    ("sine", "PCM_U8", 1),
    ("noise", "PCM_24", 1),
    ("bursts", "PCM_32", 1),
    ("noise", "FLOAT", 1),
    ("sine", "FLOAT", 1),
    ("stereo", "PCM_16", 2),
    ("three", "PCM_24", 3),
]


def _write(path, kind: str, subtype: str, n: int = 3 * SR) -> None:
    if kind == "stereo":
        data = np.stack([_signal("sine", n), _signal("clipped", n)], axis=1)
    elif kind == "three":
        data = np.stack([_signal("noise", n), _signal("dc", n), _signal("bursts", n)], axis=1)
    else:
        data = _signal(kind, n)
    sf.write(path, data.astype(np.float32) if subtype == "FLOAT" else data, SR, subtype=subtype)


def _assert_like_sox(report: dict, rows: dict[str, list[str]]) -> None:
    columns = [report["overall"]] + (report["levels"] if report["channels"] > 1 else [])
    for field, cells in rows.items():
        if field in ("n_samples", "length_s", "scale_max", "window_s"):
            continue
        for column, cell in zip(columns, cells, strict=True):
            ours = column[field]
            if field == "bit_depth":
                assert f"{ours[0]}/{ours[1]}" == cell, field
            elif field == "peak_count":
                assert sigfigs3(ours) == cell, field
            elif cell in ("-inf", "-"):
                assert ours is None, field
            elif field.endswith("_db"):
                assert abs(ours - float(cell)) <= 0.01, (field, ours, cell)
            elif field in ("crest_factor", "flat_factor"):
                assert abs(ours - float(cell)) <= 0.01, (field, ours, cell)
            else:  # linear levels, printed with 6 decimals
                assert abs(ours - float(cell)) <= 5.1e-7, (field, ours, cell)
    assert sigfigs3(report["n_samples"]) == rows["n_samples"][0]
    assert f"{report['duration_s']:.3f}" == rows["length_s"][0]
    assert f"{report['window_s']:.3f}" == rows["window_s"][0]


@pytest.mark.slow
@pytest.mark.parametrize("kind, subtype, channels", CASES, ids=[f"{k}-{s}" for k, s, _ in CASES])
def test_equal_to_sox_stats(tmp_path, kind: str, subtype: str, channels: int) -> None:
    path = tmp_path / f"{kind}.wav"
    _write(path, kind, subtype)
    _assert_like_sox(stats(str(path)), sox_stats(str(path)))


@pytest.mark.slow
@pytest.mark.parametrize("window, sox_window", [("100ms", "0.1"), ("20ms", "0.02")])
def test_window_option_is_soxs_w(tmp_path, window: str, sox_window: str) -> None:
    path = tmp_path / "bursts.wav"
    _write(path, "bursts", "PCM_16")
    _assert_like_sox(stats(str(path), StatsOptions(window=window)), sox_stats(str(path), "-w", sox_window))


@pytest.mark.slow
def test_shorter_than_the_start_up_reads_the_rms_like_sox(tmp_path) -> None:
    path = tmp_path / "short.wav"
    _write(path, "noise", "PCM_16", n=1000)  # < round(5 * 0.05 * 16000) = 4000 samples
    report = stats(str(path))
    assert report["overall"]["rms_peak_db"] == report["overall"]["rms_level_db"] == report["overall"]["rms_trough_db"]
    _assert_like_sox(report, sox_stats(str(path)))


# --- the real ffmpeg (astats) --------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("subtype", ["PCM_24", "FLOAT"])
def test_astats_extras_against_ffmpeg(tmp_path, subtype: str) -> None:
    path = tmp_path / "quiet.wav"
    _write(path, "three", subtype)
    report = stats(str(path))
    first_positive = []
    data, _ = sf.read(path, always_2d=True)
    for c in range(data.shape[1]):
        nonzero = data[data[:, c] != 0, c]
        first_positive.append(int(nonzero[0] > 0))
    for c, theirs in enumerate(ffmpeg_astats(str(path))[: report["channels"]]):
        ours = report["levels"][c]
        # ffmpeg's sign memory starts negative: it counts the first nonzero sample when it is positive.
        assert int(theirs["Zero crossings"]) == ours["zero_crossings"] + first_positive[c]
        assert abs(float(theirs["Dynamic range"]) - ours["dynamic_range_db"]) <= 1e-4
        # Not the noise floor: ffmpeg 5.1's monotonic queue returns values that are no window's maximum (README);
        # ours is held to the direct definition above.

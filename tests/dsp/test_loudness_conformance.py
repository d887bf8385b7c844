"""EBU Tech 3341 (loudness metering, "EBU mode") and Tech 3342 (loudness range): every case a file meter can be
given from its published definition, generated here at 48 kHz and 44.1 kHz and measured at the specs' tolerances.

The signals are 1 kHz sines (997 Hz gives the same readings to 0.001 LU) whose peak level in dBFS is stated per
segment, one continuous sine under a piecewise-constant envelope, stereo unless said; the true-peak cases are
sines at sr/4, sr/6, sr/8 with the stated phase, 1 s long with 10 ms fades.  Not generated: Tech 3341 cases 7 and 8 and Tech 3342
cases 5 and 6 (recorded programme, only in the EBU's files) and Tech 3341 cases 20-23 (true peak of EBU-supplied
files with no formula).  Every generated signal is first measured by libebur128 (``pyebur128``): its readings must
meet the same expectations, else the signal, not the meter, is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from audiokit.dsp.loudness import LoudnessMeter

pytestmark = pytest.mark.slow  # ~100 s of stereo per case; libebur128 polled every 10 ms

SRS = [48000, 44100]
LOUDNESS_TOL = 0.1  # LU, Tech 3341 for I, M, S
LRA_TOL = 1.0  # LU, Tech 3342
TP_ABOVE, TP_BELOW = 0.2, 0.4  # dB, Tech 3341 true peak


def tone(segments: list[tuple[float | None, float]], sr: int, *, channels: int = 2, freq: float = 1000.0) -> np.ndarray:
    """A continuous ``freq`` sine under a piecewise-constant envelope: ``(peak dBFS or None for silence, seconds)``."""
    lengths = [round(seconds * sr) for _, seconds in segments]
    env = np.concatenate([np.full(n, 0.0 if db is None else 10 ** (db / 20)) for (db, _), n in zip(segments, lengths)])
    x = env * np.sin(2 * np.pi * freq * np.arange(env.size) / sr)
    return np.tile(x, (channels, 1))


def peak_sine(sr: int, divisor: int, phase_deg: float, amplitude: float) -> np.ndarray:
    """1 s of a sine at ``sr / divisor`` with its 10 ms ends faded in and out (raised cosine): a sine that starts
    with a step from silence overshoots its own peak on reconstruction (+0.34 dB for 8 kHz at 60 deg, in libebur128
    as here), which is not what these cases measure."""
    t = np.arange(sr) / sr
    x = amplitude * np.sin(2 * np.pi * sr / divisor * t + np.radians(phase_deg))
    fade = sr // 100
    ramp = 0.5 * (1 - np.cos(np.pi * np.arange(fade) / fade))
    x[:fade] *= ramp
    x[-fade:] *= ramp[::-1]
    return np.tile(x, (2, 1))


@dataclass(frozen=True)
class Case:
    """A test signal (one or several files/segments) and what must be read from it."""

    name: str
    parts: Callable[[int], list[np.ndarray]]  # the files (or the successive segments of one file)
    expect: dict[str, list[float]]  # quantity -> expected value per part
    one_file: bool = False  # the parts are segments of one file; the quantity is read after each (a running max)
    after_s: float = field(default=0.0)  # for "S_series"/"M_series": every value from this time on


def _five_channel(sr: int) -> list[np.ndarray]:
    levels = [-28.0, -28.0, -24.0, -30.0, -30.0]  # L R C Ls Rs
    return [np.concatenate([tone([(db, 20.0)], sr, channels=1) for db in levels])]


CASES = [
    Case("3341-1", lambda sr: [tone([(-23.0, 20.0)], sr)], {"I": [-23.0], "M": [-23.0], "S": [-23.0]}),
    Case("3341-2", lambda sr: [tone([(-33.0, 20.0)], sr)], {"I": [-33.0], "M": [-33.0], "S": [-33.0]}),
    Case("3341-3", lambda sr: [tone([(-36.0, 10.0), (-23.0, 60.0), (-36.0, 10.0)], sr)], {"I": [-23.0]}),
    Case(
        "3341-4",
        lambda sr: [tone([(-72.0, 10.0), (-36.0, 10.0), (-23.0, 60.0), (-36.0, 10.0), (-72.0, 10.0)], sr)],
        {"I": [-23.0]},
    ),
    Case("3341-5", lambda sr: [tone([(-26.0, 20.0), (-20.0, 20.1), (-26.0, 20.0)], sr)], {"I": [-23.0]}),
    Case("3341-6", _five_channel, {"I": [-23.0]}),
    Case("3341-9", lambda sr: [tone([(-20.0, 1.34), (-30.0, 1.66)] * 5, sr)], {"S_series": [-23.0]}, after_s=3.0),
    Case(
        "3341-10",
        lambda sr: [tone([(None, 0.15 * i), (-23.0, 3.0), (None, 1.0)], sr) for i in range(20)],
        {"S": [-23.0] * 20},
    ),
    Case(
        "3341-11",
        lambda sr: [tone([(None, 0.15 * i), (-38.0 + i, 3.0), (None, 3.0 - 0.15 * i)], sr) for i in range(20)],
        {"S": [-38.0 + i for i in range(20)]},
        one_file=True,
    ),
    Case("3341-12", lambda sr: [tone([(-20.0, 0.18), (-30.0, 0.22)] * 25, sr)], {"M_series": [-23.0]}, after_s=1.0),
    Case(
        "3341-13",
        lambda sr: [tone([(None, 0.02 * i), (-23.0, 0.4), (None, 1.0)], sr) for i in range(20)],
        {"M": [-23.0] * 20},
    ),
    Case(
        "3341-14",
        lambda sr: [tone([(None, 0.02 * i), (-38.0 + i, 0.4), (None, 1.0 - 0.02 * i)], sr) for i in range(20)],
        {"M": [-38.0 + i for i in range(20)]},
        one_file=True,
    ),
    Case("3341-15", lambda sr: [peak_sine(sr, 4, 0.0, 0.5)], {"TP": [-6.0]}),
    Case("3341-16", lambda sr: [peak_sine(sr, 4, 45.0, 0.5)], {"TP": [-6.0]}),
    Case("3341-17", lambda sr: [peak_sine(sr, 6, 60.0, 0.5)], {"TP": [-6.0]}),
    Case("3341-18", lambda sr: [peak_sine(sr, 8, 67.5, 0.5)], {"TP": [-6.0]}),
    Case("3341-19", lambda sr: [peak_sine(sr, 4, 45.0, 1.41)], {"TP": [3.0]}),
    Case("3342-1", lambda sr: [tone([(-20.0, 20.0), (-30.0, 20.0)], sr)], {"LRA": [10.0]}),
    Case("3342-2", lambda sr: [tone([(-20.0, 20.0), (-15.0, 20.0)], sr)], {"LRA": [5.0]}),
    Case("3342-3", lambda sr: [tone([(-40.0, 20.0), (-20.0, 20.0)], sr)], {"LRA": [20.0]}),
    Case(
        "3342-4",
        lambda sr: [tone([(-50.0, 20.0), (-35.0, 20.0), (-20.0, 20.0), (-35.0, 20.0), (-50.0, 20.0)], sr)],
        {"LRA": [15.0]},
    ),
]


def within(quantity: str, measured: float, expected: float) -> bool:
    if quantity == "TP":
        return expected - TP_BELOW <= measured <= expected + TP_ABOVE
    return abs(measured - expected) <= (LRA_TOL if quantity == "LRA" else LOUDNESS_TOL)


def _series_after(series: np.ndarray, times: np.ndarray, after_s: float) -> list[float]:
    return [float(v) for v in series[times >= after_s - 1e-9]]


def audiokit_readings(case: Case, sr: int) -> dict[str, list[list[float]]]:
    """Our readings, per part: a fresh meter per file, or one meter read after each segment of a one-file case."""
    out: dict[str, list[list[float]]] = {q: [] for q in case.expect}
    meter = None
    for part in case.parts(sr):
        if meter is None or not case.one_file:
            meter = LoudnessMeter(sr, part.shape[0])
        for i in range(0, part.shape[1], 1 << 16):
            meter.push(part[:, i : i + (1 << 16)])
        r = meter.result()
        values = {
            "I": [r.integrated],
            "M": [r.momentary_max],
            "S": [r.short_term_max],
            "LRA": [math.nan if r.lra is None else r.lra],
            "TP": [20 * math.log10(float(r.true_peak.max()))] if r.true_peak is not None else [],
            "M_series": _series_after(r.momentary, r.momentary_times, case.after_s),
            "S_series": _series_after(r.short_term, r.short_term_times, case.after_s),
        }
        for q in case.expect:
            out[q].append(values[q])
    return out


def ebur128_readings(case: Case, sr: int) -> dict[str, list[list[float]]]:
    """libebur128's readings, per part: I, LRA, true peak, and M/S polled (their maxima and 100 ms series)."""
    pyebur128 = pytest.importorskip("pyebur128")
    mode = pyebur128.MeasurementMode
    out: dict[str, list[list[float]]] = {q: [] for q in case.expect}
    state = None
    # poll every 10 ms for a momentary maximum, every 100 ms for short-term ones, else add the file at once
    polled = {q[0] for q in case.expect} & {"M", "S"}
    step = sr // 100 if "M" in polled else sr // 10 if polled else 1 << 30
    per_s = sr / step
    for part in case.parts(sr):
        if state is None or not case.one_file:
            state = pyebur128.R128State(part.shape[0], sr, mode.MODE_I | mode.MODE_S | mode.MODE_LRA | mode.MODE_TRUE_PEAK)
            polls, m_max, s_max = 0, -math.inf, -math.inf
            m_series, s_series = [], []
        frames = np.ascontiguousarray(part.T)
        for i in range(0, frames.shape[0], step):
            chunk = np.ascontiguousarray(frames[i : i + step])
            state.add_frames(chunk.ravel(), chunk.shape[0])
            if chunk.shape[0] < step:
                continue
            polls += 1
            m, s = pyebur128.get_loudness_momentary(state), pyebur128.get_loudness_shortterm(state)
            m_max = max(m_max, m) if polls >= 0.4 * per_s - 1e-9 else m_max
            s_max = max(s_max, s) if polls >= 3 * per_s - 1e-9 else s_max
            if polls % round(per_s / 10) == 0 and polls / per_s >= case.after_s - 1e-9:
                m_series.append(m)
                s_series.append(s)
        values = {
            "I": [pyebur128.get_loudness_global(state)],
            "M": [m_max],
            "S": [s_max],
            "LRA": [pyebur128.get_loudness_range(state)],
            "TP": [20 * math.log10(max(pyebur128.get_true_peak(state, c) for c in range(part.shape[0])))],
            "M_series": m_series,
            "S_series": s_series,
        }
        for q in case.expect:
            out[q].append(values[q])
    return out


def failures(readings: dict[str, list[list[float]]], case: Case) -> list[str]:
    bad = []
    for quantity, expected in case.expect.items():
        for part, (want, got) in enumerate(zip(expected, readings[quantity])):
            if not got or not all(within(quantity.split("_")[0], v, want) for v in got):
                bad.append(f"{quantity}[{part}]: expected {want}, measured {got[:5]}{'...' if len(got) > 5 else ''}")
    return bad


@pytest.mark.parametrize("sr", SRS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_libebur128_reads_the_generated_signal_as_specified(case, sr):
    assert failures(ebur128_readings(case, sr), case) == []


@pytest.mark.parametrize("sr", SRS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conformance(case, sr):
    assert failures(audiokit_readings(case, sr), case) == []

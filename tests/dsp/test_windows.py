"""Tests of audiokit.dsp.windows: shapes vs scipy, figures, COLA/NOLA, spec parsing."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss

from audiokit.dsp.windows import (
    DEFAULT_KAISER_BETA,
    WINDOWS,
    WindowSpec,
    coherent_gain,
    enbw,
    get_window,
    is_cola,
    is_nola,
    nola_min,
    overlap_sum,
    parse_window_spec,
)
from audiokit.errors import ParameterError

EPS = np.finfo(np.float64).eps
SCIPY_NAME = {"rectangular": "boxcar"}
COSINE = {
    "hann": (0.5, 0.5),
    "hamming": (0.54, 0.46),
    "blackman": (0.42, 0.50, 0.08),
    "blackmanharris": (0.35875, 0.48829, 0.14128, 0.01168),
    "nuttall": (0.3635819, 0.4891775, 0.1365995, 0.0106411),
    "flattop": (0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368),
}


def scipy_window(name, n, periodic, beta=DEFAULT_KAISER_BETA):
    spec = ("kaiser", beta) if name == "kaiser" else SCIPY_NAME.get(name, name)
    return ss.get_window(spec, n, fftbins=periodic)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [1, 2, 3, 16, 255, 256, 1000])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_equal_scipy(name, n, periodic):
    w = get_window(name, n, periodic=periodic)
    ref = scipy_window(name, n, periodic)
    assert w.dtype == np.float64 and w.shape == (n,)
    np.testing.assert_allclose(w, ref, rtol=0, atol=16 * EPS)


@pytest.mark.parametrize("beta", [0.0, 2.5, 14.0])
@pytest.mark.parametrize("periodic", [True, False])
def test_kaiser_beta_equals_scipy(beta, periodic):
    np.testing.assert_allclose(
        get_window("kaiser", 128, periodic=periodic, beta=beta),
        scipy_window("kaiser", 128, periodic, beta),
        rtol=0,
        atol=16 * EPS,
    )
    np.testing.assert_array_equal(
        get_window(f"kaiser:{beta}", 128, periodic=periodic), get_window("kaiser", 128, periodic=periodic, beta=beta)
    )


def test_periodic_and_symmetric_shapes():
    n = 64
    wp = get_window("hann", n)
    ws = get_window("hann", n, periodic=False)
    assert wp[0] == 0.0 and ws[0] == 0.0 and ws[-1] == pytest.approx(0.0, abs=EPS)
    np.testing.assert_allclose(ws, ws[::-1], atol=4 * EPS)
    # periodic = symmetric of length n+1 without its last sample
    np.testing.assert_allclose(wp, get_window("hann", n + 1, periodic=False)[:-1], atol=4 * EPS)
    assert not np.allclose(wp, wp[::-1])


def test_names_case_insensitive_and_aliases():
    ref = get_window("hann", 32)
    for name in ("HANN", "Hann", " hanning "):
        np.testing.assert_array_equal(get_window(name, 32), ref)
    for alias in ("boxcar", "rect", "RECTANGULAR", "ones"):
        np.testing.assert_array_equal(get_window(alias, 5), np.ones(5))


def test_parse_window_spec():
    assert parse_window_spec("hann") == WindowSpec("hann")
    assert parse_window_spec("Kaiser") == WindowSpec("kaiser", DEFAULT_KAISER_BETA)
    spec = parse_window_spec("KAISER:5.5")
    assert spec.name == "kaiser" and spec.beta == 5.5 and str(spec) == "kaiser:5.5"
    assert parse_window_spec(str(spec)) == spec
    assert str(parse_window_spec("boxcar")) == "rectangular"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("triangle", r"unknown window 'triangle'; allowed: rectangular, hann, hamming"),
        ("hann:3", r"beta applies to the kaiser window only, got beta=3.0 for window 'hann'"),
        ("kaiser:abc", r"invalid kaiser beta 'abc' in window spec 'kaiser:abc'"),
        ("kaiser:-1", r"kaiser beta must be a finite number >= 0, got -1.0"),
        ("", r"invalid window spec ''"),
    ],
)
def test_parse_window_spec_errors(text, match):
    with pytest.raises(ParameterError, match=match):
        parse_window_spec(text)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_length(bad):
    with pytest.raises(ParameterError, match=rf"window length must be an integer > 0, got {bad!r}"):
        get_window("hann", bad)


def test_beta_only_for_kaiser():
    with pytest.raises(ParameterError, match="beta applies to the kaiser window only"):
        get_window("hamming", 8, beta=3.0)


def test_coherent_gain_and_enbw_closed_forms():
    # rectangular: gain 1, ENBW 1 bin
    assert coherent_gain(np.ones(100)) == 1.0
    assert enbw(np.ones(100)) == 1.0
    # periodic cosine-sum windows (N > 2K): gain a0, ENBW (a0^2 + sum_{k>0} a_k^2 / 2) / a0^2
    for name, a in COSINE.items():
        w = get_window(name, 512)
        assert coherent_gain(w) == pytest.approx(a[0], rel=1e-13)
        expected = (a[0] ** 2 + 0.5 * sum(ak**2 for ak in a[1:])) / a[0] ** 2
        assert enbw(w) == pytest.approx(expected, rel=1e-12)
    assert enbw(get_window("hann", 512)) == pytest.approx(1.5, rel=1e-13)


def test_enbw_zero_sum_refused():
    with pytest.raises(ParameterError, match="sums to zero"):
        enbw(np.array([1.0, -1.0]))


def test_cola_hann():
    w = get_window("hann", 512)
    assert is_cola(w, 256) and is_cola(w, 128)
    np.testing.assert_allclose(overlap_sum(w, 256), np.ones(256), atol=4 * EPS)
    np.testing.assert_allclose(overlap_sum(w, 128), np.full(128, 2.0), atol=8 * EPS)
    assert not is_cola(get_window("hann", 512, periodic=False), 256)
    assert not is_cola(w, 200)
    assert is_cola(np.ones(100), 100) and is_cola(np.ones(100), 50)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("periodic", [True, False])
def test_cola_nola_agree_with_scipy(name, periodic):
    n = 64
    w = get_window(name, n, periodic=periodic)
    for hop in (1, 7, 16, 21, 32, 48, 63, 64, 65, 100):
        noverlap = n - hop
        if noverlap >= 0:
            assert is_cola(w, hop) == ss.check_COLA(w, n, noverlap), (name, hop)
            assert is_nola(w, hop) == ss.check_NOLA(w, n, noverlap), (name, hop)
        else:
            assert not is_nola(w, hop) and nola_min(w, hop) == 0.0


def test_nola_min():
    w = get_window("hann", 512)
    assert nola_min(w, 512) == 0.0  # periodic Hann: w[0] = 0 is the only cover of offset 0
    assert not is_nola(w, 512)
    assert nola_min(w, 256) == pytest.approx(0.5, rel=1e-12)  # sin^4 + cos^4 >= 1/2
    assert is_nola(np.ones(10), 10) and not is_nola(np.ones(10), 11)


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_bad_hop(bad):
    with pytest.raises(ParameterError, match=rf"hop must be an integer > 0, got {bad!r}"):
        overlap_sum(np.ones(4), bad)

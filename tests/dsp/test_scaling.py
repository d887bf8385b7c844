"""Tests of audiokit.dsp.scaling: power, magnitude, dB vs librosa, streaming rescale."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from audiokit.dsp.scaling import (
    AMIN,
    DB_FACTOR,
    db_to_magnitude,
    db_to_power,
    magnitude,
    power,
    rescale_db,
    to_db,
)
from audiokit.errors import ParameterError


@pytest.fixture
def rng():
    return np.random.default_rng(11)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_power_and_magnitude(rng, dtype):
    X = (rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7))).astype(dtype)
    eps = np.finfo(X.real.dtype).eps
    P = power(X)
    assert P.dtype == X.real.dtype
    ref = np.abs(X.astype(np.complex128)) ** 2
    np.testing.assert_allclose(P, ref, rtol=4 * eps)
    np.testing.assert_allclose(magnitude(X), np.sqrt(ref), rtol=4 * eps)
    out = np.empty(X.shape, X.real.dtype)
    assert power(X, out=out) is out
    np.testing.assert_array_equal(power(np.array([3.0, -2.0])), [9.0, 4.0])


def spectra(rng, dtype):
    S = rng.exponential(size=(40, 60)).astype(dtype) * 10
    S[:, :5] = 0.0  # silence
    S[3, 7] = 1e-14
    return S


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ref", [1.0, "max", 0.5, 1e-12])
@pytest.mark.parametrize("amin", [None, 1e-6])
@pytest.mark.parametrize("top_db", [80.0, None, 20.0])
def test_power_to_db_equals_librosa(rng, dtype, ref, amin, top_db):
    librosa = pytest.importorskip("librosa")
    S = spectra(rng, dtype)
    D = to_db(S, ref=ref, amin=amin, top_db=top_db)
    expected = librosa.power_to_db(S, ref=np.max if ref == "max" else ref, amin=1e-10 if amin is None else amin, top_db=top_db)
    assert D.dtype == dtype and np.all(np.isfinite(D))
    np.testing.assert_allclose(D, expected, rtol=0, atol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("ref", [1.0, "max", 2.0])
@pytest.mark.parametrize("top_db", [80.0, None])
def test_amplitude_to_db_equals_librosa(rng, ref, top_db):
    librosa = pytest.importorskip("librosa")
    S = np.sqrt(spectra(rng, np.float64))
    D = to_db(S, kind="magnitude", ref=ref, top_db=top_db)
    expected = librosa.amplitude_to_db(S, ref=np.max if ref == "max" else ref, top_db=top_db)
    np.testing.assert_allclose(D, expected, rtol=0, atol=1e-10)


@pytest.mark.slow
def test_complex_input(rng):
    librosa = pytest.importorskip("librosa")
    X = rng.standard_normal((8, 9)) + 1j * rng.standard_normal((8, 9))
    np.testing.assert_allclose(to_db(X, top_db=None), 10 * np.log10(np.abs(X) ** 2), atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # librosa warns about phase
        ref = librosa.amplitude_to_db(X, top_db=None)
    np.testing.assert_allclose(to_db(X, kind="magnitude", top_db=None), ref, atol=1e-10)


def test_silence_is_finite_and_floored():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D = to_db(np.zeros(10), top_db=None)
        Dm = to_db(np.zeros(10), kind="magnitude", top_db=None)
        Dmax = to_db(np.zeros(10), ref="max")
    np.testing.assert_array_equal(D, -100.0)
    np.testing.assert_array_equal(Dm, -100.0)
    np.testing.assert_array_equal(Dmax, 0.0)


def test_db_definitions():
    assert to_db(np.array([100.0]), top_db=None)[0] == pytest.approx(20.0)
    assert to_db(np.array([10.0]), kind="magnitude", top_db=None)[0] == pytest.approx(20.0)
    # 10 log10(P) == 20 log10(|X|) for P = |X|^2
    m = np.array([0.3, 2.0, 7.5])
    np.testing.assert_allclose(to_db(m**2, top_db=None), to_db(m, kind="magnitude", top_db=None), atol=1e-12)
    np.testing.assert_allclose(db_to_power(to_db(m**2, top_db=None)), m**2, rtol=1e-12)
    np.testing.assert_allclose(db_to_magnitude(to_db(m, kind="magnitude", top_db=None), ref=2.0), 2 * m, rtol=1e-12)


@pytest.mark.parametrize("top_db", [None, 40.0])
def test_rescale_db_equals_global(rng, top_db):
    """Block-wise dB with ref=1 then rescale == one-shot ref='max' (the streaming recipe)."""
    S = spectra(rng, np.float64)
    blocks = np.array_split(S, 7, axis=1)
    parts = [to_db(b, top_db=None) for b in blocks]
    running_max = max(float(p.max()) for p in parts)
    D = np.concatenate(parts, axis=1)
    out = rescale_db(D, ref_db="max", top_db=top_db, max_db=running_max, out=D)
    assert out is D
    np.testing.assert_allclose(D, to_db(S, ref="max", top_db=top_db), rtol=0, atol=1e-10)
    # fixed reference level
    np.testing.assert_allclose(rescale_db(to_db(S, top_db=None), ref_db=6.0), to_db(S, ref=10**0.6, top_db=None), atol=1e-10)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kind": "energy"}, r"kind must be one of power, magnitude; got 'energy'"),
        ({"amin": 0.0}, r"amin must be a number > 0, got 0.0"),
        ({"amin": True}, r"amin must be a number > 0, got True"),
        ({"top_db": True}, r"top_db must be a number >= 0 or None, got True"),
        ({"ref": float("inf")}, r"ref must be a number > 0 or 'max', got inf"),
        ({"top_db": -1.0}, r"top_db must be a number >= 0 or None, got -1.0"),
        ({"ref": "min"}, r"ref must be a number > 0 or 'max', got 'min'"),
    ],
)
def test_to_db_errors(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        to_db(np.ones(3), **kwargs)


def test_rescale_db_errors():
    with pytest.raises(ParameterError, match=r"ref_db must be a number or 'max', got 'peak'"):
        rescale_db(np.ones(3), ref_db="peak")


def test_one_floor_table_and_db_factor():
    """AMIN floors |X|**2 and |X| at the same level, -100 dB; DB_FACTOR turns log10 into dB."""
    assert AMIN == {"power": 1e-10, "magnitude": 1e-5} and DB_FACTOR == {"power": 10.0, "magnitude": 20.0}
    for kind in ("power", "magnitude"):
        assert DB_FACTOR[kind] * np.log10(AMIN[kind]) == pytest.approx(-100.0)
        assert to_db(np.zeros(2), kind=kind, top_db=None).tolist() == [-100.0, -100.0]
    import audiokit.dsp.stft as stft

    assert (stft.AMIN_POWER, stft.AMIN_MAGNITUDE) == (AMIN["power"], AMIN["magnitude"])


def test_reference_db_is_the_peak_or_the_log_of_ref():
    from audiokit.dsp.scaling import reference_db

    assert reference_db("max", -3.5, "power") == -3.5
    assert reference_db(100.0, 0.0, "power") == pytest.approx(20.0)
    assert reference_db(100.0, 0.0, "magnitude") == pytest.approx(40.0)

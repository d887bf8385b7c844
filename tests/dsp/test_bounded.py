"""audiokit.dsp.bounded.minimize_bounded against SciPy's bounded Brent search, which it reproduces step for step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from audiokit.dsp.bounded import bounded_search, minimize_bounded


def _functions():
    rng = np.random.default_rng(20)
    yield lambda x: (x - 0.3) ** 2, -1.0, 1.0  # an interior minimum
    yield lambda x: x, -2.0, 3.0  # the minimum on the lower bound
    yield lambda x: -x, -2.0, 3.0  # on the upper bound
    yield lambda x: math.cos(3.0 * x) + 0.1 * x, -0.5, 2.5  # several local minima
    yield lambda x: abs(x - 1e-9) ** 0.5, -1.0, 1.0  # a cusp
    yield lambda x: 1.0, 0.0, 1.0  # flat
    for _ in range(20):
        a, b, c = rng.normal(size=3)
        lo = float(rng.uniform(-2, 0))
        yield (lambda x, a=a, b=b, c=c: a * math.sin(b * x) + c * x * x), lo, lo + float(rng.uniform(1e-6, 3))


def _recorded(func, calls):
    """``func`` that appends each point it is evaluated at to ``calls``."""

    def wrapped(x):
        calls.append(float(x))
        return func(float(x))

    return wrapped


@pytest.mark.parametrize("xatol", [1e-12, 1e-5])
def test_same_bits_as_scipy(xatol):
    for func, lo, hi in _functions():
        ours_calls: list[float] = []
        theirs_calls: list[float] = []
        ours = minimize_bounded(_recorded(func, ours_calls), lo, hi, xatol=xatol)
        res = minimize_scalar(_recorded(func, theirs_calls), bounds=(lo, hi), method="bounded", options={"xatol": xatol})
        assert ours == (float(res.x), float(res.fun))
        assert ours_calls == theirs_calls  # the same evaluations, in the same order
        assert all(lo <= x <= hi for x in ours_calls)


def test_maxiter_caps_the_evaluations():
    calls: list[float] = []
    minimize_bounded(_recorded(lambda x: math.cos(40.0 * x), calls), 0.0, 10.0, xatol=1e-15, maxiter=7)
    assert len(calls) == 7


def test_the_generator_is_the_same_search():
    """bounded_search yields the points minimize_bounded evaluates, in order, and returns its result."""
    for func, lo, hi in _functions():
        calls: list[float] = []
        expected = minimize_bounded(_recorded(func, calls), lo, hi, xatol=1e-12)
        points: list[float] = []
        search = bounded_search(lo, hi, xatol=1e-12)
        x = next(search)
        while True:
            points.append(x)
            try:
                x = search.send(func(x))
            except StopIteration as done:
                result = done.value
                break
        assert points == calls and result == expected

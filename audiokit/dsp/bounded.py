"""Bounded scalar minimisation: Brent's method on an interval (Forsythe, Malcolm & Moler's ``fmin``).

:func:`minimize_bounded` performs exactly the floating-point steps of SciPy's
``scipy.optimize.minimize_scalar(method="bounded")`` (``_minimize_scalar_bounded``,
BSD-3-Clause), so it returns the same ``x`` and ``f(x)`` to the last bit
(``tests/dsp/test_bounded.py`` compares them), without importing
``scipy.optimize`` (about 0.3-1 s per process) or building an ``OptimizeResult``
per call: :mod:`audiokit.dsp.peaks` runs one search per fitted tone.

:func:`bounded_search` is the same search as a generator: it yields each
point and is sent ``f(x)``, so that many searches (one per channel being
fitted) can advance together and have their points evaluated in one batched
call; :func:`minimize_bounded` drives it with a function.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator

__all__ = ["bounded_search", "minimize_bounded"]

_SQRT_EPS = math.sqrt(2.2e-16)
_GOLDEN_MEAN = 0.5 * (3.0 - math.sqrt(5.0))


def _sign(x: float) -> float:
    """``np.sign(x) + (x == 0)``: 1 for x >= 0, -1 below (the step direction)."""
    return 1.0 if x >= 0 else -1.0


def minimize_bounded(
    func: Callable[[float], float], lo: float, hi: float, *, xatol: float, maxiter: int = 500
) -> tuple[float, float]:
    """Minimum of ``func`` on ``[lo, hi]`` by golden-section and parabolic steps (Brent).

    Parameters
    ----------
    func : callable float -> float
        The function; it is evaluated at most ``maxiter`` times, never outside ``[lo, hi]``.
    lo, hi : float, lo <= hi
        The interval (finite).
    xatol : float > 0
        Absolute tolerance of ``x``: the search stops when the bracket around
        the best point is within ``2·(sqrt(2.2e-16)·|x| + xatol/3)``.
    maxiter : int
        Most evaluations of ``func``.

    Returns
    -------
    x, fx : float, float
        The best point found and ``func(x)`` (SciPy's ``res.x``, ``res.fun``).
    """
    search = bounded_search(lo, hi, xatol=xatol, maxiter=maxiter)
    x = next(search)
    while True:
        try:
            x = search.send(float(func(x)))
        except StopIteration as done:
            return done.value


def bounded_search(lo: float, hi: float, *, xatol: float, maxiter: int = 500) -> Generator[float, float, tuple[float, float]]:
    """:func:`minimize_bounded` as a generator: yields each point ``x`` in turn, to be sent ``f(x)`` back.

    The arguments are :func:`minimize_bounded`'s; the generator's return value
    (``StopIteration.value``) is its ``(x, fx)``.  The steps are the same
    floating-point operations in the same order whoever evaluates ``f``.
    """
    a, b = float(lo), float(hi)
    fulc = a + _GOLDEN_MEAN * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    fx = float((yield xf))
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = True
        if abs(e) > tol1:  # try a parabola through the three best points
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = rat
            if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    rat = tol1 * _sign(xm - xf)
            else:
                golden = True
        if golden:
            e = (a - xf) if xf >= xm else (b - xf)
            rat = _GOLDEN_MEAN * e
        x = xf + _sign(rat) * max(abs(rat), tol1)
        fu = float((yield x))
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc == xf or fulc == nfc:
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxiter:
            break
    return xf, fx

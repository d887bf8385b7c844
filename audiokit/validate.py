"""Argument checks shared by the core: one definition of "a whole number", "a real number", "a choice".

Python's ``bool`` is an ``int`` and numpy scalars are not Python numbers, so
"is this a whole number of samples" needs three ``isinstance`` tests that
used to be written out by hand in every module.  The predicates here say it
once; the ``check_*`` functions raise :class:`~audiokit.errors.ParameterError`
with the caller's message (``{name}`` and ``{value!r}`` are filled in) so each
module keeps its own wording.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import TypeGuard, TypeVar, cast

import numpy as np

from .errors import ParameterError

__all__ = ["is_int", "is_real", "check_int", "check_real", "check_choice"]

_Choice = TypeVar("_Choice", bound=str)


def is_int(value: object) -> TypeGuard[int]:
    """True for Python and numpy integers, False for ``bool``/``numpy.bool_`` and everything else."""
    return isinstance(value, (Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_real(value: object) -> TypeGuard[float]:
    """True for Python and numpy integers and floats (not ``bool``, not complex)."""
    return isinstance(value, (Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def check_int(
    value: object, name: str, *, minimum: int | None = None, maximum: int | None = None, message: str | None = None
) -> int:
    """Return ``int(value)`` when it is a whole number within ``[minimum, maximum]``.

    Parameters
    ----------
    value : object
        What the caller received.
    name : str
        Parameter name used in the default message.
    minimum, maximum : int, optional
        Inclusive bounds.
    message : str, optional
        Error text with ``{name}``, ``{value!r}``, ``{minimum}``, ``{maximum}`` placeholders.

    Raises
    ------
    ParameterError
        When the value is not an integer (``bool`` included) or out of bounds.
    """
    if is_int(value):
        number = int(value)
        if (minimum is None or number >= minimum) and (maximum is None or number <= maximum):
            return number
    if message is None:
        bounds = " >= {minimum}" if maximum is None else " from {minimum} to {maximum}"
        message = "{name} must be a whole number" + (bounds if minimum is not None else "") + ", got {value!r}"
    raise ParameterError(message.format(name=name, value=value, minimum=minimum, maximum=maximum))


def check_real(value: object, name: str, *, positive: bool = False, finite: bool = True, message: str | None = None) -> float:
    """Return ``float(value)`` when it is a real number (finite, and > 0 when ``positive``).

    Raises
    ------
    ParameterError
        When the value is not a real number (``bool`` included), not finite, or not > 0 when required.
    """
    ok = is_real(value)
    number = float(value) if is_real(value) else math.nan
    if ok and finite and not math.isfinite(number):
        ok = False
    if ok and positive and not number > 0:
        ok = False
    if not ok:
        if message is None:
            message = (
                "{name} must be a " + ("finite " if finite else "") + "number" + (" > 0" if positive else "") + ", got {value!r}"
            )
        raise ParameterError(message.format(name=name, value=value))
    return number


def check_choice(value: object, name: str, allowed: Sequence[_Choice], *, message: str | None = None) -> _Choice:
    """Return ``value`` when it is one of ``allowed`` (exact match), typed as they are (e.g. a ``Literal``).

    Raises
    ------
    ParameterError
        Naming the bad value and every allowed one.
    """
    if isinstance(value, str) and value in allowed:
        return cast(_Choice, value)  # equal to one of ``allowed``: of their type (mypy does not narrow by ``in``)
    if message is None:
        message = "unknown {name} {value!r}; allowed: {allowed}"
    raise ParameterError(message.format(name=name, value=value, allowed=", ".join(allowed)))

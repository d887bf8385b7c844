"""Tests of audiokit.validate: the shared argument checks (typed by TypeGuards and a TypeVar, no ``type: ignore``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audiokit.errors import ParameterError
from audiokit.validate import check_choice, check_int, check_real, is_int, is_real


@pytest.mark.parametrize("value", [0, 7, -3, np.int16(5), np.uint64(2**64 - 1), 10**30])
def test_check_int_gives_a_python_int_equal_to_the_value(value):
    out = check_int(value, "n")
    assert type(out) is int and out == int(value)


@pytest.mark.parametrize(
    "value, bounds, ok",
    [
        (5, {"minimum": 5}, True),
        (4, {"minimum": 5}, False),
        (np.int8(-1), {"minimum": 0}, False),
        (np.uint64(2**64 - 1), {"minimum": 0, "maximum": 2**64 - 1}, True),
        (np.uint64(2**64 - 1), {"maximum": 2**63}, False),
        (9, {"minimum": 1, "maximum": 9}, True),
        (10, {"minimum": 1, "maximum": 9}, False),
    ],
)
def test_check_int_bounds_are_inclusive_and_exact(value, bounds, ok):
    if ok:
        assert check_int(value, "n", **bounds) == int(value)
    else:
        with pytest.raises(ParameterError, match="n must be a whole number"):
            check_int(value, "n", **bounds)


@pytest.mark.parametrize("value", [True, np.bool_(False), 1.0, "3", None, 2 + 0j])
def test_check_int_refuses_what_is_not_a_whole_number(value):
    assert not is_int(value)
    with pytest.raises(ParameterError, match=r"^bad n \S+ \(>= 1\)$"):
        check_int(value, "n", minimum=1, message="bad {name} {value!r} (>= {minimum})")


def test_check_int_default_messages_name_the_bounds():
    with pytest.raises(ParameterError, match=r"^n must be a whole number >= 2, got 1$"):
        check_int(1, "n", minimum=2)
    with pytest.raises(ParameterError, match=r"^n must be a whole number from 2 to 4, got 5$"):
        check_int(5, "n", minimum=2, maximum=4)
    with pytest.raises(ParameterError, match=r"^n must be a whole number, got 'x'$"):
        check_int("x", "n")


def test_check_real():
    assert check_real(np.float32(0.5), "x") == 0.5 and type(check_real(3, "x")) is float
    assert math.isinf(check_real(math.inf, "x", finite=False))
    for value, kwargs in [(math.nan, {}), (math.inf, {}), (0.0, {"positive": True}), (True, {}), ("1", {})]:
        with pytest.raises(ParameterError, match="x must be a"):
            check_real(value, "x", **kwargs)
    assert is_real(np.int64(1)) and not is_real(1j)


class _Text(str):
    """A str subclass (as an enum of strings would be): check_choice returns the caller's object itself."""


def test_check_choice_returns_the_value_itself():
    value = _Text("kaldi")
    assert check_choice(value, "method", ("kaldi", "librosa")) is value
    with pytest.raises(ParameterError, match=r"^unknown method 'htk'; allowed: kaldi, librosa$"):
        check_choice("htk", "method", ("kaldi", "librosa"))
    with pytest.raises(ParameterError, match="allowed"):
        check_choice(1, "method", ("1",))

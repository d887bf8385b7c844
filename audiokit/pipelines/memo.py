"""Per-process memo of the pure steps a batch repeats for every input (options parsed, STFT plans at one rate).

:func:`memoized` caches a function of hashable arguments like :func:`functools.lru_cache`, and replays the warnings
its first call raised every time it answers from the cache: a warning about the options (``--hop`` longer than
``--win``) still reaches every input's record in a batch, as it does in a run of the single-file command.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["memoized"]

T = TypeVar("T")


def memoized(maxsize: int = 32) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: cache on the (hashable) arguments, replaying the first call's warnings on every call."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.lru_cache(maxsize=maxsize)
        def first(*args: Any, **kwargs: Any) -> tuple[T, list[warnings.WarningMessage]]:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = fn(*args, **kwargs)
            return value, caught

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> T:
            value, caught = first(*args, **kwargs)
            for w in caught:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            return value

        return call

    return decorate

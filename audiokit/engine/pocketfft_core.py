"""scipy.fft's compiled pocketfft without the ``scipy.fft`` package import (start-up cost).

``import scipy.fft`` runs ``scipy/fft/__init__.py``: ``scipy._lib._array_api`` (array-api-compat, which imports
``numpy.f2py`` and ``numpy.testing``), ``scipy.special`` through the FFTLog functions, the uarray dispatch: ~0.25
CPU-s here, more than pYIN spends on a 12 s file.  For a NumPy array, ``scipy.fft.rfft(x, n=n, axis=-1,
workers=w)`` ends in one call of the extension module ``scipy.fft._pocketfft.pypocketfft``
(``scipy/fft/_pocketfft/basic.py``: ``r2c``, ``c2r``, ``c2c``) after a few lines of argument handling.
:func:`rfft`, :func:`irfft` and :func:`c2c` are those lines for the arguments the engine passes (last axis,
``workers`` an int >= 1), calling the same extension with the same arguments, so the results are scipy's bit for
bit (``tests/engine/test_pocketfft_core.py`` compares them over dtypes, lengths, padding and cropping).

:func:`load` imports the extension alone and registers it under its own name, so a later ``import scipy.fft`` (a
user, librosa, a test) reuses it: one extension per process either way.  If scipy.fft was imported already, its
extension is used.  Any other scipy layout (the extension moved or renamed): :func:`load` raises ImportError and
the scipy backend calls ``scipy.fft`` itself (:mod:`audiokit.engine.fallback`), same numbers, dearer import.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types

import numpy as np

__all__ = ["c2c", "irfft", "load", "rfft"]

_NAME = "scipy.fft._pocketfft.pypocketfft"
_core: types.ModuleType | None = None


def load() -> types.ModuleType:
    """The ``pypocketfft`` extension module (imported once per process, without ``scipy.fft``'s package).

    Raises
    ------
    ImportError
        scipy is not installed (or it, ``scipy.fft`` or the extension is None in ``sys.modules``), or its pocketfft extension is not where
        scipy 1.4 - 1.17 keep it (``scipy/fft/_pocketfft/pypocketfft.*``), or it lacks ``r2c``/``c2r``/``c2c``.
    """
    global _core
    for name in ("scipy", "scipy.fft", "scipy.fft._pocketfft", _NAME):  # an import halted on purpose
        if name in sys.modules and sys.modules[name] is None:
            raise ImportError(f"import of {name} halted; None in sys.modules", name=name)
    if _core is not None:
        return _core
    extension = sys.modules.get(_NAME)
    if extension is None:
        spec = importlib.util.find_spec("scipy")  # locates the package, runs nothing
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("No module named 'scipy'", name="scipy")
        folders = [f"{folder}/fft/_pocketfft" for folder in spec.submodule_search_locations]
        ext_spec = importlib.machinery.PathFinder.find_spec(_NAME, folders)
        if (
            ext_spec is None
            or ext_spec.loader is None
            or not isinstance(ext_spec.loader, importlib.machinery.ExtensionFileLoader)
        ):
            raise ImportError(f"scipy has no compiled module {_NAME}", name=_NAME)
        extension = importlib.util.module_from_spec(ext_spec)
        sys.modules[_NAME] = extension
        try:
            ext_spec.loader.exec_module(extension)
        except BaseException:
            sys.modules.pop(_NAME, None)
            raise
    if not _works(extension):
        raise ImportError(f"{_NAME} does not take scipy 1.4-1.17's arguments", name=_NAME)
    _core = extension
    return extension


def _works(extension: types.ModuleType) -> bool:
    """The extension's ``r2c``/``c2r``/``c2c`` take the arguments below and transform an impulse exactly: the DFT of
    ``[1, 0, 0, 0]`` is ``[1, 1, 1, (1)]``, its inverse the impulse again (``1/n`` scaling included)."""
    impulse = np.array([[1.0, 0.0, 0.0, 0.0]])
    try:
        half = extension.r2c(impulse, (-1,), True, 0, None, 1)
        back = extension.c2r(half, (-1,), 4, False, 2, None, 1)
        full = extension.c2c(impulse + 0.0j, (-1,), True, 0, None, 1)
        again = extension.c2c(full, (-1,), False, 2, None, 1)
    except Exception:  # another signature: the public scipy.fft
        return False
    return bool(np.array_equal(half, np.ones((1, 3))) and np.array_equal(back, impulse)) and bool(
        np.array_equal(full, np.ones((1, 4))) and np.array_equal(again, impulse)
    )


def _asfarray(x: np.ndarray) -> np.ndarray:
    """scipy's ``_asfarray``: float16 -> float32, integers -> float64, native byte order, aligned."""
    if x.dtype == np.float16:
        return np.asarray(x, np.float32)
    if x.dtype.kind not in "fc":
        return np.asarray(x, np.float64)
    return np.array(x, dtype=x.dtype.newbyteorder("="), copy=True if not x.flags["ALIGNED"] else None)


def _fix_length(x: np.ndarray, n: int) -> tuple[np.ndarray, bool]:
    """scipy's ``_fix_shape_1d`` on the last axis: the first ``n`` items, zero-padded to ``n``; whether it copied."""
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    if x.shape[-1] >= n:
        return x[..., :n], False
    padded = np.zeros((*x.shape[:-1], n), x.dtype)
    padded[..., : x.shape[-1]] = x
    return padded, True


def rfft(x: np.ndarray, n: int, workers: int) -> np.ndarray:
    """``scipy.fft.rfft(x, n=n, axis=-1, workers=workers)`` for a real NumPy array ``x``."""
    tmp = _asfarray(x)
    if tmp.dtype.kind == "c":
        raise TypeError("x must be a real sequence")
    tmp, _ = _fix_length(tmp, n)
    out: np.ndarray = load().r2c(tmp, (-1,), True, 0, None, workers)
    return out


def irfft(x: np.ndarray, n: int, workers: int, *, forward_norm: bool = False) -> np.ndarray:
    """``scipy.fft.irfft(x, n=n, axis=-1, workers=workers)`` (``norm="forward"`` if ``forward_norm``: unscaled)."""
    tmp = _asfarray(x)
    if tmp.dtype.kind != "c":
        tmp = tmp + 0.0j
    tmp, _ = _fix_length(tmp, n // 2 + 1)
    out: np.ndarray = load().c2r(tmp, (-1,), n, False, 0 if forward_norm else 2, None, workers)
    return out


def c2c(x: np.ndarray, n: int, workers: int, *, inverse: bool) -> np.ndarray:
    """``scipy.fft.fft`` (or ``ifft`` if ``inverse``) ``(x, n=n, axis=-1, workers=workers)`` for a NumPy array."""
    tmp = _asfarray(x)
    overwrite = tmp is not x and tmp.base is None  # scipy's _datacopied: a private copy may be overwritten
    tmp, copied = _fix_length(tmp, n)
    out = tmp if (overwrite or copied) and tmp.dtype.kind == "c" else None
    result: np.ndarray = load().c2c(tmp, (-1,), not inverse, 2 if inverse else 0, out, workers)
    return result

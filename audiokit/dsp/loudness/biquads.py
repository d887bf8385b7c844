"""Second-order sections run over blocks, with their state carried: scipy's compiled ``sosfilt`` kernel.

``scipy.signal.sosfilt`` is a thin wrapper over the Cython kernel ``scipy.signal._sosfilt._sosfilt(sos, x, zi)``
(in place on C-contiguous ``x`` of shape ``(n_signals, n)`` and ``zi`` of shape ``(n_signals, n_sections, 2)``,
direct form II transposed).  Importing ``scipy.signal`` costs ~1.1 CPU-s and ~70 MiB resident (it pulls in
``scipy.stats`` for peak finding) -- more than measuring a 10-minute file -- so :func:`sos_filter` loads the
kernel's extension module alone, from scipy's own folder, and checks it once on a closed form (a one-pole
section's impulse response is ``p^n``).  If that fails in any way (another scipy layout), it uses the public
``scipy.signal.sosfilt``: the same kernel, the same numbers, only the import is dearer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["sos_filter"]

Kernel = Callable[[np.ndarray, np.ndarray, np.ndarray], None]


def _public_kernel(sos: np.ndarray, x: np.ndarray, zi: np.ndarray) -> None:
    """The kernel's contract through the public ``scipy.signal.sosfilt`` (its ``zi`` is ``(n_sections, n, 2)``)."""
    from scipy.signal import sosfilt

    y, zf = sosfilt(sos, x, axis=-1, zi=zi.transpose(1, 0, 2))
    x[...] = y
    zi[...] = zf.transpose(1, 0, 2)


def _works(kernel: Kernel) -> bool:
    """The kernel gives a one-pole section's impulse response, ``0.5^n``, and its final state."""
    sos = np.array([[1.0, 0.0, 0.0, 1.0, -0.5, 0.0]])
    x = np.zeros((1, 8))
    x[0, 0] = 1.0
    zi = np.zeros((1, 1, 2))
    kernel(sos, x, zi)
    return bool(np.array_equal(x[0], 0.5 ** np.arange(8)) and zi[0, 0, 0] == 0.5**8)


@functools.cache
def _kernel() -> Kernel:
    """scipy's compiled kernel, loaded without ``scipy.signal``'s package import, else the public wrapper."""
    try:
        import importlib.util

        import scipy

        (path,) = sorted((Path(scipy.__file__).parent / "signal").glob("_sosfilt.*"))[:1]
        spec = importlib.util.spec_from_file_location("scipy.signal._sosfilt", path)
        if spec is None or spec.loader is None:
            return _public_kernel
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel: Kernel = module._sosfilt
        return kernel if _works(kernel) else _public_kernel
    except Exception:  # any other scipy layout: the public function
        return _public_kernel


def sos_filter(sos: np.ndarray, x: np.ndarray, zi: np.ndarray) -> np.ndarray:
    """Filter the rows of ``x`` by the sections ``sos``, updating their state ``zi`` in place.

    Parameters
    ----------
    sos : np.ndarray, shape (n_sections, 6), float64
        ``[b0, b1, b2, 1, a1, a2]`` per section (``scipy.signal`` layout).
    x : np.ndarray, shape (n_signals, n)
        The input (not modified).
    zi : np.ndarray, shape (n_signals, n_sections, 2), float64, C-contiguous
        Each signal's section states (direct form II transposed), carried from block to block.

    Returns
    -------
    np.ndarray, shape (n_signals, n), float64
        The filtered rows, equal to ``scipy.signal.sosfilt(sos, x, axis=-1, zi=...)`` bit for bit.
    """
    y = np.array(x, dtype=np.float64, order="C")
    _kernel()(sos, y, zi)
    return y

"""A fixed sparse matrix (a mel filter bank) times blocks of dense vectors, without importing ``scipy.sparse``.

``import scipy.sparse`` costs more than ``import numpy`` itself (its array-API layer imports numpy.f2py,
numpy.ma, numpy.testing, ...), which is most of a short ``audiokit mel`` job (issue 13).  The product
needs only scipy's compiled CSR kernel, ``scipy/sparse/_sparsetools``: :class:`CsrMatrix` loads that
extension alone and calls ``csr_matvecs`` exactly as ``scipy.sparse.csr_matrix(A) @ X`` does (same CSR
arrays, same kernel, same float accumulation order), so results are bit-identical.  If the extension
cannot be loaded that way, ``scipy.sparse`` itself is used.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["CsrMatrix"]


@lru_cache(maxsize=1)
def _sparsetools() -> ModuleType | None:
    """scipy's compiled ``_sparsetools`` (loaded without ``scipy.sparse.__init__``), or None."""
    name = "scipy.sparse._sparsetools"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    try:
        scipy_spec = importlib.util.find_spec("scipy")
        folders = [f"{folder}/sparse" for folder in (scipy_spec.submodule_search_locations or [])] if scipy_spec else []
        spec = importlib.machinery.PathFinder.find_spec(name, folders)
        if spec is None or spec.loader is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - any layout surprise: use scipy.sparse
        return None
    if not hasattr(module, "csr_matvecs"):
        return None
    return sys.modules.setdefault(name, module)


class CsrMatrix:
    """``A`` stored as CSR, multiplied by dense 2-D arrays: ``CsrMatrix(A) @ X == scipy.sparse.csr_matrix(A) @ X``.

    Parameters
    ----------
    matrix : np.ndarray, shape (m, n)
        Dense matrix; its nonzeros are kept in row-major order (the CSR layout scipy builds from it).
    """

    def __init__(self, matrix: np.ndarray) -> None:
        a = np.asarray(matrix)
        self.shape = a.shape
        self.dtype = a.dtype
        self._tools = _sparsetools()
        if self._tools is None:
            from scipy import sparse

            self._scipy: Any = sparse.csr_matrix(a)
            return
        self._scipy = None
        rows, cols = np.nonzero(a)
        self.indptr = np.searchsorted(rows, np.arange(a.shape[0] + 1)).astype(np.int32)
        self.indices = cols.astype(np.int32)
        self.data = np.ascontiguousarray(a[rows, cols])

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        """``A @ other`` for ``other`` of shape (n, k): shape (m, k), dtype of scipy's upcast."""
        if self._scipy is not None:
            return np.asarray(self._scipy @ other)
        x = np.asarray(other)
        m, n = self.shape
        if x.ndim != 2 or x.shape[0] != n:
            raise ValueError(f"dimension mismatch: ({m}, {n}) @ {x.shape}")
        dtype = np.result_type(self.dtype, x.dtype)
        if dtype not in (np.float32, np.float64):  # the kernels exist for more, but these are what we use
            from scipy import sparse

            return np.asarray(sparse.csr_matrix(self._dense()) @ x)
        out = np.zeros((m, x.shape[1]), dtype=dtype)
        assert self._tools is not None  # checked when built: a dense product otherwise
        self._tools.csr_matvecs(
            m,
            n,
            x.shape[1],
            self.indptr,
            self.indices,
            self.data.astype(dtype, copy=False),
            np.ascontiguousarray(x, dtype=dtype).ravel(),
            out.ravel(),
        )
        return out

    def _dense(self) -> np.ndarray:
        dense = np.zeros(self.shape, self.dtype)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        dense[rows, self.indices] = self.data
        return dense

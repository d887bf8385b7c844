"""pyFFTW's compiled core without the package's ``__init__`` (start-up cost, issue 13).

``import pyfftw`` runs ``pyfftw/__init__.py``, which imports ``pyfftw.builders`` and
``pyfftw.interfaces`` and through them ``scipy.fft``, ``scipy.fftpack`` and, when it is
installed, ``dask.array``: 0.1-0.5 s before the first transform, for modules the engine
never calls.  Everything the engine uses (``FFTW``, ``zeros_aligned``, ``simd_alignment``,
``import_wisdom``/``export_wisdom``/``forget_wisdom``) lives in the extension module
``pyfftw.pyfftw``; :func:`load` imports that one alone and registers it under its own name, so a
later ``import pyfftw`` (by the user, or a test) reuses the same extension -- one FFTW planner
and one wisdom store per process either way.

If ``pyfftw`` was already imported, :func:`load` returns that module.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import types

__all__ = ["load"]

_core: types.ModuleType | None = None


def load() -> types.ModuleType:
    """The pyFFTW API the engine uses: the ``pyfftw`` package if imported, else a view of its extension.

    The view has the extension's names plus ``fftw_version`` (as ``pyfftw.fftw_version``).

    Raises
    ------
    ImportError
        pyfftw is not installed (or is set to None in ``sys.modules``), or its extension does not load.
    """
    global _core
    if "pyfftw" in sys.modules:
        package: types.ModuleType | None = sys.modules["pyfftw"]
        if package is None:
            raise ImportError("import of pyfftw halted; None in sys.modules")
        if hasattr(package, "FFTW"):
            return package
    if _core is not None:
        return _core
    extension = sys.modules.get("pyfftw.pyfftw")
    if extension is None:
        spec = importlib.util.find_spec("pyfftw")  # locates the package, runs nothing
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("No module named 'pyfftw'", name="pyfftw")
        ext_spec = importlib.machinery.PathFinder.find_spec("pyfftw.pyfftw", list(spec.submodule_search_locations))
        if ext_spec is None or ext_spec.loader is None:
            raise ImportError("pyfftw is installed without its compiled module pyfftw.pyfftw", name="pyfftw")
        extension = importlib.util.module_from_spec(ext_spec)
        sys.modules["pyfftw.pyfftw"] = extension
        try:
            ext_spec.loader.exec_module(extension)
        except BaseException:
            sys.modules.pop("pyfftw.pyfftw", None)
            raise
    view = types.ModuleType("pyfftw", "pyFFTW's compiled core (audiokit.engine.pyfftw_core)")
    names = {k: v for k, v in vars(extension).items() if not k.startswith("__")}
    match = re.search(r"(\d+).(\d+).(\d+)", getattr(extension, "_fftw_version_dict", {}).get("64", ""))
    names["fftw_version"] = match.group() if match else ""
    view.__dict__.update(names)
    _core = view
    return view

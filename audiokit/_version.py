"""The version of audiokit, in one place: pyproject.toml reads it (``[tool.setuptools.dynamic]``), as does
``audiokit.__version__``.  Sidecars record it.  Importing this module costs nothing (no ``importlib.metadata``).

:data:`NUMBERS_VERSION` is what batch fingerprints record instead: it changes only when a change alters the numbers a
command writes (every CHANGELOG.md entry marked **[bytes]** raises it), so a release that leaves the bytes alone
resumes a half-built corpus store instead of recomputing it."""

__version__ = "0.2.0"

#: Raised by every change that alters output bytes (CHANGELOG **[bytes]**); batch fingerprints hold it.
NUMBERS_VERSION = 1

"""The version of audiokit, in one place: pyproject.toml reads it (``[tool.setuptools.dynamic]``), as does
``audiokit.__version__``.  Outputs (sidecars, batch fingerprints) record it: a change that alters output bytes
raises it (CHANGELOG.md marks those changes).  Importing this module costs nothing (no ``importlib.metadata``)."""

__version__ = "0.2.0"

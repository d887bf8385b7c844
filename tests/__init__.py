"""audiokit's tests, laid out like the package (``tests/dsp`` tests ``audiokit/dsp`` …); shared code in ``tests.helpers``."""

"""Tests of audiokit.engine: the FFT backends."""

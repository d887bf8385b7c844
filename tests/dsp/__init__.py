"""Tests of audiokit.dsp, one file per module (``stft/`` and ``hum/`` per package module)."""

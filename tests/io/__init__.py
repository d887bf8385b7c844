"""Tests of audiokit.io: reading, writing, atomic outputs."""

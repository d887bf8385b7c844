"""Tests of audiokit.dsp.hum: analysis and one-shot dehum, removal, tracking and smoothing."""

"""Tests of audiokit.pipelines: one job per command, the presets, the registry."""

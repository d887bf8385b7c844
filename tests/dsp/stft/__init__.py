"""Tests of audiokit.dsp.stft: plan, forward, inverse, polyphase."""

"""kaldi-native-fbank (Kaldi's C++ feature code) as the reference of the Kaldi tests, when it is installed."""

from __future__ import annotations

import numpy as np
import pytest

try:
    import kaldi_native_fbank as knf
except ImportError:  # the test extra installs it; without it the comparisons are skipped
    knf = None

needs_knf = pytest.mark.skipif(knf is None, reason="kaldi-native-fbank is not installed (test extra)")


def knf_features(x: np.ndarray, sr: int, mfcc: bool, **kw) -> np.ndarray:
    """kaldi-native-fbank on int16-scaled samples (dither 0), frames x bins; ``kw`` sets its options by name."""
    opts = knf.MfccOptions() if mfcc else knf.FbankOptions()
    opts.frame_opts.dither = 0.0
    opts.frame_opts.samp_freq = sr
    for key, value in kw.items():
        if key == "num_mel_bins":
            opts.mel_opts.num_bins = value
        elif hasattr(opts.frame_opts, key):
            setattr(opts.frame_opts, key, value)
        elif hasattr(opts.mel_opts, key):
            setattr(opts.mel_opts, key, value)
        else:
            setattr(opts, key, value)
    comp = knf.OnlineMfcc(opts) if mfcc else knf.OnlineFbank(opts)
    comp.accept_waveform(sr, (x * 32768.0).astype(np.float32))
    comp.input_finished()
    n = comp.num_frames_ready
    dim = opts.num_ceps if mfcc else opts.mel_opts.num_bins + int(opts.use_energy)
    return np.stack([comp.get_frame(i) for i in range(n)]) if n else np.zeros((0, dim), np.float32)

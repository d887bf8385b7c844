"""``audiokit pitch`` on inputs whose pYIN decoding never reaches a convergence point: memory stays flat.

Digital silence never converges (the survivors at the grid's lowest and highest unvoiced bins tie exactly in
every frame), so a decoder that kept every frame since its last convergence point held 2.4 kB per 16 ms frame of
it: 36 MB for 4 min, 540 MB for an hour.  The pipeline's decoder releases all-unvoiced frames at once (output
convergence, exact for the voicing and the voiced f0) and bounds the rest by its lag (``max_lag``,
:mod:`audiokit.dsp.pitch.viterbi`; tested with small lags in ``tests/dsp/test_pitch_decoder_bound.py``).

The check: the peak RSS of the whole command on 30 s of tone + 30 s of silence + 30 s of white noise (about 19 s
between convergence points) against the same with 4 min 30 s of silence: within 12 MiB (the per-frame results of
the 4 extra minutes are 0.26 MB; the old decoder's held frames alone were ~36 MB), under the 300 MiB bound, no
warning, and the voicing of the silence all unvoiced.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.memory import RSS_LIMIT_MIB, peak_rss_mib

SR = 16000


def _write(path, silence_s: float) -> None:
    """A 200 Hz harmonic tone (30 s), ``silence_s`` of digital silence, white noise (30 s), 16-bit."""
    rng = np.random.default_rng(1)
    t = np.arange(30 * SR) / SR
    tone = sum(np.sin(2 * np.pi * 200 * k * t) / k for k in range(1, 6))
    parts = [0.2 * tone / np.abs(tone).max(), np.zeros(int(silence_s * SR)), 0.1 * rng.standard_normal(30 * SR)]
    sf.write(path, np.concatenate(parts), SR, subtype="PCM_16")


@pytest.mark.slow
def test_silence_does_not_grow_the_memory(tmp_path):
    peaks = {}
    for silence_s in (30.0, 270.0):
        wav, npy = tmp_path / f"s{silence_s:g}.wav", tmp_path / f"s{silence_s:g}.npy"
        _write(wav, silence_s)
        measured = peak_rss_mib("pitch", wav, "--npy", npy)
        assert measured.returncode == 0 and measured.stderr == "", measured.stderr
        peaks[silence_s] = measured.peak_rss_mib
        rows = np.load(npy)
        frames = rows[0]
        silent = (frames > 30.2) & (frames < 30 + silence_s - 0.2)
        assert not rows[2][silent].any() and (rows[1][silent] == 0).all()
        assert rows[2][(frames > 1) & (frames < 29)].all()  # the tone is voiced: the file is not all silence
        assert json.loads((tmp_path / f"s{silence_s:g}.json").read_text())["shape"] == [4, frames.size]
    assert peaks[270.0] < RSS_LIMIT_MIB and peaks[270.0] - peaks[30.0] < 12, peaks

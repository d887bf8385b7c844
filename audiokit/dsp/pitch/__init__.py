"""Fundamental frequency: YIN and pYIN, equal to librosa 0.11's frame for frame (YIN to float rounding), streamed.

* :mod:`.params` -- period range, pitch grid, framing (librosa's checks);
* :mod:`.blockacf` -- YIN's short-lag autocorrelation from hop blocks shared by overlapping frames;
* :mod:`.difference` -- the cumulative mean normalised difference (YIN's fast rows, pYIN's librosa-exact ones),
  troughs, parabolic shifts;
* :mod:`.yin` -- :func:`yin`;
* :mod:`.probabilities` -- pYIN's observation probabilities;
* :mod:`.transitions` -- the HMM's transition band (librosa's matrix, its nonzero band);
* :mod:`.viterbi` -- the exact banded Viterbi decoder, whole or online (convergence points);
* :mod:`.pyin` -- :func:`pyin`;
* :mod:`.stream` -- :class:`PitchTracker`, the same over a stream of sample blocks.
"""

from .params import PitchGeometry, PitchGrid
from .pyin import PyinModel, pyin
from .yin import yin

__all__ = ["PitchGeometry", "PitchGrid", "PyinModel", "pyin", "yin"]

"""Loudness and true peak: ITU-R BS.1770-4 and EBU R128 (Tech 3341, 3342), streamed block by block.

* :mod:`.kweighting` -- the K-weighting biquads for any sample rate;
* :mod:`.channels` -- the channel weights from a layout (WAVE_FORMAT_EXTENSIBLE mask or channel count);
* :mod:`.gating` -- integrated loudness (absolute and relative gates) and the loudness range;
* :mod:`.truepeak` -- the oversampling true-peak meter;
* :mod:`.meter` -- :class:`LoudnessMeter`, which puts them together over a stream of blocks.

Conventions (LUFS, LU, dBTP, the undefined results) are in ``docs/conventions.md`` and :mod:`.meter`.
"""

from .channels import channel_weights, layout_names
from .gating import energy_to_lufs, gated_integral, loudness_range
from .kweighting import k_weighting_sos
from .meter import LoudnessMeter, LoudnessResult
from .truepeak import TruePeakMeter, oversampling_factor

__all__ = [
    "LoudnessMeter",
    "LoudnessResult",
    "TruePeakMeter",
    "channel_weights",
    "energy_to_lufs",
    "gated_integral",
    "k_weighting_sos",
    "layout_names",
    "loudness_range",
    "oversampling_factor",
]

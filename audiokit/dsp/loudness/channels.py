"""Channel weights of ITU-R BS.1770-4 (the ``G_i`` of the loudness sum), from a channel layout.

BS.1770-4 weights a channel by where its loudspeaker stands: 1.0 for the front (L, R, C: azimuth below 60 deg),
1.41 (+1.5 dB) for the surrounds (Ls, Rs: 60-120 deg), and the LFE channel is left out (weight 0).

The layout comes from the file:

* **WAVE_FORMAT_EXTENSIBLE** (``dwChannelMask``): the channels are the mask's set bits in increasing bit order, as
  Microsoft's speaker positions define them.  LFE (``0x8``) weighs 0; back and side left/right (``0x10``,
  ``0x20``, ``0x200``, ``0x400``: the two places a 5.1 file puts its surrounds) weigh 1.41; every other position
  (front, front-of-centre, back centre, the height speakers) weighs 1.0.  Channels beyond the mask's set bits
  weigh 1.0.
* **No mask** (a plain WAV, FLAC, raw PCM, ...), by channel count: 1 mono, 2 L R, 3 L R C, 4 L R Ls Rs (quad),
  5 L R C Ls Rs, 6 L R C LFE Ls Rs (5.1 in the WAVE/SMPTE order); 7 and more take the lowest bits of the WAVE
  speaker order (L R C LFE BL BR FLC FRC BC SL SR ...), so 8 channels are 7.1 (L R C LFE BL BR SL SR needs a
  mask; without one, channels 7-8 are FLC FRC, weight 1.0).  1-6 match libebur128's default channel map.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SURROUND_WEIGHT", "SPEAKER_NAMES", "channel_weights", "layout_names"]

#: The weight of a surround channel (BS.1770-4: 1.41, i.e. +1.5 dB).
SURROUND_WEIGHT = 1.41
#: Microsoft's WAVE speaker positions, by bit (``SPEAKER_FRONT_LEFT = 0x1`` ...).
SPEAKER_NAMES = (
    "FL",
    "FR",
    "FC",
    "LFE",
    "BL",
    "BR",
    "FLC",
    "FRC",
    "BC",
    "SL",
    "SR",
    "TC",
    "TFL",
    "TFC",
    "TFR",
    "TBL",
    "TBC",
    "TBR",
)
_WEIGHT_BY_NAME = {"LFE": 0.0, "BL": SURROUND_WEIGHT, "BR": SURROUND_WEIGHT, "SL": SURROUND_WEIGHT, "SR": SURROUND_WEIGHT}
#: The positions of a file without a mask, for 1-6 channels (libebur128's default map).
_PLAIN = {
    1: ("FC",),
    2: ("FL", "FR"),
    3: ("FL", "FR", "FC"),
    4: ("FL", "FR", "BL", "BR"),
    5: ("FL", "FR", "FC", "BL", "BR"),
    6: ("FL", "FR", "FC", "LFE", "BL", "BR"),
}


def layout_names(n_channels: int, mask: int | None = None) -> tuple[str, ...]:
    """The speaker position of each channel (``"?"`` for one the layout does not place), by the rule above.

    Parameters
    ----------
    n_channels : int >= 1
    mask : int, optional
        The WAVE_FORMAT_EXTENSIBLE ``dwChannelMask``; None or 0 for a file without one.
    """
    if n_channels < 1:
        raise ValueError(f"n_channels ({n_channels}) must be >= 1")
    if mask:
        placed = [name for bit, name in enumerate(SPEAKER_NAMES) if mask >> bit & 1]
    elif n_channels in _PLAIN:
        placed = list(_PLAIN[n_channels])
    else:
        placed = list(SPEAKER_NAMES[:n_channels])
    placed = placed[:n_channels]
    return tuple(placed + ["?"] * (n_channels - len(placed)))


def channel_weights(n_channels: int, mask: int | None = None) -> np.ndarray:
    """The BS.1770-4 weight ``G_i`` of each channel: 1.0, 1.41 for surrounds, 0 for LFE.

    Parameters
    ----------
    n_channels : int >= 1
    mask : int, optional
        The WAVE_FORMAT_EXTENSIBLE ``dwChannelMask`` (None or 0: the plain layouts of the module docstring).

    Returns
    -------
    np.ndarray, shape (n_channels,), float64
    """
    return np.array([_WEIGHT_BY_NAME.get(name, 1.0) for name in layout_names(n_channels, mask)], dtype=np.float64)

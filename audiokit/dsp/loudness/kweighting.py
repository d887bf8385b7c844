r"""The K-weighting of ITU-R BS.1770-4, designed for any sample rate.

BS.1770 tabulates the two biquads at 48 kHz only.  Here each is the bilinear transform of its analogue prototype,
pre-warped at its own corner frequency, so that any rate gets the filter the table samples (the approach of
libebur128's ``ebur128_init_filter``; the prototype constants are its fitted values):

* **pre-filter** (high shelf, +4 dB above ~1.7 kHz): ``H(s) = (V_h s^2 + V_b s/Q + 1) / (s^2 + s/Q + 1)``, ``s``
  normalised to ``f_0 = 1681.974450955533`` Hz, ``Q = 0.7071752369554196``, ``V_h = 10^(G/20)`` with
  ``G = 3.999843853973347`` dB and ``V_b = V_h^0.4996667741545416``;
* **RLB high-pass**: ``H(s) = s^2 / (s^2 + s/Q + 1)``, ``f_0 = 38.13547087602444`` Hz, ``Q = 0.5003270373238773``;
  its numerator is ``1 - 2 z^-1 + z^-2`` unnormalised, as in the BS.1770 table.

With ``K = tan(pi f_0 / sr)`` the substitution ``s = (1/K)(1 - z^-1)/(1 + z^-1)`` gives the digital biquads.  At
48 kHz the coefficients equal the BS.1770-4 table to ~1e-8 (the table's own rounding).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["BS1770_48K", "k_weighting_sos"]

_SHELF_F0, _SHELF_Q, _SHELF_GAIN_DB, _SHELF_VB_EXP = 1681.974450955533, 0.7071752369554196, 3.999843853973347, 0.4996667741545416
_HIGHPASS_F0, _HIGHPASS_Q = 38.13547087602444, 0.5003270373238773

#: ITU-R BS.1770-4 Tables 1 and 2 (48 kHz): ``(b0, b1, b2, a1, a2)`` of the pre-filter and of the RLB filter.
BS1770_48K = (
    (1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585),
    (1.0, -2.0, 1.0, -1.99004745483398, 0.99007225036621),
)


def k_weighting_sos(sr: float) -> np.ndarray:
    """The K-weighting filter at sample rate ``sr`` as second-order sections.

    Parameters
    ----------
    sr : float > 0
        Sample rate in Hz (the prototypes' corners must lie below ``sr / 2``: any rate from 100 Hz on does).

    Returns
    -------
    np.ndarray, shape (2, 6), float64
        ``[[b0, b1, b2, 1, a1, a2], ...]``: the pre-filter, then the RLB high-pass (``scipy.signal.sosfilt`` layout).
    """
    k = math.tan(math.pi * _SHELF_F0 / sr)
    vh = 10.0 ** (_SHELF_GAIN_DB / 20.0)
    vb = vh**_SHELF_VB_EXP
    a0 = 1.0 + k / _SHELF_Q + k * k
    shelf = [
        (vh + vb * k / _SHELF_Q + k * k) / a0,
        2.0 * (k * k - vh) / a0,
        (vh - vb * k / _SHELF_Q + k * k) / a0,
        1.0,
        2.0 * (k * k - 1.0) / a0,
        (1.0 - k / _SHELF_Q + k * k) / a0,
    ]
    k = math.tan(math.pi * _HIGHPASS_F0 / sr)
    a0 = 1.0 + k / _HIGHPASS_Q + k * k
    highpass = [1.0, -2.0, 1.0, 1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / _HIGHPASS_Q + k * k) / a0]
    return np.array([shelf, highpass], dtype=np.float64)

"""Requantization to B bits: dither, first-order noise shaping, and quality measures.

The grid (mid-tread, like integer PCM)
--------------------------------------
B-bit output takes the values ``k * q`` with step ``q = 2**-(B-1)`` and integer
``k`` in ``[-2**(B-1), 2**(B-1) - 1]``: from ``-1.0`` up to ``1 - q``.  Zero is
a level (mid-tread), so silence stays silent and a B-bit WAV stores ``k``
itself.  Rounding is to the nearest level, ties upwards::

    k = floor(v / q + 1/2),   then clipped to [-2**(B-1), 2**(B-1) - 1]

A mid-rise quantizer (levels at ``(k + 1/2) * q``, no zero level, symmetric
range) is the other textbook choice; it is not offered because its levels are
not integer PCM codes.  Every output value is exactly ``k / 2**(B-1)``, which
float32 holds exactly for B <= 24, so writing the result as PCM_16 (B <= 16),
PCM_24 (B <= 24) or FLOAT keeps the B-bit codes (libsndfile scales float by
``2**15`` / ``2**23`` when writing PCM).

The non-overloading input range is ``[-1 - q/2, 1 - q/2)``, which is not
symmetric about 0: the largest zero-centred sine that does not clip has an
amplitude just under ``1 - q/2``.  Samples outside the range are clipped to
the end codes and counted (:attr:`Quantizer.n_clipped`; :func:`quantize`
warns with :class:`ClippingWarning`), however large: a finite 1e307 sample is
one clipped sample (it is first moved by a whole number of steps to within
``±(4 + q)``, which keeps the rounding error and cannot overflow).

Dither (added before rounding, not subtracted afterwards)
---------------------------------------------------------
``"tpdf"`` (default)
    Triangular PDF on ``(-q, q)``: the difference of two independent uniforms,
    power ``q**2/6``.  It makes both the mean and the power of the total
    error independent of the signal: no harmonic distortion, no noise
    modulation.  The standard choice for requantizing audio; it costs 4.77 dB
    of SQNR against an undithered busy signal (total error ``q**2/4``).
``"rpdf"``
    Rectangular PDF on ``[-q/2, q/2)``, power ``q**2/12``: removes the
    distortion (error mean) but the error power still follows the signal,
    from 0 (input on a level) to ``q**2/4`` (input half-way between levels).
``"none"``
    Plain rounding: error ``q**2/12`` for busy signals, but harmonic
    distortion for low-level tones.

Dither values come from ``numpy.random.default_rng(seed)`` as uniforms drawn
time-major (shape ``(n, channels)``, or ``(n, channels, 2)`` for TPDF), so a
seed reproduces the output exactly, one-shot or block by block.

Noise shaping (error feedback)
------------------------------
``"first"`` feeds the previous total error back with a one-sample delay::

    v[n] = u[n] - e[n-1],   w[n] = floor(v[n] + d[n] + 1/2),   e[n] = w[n] - v[n]

(in units of ``q``; ``u`` input, ``d`` dither, ``w`` code before clipping),
so the output error is ``w - u = (1 - z**-1) e``: its spectrum is shaped by
``|1 - exp(-i*omega)|**2 = 4 sin**2(omega/2)`` (omega in rad/sample) - 13 dB less noise in
the lowest eighth of the band, +6 dB at Nyquist, twice the total power.  The
fed-back error excludes clipping, so a clipped sample cannot make the loop
run away.  The recursion is evaluated block-wise in closed form: with
``A[n] = sum(u) - e[start-1]`` and ``W[n] = sum(w)`` since the last anchor,
``W[n] = floor(A[n] + d[n] + 1/2)`` (rounding commutes with integer shifts).
Anchors sit every 1024 samples of absolute position, where the sums restart
from ``-e`` (exactly).  The float64 partial sums then stay below
``2**10 * 2**(B-1)`` (for ``|x| <= 1``), so rounding each one acts like
perturbing each input sample by at most half an ulp of that bound:
``2**-21`` of a step at B = 24, ``2**-29`` at B = 16 - over 120 dB below the
step, invisible in the noise spectrum.  Like any error fed to an integrating
loop, these perturbations add up in ``sum(output - input)``, which exact
arithmetic keeps within half a step (without dither).

Measures
--------
:func:`sqnr_db` (signal to total-error power ratio) and :func:`noise_rms_dbfs`
(total error RMS in dBFS, 1.0 = 0 dBFS, the convention of ``audiokit info``:
a full-scale sine reads -3.01 dBFS) compare a reference with its quantized
version; :func:`expected_noise_power` and :func:`theoretical_sqnr_db` give
the textbook values (``6.02 B + 1.76 dB`` for a full-scale sine, undithered).
"""

from __future__ import annotations

import math
import warnings
from typing import Literal, get_args

import numpy as np

from ..errors import InputError, ParameterError
from ..validate import check_choice, check_int
from .levels import dbfs

__all__ = [
    "DITHERS",
    "MAX_BITS",
    "MIN_BITS",
    "NOISE_SHAPES",
    "ClippingWarning",
    "Dither",
    "NoiseShape",
    "Quantizer",
    "expected_noise_power",
    "grid_step",
    "noise_rms_dbfs",
    "quantize",
    "sqnr_db",
    "theoretical_sqnr_db",
]

Dither = Literal["tpdf", "rpdf", "none"]
DITHERS: tuple[str, ...] = get_args(Dither)
"""Dither names; ``tpdf`` is the default."""

NoiseShape = Literal["none", "first"]
NOISE_SHAPES: tuple[str, ...] = get_args(NoiseShape)
"""Noise-shaping names: ``none`` or first-order error feedback."""

MIN_BITS, MAX_BITS = 2, 24
"""Allowed bit depths (24 is the most that float32 and PCM_24 hold exactly)."""

#: Spacing (samples) of the absolute-position anchors of the noise-shaping recursion.
_ANCHOR = 1024
#: Samples per channel handled at once inside :meth:`Quantizer.process` (bounds temporaries).
_SLICE = 1 << 16
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Total error power of the unshaped quantizer in units of q**2, per dither
# (uniform rounding error q**2/12 plus the dither power; RPDF: average over the input).
_ERROR_POWER_Q2 = {"none": 1 / 12, "rpdf": 1 / 6, "tpdf": 1 / 4}
#: Power gain of first-order shaping, ``sum(h**2)`` of ``h = (1, -1)``.
_SHAPING_POWER_GAIN = 2.0
#: Mean power of a full-scale sine (amplitude 1.0): the reference of :func:`theoretical_sqnr_db`.
_FULL_SCALE_SINE_POWER = 0.5


#: Beyond ``±_BOUND`` (full-scale units) a sample is moved by a whole number of steps to within
#: ``±(_BOUND + q)``: it still clips (``4 / q`` is twice the range), the rounding error (all that the noise-shaping
#: loop feeds back) is unchanged, and neither ``x / q`` nor the loop's partial sums can overflow or lose precision.
_BOUND = 4.0


def _bounded(x: np.ndarray, step: float) -> np.ndarray:
    """``x`` with every ``|x| > _BOUND`` replaced by ``±_BOUND + fmod(x, step)`` (exact; a copy only if needed)."""
    beyond = np.abs(x) > _BOUND
    if not beyond.any():
        return x
    return np.where(beyond, np.copysign(_BOUND, x) + np.fmod(x, step), x)


class ClippingWarning(UserWarning):
    """Samples fell outside the B-bit range and were clipped to its end codes."""


def _check_bits(bits: object) -> int:
    return check_int(
        bits,
        "bits",
        minimum=MIN_BITS,
        maximum=MAX_BITS,
        message="bits must be a whole number from {minimum} to {maximum}, got {value!r}",
    )


def grid_step(bits: int) -> float:
    """Grid step ``q = 2**-(bits-1)`` in full-scale units (one LSB of B-bit PCM)."""
    return 2.0 ** (1 - _check_bits(bits))


class Quantizer:
    """Block-wise B-bit quantizer with dither and noise-shaping state.

    ``Quantizer(...).process(x)`` is :func:`quantize` without the warning;
    feeding the same samples as consecutive blocks gives bit-identical output
    (same seed), because the dither is drawn in time order and the
    noise-shaping recursion is anchored at absolute sample positions.

    Parameters
    ----------
    bits : int in [2, 24]
        Bit depth B.
    channels : int > 0
        Number of channels (rows of every block).
    dither : {"tpdf", "rpdf", "none"}
        See the module docstring.
    noise_shape : {"none", "first"}
        First-order error feedback, or none.
    seed : int, numpy.random.Generator or None
        Dither seed (None: fresh entropy).  Unused when ``dither="none"``.

    Attributes
    ----------
    n_clipped : int
        Output samples (all channels) clipped to an end code so far.
    n_samples : int
        Samples per channel processed so far.
    """

    def __init__(
        self,
        *,
        bits: int,
        channels: int,
        dither: Dither = "tpdf",
        noise_shape: NoiseShape = "none",
        seed: int | np.random.Generator | None = None,
    ):
        self.bits = _check_bits(bits)
        self.dither = check_choice(dither, "dither", DITHERS)
        self.noise_shape = check_choice(noise_shape, "noise shaping", NOISE_SHAPES)
        self.channels = check_int(channels, "channels", minimum=1, message="channels must be a whole number > 0, got {value!r}")
        self._rng = np.random.default_rng(seed)
        self._scale = 2.0 ** (self.bits - 1)
        self.n_clipped = 0
        self.n_samples = 0
        # Noise-shaping state since the last anchor: A = sum(u) - e, W = sum(w).
        self._a_last = np.zeros(self.channels)
        self._w_last = np.zeros(self.channels)

    @property
    def step(self) -> float:
        """Grid step ``q = 2**-(bits-1)``."""
        return 1.0 / self._scale

    def _dither(self, m: int) -> np.ndarray:
        """Dither in units of q, shaped (channels, m)."""
        if self.dither == "none":
            return np.zeros((self.channels, m))
        if self.dither == "rpdf":
            return self._rng.random((m, self.channels)).T - 0.5
        pair = self._rng.random((m, self.channels, 2))
        return (pair[..., 0] - pair[..., 1]).T

    def _shaped_codes(self, u: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Codes ``w`` of the first-order error-feedback loop (before clipping)."""
        m = u.shape[1]
        w = np.empty_like(u)
        i = 0
        while i < m:
            offset = (self.n_samples + i) % _ANCHOR
            if offset == 0:
                # Restart the sums from -e = A - W (exact: A and W differ by < 2).
                self._a_last = self._a_last - self._w_last
                self._w_last = np.zeros(self.channels)
            take = min(m - i, _ANCHOR - offset)
            span = slice(i, i + take)
            # Sequential sums continuing from the carried value, so the block split does not matter.
            a = np.cumsum(np.concatenate([self._a_last[:, None], u[:, span]], axis=1), axis=1)[:, 1:]
            big_w = np.floor(a + d[:, span] + 0.5)
            w[:, span] = np.diff(big_w, axis=1, prepend=self._w_last[:, None])
            self._a_last, self._w_last = a[:, -1], big_w[:, -1]
            i += take
        return w

    def process(self, block: np.ndarray) -> np.ndarray:
        """Quantize the next block.

        Parameters
        ----------
        block : np.ndarray, shape (channels, m), float32 or float64
            Samples in full-scale units; must be finite.

        Returns
        -------
        np.ndarray, shape (channels, m), same dtype
            Values ``k / 2**(bits-1)`` with integer ``k`` in
            ``[-2**(bits-1), 2**(bits-1) - 1]``.

        Raises
        ------
        ParameterError
            Wrong shape or dtype.
        InputError
            NaN or infinite samples.
        """
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[0] != self.channels:
            raise ParameterError(f"samples must be shaped ({self.channels}, n), got shape {block.shape}")
        if block.dtype not in _DTYPES:
            raise ParameterError(f"samples must be float32 or float64, got {block.dtype}")
        bad = block.size - np.count_nonzero(np.isfinite(block))
        if bad:
            raise InputError(f"{bad} samples are NaN or infinite; quantization needs finite samples")
        out = np.empty_like(block, order="C")
        # Work in slices so the float64 temporaries (dither pairs, sums) stay small
        # for long one-shot inputs; slicing does not change the result.
        for start in range(0, block.shape[1], _SLICE):
            piece = block[:, start : start + _SLICE]
            m = piece.shape[1]
            u = _bounded(piece.astype(np.float64), self.step) * self._scale  # exact: power-of-two scaling
            d = self._dither(m)
            codes = self._shaped_codes(u, d) if self.noise_shape == "first" else np.floor(u + d + 0.5)
            low, high = -self._scale, self._scale - 1
            self.n_clipped += int(np.count_nonzero((codes < low) | (codes > high)))
            np.clip(codes, low, high, out=codes)
            out[:, start : start + m] = codes / self._scale
            self.n_samples += m
        return out


def quantize(
    x: np.ndarray,
    *,
    bits: int,
    dither: Dither = "tpdf",
    noise_shape: NoiseShape = "none",
    seed: int | np.random.Generator | None = None,
) -> np.ndarray:
    """Quantize samples to the B-bit mid-tread grid (see the module docstring).

    Parameters
    ----------
    x : np.ndarray, shape (channels, n), float32 or float64
        Samples in full-scale units; must be finite.
    bits : int in [2, 24]
        Bit depth B; the step is ``q = 2**-(B-1)``.
    dither : {"tpdf", "rpdf", "none"}
        Dither added before rounding; TPDF (default) is the standard.
    noise_shape : {"none", "first"}
        ``"first"``: first-order error feedback, noise spectrum ``4 sin**2(w/2)``.
    seed : int, numpy.random.Generator or None
        Dither seed; the same seed gives the same output.

    Returns
    -------
    y : np.ndarray, shape (channels, n), same dtype as ``x``
        Exactly ``k / 2**(B-1)``, ``k`` integer in ``[-2**(B-1), 2**(B-1) - 1]``.

    Warns
    -----
    ClippingWarning
        When samples (after dither and shaping) fell outside the range and
        were clipped; the message gives the count.  Use :class:`Quantizer`
        to read the count as a number.
    """
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ParameterError(f"samples must be shaped (channels, n) with channels >= 1, got shape {x.shape}")
    quantizer = Quantizer(bits=bits, channels=x.shape[0], dither=dither, noise_shape=noise_shape, seed=seed)
    y = quantizer.process(x)
    if quantizer.n_clipped:
        warnings.warn(
            f"{quantizer.n_clipped} of {y.size} samples fell outside the {quantizer.bits}-bit range "
            f"[-1, 1 - 2**-{quantizer.bits - 1}] and were clipped",
            ClippingWarning,
            stacklevel=2,
        )
    return y


def _error_and_reference(reference: np.ndarray, quantized: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ref = np.asarray(reference, dtype=np.float64)
    out = np.asarray(quantized, dtype=np.float64)
    if ref.shape != out.shape:
        raise ParameterError(f"reference and quantized must have the same shape, got {ref.shape} and {out.shape}")
    if ref.size == 0:
        raise ParameterError("reference and quantized are empty; need at least one sample")
    return out - ref, ref


def sqnr_db(reference: np.ndarray, quantized: np.ndarray) -> float:
    """Signal-to-quantization-noise ratio in dB.

    ``10 * log10(sum(reference**2) / sum((quantized - reference)**2))`` over
    all channels and samples; the "noise" is the total error (rounding,
    dither, shaping and clipping together).

    Parameters
    ----------
    reference, quantized : np.ndarray, same shape, float

    Returns
    -------
    float
        ``inf`` when the error is zero; ``-inf`` when the reference is silent
        and the error is not.
    """
    error, ref = _error_and_reference(reference, quantized)
    noise = float(np.sum(error * error))
    signal = float(np.sum(ref * ref))
    if noise == 0.0:
        return math.inf
    return 10.0 * math.log10(signal / noise) if signal > 0 else -math.inf


def noise_rms_dbfs(reference: np.ndarray, quantized: np.ndarray) -> float:
    """RMS of the total error in dBFS: ``20 * log10(sqrt(mean((quantized - reference)**2)))``.

    1.0 = 0 dBFS (the RMS convention of ``audiokit info``).  Undithered 16-bit
    rounding of a busy signal reads about -101.1 dBFS (``q/sqrt(12)``).
    ``-inf`` when the error is zero.
    """
    error, _ = _error_and_reference(reference, quantized)
    return dbfs(math.sqrt(float(np.mean(error * error))))


def expected_noise_power(bits: int, *, dither: Dither = "none", noise_shape: NoiseShape = "none") -> float:
    """Textbook total error power (mean square, full-scale units**2).

    ``q**2/12`` plain rounding, ``q**2/6`` RPDF (an average: it varies with
    the signal), ``q**2/4`` TPDF; times 2 with first-order noise shaping (the
    power gain of ``1 - z**-1``).  Assumes a signal busy enough for the
    rounding error to be uniform (not true for undithered low-level tones).
    """
    q = grid_step(bits)
    power = _ERROR_POWER_Q2[check_choice(dither, "dither", DITHERS)] * q * q
    shaped = check_choice(noise_shape, "noise shaping", NOISE_SHAPES) == "first"
    return power * (_SHAPING_POWER_GAIN if shaped else 1.0)


def theoretical_sqnr_db(bits: int, *, dither: Dither = "none", noise_shape: NoiseShape = "none") -> float:
    """SQNR (dB) of a full-scale sine (amplitude 1.0, power 1/2) against :func:`expected_noise_power`.

    Undithered: ``10*log10(1.5) + 20*B*log10(2) = 6.02 B + 1.76 dB``; TPDF
    subtracts 4.77 dB, RPDF 3.01 dB, first-order shaping another 3.01 dB.
    """
    noise = expected_noise_power(bits, dither=dither, noise_shape=noise_shape)
    return 10.0 * math.log10(_FULL_SCALE_SINE_POWER / noise)

"""Remove mains hum from a signal in memory in one call: :func:`dehum`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .analysis import BLOCK_SIZE, DEFAULT_THRESHOLD_DB, analyze_hum, as_2d
from .meter import HumLevels, HumMeter, hum_levels
from .model import HumAnalysis
from .removal import HumRemover, Method, check_method

__all__ = ["DehumResult", "dehum"]


@dataclass(frozen=True, eq=False)
class DehumResult:
    """Result of :func:`dehum`.

    Attributes
    ----------
    output : np.ndarray, shape like the input, float64
        The signal without the treated hum.
    residual : np.ndarray, shape like the input, float64
        What was removed: input minus output.
    analysis : HumAnalysis
    after_db : np.ndarray, shape (channels, K)
        Level of each line in ``output`` (:class:`~audiokit.dsp.hum.HumMeter`), dB re full-scale sine.
    method : str
    levels : HumLevels
        Hum-coherent power before, removed and remaining per channel and
        harmonic (:func:`~audiokit.dsp.hum.hum_levels`): the same statistic
        for both methods.
    """

    output: np.ndarray
    residual: np.ndarray
    analysis: HumAnalysis
    after_db: np.ndarray
    method: str
    levels: HumLevels


def dehum(
    x: np.ndarray,
    *,
    sr: int,
    freq: float | None = None,
    method: Method = "subtract",
    harmonics: int | None = None,
    threshold_db: float = DEFAULT_THRESHOLD_DB,
    win_length: int | None = None,
    width_hz: float | None = None,
    block_size: int = BLOCK_SIZE,
) -> DehumResult:
    """Remove mains hum from a signal in memory.

    Analysis (:func:`~audiokit.dsp.hum.analyze_hum`), removal
    (:class:`~audiokit.dsp.hum.HumRemover`, the same stream the CLI writes)
    and a measurement of the lines left (:class:`~audiokit.dsp.hum.HumMeter`).

    Parameters
    ----------
    x : np.ndarray, shape (n,) or (channels, n), float
        Samples, full scale ±1.
    sr : int > 0
        Sample rate (Hz).
    freq : float or None
        Nominal fundamental (Hz), or None to choose between 50 and 60 Hz.
    method : {'subtract', 'erase'}
        Model subtraction (default) or STFT bin erasure (see :mod:`audiokit.dsp.hum`).
    harmonics : int >= 1 or None
        Highest harmonic considered (default 40, below Nyquist).
    threshold_db : float
        Detection threshold (dB).
    win_length : int, optional
        ``erase`` only: STFT window in samples (default 1 s).
    width_hz : float, optional
        ``erase`` only: erased band per line (Hz, default ``4·sr/win_length``).
    block_size : int >= 1
        Samples per block (the result does not depend on it for ``subtract``;
        for ``erase`` up to FFT rounding).

    Returns
    -------
    DehumResult
        ``output`` and ``residual = x - output`` shaped like ``x`` (float64),
        the analysis, the line levels of the output and the hum levels.

    Raises
    ------
    ParameterError
        Bad parameters, including ``win_length``/``width_hz`` with ``subtract``.

    Examples
    --------
    >>> import numpy as np
    >>> sr = 16000
    >>> t = np.arange(3 * sr) / sr
    >>> x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 50.02 * t)
    >>> res = dehum(x, sr=sr, freq=50)
    >>> round(res.analysis.f0, 2), res.analysis.treated_harmonics
    (50.02, (1,))
    """
    check_method(method, win_length, width_hz)  # before the analysis: fail fast
    x2, squeeze = as_2d(x)
    analysis = analyze_hum(x2, sr=sr, freq=freq, harmonics=harmonics, threshold_db=threshold_db, block_size=block_size)
    remover = HumRemover(analysis, method, win_length=win_length, width_hz=width_hz)
    n = x2.shape[1]
    pairs = list(remover.run(x2[:, i : i + block_size] for i in range(0, n, block_size)))
    if pairs:
        y = np.concatenate([out for out, _ in pairs], axis=1)
        residual = np.concatenate([removed for _, removed in pairs], axis=1)
    else:
        y, residual = np.zeros((x2.shape[0], 0)), np.zeros((x2.shape[0], 0))
    meter = HumMeter(analysis)
    meter.push(y)
    after = meter.finish()
    levels = hum_levels(analysis, meter)
    if squeeze:
        y, residual = y[0], residual[0]
    return DehumResult(output=y, residual=residual, analysis=analysis, after_db=after, method=method, levels=levels)

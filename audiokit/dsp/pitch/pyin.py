"""pYIN (Mauch & Dixon 2014): YIN's troughs as probabilistic pitch candidates, decoded by an HMM over a pitch grid.

Per frame, :class:`~.probabilities.ObservationModel` turns the difference row into observation probabilities of
``n_pitch_bins`` voiced and as many unvoiced states; :class:`~.viterbi.OnlineViterbi` finds the most likely state
sequence under librosa 0.11's transitions (:class:`~.transitions.TransitionBand`: pitch moves at most
``round(max_transition_rate * 12 * hop_length / sr)`` semitones per frame, voicing switches with ``switch_prob``).
``f0`` is the decoded bin's frequency, ``voiced_flag`` whether the state is voiced, ``voiced_prob`` the summed
voiced observation probability.  The results are librosa 0.11's ``pyin``, frame for frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ParameterError
from ...validate import check_int, check_real
from .difference import cmnd_exact, frame_signal, parabolic_shifts
from .params import FRAME_LENGTH, PRIOR, SR, PitchGeometry, PitchGrid, PyinPrior, check_audio
from .probabilities import ObservationModel
from .transitions import TransitionBand
from .viterbi import OnlineViterbi
from .yin import BLOCK_FRAMES, pad_centered

__all__ = ["PyinModel", "pyin"]


@dataclass(frozen=True)
class PyinModel:
    """Everything pYIN needs besides the samples: observation model and transitions."""

    observation: ObservationModel
    band: TransitionBand

    @classmethod
    def make(
        cls,
        *,
        sr: float,
        fmin: float,
        fmax: float,
        frame_length: int = FRAME_LENGTH,
        hop_length: int | None = None,
        prior: PyinPrior = PRIOR,
    ) -> PyinModel:
        """Check the framing and every parameter of ``prior`` (ParameterError) and build the model."""
        geometry = PitchGeometry.make(sr=sr, fmin=fmin, fmax=fmax, frame_length=frame_length, hop_length=hop_length)
        grid = PitchGrid(geometry.fmin, geometry.fmax, prior.resolution)
        k = check_int(prior.n_thresholds, "n_thresholds", minimum=1)
        if len(prior.beta_parameters) != 2:
            raise ParameterError(f"beta_parameters must be two numbers, got {prior.beta_parameters!r}")
        a, b = (check_real(p, "beta_parameters", positive=True) for p in prior.beta_parameters)
        lam = check_real(prior.boltzmann_parameter, "boltzmann_parameter", positive=True)
        rate = check_real(prior.max_transition_rate, "max_transition_rate", positive=True)
        switch = check_real(prior.switch_prob, "switch_prob")
        no_trough = check_real(prior.no_trough_prob, "no_trough_prob")
        if not 0 <= no_trough <= 1:
            raise ParameterError(f"no_trough_prob={no_trough} must be in [0, 1]")
        observation = ObservationModel(geometry, grid, k, (a, b), lam, no_trough)
        width = grid.transition_width(rate, geometry.hop_length, geometry.sr)
        return cls(observation, TransitionBand(grid.n_pitch_bins, width, switch))

    @property
    def geometry(self) -> PitchGeometry:
        return self.observation.geometry

    @property
    def grid(self) -> PitchGrid:
        return self.observation.grid

    def observe(self, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Observation probabilities ``(2n, n_frames)`` and voiced probabilities ``(n_frames,)`` of frames
        ``(n_frames, frame_length)``."""
        rows = cmnd_exact(frames, self.geometry)
        return self.observation.observations(rows, parabolic_shifts(rows))

    def states_to_f0(self, states: np.ndarray, fill_na: float | None) -> tuple[np.ndarray, np.ndarray]:
        """``(f0, voiced_flag)`` of decoded states: the bin frequency, ``fill_na`` on unvoiced frames unless None."""
        n = self.grid.n_pitch_bins
        f0 = self.grid.freqs[states % n]
        voiced = states < n
        if fill_na is not None:
            f0[~voiced] = fill_na
        return f0, voiced


def pyin_channel(padded: np.ndarray, model: PyinModel, fill_na: float | None) -> tuple[np.ndarray, ...]:
    """pYIN of one padded channel ``(n_padded,)``: ``(f0, voiced_flag, voiced_prob)``, blocks of frames."""
    g = model.geometry
    frames = frame_signal(padded, g.frame_length, g.hop_length)
    if frames.shape[0] == 0:
        raise ParameterError(f"input is too short (n={padded.shape[-1]}) for frame_length={g.frame_length}")
    decoder = OnlineViterbi(model.band, unvoiced_bins=fill_na is None)  # bounded lag: warns if it guessed
    states, probs = [], []
    for start in range(0, frames.shape[0], BLOCK_FRAMES):
        obs, voiced_prob = model.observe(frames[start : start + BLOCK_FRAMES])
        decoder.push(obs)
        probs.append(voiced_prob)
        states.append(decoder.take())
    states.append(decoder.finish())
    decoder.warn_guessed(g.hop_length / g.sr)
    f0, flag = model.states_to_f0(np.concatenate(states), fill_na)
    return f0, flag, np.concatenate(probs)


def pyin(
    y: np.ndarray,
    *,
    fmin: float,
    fmax: float,
    sr: float = SR,
    frame_length: int = FRAME_LENGTH,
    hop_length: int | None = None,
    n_thresholds: int = PRIOR.n_thresholds,
    beta_parameters: tuple[float, float] = PRIOR.beta_parameters,
    boltzmann_parameter: float = PRIOR.boltzmann_parameter,
    resolution: float = PRIOR.resolution,
    max_transition_rate: float = PRIOR.max_transition_rate,
    switch_prob: float = PRIOR.switch_prob,
    no_trough_prob: float = PRIOR.no_trough_prob,
    fill_na: float | None = np.nan,
    center: bool = True,
    pad_mode: str = "constant",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fundamental frequency by probabilistic YIN (librosa 0.11's ``pyin``: same arguments, defaults and results),
    decoded by an exact banded Viterbi.

    The model's parameters (``n_thresholds`` .. ``no_trough_prob``) are those of :class:`~.params.PyinPrior`.

    Parameters
    ----------
    y : np.ndarray, shape (..., n_samples), float
        Audio; every leading axis is analysed separately.
    fmin, fmax : float
        Frequency range (Hz) and the pitch grid's ends; ``0 < fmin < fmax <= sr / 2``.
    sr, frame_length, hop_length : float, int, int or None
        Sample rate (Hz), frame length and hop (samples; hop None means ``frame_length // 4``), as :func:`~.yin.yin`.
    n_thresholds : int
        Thresholds of the beta prior.
    beta_parameters : (float, float)
        Beta distribution shape parameters of the threshold prior.
    boltzmann_parameter : float
        Boltzmann prior shape over troughs (larger favours shorter periods).
    resolution : float in (0, 1)
        Pitch bin spacing (semitones; 0.01 = cents).
    max_transition_rate : float
        Largest pitch change (octaves per second).
    switch_prob : float in (0, 1)
        Voiced/unvoiced switch probability per frame.
    no_trough_prob : float in [0, 1]
        Weight given to the global minimum for thresholds no trough is below.
    fill_na : float, None or nan
        ``f0`` of unvoiced frames; None keeps the decoded bin's frequency.
    center, pad_mode
        As :func:`~.yin.yin`.

    Returns
    -------
    f0 : np.ndarray, shape (..., n_frames), float64
        Hz.
    voiced_flag : np.ndarray, shape (..., n_frames), bool
    voiced_prob : np.ndarray, shape (..., n_frames), float64
    """
    prior = PyinPrior(
        n_thresholds, beta_parameters, boltzmann_parameter, resolution, max_transition_rate, switch_prob, no_trough_prob
    )
    model = PyinModel.make(sr=sr, fmin=fmin, fmax=fmax, frame_length=frame_length, hop_length=hop_length, prior=prior)
    y = check_audio(y)
    padded = pad_centered(y, model.geometry.frame_length, center=center, pad_mode=pad_mode)
    lead = padded.shape[:-1]
    results = [pyin_channel(row, model, fill_na) for row in padded.reshape(-1, padded.shape[-1])]
    f0, flag, prob = (np.stack([r[i] for r in results]) for i in range(3))
    n = f0.shape[-1]
    return f0.reshape(lead + (n,)), flag.reshape(lead + (n,)), prob.reshape(lead + (n,))

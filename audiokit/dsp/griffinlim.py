r"""Griffin-Lim phase retrieval: a signal whose STFT magnitude approaches a given one.

Algorithm
---------
Given a target magnitude ``S`` (``n_freqs x n_frames``, linear ``|X|``, not
power, not dB) and an :class:`~audiokit.dsp.stft.StftPlan`, *fast* Griffin-Lim
(Perraudin, Balazs & Søndergaard 2013, in librosa's formulation) iterates::

    c_0 = S * exp(2j*pi*U)                    U ~ uniform [0, 1) per cell (init='random')
    for i = 0 .. n_iter - 1:
        x_i = istft(c_i)                      least-squares inverse (weighted overlap-add)
        t_i = stft(x_i)                       the nearest consistent STFT
        a   = t_i - momentum/(1 + momentum) * t_{i-1}     (no t_{-1}: a = t_0)
        c_{i+1} = S * a / (|a| + tiny)
    y = istft(c_{n_iter})

``momentum = 0`` is the original Griffin & Lim (1984) algorithm; ``0.99`` (the
default, librosa's) converges much faster.  ``tiny`` is the smallest normal
number of the working dtype (``np.finfo(dtype).tiny``): a zero ``a`` gives a
zero cell instead of NaN.

Spectral convergence
--------------------
The figure of merit reported per iteration is::

    SC(x) = || S - |stft(x)| ||_F / || S ||_F

over the whole array (all channels).  :attr:`GriffinLim.convergence` holds
``n_iter + 1`` values: ``SC(x_i)`` for ``i = 0 .. n_iter - 1`` (``x_0`` is the
initial random-phase estimate), and last ``SC(y)`` of the output (one more
forward STFT).  It usually falls fast in the first tens of iterations and then
slowly; it does not reach 0 for a real spectrogram (phase retrieval from
magnitude alone has no exact solution in general), and can rise briefly with
momentum.

Reproducing librosa
-------------------
``librosa.griffinlim(S, n_iter=n, hop_length=H, win_length=W, n_fft=N,
window='hann', center=True, pad_mode='constant', momentum=m,
init='random', random_state=seed, length=L)`` is :func:`griffinlim` with
``StftPlan(sr=..., win_length=W, hop_length=H, n_fft=N, window='hann',
center=True, pad_mode='constant')`` and the same ``n_iter``, ``momentum``,
``random_state`` and ``length``.  The initial phase follows librosa exactly:
an ``int`` seed draws ``np.random.RandomState(seed).random(S.shape)`` (the
legacy generator: librosa does that for ints), a ``Generator`` or
``RandomState`` is used as given, None draws from ``np.random.default_rng()``.
The results agree to rounding: both programs perform the same operations
(the phase update here multiplies ``a`` by ``S / (|a| + tiny)`` where librosa
divides by ``|a| + tiny`` and then multiplies by ``S``), the FFT libraries and
the order of the overlap-add sums differ in the last bits, and those
differences are carried through the iterations -- and amplified by the
momentum: about 6 ulp after one iteration, 5e3 ulp after 16 and 2e5 after 64
on speech, as much as librosa's own output moves when ``S`` is perturbed by
one ulp (``tests/dsp/test_griffinlim.py`` explains the tolerances).

Memory
------
Iterations are global, so the whole spectrogram is in memory: the target
``S`` and three complex arrays of its shape (estimate, current and previous
consistent STFT), about ``3.5 x`` the complex array (1 h at 16 kHz, hop 160,
n_fft 512 in float32: about 2.6 GB).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..engine import FftBackend, get_backend
from ..errors import ParameterError
from ..validate import check_int, check_real
from .stft import StftPlan

__all__ = ["INITS", "GriffinLim", "griffinlim", "initial_phase", "mel_to_linear", "spectral_convergence"]

Init = Literal["random", "zeros"]
#: Initial phase choices: ``'random'`` (uniform) or ``'zeros'`` (all phases 0, librosa's ``init=None``).
INITS: tuple[str, ...] = ("random", "zeros")

#: Default momentum of fast Griffin-Lim (librosa's): 0 is the original algorithm, > 1 may diverge.
DEFAULT_MOMENTUM = 0.99


@dataclass(frozen=True)
class GriffinLim:
    """Result of :func:`griffinlim`.

    Attributes
    ----------
    y : np.ndarray, shape (..., length), float32 or float64
        The rebuilt signal (full scale ±1 if ``S`` came from such a signal).
    convergence : np.ndarray, shape (n_iter + 1,), float64
        Spectral convergence ``||S - |stft(x_i)| ||_F / ||S||_F`` of the estimate
        entering iteration ``i`` (``i = 0``: random phase), then of ``y``.
    """

    y: np.ndarray
    convergence: np.ndarray


def spectral_convergence(S: np.ndarray, X: np.ndarray) -> float:
    """``||S - |X| ||_F / ||S||_F`` (dimensionless; 0 for a perfect match, 1 for silence; ``nan`` if ``S`` is all zero).

    Parameters
    ----------
    S : np.ndarray, shape (..., n_freqs, n_frames), real >= 0
        Target magnitude.
    X : np.ndarray, same shape, complex
        An STFT.
    """
    norm = _frobenius(S)
    if norm == 0.0:
        return float("nan")
    diff = np.abs(X)
    np.subtract(S, diff, out=diff)
    return _frobenius(diff) / norm


def _frobenius(a: np.ndarray) -> float:
    """``sqrt(sum(a**2))`` in float64 without BLAS (a multi-threaded ``dot`` stalls on busy cores)."""
    return float(np.sqrt(np.sum(np.square(a, dtype=np.float64))))


def _frame_major(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An empty ``shape = (..., n_rows, n_frames)`` array stored ``(..., n_frames, n_rows)`` (as STFT outputs are)."""
    return np.empty(shape[:-2] + (shape[-1], shape[-2]), dtype).swapaxes(-1, -2)


def _frame_major_copy(a: np.ndarray) -> np.ndarray:
    """``a`` in the layout of :func:`_frame_major` (no copy when it already is)."""
    if a.swapaxes(-1, -2).flags.c_contiguous:
        return a
    out = _frame_major(a.shape, a.dtype)
    np.copyto(out, a)
    return out


def initial_phase(
    shape: tuple[int, ...],
    dtype: Any,
    *,
    init: Init = "random",
    random_state: int | np.random.Generator | np.random.RandomState | None = None,
) -> np.ndarray:
    """Unit phasors to start from, shape ``shape``, complex ``dtype``.

    ``init='random'``: ``exp(2j*pi*u)`` with ``u = rng.random(shape)`` (float64),
    where ``rng`` is ``np.random.RandomState(random_state)`` for an ``int`` (as
    librosa), the given generator, or ``np.random.default_rng()`` for None.
    ``init='zeros'``: all ones (phase 0).
    """
    out = np.empty(shape, dtype=dtype)
    if init == "zeros":
        out[...] = 1.0
        return out
    if init != "random":
        raise ParameterError(f"init must be one of {', '.join(INITS)}; got {init!r}")
    rng: np.random.Generator | np.random.RandomState
    if random_state is None:
        rng = np.random.default_rng()
    elif isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        rng = random_state
    elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        if not 0 <= random_state < 2**32:
            raise ParameterError(f"random_state must be an integer from 0 to 2**32 - 1, got {random_state!r}")
        rng = np.random.RandomState(seed=int(random_state))
    else:
        raise ParameterError(f"random_state must be an int, a numpy Generator/RandomState or None, got {random_state!r}")
    angles = 2 * np.pi * rng.random(size=shape)
    out.real = np.cos(angles)
    out.imag = np.sin(angles)
    return out


def griffinlim(
    S: np.ndarray,
    plan: StftPlan,
    *,
    n_iter: int = 32,
    momentum: float = DEFAULT_MOMENTUM,
    init: Init = "random",
    random_state: int | np.random.Generator | np.random.RandomState | None = None,
    length: int | None = None,
    backend: FftBackend | None = None,
    callback: Callable[[int, float], None] | None = None,
) -> GriffinLim:
    """Rebuild a signal from an STFT magnitude by (fast) Griffin-Lim (see the module docstring).

    Parameters
    ----------
    S : np.ndarray, shape (..., n_freqs, n_frames), real >= 0
        Target magnitude ``|X|`` (linear; square-root a power spectrogram
        first).  float32 is processed in single precision (complex64),
        anything else in float64, unless ``plan.dtype`` says otherwise.
    plan : StftPlan
        The framing ``S`` was computed with; must satisfy NOLA.
    n_iter : int >= 0
        Iterations (default 32, librosa's).  0 returns the inverse of the
        initial estimate.
    momentum : float >= 0
        Fast Griffin-Lim momentum (default 0.99); 0 is the original algorithm.
        Above 1 it may diverge (a ``UserWarning`` says so).
    init : {'random', 'zeros'}
        Initial phase: uniform random, or all zero (librosa's ``init=None``).
    random_state : int, np.random.Generator, np.random.RandomState or None
        Seed or generator of the initial phase (see :func:`initial_phase`).
    length : int >= 1, optional
        Output length in samples (default ``plan.n_samples(n_frames)``); it must
        give back ``n_frames`` frames (``plan.n_frames(length) == n_frames``).
    backend : FFT backend, optional
        Default :func:`audiokit.engine.get_backend`.
    callback : callable(i, sc), optional
        Called after the forward STFT of each iteration with the iteration
        index ``i`` (0-based) and the spectral convergence of ``x_i``; then once
        with ``i = n_iter`` for the output.

    Returns
    -------
    GriffinLim
        ``.y`` shaped ``(..., length)`` and ``.convergence`` shaped ``(n_iter + 1,)``.

    Raises
    ------
    ParameterError
        For a complex, negative or non-finite ``S``, a shape that does not fit
        the plan, a bad ``n_iter``/``momentum``/``init``/``random_state``/``length``,
        or a plan that violates NOLA.
    """
    if not isinstance(plan, StftPlan):
        raise ParameterError(f"plan must be an StftPlan, got {type(plan).__name__}")
    plan.require_invertible()
    S = np.asarray(S)
    if np.iscomplexobj(S):
        raise ParameterError(
            f"S must be a real magnitude |X|, got complex {S.dtype}: a complex STFT already has its phase; use istft"
        )
    if S.ndim < 2 or S.shape[-2] != plan.n_freqs:
        raise ParameterError(f"S must be shaped (..., n_freqs={plan.n_freqs}, n_frames) for n_fft={plan.n_fft}, got {S.shape}")
    if S.shape[-1] == 0:
        raise ParameterError("S has no frames")
    if S.dtype.kind not in "fiub":
        raise ParameterError(f"S must hold real numbers, got dtype {S.dtype}")
    rdt = plan.working_dtype(S.dtype)
    S = S.astype(rdt, copy=False)
    if not np.isfinite(S).all():
        raise ParameterError("S holds NaN or Inf values")
    if S.size and S.min() < 0:
        raise ParameterError(f"S must be a magnitude >= 0, its minimum is {float(S.min()):g}")
    n_iter = check_int(n_iter, "n_iter", minimum=0, message="{name} must be an integer >= 0, got {value!r}")
    momentum = check_real(momentum, "momentum", message="momentum must be a finite number >= 0, got {value!r}")
    if momentum < 0:
        raise ParameterError(f"momentum must be a finite number >= 0, got {momentum!r}")
    if momentum > 1:
        warnings.warn(f"Griffin-Lim with momentum={momentum} > 1 may diverge", UserWarning, stacklevel=2)
    n_frames = S.shape[-1]
    if length is None:
        length = plan.n_samples(n_frames)
    else:
        length = check_int(length, "length", minimum=1, message="length must be an integer >= 1 (samples), got {value!r}")
    if plan.n_frames(length) != n_frames:
        raise ParameterError(
            f"length {length} samples gives {plan.n_frames(length)} frames under this plan, not the {n_frames} of S"
        )
    if length < plan.n_fft:  # said once, not by every forward STFT of the loop
        warnings.warn(f"{length} samples, fewer than n_fft={plan.n_fft}: every frame is padded", UserWarning, stacklevel=2)
    backend = get_backend() if backend is None else backend
    cdt = np.result_type(rdt, np.complex64)
    beta = momentum / (1.0 + momentum)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"input has \d+ samples, fewer than n_fft", category=UserWarning)
        return _iterate(S, plan, n_iter, beta, init, random_state, length, backend, callback, cdt, rdt)


def _iterate(
    S: np.ndarray,
    plan: StftPlan,
    n_iter: int,
    beta: float,
    init: Init,
    random_state: int | np.random.Generator | np.random.RandomState | None,
    length: int,
    backend: FftBackend,
    callback: Callable[[int, float], None] | None,
    cdt: Any,
    rdt: Any,
) -> GriffinLim:
    """The loop of :func:`griffinlim` on checked arguments (``beta = momentum / (1 + momentum)``).

    Every work array is laid out like the STFT's output, frame-major (a ``(..., n_freqs, n_frames)`` view of
    ``(..., n_frames, n_freqs)`` memory), so the elementwise passes run over contiguous memory in the same
    order and the inverse STFT reads whole frames.
    """
    tiny = np.finfo(rdt).tiny
    S = _frame_major_copy(S)
    norm = _frobenius(S)

    def sc(X: np.ndarray, scratch: np.ndarray) -> float:
        if norm == 0.0:
            return float("nan")
        np.abs(X, out=scratch)
        np.subtract(S, scratch, out=scratch)
        np.square(scratch, out=scratch)
        return float(np.sqrt(scratch.sum(dtype=np.float64))) / norm

    angles = _frame_major(S.shape, cdt)
    np.copyto(angles, initial_phase(S.shape, cdt, init=init, random_state=random_state))
    angles *= S
    mag = _frame_major(S.shape, rdt)  # |a|, then the convergence scratch
    convergence = np.empty(n_iter + 1)
    tprev: np.ndarray | None = None
    for i in range(n_iter):
        x = plan.istft(angles, length=length, backend=backend)
        rebuilt = plan.stft(x, backend=backend)
        convergence[i] = sc(rebuilt, mag)
        if callback is not None:
            callback(i, float(convergence[i]))
        # a = rebuilt - beta * tprev (the same roundings as librosa's), then angles = a * (S / (|a| + tiny))
        if tprev is None:
            np.copyto(angles, rebuilt)
        else:
            np.multiply(tprev, -beta, out=angles)
            angles += rebuilt
        np.abs(angles, out=mag)
        mag += tiny
        np.divide(S, mag, out=mag)
        angles.real *= mag
        angles.imag *= mag
        tprev = rebuilt
    y = plan.istft(angles, length=length, backend=backend)
    convergence[n_iter] = sc(plan.stft(y, backend=backend), mag)
    if callback is not None:
        callback(n_iter, float(convergence[n_iter]))
    return GriffinLim(y=y, convergence=convergence)


def mel_to_linear(
    M: np.ndarray,
    filterbank: np.ndarray,
    *,
    method: Literal["pinv", "nnls"] = "pinv",
    max_iter: int = 100,
) -> np.ndarray:
    """Estimate the linear-frequency spectrogram ``P`` with ``filterbank @ P ~ M`` (``P >= 0``).

    Parameters
    ----------
    M : np.ndarray, shape (..., n_mels, n_frames), real >= 0
        Mel spectrogram (any power of ``|X|``: the result has the same one).
    filterbank : np.ndarray, shape (n_mels, n_freqs)
        The bank ``M`` was computed with (:func:`audiokit.dsp.mel.mel_filterbank`).
    method : {'pinv', 'nnls'}
        ``'pinv'``: ``max(0, pinv(F) @ M)`` (minimum-norm least squares, then
        negative values set to 0; one matrix product).  ``'nnls'``:
        non-negative least squares per frame, ``min ||F P - M||_2, P >= 0``, by
        projected gradient descent (Nesterov-accelerated, ``max_iter`` steps
        of size ``1/||F||_2**2``, started from the ``'pinv'`` estimate) --
        closer to ``M`` when re-projected, slower.  librosa's
        ``feature.inverse.mel_to_stft`` solves the same NNLS with L-BFGS-B.
    max_iter : int > 0
        Gradient steps for ``'nnls'``.

    Returns
    -------
    P : np.ndarray, shape (..., n_freqs, n_frames), float64
        Bins that no filter covers (outside ``fmin..fmax``) come back as 0.
    """
    F = np.asarray(filterbank, dtype=np.float64)
    M = np.asarray(M, dtype=np.float64)
    if F.ndim != 2 or M.ndim < 2 or M.shape[-2] != F.shape[0]:
        raise ParameterError(f"M must be shaped (..., n_mels={F.shape[0] if F.ndim == 2 else '?'}, n_frames), got {M.shape}")
    if method not in ("pinv", "nnls"):
        raise ParameterError(f"method must be one of pinv, nnls; got {method!r}")
    max_iter = check_int(max_iter, "max_iter", minimum=1, message="{name} must be an integer > 0, got {value!r}")
    from scipy import sparse  # mel banks are ~2 nonzeros per bin: sparse products, no multi-threaded BLAS stalls

    Fs = sparse.csr_matrix(F)
    lead = M.shape[:-2]
    M2 = np.moveaxis(M, -2, 0).reshape(F.shape[0], -1)  # (n_mels, frames of every channel)
    P = np.maximum(0.0, np.linalg.pinv(F) @ M2)
    if method == "nnls":
        step = 1.0 / float(np.linalg.eigvalsh(F @ F.T)[-1])  # 1 / ||F||_2**2
        FtM = Fs.T @ M2
        z, prev, t = P.copy(), P, 1.0
        for _ in range(max_iter):
            new = np.maximum(0.0, z - step * (Fs.T @ (Fs @ z) - FtM))
            t_next = (1 + np.sqrt(1 + 4 * t * t)) / 2
            z = new + ((t - 1) / t_next) * (new - prev)
            prev, t = new, t_next
        P = prev
    P = np.asarray(P).reshape((F.shape[1],) + lead + (M.shape[-1],))
    return np.ascontiguousarray(np.moveaxis(P, 0, -2))

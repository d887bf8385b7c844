"""The flat public API (librosa's model): one function per capability, samples first, keyword-only options.

Every function takes the samples first (``y`` shaped ``(..., n)``: leading
axes are channels or a batch, the last axis is time) and then keyword-only
arguments with the names librosa uses (``sr``, ``n_fft``, ``hop_length``,
``win_length``, ``n_mels``, ``fmin``, ``fmax``), in samples and Hz.  The
conventions (framing without centring, periodic Hann, unnormalised DFT, HTK
mel, dB floors) are those of ``docs/conventions.md``.  The defaults are the
command line's (:mod:`audiokit.defaults`, read by both): a 25 ms window and a
10 ms hop rounded to samples at ``sr``, ``n_fft`` = the window, 80 HTK mel
bands, dB re 1 without a clip, 20 cepstra -- so ``audiokit.mfcc(y, sr=sr)``
is ``audiokit mfcc`` (librosa's names, not librosa's defaults: its 2048/512
framing is ``compat="librosa"``).  Import these from
``audiokit`` directly (``audiokit.stft(...)``); the modules under
:mod:`audiokit.dsp` hold the classes for streaming (``StftPlan``,
``StftStream``, ``Resampler``, ``Quantizer``, ``HumRemover``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from . import defaults as _d

if TYPE_CHECKING:
    from .dsp.dft import Spectrum
    from .dsp.hum import DehumResult
    from .dsp.peaks import Peak
    from .dsp.pitch import pyin, yin
    from .dsp.stft import StftPlan
    from .dsp.stft.plan import PadMode

__all__ = [
    "stft",
    "istft",
    "spectrogram",
    "melspectrogram",
    "log_melspectrogram",
    "mel_filterbank",
    "spectrum",
    "find_peaks",
    "resample",
    "quantize",
    "dehum",
    "generate",
    "griffinlim",
    "mfcc",
    "yin",
    "pyin",
]

#: Sample rate given to the STFT plan when the caller gives none: it only labels the time and frequency axes.
_AXIS_SR = 1.0


def _rows(y: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """``y`` shaped ``(..., n)`` as ``(rows, n)`` for the core's ``(channels, n)`` functions, and the leading shape."""
    y = np.asarray(y)
    return y.reshape(-1, y.shape[-1]), y.shape[:-1]


def _plan(
    *,
    sr: float | None,
    n_fft: int | None,
    hop_length: int | None,
    win_length: int | None,
    window: str,
    center: bool,
    pad_mode: PadMode,
    caller: str,
) -> StftPlan:
    """The :class:`~audiokit.dsp.stft.StftPlan` of librosa-style arguments, None taking the CLI's defaults.

    ``win_length`` defaults to 25 ms and ``hop_length`` to 10 ms at ``sr`` (rounded to samples), ``n_fft`` to
    ``win_length`` (:func:`audiokit.defaults.frame_samples`): a default needs ``sr``.
    """
    from .dsp.stft import StftPlan

    n, win, hop = _d.frame_samples(sr, n_fft=n_fft, win_length=win_length, hop_length=hop_length, caller=caller)
    return StftPlan(
        sr=_AXIS_SR if sr is None else sr,
        win_length=win,
        hop_length=hop,
        n_fft=n,
        window=window,
        center=center,
        pad_mode=pad_mode,
    )


def _inverse_plan(n_freqs: int, *, n_fft: int | None, win_length: int | None, **rest: Any) -> StftPlan:
    """:func:`_plan` for spectra of ``n_freqs`` rows: ``n_fft`` defaults to ``2 * (n_freqs - 1)``, ``win_length``
    to ``n_fft`` (``istft``, ``griffinlim``)."""
    size = 2 * (n_freqs - 1) if n_fft is None else n_fft
    return _plan(n_fft=size, win_length=size if win_length is None else win_length, **rest)


def stft(
    y: np.ndarray,
    *,
    n_fft: int | None = None,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: str = _d.WINDOW,
    center: bool = _d.CENTER,
    pad_mode: PadMode = _d.PAD_MODE,
    sr: float | None = None,
) -> np.ndarray:
    """Complex STFT ``X[..., k, m] = Σ_n w[n]·y[m·hop + n]·e^(−2πikn/n_fft)`` (unnormalised).

    Parameters
    ----------
    y : np.ndarray, shape (..., n), float32 or float64
        Samples; float32 is transformed in single precision.
    n_fft, hop_length, win_length : int, optional
        DFT size, samples between frame starts and window length (``<= n_fft``; a shorter window is centred in
        the frame and zero-padded).  Defaults as ``audiokit spectrogram``: ``win_length`` 25 ms and
        ``hop_length`` 10 ms at ``sr`` (rounded to samples: 400 and 160 at 16 kHz), ``n_fft`` = ``win_length``;
        a default needs ``sr``.
    window : str
        Window name (periodic), e.g. ``hann``, ``hamming``, ``kaiser:8.6``.
    center : bool
        Pad ``n_fft // 2`` on each side (librosa/torchaudio framing) instead of starting frame m at ``m·hop``.
    pad_mode : {'constant', 'reflect'}
        Padding used with ``center``.
    sr : float, optional
        Sample rate (Hz): turns the default window and hop into samples, and labels axes.

    Returns
    -------
    np.ndarray, shape (..., n_fft // 2 + 1, n_frames), complex
    """
    plan = _plan(
        sr=sr,
        n_fft=n_fft,
        hop_length=hop_length,
        win_length=win_length,
        window=window,
        center=center,
        pad_mode=pad_mode,
        caller="stft",
    )
    return plan.stft(np.asarray(y))


def istft(
    stft_matrix: np.ndarray,
    *,
    n_fft: int | None = None,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: str = _d.WINDOW,
    center: bool = _d.CENTER,
    pad_mode: PadMode = _d.PAD_MODE,
    length: int | None = None,
    sr: float | None = None,
) -> np.ndarray:
    """Inverse of :func:`stft` by weighted overlap-add (exact wherever the window sum is nonzero).

    Parameters
    ----------
    stft_matrix : np.ndarray, shape (..., n_freqs, n_frames), complex
        As returned by :func:`stft`; ``n_fft`` defaults to ``2·(n_freqs − 1)``.
    hop_length, win_length : int, optional
        As :func:`stft`: ``hop_length`` 10 ms at ``sr`` (a default needs ``sr``); ``win_length`` defaults to
        ``n_fft`` (what :func:`stft`'s defaults give).
    length : int, optional
        Samples of the output (default: what the frames cover).

    Returns
    -------
    np.ndarray, shape (..., length), float
    """
    X = np.asarray(stft_matrix)
    plan = _inverse_plan(
        X.shape[-2],
        sr=sr,
        n_fft=n_fft,
        hop_length=hop_length,
        win_length=win_length,
        window=window,
        center=center,
        pad_mode=pad_mode,
        caller="istft",
    )
    return plan.istft(X, length=length)


def griffinlim(
    S: np.ndarray,
    *,
    n_iter: int = 32,
    hop_length: int | None = None,
    win_length: int | None = None,
    n_fft: int | None = None,
    window: str = _d.WINDOW,
    center: bool = _d.CENTER,
    pad_mode: PadMode = _d.PAD_MODE,
    momentum: float = 0.99,
    init: Literal["random", "zeros"] | None = "random",
    random_state: int | np.random.Generator | np.random.RandomState | None = None,
    length: int | None = None,
    sr: float | None = None,
) -> np.ndarray:
    """A signal whose STFT magnitude approaches ``S``, by fast Griffin-Lim (:mod:`audiokit.dsp.griffinlim`).

    Parameters
    ----------
    S : np.ndarray, shape (..., n_freqs, n_frames), real >= 0
        Magnitude ``|X|`` of :func:`stft` with the same framing arguments (``np.sqrt`` a power first).
    n_iter : int >= 0
        Iterations (default 32).
    n_fft : int, optional
        Default ``2·(n_freqs − 1)``; ``hop_length``, ``win_length``, ``window``, ``center``, ``pad_mode`` as
        :func:`istft` (``hop_length`` 10 ms at ``sr``, ``win_length`` = ``n_fft``).
    momentum : float >= 0
        0.99 (fast Griffin-Lim, default); 0 is the original algorithm.
    init : {'random', 'zeros'} or None
        Initial phase: uniform random, or 0 (``None`` means ``'zeros'``, librosa's spelling).
    random_state : int, numpy Generator/RandomState or None
        Seed of the random phase: an int seeds ``np.random.RandomState`` as librosa does.
    length : int, optional
        Output samples (default: what the frames cover); must give back ``n_frames`` frames.

    Returns
    -------
    np.ndarray, shape (..., length), float32 (float32 ``S``) or float64

    Notes
    -----
    ``librosa.griffinlim(S, n_iter=n, hop_length=H, random_state=seed)`` is
    ``griffinlim(S, n_iter=n, hop_length=H, center=True, random_state=seed)`` (librosa centres by default,
    audiokit does not).  The per-iteration spectral convergence is returned by
    :func:`audiokit.dsp.griffinlim.griffinlim`.
    """
    from .dsp.griffinlim import griffinlim as _griffinlim
    from .errors import ParameterError

    S = np.asarray(S)
    if S.ndim < 2:
        raise ParameterError(f"S must be shaped (..., n_freqs, n_frames), got {S.shape}")
    plan = _inverse_plan(
        S.shape[-2],
        sr=sr,
        n_fft=n_fft,
        hop_length=hop_length,
        win_length=win_length,
        window=window,
        center=center,
        pad_mode=pad_mode,
        caller="griffinlim",
    )
    return _griffinlim(
        S,
        plan,
        n_iter=n_iter,
        momentum=momentum,
        init="zeros" if init is None else init,
        random_state=random_state,
        length=length,
    ).y


def spectrogram(
    y: np.ndarray,
    *,
    n_fft: int | None = None,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: str = _d.WINDOW,
    center: bool = _d.CENTER,
    pad_mode: PadMode = _d.PAD_MODE,
    power: float = 2.0,
    log: Literal["db", "ln"] | None = None,
    sr: float | None = None,
) -> np.ndarray:
    """``|X|**power`` of :func:`stft` (power 2: power, 1: magnitude), optionally in dB or ln (floored, re 1).

    Framing arguments as :func:`stft`.  ``log="db"`` gives ``audiokit spectrogram --npy``'s default values
    (``10·log10(max(|X|², 1e-10))``, no reference, no clip); the default ``None`` is ``--scale power``.

    Returns
    -------
    np.ndarray, shape (..., n_fft // 2 + 1, n_frames), float
    """
    from .dsp.stft import spectrogram as _spectrogram

    plan = _plan(
        sr=sr,
        n_fft=n_fft,
        hop_length=hop_length,
        win_length=win_length,
        window=window,
        center=center,
        pad_mode=pad_mode,
        caller="spectrogram",
    )
    return _spectrogram(np.asarray(y), plan, power=power, log=log)


def mel_filterbank(
    *,
    sr: float,
    n_fft: int,
    n_mels: int = _d.N_MELS,
    fmin: float = _d.FMIN_HZ,
    fmax: float | None = None,
    mel_scale: Literal["htk", "slaney"] = _d.MEL_SCALE,
    norm: Literal["slaney"] | None = None,
    dtype: Any = np.float64,
) -> np.ndarray:
    """Triangular mel filter bank, shape ``(n_mels, n_fft // 2 + 1)`` (HTK ``2595·log10(1 + f/700)`` by default)."""
    from .dsp.mel import mel_filterbank as _bank

    return _bank(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, scale=mel_scale, norm=norm, dtype=dtype)


def melspectrogram(
    y: np.ndarray,
    *,
    sr: float,
    n_fft: int | None = None,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: str = _d.WINDOW,
    center: bool = _d.CENTER,
    pad_mode: PadMode = _d.PAD_MODE,
    n_mels: int = _d.N_MELS,
    fmin: float = _d.FMIN_HZ,
    fmax: float | None = None,
    mel_scale: Literal["htk", "slaney"] = _d.MEL_SCALE,
    norm: Literal["slaney"] | None = None,
    power: float = 2.0,
) -> np.ndarray:
    """Mel spectrogram ``F @ |STFT(y)|**power``, shape ``(..., n_mels, n_frames)``.

    Framing arguments as :func:`stft` (defaults: 25 ms / 10 ms at ``sr``, ``n_fft`` = the window); the bank as
    :func:`mel_filterbank` (80 HTK bands from 0 to ``sr/2``, peak 1): ``audiokit mel --scale power``.
    """
    from .dsp.mel import melspectrogram as _mel

    plan = _plan(
        sr=sr,
        n_fft=n_fft,
        hop_length=hop_length,
        win_length=win_length,
        window=window,
        center=center,
        pad_mode=pad_mode,
        caller="melspectrogram",
    )
    return _mel(np.asarray(y), plan, n_mels=n_mels, fmin=fmin, fmax=fmax, scale=mel_scale, norm=norm, power=power)


def log_melspectrogram(
    y: np.ndarray,
    *,
    sr: float,
    n_fft: int | None = None,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: str = _d.WINDOW,
    center: bool = _d.CENTER,
    pad_mode: PadMode = _d.PAD_MODE,
    n_mels: int = _d.N_MELS,
    fmin: float = _d.FMIN_HZ,
    fmax: float | None = None,
    mel_scale: Literal["htk", "slaney"] = _d.MEL_SCALE,
    norm: Literal["slaney"] | None = None,
    power: float = 2.0,
    log: Literal["db", "ln", "log10"] = _d.LOG,
    amin: float | None = None,
    ref: float | Literal["max"] = _d.FEATURE_REF,
    top_db: float | None = _d.FEATURE_TOP_DB,
) -> np.ndarray:
    """Log-mel spectrogram: ``10·log10(max(M, amin)/ref)``, optionally clipped ``top_db`` below the maximum.

    By default absolute (``ref=1``, no clip: ``audiokit mel --npy``'s values), so levels compare across
    signals; ``ref="max", top_db=80`` is ``librosa.power_to_db(S, ref=np.max)``.  Framing and mel arguments as
    :func:`melspectrogram`.

    ``ref`` and ``top_db`` apply the same way for every ``log`` (and as ``audiokit mel --log``): the reference
    ``log(max(amin, ref))`` is subtracted, and the clip lies ``top_db`` **decibels** below the peak, i.e.
    ``top_db·ln(10)/10`` nepers (``ln``) or ``top_db/10`` decades (``log10``) for power (``/20`` for ``power=1``).
    ``log10`` is the dB value divided by 10 (power) or 20 (magnitude).
    """
    from .dsp.mel import log_melspectrogram as _logmel
    from .dsp.scaling import DB_FACTOR
    from .errors import ParameterError

    plan = _plan(
        sr=sr,
        n_fft=n_fft,
        hop_length=hop_length,
        win_length=win_length,
        window=window,
        center=center,
        pad_mode=pad_mode,
        caller="log_melspectrogram",
    )
    if log == "log10":
        if power not in (1, 2, 1.0, 2.0):
            raise ParameterError(f"log='log10' needs power 1 or 2, got {power!r}")
        L = _logmel(
            np.asarray(y),
            plan,
            n_mels=n_mels,
            fmin=fmin,
            fmax=fmax,
            scale=mel_scale,
            norm=norm,
            power=power,
            log="db",
            amin=amin,
            ref=ref,
            top_db=top_db,
        )
        L /= L.dtype.type(DB_FACTOR["power" if power == 2 else "magnitude"])
        return L
    return _logmel(
        np.asarray(y),
        plan,
        n_mels=n_mels,
        fmin=fmin,
        fmax=fmax,
        scale=mel_scale,
        norm=norm,
        power=power,
        log=log,
        amin=amin,
        ref=ref,
        top_db=top_db,
    )


#: ``audiokit.mfcc`` defaults per ``compat`` (librosa's argument names); Kaldi takes its own names (below).
MFCC_PRESETS: dict[str | None, dict[str, Any]] = {
    None: dict(  # audiokit's own: the CLI's (audiokit.defaults); framing None = 25 ms / 10 ms at sr
        n_mfcc=_d.N_MFCC,
        n_fft=None,
        hop_length=None,
        win_length=None,
        window=_d.WINDOW,
        center=_d.CENTER,
        pad_mode=_d.PAD_MODE,
        n_mels=_d.N_MELS,
        mel_scale=_d.MEL_SCALE,
        norm=None,
        log=_d.LOG,
        amin=None,
        ref=_d.FEATURE_REF,
        top_db=_d.FEATURE_TOP_DB,
    ),
    "librosa": dict(
        n_mfcc=20,
        n_fft=2048,
        hop_length=512,
        win_length=None,
        window="hann",
        center=True,
        pad_mode="constant",
        n_mels=128,
        mel_scale="slaney",
        norm="slaney",
        log="db",
        amin=1e-10,
        ref=1.0,
        top_db=80.0,
    ),
    "torchaudio": dict(
        n_mfcc=40,
        n_fft=400,
        hop_length=200,
        win_length=None,
        window="hann",
        center=True,
        pad_mode="reflect",
        n_mels=128,
        mel_scale="htk",
        norm=None,
        log="db",
        amin=1e-10,
        ref=1.0,
        top_db=80.0,
    ),
}


def mfcc(
    y: np.ndarray,
    *,
    sr: float,
    compat: Literal["kaldi", "torchaudio", "librosa"] | None = None,
    lifter: float | None = None,
    energy: bool | None = None,
    deltas: int = 0,
    delta_method: Literal["kaldi", "librosa"] = "kaldi",
    cmvn: Literal["none", "utterance", "sliding"] = "none",
    **kwargs: Any,
) -> np.ndarray:
    """MFCCs ``(..., n_rows, n_frames)``: the orthonormal DCT-II of the log-mel spectrogram, or Kaldi's.

    The same computation as ``audiokit mfcc`` (whole-signal, in memory).

    Parameters
    ----------
    y : np.ndarray, shape (..., n_samples)
        Samples, full scale +/-1.
    sr : float > 0
        Sample rate (Hz).
    compat : {"kaldi", "torchaudio", "librosa"} or None
        None: audiokit's defaults, those of ``audiokit mfcc`` (:mod:`audiokit.defaults`: 25 ms / 10 ms at
        ``sr``, ``n_fft`` = the window, 80 HTK bands, dB re 1 without a clip, 20 cepstra).  Otherwise the
        defaults of that toolkit (:data:`MFCC_PRESETS`; ``"librosa"`` = ``librosa.feature.mfcc(y=y, sr=sr)``,
        ``"torchaudio"`` = ``transforms.MFCC(sample_rate=sr)``).  ``"kaldi"``: Kaldi ``compute-mfcc-feats``
        (:func:`audiokit.dsp.kaldi.kaldi_mfcc`; ``kwargs`` are its :class:`~audiokit.dsp.kaldi.MfccOptions` names:
        ``num_ceps``, ``frame_length_ms``, ``snip_edges``, ``dither``, ``seed``...), transposed to
        ``(n_ceps, n_frames)``.
    lifter : float >= 0, optional
        Cepstral lifter (0 = none; librosa's formula; Kaldi's ``cepstral_lifter`` with ``compat="kaldi"``).
    energy : bool, optional
        Replace c0 by the log of the frame's total power ``sum_k |X[k]|**2`` (same log, floor, reference and
        clip as the mel values); Kaldi's ``use_energy`` with ``compat="kaldi"``.
    deltas : {0, 1, 2}
        Append deltas of order 1 .. deltas as rows (:func:`audiokit.dsp.features.delta`).
    delta_method : {"kaldi", "librosa"}
        Kaldi ``add-deltas`` (window 2) or ``librosa.feature.delta`` (width 9).
    cmvn : {"none", "utterance", "sliding"}
        Mean normalisation before the deltas (:func:`audiokit.dsp.features.cmvn`, sliding window 600 centred).
    **kwargs
        ``n_mfcc``, ``n_fft``, ``hop_length``, ``win_length``, ``window``, ``center``, ``pad_mode``, ``n_mels``,
        ``fmin``, ``fmax``, ``mel_scale``, ``norm``, ``log`` (db/ln/log10), ``amin``, ``ref``, ``top_db`` (as
        :func:`log_melspectrogram`; the peak for ``top_db`` is over the mel values of every channel).

    Returns
    -------
    np.ndarray, float64 (float32 for the STFT path's float32 input), shape (..., n_mfcc * (deltas + 1), n_frames)
    """
    from .dsp import features as _features
    from .errors import ParameterError
    from .validate import check_choice, check_int

    if compat is not None:
        check_choice(compat, "compat", ("kaldi", "torchaudio", "librosa"))
    order = check_int(deltas, "deltas", minimum=0, maximum=2)
    check_choice(cmvn, "cmvn", ("none", "utterance", "sliding"))
    y = np.asarray(y)
    if compat == "kaldi":
        from .dsp.kaldi import kaldi_mfcc

        extra: dict[str, Any] = dict(kwargs)
        if lifter is not None:
            extra["cepstral_lifter"] = lifter
        if energy is not None:
            extra["use_energy"] = energy
        C = np.swapaxes(kaldi_mfcc(y, sr=sr, **extra), -1, -2)
    else:
        params = dict(MFCC_PRESETS[compat])
        unknown = set(kwargs) - set(params) - {"fmin", "fmax"}
        if unknown:
            raise ParameterError(f"mfcc: unknown argument(s) {', '.join(sorted(unknown))}")
        params.update(kwargs)
        if compat is not None and params["win_length"] is None:  # librosa's / torchaudio's rule: the window is n_fft
            params["win_length"] = params["n_fft"]
        C = _mfcc_stft(
            y, sr, params, lifter=_d.LIFTER if lifter is None else lifter, energy=_d.ENERGY if energy is None else energy
        )
    if cmvn != "none":
        C = _features.cmvn(C, mode=cmvn, axis=-1)
    if order:
        C = np.concatenate(
            [C] + [_features.delta(C, order=r, method=delta_method, axis=-1) for r in range(1, order + 1)], axis=-2
        )
    return C


def _mfcc_stft(y: np.ndarray, sr: float, p: dict[str, Any], *, lifter: float, energy: bool) -> np.ndarray:
    """The STFT path of :func:`mfcc`: mel power (+ total power row) -> log, ref, clip -> DCT-II ortho (+ energy)."""
    from .dsp import features as _features
    from .dsp.mel import mel_filterbank as _bank
    from .dsp.mel import melspectrogram as _mel
    from .dsp.scaling import AMIN
    from .errors import ParameterError

    plan = _plan(
        sr=sr,
        n_fft=p["n_fft"],
        hop_length=p["hop_length"],
        win_length=p["win_length"],
        window=p["window"],
        center=p["center"],
        pad_mode=p["pad_mode"],
        caller="mfcc",
    )
    fb = _bank(
        sr=sr,
        n_fft=plan.n_fft,
        n_mels=p["n_mels"],
        fmin=p.get("fmin", _d.FMIN_HZ),
        fmax=p.get("fmax"),
        scale=p["mel_scale"],
        norm=p["norm"],
        dtype=np.float32,
    )
    n_mels = fb.shape[0]
    if energy:
        fb = np.vstack([fb, np.ones((1, fb.shape[1]), dtype=fb.dtype)])
    M = _mel(y, plan, filterbank=fb, power=2.0).astype(np.float64)
    amin = AMIN["power"] if p["amin"] is None else float(p["amin"])
    log = p["log"]
    if log not in ("db", "ln", "log10"):
        raise ParameterError(f"log must be one of db, ln, log10; got {log!r}")
    fn: Any = {"db": lambda v: 10.0 * np.log10(v), "ln": np.log, "log10": np.log10}[log]
    per_db = {"db": 1.0, "ln": 10.0 / np.log(10.0), "log10": 10.0}[log]
    L = fn(np.maximum(M, amin))
    peak = float(fn(max(float(M[..., :n_mels, :].max()) if M.size else amin, amin)))
    ref = p["ref"]
    ref_l = peak if ref == "max" else float(fn(max(amin, float(ref))))
    L -= ref_l
    if p["top_db"] is not None:
        np.maximum(L, peak - ref_l - float(p["top_db"]) / per_db, out=L)
    e = L[..., n_mels, :] if energy else None  # (..., n_frames): replaces c0
    return _features.mfcc(L[..., :n_mels, :], n_mfcc=p["n_mfcc"], lifter=lifter, energy=e, axis=-1)


def spectrum(
    y: np.ndarray,
    *,
    sr: float,
    n_fft: int | None = None,
    window: str = "hann",
    periodic: bool = True,
) -> Spectrum:
    """One-sided DFT of the whole signal (windowed, zero-padded to ``n_fft``), as a :class:`~audiokit.dsp.dft.Spectrum`."""
    from .dsp.dft import spectrum as _spectrum

    return _spectrum(np.asarray(y), sr=sr, window=window, n_fft=n_fft, periodic=periodic)


def find_peaks(
    spec: Spectrum,
    *,
    k: int = 5,
    threshold_db: float = -60.0,
    min_separation_hz: float | None = None,
) -> list[Peak]:
    """The ``k`` strongest sinusoidal peaks of a one-channel :func:`spectrum`, fitted between bins."""
    from .dsp.peaks import find_peaks as _find_peaks

    return _find_peaks(spec, k=k, threshold_db=threshold_db, min_separation_hz=min_separation_hz)


def resample(
    y: np.ndarray,
    *,
    sr: int,
    target_sr: int,
    quality: Literal["very-high", "high", "medium", "low", "quick"] = "high",
) -> np.ndarray:
    """Band-limited sample-rate conversion (soxr); output length ``floor(n·target_sr/sr + 1/2)``."""
    from .dsp.resample import resample as _resample

    rows, lead = _rows(y)
    out = _resample(rows, sr_in=sr, sr_out=target_sr, quality=quality)
    return out.reshape(*lead, out.shape[-1])


def quantize(
    y: np.ndarray,
    *,
    bits: int,
    dither: Literal["tpdf", "rpdf", "none"] = "tpdf",
    noise_shape: Literal["none", "first"] = "none",
    seed: int | None = None,
) -> np.ndarray:
    """Round to the B-bit mid-tread grid ``k / 2**(B-1)`` after dither (and optional first-order noise shaping)."""
    from .dsp.quantize import quantize as _quantize

    rows, lead = _rows(y)
    return _quantize(rows, bits=bits, dither=dither, noise_shape=noise_shape, seed=seed).reshape(*lead, rows.shape[-1])


def dehum(
    y: np.ndarray,
    *,
    sr: int,
    freq: float | None = None,
    method: Literal["subtract", "erase"] = "subtract",
    harmonics: int | None = None,
    threshold_db: float | None = None,
) -> DehumResult:
    """Remove mains hum (``freq`` Hz, or None: try 50 and 60); ``.output``, ``.residual``, ``.analysis``."""
    from .dsp.hum import DEFAULT_THRESHOLD_DB
    from .dsp.hum import dehum as _dehum

    threshold = DEFAULT_THRESHOLD_DB if threshold_db is None else threshold_db
    return _dehum(np.asarray(y), sr=sr, freq=freq, method=method, harmonics=harmonics, threshold_db=threshold)


def generate(spec: str, *, sr: int, n_samples: int, channels: int = 1, seed: int | None = None) -> np.ndarray:
    """Render a signal spec such as ``"sine:440 + hum:50"`` (see ``audiokit generate --help``), shape ``(channels, n)``."""
    from .dsp.generate import generate as _generate

    return _generate(spec, n_samples=n_samples, sr=sr, channels=channels, seed=seed)


#: The pitch functions are :mod:`audiokit.dsp.pitch`'s own (librosa 0.11's signatures, defaults and docstrings are
#: written there once): ``audiokit.yin is audiokit.dsp.pitch.yin``, imported on first use.
_PITCH = ("yin", "pyin")


def __getattr__(name: str) -> Any:
    if name in _PITCH:
        from .dsp import pitch

        value = getattr(pitch, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

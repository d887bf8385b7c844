"""The STFT plan: parameters, frame geometry and window tables.

:class:`StftPlan` holds what defines a transform (sample rate, window, hop,
FFT size, centring, working precision) and derives everything else from it:
frame counts, frame times, bin frequencies, the padded window, and the window
sum-square that normalises the overlap-add.  The definitions and the flags
that reproduce librosa and scipy are in :mod:`audiokit.dsp.stft`.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from ...errors import InputError, ParameterError
from ...validate import check_choice, check_int, check_real
from ..windows import DEFAULT_OLA_TOL, WindowSpec, nola_min, parse_window_spec

if TYPE_CHECKING:
    from ...engine import FftBackend
    from .forward import StftStream

__all__ = [
    "CHUNK_BYTES",
    "DEFAULT_CHUNK_FRAMES",
    "DTYPES",
    "PAD_MODES",
    "DTypeName",
    "FrameTime",
    "PadMode",
    "StftPlan",
    "WssTables",
    "check_signal",
    "chunk_frames_for",
    "warn_short",
    "wss_blocks",
]

PadMode = Literal["constant", "reflect"]
PAD_MODES: tuple[str, ...] = get_args(PadMode)
DTypeName = Literal["float32", "float64"]
DTYPES: tuple[str, ...] = get_args(DTypeName)
FrameTime = Literal["start", "centre", "center"]

#: Frames per FFT batch: large enough to amortise call overhead, small enough
#: that the batch (n_fft * 4 bytes * chunk) stays in cache.  64 to 768 frames
#: measured within 3% of each other (16 kHz, n_fft 512, hop 160).
DEFAULT_CHUNK_FRAMES = 256
#: Most bytes of real frame samples per FFT batch (16 MiB): long windows (25 ms at 3 MHz is 75 000 samples) get
#: fewer frames per batch, so the batch buffers, their spectra and the polyphase layout stay bounded (issue 20).
#: Batches of ``DEFAULT_CHUNK_FRAMES`` frames of up to 16 384 float32 / 8 192 float64 samples are not cut.
CHUNK_BYTES = 16 * 1024 * 1024


def chunk_frames_for(n_fft: int, itemsize: int, chunk_frames: int = DEFAULT_CHUNK_FRAMES) -> int:
    """Frames per FFT batch: ``min(chunk_frames, max(1, CHUNK_BYTES // (n_fft * itemsize)))``.

    Parameters
    ----------
    n_fft : int > 0
        Frame length in samples.
    itemsize : int
        Bytes per real sample of the working dtype (4 or 8).
    chunk_frames : int > 0
        The frames asked for.
    """
    return min(chunk_frames, max(1, CHUNK_BYTES // (n_fft * itemsize)))


@dataclass(frozen=True, kw_only=True, init=False)
class StftPlan:
    """Parameters of a short-time Fourier transform (immutable).

    Parameters
    ----------
    sr : float > 0
        Sample rate in Hz.
    win_length : int > 0
        Window length ``W`` in samples.
    hop_length : int > 0
        Hop ``H`` between frame starts, in samples.
    n_fft : int >= win_length, optional
        FFT size ``N`` in samples (default ``win_length``).  A window shorter
        than ``N`` is centred in the frame (librosa's placement).  After
        construction the attribute is always an ``int``.
    window : str
        Window name or spec (``"hann"``, ``"hamming"``, ``"kaiser:8.6"``, ...;
        see :mod:`audiokit.dsp.windows`).  Default ``"hann"``.
    beta : float >= 0, optional
        Kaiser beta (default 8.6); only for ``window="kaiser"``.
    periodic : bool
        Periodic (default) or symmetric window.
    center : bool
        False (default): frame ``m`` starts at sample ``m*H``.  True: pad
        ``n_fft//2`` samples each side so that frame ``m`` is centred on sample
        ``m*H`` (librosa's default).
    pad_mode : {'constant', 'reflect'}
        Padding for ``center=True``: zeros, or the mirror image excluding the
        edge sample (``numpy.pad`` ``'reflect'``).
    dtype : {'float32', 'float64'} or None
        Working precision.  None (default) follows the input: float32 input
        is processed in float32 (complex64 spectra), anything else in float64.

    Notes
    -----
    Read the :mod:`audiokit.dsp.stft` package docstring for the exact
    definition, frame counts, and the flags that reproduce librosa and scipy.
    """

    sr: float
    win_length: int
    hop_length: int
    n_fft: int
    window: str = "hann"
    beta: float | None = None
    periodic: bool = True
    center: bool = False
    pad_mode: PadMode = "constant"
    dtype: DTypeName | None = None
    _spec: WindowSpec = field(init=False, repr=False, compare=False)
    _win: np.ndarray = field(init=False, repr=False, compare=False)
    _vwin: np.ndarray = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        *,
        sr: float,
        win_length: int,
        hop_length: int,
        n_fft: int | None = None,
        window: str = "hann",
        beta: float | None = None,
        periodic: bool = True,
        center: bool = False,
        pad_mode: PadMode = "constant",
        dtype: Any = None,
    ) -> None:
        check_real(sr, "sr", positive=True, message="sr must be a number > 0 (Hz), got {value!r}")
        win_length = check_int(
            win_length, "win_length", minimum=1, message="{name} must be an integer > 0 (samples), got {value!r}"
        )
        hop_length = check_int(
            hop_length, "hop_length", minimum=1, message="{name} must be an integer > 0 (samples), got {value!r}"
        )
        n_fft = check_int(
            win_length if n_fft is None else n_fft,
            "n_fft",
            minimum=win_length,
            message="n_fft must be an integer >= win_length ({minimum}), got {value!r}",
        )
        if isinstance(window, str) and ":" in window:
            spec = parse_window_spec(window)
            if beta is not None and spec.beta != beta:
                raise ParameterError(f"give the kaiser beta once: window={window!r} and beta={beta!r}")
        else:
            spec = WindowSpec(window, beta)
        check_choice(pad_mode, "pad_mode", PAD_MODES, message="{name} must be one of {allowed}; got {value!r}")
        if dtype is not None:
            dt = np.dtype(dtype).name if isinstance(dtype, (type, np.dtype)) else dtype
            if dt not in DTYPES:
                raise ParameterError(f"dtype must be one of {', '.join(DTYPES)} or None; got {dtype!r}")
            dtype = dt
        put = object.__setattr__  # frozen: fields are set once, here
        put(self, "sr", sr)
        put(self, "win_length", win_length)
        put(self, "hop_length", hop_length)
        put(self, "n_fft", n_fft)
        put(self, "window", spec.name)
        put(self, "beta", spec.beta)
        put(self, "periodic", bool(periodic))
        put(self, "center", bool(center))
        put(self, "pad_mode", pad_mode)
        put(self, "dtype", dtype)
        put(self, "_spec", spec)
        win = spec.get(win_length, periodic=self.periodic)
        vwin = np.zeros(n_fft)
        vwin[self.win_offset : self.win_offset + win_length] = win
        win.flags.writeable = False
        vwin.flags.writeable = False
        put(self, "_win", win)
        put(self, "_vwin", vwin)

    # ------------------------------------------------------------------ derived quantities
    @property
    def window_spec(self) -> str:
        """The window as text, ``"hann"`` or ``"kaiser:BETA"``."""
        return str(self._spec)

    @property
    def win(self) -> np.ndarray:
        """The window ``w``, shape ``(win_length,)``, float64 (read-only)."""
        return self._win

    @property
    def padded_window(self) -> np.ndarray:
        """The window centred in ``n_fft`` samples, ``v[win_offset : win_offset + W] = w``, shape ``(n_fft,)``."""
        return self._vwin

    @property
    def win_offset(self) -> int:
        """Offset of the window inside a frame: ``(n_fft - win_length) // 2`` samples."""
        return (self.n_fft - self.win_length) // 2

    @property
    def pad(self) -> int:
        """Samples padded on each side of the input: ``n_fft // 2`` if ``center`` else 0."""
        return self.n_fft // 2 if self.center else 0

    @property
    def n_freqs(self) -> int:
        """Number of one-sided frequency bins: ``n_fft // 2 + 1``."""
        return self.n_fft // 2 + 1

    @property
    def delta_f(self) -> float:
        """Bin spacing in Hz: ``sr / n_fft``."""
        return float(self.sr) / self.n_fft

    @property
    def delta_t(self) -> float:
        """Frame spacing in seconds: ``hop_length / sr``."""
        return self.hop_length / float(self.sr)

    @property
    def freqs(self) -> np.ndarray:
        """Bin frequencies in Hz: ``k * sr / n_fft`` for ``k = 0 .. n_fft//2``, shape ``(n_freqs,)``."""
        return np.arange(self.n_freqs) * (float(self.sr) / self.n_fft)

    def bins_between(self, fmin: float, fmax: float) -> slice:
        """The bins ``k`` with ``fmin <= k·sr/n_fft <= fmax`` (Hz), as a slice of the frequency axis.

        Raises
        ------
        ParameterError
            When ``fmax <= fmin`` or no bin falls in the range.
        """
        if fmax <= fmin:
            raise ParameterError(f"--fmin {fmin:g} Hz must be below --fmax {fmax:g} Hz")
        freqs = self.freqs
        keep = np.flatnonzero((freqs >= fmin) & (freqs <= fmax))
        if keep.size == 0:
            raise ParameterError(f"--fmin/--fmax {fmin:g}..{fmax:g} Hz contains no bin (bins are {self.delta_f:g} Hz apart)")
        return slice(int(keep[0]), int(keep[-1]) + 1)

    @property
    def nola_min(self) -> float:
        """Smallest steady-state sum of squared shifted windows, ``windows.nola_min(padded_window, hop_length)``."""
        return nola_min(self._vwin, self.hop_length)

    @property
    def invertible(self) -> bool:
        """True if the window meets NOLA for the hop (``nola_min > 1e-10``, scipy's ``check_NOLA``), so :meth:`istft` exists."""
        return self.nola_min > DEFAULT_OLA_TOL

    def n_frames(self, n_samples: int) -> int:
        """Number of frames for ``n_samples`` input samples (``n_samples >= 1``).

        ``center=False``: ``1 + (n - n_fft) // H`` if ``n >= n_fft`` else 1
        (short input zero-padded to one frame).  ``center=True``:
        ``1 + (n + 2*(n_fft//2) - n_fft) // H``.
        """
        n = int(n_samples)
        if n <= 0:
            raise ParameterError(f"n_samples must be >= 1, got {n_samples!r}")
        n_fft, hop = self.n_fft, self.hop_length
        if self.center:
            return 1 + (n + 2 * (n_fft // 2) - n_fft) // hop
        return 1 + (n - n_fft) // hop if n >= n_fft else 1

    def n_samples(self, n_frames: int) -> int:
        """Default :meth:`istft` output length in samples: ``n_fft + H*(n_frames - 1) - 2*pad``."""
        return self.n_fft + self.hop_length * (int(n_frames) - 1) - 2 * self.pad

    def times(self, n_frames: int, *, where: FrameTime = "start") -> np.ndarray:
        """Frame times in seconds, relative to the first input sample.

        Parameters
        ----------
        n_frames : int >= 0
        where : {'start', 'centre'}
            ``'start'``: first sample of the ``n_fft``-sample frame,
            ``(m*H - pad) / sr`` (negative for the first centred frames).
            ``'centre'`` (or ``'center'``): ``(m*H - pad + n_fft//2) / sr``,
            i.e. ``m*H/sr`` when ``center=True`` (librosa's ``frames_to_time``).

        Returns
        -------
        t : np.ndarray, shape (n_frames,), float64
        """
        if where not in ("start", "centre", "center"):
            raise ParameterError(f"where must be 'start' or 'centre', got {where!r}")
        offset = -self.pad + (self.n_fft // 2 if where != "start" else 0)
        return (np.arange(int(n_frames)) * self.hop_length + offset) / float(self.sr)

    def window_sumsquare(self, n_frames: int) -> np.ndarray:
        """Sum of squared shifted windows over the padded output, ``sum_m v[t - m*H]**2``.

        Returns
        -------
        wss : np.ndarray, shape (n_fft + H*(n_frames - 1),), float64
            The denominator of :meth:`istft` at padded-signal sample ``t``
            (like ``librosa.filters.window_sumsquare``).
        """
        m = int(n_frames)
        if m <= 0:
            raise ParameterError(f"n_frames must be >= 1, got {n_frames!r}")
        t = self.wss_tables()
        wss = wss_blocks(t, 0, m - 1 + t.r, m).reshape(-1)
        return wss[: self.n_fft + self.hop_length * (m - 1)]

    # ------------------------------------------------------------------ helpers
    def working_dtype(self, input_dtype: Any) -> np.dtype:
        """Real dtype of the computation for input of ``input_dtype`` (see ``dtype``)."""
        if self.dtype is not None:
            return np.dtype(self.dtype)
        return np.dtype(np.float32) if np.dtype(input_dtype) == np.float32 else np.dtype(np.float64)

    def wss_tables(self) -> WssTables:
        """The squared padded window cut into hop-sized pieces, with their prefix and suffix sums (see :class:`WssTables`)."""
        hop = self.hop_length
        r = -(-self.n_fft // hop)
        flat = np.zeros(r * hop)
        flat[: self.n_fft] = self._vwin**2
        w2 = flat.reshape(r, hop)
        return WssTables(r, w2, np.cumsum(w2, axis=0), np.cumsum(w2[::-1], axis=0)[::-1].copy())

    def require_invertible(self) -> None:
        """Raise :class:`ParameterError` unless the plan satisfies NOLA."""
        if not self.invertible:
            raise ParameterError(
                f"window {self.window_spec!r} (win_length={self.win_length}, n_fft={self.n_fft}, "
                f"periodic={self.periodic}) with hop_length={self.hop_length} violates NOLA "
                f"(min sum of squared windows = {self.nola_min:.3g}): the STFT is not invertible; "
                f"use a hop <= win_length with a window that overlaps itself (e.g. hann, hop <= win_length/2)"
            )

    # ------------------------------------------------------------------ transforms
    def frames(self, x: np.ndarray) -> np.ndarray:
        """Windowed frames ``p[m*H : m*H + n_fft] * v``, shape ``(..., n_frames, n_fft)`` (a copy).

        For inspection and tests; :meth:`stft` never materialises all frames.
        """
        x = np.asarray(x)
        n = check_signal(x)
        dt = self.working_dtype(x.dtype)
        m = self.n_frames(n)
        if self.center:
            widths = [(0, 0)] * (x.ndim - 1) + [(self.pad, self.pad)]
            p = np.pad(x, widths, mode=self.pad_mode)
        else:
            p = x
        short = self.n_fft - p.shape[-1]
        if short > 0:
            p = np.concatenate([p, np.zeros(p.shape[:-1] + (short,), p.dtype)], axis=-1)
        view = np.lib.stride_tricks.sliding_window_view(p, self.n_fft, axis=-1)[..., :: self.hop_length, :][..., :m, :]
        return (view * self._vwin).astype(dt)

    def stft(self, x: np.ndarray, *, backend: FftBackend | None = None) -> np.ndarray:
        """Complex STFT of ``x``.

        Parameters
        ----------
        x : np.ndarray, shape (..., n_samples)
            Real samples (``n_samples >= 1``), e.g. ``(n_samples,)`` or ``(channels, n_samples)``.
        backend : FFT backend, optional
            Default :func:`audiokit.engine.get_backend`.

        Returns
        -------
        X : np.ndarray, shape (..., n_freqs, n_frames), complex64 or complex128
            Unnormalised one-sided DFT of each windowed frame.
        """
        return _forward().compute(self, x, output="complex", backend=backend)

    def istft(self, X: np.ndarray, *, length: int | None = None, backend: FftBackend | None = None) -> np.ndarray:
        """Inverse STFT by weighted overlap-add (see the :mod:`audiokit.dsp.stft` docstring).

        Parameters
        ----------
        X : np.ndarray, shape (..., n_freqs, n_frames), complex
        length : int >= 0, optional
            Output length in samples; the result is trimmed or zero-padded to
            it.  Default :meth:`n_samples` ``(n_frames)``.
        backend : FFT backend, optional

        Returns
        -------
        y : np.ndarray, shape (..., length), float32 (complex64 input) or float64

        Raises
        ------
        ParameterError
            If the plan violates NOLA, or ``X`` has the wrong number of bins.
        """
        return _inverse().istft(X, self, length=length, backend=backend)

    def stream(self, **kwargs: Any) -> StftStream:
        """A :class:`~audiokit.dsp.stft.StftStream` for this plan (keyword arguments passed on)."""
        return _forward().StftStream(self, **kwargs)


# ---------------------------------------------------------------------- shared helpers
# forward.py and inverse.py import this module, so StftPlan reaches them on first use
# (cached: a function-level import would cost ~1 us per call).


@functools.cache
def _forward() -> ModuleType:
    from . import forward

    return forward


@functools.cache
def _inverse() -> ModuleType:
    from . import inverse

    return inverse


def check_signal(x: np.ndarray) -> int:
    """Check a whole signal ``x`` shaped ``(..., n_samples)`` (real, ``n_samples >= 1``); return ``n_samples``.

    Raises
    ------
    ParameterError
        For a scalar or complex ``x``.
    InputError
        For ``n_samples == 0``.
    """
    if x.ndim == 0:
        raise ParameterError("x must have a time axis (shape (..., n)), got a scalar")
    if np.iscomplexobj(x):
        raise ParameterError(f"x must be real, got dtype {x.dtype}")
    n = x.shape[-1]
    if n == 0:
        raise InputError("the signal has no samples")
    return n


def warn_short(plan: StftPlan, n_samples: int) -> None:
    """Warn (``UserWarning``) when ``n_samples`` is fewer than ``plan.n_fft``: the input is padded to one frame."""
    if n_samples < plan.n_fft:
        what = "zero-padded to one frame" if not plan.center else f"{plan.pad_mode}-padded"
        warnings.warn(
            f"input has {n_samples} samples, fewer than n_fft={plan.n_fft}: {what}",
            UserWarning,
            stacklevel=4,  # warn_short <- StftStream internals <- finish() <- the caller
        )


@dataclass(frozen=True)
class WssTables:
    """Hop-sized pieces ``w2[j] = v[j*H : (j+1)*H]**2`` of the squared padded window, with prefix and suffix sums."""

    r: int  # ceil(n_fft / H): frames overlapping one block of H samples
    w2: np.ndarray  # (r, H)
    prefix: np.ndarray  # prefix[j] = w2[0] + ... + w2[j]
    suffix: np.ndarray  # suffix[j] = w2[j] + ... + w2[r-1]


def wss_blocks(t: WssTables, b0: int, b1: int, m_total: int | None) -> np.ndarray:
    """Window sum-square for output blocks ``b0 .. b1-1`` (each ``H`` samples), shape ``(b1 - b0, H)``.

    Block ``b`` receives frames ``b-r+1 .. b``, so with ``m_total`` frames in
    all its sum is ``sum_{j=lo}^{hi} w2[j]``, ``lo = max(0, b-m_total+1)``,
    ``hi = min(b, r-1)``; ``m_total=None`` means more frames follow (``lo = 0``).
    Prefix or suffix sums are used (never a difference of sums, which would
    cancel catastrophically where the true sum is tiny).
    """
    b = np.arange(b0, b1)
    hi = np.minimum(b, t.r - 1)
    lo = np.zeros_like(b) if m_total is None else np.maximum(0, b - m_total + 1)
    out = t.prefix[hi]
    tail = lo > 0
    if np.any(tail):
        full = tail & (hi == t.r - 1)
        out[full] = t.suffix[lo[full]]
        for i in np.flatnonzero(tail & ~full):  # only when n_frames < r
            out[i] = t.w2[lo[i] : hi[i] + 1].sum(axis=0)
    return out

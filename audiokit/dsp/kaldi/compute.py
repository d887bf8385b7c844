"""The vectorised Kaldi feature computer, its stream, and the ``kaldi_fbank`` / ``kaldi_mfcc`` entry points.

See :mod:`audiokit.dsp.kaldi` for the per-frame formulas, scale and layout.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import ParameterError
from ...validate import check_int, check_real
from .options import (
    DEFAULT_SAMPLE_SCALE,
    FLT_EPSILON,
    FbankOptions,
    MfccOptions,
    Options,
    _f32,
    _reflect,
    frame_starts,
    num_frames,
)
from .tables import dct_matrix, lifter_coeffs, mel_banks, window_function

if TYPE_CHECKING:
    from ...engine.base import FftBackend

__all__ = ["KaldiFeatureStream", "block_frames", "kaldi_fbank", "kaldi_mfcc", "kaldi_features_blocks"]

#: Frames per vectorised block (256 x 512 float64 = 1 MiB of FFT input: measured fastest of 128..1024).
_BLOCK_FRAMES = 256
#: Most bytes of a block's working arrays (32 MiB): the FFT input, the float64 gathered frames and the span's three
#: float64 scratch arrays.  Long windows (25 ms at 3 MHz: W 75 000, N 131 072) get fewer frames per block (issue 20:
#: 577 MiB before); every rate up to 96 kHz at 25 ms / 10 ms keeps :data:`_BLOCK_FRAMES`.
_BLOCK_BYTES = 32 * 1024 * 1024


def block_frames(options: Options, dtype: np.dtype) -> int:
    """Frames per block of :class:`KaldiFeatureStream` for ``options`` in ``dtype``.

    ``min(256, max(1, _BLOCK_BYTES // (N * itemsize + 8 * W + 24 * H)))`` with ``N`` the padded window, ``W`` the
    window and ``H`` the shift in samples: the bytes a block's frame holds in the FFT input, the float64 frame work
    and the span scratch.  The block partition fixes the output bits (see :class:`KaldiFeatureStream`), and it depends
    on the options and dtype only.
    """
    per_frame = options.padded_window_size * np.dtype(dtype).itemsize + 8 * options.window_size + 24 * options.window_shift
    return min(_BLOCK_FRAMES, max(1, _BLOCK_BYTES // per_frame))


# --------------------------------------------------------------------------------------------
# The computer: tables prepared once, then blocks of frames
# --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def _tables(options: Options, dtype: np.dtype) -> tuple[np.ndarray, list[tuple[int, int, np.ndarray, np.ndarray]]]:
    """The window and the mel bands of ``options`` in ``dtype``, made once per process (a batch of thousands of
    utterances reuses them; read-only).

    Each band is (first bin, end bin, weights over its support, the weights repeated for interleaved (re, im)),
    applied with one matrix-vector product per band: a dense (B, N/2) @ (N/2, bins) product is mostly zeros, and a
    threaded BLAS gemm on such small blocks is slow on a busy machine.
    """
    window = window_function(options).astype(dtype)
    window.flags.writeable = False
    bank = mel_banks(options)[:, : options.padded_window_size // 2]  # Nyquist column is zero
    bands = []
    for row in bank:
        nz = np.flatnonzero(row)
        lo, hi = int(nz[0]), int(nz[-1]) + 1
        weights, interleaved = row[lo:hi].astype(dtype), np.repeat(row[lo:hi], 2).astype(dtype)
        weights.flags.writeable = interleaved.flags.writeable = False
        bands.append((lo, hi, weights, interleaved))
    return window, bands


class _Computer:
    """Precomputed tables and the vectorised per-block computation."""

    def __init__(self, options: Options, *, sample_scale: float, dtype: np.dtype, fft: FftBackend | str | None):
        from audiokit.engine import get_backend

        self.opts = options
        self.is_mfcc = isinstance(options, MfccOptions)
        self.scale = check_real(sample_scale, "sample_scale", positive=True)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ParameterError(f"dtype must be float32 or float64, got {self.dtype}")
        self.backend = get_backend(fft) if fft is None or isinstance(fft, str) else fft
        self.W, self.H, self.N = options.window_size, options.window_shift, options.padded_window_size
        self.c = _f32(options.preemph_coeff)
        self.window, self.bands = _tables(options, self.dtype)
        self.need_raw = options.use_energy and options.raw_energy
        self.g = math.gcd(self.W, self.H)
        self.ones_g = np.ones(self.g)
        # A cached zero-copy plan when the backend has them (the frames are written straight into
        # its input buffer); else backend.rfft on a padded block.
        self.B = B = block_frames(options, self.dtype)
        self.plan: Any = self.backend.real_plan(self.N, B, self.dtype) if hasattr(self.backend, "real_plan") else None
        # float64 scratch for a block's span (its copy, its pre-emphasis, a temporary) and, in float32, for gathered
        # frames: a fresh ~330 KiB array per block is a fresh mmap, whose page faults cost as much as the arithmetic.
        span_len = (B - 1) * self.H + self.W
        self._x64, self._e64, self._t64 = np.empty(span_len), np.empty(span_len), np.empty(span_len)
        self._f64 = np.empty((B if self.dtype != np.float64 else 0, self.W))  # gathered frames' work
        self.log_energy_floor = math.log(_f32(options.energy_floor)) if options.energy_floor > 0 else None
        if self.is_mfcc:
            assert isinstance(options, MfccOptions)
            dct = dct_matrix(options.num_ceps, options.num_mel_bins).astype(np.float32).astype(np.float64)
            lift = lifter_coeffs(options.num_ceps, options.cepstral_lifter).astype(np.float32)
            self.dct_t = np.asfortranarray((dct * lift[:, None]).T, dtype=self.dtype)  # (bins, ceps), columns contiguous

    # ---- one block of frames -----------------------------------------------------------------
    def _frame_sums(self, x64: np.ndarray, B: int, squares: bool, centred: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Sum of x over each frame's W samples, and (``squares``) the frame's sum of squares: of
        ``x - mean`` when ``centred``, else of ``x`` (``x64``: the block's span in float64).

        ``g = gcd(W, H)``-sample chunk sums (one matrix-vector product over the span) then W/g
        chunks per frame: the sums are exact for int16-valued audio.  The centred sum of squares
        adds the chunks' own centred sums and ``g`` times the squared deviations of the chunk
        means from the frame mean (never ``sum x**2 - (sum x)**2 / W``, which cancels against a
        DC offset).  Frames taken directly when g is small.  Returned in int16 units
        (``sample_scale`` applied).
        """
        W, H, g = self.W, self.H, self.g
        scale = self.scale
        s2 = None
        if g >= 8:
            chunks = x64.reshape(-1, g)
            k, step = W // g, H // g
            c1 = chunks @ self.ones_g
            s1 = np.lib.stride_tricks.sliding_window_view(c1, k)[::step][:B].sum(axis=1)
            if squares and centred:
                means = c1 / g
                dev = chunks - means[:, None]
                c2 = np.einsum("ij,ij->i", dev, dev)
                between = np.lib.stride_tricks.sliding_window_view(means, k)[::step][:B] - (s1 / W)[:, None]
                s2 = np.lib.stride_tricks.sliding_window_view(c2, k)[::step][:B].sum(axis=1)
                s2 += g * np.einsum("ij,ij->i", between, between)
            elif squares:
                c2 = np.einsum("ij,ij->i", chunks, chunks)
                s2 = np.lib.stride_tricks.sliding_window_view(c2, k)[::step][:B].sum(axis=1)
        else:
            frames = np.lib.stride_tricks.sliding_window_view(x64, W)[::H][:B]
            s1 = frames.sum(axis=1)
            if squares:
                dev = frames - (s1 / W)[:, None] if centred else frames
                s2 = np.einsum("ij,ij->i", dev, dev)
        return s1 * scale, (None if s2 is None else s2 * (scale * scale))

    def frames_block(
        self, raw: np.ndarray | None, span: np.ndarray | None, count: int, rng: np.random.Generator | None
    ) -> np.ndarray:
        """Features of a block of ``count`` frames, ``(count, dim)``.

        Either ``raw``, the (count, W) frames in the caller's units (gathered edge frames), or
        ``span``, the samples of ``count`` frames at hop H (frame b = ``span[b*H : b*H + W]``),
        whose frame sums then come from chunk sums.
        """
        plan = self.plan
        if plan is None:
            return self._frames_block(raw, span, count, rng, np.zeros((count, self.N), dtype=self.dtype), None)
        with plan:  # the plan's buffers are shared by every user of the backend
            if plan.owner is not self:  # zero the padding columns once per ownership
                plan.input[:, self.W :] = 0.0
                plan.owner = self
            return self._frames_block(raw, span, count, rng, plan.input[:count], plan)

    def _frames_block(
        self,
        raw: np.ndarray | None,
        span: np.ndarray | None,
        count: int,
        rng: np.random.Generator | None,
        work: np.ndarray,
        plan: Any,
    ) -> np.ndarray:
        o, W, N, c, H = self.opts, self.W, self.N, self.c, self.H
        B = count
        dt = self.dtype
        frame = work[:, :W]
        raw_log_energy = None
        if span is not None and rng is None:
            if span.dtype == np.float64:
                x64 = span
            else:
                x64 = self._x64[: span.shape[0]]
                x64[...] = span
            s1, s2 = self._frame_sums(x64, B, self.need_raw, o.remove_dc_offset)
            mean = s1 / W if o.remove_dc_offset else np.zeros(B)
            if s2 is not None:  # sum (x - mean)**2
                raw_log_energy = np.log(np.maximum(s2, FLT_EPSILON))
            # y = P(x - mean) = e - (1 - c)*mean with e the pre-emphasised span; first sample apart.  e and the
            # subtraction are float64 whatever dtype (per sample of the span, and one pass over the frames) and only y
            # is rounded: a DC offset costs float32 no precision (rounding relative to |y|, not to the offset).
            n = x64.shape[0]
            e = self._e64[:n]
            if c != 0.0:
                tmp = self._t64[: n - 1]
                np.multiply(x64[:-1], -c * self.scale, out=e[1:])
                np.multiply(x64[1:], self.scale, out=tmp)
                e[1:] += tmp
                e[0] = 0.0
                offset = (1.0 - c) * mean
            else:
                np.multiply(x64, self.scale, out=e)
                offset = mean
            ev = np.lib.stride_tricks.sliding_window_view(e, W)[::H]
            np.subtract(ev, offset[:, None], out=frame, casting="same_kind")
            if c != 0.0:
                frame[:, 0] = ((1.0 - c) * (x64[: (B - 1) * H + 1 : H] * self.scale - mean)).astype(dt)
        else:
            if raw is None:
                assert span is not None
                raw = np.lib.stride_tricks.sliding_window_view(span, W)[::H]
            # float64 work (the frame itself when dtype is float64), rounded once into the frame
            f = frame if dt == np.float64 else self._f64[:B]
            np.multiply(raw, self.scale, out=f, casting="unsafe")
            if rng is not None:
                f += o.dither * rng.standard_normal((B, W))
            if o.remove_dc_offset:
                f -= f.mean(axis=1, keepdims=True)
            if self.need_raw:
                raw_log_energy = np.log(np.maximum(np.einsum("ij,ij->i", f, f), FLT_EPSILON))
            if c != 0.0:
                first = f[:, 0] * (1.0 - c)
                f[:, 1:] -= c * f[:, :-1]
                f[:, 0] = first
            if f is not frame:
                frame[...] = f
        frame *= self.window
        log_energy = raw_log_energy
        if o.use_energy and not o.raw_energy:
            log_energy = np.log(np.maximum(np.einsum("ij,ij->i", frame, frame, dtype=np.float64), FLT_EPSILON))

        spec = plan.execute(B) if plan is not None else self.backend.rfft(work, N)  # (B, N/2 + 1) complex
        if getattr(o, "use_power", True):
            if spec.strides[-1] != spec.itemsize:
                spec = np.ascontiguousarray(spec)
            sv = spec.view(dt)[:, :N]  # (re, im) of bins 0 .. N/2-1
            np.square(sv, out=sv)
            mel_t = np.empty((len(self.bands), B), dtype=dt)
            for j, (lo, hi, _, w2) in enumerate(self.bands):
                np.dot(sv[:, 2 * lo : 2 * hi], w2, out=mel_t[j])
            mel = mel_t.T
        else:
            mag = np.abs(spec[:, : N // 2]).astype(dt)
            mel_t = np.empty((len(self.bands), B), dtype=dt)
            for j, (lo, hi, w, _) in enumerate(self.bands):
                np.dot(mag[:, lo:hi], w, out=mel_t[j])
            mel = mel_t.T
        if self.is_mfcc or getattr(o, "use_log_fbank", True):
            np.maximum(mel_t, FLT_EPSILON, out=mel_t)  # mel is its transpose (a view)
            np.log(mel_t, out=mel_t)
        if self.is_mfcc:
            feats_t = np.empty((self.dct_t.shape[1], B), dtype=dt)
            for k in range(self.dct_t.shape[1]):
                np.dot(mel, self.dct_t[:, k], out=feats_t[k])
            feats = feats_t.T
        else:
            feats = mel
        if o.use_energy:
            assert log_energy is not None
            if self.log_energy_floor is not None:
                log_energy = np.maximum(log_energy, self.log_energy_floor)
            if self.is_mfcc:
                feats[:, 0] = log_energy
            else:
                feats = np.concatenate([log_energy.astype(dt)[:, None], feats], axis=1)
        if o.htk_compat and (self.is_mfcc or o.use_energy):
            first = feats[:, 0].copy()
            if self.is_mfcc and not o.use_energy:
                first *= np.sqrt(2.0)
            feats = np.concatenate([feats[:, 1:], first[:, None]], axis=1)
        return np.ascontiguousarray(feats, dtype=dt)


def _make_rng(seed: int | np.random.Generator | None, dither: float) -> np.random.Generator | None:
    if dither == 0.0:
        return None
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None:
        seed = check_int(seed, "seed", minimum=0)
    return np.random.default_rng(seed)


class KaldiFeatureStream:
    """Block-wise Kaldi fbank or MFCC: feed samples, get the frames that are complete.

    Parameters
    ----------
    options : FbankOptions or MfccOptions
        Which features (the class decides fbank vs MFCC).
    sample_scale : float > 0
        Multiplier from the samples' units to int16 units (32768 for audiokit's +/-1).
    seed : int, numpy.random.Generator or None
        Source of the dither noise (used only when ``options.dither > 0``).
    dtype : {numpy.float32, numpy.float64}
        Working and output precision.
    fft : str, FftBackend or None
        Engine backend (name for :func:`audiokit.engine.get_backend`, or a backend).

    Notes
    -----
    ``accept_waveform(x)`` returns ``(k, dim)`` for the frames that the samples received so far
    complete, in whole blocks of ``B`` frames (:func:`block_frames`: 256, fewer for windows of tens of
    thousands of samples; ``k`` a multiple of ``B``, maybe 0); ``input_finished()`` returns the
    remaining frames (with ``snip_edges=False``, those reaching past the end, reflected).  So frames
    are always computed in the same blocks (``[0, B)``, ``[B, 2B)``, ...) whatever the sizes of the
    pieces fed: the output is bit for bit that of :func:`kaldi_fbank` / :func:`kaldi_mfcc` on the
    whole signal (a block's FFT plan and arithmetic path depend on its frame count, so another
    partition could change last bits).  The stream keeps the first ``W`` samples (left reflection)
    and at most ``B*H + W`` samples beyond the last piece.
    """

    def __init__(
        self,
        options: Options,
        *,
        sample_scale: float = DEFAULT_SAMPLE_SCALE,
        seed: int | np.random.Generator | None = None,
        dtype: Any = np.float64,
        fft: FftBackend | str | None = None,
    ):
        if not isinstance(options, (FbankOptions, MfccOptions)):
            raise ParameterError(f"options must be FbankOptions or MfccOptions, got {type(options).__name__}")
        self._c = _Computer(options, sample_scale=sample_scale, dtype=np.dtype(dtype), fft=fft)
        self.options = options
        self._rng = _make_rng(seed, options.dither)
        self._buf = np.zeros(0, dtype=np.float64)
        self._buf_offset = 0  # absolute index of _buf[0]
        self._head = np.zeros(0, dtype=np.float64)  # first W samples of the signal
        self._total = 0
        self._next = 0  # next frame to output
        self._finished = False

    @property
    def dim(self) -> int:
        """Feature dimension (columns of every returned array)."""
        return self.options.dim

    @property
    def frames_done(self) -> int:
        """Frames returned so far."""
        return self._next

    def accept_waveform(self, samples: np.ndarray) -> np.ndarray:
        """Append samples (1-D, the stream's units) and return the newly completed frames in whole blocks of
        :func:`block_frames`, ``(k, dim)``."""
        if self._finished:
            raise ParameterError("accept_waveform after input_finished")
        x = _as_1d(samples)
        if x.size:
            # never written in place, so the caller's array can be referenced
            self._buf = np.concatenate([self._buf, x]) if self._buf.size else x
            need = self._c.W - self._head.size
            if need > 0:
                self._head = np.concatenate([self._head, x[:need]])
            self._total += x.size
        o = self.options
        # frames whose end is inside the received signal (no right reflection needed)
        h, w = o.window_shift, o.window_size
        off = 0 if o.snip_edges else h // 2 - w // 2
        end_frames = max(0, (self._total - w - off) // h + 1) if self._total - w - off >= 0 else 0
        if not o.snip_edges:  # never exceed the final count (known only at the end, bounded by this)
            end_frames = min(end_frames, (self._total + h // 2) // h)
        # whole blocks only (see the class notes): the partition into blocks is fixed
        B = self._c.B
        end_frames = self._next + max(0, end_frames - self._next) // B * B
        out = self._emit(end_frames, n_total=None)
        self._trim()
        return out

    def input_finished(self) -> np.ndarray:
        """No more samples: return the remaining frames, ``(k, dim)``."""
        if self._finished:
            raise ParameterError("input_finished called twice")
        self._finished = True
        out = self._emit(num_frames(self._total, self.options), n_total=self._total)
        self._buf = np.zeros(0)
        return out

    def _emit(self, end: int, n_total: int | None) -> np.ndarray:
        out = np.empty((max(0, end - self._next), self.dim), dtype=self._c.dtype)
        first = self._next
        while self._next < end:
            count = min(self._c.B, end - self._next)
            out[self._next - first : self._next - first + count] = self._block(self._next, count, n_total)
            self._next += count
        return out

    def _block(self, first: int, count: int, n_total: int | None) -> np.ndarray:
        c = self._c
        starts = frame_starts(count, self.options, first=first)
        lo, hi = int(starts[0]), int(starts[-1]) + c.W
        b0, b1 = self._buf_offset, self._buf_offset + self._buf.size
        if lo >= b0 and hi <= b1:  # all inside the buffer: views
            return c.frames_block(None, self._buf[lo - b0 : hi - b0], count, self._rng)
        # edge frames: gather with Kaldi's reflection
        idx = starts[:, None] + np.arange(c.W)[None, :]
        if n_total is not None:
            idx = _reflect(idx, n_total)
        else:  # only the left edge can be outside the received samples
            idx = np.where(idx < 0, -idx - 1, idx)
        raw = np.empty(idx.shape, dtype=np.float64)
        in_buf = idx >= b0
        raw[in_buf] = self._buf[idx[in_buf] - b0]
        raw[~in_buf] = self._head[idx[~in_buf]]
        return c.frames_block(raw, None, count, self._rng)

    def _trim(self) -> None:
        """Drop samples no future frame needs (keep the next frame's start and the last W samples)."""
        keep_from = min(int(frame_starts(1, self.options, first=self._next)[0]), self._total - self._c.W)
        keep_from = max(keep_from, self._buf_offset)
        drop = keep_from - self._buf_offset
        if drop > 0:
            self._buf = self._buf[drop:].copy()
            self._buf_offset = keep_from


def _as_1d(samples: object) -> np.ndarray:
    x = np.asarray(samples)
    if x.ndim != 1:
        raise ParameterError(f"samples must be 1-D here, got shape {x.shape}")
    if x.dtype.kind not in "fiu":
        raise ParameterError(f"samples must be real numbers, got dtype {x.dtype}")
    if x.dtype.kind == "f" and x.size and not np.isfinite(x).all():
        raise ParameterError("samples contain NaN or infinity")
    return x


def _options_for(kind: type, options: Options | None, sr: float | None, overrides: dict) -> Options:
    if options is None:
        base = kind(samp_freq=sr) if sr is not None and "samp_freq" not in overrides else kind()
    elif not isinstance(options, kind):
        raise ParameterError(f"options must be {kind.__name__}, got {type(options).__name__}")
    else:
        base = options
    if overrides:
        known = {f.name for f in fields(kind)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ParameterError(f"unknown {kind.__name__} option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(known))}")
        if sr is not None and options is None and "samp_freq" not in overrides:
            overrides = {"samp_freq": sr, **overrides}
        base = replace(base, **overrides)
    if sr is not None and check_real(sr, "sr", positive=True) != base.samp_freq:
        raise ParameterError(
            f"sr {sr!r} Hz does not match samp_freq {base.samp_freq!r} Hz of the options "
            "(Kaldi refuses a mismatch too; resample first)"
        )
    return base


def _compute(
    kind: type,
    samples: np.ndarray,
    options: Options | None,
    sr: float | None,
    sample_scale: float,
    seed: int | np.random.Generator | None,
    dtype: object,
    fft: FftBackend | str | None,
    overrides: dict,
) -> np.ndarray:
    opts = _options_for(kind, options, sr, overrides)
    x = np.asarray(samples)
    if x.ndim == 0:
        raise ParameterError("samples must have at least one axis (time last)")
    lead = x.shape[:-1]
    rows = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x[None, :]
    rng = _make_rng(seed, opts.dither)
    out = []
    for row in rows:
        stream = KaldiFeatureStream(opts, sample_scale=sample_scale, seed=rng, dtype=dtype, fft=fft)
        a = stream.accept_waveform(row)
        b = stream.input_finished()
        out.append(np.concatenate([a, b]) if b.size else a)
    res = np.stack(out) if out else np.zeros((0, 0, opts.dim))
    return res.reshape(lead + res.shape[1:]) if x.ndim > 1 else res[0]


def kaldi_fbank(
    samples: np.ndarray,
    *,
    options: FbankOptions | None = None,
    sr: float | None = None,
    sample_scale: float = DEFAULT_SAMPLE_SCALE,
    seed: int | np.random.Generator | None = None,
    dtype: object = np.float64,
    fft: FftBackend | str | None = None,
    **overrides: object,
) -> np.ndarray:
    """Kaldi ``compute-fbank-feats``: log mel filter-bank energies, frames x bins.

    Parameters
    ----------
    samples : np.ndarray, shape (..., n_samples), real
        Signal in audiokit units (+/-1 full scale); leading axes are channels or a batch.
    options : FbankOptions, optional
        Kaldi options (default :class:`FbankOptions`: 25 ms / 10 ms, povey, 23 bins, dither 0).
    sr : float, optional
        Sample rate of ``samples`` in Hz.  Without ``options`` it sets ``samp_freq``; with
        ``options`` it must equal ``options.samp_freq`` (Kaldi refuses a mismatch).
    sample_scale : float > 0
        Samples are multiplied by this before processing: 32768 (default) maps +/-1 to int16
        units, Kaldi's scale; 1.0 for samples already in int16 units.
    seed : int, numpy.random.Generator or None
        Dither noise source (only when ``dither > 0``); one Generator is drawn frame after frame.
    dtype : {numpy.float64, numpy.float32}
        Working and output precision: float64 (default) gives the exact value of Kaldi's
        formulas; float32 (Kaldi's BaseFloat, what the commands use) is 1.2-1.4x faster and within
        float32 rounding of it per cell (``2 ulp + 8 eps sqrt(S/m)``, :mod:`audiokit.dsp.kaldi`),
        closer than Kaldi's own float32 code.
    fft : str, FftBackend or None
        FFT engine backend (``None``: ``AUDIOKIT_FFT`` / auto).
    **overrides
        Any :class:`FbankOptions` field by its Kaldi name (``num_mel_bins=40``, ``snip_edges=False``).

    Returns
    -------
    np.ndarray, shape (..., n_frames, dim)
        **frames x bins** (Kaldi's layout): ``dim = num_mel_bins + use_energy``; natural-log
        energies floored at FLT_EPSILON (int16 units) unless ``use_log_fbank=False``.
        ``n_frames`` from :func:`num_frames`; 0 rows when the signal is shorter than a window
        with ``snip_edges``.

    Raises
    ------
    ParameterError
        Bad option values, unknown option names, ``sr`` != ``samp_freq``, non-finite samples.
    """
    return _compute(FbankOptions, samples, options, sr, sample_scale, seed, dtype, fft, overrides)


def kaldi_mfcc(
    samples: np.ndarray,
    *,
    options: MfccOptions | None = None,
    sr: float | None = None,
    sample_scale: float = DEFAULT_SAMPLE_SCALE,
    seed: int | np.random.Generator | None = None,
    dtype: object = np.float64,
    fft: FftBackend | str | None = None,
    **overrides: object,
) -> np.ndarray:
    """Kaldi ``compute-mfcc-feats``: cepstra, frames x coefficients.

    Parameters are those of :func:`kaldi_fbank` with :class:`MfccOptions` (13 cepstra from
    23 bands, lifter 22, c0 replaced by the raw log energy).

    Returns
    -------
    np.ndarray, shape (..., n_frames, num_ceps)
        **frames x cepstra**: ``lifter * (D @ ln(max(mel, FLT_EPSILON)))`` with column 0 the
        log energy when ``use_energy`` (see the module docstring for ``htk_compat``).
    """
    return _compute(MfccOptions, samples, options, sr, sample_scale, seed, dtype, fft, overrides)


def kaldi_features_blocks(
    blocks: Iterable[np.ndarray],
    options: Options,
    *,
    sample_scale: float = DEFAULT_SAMPLE_SCALE,
    seed: int | np.random.Generator | None = None,
    dtype: object = np.float64,
    fft: FftBackend | str | None = None,
) -> Iterator[np.ndarray]:
    """Stream Kaldi features over 1-D sample blocks: yields ``(k, dim)`` arrays (frames x bins).

    The concatenation of the yielded arrays equals :func:`kaldi_fbank` (``FbankOptions``) or
    :func:`kaldi_mfcc` (``MfccOptions``) of the concatenated blocks.  Empty arrays are not yielded.
    """
    stream = KaldiFeatureStream(options, sample_scale=sample_scale, seed=seed, dtype=dtype, fft=fft)
    for block in blocks:
        out = stream.accept_waveform(block)
        if out.shape[0]:
            yield out
    out = stream.input_finished()
    if out.shape[0]:
        yield out

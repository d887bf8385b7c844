"""Short-lag autocorrelation of overlapping frames, from the spectra of hop-sized blocks shared by the frames.

YIN needs each frame's autocorrelation ``r[k] = sum_{j=0}^{L-1-k} x[j] x[j+k]`` only at lags ``k = 0 .. K``
(``K = max_period``), for frames of ``L = frame_length`` samples at hop ``H``.  When ``L = q H`` and ``K < H``
(the pitch commands' 64 ms / 16 ms framing up to 16 kHz and more, librosa's 2048 / 512), frame ``m`` is the blocks
``g_m .. g_{m+q-1}`` of ``H`` samples, and in exact arithmetic

    ``r_m = sum_{i=0}^{q-1} acf(g_{m+i}) + sum_{i=0}^{q-2} xcorr(g_{m+i}, g_{m+i+1})``  at lags ``0 .. K``

(a block's samples meet only those of the next block within ``K < H`` lags).  With ``N = 2 H`` and ``X_b`` the
``N``-point DFT of block ``b`` zero-padded, ``acf(g_b)`` is the inverse DFT of ``T_b = |X_b|^2`` and
``xcorr(g_b, g_{b+1})`` that of ``D_b = conj(X_b) X_{b+1} (-1)^f`` (the next block sits ``H = N / 2`` samples
later), neither wrapping onto lags ``0 .. K`` because ``N >= H + K``.  So each frame costs one ``N``-point inverse
DFT of ``S_m = sum_i T_{m+i} + sum_i D_{m+i}``, and each block one forward DFT shared by ``q`` frames: two
512-point transforms per 16 ms hop instead of librosa's two 2048-point ones.  Other geometries take one
``next_fast_len(L + K)``-point transform pair per frame (no wrap-around onto lags ``0 .. K`` either).

Every value is computed in the frames' precision (float32 or float64) with FFTW plans made with
``FFTW_ESTIMATE`` (:mod:`audiokit.engine`), in the same order whatever the batch, so a frame's autocorrelation
does not depend on which other frames are computed with it: the streamed tracker and the whole-signal function give
the same bits.  The results differ from librosa's 2048-point pocketfft autocorrelation by float rounding only.
"""

from __future__ import annotations

import numpy as np

from ...engine import get_backend
from .params import PitchGeometry, next_fast_len

__all__ = ["CHUNK_FRAMES", "FFT_BACKEND", "autocorrelation", "uses_blocks"]

#: The FFT backend: FFTW with ``FFTW_ESTIMATE`` plans (the engine's deterministic choice), one thread.
FFT_BACKEND = "fftw"

#: Frames per pass through the spectra: 128 frames' block spectra (~260 KiB in float32) stay in the L2 cache.
CHUNK_FRAMES = 128


def uses_blocks(geometry: PitchGeometry) -> bool:
    """Whether the frames' autocorrelation comes from shared hop blocks (``L = q H`` and ``max_period < H``)."""
    return geometry.frame_length % geometry.hop_length == 0 and geometry.max_period < geometry.hop_length


def _consecutive(frames: np.ndarray, hop: int) -> np.ndarray | None:
    """The signal under ``frames`` when they are hop-spaced views of one buffer (strides ``(hop, 1)`` items), else
    None.  Frame ``m`` is then ``signal[m * hop : m * hop + L]``."""
    item = frames.itemsize
    n, length = frames.shape
    if n == 0 or frames.strides != (hop * item, item):
        return None
    span = (n - 1) * hop + length
    return np.lib.stride_tricks.as_strided(frames, shape=(span,), strides=(item,), writeable=False)


def autocorrelation(frames: np.ndarray, geometry: PitchGeometry, out: np.ndarray | None = None) -> np.ndarray:
    """Autocorrelation of each frame at lags ``0 .. max_period``.

    Parameters
    ----------
    frames : np.ndarray, shape (n_frames, frame_length), float32 or float64
        The frames (any strides; hop-spaced views of one signal share their blocks' transforms).
    geometry : PitchGeometry
    out : np.ndarray or None
        Where to write the result (shape and dtype below); None allocates it.

    Returns
    -------
    np.ndarray, shape (n_frames, max_period + 1), dtype of ``frames``
        ``r[m, k] = sum_{j=0}^{L-1-k} frames[m, j] frames[m, j + k]``, to float rounding.
    """
    n = frames.shape[0]
    if out is None:
        out = np.empty((n, geometry.max_period + 1), dtype=frames.dtype)
    if n == 0:
        return out
    if uses_blocks(geometry):
        hop = geometry.hop_length
        q = geometry.frame_length // hop
        signal = _consecutive(frames, hop)
        if signal is not None:  # frame m is blocks m .. m + q - 1 of the signal
            for start in range(0, n, CHUNK_FRAMES):
                stop = min(n, start + CHUNK_FRAMES)
                blocks = signal[start * hop : (stop - 1 + q) * hop].reshape(-1, hop)
                _block_acf(blocks, stop - start, q, 1, geometry, out[start:stop])
        else:  # each frame's own q blocks in a row: frame m is blocks m q .. m q + q - 1 (the same values)
            step = max(1, CHUNK_FRAMES // q)
            for start in range(0, n, step):
                part = frames[start : start + step]
                _block_acf(part.reshape(-1, hop), part.shape[0], q, q, geometry, out[start : start + step])
    else:
        n_fft = next_fast_len(geometry.frame_length + geometry.max_period)
        backend = get_backend(FFT_BACKEND, threads=1)
        for start in range(0, n, CHUNK_FRAMES):
            spectrum = backend.rfft(frames[start : start + CHUNK_FRAMES], n_fft)
            power = np.square(spectrum.real)
            power += np.square(spectrum.imag)
            out[start : start + CHUNK_FRAMES] = backend.irfft(power, n_fft)[:, : geometry.max_period + 1]
    return out


def _signs(hop: int, dtype: np.dtype) -> np.ndarray:
    """``(-1)**f`` for the ``hop + 1`` bins of a ``2 hop``-point DFT: the spectrum of a block delayed by ``hop``."""
    sign = np.ones(hop + 1, dtype=dtype)
    sign[1::2] = -1
    return sign


def _sum_into(out: np.ndarray, terms: list[np.ndarray]) -> None:
    """``out = ((terms[0] + terms[1]) + terms[2]) + ...``, left to right (one term: a copy)."""
    if len(terms) == 1:
        out[...] = terms[0]
        return
    if len(terms) == 2:
        np.add(terms[0], terms[1], out=out)
        return
    acc = terms[0] + terms[1]
    for term in terms[2:-1]:
        acc += term
    np.add(acc, terms[-1], out=out)


def _block_acf(blocks: np.ndarray, n: int, q: int, step: int, geometry: PitchGeometry, out: np.ndarray) -> None:
    """Write into ``out (n, max_period + 1)`` the autocorrelations of ``n`` frames of ``q`` blocks each, frame ``m``
    being blocks ``m step .. m step + q - 1`` of ``blocks (n_blocks, hop)`` (``step`` 1: consecutive frames sharing
    their blocks; ``q``: each frame's own blocks)."""
    hop, lags = geometry.hop_length, geometry.max_period + 1
    n_blocks, n_fft = blocks.shape[0], 2 * hop
    backend = get_backend(FFT_BACKEND, threads=1)
    forward = backend.real_plan(n_fft, CHUNK_FRAMES + q - 1, blocks.dtype)
    inverse = backend.inverse_plan(n_fft, CHUNK_FRAMES, blocks.dtype)
    with forward, inverse:
        if forward.owner is not _block_acf:  # shared scratch: zero the padding once per ownership (engine protocol)
            forward.input[:, hop:] = 0
            forward.owner = _block_acf
        forward.input[:n_blocks, :hop] = blocks
        spectra = forward.execute(n_blocks)[:n_blocks]
        # real and imaginary planes, contiguous; from here on only real ufuncs (add, multiply: correctly rounded
        # whatever the array length -- numpy's complex multiply is not, its SIMD and scalar loops round differently)
        re, im = np.ascontiguousarray(spectra.real), np.ascontiguousarray(spectra.imag)
        power = np.square(re[q - 1 :: step][:n])
        power += np.square(im[q - 1 :: step][:n])  # T_b = |X_b|^2 of each frame's last block
        total = inverse.input[:n]
        if q == 1:
            total.real[...] = power
            total.imag[...] = 0
        else:
            # C_b = conj(X_b) L_b with L_b = X_b + (-1)^f X_{b+1}: C_b = T_b + D_b (rows pairing the last block of
            # one frame with the first of the next, when step = q, are computed and not used)
            sign = _signs(hop, re.dtype)
            l_re = re[1:] * sign
            l_re += re[:-1]
            l_im = im[1:] * sign
            l_im += im[:-1]
            c_re = re[:-1] * l_re
            c_re += im[:-1] * l_im
            c_im = re[:-1] * l_im
            c_im -= im[:-1] * l_re
            # S_m = C_m + ... + C_{m+q-2} + T_{m+q-1}, summed left to right
            # (the last addition writes straight into the inverse transform's input)
            _sum_into(total.real, [c_re[i::step][:n] for i in range(q - 1)] + [power])
            _sum_into(total.imag, [c_im[i::step][:n] for i in range(q - 1)])
        acf = inverse.execute(n)[:n, :lags]
        np.multiply(acf, inverse.scale, out=out)

"""References shared by the Kaldi tests and ``benchmarks/bench_kaldi_accuracy.py``.

* :func:`knf_features`: kaldi-native-fbank (Kaldi's C++ feature code, float32 arithmetic), when installed.
* :func:`naive_kaldi`: Kaldi's per-frame loop written out (float64 arithmetic, Kaldi's float32 tables: the
  window and the mel bank are ``BaseFloat`` vectors in Kaldi); independent of audiokit's vectorised code (only its
  option dataclasses are used, as parameters).
* :func:`loud_cells` and :func:`worst_split`: the accuracy figures' split of the cells by level; :func:`rounding_k`: the
  per-cell float32 rounding model's constant a difference needs.
* :func:`mix_utterance`: the corpus recipe (speech clips, pauses, background noise or digital silence, level,
  DC offset, int16 rounding), shared by the benchmark's corpus and the tests' smaller one.
"""

from __future__ import annotations

import math

import numpy as np

from audiokit.dsp.kaldi import FLT_EPSILON, FbankOptions, MfccOptions

try:
    import kaldi_native_fbank as knf
except ImportError:  # the test extra installs it; without it the comparisons are skipped
    knf = None

try:
    import pytest
except ImportError:  # the benchmark runs without pytest
    needs_knf = None
else:
    needs_knf = pytest.mark.skipif(knf is None, reason="kaldi-native-fbank is not installed (test extra)")

#: The level split of the accuracy figures: a cell is "loud" when its log-mel energy is within this many dB of the
#: utterance's strongest cell (60 dB = ln(1e6) = 13.8 nats).
SPLIT_DB = 60.0
SPLIT_NATS = SPLIT_DB / 10.0 * math.log(10.0)


def knf_features(x: np.ndarray, sr: int, mfcc: bool, *, scale: float = 32768.0, **kw) -> np.ndarray:
    """kaldi-native-fbank on the samples times ``scale`` (int16 units by default; 1.0: as read, Lhotse's), dither 0,
    frames x bins; ``kw`` sets its options by name."""
    opts = knf.MfccOptions() if mfcc else knf.FbankOptions()
    opts.frame_opts.dither = 0.0
    opts.frame_opts.samp_freq = sr
    for key, value in kw.items():
        if key == "num_mel_bins":
            opts.mel_opts.num_bins = value
        elif hasattr(opts.frame_opts, key):
            setattr(opts.frame_opts, key, value)
        elif hasattr(opts.mel_opts, key):
            setattr(opts.mel_opts, key, value)
        else:
            setattr(opts, key, value)
    comp = knf.OnlineMfcc(opts) if mfcc else knf.OnlineFbank(opts)
    comp.accept_waveform(sr, (np.asarray(x, np.float64) * scale).astype(np.float32))
    comp.input_finished()
    n = comp.num_frames_ready
    dim = opts.num_ceps if mfcc else opts.mel_opts.num_bins + int(opts.use_energy)
    return np.stack([comp.get_frame(i) for i in range(n)]) if n else np.zeros((0, dim), np.float32)


def naive_kaldi(x: np.ndarray, o: FbankOptions | MfccOptions, scale: float = 32768.0) -> np.ndarray:
    """Kaldi's per-frame loop, written out (float64 arithmetic, Kaldi's float32 tables)."""
    wave = np.asarray(x, dtype=np.float64) * scale
    n = wave.size
    W = int(float(np.float32(o.samp_freq)) * 0.001 * float(np.float32(o.frame_length_ms)))
    H = int(float(np.float32(o.samp_freq)) * 0.001 * float(np.float32(o.frame_shift_ms)))
    N = 1 << (W - 1).bit_length() if o.round_to_power_of_two else W
    if o.snip_edges:
        frames = 0 if n < W else 1 + (n - W) // H
    else:
        frames = (n + H // 2) // H
    win = np.empty(W)
    a = 2 * math.pi / (W - 1)
    for i in range(W):
        if o.window_type == "hanning":
            win[i] = 0.5 - 0.5 * math.cos(a * i)
        elif o.window_type == "hamming":
            win[i] = 0.54 - 0.46 * math.cos(a * i)
        elif o.window_type == "povey":
            win[i] = (0.5 - 0.5 * math.cos(a * i)) ** 0.85
        elif o.window_type == "rectangular":
            win[i] = 1.0
        elif o.window_type == "sine":
            win[i] = math.sin(0.5 * a * i)
        else:
            b = float(np.float32(o.blackman_coeff))
            win[i] = b - 0.5 * math.cos(a * i) + (0.5 - b) * math.cos(2 * a * i)
    win = win.astype(np.float32).astype(np.float64)
    # mel bank with float32 scalars, as MelBanks
    f32 = np.float32

    def mel(f):  # 1127.0f * logf(1.0f + freq / 700.0f): the sum rounded to float first
        return f32(1127.0) * np.log(f32(1.0) + f32(f) / f32(700.0))

    nyq = 0.5 * o.samp_freq
    high = o.high_freq if o.high_freq > 0 else nyq + o.high_freq
    mlo, mhi = mel(o.low_freq), mel(high)
    delta = (mhi - mlo) / f32(o.num_mel_bins + 1)
    bank = np.zeros((o.num_mel_bins, N // 2 + 1))
    width = f32(o.samp_freq) / f32(N)
    for b in range(o.num_mel_bins):
        left, center, right = mlo + f32(b) * delta, mlo + f32(b + 1) * delta, mlo + f32(b + 2) * delta
        for i in range(N // 2):
            m = mel(width * f32(i))
            if left < m < right:
                bank[b, i] = (m - left) / (center - left) if m <= center else (right - m) / (right - center)
    c = float(np.float32(o.preemph_coeff))
    rows = []
    for f in range(frames):
        start = f * H if o.snip_edges else f * H + H // 2 - W // 2
        fr = np.empty(W)
        for s in range(W):
            j = start + s
            while j < 0 or j >= n:
                j = -j - 1 if j < 0 else 2 * n - 1 - j
            fr[s] = wave[j]
        if o.remove_dc_offset:
            fr -= fr.sum() / W
        raw_e = math.log(max(float(fr @ fr), FLT_EPSILON))
        for i in range(W - 1, 0, -1):
            fr[i] -= c * fr[i - 1]
        fr[0] -= c * fr[0]
        fr *= win
        energy = raw_e if o.raw_energy else math.log(max(float(fr @ fr), FLT_EPSILON))
        padded = np.zeros(N)
        padded[:W] = fr
        p = np.abs(np.fft.rfft(padded)) ** 2
        if isinstance(o, FbankOptions) and not o.use_power:
            p = np.sqrt(p)
        e = bank @ p
        if isinstance(o, MfccOptions) or o.use_log_fbank:
            e = np.log(np.maximum(e, FLT_EPSILON))
        if o.energy_floor > 0:
            energy = max(energy, math.log(float(np.float32(o.energy_floor))))
        if isinstance(o, MfccOptions):
            k = np.arange(o.num_ceps)[:, None]
            j = np.arange(o.num_mel_bins)[None, :]
            d = np.sqrt(2.0 / o.num_mel_bins) * np.cos(np.pi / o.num_mel_bins * (j + 0.5) * k)
            d[0] = np.sqrt(1.0 / o.num_mel_bins)
            d = d.astype(np.float32).astype(np.float64)
            feat = d @ e
            if o.cepstral_lifter:
                q = o.cepstral_lifter
                feat *= (1.0 + 0.5 * q * np.sin(np.pi * np.arange(o.num_ceps) / q)).astype(np.float32)
            if o.use_energy:
                feat[0] = energy
            if o.htk_compat:
                first = feat[0] * (1.0 if o.use_energy else math.sqrt(2.0))
                feat = np.concatenate([feat[1:], [first]])
        else:
            feat = e
            if o.use_energy:
                feat = np.concatenate([[energy], e]) if not o.htk_compat else np.concatenate([e, [energy]])
        rows.append(feat)
    dim = o.num_ceps if isinstance(o, MfccOptions) else o.dim
    return np.array(rows) if rows else np.zeros((0, dim))


# --------------------------------------------------------------------------------------------
# The accuracy figures' split by level
# --------------------------------------------------------------------------------------------
def loud_cells(ref: np.ndarray) -> np.ndarray:
    """Cells (frames x bins) of a log-mel reference within :data:`SPLIT_DB` of its strongest cell."""
    return ref >= ref.max() - SPLIT_NATS if ref.size else np.zeros(ref.shape, bool)


def _worst(d: np.ndarray, mask: np.ndarray) -> float:
    return float(d[mask].max()) if mask.any() else math.nan


def worst_split(a: np.ndarray, b: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """Worst ``|a - b|`` over the loud cells of the log-mel ``ref`` and over the others (NaN: no such cell)."""
    d, loud = np.abs(np.asarray(a, np.float64) - b), loud_cells(ref)
    return {"loud": _worst(d, loud), "quiet": _worst(d, ~loud)}


def mfcc_split(a: np.ndarray, b: np.ndarray, ref_fbank: np.ndarray, lifter: float = 22.0) -> dict[str, float]:
    """Worst ``|a - b|`` of default Kaldi MFCCs (c0 = log energy first): ``/c0`` and ``/ceps`` (c1.. with the lifter
    ``1 + Q/2 sin(pi i / Q)`` divided out), over frames whose bands in ``ref_fbank`` are all loud (``/loud``) and the
    others (``/quiet``)."""
    d = np.abs(np.asarray(a, np.float64) - b)
    i = np.arange(d.shape[1])
    d[:, 1:] /= (1.0 + 0.5 * lifter * np.sin(np.pi * i / lifter))[1:]
    loud = loud_cells(ref_fbank).all(axis=1)
    out = {}
    for name, cols in (("c0", d[:, :1]), ("ceps", d[:, 1:])):
        worst = cols.max(axis=1) if d.shape[0] else np.zeros(0)
        out[f"/{name}/loud"], out[f"/{name}/quiet"] = _worst(worst, loud), _worst(worst, ~loud)
    return out


def rounding_k(a: np.ndarray, b: np.ndarray, ref: np.ndarray) -> float:
    """The float32 rounding model's constant that ``|a - b|`` needs: max over the cells of a log-mel array (frames x
    bands) of ``(|a - b| - 2 ulp(b)) / (eps sqrt(S / m))``, ``eps = 2**-23``, ``m = exp(ref)`` the cell's band energy
    and ``S`` its frame's sum over the bands (``ref``: the exact, float64 values).

    A float32 FFT's error in each bin is a few ``eps`` of the whole frame's amplitude, not of the bin's, so a band's log
    is off by about ``K eps sqrt(S / m)``: tiny in a frame's strongest bands, up to nats ~40 nats below them
    (``tests/cli/test_lhotse.py`` bounds Lhotse's float32 Fbank this way, ``K = 64``).  Negative when every cell is within
    its 2 ulp."""
    r = np.asarray(ref, np.float64)
    m = np.exp(r - r.max(axis=1, keepdims=True))  # S / m is scale-free: no overflow for large log energies
    ulp = np.spacing(np.abs(np.asarray(b)).astype(np.float32)).astype(np.float64)
    excess = np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)) - 2 * ulp
    return float(np.max(excess / (2.0**-23 * np.sqrt(m.sum(axis=1, keepdims=True) / m)))) if r.size else -math.inf


# --------------------------------------------------------------------------------------------
# The corpus recipe
# --------------------------------------------------------------------------------------------
BACKGROUNDS = ("digital silence", "white noise", "low-passed noise")


def recorded_clip(speech: np.ndarray, rng: np.random.Generator, sr: int) -> tuple[np.ndarray, dict]:
    """An excerpt of U(1.5, 6) s of ``speech`` (the 16 kHz recording ``examples/data/speech.wav``, float), at ``sr``
    (resampled by soxr, quality VHQ, when ``sr`` is not 16000), and where it starts and how long it is (s)."""
    n = int(rng.uniform(1.5, 6.0) * 16000)
    start = int(rng.integers(0, speech.size - n))
    clip = speech[start : start + n]
    if sr != 16000:
        import soxr

        clip = soxr.resample(clip, 16000, sr, quality="VHQ")
    return clip, {"speech.wav": [start / 16000, n / 16000]}


def mix_utterance(
    clips: list[np.ndarray], sr: int, rng: np.random.Generator, *, duration: float, pcm16: bool
) -> tuple[np.ndarray, dict]:
    """One utterance from speech clips (float, at ``sr``): float32 samples (+/-1 full scale) and the drawn values.

    A pause of U(0, 1) s, then the clips in order, each followed by a pause of U(0.1, 0.8) s, cut at ``duration``
    seconds; the speech's peak scaled to U(-40, -1) dBFS; a background over the whole timeline, one of
    :data:`BACKGROUNDS` (low-passed: AR(1), pole 0.95) at U(-120, -60) dBFS RMS (digital silence: none); with
    probability 0.3 a DC offset of U(-400, 400) LSB (1 LSB = 1/32768 of full scale, so up to 1.2 % of full scale);
    with ``pcm16``, rounded to int16 (the samples are then ``int16 / 32768``), else kept as float32 (a float WAV).
    """
    n = int(round(duration * sr))
    speech = np.zeros(n)
    pos = int(rng.uniform(0.0, 1.0) * sr)
    for clip in clips:
        k = max(0, min(clip.size, n - pos))
        speech[pos : pos + k] = clip[:k]
        pos += k + int(rng.uniform(0.1, 0.8) * sr)
    peak_db = float(rng.uniform(-40.0, -1.0))
    speech *= 10.0 ** (peak_db / 20.0) / max(float(np.abs(speech).max()), 1e-12)
    background = str(rng.choice(BACKGROUNDS))
    level_db = float(rng.uniform(-120.0, -60.0))
    noise = np.zeros(n)
    if background != "digital silence":
        noise = rng.standard_normal(n)
        if background == "low-passed noise":
            from scipy.signal import lfilter

            noise = lfilter([1.0], [1.0, -0.95], noise)
        noise *= 10.0 ** (level_db / 20.0) / np.sqrt(np.mean(noise**2))
    dc = float(rng.uniform(-400.0, 400.0)) if rng.random() < 0.3 else 0.0
    x = (speech + noise) * 32768.0 + dc
    if pcm16:
        x = np.clip(np.round(x), -32768, 32767)
    info = {"peak_dbfs": peak_db, "background": background, "background_dbfs": level_db, "dc_lsb": dc, "pcm16": pcm16}
    return (x / 32768.0).astype(np.float32), info

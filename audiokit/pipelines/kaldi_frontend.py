"""Kaldi's front end of the time-frequency job (``--compat kaldi``): ``compute-fbank-feats`` / ``compute-mfcc-feats``.

:class:`KaldiFrontEnd` maps a job's options onto :class:`~audiokit.dsp.kaldi.FbankOptions` / ``MfccOptions`` at the
input's rate and streams one :class:`~audiokit.dsp.kaldi.KaldiFeatureStream` per channel; it gives ``(channels,
dim, k)`` float64 chunks of log-mel energies (or cepstra), as :class:`~audiokit.pipelines.stft_frontend.StftFrontEnd`
gives spectra, and the same post-processing chain (CMVN, deltas) follows.  The Kaldi-only options themselves
(:class:`KaldiFrontend`) and their rate-free checks live with the other options
(:mod:`audiokit.pipelines.timefreq_options`).

Precision: the kernel computes in float32 (:data:`KERNEL_DTYPE`, Kaldi's own ``BaseFloat``; the frame sums, DC mean,
raw log energy, DC removal and pre-emphasis in float64, each frame rounded once), faster than float64 and within
float32 rounding of the exact value, per cell; the bounds against kaldi-native-fbank per case are in
``docs/conventions.md`` ("Kaldi precision").  Its values are widened to float64 (exactly) for the chain, so CMVN
and deltas still run in float64.  Samples are read as float32 where that is exact (:data:`EXACT_FLOAT32_SUBTYPES`,
without ``--mix``), else as float64; either way the output is bit for bit ``kaldi_fbank(samples, dtype=np.float32)``
(``kaldi_mfcc``) of the whole signal.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError, ParameterError
from .memo import memoized
from .params import duration_samples, frequency_hz
from .timefreq_options import KALDI_WINDOWS, KaldiFrontend

if TYPE_CHECKING:
    from ..dsp.kaldi import FbankOptions, MfccOptions
    from ..io.reader import AudioSource
    from .timefreq_options import FeatureOptions, Parsed

__all__ = [
    "EXACT_FLOAT32_SUBTYPES",
    "KALDI_SAFE_PEAK",
    "KALDI_SAMPLE_SCALE",
    "KALDI_WINDOWS",
    "KERNEL_DTYPE",
    "KaldiFrontEnd",
    "KaldiFrontend",
    "kaldi_options",
]

#: Kaldi's sample scale: audiokit's +/-1 full scale -> int16 units.
KALDI_SAMPLE_SCALE = 32768.0
#: Largest float sample (full-scale units) the float32 kernel takes: times 32768, pre-emphasised (x2) and summed over
#: a padded window of <= 2**23 samples, |X| < 2**59 and |X|² < 2**118, inside float32 (2**128) after the mel sums.
KALDI_SAFE_PEAK = float(2**20)
#: The kernel's working precision (:class:`~audiokit.dsp.kaldi.KaldiFeatureStream` ``dtype``); see the module docstring.
KERNEL_DTYPE = np.float32
#: Source subtypes whose samples (``code / 2**(B-1)``, at most 24 significant bits, or float32 itself) float32 holds
#: exactly, so reading them as float32 changes no value; any other (32-bit PCM, float64, decoded codecs) is read as
#: float64, as is a ``--mix`` of channels (a float32 mean would round).
EXACT_FLOAT32_SUBTYPES = frozenset({"PCM_S8", "PCM_U8", "PCM_16", "PCM_24", "ULAW", "ALAW", "FLOAT"})
#: What a Kaldi-front-end preset does beyond the options (:data:`~audiokit.pipelines.compat.PRESET_STEPS`):
#: ``(sample scale, energy floor or None for the option's)``.  Lhotse's extractors take the samples as read and
#: floor the log energy at ``ln(1e-10)`` (``lhotse.utils.EPSILON``).
_PRESET_FRONT_END: dict[str | None, tuple[float, float | None]] = {"lhotse": (1.0, 1e-10)}


class KaldiFrontEnd:
    """Kaldi fbank (``mel``) or MFCC (``mfcc``) of one input, one stream per channel (channel c seeded ``seed + c``).

    Attributes
    ----------
    kopts : FbankOptions or MfccOptions
    rows, n_frames : int
        Feature dimension and frames over the input (Kaldi's ``NumFrames``).
    peak_rows : int
        The feature dimension too (Kaldi has no ``--ref``/``--top-db`` and needs no peak).
    """

    def __init__(self, parsed: Parsed, source: AudioSource, channels: int):
        self.options = parsed.options
        mixed = parsed.tf.mix and source.channels > 1
        self.read_dtype = "float32" if source.subtype in EXACT_FLOAT32_SUBTYPES and not mixed else "float64"
        self.kopts = kaldi_options(parsed.options, source.sr)
        self.sample_scale = _PRESET_FRONT_END.get(parsed.options.compat, (KALDI_SAMPLE_SCALE, None))[0]
        if parsed.options.compat == "lhotse":
            _check_lhotse_framing(self.kopts, source.name)
        self.rows = self.peak_rows = self.kopts.dim
        self.n_frames = self.kopts.num_frames(source.n_samples)
        self.channels, self.sr = channels, source.sr
        self.is_float, self.name = source.is_float, source.name
        self._streams: list[Any] = []

    def start(self) -> None:
        """A new pass over the input: fresh streams."""
        from ..dsp.kaldi import KaldiFeatureStream

        seed, fft = self.options.kaldi.seed, self.options.timefreq.stft.fft
        seeds = [None if seed is None else seed + c for c in range(self.channels)]
        self._streams = [
            KaldiFeatureStream(self.kopts, sample_scale=self.sample_scale, seed=s, dtype=KERNEL_DTYPE, fft=fft) for s in seeds
        ]

    def push(self, block: np.ndarray) -> np.ndarray:
        """``(channels, n)`` samples -> the ``(channels, dim, k)`` frames they complete (float64: the float32 kernel's
        values, widened).

        Raises
        ------
        InputError
            A float input's sample beyond :data:`KALDI_SAFE_PEAK` (full-scale units), where the float32 kernel's
            power spectrum could overflow; values past the kernel anyway (a larger window) are the chain's ``Store``
            step's to refuse, the overflow itself is silent.
        """
        if self.is_float and block.size:
            _check_peak(block, self.name)
        with np.errstate(over="ignore", invalid="ignore"):
            return self._stack([s.accept_waveform(block[c]) for c, s in enumerate(self._streams)])

    def finish(self) -> np.ndarray:
        """The remaining frames (with ``--no-snip-edges``, those reaching past the end, reflected)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self._stack([s.input_finished() for s in self._streams])

    def _stack(self, outs: list[np.ndarray]) -> np.ndarray:
        if not outs[0].shape[0]:
            return np.zeros((len(outs), self.rows, 0))
        return np.stack([a.T for a in outs], dtype=np.float64)

    # ---------------------------------------------------------------- what the outputs record
    def row_names(self) -> list[str]:
        """Kaldi's column names: ``mel0..`` (``energy`` first, or last with ``--htk-compat``) or ``c0..``."""
        k, dim = self.kopts, self.rows
        if self.options.kind == "mfcc":
            base = [f"c{i}" for i in range(dim)]
            if k.use_energy:
                base[0] = "energy"
            return base[1:] + base[:1] if k.htk_compat else base
        if not k.use_energy:
            return [f"mel{i}" for i in range(dim)]
        mels = [f"mel{i}" for i in range(dim - 1)]
        return mels + ["energy"] if k.htk_compat else ["energy"] + mels

    def framing(self, *, features: bool = True) -> dict[str, Any]:
        """The sidecar's framing keys: Kaldi's options, its frame geometry and frame times."""
        k = self.kopts
        W, H = k.window_size, k.window_shift
        first = 0 if k.snip_edges else H // 2 - W // 2
        return {
            "kaldi": {
                **{name: v for name, v in asdict(k).items() if name not in ("window_samples", "shift_samples")},
                "window_size": W,
                "window_shift": H,
                "padded_window_size": k.padded_window_size,
                "sample_scale": self.sample_scale,
                "seed": self.options.kaldi.seed,
            },
            "win_length": W,
            "hop_length": H,
            "n_fft": k.padded_window_size,
            "window": k.window_type,
            "window_position": "start",
            "frame_time_s": {
                "formula": "start of frame m = (m*hop_length + first) / sr; centre = start + win_length/2/sr",
                "first": first,
                "step": H / self.sr,
            },
        }

    def values_text(self) -> str:
        """The sidecar's ``values`` formula."""
        from ..dsp.kaldi import FbankOptions

        k = self.kopts
        what = "Kaldi compute-mfcc-feats" if self.options.kind == "mfcc" else "Kaldi compute-fbank-feats"
        if not isinstance(k, FbankOptions) or k.use_log_fbank:
            values = "ln(max(mel energy, FLT_EPSILON))"
        else:
            values = "mel energies (linear, --use-log-fbank=false" + (", --use-power=false)" if not k.use_power else ")")
        scaled = "the samples as read" if self.sample_scale == 1 else "the samples times 32768 (int16 units)"
        return f"{what} of {scaled}: {values}"

    @property
    def hop_length(self) -> int:
        return self.kopts.window_shift


def _check_peak(block: np.ndarray, name: str) -> None:
    """Refuse samples beyond :data:`KALDI_SAFE_PEAK` (Kaldi's kernel is float32, as Kaldi's)."""
    peak = float(np.abs(block).max())
    if peak > KALDI_SAFE_PEAK:
        raise InputError(
            f"holds a sample of {peak:.3g} (full scale 1), beyond what Kaldi's float32 front end holds "
            f"(|x| <= {KALDI_SAFE_PEAK:.0f}: its power spectrum would overflow); scale the input down",
            name,
        )


def _kaldi_frame(option: str, text: str, sr: int) -> tuple[float, int | None]:
    """A duration for Kaldi's framing: ``(ms, samples)``.

    A time (``25ms``) is passed as typed, in ms, and Kaldi truncates ``sr*ms/1000`` itself (``samples`` None); a
    bare number of samples (``400``) is used as it is, and ``ms`` is only the Kaldi option that gives it (what the
    sidecar records for ``compute-fbank-feats``: the smallest float32 ms Kaldi truncates to that count).
    """
    from ..units import parse_duration

    duration_samples(option, text, sr)  # the usual checks and messages
    d = parse_duration(text)
    if not d.in_samples:
        return float(d.value * 1000), None
    n = int(d.value)
    ms = n * 1000.0 / sr
    while int(float(np.float32(sr)) * 0.001 * float(np.float32(ms))) < n:
        ms = float(np.nextafter(np.float32(ms), np.float32(np.inf)))
    return ms, n


@memoized()
def kaldi_options(o: FeatureOptions, sr: int) -> FbankOptions | MfccOptions:
    """The :class:`~audiokit.dsp.kaldi.FbankOptions` (``mel``) or ``MfccOptions`` (``mfcc``) of a Kaldi job at ``sr``
    (made once per process for equal options and rate; its warnings are replayed)."""
    from ..dsp.kaldi import FbankOptions, MfccOptions

    tf, k = o.timefreq, o.kaldi
    mel = tf.mel
    assert mel is not None
    frame_length_ms, window_samples = _kaldi_frame("--win", tf.stft.win, sr)
    frame_shift_ms, shift_samples = _kaldi_frame("--hop", tf.stft.hop, sr)
    common: dict[str, Any] = dict(
        samp_freq=float(sr),
        frame_length_ms=frame_length_ms,
        frame_shift_ms=frame_shift_ms,
        window_samples=window_samples,
        shift_samples=shift_samples,
        dither=k.dither,
        preemph_coeff=k.preemphasis,
        remove_dc_offset=k.remove_dc,
        window_type="hanning" if tf.stft.window == "hann" else tf.stft.window,
        snip_edges=k.snip_edges,
        num_mel_bins=mel.n_mels,
        low_freq=frequency_hz("--fmin", tf.fmin) if tf.fmin is not None else 20.0,
        high_freq=_kaldi_high_freq(tf.fmax),
        raw_energy=k.raw_energy,
        htk_compat=k.htk_compat,
        energy_floor=_PRESET_FRONT_END.get(o.compat, (0.0, None))[1] or k.energy_floor,
    )
    if tf.stft.nfft is not None:
        w = (
            window_samples
            if window_samples is not None
            else int(float(np.float32(sr)) * 0.001 * float(np.float32(frame_length_ms)))
        )
        n = duration_samples("--nfft", tf.stft.nfft, sr)
        pow2 = 1 << (w - 1).bit_length()
        if n not in (w, pow2):
            raise ParameterError(
                f"--compat kaldi: --nfft must be the window length ({w}) or the next power of two "
                f"({pow2}) (Kaldi's --round-to-power-of-two), got {n}"
            )
        common["round_to_power_of_two"] = n == pow2
    try:
        if o.kind == "mfcc":
            return MfccOptions(**common, use_energy=o.energy, num_ceps=o.n_mfcc, cepstral_lifter=o.lifter)
        scale = tf.scale.lower()
        return FbankOptions(**common, use_energy=k.use_energy, use_log_fbank=scale == "db", use_power=scale != "magnitude")
    except ParameterError as exc:
        raise ParameterError(f"--compat kaldi: {exc.reason}") from None


def _check_lhotse_framing(k: FbankOptions | MfccOptions, name: str) -> None:
    """Refuse the framings where Lhotse's frames do not start where Kaldi's do.

    Without snip-edges Kaldi's frame ``m`` starts at ``m*H + H//2 - W//2``, Lhotse's (``_get_strided_batch``) at
    ``m*H - (W - H)//2``: one sample later when ``W`` is even and ``H`` odd (44.1 kHz: ``W`` 1102, ``H`` 441).
    """
    W, H = k.window_size, k.window_shift
    if not k.snip_edges and H // 2 - W // 2 != -((W - H) // 2):
        raise ParameterError(
            f"--compat lhotse: with a {W}-sample window and a {H}-sample hop (at {k.samp_freq:g} Hz) Lhotse's frames "
            f"start at m*{H} - {(W - H) // 2}, one sample after Kaldi's (m*{H} - {W // 2 - H // 2}), which is not "
            "implemented (resample first, e.g. audiokit resample FILE --to 16k, or give --win/--hop in samples)",
            name,
        )


def _kaldi_high_freq(text: str | None) -> float:
    """``--fmax`` as Kaldi's ``--high-freq``: unset = 0 (nyquist), a negative value = nyquist minus it."""
    if text is None:
        return 0.0
    t = text.strip()
    if t.startswith("-"):
        return -frequency_hz("--fmax", t[1:])
    return frequency_hz("--fmax", t)

"""Kaldi's front end for the feature jobs: its own options as typed, their checks, and the mapping of a job's
options onto :class:`~audiokit.dsp.kaldi.FbankOptions` / ``MfccOptions`` (``--compat kaldi``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError
from ..validate import check_choice
from .params import duration_samples, frequency_hz
from .timefreq import parse_ref

if TYPE_CHECKING:
    from ..dsp.kaldi import FbankOptions, MfccOptions
    from .features import FeatureOptions

__all__ = ["KaldiFrontend", "KALDI_WINDOWS", "KALDI_SAMPLE_SCALE", "kaldi_checks", "kaldi_options"]

KALDI_WINDOWS = ("povey", "hamming", "hanning", "rectangular", "blackman", "sine")
#: Kaldi's sample scale: audiokit's +/-1 full scale -> int16 units.
KALDI_SAMPLE_SCALE = 32768.0


@dataclass(frozen=True)
class KaldiFrontend:
    """Kaldi-only options as typed (``--dither``, ``--seed``, ``--preemphasis``, ...); Kaldi's meaning each."""

    dither: float = 0.0
    seed: int | None = None
    preemphasis: float = 0.97
    remove_dc: bool = True
    snip_edges: bool = True
    use_energy: bool = False
    raw_energy: bool = True
    htk_compat: bool = False
    energy_floor: float = 0.0


def kaldi_checks(o: FeatureOptions) -> None:
    """Refuse options that have no meaning in Kaldi's computation (explicit flags against the preset)."""
    tf, mel = o.timefreq, o.timefreq.mel
    problems = []
    if tf.stft.center:
        problems.append("--center (Kaldi frames with --snip-edges / --no-snip-edges)")
    if tf.stft.symmetric:
        problems.append("--symmetric (Kaldi's windows are symmetric already)")
    if mel is not None and mel.mel_scale != "kaldi":
        problems.append(f"--mel-scale {mel.mel_scale} (Kaldi's mel is 1127*ln(1+f/700))")
    if mel is not None and mel.norm != "none":
        problems.append(f"--norm {mel.norm}")
    if mel is not None and mel.log != "ln":
        problems.append(f"--log {mel.log} (Kaldi takes the natural log)")
    if parse_ref(tf.ref) != 1.0 or tf.top_db:
        problems.append("--ref / --top-db")
    if tf.amin is not None and tf.amin != float(np.finfo(np.float32).eps):
        problems.append("--amin (Kaldi floors at FLT_EPSILON)")
    if tf.stft.pad_mode != "reflect":
        problems.append("--pad-mode (Kaldi reflects the ends with --no-snip-edges)")
    if o.window_position != "start":
        problems.append("--window-position center (Kaldi puts the window at the frame start)")
    if problems:
        raise ParameterError("--compat kaldi: not available with " + "; ".join(problems))
    window = "hanning" if tf.stft.window == "hann" else tf.stft.window
    check_choice(
        window,
        "--window",
        KALDI_WINDOWS + ("hann",),
        message="--compat kaldi: --window must be one of povey, hamming, hanning, rectangular, blackman, sine; got {value!r}",
    )


def _kaldi_ms(option: str, text: str, sr: int) -> float:
    """A duration as Kaldi milliseconds: times exactly as typed (Kaldi truncates ``sr*ms/1000``), samples as ms."""
    from ..units import parse_duration

    duration_samples(option, text, sr)  # the usual checks and messages
    d = parse_duration(text)
    if not d.in_samples:
        return float(d.value * 1000)
    n = int(d.value)
    ms = n * 1000.0 / sr
    while int(float(np.float32(sr)) * 0.001 * float(np.float32(ms))) < n:  # Kaldi's truncation must give n
        ms = float(np.nextafter(np.float32(ms), np.float32(np.inf)))
    return ms


def kaldi_options(o: FeatureOptions, sr: int) -> FbankOptions | MfccOptions:
    """The :class:`~audiokit.dsp.kaldi.FbankOptions` (``mel``) or ``MfccOptions`` (``mfcc``) of a Kaldi job at ``sr``."""
    from ..dsp.kaldi import FbankOptions, MfccOptions

    tf, k = o.timefreq, o.kaldi
    mel = tf.mel
    assert mel is not None
    frame_length_ms = _kaldi_ms("--win", tf.stft.win, sr)
    frame_shift_ms = _kaldi_ms("--hop", tf.stft.hop, sr)
    common: dict[str, Any] = dict(
        samp_freq=float(sr),
        frame_length_ms=frame_length_ms,
        frame_shift_ms=frame_shift_ms,
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
        energy_floor=k.energy_floor,
    )
    if tf.stft.nfft is not None:
        w = int(float(np.float32(sr)) * 0.001 * float(np.float32(frame_length_ms)))
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
        scale = tf.scale
        return FbankOptions(**common, use_energy=k.use_energy, use_log_fbank=scale == "db", use_power=scale != "magnitude")
    except ParameterError as exc:
        raise ParameterError(f"--compat kaldi: {exc.reason}") from None


def _kaldi_high_freq(text: str | None) -> float:
    """``--fmax`` as Kaldi's ``--high-freq``: unset = 0 (nyquist), a negative value = nyquist minus it."""
    if text is None:
        return 0.0
    t = text.strip()
    if t.startswith("-"):
        return -frequency_hz("--fmax", t[1:])
    return frequency_hz("--fmax", t)

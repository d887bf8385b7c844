"""The STFT front end of the time-frequency job: blocks of samples -> frames of ``|X|²``/``|X|``/``X``, optionally
through the mel filter bank, as ``(channels, rows, k)`` chunks.

:class:`StftFrontEnd` and :class:`~audiokit.pipelines.kaldi_frontend.KaldiFrontEnd` are interchangeable: the job
(:mod:`audiokit.pipelines.timefreq`) reads blocks, pushes them into :meth:`~StftFrontEnd.push`, and hands the
chunks to the post-processing chain (:mod:`audiokit.pipelines.features`).  Each front end says how many frames
and rows it gives, in which dtype it reads the samples, and what the sidecar records of its framing.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from ..errors import ParameterError
from .params import frequency_hz

if TYPE_CHECKING:
    from ..dsp.mel import MelNorm, MelScale
    from ..io.reader import AudioSource
    from .timefreq_options import MelOptions, Parsed, TimeFreqOptions

__all__ = ["StftFrontEnd", "band_rows", "mel_bank", "pick_channels"]


class StftFrontEnd:
    """STFT (+ mel bank) of one input at its rate, in ``dtype``; a fresh stream per pass (:meth:`start`).

    Parameters
    ----------
    parsed : Parsed
        The job's checked options.
    source : AudioSource
        The input (its rate, length and subtype).
    dtype : {"float32", "float64"}
        Working precision of the STFT.

    Attributes
    ----------
    plan : StftPlan
    rows : int
        Rows of every chunk: kept bins (spectrogram), mel bands (+1: the frame's total power, for ``mfcc --energy``).
    n_frames : int
        Frames over the input (Whisper's front end drops the last one).
    peak_rows : int
        The rows whose maximum is the peak of ``--ref max``/``--top-db`` (the mel bands, not the energy row).
    """

    def __init__(self, parsed: Parsed, source: AudioSource, dtype: Literal["float32", "float64"]):
        from ..engine import get_backend

        tf = parsed.tf
        if parsed.options.is_whisper:  # Whisper's reference (transformers) transforms in float64: so does its preset
            dtype = "float64"
        self.parsed, self.dtype = parsed, dtype
        self.plan = tf.stft.plan(source.sr, dtype=dtype)
        self.filterbank: np.ndarray | None = None
        self.row_slice = slice(None)
        self.mel_meta: dict[str, Any] = {}
        if parsed.mel is not None:
            self.filterbank, self.mel_meta, self.row_freqs = mel_bank(parsed.mel, tf, self.plan)
            self.peak_rows = self.filterbank.shape[0]
            if parsed.kind == "mfcc" and parsed.options.energy:  # one more row summing every bin: the frame's power
                self.filterbank = np.vstack([self.filterbank, np.ones((1, self.filterbank.shape[1]), np.float32)])
            self.rows = self.filterbank.shape[0]
        else:
            self.row_slice, self.row_freqs = band_rows(tf, self.plan)
            self.rows = self.peak_rows = self.row_freqs.size
        self.output = "complex" if parsed.want_complex else parsed.power_kind
        self.drop_last = parsed.options.is_whisper  # Whisper (and transformers) drop the STFT's last frame
        self.n_frames = max(0, self.plan.n_frames(source.n_samples) - int(self.drop_last))
        self.read_dtype = "float64" if dtype == "float64" or source.subtype == "DOUBLE" else "float32"
        self._backend = get_backend(tf.stft.fft)
        self._stream: Any = None
        self._given = 0

    def start(self) -> None:
        """A new pass over the input: a fresh stream."""
        from ..dsp.stft import StftStream

        self._stream = StftStream(self.plan, output=self.output, filterbank=self.filterbank, backend=self._backend)
        self._given = 0

    def push(self, block: np.ndarray) -> np.ndarray:
        """``(channels, n)`` samples -> the ``(channels, rows, k)`` frames they complete."""
        return self._keep(self._stream.push(block.astype(self.dtype, copy=False)))

    def finish(self) -> np.ndarray:
        """The remaining frames (the end padding, or the zero-padded frame of a short input)."""
        return self._keep(self._stream.finish())

    def _keep(self, chunk: np.ndarray) -> np.ndarray:
        chunk = chunk[..., self.row_slice, :]
        if self.drop_last and self._given + chunk.shape[-1] > self.n_frames:
            chunk = chunk[..., : self.n_frames - self._given]
        self._given += chunk.shape[-1]
        return chunk

    # ---------------------------------------------------------------- what the outputs record
    def framing(self, *, features: bool) -> dict[str, Any]:
        """The sidecar's framing keys (the plan; frame times; the rows' frequencies)."""
        from .sidecar import plan_fields

        plan = self.plan
        frame_time: dict[str, Any] = {"formula": "centre of frame m = (m*hop_length - pad + n_fft//2) / sr", "pad": plan.pad}
        fields: dict[str, Any] = dict(plan_fields(plan))
        if features:
            fields.update(window_position="center", mel=self.mel_meta, mel_centre_hz=self.centres())
        else:
            times = plan.times(min(self.n_frames, 1), where="centre")
            frame_time["first"] = float(times[0]) if self.n_frames else None
            fields["delta_f_hz"] = plan.delta_f
            if self.parsed.mel is not None:
                fields.update(mel=self.mel_meta, mel_centre_hz=self.centres())
            else:
                first_bin = int(round(self.row_freqs[0] / plan.delta_f))
                fields["freq_hz"] = {"formula": "k * sr / n_fft", "first_bin": first_bin, "count": int(self.row_freqs.size)}
        frame_time["step"] = plan.hop_length / plan.sr
        fields["frame_time_s"] = frame_time
        return fields

    def centres(self) -> list[float]:
        """The mel bands' centre frequencies (Hz, 6 decimals), as the sidecar lists them."""
        return [round(float(f), 6) for f in self.row_freqs]

    @property
    def hop_length(self) -> int:
        return int(self.plan.hop_length)


def pick_channels(block: np.ndarray, channel: int | None, mix: bool) -> np.ndarray:
    """The ``(channels, n)`` block analysed: channel ``channel`` alone (``--channel``), the mean (``--mix``) or all.

    Both keep the channel axis (``(1, n)``); the channel is a view, so its samples are those of the file, bit for bit.
    """
    if mix:
        return np.asarray(block.mean(axis=0, keepdims=True))
    if channel is not None:
        return block[channel : channel + 1]
    return block


def band_rows(options: TimeFreqOptions, plan: Any) -> tuple[slice, np.ndarray]:
    """Rows of the spectrogram kept by ``--fmin/--fmax`` (a slice of bins) and their centre frequencies (Hz)."""
    fmin = frequency_hz("--fmin", options.fmin) if options.fmin is not None else 0.0
    fmax = frequency_hz("--fmax", options.fmax) if options.fmax is not None else float(plan.freqs[-1])
    if fmax > plan.sr / 2:  # as the mel bank refuses it: nothing lies above the Nyquist frequency
        raise ParameterError(f"--fmax {fmax:g} Hz is above the Nyquist frequency sr/2 = {plan.sr / 2:g} Hz")
    rows = plan.bins_between(fmin, fmax)
    return rows, plan.freqs[rows]


def mel_bank(mel: MelOptions, options: TimeFreqOptions, plan: Any) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
    """The float32 mel filter bank ``(n_mels, n_freqs)`` of checked ``mel``, its sidecar fields and band centres (Hz)."""
    from ..dsp.mel import mel_frequencies

    norm = None if mel.norm == "none" else cast("MelNorm", mel.norm)
    mel_scale = cast("MelScale", mel.mel_scale)
    fmin = frequency_hz("--fmin", options.fmin) if options.fmin is not None else 0.0
    fmax = frequency_hz("--fmax", options.fmax) if options.fmax is not None else plan.sr / 2
    bank = _cached_bank(plan.sr, plan.n_fft, mel.n_mels, fmin, fmax, mel_scale, norm)
    centres = mel_frequencies(mel.n_mels + 2, fmin=fmin, fmax=fmax, scale=mel_scale)[1:-1]
    meta = {"n_mels": mel.n_mels, "fmin_hz": fmin, "fmax_hz": fmax, "mel_scale": mel.mel_scale, "norm": mel.norm}
    return bank, meta, centres


@functools.lru_cache(maxsize=8)
def _cached_bank(
    sr: int, n_fft: int, n_mels: int, fmin: float, fmax: float, mel_scale: MelScale, norm: MelNorm | None
) -> np.ndarray:
    """The float32 mel bank, built once per set of parameters (a batch of thousands of files reuses it); read-only."""
    from ..dsp.mel import mel_filterbank

    bank = mel_filterbank(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, scale=mel_scale, norm=norm, dtype=np.float32)
    bank.flags.writeable = False
    return bank

"""The registry's specs of the time-frequency jobs (``spectrogram``, ``mel``, ``mfcc``): checks, names, one run.

The three share one runner, :func:`~audiokit.pipelines.timefreq.run_timefreq` (the STFT/mel pipeline, or the
feature chain for MFCC, Kaldi's front end, deltas and CMVN); they differ in their name and output stem only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .params import InputOptions, check_channel, check_syntax, choice
from .registry import JobResult, JobSpec
from .timefreq import PAD_MODES, SCALES, FeatureOptions, TimeFreqOptions, parse_ref, run_timefreq

__all__ = ["MEL_SPEC", "MFCC_SPEC", "SPECTROGRAM_SPEC", "check_options"]


def check_options(options: Any) -> None:
    """Rate-free checks of :class:`TimeFreqOptions` or :class:`FeatureOptions` (exit 2 before any input is read)."""
    from ..plot import parse_size

    tf = options
    if hasattr(options, "timefreq"):  # mfcc, or mel with --compat kaldi / --deltas / --cmvn (FeatureOptions)
        options.check()
        tf = options.timefreq
    check_channel(tf.channel, tf.mix)
    kaldi = getattr(options, "compat", None) == "kaldi"  # Kaldi's windows and --fmax < 0 are checked above
    check_syntax(
        durations={"--win": tf.stft.win, "--hop": tf.stft.hop, "--nfft": tf.stft.nfft},
        frequencies={"--fmin": tf.fmin} if kaldi else {"--fmin": tf.fmin, "--fmax": tf.fmax},
        window=None if kaldi else tf.stft.window,
    )
    choice("--scale", tf.scale, SCALES)
    choice("--pad-mode", tf.stft.pad_mode, PAD_MODES)
    parse_ref(tf.ref)
    parse_size(tf.size)


def _spec(name: str, options_type: type) -> JobSpec:
    def outputs(options: Any, stem: str, png: bool) -> dict[str, str]:
        names = {"npy": f"{stem}.{name}.npy", "json": f"{stem}.{name}.json"}
        if png:
            names["png"] = f"{stem}.{name}.png"
        return names

    def run(path: str, outputs: Mapping[str, str], options: Any, inputs: InputOptions) -> JobResult:
        result = run_timefreq(path, options, png=outputs.get("png"), npy=outputs["npy"], inputs=inputs)
        assert result.source is not None  # a time-frequency job always opens its input
        return JobResult(result.source, shape=result.shape)

    return JobSpec(name=name, options=options_type, check=check_options, outputs=outputs, run=run, draws=True)


#: ``spectrogram``: ``<stem>.spectrogram.npy`` + sidecar (+ PNG with ``--png``) per input.
SPECTROGRAM_SPEC = _spec("spectrogram", TimeFreqOptions)
#: ``mel``: ``<stem>.mel.npy`` + sidecar (+ PNG); options ``FeatureOptions`` (``kind="mel"``; a bare
#: ``TimeFreqOptions`` runs too).
MEL_SPEC = _spec("mel", FeatureOptions)
#: ``mfcc``: ``<stem>.mfcc.npy`` + sidecar (+ PNG); options ``FeatureOptions``.
MFCC_SPEC = _spec("mfcc", FeatureOptions)

"""The registry's specs of the time-frequency jobs (``spectrogram``, ``mel``, ``mfcc``): checks, names, one run.

The three share one runner, :func:`~audiokit.pipelines.timefreq.run_timefreq` (the STFT/mel pipeline, or the
feature chain for MFCC, Kaldi's front end, deltas and CMVN); they differ in their name and output stem only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .params import InputOptions, check_syntax
from .registry import JobResult, JobSpec, MemberGeometry
from .timefreq import FeatureOptions, TimeFreqOptions, member_geometry, run_timefreq

__all__ = ["MEL_SPEC", "MFCC_SPEC", "SPECTROGRAM_SPEC", "check_options"]


def check_options(options: Any) -> None:
    """Rate-free checks of :class:`TimeFreqOptions` or :class:`FeatureOptions` (exit 2 before any input is read).

    The options' own :meth:`~audiokit.pipelines.timefreq_options.FeatureOptions.check` parses every rate-free value
    once; the window's name, checked where the STFT is built in a single-file run, is checked here too.
    """
    parsed = FeatureOptions.of(options).check()
    if not parsed.options.is_kaldi:  # Kaldi's windows are checked by its own checks
        check_syntax(window=parsed.tf.stft.window)


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

    def run_member(path: str, options: Any, inputs: InputOptions, member: Callable[[int, int], Any], describe: bool) -> JobResult:
        result = run_timefreq(path, options, inputs=inputs, member=member, describe=describe)
        assert result.source is not None
        return JobResult(result.source, shape=result.shape, sidecar=result.sidecar)

    def geometry(options: Any, sr: int) -> MemberGeometry:
        return member_geometry(options, sr, name)

    return JobSpec(
        name=name,
        options=options_type,
        check=check_options,
        outputs=outputs,
        run=run,
        draws=True,
        run_member=run_member,
        member_geometry=geometry,
    )


#: ``spectrogram``: ``<stem>.spectrogram.npy`` + sidecar (+ PNG with ``--png``) per input.
SPECTROGRAM_SPEC = _spec("spectrogram", TimeFreqOptions)
#: ``mel``: ``<stem>.mel.npy`` + sidecar (+ PNG); options ``FeatureOptions`` (``kind="mel"``; a bare
#: ``TimeFreqOptions`` runs too).
MEL_SPEC = _spec("mel", FeatureOptions)
#: ``mfcc``: ``<stem>.mfcc.npy`` + sidecar (+ PNG); options ``FeatureOptions``.
MFCC_SPEC = _spec("mfcc", FeatureOptions)

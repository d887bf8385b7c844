"""An opened input seen at another sample rate: ``audiokit batch --sr RATE`` resamples on read, as ``resample`` does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..io.reader import BLOCK_SAMPLES, AudioSource

if TYPE_CHECKING:
    from ..dsp.resample import Quality

__all__ = ["ResampledSource", "resampled"]


class ResampledSource:
    """``source`` resampled to ``sr`` (soxr, ``quality``; :class:`audiokit.dsp.resample.Resampler`) block by block.

    It reads like the :class:`~audiokit.io.reader.AudioSource` it wraps (``name``, ``channels``, ``subtype``,
    ``is_float`` are the input's) with ``sr`` the new rate and ``n_samples = output_length(n, sr_in, sr)``, the
    length ``audiokit resample`` writes; the samples are those ``audiokit resample --to sr`` writes before
    quantisation (float32 computation, bit-identical for any block size).
    """

    def __init__(self, source: AudioSource, sr: int, quality: Quality = "high") -> None:
        from ..dsp.resample import output_length

        self._source, self.sr, self.quality = source, int(sr), quality
        self.n_samples = output_length(source.n_samples, sr_in=source.sr, sr_out=self.sr)

    def __getattr__(self, name: str) -> Any:  # name, channels, subtype, is_float, container: the input's
        return getattr(self._source, name)

    @property
    def duration(self) -> float:
        """Seconds, ``n_samples / sr``."""
        return self.n_samples / self.sr

    def __enter__(self) -> ResampledSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self._source.close()

    def close(self) -> None:
        """Close the input."""
        self._source.close()

    def blocks(
        self, block_size: int = BLOCK_SAMPLES, *, dtype: str = "float32", n_samples: int | None = None
    ) -> Iterator[np.ndarray]:
        """The resampled samples in blocks ``(channels, k)`` (``k`` varies; at most ``n_samples`` in all)."""
        from ..dsp.resample import Resampler, block_samples

        src = self._source
        stream = Resampler(sr_in=src.sr, sr_out=self.sr, channels=src.channels, quality=self.quality)
        left = self.n_samples if n_samples is None else min(n_samples, self.n_samples)
        size = block_samples(block_size, sr_in=src.sr, sr_out=self.sr, channels=src.channels)  # bounded output blocks
        for block in src.blocks(size, dtype="float32"):
            out = stream.process(block)
            if out.shape[1] and left > 0:
                out = out[:, :left]
                left -= out.shape[1]
                yield out.astype(dtype, copy=False)
        tail = stream.flush()[:, : max(left, 0)]
        if tail.shape[1]:
            yield tail.astype(dtype, copy=False)


def resampled(source: AudioSource, sr: int | None) -> Any:
    """``source`` itself when ``sr`` is None or its own rate, else a :class:`ResampledSource`."""
    if sr is None or sr == source.sr:
        return source
    return ResampledSource(source, sr)

"""One function per job, under the CLI and the batch runner: paths and plain values in, a result out.

Each job takes the input path, its output path(s), an options dataclass
holding the option values as the user typed them (``"25ms"``, ``"16k"``), an
:class:`~audiokit.pipelines.params.InputOptions` (raw PCM, NaN policy) and a
:class:`~audiokit.pipelines.progress.Reporter`; it returns a result object.
Nothing here imports Typer or prints: the CLI prints, the batch runner
records.  The options dataclasses are frozen and hold only JSON-able values,
so a batch can fingerprint them.

=============  ============================================  ==============================
job            function                                      options
=============  ============================================  ==============================
info           :func:`.info.info`                            :class:`.info.InfoOptions`
generate       :func:`.generate.generate`                    :class:`.generate.GenerateOptions`
spectrogram    :func:`.timefreq.run_timefreq`                :class:`.timefreq.TimeFreqOptions`
mel, mfcc      :func:`.timefreq.run_timefreq`                :class:`.timefreq.FeatureOptions`
mel bank       :func:`.timefreq.filterbank_job`              :class:`.timefreq.FeatureOptions`
spectrum       :func:`.spectrum.spectrum_file`               :class:`.spectrum.SpectrumOptions`
istft          :func:`.istft.istft_file`                     :class:`.istft.IstftOptions`
resample       :func:`.resample.resample_file`               :class:`.resample.ResampleOptions`
quantize       :func:`.quantize.quantize_file`               :class:`.quantize.QuantizeOptions`
dehum          :func:`.dehum.dehum_file`                     :class:`.dehum.DehumOptions`
=============  ============================================  ==============================
"""

__all__: list[str] = []

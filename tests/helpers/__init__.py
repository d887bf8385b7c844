"""Code shared by the tests (fixtures stay in the ``conftest.py`` files).

* :mod:`tests.helpers.paths`: the repository's files the tests read (``examples/data/speech.wav``, ``tests/data``).
* :mod:`tests.helpers.wav`: RIFF/WAVE bytes with header fields chosen freely.
* :mod:`tests.helpers.stft_reference`: a naive STFT and the spectra tolerance.
* :mod:`tests.helpers.kaldi_reference`: kaldi-native-fbank, Kaldi's loop in float64, the accuracy corpus.
* :mod:`tests.helpers.hum_signals`: hum with a known phase, programmes, the measures of removal.
* :mod:`tests.helpers.cli`: CLI inputs, naive STFT references, array and PNG checks.
* :mod:`tests.helpers.batch`: the batch corpus, manifests and leftovers, the single-file reference outputs.
* :mod:`tests.helpers.memory`: the peak RSS of one whole command (``os.wait4``), and the 300 MiB bound.
"""

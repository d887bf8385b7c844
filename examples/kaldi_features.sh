#!/usr/bin/env bash
# Features a speech model was trained on, as its toolkit computes them: Kaldi fbank and MFCC (+ sliding CMVN and
# deltas), torchaudio and librosa MFCC, all from the bundled speech example; compared with kaldi-native-fbank when
# it is installed (pip install ".[test]"), cells within 60 dB of the strongest apart from the quieter ones (where
# kaldi-native-fbank's float32 arithmetic is itself that far from Kaldi's formulas: benchmarks/bench_kaldi_accuracy.py).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out
audiokit resample examples/data/speech.wav --to 16k -o examples/out/speech16k.wav > /dev/null
audiokit mel examples/out/speech16k.wav --compat kaldi --npy examples/out/speech.fbank.npy > /dev/null
audiokit mfcc examples/out/speech16k.wav --compat kaldi --cmvn sliding --deltas 2 --npy examples/out/speech.mfcc_dd.npy > /dev/null
audiokit mfcc examples/out/speech16k.wav --compat torchaudio --npy examples/out/speech.mfcc_ta.npy -o examples/out/speech.mfcc_ta.png > /dev/null
audiokit mfcc examples/out/speech16k.wav --compat librosa --npy examples/out/speech.mfcc_librosa.npy > /dev/null
python3 - <<'PY'
import numpy as np
import audiokit
fbank = np.load("examples/out/speech.fbank.npy")
print(f"Kaldi fbank {fbank.shape} (bins, frames); MFCC+CMVN+deltas {np.load('examples/out/speech.mfcc_dd.npy').shape}; "
      f"torchaudio MFCC {np.load('examples/out/speech.mfcc_ta.npy').shape}; librosa MFCC {np.load('examples/out/speech.mfcc_librosa.npy').shape}")
try:
    import kaldi_native_fbank as knf
except ImportError:
    print("kaldi-native-fbank is not installed: no comparison")
else:
    opts = knf.FbankOptions()
    opts.frame_opts.dither = 0
    y = audiokit.read("examples/out/speech16k.wav").samples[0] * 32768
    online = knf.OnlineFbank(opts)
    online.accept_waveform(16000, y.tolist())
    online.input_finished()
    ref = np.stack([online.get_frame(i) for i in range(online.num_frames_ready)]).T
    d = np.abs(fbank - ref)
    loud = fbank >= fbank.max() - np.log(1e6)  # cells within 60 dB of the strongest: below, float32 rounding dominates
    print(f"kaldi-native-fbank {ref.shape}: max |difference| {d[loud].max():.1e} log units in the {loud.mean():.0%} of cells "
          f"within 60 dB of the strongest, {d[~loud].max():.1e} below (kaldi-native-fbank's float32 rounding)")
PY

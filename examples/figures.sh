#!/usr/bin/env bash
# The time-frequency pictures (issue 23): the time axis covers the file, a series of PNGs shares one colour
# scale, a log-frequency axis, MFCCs drawn per coefficient, Kaldi fbank with Hz ticks, the filter bank on a mel
# axis, six channels in exactly --size pixels.  Writes into examples/out/figures/ (git-ignored); open the PNGs.
#
#   bash examples/figures.sh
#
# Needs audiokit on PATH and the Python that has it installed (PYTHON, default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
out=examples/out/figures
mkdir -p "$out"
PYTHON="${PYTHON:-python3}"
speech=examples/data/speech.wav

echo "== 1. A 2 s chirp under 256 ms windows: the time axis runs 0 .. 2 s (frame centres are 0.128 .. 1.872 s)"
audiokit generate chirp:100:7000 --rate 16k --dur 2s -o "$out/chirp.wav" >/dev/null
audiokit spectrogram "$out/chirp.wav" --win 256ms --hop 32ms --size 800x400 -o "$out/chirp.png"

echo "== 2. A quiet tone alone, then with a loud one: one --vmin/--vmax, the quiet tone keeps its colour"
"$PYTHON" - "$out" <<'EOF'
import sys
import numpy as np
import audiokit
t = np.arange(16000) / 16000
quiet = 0.05 * np.sin(2 * np.pi * 1000 * t)
audiokit.write(f"{sys.argv[1]}/quiet.wav", quiet, 16000)
audiokit.write(f"{sys.argv[1]}/quiet_and_loud.wav", quiet + 0.8 * np.sin(2 * np.pi * 3000 * t), 16000)
EOF
for name in quiet quiet_and_loud; do
    audiokit spectrogram "$out/$name.wav" --vmin -20 --vmax 70 --size 800x400 -o "$out/$name.vmin.png"
done

echo "== 3. The speech spectrogram on a log-frequency axis (n_fft 2048: 7.8 Hz bins)"
audiokit spectrogram "$speech" --nfft 2048 --win 2048 --hop 256 --freq-scale log --size 800x400 -o "$out/speech.log.png"

echo "== 4. MFCCs: each coefficient on its own scale, white at 0; Kaldi fbank with its bands' Hz"
audiokit mfcc "$speech" --size 800x400 -o "$out/speech.mfcc.png"
audiokit mel "$speech" --compat kaldi --size 800x400 -o "$out/speech.fbank.png"

echo "== 5. The 80-band filter bank at n_fft 512, on a mel axis (default) and on Hz"
audiokit mel "$speech" --nfft 512 --win 512 --filterbank --size 800x400 -o "$out/melfb.mel.png"
audiokit mel "$speech" --nfft 512 --win 512 --filterbank --filterbank-scale linear --size 800x400 -o "$out/melfb.hz.png"

echo "== 6. Too many mel bands for n_fft 400 at 16 kHz: one warning line says so and what to do"
audiokit mel "$speech" --size 800x400 -o "$out/speech.mel400.png"

echo "== 7. Six channels in exactly 800 x 400 pixels"
audiokit generate "pink:0.08" --rate 16k --dur 1s --channels 6 -o "$out/six.wav" >/dev/null
audiokit spectrogram "$out/six.wav" --size 800x400 -o "$out/six.png"
"$PYTHON" -c "from PIL import Image; print('   six.png:', Image.open('$out/six.png').size)"

#!/usr/bin/env bash
# Loudness (EBU R128 / ITU-R BS.1770-4): a podcast-style file -- a music intro, two voices at different levels, a
# pause, a music outro -- measured against the -16 LUFS podcast target, drawn, its curves saved, then brought to the
# target with the gain the report gives and measured again.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p examples/out

echo "== a 48 kHz stereo 'podcast': music bed, the speech example as two voices (-6 dB apart), a pause"
audiokit generate "sine:220:0.08 + sine:277.2:0.06 + sine:329.6:0.05 + pink:0.02" --rate 48k --dur 8s -o examples/out/bed.wav
python3 - <<'PY'
import numpy as np, soundfile as sf
from scipy.signal import resample_poly
voice, sr = sf.read("examples/data/speech.wav")          # 16 kHz mono speech
voice = resample_poly(voice, 3, 1)                       # to 48 kHz
bed, _ = sf.read("examples/out/bed.wav")
pause = np.zeros(48000 * 2)
fade = np.minimum(1, np.linspace(0, 4, bed.size)) * np.minimum(1, np.linspace(4, 0, bed.size))
host = np.concatenate([voice, pause[:24000], 0.5 * voice])  # the guest 6 dB below the host
mono = np.concatenate([bed * fade, host, pause, host, bed * fade])
stereo = np.stack([mono, 0.9 * mono], axis=1)              # a little off-centre
sf.write("examples/out/podcast.wav", stereo, 48000, subtype="PCM_24")
PY

echo "== measured against -16 LUFS (table), with the PNG and the 100 ms curves"
audiokit loudness examples/out/podcast.wav --target -16 -o examples/out/podcast.loudness.png \
  --series examples/out/podcast.loudness.csv
head -4 examples/out/podcast.loudness.csv

echo "== the same as JSON: integrated, LRA, true peak and the gain to the target"
audiokit loudness examples/out/podcast.wav --target -16 --json \
  | jq -c '{I: .integrated_lufs, LRA: .loudness_range_lu, TP: .true_peak_dbtp, gain: .gain_db, tp_after: .peak_after_gain_db}'

echo "== the gain applied: -16 LUFS (a true peak above -1 dBTP would need a limiter, which this does not do)"
gain=$(audiokit loudness examples/out/podcast.wav --target -16 --json | jq .gain_db)
python3 - "$gain" <<'PY'
import sys, soundfile as sf
x, sr = sf.read("examples/out/podcast.wav")
sf.write("examples/out/podcast_-16.wav", x * 10 ** (float(sys.argv[1]) / 20), sr, subtype="FLOAT")
PY
audiokit loudness examples/out/podcast_-16.wav --target -16 --jsonl | jq -c '[.integrated_lufs, .gain_db, .true_peak_dbtp]'

echo "== a corpus: the report of each file in results.jsonl, its 100 ms curves as <id>.loudness.npy + .json"
rm -rf examples/out/loudness_batch
audiokit batch loudness examples/out/podcast.wav examples/out/podcast_-16.wav --out examples/out/loudness_batch \
  --target -16 --series -j 1
jq -c '[.id, .integrated_lufs, .gain_db]' examples/out/loudness_batch/results.jsonl
python3 -c "import numpy as np; print(np.load('examples/out/loudness_batch/podcast.loudness.npy').shape)"
audiokit loudness examples/out/podcast.wav --series examples/out/podcast.loudness.npy > /dev/null
cmp examples/out/podcast.loudness.npy examples/out/loudness_batch/podcast.loudness.npy && echo "batch --series = single-file --series"

if command -v ffmpeg > /dev/null; then
  echo "== ffmpeg's ebur128 filter on the same file (its summary)"
  ffmpeg -nostats -hide_banner -i examples/out/podcast.wav -af ebur128=peak=true -f null - 2>&1 | sed -n '/Summary:/,$p'
fi

#!/usr/bin/env bash
# The ADC story: sampling (resample with and without an anti-alias filter) and
# quantization (4 and 8 bits, with and without dither), with the spectral peaks
# of every step.  Writes into examples/out/ (git-ignored).
#
#   bash examples/adc_story.sh
#
# Needs audiokit on PATH, and a Python (PYTHON, default python3) to pick fields
# out of the JSON reports.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
out="$here/out"
mkdir -p "$out"
PYTHON="${PYTHON:-python3}"

# The five strongest peaks of a WAV file: Blackman-Harris window over the whole
# file (-92 dB sidelobes, so weak tones next to the 1 kHz one stay visible),
# interpolated frequency and amplitude, down to 100 dB below the strongest.
peaks() {
    audiokit spectrum "$1" --peaks 5 --window blackmanharris --threshold 100 | sed 's/^/    /'
}

# One field of a JSON object read on stdin.
field() { "$PYTHON" -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

echo "== 1. A 1 kHz tone plus a 9 kHz tone, sampled at 48 kHz"
audiokit generate "sine:1k:0.5 + sine:9k:0.25" --rate 48k --dur 1s -o "$out/tone48k.wav" >/dev/null
audiokit info "$out/tone48k.wav"
peaks "$out/tone48k.wav"

echo
echo "== 2. Down to 16 kHz (new Nyquist 8 kHz) through the anti-alias filter: 9 kHz is removed"
audiokit resample "$out/tone48k.wav" --to 16k -o "$out/tone16k.wav" >/dev/null
peaks "$out/tone16k.wav"

echo
echo "== 3. Down to 16 kHz with --no-filter (sample picking): 9 kHz folds to 16 - 9 = 7 kHz"
audiokit resample "$out/tone48k.wav" --to 16k --no-filter -o "$out/tone16k-aliased.wav" >/dev/null
peaks "$out/tone16k-aliased.wav"

echo
echo "== 4. A full-scale square band-limited overshoots: a warning, or --normalize"
audiokit generate "square:1k:1.0" --rate 48k --dur 0.1s --subtype PCM_16 -o "$out/square48k.wav" >/dev/null
audiokit resample "$out/square48k.wav" --to 16k -o "$out/square16k.wav" >/dev/null
audiokit resample "$out/square48k.wav" --to 16k --normalize -o "$out/square16k-normalized.wav" >/dev/null
audiokit info "$out/square16k.wav" "$out/square16k-normalized.wav" --jsonl \
    | "$PYTHON" -c "import json, sys; [print(f\"    {r['path']}: peak {r['levels'][0]['peak_dbfs']} dBFS, {r['levels'][0]['clipped']} samples at the end codes\") for r in map(json.loads, sys.stdin)]"

echo
echo "== 5. Quantize the clean 16 kHz tone (SQNR = signal power / error power; theory for a full-scale sine: 6.02 B + 1.76 dB)"
for bits in 8 4; do
    for dither in none tpdf; do
        name="$out/tone16k-${bits}bit-${dither}.wav"
        report="$(audiokit quantize "$out/tone16k.wav" --bits "$bits" --dither "$dither" --json -o "$name")"
        printf '  %s bits, dither %-4s: SQNR %6.2f dB, noise %7.2f dBFS RMS, file %s\n' "$bits" "$dither" \
            "$(field sqnr_db <<<"$report")" "$(field noise_rms_dbfs <<<"$report")" "$(basename "$name")"
        peaks "$name"
    done
done
echo "  Without dither the error repeats with the tone: it shows up as harmonics (3, 5, 7 kHz ... folded)."
echo "  TPDF dither costs 4.77 dB of SQNR but turns the error into a flat, signal-independent noise floor."

echo
echo "== 6. First-order noise shaping at 4 bits: more noise in total, less of it at low frequencies"
audiokit quantize "$out/tone16k.wav" --bits 4 --noise-shape first --json -o "$out/tone16k-4bit-shaped.wav" | field noise_rms_dbfs \
    | sed 's/^/    noise RMS dBFS: /'
peaks "$out/tone16k-4bit-shaped.wav"

echo
echo "Files in $out:"
ls "$out"

"""Accuracy of audiokit's Kaldi fbank and MFCC over a corpus of speech utterances (not a timing benchmark).

Run ``python benchmarks/bench_kaldi_accuracy.py`` (1500 utterances, ~1 s each on a busy 2-core machine;
``--count 300`` for a shorter run).  Needs ``espeak-ng`` on the PATH (``apt-get install -y espeak-ng``; without it
the script says so and exits 3), kaldi-native-fbank and librosa (``pip install ".[test]"``).

The corpus (generated once into ``--corpus``, default ``$TMPDIR/audiokit-kaldi-corpus-s<seed>``, and reused)
-------------------------------------------------------------------------------------------------------------
Utterance ``i`` is drawn with ``numpy.random.default_rng([seed, i])``:

* rate: 16 kHz when ``i`` is even, 22.05 kHz (espeak-ng's own rate) when odd; encoding: 16-bit PCM when
  ``i % 4 < 2``, 32-bit float otherwise (so each rate has both);
* duration: uniform in [2, 15] s;
* speech clips, until the timeline is full: with probability 0.1 per utterance, excerpts of the recorded
  ``examples/data/speech.wav`` (:func:`kaldi_reference.recorded_clip`), else espeak-ng clips of 1-3 Harvard
  sentences (IEEE 1969, :data:`SENTENCES`) with a random language voice (:data:`LANGUAGES`) and variant
  (:data:`VARIANTS`), speed 110-260 words/min, pitch 10-90, espeak-ng's 22.05 kHz output resampled to 16 kHz
  by soxr (VHQ) for even ``i``;
* then :func:`kaldi_reference.mix_utterance` (``tests/helpers/kaldi_reference.py``, shared with the tests): pauses
  between the clips, the speech's peak at -40..-1 dBFS, a background of digital silence, white or low-passed
  noise at -120..-60 dBFS RMS, a DC offset of up to 400 LSB in 30 % of the utterances, int16 rounding for
  the 16-bit ones.  Written as WAV (``utt00000.wav`` with its recipe in ``utt00000.json``); the samples
  measured are what ``audiokit.read`` returns (``int16 / 32768`` or the float32 samples).

espeak-ng's output depends on its version (printed), so another machine's corpus is alike, not identical.

What is measured, per utterance (default options, dither 0, the whole utterance in one call)
--------------------------------------------------------------------------------------------
* **float64 reference**: :func:`kaldi_reference.naive_kaldi` -- Kaldi's per-frame loop written out in float64
  arithmetic with Kaldi's float32 tables (window, mel bank) and ``numpy.fft``; it shares no code with
  audiokit's vectorised computation.
* **kaldi-native-fbank** ``OnlineFbank`` / ``OnlineMfcc`` (float32 arithmetic, as Kaldi's ``BaseFloat``).
* **audiokit** ``kaldi_fbank`` / ``kaldi_mfcc`` in float64 (the library default) and with ``dtype=np.float32`` (what
  ``mel --compat kaldi`` / ``mfcc --compat kaldi`` / ``--compat lhotse`` compute, bit for bit).

fbank: the worst ``|difference|`` over the cells of an utterance, split by level -- cells whose reference
log-mel energy is within 60 dB (13.8 nats) of the utterance's strongest cell ("loud") and the rest ("quiet":
pauses, noise floors, DC-offset silence, digital silence) -- for each pair of the above.  MFCC: the worst
``|difference|`` of c0 (the raw log energy) and of c1..c12 with the lifter divided out, over the frames whose
23 bands are all loud and over the others.  Printed: the median, 99th percentile and maximum over the
utterances of these per-utterance worsts, the level of the worst cell, the same split by input kind (int16 /
float32, with / without a DC offset), and, on the first ``--cli`` utterances, the commands themselves:
``--compat librosa`` against librosa (relative to the largest value) and ``--compat kaldi`` against the library
(absolute).  Frame counts must be equal (counted).

Also per utterance: 80 bands (``mel --compat kaldi --n-mels 80``; audiokit's float64 kernel as the reference, which
equals the naive loop to 1e-8), and the constant ``K`` of the per-cell float32 rounding model ``|a - exact| <= 2 ulp +
K eps sqrt(S/m)`` (:func:`kaldi_reference.rounding_k`) that audiokit's float32 kernel and kaldi-native-fbank need.

Cases (printed first, a few seconds; ``--count 0`` prints only them and needs no espeak-ng): named 16 kHz signals
(:func:`case_signals`: the speech example as it is, at -50 and -90 dBFS, with a 400 LSB DC offset in int16 and in
float32, white noise, two tones with and without int16 rounding, tones in AR noise, digital silence before speech)
under :data:`CASE_CONFIGS` (80 and 23 bands, energy, no snip-edges, the lhotse preset, MFCC with and without energy)
and with ``--dither 1`` (float32 against float64 with the same noise): the worst ``|difference|`` in loud and quiet
cells of float64 and float32 against kaldi-native-fbank and of float32 against float64.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SPEECH = ROOT / "examples" / "data" / "speech.wav"
RATES = (16000, 22050)
ESPEAK_SR = 22050

#: Harvard sentences (IEEE Recommended Practice for Speech Quality Measurements, 1969), lists 1-4.
SENTENCES = (
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.",
    "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.",
    "A large size in stockings is hard to sell.",
    "The boy was there when the sun rose.",
    "A rod is used to catch pink salmon.",
    "The source of the huge river is the clear spring.",
    "Kick the ball straight and follow through.",
    "Help the woman get back to her feet.",
    "A pot of tea helps to pass the evening.",
    "Smoky fires lack flame and heat.",
    "The soft cushion broke the man's fall.",
    "The salt breeze came across from the sea.",
    "The girl at the booth sold fifty bonds.",
    "The small pup gnawed a hole in the sock.",
    "The fish twisted and turned on the bent hook.",
    "Press the pants and sew a button on the vest.",
    "The swan dive was far short of perfect.",
    "The beauty of the view stunned the young boy.",
    "Two blue fish swam in the tank.",
    "Her purse was full of useless trash.",
    "The colt reared and threw the tall rider.",
    "It snowed, rained, and hailed the same morning.",
    "Read verse out loud for pleasure.",
    "Hoist the load to your left shoulder.",
    "Take the winding path to reach the lake.",
    "Note closely the size of the gas tank.",
    "Wipe the grease off his dirty face.",
    "Mend the coat before you go out.",
    "The wrist was badly strained and hung limp.",
    "The stray cat gave birth to kittens.",
    "The young girl gave no clear response.",
    "The meal was cooked before the bell rang.",
    "What joy there is in living.",
)
LANGUAGES = ("en-us", "en-gb", "en-gb-scotland", "en-029", "de", "fr-fr", "es", "it", "nl", "pt", "pl", "sv", "fi", "cs")
VARIANTS = ("", "m1", "m3", "m7", "f1", "f2", "f4", "klatt", "klatt3", "croak", "whisper", "Andy", "Alicia", "grandma")


# ---------------------------------------------------------------------------------------------- corpus
def espeak_clip(rng: np.random.Generator, tmp: Path) -> tuple[np.ndarray, dict]:
    """One espeak-ng clip of 1-3 sentences at 22.05 kHz (float, +/-1) and how it was made."""
    voice = str(rng.choice(LANGUAGES))
    variant = str(rng.choice(VARIANTS))
    if variant:
        voice += "+" + variant
    speed, pitch = int(rng.integers(110, 261)), int(rng.integers(10, 91))
    text = " ".join(str(s) for s in rng.choice(SENTENCES, size=int(rng.integers(1, 4)), replace=False))
    out = tmp / "clip.wav"
    cmd = ["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", str(out), text]
    subprocess.run(cmd, check=True, capture_output=True)
    import soundfile as sf

    y, sr = sf.read(out, dtype="float64")
    assert sr == ESPEAK_SR, sr
    return y, {"espeak": {"voice": voice, "speed": speed, "pitch": pitch, "text": text}}


def make_utterance(i: int, seed: int, tmp: Path) -> tuple[np.ndarray, int, dict]:
    """Utterance ``i`` of the corpus: float32 samples (+/-1), rate, recipe (see the module docstring)."""
    import soundfile as sf
    import soxr
    from kaldi_reference import mix_utterance, recorded_clip

    rng = np.random.default_rng([seed, i])
    sr = RATES[i % 2]
    duration = float(rng.uniform(2.0, 15.0))
    recorded = bool(rng.random() < 0.1)
    if recorded:
        speech, file_sr = sf.read(SPEECH, dtype="float64")
        assert file_sr == 16000, file_sr
    clips, recipe = [], []
    total = 0.0
    while total < duration:
        if recorded:
            y, how = recorded_clip(speech, rng, sr)
        else:
            y, how = espeak_clip(rng, tmp)
            if sr != ESPEAK_SR:
                y = soxr.resample(y, ESPEAK_SR, sr, quality="VHQ")
        recipe.append(how)
        clips.append(y)
        total += y.size / sr + 0.45  # mean pause
    x, mix = mix_utterance(clips, sr, rng, duration=duration, pcm16=i % 4 < 2)
    return x, sr, {"index": i, "sr": sr, "duration": duration, "clips": recipe, **mix}


def corpus(count: int, seed: int, folder: Path):
    """Yield ``(index, samples float32, sr, recipe)`` for utterances 0..count-1, generating missing ones."""
    import soundfile as sf

    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="espeak-", dir=folder))
    try:
        for i in range(count):
            wav, meta = folder / f"utt{i:05d}.wav", folder / f"utt{i:05d}.json"
            if wav.exists() and meta.exists():
                x, sr = sf.read(wav, dtype="float32")
                recipe = json.loads(meta.read_text())
            else:
                x, sr, recipe = make_utterance(i, seed, tmp)
                if recipe["pcm16"]:  # the int16 codes themselves, whatever libsndfile's float scaling
                    sf.write(wav, np.round(x * 32768.0).astype(np.int16), sr, subtype="PCM_16")
                else:
                    sf.write(wav, x, sr, subtype="FLOAT")
                meta.write_text(json.dumps(recipe))
            yield i, x, sr, recipe
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- measures
#: (key, comparison, features, what) of the printed table, in order.
ROWS = (
    ("ak64-knf/fbank", "audiokit - kaldi-native-fbank", "fbank", "log-mel"),
    ("knf-ref/fbank", "kaldi-native-fbank - float64 reference", "fbank", "log-mel"),
    ("ak64-ref/fbank", "audiokit (float64) - float64 reference", "fbank", "log-mel"),
    ("ak64_stored-ref/fbank", "audiokit (float64) rounded to float32 - reference", "fbank", "log-mel"),
    ("ak32-ref/fbank", "audiokit dtype=float32 - float64 reference", "fbank", "log-mel"),
    ("ak32-knf/fbank", "audiokit dtype=float32 - kaldi-native-fbank", "fbank", "log-mel"),
    ("ak64-knf/fbank80", "audiokit - kaldi-native-fbank", "fbank 80", "log-mel"),
    ("ak32-knf/fbank80", "audiokit dtype=float32 - kaldi-native-fbank", "fbank 80", "log-mel"),
    ("ak32-ak64/fbank80", "audiokit dtype=float32 - audiokit (float64)", "fbank 80", "log-mel"),
    ("ak64-knf/mfcc/c0", "audiokit - kaldi-native-fbank", "MFCC", "c0 (log energy)"),
    ("ak64-knf/mfcc/ceps", "audiokit - kaldi-native-fbank", "MFCC", "c1..c12 / lifter"),
    ("knf-ref/mfcc/c0", "kaldi-native-fbank - float64 reference", "MFCC", "c0 (log energy)"),
    ("knf-ref/mfcc/ceps", "kaldi-native-fbank - float64 reference", "MFCC", "c1..c12 / lifter"),
    ("ak64-ref/mfcc/c0", "audiokit (float64) - float64 reference", "MFCC", "c0 (log energy)"),
    ("ak64-ref/mfcc/ceps", "audiokit (float64) - float64 reference", "MFCC", "c1..c12 / lifter"),
    ("ak32-ref/mfcc/c0", "audiokit dtype=float32 - float64 reference", "MFCC", "c0 (log energy)"),
    ("ak32-ref/mfcc/ceps", "audiokit dtype=float32 - float64 reference", "MFCC", "c1..c12 / lifter"),
    ("ak32-knf/mfcc/c0", "audiokit dtype=float32 - kaldi-native-fbank", "MFCC", "c0 (log energy)"),
    ("ak32-knf/mfcc/ceps", "audiokit dtype=float32 - kaldi-native-fbank", "MFCC", "c1..c12 / lifter"),
)


def measure(x: np.ndarray, sr: int) -> dict[str, float]:
    """Per-utterance worst differences (see the module docstring), keyed ``<pair>/<features>[/<coefficients>]/<loud|quiet>``."""
    from kaldi_reference import knf_features, mfcc_split, naive_kaldi, rounding_k, worst_split

    from audiokit.dsp.kaldi import FbankOptions, MfccOptions, kaldi_fbank, kaldi_mfcc

    out: dict[str, float] = {}
    ref = naive_kaldi(x, FbankOptions(samp_freq=sr))
    got = {"knf": knf_features(x, sr, False), "ak64": kaldi_fbank(x, sr=sr), "ak32": kaldi_fbank(x, sr=sr, dtype=np.float32)}
    got["ak64_stored"] = got["ak64"].astype(np.float32)
    mref = naive_kaldi(x, MfccOptions(samp_freq=sr))
    mgot = {"knf": knf_features(x, sr, True), "ak64": kaldi_mfcc(x, sr=sr), "ak32": kaldi_mfcc(x, sr=sr, dtype=np.float32)}
    out["frame counts differ"] = float(
        any(a.shape != ref.shape for a in got.values()) or any(a.shape != mref.shape for a in mgot.values())
    )
    if out["frame counts differ"]:
        return out
    for name, a in got.items():
        out.update({f"{name}-ref/fbank/{k}": v for k, v in worst_split(a, ref, ref).items()})
    for name in ("ak64", "ak32"):
        out.update({f"{name}-knf/fbank/{k}": v for k, v in worst_split(got[name], got["knf"], ref).items()})
    for name, a in mgot.items():
        out.update({f"{name}-ref/mfcc{k}": v for k, v in mfcc_split(a, mref, ref).items()})
    for name in ("ak64", "ak32"):
        out.update({f"{name}-knf/mfcc{k}": v for k, v in mfcc_split(mgot[name], mgot["knf"], ref).items()})
    # 80 bands (mel --compat kaldi --n-mels 80): audiokit's float64 kernel is the reference (it equals the naive
    # float64 loop to 1e-8, tests/dsp/test_kaldi.py), the cells split by its values
    f64, f32 = kaldi_fbank(x, sr=sr, num_mel_bins=80), kaldi_fbank(x, sr=sr, num_mel_bins=80, dtype=np.float32)
    knf80 = knf_features(x, sr, False, num_mel_bins=80)
    for name, (a, b) in {"ak64-knf": (f64, knf80), "ak32-knf": (f32, knf80), "ak32-ak64": (f32, f64)}.items():
        out.update({f"{name}/fbank80/{k}": v for k, v in worst_split(a, b, f64).items()})
    # the per-cell float32 rounding model |a - exact| <= 2 ulp + K eps sqrt(S / m): the K each needs
    out["K/fbank/ak32"], out["K/fbank/knf"] = rounding_k(got["ak32"], ref, ref), rounding_k(got["knf"], ref, ref)
    out["K/fbank80/ak32"], out["K/fbank80/knf"] = rounding_k(f32, f64, f64), rounding_k(knf80, f64, f64)
    # where the worst audiokit - kaldi-native-fbank cell lies: nats below the utterance's strongest cell
    d = np.abs(got["ak64"] - got["knf"])
    f, b = np.unravel_index(int(np.argmax(d)), d.shape)
    out["worst cell: nats below the utterance's strongest cell"] = float(ref.max() - ref[f, b])
    out["worst cell: reference value (nats)"] = float(ref[f, b])
    return out


# ---------------------------------------------------------------------------------------------- cases
def _int16(x: np.ndarray) -> np.ndarray:
    """``x`` (full scale +/-1) rounded to int16 codes, as ``audiokit.read`` returns them (``code / 32768``)."""
    return (np.clip(np.round(np.asarray(x, np.float64) * 32768.0), -32768, 32767) / 32768.0).astype(np.float32)


def case_signals(sr: int = 16000) -> dict[str, np.ndarray]:
    """The named test signals of :func:`case_table` (float32, +/-1 full scale, at ``sr`` = 16 kHz)."""
    import soundfile as sf
    from common import test_signal

    speech, file_sr = sf.read(SPEECH, dtype="float64")
    assert file_sr == sr, file_sr
    rng = np.random.default_rng(19)
    t = np.arange(4 * sr) / sr
    tones = 0.25 * np.sin(2 * np.pi * 440.0 * t) + 0.125 * np.sin(2 * np.pi * 3000.0 * t)
    peak = float(np.abs(speech).max())
    return {
        "speech.wav (int16)": speech.astype(np.float32),
        "speech, peak -50 dBFS (int16: ~100 LSB)": _int16(speech * 10 ** (-50 / 20) / peak),
        "speech, peak -90 dBFS (float32: ~1 LSB)": (speech * 10 ** (-90 / 20) / peak).astype(np.float32),
        "speech + 400 LSB DC (int16)": _int16(speech + 400 / 32768),
        "speech + 400.37 LSB DC + -120 dBFS noise (float32)": (
            speech + (400.37 + 0.033 * rng.standard_normal(speech.size)) / 32768
        ).astype(np.float32),
        "white noise -20 dBFS RMS (int16)": _int16(0.1 * rng.standard_normal(4 * sr)),
        "tones 440 + 3000 Hz (int16)": _int16(tones),
        "tones 440 + 3000 Hz (float32, no noise floor)": tones.astype(np.float32),
        "tones + AR noise, 10 s (int16; bench_features' signal)": _int16(test_signal(10.0, sr)),
        "0.5 s digital silence + speech (int16)": np.concatenate([np.zeros(sr // 2, np.float32), speech.astype(np.float32)]),
    }


#: (name, fbank?, kernel options, kaldi-native-fbank options, sample scale) of :func:`case_table`.
CASE_CONFIGS = (
    ("fbank 80 (mel --compat kaldi --n-mels 80)", False, {"num_mel_bins": 80}, 32768.0),
    ("fbank 80 + energy (--energy)", False, {"num_mel_bins": 80, "use_energy": True}, 32768.0),
    ("fbank 80 --no-snip-edges", False, {"num_mel_bins": 80, "snip_edges": False}, 32768.0),
    ("fbank 23 (Kaldi's defaults)", False, {}, 32768.0),
    (
        "fbank --compat lhotse (scale 1, 80, no snip, fmax -400, floor 1e-10)",
        False,
        {"num_mel_bins": 80, "snip_edges": False, "high_freq": -400.0, "energy_floor": 1e-10},
        1.0,
    ),
    ("MFCC (mfcc --compat kaldi: 13, energy)", True, {}, 32768.0),
    ("MFCC --no-energy (c0)", True, {"use_energy": False}, 32768.0),
)


def case_measure(x: np.ndarray, sr: int, mfcc: bool, kw: dict, scale: float) -> dict[str, float]:
    """Worst differences of one case, keyed ``<pair>/<loud|quiet>`` (fbank) or ``<pair>/<c0|ceps>/<loud|quiet>`` (MFCC);
    pairs ``f64-knf``, ``f32-knf``, ``f32-f64``; loud/quiet split by the float64 fbank (23 bands for MFCC frames)."""
    from kaldi_reference import knf_features, mfcc_split, worst_split

    from audiokit.dsp.kaldi import kaldi_fbank, kaldi_mfcc

    func = kaldi_mfcc if mfcc else kaldi_fbank
    f64 = func(x, sr=sr, sample_scale=scale, **kw)
    f32 = func(x, sr=sr, sample_scale=scale, dtype=np.float32, **kw)
    theirs = knf_features(x, sr, mfcc, scale=scale, **kw)
    assert f64.shape == f32.shape == theirs.shape, (f64.shape, theirs.shape)
    out: dict[str, float] = {}
    if mfcc:
        split = kaldi_fbank(x, sr=sr, sample_scale=scale, snip_edges=kw.get("snip_edges", True))
        for name, (a, b) in {"f64-knf": (f64, theirs), "f32-knf": (f32, theirs), "f32-f64": (f32, f64)}.items():
            out.update({f"{name}{k}": v for k, v in mfcc_split(a, b, split).items()})
    else:
        for name, (a, b) in {"f64-knf": (f64, theirs), "f32-knf": (f32, theirs), "f32-f64": (f32, f64)}.items():
            out.update({f"{name}/{k}": v for k, v in worst_split(a, b, f64).items()})
    return out


def dither_measure(x: np.ndarray, sr: int, mfcc: bool, kw: dict) -> dict[str, float]:
    """``--dither 1`` (Kaldi's default): the float32 kernel against the float64 one with the same seeded noise (the
    noise is drawn in float64 and added to the frames; kaldi-native-fbank draws other noise, so it is not compared)."""
    from kaldi_reference import mfcc_split, worst_split

    from audiokit.dsp.kaldi import kaldi_fbank, kaldi_mfcc

    func = kaldi_mfcc if mfcc else kaldi_fbank
    f64 = func(x, sr=sr, dither=1.0, seed=7, **kw)
    f32 = func(x, sr=sr, dither=1.0, seed=7, dtype=np.float32, **kw)
    if mfcc:
        split = kaldi_fbank(x, sr=sr, dither=1.0, seed=7, snip_edges=kw.get("snip_edges", True))
        return {f"f32-f64{k}": v for k, v in mfcc_split(f32, f64, split).items()}
    return {f"f32-f64/{k}": v for k, v in worst_split(f32, f64, f64).items()}


def _fmt(v: float) -> str:
    return "" if math.isnan(v) else f"{v:.1e}"


def case_table(sr: int = 16000) -> None:
    """Print the float32 and float64 kernels against kaldi-native-fbank (and each other) on :func:`case_signals`."""
    from common import print_table

    signals = case_signals(sr)
    rows = []
    worst: dict[tuple[str, str], float] = {}
    for cname, mfcc, kw, scale in CASE_CONFIGS:
        for sname, x in signals.items():
            m = case_measure(x, sr, mfcc, kw, scale)
            for coef in ("/c0", "/ceps") if mfcc else ("",):
                cells = [m[f"{pair}{coef}/{part}"] for part in ("loud", "quiet") for pair in ("f64-knf", "f32-knf", "f32-f64")]
                label = {"": "log-mel", "/c0": "c0", "/ceps": "c1.. / lifter"}[coef]
                rows.append([cname, label, sname, *map(_fmt, cells)])
                for part, i in (("loud", 0), ("quiet", 3)):
                    key = (f"{cname} | {label}", part)
                    worst[key] = max((v for v in (worst.get(key, math.nan), cells[i + 1]) if not math.isnan(v)), default=math.nan)
    for dname, mfcc, kw in (("fbank 80, --dither 1", False, {"num_mel_bins": 80}), ("MFCC, --dither 1", True, {})):
        for sname, x in signals.items():
            m = dither_measure(x, sr, mfcc, kw)
            for coef in ("/c0", "/ceps") if mfcc else ("",):
                label = {"": "log-mel", "/c0": "c0", "/ceps": "c1.. / lifter"}[coef]
                rows.append(
                    [dname, label, sname, "", "", _fmt(m[f"f32-f64{coef}/loud"]), "", "", _fmt(m[f"f32-f64{coef}/quiet"])]
                )
    print(
        "\n# cases (16 kHz, dither 0 unless said): worst |difference| over the loud cells (within 60 dB of the signal's"
        " strongest log-mel cell; MFCC: frames whose 23 bands all are) and over the others; f64/f32 = audiokit's kernel"
        " with dtype float64/float32, knf = kaldi-native-fbank"
    )
    headers = ["options", "values", "signal", "loud f64-knf", "loud f32-knf", "loud f32-f64"]
    print_table(headers + ["quiet f64-knf", "quiet f32-knf", "quiet f32-f64"], rows)
    print("\n# worst over the signals of |float32 kernel - kaldi-native-fbank|")
    print_table(["options | values", "cells", "max"], [[k, part, _fmt(v)] for (k, part), v in worst.items()])


INPUT_KINDS = ("int16, no DC offset", "int16, DC offset", "float32, no DC offset", "float32, DC offset")


def input_kind(recipe: dict) -> str:
    """One of :data:`INPUT_KINDS`."""
    return f"{'int16' if recipe['pcm16'] else 'float32'}, {'DC offset' if recipe['dc_lsb'] else 'no DC offset'}"


def cli_checks(wav: Path, sr: int, tmp: Path) -> dict[str, float]:
    """The commands, run in-process on the utterance's file.  librosa: ``max |a - ref| / max |ref|`` of ``mel --compat
    librosa --scale power`` and ``mfcc --compat librosa --deltas 2 --delta-method librosa`` (M, delta, delta-delta apart)
    against librosa's calls.  Kaldi: ``max |a - ref|`` of ``mel --compat kaldi`` / ``mfcc --compat kaldi`` (``.T``)
    against ``kaldi_fbank`` / ``kaldi_mfcc`` with the front end's dtype (float32: 0, the same bits)."""
    import contextlib
    import io

    import librosa
    import soundfile as sf

    from audiokit.cli.app import main as cli
    from audiokit.dsp.kaldi import kaldi_fbank, kaldi_mfcc
    from audiokit.pipelines.kaldi_frontend import KERNEL_DTYPE

    y, _ = sf.read(wav, dtype="float32")
    out = {}

    def run(*args: str) -> np.ndarray:
        npy = tmp / "out.npy"
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli([*args[:1], str(wav), "--npy", str(npy), "--quiet", *args[1:]]) == 0
        return np.load(npy).astype(np.float64)

    def rel(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.max(np.abs(a - b)) / np.max(np.abs(b))) if a.shape == b.shape else math.inf

    def absolute(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.max(np.abs(a - b))) if a.shape == b.shape else math.inf

    out["librosa: mel --compat librosa --scale power (relative)"] = rel(
        run("mel", "--compat", "librosa", "--scale", "power"), librosa.feature.melspectrogram(y=y, sr=sr)
    )
    ours = run("mfcc", "--compat", "librosa", "--deltas", "2", "--delta-method", "librosa")
    M = librosa.feature.mfcc(y=y, sr=sr)
    for k, (name, ref) in enumerate(
        (("M", M), ("delta", librosa.feature.delta(M)), ("delta2", librosa.feature.delta(M, order=2)))
    ):
        out[f"librosa: mfcc --compat librosa --deltas 2, {name} (relative)"] = rel(ours[20 * k : 20 * (k + 1)], ref)
    kw = {"sr": sr, "dtype": KERNEL_DTYPE}
    out["kaldi: mel --compat kaldi - kaldi_fbank (absolute)"] = absolute(run("mel", "--compat", "kaldi").T, kaldi_fbank(y, **kw))
    out["kaldi: mfcc --compat kaldi - kaldi_mfcc (absolute)"] = absolute(run("mfcc", "--compat", "kaldi").T, kaldi_mfcc(y, **kw))
    return out


def summary(values: list[float]) -> list[str]:
    """median, p99, max of the finite values, and their count."""
    v = np.asarray([x for x in values if not math.isnan(x)])
    if v.size == 0:
        return ["", "", "", "0"]
    return [f"{np.median(v):.1e}", f"{np.quantile(v, 0.99):.1e}", f"{v.max():.1e}", str(v.size)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=1500, help="utterances (default 1500)")
    ap.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    ap.add_argument("--corpus", type=Path, default=None, help="corpus folder (default $TMPDIR/audiokit-kaldi-corpus-s<seed>)")
    ap.add_argument(
        "--cli", type=int, default=100, help="also the commands (librosa and kaldi presets) on the first N utterances"
    )
    ap.add_argument("--no-cases", action="store_true", help="skip the table of named signals and options (case_table)")
    args = ap.parse_args(argv)
    if args.count > 0 and shutil.which("espeak-ng") is None:
        print("error: espeak-ng is not installed (apt-get install -y espeak-ng): it synthesises the corpus", file=sys.stderr)
        return 3
    try:
        import kaldi_native_fbank  # noqa: F401
    except ImportError:
        print('error: kaldi-native-fbank is not installed (pip install ".[test]"): it is the compared tool', file=sys.stderr)
        return 3
    from common import machine_line, print_table, versions

    folder = args.corpus or Path(tempfile.gettempdir()) / f"audiokit-kaldi-corpus-s{args.seed}"
    print("# " + machine_line())
    ver = versions("numpy", "scipy", "soxr", "librosa", "kaldi_native_fbank", "audiokit")
    if args.count <= 0:
        print("# " + ", ".join(f"{k} {v}" for k, v in ver.items()))
        if not args.no_cases:
            case_table()
        return 0
    espeak = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout.split("Data at")[0].strip()
    print("# " + ", ".join(f"{k} {v}" for k, v in ver.items()) + f"; {espeak}")
    if not args.no_cases:
        case_table()
    print(f"# corpus: {args.count} utterances, seed {args.seed}, in {folder}")
    results: list[tuple[str, dict[str, float]]] = []  # (input kind, measures) per utterance
    rel: dict[str, list[float]] = {}
    seconds = {(sr, pcm): 0.0 for sr in RATES for pcm in (True, False)}
    folder.mkdir(parents=True, exist_ok=True)
    lib_tmp = Path(tempfile.mkdtemp(prefix="cli-", dir=folder))
    try:
        for i, x, sr, recipe in corpus(args.count, args.seed, folder):
            seconds[sr, recipe["pcm16"]] += x.size / sr
            results.append((input_kind(recipe), measure(x, sr)))
            if i < args.cli:
                for key, value in cli_checks(folder / f"utt{i:05d}.wav", sr, lib_tmp).items():
                    rel.setdefault(key, []).append(value)
            if (i + 1) % 50 == 0:
                print(f"# {i + 1} / {args.count}", file=sys.stderr)
    finally:
        shutil.rmtree(lib_tmp, ignore_errors=True)
    print(
        "# audio: "
        + ", ".join(f"{s / 60:.1f} min at {sr / 1000:g} kHz {'int16' if pcm else 'float32'}" for (sr, pcm), s in seconds.items())
    )

    def column(key: str, kind: str | None = None) -> list[float]:
        return [m.get(key, math.nan) for k, m in results if kind is None or k == kind]

    print(f"# utterances whose frame counts differ (any contender): {int(np.nansum(column('frame counts differ')))}")
    print(
        "# per utterance: the worst |difference| over its loud cells (within 60 dB of its strongest log-mel cell) and over"
        " the others; MFCC frames are loud when all their 23 bands are.  Columns: median / p99 / max over the utterances"
        " (n: utterances with such cells or frames)."
    )
    headers = ["difference", "features", "values", "cells", "median", "p99", "max", "n"]
    rows = []
    for key, what, feats, coef in ROWS:
        for part in ("loud", "quiet"):
            rows.append([what, feats, coef, part, *summary(column(f"{key}/{part}"))])
    print_table(headers, rows)
    print()
    for key in ("worst cell: nats below the utterance's strongest cell", "worst cell: reference value (nats)"):
        v = np.asarray(column(key))
        print(f"# {key}: median {np.nanmedian(v):.1f}, min {np.nanmin(v):.1f}, max {np.nanmax(v):.1f}")
    print(
        "\n# the float32 rounding model |a - exact| <= 2 ulp + K eps sqrt(S/m) (m: the cell's band energy, S: its frame's"
        " sum over the bands; exact: the float64 reference, fbank 80: audiokit's float64): the K each needs per utterance"
    )
    rows = [
        [what, bands, *summary(column(f"K/{key}"))]
        for key, what, bands in (
            ("fbank/ak32", "audiokit dtype=float32", "23"),
            ("fbank/knf", "kaldi-native-fbank", "23"),
            ("fbank80/ak32", "audiokit dtype=float32", "80"),
            ("fbank80/knf", "kaldi-native-fbank", "80"),
        )
    ]
    print_table(["computation", "bands", "median", "p99", "max", "n"], rows)
    print(
        "\n# by input: kaldi-native-fbank - float64 reference (= audiokit float64 - kaldi-native-fbank, to 1e-9), audiokit"
        " dtype=float32 - float64 reference, audiokit dtype=float32 - kaldi-native-fbank"
    )
    rows = []
    for kind in INPUT_KINDS:
        for key, coef in (
            ("fbank", "log-mel"),
            ("mfcc/c0", "MFCC c0"),
            ("mfcc/ceps", "MFCC c1.. / lifter"),
        ):
            for part in ("loud", "quiet"):
                for pair in ("knf-ref", "ak32-ref", "ak32-knf"):
                    rows.append([kind, coef, part, pair, *summary(column(f"{pair}/{key}/{part}", kind))])
    print_table(["input", "values", "cells", "difference", "median", "p99", "max", "n"], rows)
    if rel:
        print(f"\n# the commands on the first {min(args.cli, args.count)} utterances: worst per utterance")
        print_table(["check", "median", "p99", "max", "n"], [[k, *summary(v)] for k, v in rel.items()])
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``audiokit mel|mfcc --compat lhotse`` against Lhotse's ``Fbank()``/``Mfcc()`` (stored arrays: Lhotse needs torch).

Reference: ``tests/data/lhotse/{fbank,mfcc}_<name>.npy`` = ``Fbank(FbankConfig(sampling_rate=sr)).extract(x, sr)`` /
``Mfcc(MfccConfig(sampling_rate=sr)).extract(x, sr)`` (Lhotse 1.33, torch 2.13 CPU), ``(n_frames, n_feats)``, made
by ``benchmarks/interop_lhotse.py`` (its docstring and ``tests/data/README.md`` say how).  Ours is ``(rows, frames)``:
compared transposed.

Tolerance, per cell, from what Lhotse computes in float32 (audiokit computes in float64 and rounds the output once).
Lhotse's spectrum is a float32 ``rfft`` of the windowed frame, whose error in each bin's amplitude is a few ``eps =
2**-23`` of the whole frame's, not of the bin's: a band of power ``m`` in a frame of total power ``S`` has a relative
error ~ ``eps * sqrt(S / m)`` in amplitude, twice that in power, and so its log is off by ``K * eps * sqrt(S / m)``;
plus the float32 rounding of both outputs (``2 ulp`` of the value).  ``K = 64``; measured at most 38 on these four
inputs (a weak band beside a strong tone differs by up to 2.8e-4; the median cell by 2e-6 = 16 eps, asserted to
stay below 32 eps).  ``S`` and ``m`` come from the reference (``S`` = the row's sum of ``exp``).  The bound has
teeth: ``--preemphasis 0.9699`` or ``--fmax -399.9`` put thousands of cells outside it.  MFCC: that bound carried
through the DCT and lifter (``|dc_i| <= L_i sqrt(2/N) sum_j |dx_j|``), with the log-mel values of ``mel --n-mels 23``,
plus ``4 eps |x_j|`` per term for Lhotse's float32 DCT table and sums.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.paths import SPEECH

DATA = Path(__file__).resolve().parents[1] / "data" / "lhotse"
EPS = 2.0**-23
K = 64
SPEECH_SAMPLES = 48100  # as benchmarks/interop_lhotse.py crops it
NAMES = ["speech", "noise16k", "noise22k", "noise8k"]


def _input(name: str, tmp_path: Path) -> Path:
    if name != "speech":
        return DATA / f"{name}.wav"
    codes, sr = sf.read(SPEECH, dtype="int16")
    path = tmp_path / "speech.wav"
    sf.write(path, codes[:SPEECH_SAMPLES], sr, subtype="PCM_16")
    return path


def _ours(cli, command: str, path: Path, tmp_path: Path, *args: str) -> tuple[np.ndarray, dict]:
    npy = tmp_path / f"{command}.npy"
    code, _, err = cli(command, path, "--compat", "lhotse", "--npy", npy, *args)
    assert (code, err) == (0, ""), err
    return np.load(npy).T.astype(np.float64), json.loads(npy.with_suffix(".json").read_text())


def _log_mel_bound(log_mel: np.ndarray) -> np.ndarray:
    """Per-cell bound on ``|ours - Lhotse|`` of ``(n_frames, n_bands)`` log band energies (module docstring)."""
    m = np.exp(log_mel)
    ulp = np.spacing(np.abs(log_mel).astype(np.float32)).astype(np.float64)
    return 2 * ulp + K * EPS * np.sqrt(m.sum(axis=1, keepdims=True) / m)


@pytest.mark.parametrize("name", NAMES)
def test_fbank_equals_lhotse(cli, tmp_path, name):
    path = _input(name, tmp_path)
    theirs = np.load(DATA / f"fbank_{name}.npy")
    ours, meta = _ours(cli, "mel", path, tmp_path)
    n, sr = sf.info(path).frames, sf.info(path).samplerate
    hop = math.floor(0.01 * sr)
    assert ours.shape == theirs.shape == ((n + hop // 2) // hop, 80)  # Lhotse's compute_num_frames
    theirs = theirs.astype(np.float64)
    excess = np.abs(ours - theirs) - _log_mel_bound(theirs)
    assert excess.max() <= 0, f"worst cell {np.unravel_index(excess.argmax(), excess.shape)}"
    assert np.median(np.abs(ours - theirs)) <= 32 * EPS
    assert theirs.max() - theirs.min() > 5  # the inputs span a real range (tones, noise, floored cells)
    assert meta["compat"] == "lhotse" and meta["kaldi"]["sample_scale"] == 1.0 and not meta["kaldi"]["snip_edges"]


@pytest.mark.parametrize("name", NAMES)
def test_mfcc_equals_lhotse(cli, tmp_path, name):
    path = _input(name, tmp_path)
    theirs = np.load(DATA / f"mfcc_{name}.npy").astype(np.float64)
    ours, _ = _ours(cli, "mfcc", path, tmp_path)
    log_mel, _ = _ours(cli, "mel", path, tmp_path, "--n-mels", "23")
    assert ours.shape == theirs.shape == (log_mel.shape[0], 13)
    n_mels, i = 23, np.arange(13)
    lifter = 1 + 11 * np.sin(np.pi * i / 22)  # Lhotse's (and Kaldi's) lifter, Q = 22
    # the log-mel bound through the DCT, plus the DCT's own float32 table and sums (eps of sum |x_j|)
    spread = _log_mel_bound(log_mel) + 4 * EPS * np.abs(log_mel)
    bound = np.sqrt(2 / n_mels) * spread.sum(axis=1, keepdims=True) * lifter
    bound += 2 * np.spacing(np.abs(theirs).astype(np.float32)).astype(np.float64)
    excess = np.abs(ours - theirs) - bound
    assert excess.max() <= 0, f"worst cell {np.unravel_index(excess.argmax(), excess.shape)}"


@pytest.mark.parametrize("sr", [8000, 22050])
@pytest.mark.parametrize("n", [1, 79, 80, 81, 159, 160, 199, 200, 399, 400, 401, 16000 + 79, 16000 + 80])
def test_frame_count_is_lhotses_rule(cli, tmp_path, sr, n):
    """``int((n + hop//2) // hop)`` (``lhotse.utils.compute_num_frames``), also for inputs shorter than a window."""
    path = tmp_path / "x.wav"
    sf.write(path, np.random.default_rng(n).uniform(-0.5, 0.5, n), sr, subtype="PCM_16")
    hop = round(0.01 * sr)  # lhotse.qa: round(frame_shift * sampling_rate)
    if (n + hop // 2) // hop == 0:  # Lhotse gives an empty array; audiokit refuses to write one
        code, _, err = cli("mel", path, "--compat", "lhotse", "--npy", tmp_path / "o.npy")
        assert code == 2 and "shorter than one frame" in err, err
        return
    ours, meta = _ours(cli, "mel", path, tmp_path)
    assert ours.shape == ((n + hop // 2) // hop, 80)
    assert meta["hop_length"] == hop


@pytest.mark.parametrize("sr", [8000, 11025, 16000, 22050, 24000, 32000, 48000, 96000])
def test_frame_sizes_are_lhotses(sr):
    """Lhotse frames ``floor(0.025*sr)`` / ``floor(0.01*sr)`` samples (float64); the preset's 25ms/10ms give Kaldi's
    float32 truncation: the same counts at these rates."""
    from audiokit.pipelines.compat import resolve
    from audiokit.pipelines.kaldi_frontend import kaldi_options
    from audiokit.pipelines.timefreq_options import FeatureOptions, KaldiFrontend, MelOptions, StftOptions, TimeFreqOptions

    p = resolve("mel", {"compat": "lhotse", "win": None, "hop": None, "n_mels": None, "fmax": None, "snip_edges": None})
    o = FeatureOptions(
        kind="mel",
        compat="lhotse",
        timefreq=TimeFreqOptions(stft=StftOptions(win=p["win"], hop=p["hop"]), mel=MelOptions(n_mels=80), fmax=p["fmax"]),
        kaldi=KaldiFrontend(snip_edges=False),
    )
    k = kaldi_options(o, sr)
    assert (k.window_size, k.window_shift) == (math.floor(0.025 * sr), math.floor(0.01 * sr))
    assert k.high_freq == -400.0 and k.low_freq == 20.0 and k.num_mel_bins == 80


def test_lhotse_framing_kaldi_cannot_give_is_refused(cli, tmp_path):
    """At 44.1 kHz (window 1102, hop 441) Lhotse's frames start one sample after Kaldi's: refused, not approximated."""
    path = tmp_path / "a44.wav"
    sf.write(path, np.zeros(4410), 44100, subtype="PCM_16")
    code, out, err = cli("mel", path, "--compat", "lhotse", "--npy", tmp_path / "o.npy")
    assert (code, out) == (2, "") and err.startswith(f"error: {path}: --compat lhotse:") and err.count("\n") == 1, err
    assert not (tmp_path / "o.npy").exists()
    code, _, err = cli("mel", path, "--compat", "lhotse", "--win", "1103", "--npy", tmp_path / "o.npy")
    assert code == 0, err

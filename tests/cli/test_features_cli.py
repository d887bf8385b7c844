"""``audiokit mfcc``, ``--compat kaldi|torchaudio|librosa`` on mel/spectrogram/mfcc, ``--deltas``, ``--cmvn``.

References (the real libraries, in the test extra):

* Kaldi: ``kaldi-native-fbank`` (``OnlineFbank``/``OnlineMfcc``, Kaldi's C++ feature code in float32, dither 0).
  Both sides compute in float32 (the front end's kernel, ``docs/conventions.md`` "Kaldi precision"), each within
  float32 rounding of the exact value, so in cells far below a frame's strongest band the two roundings add up.
  fbank: |diff| <= 2e-4 in the loud cells (within 60 dB of the strongest, the README's bound) and <= 2e-3 in all
  (measured: 1.3e-3 on the speech example at 16 kHz, 23 and 30 bands, in a band 91 dB below the strongest cell:
  kaldi-native-fbank's own 6.5e-4 plus ours; <= 6.8e-4 elsewhere), 80 bands <= 1e-2 in all (5.5e-3; the float64
  kernel 5.3e-3); MFCC as ``tests/dsp/test_kaldi.py`` compares them: c0/energy directly, the other cepstra after
  dividing out the lifter (<= 1e-3); identical frame counts.  The CLI's ``.npy`` is (rows, frames): compared as
  ``.T``.
* librosa: ``feature.melspectrogram`` (+ ``power_to_db``), ``feature.mfcc``, ``feature.delta``, ``stft``:
  <= 1e-5 relative for linear values and cepstra (relative to the largest |value|), <= 1e-3 dB for dB values.
* torchaudio is not installed (nor in the test extra): its preset is checked against arrays torchaudio 2.9.1
  computed once (``tests/data/torchaudio/*.npy``, made by ``make_reference.py`` there in a separate venv:
  linear <= 1e-5 relative, dB <= 1e-3 dB within 60 dB of the peak) and against the closed-form definitions of its
  documented defaults (``Spectrogram``/``MelSpectrogram``/``MFCC``/``AmplitudeToDB``) written out with numpy.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import audiokit
from tests.helpers.cli import write
from tests.helpers.kaldi_reference import knf_features, needs_knf, worst_split

librosa = pytest.importorskip("librosa")

SPEECH = Path(__file__).resolve().parents[2] / "examples" / "data" / "speech.wav"
TORCH_REF = Path(__file__).resolve().parents[1] / "data" / "torchaudio"


def speech(sr: int = 16000) -> np.ndarray:
    x, file_sr = sf.read(SPEECH, dtype="float32")
    if sr != file_sr:
        from audiokit.dsp.resample import resample

        x = resample(x[None, :], sr_in=file_sr, sr_out=sr)[0].astype(np.float32)
    return x


def synth(sr: int) -> np.ndarray:
    """Silence, a chirp on a DC offset, DC alone, the chirp again; a -50 dBFS noise floor under the non-silent parts."""
    rng = np.random.default_rng(1)
    t = np.arange(int(sr * 1.0)) / sr
    ch = 0.1 * np.sin(2 * np.pi * (50 * t + (0.45 * sr - 50) / 2.0 * t * t))
    parts = [
        np.zeros(sr // 4),
        ch + 0.2 + rng.standard_normal(t.size) * 3e-3,
        0.25 + rng.standard_normal(sr // 4) * 3e-3,
        ch[: sr // 3] - 0.1 + rng.standard_normal(sr // 3) * 3e-3,
        np.zeros(sr // 7),
    ]
    return np.concatenate(parts).astype(np.float32)


def signal(name: str, sr: int) -> np.ndarray:
    return speech(sr) if name == "speech" else synth(sr)


def run_npy(cli, x: np.ndarray, sr: int, tmp_path: Path, command: str, *args: str, name: str = "out") -> tuple[np.ndarray, dict]:
    wav = write(tmp_path / f"{name}.wav", x, sr)
    npy = tmp_path / f"{name}.{command}.npy"
    code, out, err = cli(command, wav, "--npy", npy, *args)
    assert code == 0, err
    assert out.split() == [str(npy), str(npy.with_suffix(".json"))]
    return np.load(npy), json.loads(npy.with_suffix(".json").read_text())


def kaldi_lifter(n: int, q: float) -> np.ndarray:
    i = np.arange(n)
    return 1.0 + 0.5 * q * np.sin(np.pi * i / q) if q else np.ones(n)


# --------------------------------------------------------------------------------------------
# Kaldi
# --------------------------------------------------------------------------------------------
#: fbank against kaldi-native-fbank (module docstring): loud cells, all cells, all cells with 80 bands.
KNF_LOUD, KNF_ALL, KNF_ALL_80 = 2e-4, 2e-3, 1e-2


def assert_fbank_close(ours: np.ndarray, ref: np.ndarray) -> None:
    """``ours`` (frames x bins) within the module's bounds of kaldi-native-fbank's ``ref``."""
    assert ours.shape == ref.shape
    assert worst_split(ours, ref, ref)["loud"] <= KNF_LOUD
    assert np.max(np.abs(ours - ref)) <= (KNF_ALL_80 if ref.shape[1] > 40 else KNF_ALL)


KALDI_CASES = [
    pytest.param([], {}, id="defaults"),
    pytest.param(["--no-snip-edges"], {"snip_edges": False}, id="no-snip-edges"),
    pytest.param(["--window", "hamming"], {"window_type": "hamming"}, id="hamming"),
    pytest.param(
        ["--window", "povey", "--fmin", "64", "--fmax", "-400", "--n-mels", "30"],
        {"low_freq": 64.0, "high_freq": -400.0, "num_mel_bins": 30},
        id="povey-band-30",
    ),
    pytest.param(["--n-mels", "80"], {"num_mel_bins": 80}, id="80-bands"),
    pytest.param(
        ["--preemphasis", "0.5", "--no-remove-dc"], {"preemph_coeff": 0.5, "remove_dc_offset": False}, id="preemph-no-dc"
    ),
]


@pytest.mark.slow
@needs_knf
@pytest.mark.parametrize("sr", [16000, 8000])
@pytest.mark.parametrize("name", ["speech", "synth"])
@pytest.mark.parametrize("args, kw", KALDI_CASES)
def test_mel_compat_kaldi_is_kaldi_fbank(cli, tmp_path, name, sr, args, kw):
    if sr == 8000 and kw.get("num_mel_bins") == 80:
        pytest.skip("80 bands at 8 kHz leave a band without an FFT bin (Kaldi refuses it too)")
    x = signal(name, sr)
    ours, meta = run_npy(cli, x, sr, tmp_path, "mel", "--compat", "kaldi", *args)
    ref = knf_features(x, sr, False, **kw)
    assert_fbank_close(ours.T, ref)
    assert meta["kind"] == "fbank" and meta["layout"] == "(n_rows, n_frames)" and meta["compat"] == "kaldi"
    assert meta["kaldi"]["num_mel_bins"] == ref.shape[1]


@pytest.mark.slow
@needs_knf
@pytest.mark.parametrize("sr", [16000, 8000])
@pytest.mark.parametrize("name", ["speech", "synth"])
@pytest.mark.parametrize(
    "args, kw",
    KALDI_CASES[:3]
    + [
        pytest.param(["--no-energy"], {"use_energy": False}, id="c0"),
        pytest.param(["--htk-compat", "--no-energy"], {"htk_compat": True, "use_energy": False}, id="htk-c0"),
        pytest.param(["--lifter", "0", "--n-mfcc", "20"], {"cepstral_lifter": 0.0, "num_ceps": 20}, id="no-lifter-20"),
    ],
)
def test_mfcc_compat_kaldi_is_kaldi_mfcc(cli, tmp_path, name, sr, args, kw):
    x = signal(name, sr)
    ours, meta = run_npy(cli, x, sr, tmp_path, "mfcc", "--compat", "kaldi", *args)
    ref = knf_features(x, sr, True, **kw)
    ours = ours.T.astype(np.float64)
    assert ours.shape == ref.shape
    n = ref.shape[1]
    lift = kaldi_lifter(n, kw.get("cepstral_lifter", 22.0))
    c0 = 0
    if kw.get("htk_compat"):
        lift, c0 = np.roll(lift, -1), n - 1
    others = [i for i in range(n) if i != c0]
    assert np.max(np.abs(ours[:, c0] - ref[:, c0])) <= 1e-3
    assert np.max(np.abs(ours[:, others] / lift[others] - ref[:, others] / lift[others])) <= 1e-3
    assert meta["kind"] == "mfcc" and meta["rows"][c0] == ("energy" if kw.get("use_energy", True) else "c0")


@pytest.mark.slow
@needs_knf
def test_kaldi_use_energy_and_raw_energy_on_fbank(cli, tmp_path):
    x = speech()
    ours, meta = run_npy(cli, x, 16000, tmp_path, "mel", "--compat", "kaldi", "--use-energy", "--no-raw-energy")
    ref = knf_features(x, 16000, False, use_energy=True, raw_energy=False)
    assert_fbank_close(ours.T, ref)
    assert meta["rows"][0] == "energy"


@pytest.mark.slow
@needs_knf
def test_kaldi_dither_is_seeded(cli, tmp_path):
    x = speech()
    a, _ = run_npy(cli, x, 16000, tmp_path, "mel", "--compat", "kaldi", "--dither", "1", "--seed", "3", name="a")
    b, _ = run_npy(cli, x, 16000, tmp_path, "mel", "--compat", "kaldi", "--dither", "1", "--seed", "3", name="b")
    c, _ = run_npy(cli, x, 16000, tmp_path, "mel", "--compat", "kaldi", name="c")
    np.testing.assert_array_equal(a, b)
    assert 0 < np.max(np.abs(a - c))
    # dither 1 (int16 units) on speech: small next to the signal, large only on near-silent bands
    assert np.median(np.abs(a - c)) < 0.05


def test_kaldi_refuses_what_kaldi_has_not(cli, tmp_path):
    wav = write(tmp_path / "x.wav", speech()[:8000])
    for args, match in [
        (["--center"], "--center"),
        (["--log", "db"], "--log db"),
        (["--mel-scale", "slaney"], "--mel-scale"),
        (["--window", "kaiser"], "--window must be one of povey"),
        (["--nfft", "1000"], "--nfft must be"),
        (["--window-position", "center"], "window at the frame start"),
    ]:
        code, _, err = cli("mel", wav, "--npy", tmp_path / "o.npy", "--compat", "kaldi", *args)
        assert code == 2 and match in err, (args, err)
    code, _, err = cli("spectrogram", wav, "--npy", tmp_path / "o.npy", "--compat", "kaldi")
    assert code == 2 and "compute-spectrogram-feats is not implemented" in err
    code, _, err = cli("mel", wav, "--npy", tmp_path / "o.npy", "--dither", "1")
    assert code == 2 and "--dither applies to --compat kaldi only" in err
    code, _, err = cli("mel", wav, "--npy", tmp_path / "o.npy", "--compat", "caffe")
    assert code == 2 and "'caffe' is not one of kaldi, torchaudio, librosa" in err


# --------------------------------------------------------------------------------------------
# librosa
# --------------------------------------------------------------------------------------------
def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b)) / np.max(np.abs(b)))


@pytest.mark.slow
@pytest.mark.parametrize("sr", [16000, 22050])
def test_librosa_preset_mel_power_and_db(cli, tmp_path, sr):
    x = speech(sr)
    P, meta = run_npy(cli, x, sr, tmp_path, "mel", "--compat", "librosa", "--scale", "power", name="p")
    D, _ = run_npy(cli, x, sr, tmp_path, "mel", "--compat", "librosa", name="d")
    S = librosa.feature.melspectrogram(y=x.astype(np.float64), sr=sr)
    assert P.shape == S.shape == (128, S.shape[1])
    assert rel(P, S) <= 1e-5
    assert np.max(np.abs(D - librosa.power_to_db(S))) <= 1e-3
    assert meta["center"] is True and meta["pad_mode"] == "constant" and meta["n_fft"] == 2048


@pytest.mark.slow
def test_librosa_preset_spectrogram(cli, tmp_path):
    x = speech()
    P, _ = run_npy(cli, x, 16000, tmp_path, "spectrogram", "--compat", "librosa", "--scale", "power", name="p")
    D, _ = run_npy(cli, x, 16000, tmp_path, "spectrogram", "--compat", "librosa", name="d")
    S = np.abs(librosa.stft(x.astype(np.float64))) ** 2
    assert rel(P, S) <= 1e-5
    R = librosa.power_to_db(S)
    # float32 STFT (audiokit's CLI): 1e-3 dB within 60 dB of the peak; the cells 60-80 dB down carry float32 noise
    assert np.max(np.abs(D - R)[R > R.max() - 60]) <= 1e-3
    assert np.max(np.abs(D - R)) <= 3e-3


@pytest.mark.slow
@pytest.mark.parametrize("sr", [16000, 22050])
def test_librosa_preset_mfcc_and_deltas(cli, tmp_path, sr):
    x = speech(sr)
    M, meta = run_npy(cli, x, sr, tmp_path, "mfcc", "--compat", "librosa", name="m")
    ref = librosa.feature.mfcc(y=x.astype(np.float64), sr=sr)
    assert M.shape == ref.shape == (20, ref.shape[1])
    assert rel(M, ref) <= 1e-5
    D, meta = run_npy(cli, x, sr, tmp_path, "mfcc", "--compat", "librosa", "--deltas", "2", "--delta-method", "librosa", name="d")
    stacked = np.concatenate([ref, librosa.feature.delta(ref), librosa.feature.delta(ref, order=2)])
    assert D.shape == stacked.shape
    for block in range(3):
        rows = slice(20 * block, 20 * (block + 1))
        assert rel(D[rows], stacked[rows]) <= 1e-5, block
    assert meta["rows"][20] == "d(c0)" and meta["rows"][40] == "dd(c0)"


@pytest.mark.slow
def test_librosa_lifter_and_n_mfcc(cli, tmp_path):
    x = speech()
    M, _ = run_npy(cli, x, 16000, tmp_path, "mfcc", "--compat", "librosa", "--n-mfcc", "13", "--lifter", "22")
    ref = librosa.feature.mfcc(y=x.astype(np.float64), sr=16000, n_mfcc=13, lifter=22)
    assert rel(M, ref) <= 1e-5


# --------------------------------------------------------------------------------------------
# torchaudio (closed-form definitions of its documented defaults)
# --------------------------------------------------------------------------------------------
def torch_like_power(x: np.ndarray, n_fft: int = 400, hop: int = 200) -> np.ndarray:
    """torchaudio.transforms.Spectrogram(): reflect-pad n_fft//2, periodic Hann(n_fft), |rfft|**2."""
    pad = np.pad(x.astype(np.float64), n_fft // 2, mode="reflect")
    n = 1 + (pad.size - n_fft) // hop
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    frames = np.stack([pad[m * hop : m * hop + n_fft] * w for m in range(n)], axis=1)
    return np.abs(np.fft.rfft(frames, axis=0)) ** 2


def torch_like_fbank(sr: int, n_freqs: int, n_mels: int = 128) -> np.ndarray:
    """torchaudio.functional.melscale_fbanks(norm=None, mel_scale='htk'), transposed to (n_mels, n_freqs)."""
    all_freqs = np.linspace(0, sr // 2, n_freqs)
    m_max = 2595.0 * np.log10(1.0 + (sr / 2) / 700.0)
    m_pts = np.linspace(0.0, m_max, n_mels + 2)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return np.maximum(0.0, np.minimum(down, up)).T


def test_torchaudio_preset_spectrogram_mel_db_mfcc(cli, tmp_path):
    sr = 16000
    x = speech()
    P = torch_like_power(x)
    S, meta = run_npy(cli, x, sr, tmp_path, "spectrogram", "--compat", "torchaudio", "--scale", "power", name="s")
    assert S.shape == P.shape and meta["pad_mode"] == "reflect" and meta["hop_length"] == 200
    assert rel(S, P) <= 1e-5
    M = torch_like_fbank(sr, P.shape[0]) @ P
    Mp, _ = run_npy(cli, x, sr, tmp_path, "mel", "--compat", "torchaudio", "--scale", "power", name="mp")
    assert Mp.shape == M.shape == (128, P.shape[1])
    assert rel(Mp, M) <= 1e-5
    Md, meta = run_npy(cli, x, sr, tmp_path, "mel", "--compat", "torchaudio", name="md")
    db = 10 * np.log10(np.maximum(M, 1e-10))  # AmplitudeToDB('power', top_db=None)
    # no top_db: cells down to the -100 dB floor; float32 mel sums are within 1e-3 dB over the top 60 dB
    assert np.max(np.abs(Md - db)[db > db.max() - 60]) <= 1e-3 and meta["top_db"] is None
    assert np.max(np.abs(Md - db)) <= 1e-2
    C, _ = run_npy(cli, x, sr, tmp_path, "mfcc", "--compat", "torchaudio", name="c")
    db80 = np.maximum(db, db.max() - 80.0)  # MFCC: AmplitudeToDB('power', top_db=80), DCT-II ortho, 40 coefficients
    import scipy.fft

    ref = scipy.fft.dct(db80, type=2, norm="ortho", axis=0)[:40]
    assert C.shape == ref.shape
    assert rel(C, ref) <= 1e-5


@pytest.mark.skipif(not (TORCH_REF / "speech16k.npy").exists(), reason="no stored torchaudio reference arrays")
def test_torchaudio_preset_against_stored_torchaudio_arrays(cli, tmp_path):
    """Arrays computed once by torchaudio 2.9.1 (tests/data/torchaudio/make_reference.py) from speech16k.npy."""
    x = np.load(TORCH_REF / "speech16k.npy")
    for command, args, ref_name in [
        ("spectrogram", ["--scale", "power"], "spectrogram"),
        ("mel", ["--scale", "power"], "melspectrogram"),
        ("mel", [], "melspectrogram_db"),
        ("mfcc", [], "mfcc"),
    ]:
        ref = np.load(TORCH_REF / f"{ref_name}.npy").astype(np.float64)
        ours, _ = run_npy(cli, x, 16000, tmp_path, command, "--compat", "torchaudio", *args, name=ref_name)
        assert ours.shape == ref.shape, ref_name
        if ref_name.endswith("_db"):  # top_db None: both sides' float32 noise shows in the cells far below the peak
            assert np.max(np.abs(ours - ref)[ref > ref.max() - 60]) <= 1e-3
            assert np.max(np.abs(ours - ref)) <= 1e-2
        else:
            assert rel(ours, ref) <= 1e-5, ref_name
    api = audiokit.mfcc(x, sr=16000, compat="torchaudio")
    assert rel(api, np.load(TORCH_REF / "mfcc.npy")) <= 1e-5


# --------------------------------------------------------------------------------------------
# Presets: explicit flags win; no preset = today's defaults; API = CLI
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_explicit_flags_override_the_preset(cli, tmp_path):
    x = speech()
    M, meta = run_npy(cli, x, 16000, tmp_path, "mel", "--compat", "librosa", "--n-mels", "40", "--hop", "256", "--scale", "power")
    S = librosa.feature.melspectrogram(y=x.astype(np.float64), sr=16000, n_mels=40, hop_length=256)
    assert M.shape == S.shape and rel(M, S) <= 1e-5 and meta["hop_length"] == 256


def test_mfcc_defaults_equal_the_api(cli, tmp_path):
    x = speech()
    C, meta = run_npy(cli, x, 16000, tmp_path, "mfcc")
    ref = audiokit.mfcc(x, sr=16000)  # one set of defaults (audiokit.defaults): the same float32 values
    assert C.shape == ref.shape == (20, 1 + (x.size - 400) // 160)
    np.testing.assert_array_equal(C, ref.astype(np.float32))
    assert meta["layout"] == "(n_rows, n_frames)" and meta["rows"][:2] == ["c0", "c1"]
    # the CLI's Kaldi front end computes in float32, the API in float64: c1-c12 within 5e-4 of float64 before the
    # lifter (up to 12x; docs/conventions.md "Kaldi precision"), so 6e-3 after it (measured 2.2e-3)
    for compat, tolerance in (("librosa", 1e-3), ("kaldi", 6e-3)):
        C, _ = run_npy(cli, x, 16000, tmp_path, "mfcc", "--compat", compat, name=compat)
        assert np.max(np.abs(C - audiokit.mfcc(x, sr=16000, compat=compat))) <= tolerance


@pytest.mark.slow
def test_mfcc_energy_replaces_c0_by_the_log_frame_power(cli, tmp_path):
    x = speech()
    C, meta = run_npy(cli, x, 16000, tmp_path, "mfcc", "--energy", "--top-db", "0")
    P = np.abs(librosa.stft(x.astype(np.float64), n_fft=400, hop_length=160, center=False, window="hann")) ** 2
    np.testing.assert_allclose(C[0], 10 * np.log10(np.maximum(P.sum(axis=0), 1e-10)), atol=1e-3)
    assert meta["rows"][0] == "energy"


@pytest.mark.parametrize("log, unit", [("ln", np.log(10) / 10), ("log10", 0.1)])
def test_log_ln_and_log10_apply_ref_and_top_db_as_the_api(cli, tmp_path, log, unit):
    x = speech()
    L, meta = run_npy(cli, x, 16000, tmp_path, "mel", "--log", log, "--top-db", "30", "--ref", "max")
    ref = audiokit.log_melspectrogram(x, sr=16000, n_fft=400, hop_length=160, log=log, top_db=30, ref="max")
    assert np.max(np.abs(L - ref)) <= 1e-4
    assert L.max() == pytest.approx(0.0, abs=1e-6) and L.min() == pytest.approx(-30 * unit, abs=1e-4)
    assert meta["scale"] == log and meta["log_ref"] is not None
    A, _ = run_npy(cli, x, 16000, tmp_path, "mel", "--log", log, "--amin", "1e-3", name="amin")
    floor = np.log(1e-3) if log == "ln" else -3.0
    assert A.min() == pytest.approx(floor, abs=1e-5)


# --------------------------------------------------------------------------------------------
# Deltas and CMVN (streamed; compared with the whole-array functions)
# --------------------------------------------------------------------------------------------
def long_signal(seconds: float = 25.0) -> np.ndarray:
    """Longer than one read block and than the 600-frame CMVN window."""
    rng = np.random.default_rng(5)
    reps = int(np.ceil(seconds * 16000 / 101637))
    return (np.tile(speech(), reps)[: int(seconds * 16000)] + rng.standard_normal(int(seconds * 16000)) * 1e-3).astype(np.float32)


@pytest.mark.parametrize("method", ["kaldi", "librosa"])
@pytest.mark.parametrize("cmvn", ["none", "utterance", "sliding"])
def test_streamed_deltas_and_cmvn_equal_the_whole_array(cli, tmp_path, method, cmvn):
    from audiokit.dsp.features import cmvn as cmvn_fn
    from audiokit.dsp.features import delta

    x = long_signal()
    base, _ = run_npy(cli, x, 16000, tmp_path, "mel", "--compat", "kaldi", name="base")
    out, meta = run_npy(
        cli,
        x,
        16000,
        tmp_path,
        "mel",
        "--compat",
        "kaldi",
        "--deltas",
        "2",
        "--delta-method",
        method,
        "--cmvn",
        cmvn,
        name="feat",
    )
    y = base.astype(np.float64)
    if cmvn != "none":
        y = cmvn_fn(y, mode=cmvn, axis=-1)
    ref = np.concatenate([y, delta(y, order=1, method=method), delta(y, order=2, method=method)])
    assert out.shape == ref.shape == (69, base.shape[1])
    assert np.max(np.abs(out - ref)) <= 1e-4
    assert meta["deltas"]["order"] == 2 and (meta["cmvn"] is None) == (cmvn == "none")


def test_kaldi_add_deltas_is_kaldi_column_layout(cli, tmp_path):
    from audiokit.dsp.features import add_deltas

    x = speech()
    base, _ = run_npy(cli, x, 16000, tmp_path, "mfcc", "--compat", "kaldi", name="b")
    out, _ = run_npy(cli, x, 16000, tmp_path, "mfcc", "--compat", "kaldi", "--deltas", "2", name="d")
    np.testing.assert_allclose(out.T, add_deltas(base.T.astype(np.float64), axis=0), atol=1e-4)


def test_multichannel_and_png(cli, tmp_path):
    x = speech()
    wav = write(tmp_path / "st.wav", np.stack([x, 0.5 * x]))
    code, out, err = cli("mfcc", wav, "--npy", tmp_path / "st.npy", "-o", tmp_path / "st.png", "--compat", "kaldi")
    assert code == 0, err
    a = np.load(tmp_path / "st.npy")
    assert a.shape[:2] == (2, 13)
    np.testing.assert_allclose(a[0, 1:], a[1, 1:], atol=2e-3)  # a gain changes only c0/energy
    assert (tmp_path / "st.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = cli("mfcc", wav, "--mix")
    assert code == 0 and out.strip().endswith("st.mfcc.png"), err


def test_batch_mfcc(cli, tmp_path):
    x = speech()
    src = tmp_path / "in"
    src.mkdir()
    write(src / "a.wav", x)
    write(src / "b.wav", x[:16000])
    code, out, err = cli(
        "batch", "mfcc", "--store", "files", src, "--out", tmp_path / "out", "--compat", "kaldi", "--deltas", "1", "-j", "1"
    )
    assert code == 0, err
    a = np.load(tmp_path / "out" / "a.mfcc.npy")
    single, _ = run_npy(cli, x, 16000, tmp_path, "mfcc", "--compat", "kaldi", "--deltas", "1")
    np.testing.assert_array_equal(a, single)
    assert np.load(tmp_path / "out" / "b.mfcc.npy").shape == (26, 98)
    code, _, err = cli("batch", "mfcc", "--store", "files", src, "--out", tmp_path / "bad", "--cmvn", "global")
    assert code == 2 and "--cmvn" in err

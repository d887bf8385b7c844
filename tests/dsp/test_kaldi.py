"""Tests of audiokit.dsp.kaldi against kaldi-native-fbank (Kaldi's feature code) and a naive float64 loop.

References
----------
* ``kaldi_native_fbank`` (``OnlineFbank`` / ``OnlineMfcc``, the whole signal in one
  ``accept_waveform``): Kaldi's C++ feature code in float32.  Its log-mel values carry float32
  rounding noise that grows as a band falls below the frame's strongest band (~1e-3 at 20-25
  nats below); the synthetic signal therefore keeps a -50 dBFS noise floor under its chirp and
  DC sections (digital silence stays exact: every band sits on the FLT_EPSILON floor).
  Tolerance: max |diff| <= 1e-3 in log units for fbank; MFCCs are compared after dividing out
  the lifter (Kaldi multiplies c_i by up to 1 + Q/2 = 12, amplifying the reference's own
  rounding by as much); c0 / the log energy directly.  Frame counts must be identical.
* ``kaldi_reference.naive_kaldi``: the per-frame algorithm written out as in Kaldi's sources (loops,
  float64 arithmetic, float32 tables): every option, any signal (pure chirp, DC steps, silence) to 1e-9.
* ``test_readme_figure_*``: the README's accuracy figures (benchmarks/bench_kaldi_accuracy.py over 500
  utterances), each bounded on 12 utterances mixed by the same recipe from the recorded speech example.
"""

from __future__ import annotations

import numpy as np
import pytest

from audiokit.dsp.kaldi import (
    FLT_EPSILON,
    FbankOptions,
    KaldiFeatureStream,
    MfccOptions,
    dct_matrix,
    frame_starts,
    kaldi_fbank,
    kaldi_features_blocks,
    kaldi_mfcc,
    lifter_coeffs,
    mel_banks,
    mel_scale,
    num_frames,
    window_function,
)
from audiokit.errors import ParameterError
from tests.helpers.kaldi_reference import knf, knf_features, naive_kaldi, needs_knf
from tests.helpers.paths import SPEECH


# --------------------------------------------------------------------------------------------
# Signals
# --------------------------------------------------------------------------------------------
def speech(sr: int) -> np.ndarray:
    import soundfile as sf

    x, file_sr = sf.read(SPEECH, dtype="float32")
    assert file_sr == 16000
    if sr == 16000:
        return x
    from audiokit.dsp.resample import resample

    return resample(x[None, :], sr_in=16000, sr_out=sr)[0].astype(np.float32)


def synth(sr: int, *, chirp_amp: float = 0.1, noise: float = 3e-3, seed: int = 1) -> np.ndarray:
    """Digital silence, a chirp (50 Hz -> 0.45 sr) on a +0.2 DC offset, silence, DC 0.25 alone,
    the chirp again on -0.1, silence; ``noise`` (std, full scale) under the non-silent parts."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(sr * 1.5)) / sr
    ch = chirp_amp * np.sin(2 * np.pi * (50 * t + (0.45 * sr - 50) / 3.0 * t * t))

    def nz(n: int) -> np.ndarray:
        return rng.standard_normal(n) * noise

    parts = [
        np.zeros(sr // 4),
        ch + 0.2 + nz(t.size),
        np.zeros(sr // 5),
        0.25 + nz(sr // 4),
        ch[: sr // 3] - 0.1 + nz(sr // 3),
        np.zeros(sr // 7),
    ]
    return np.concatenate(parts).astype(np.float32)


# --------------------------------------------------------------------------------------------
# Against kaldi-native-fbank
# --------------------------------------------------------------------------------------------
CONFIGS = [
    pytest.param({}, id="defaults-povey"),
    pytest.param({"snip_edges": False}, id="no-snip-edges"),
    pytest.param({"window_type": "hamming"}, id="hamming"),
    pytest.param({"window_type": "hamming", "snip_edges": False}, id="hamming-no-snip"),
    pytest.param({"window_type": "hanning"}, id="hanning"),
    pytest.param({"window_type": "rectangular"}, id="rectangular"),
    pytest.param({"window_type": "blackman"}, id="blackman"),
    pytest.param({"use_energy": True, "raw_energy": False, "energy_floor": 1.0}, id="energy-windowed-floor"),
    pytest.param({"use_energy": True, "htk_compat": True}, id="htk-compat"),
    pytest.param({"num_mel_bins": 15, "low_freq": 64.0, "high_freq": -400.0}, id="15-bins-band"),
]

SIGNALS = {"speech": speech, "synth": synth}
_cache: dict = {}


def signal(name: str, sr: int) -> np.ndarray:
    if (name, sr) not in _cache:
        _cache[name, sr] = SIGNALS[name](sr)
    return _cache[name, sr]


@pytest.mark.slow
@needs_knf
@pytest.mark.parametrize("sr", [16000, 8000])
@pytest.mark.parametrize("name", ["speech", "synth"])
@pytest.mark.parametrize("config", CONFIGS)
def test_fbank_matches_kaldi_native_fbank(name, sr, config):
    x = signal(name, sr)
    ref = knf_features(x, sr, False, **config)
    ours = kaldi_fbank(x, sr=sr, **config)
    assert ours.shape == ref.shape
    assert np.max(np.abs(ours - ref)) <= 1e-3


@pytest.mark.slow
@needs_knf
@pytest.mark.parametrize("sr", [16000, 8000])
@pytest.mark.parametrize("name", ["speech", "synth"])
@pytest.mark.parametrize(
    "config",
    CONFIGS[:-3]
    + [
        pytest.param({"use_energy": False}, id="c0-no-energy"),
        pytest.param({"use_energy": False, "htk_compat": True}, id="htk-c0-sqrt2"),
        pytest.param({"cepstral_lifter": 0.0, "num_ceps": 20}, id="no-lifter-20-ceps"),
    ],
)
def test_mfcc_matches_kaldi_native_fbank(name, sr, config):
    x = signal(name, sr)
    ref = knf_features(x, sr, True, **config)
    ours = kaldi_mfcc(x, sr=sr, **config)
    assert ours.shape == ref.shape
    opts = MfccOptions(samp_freq=sr, **config)
    lift = lifter_coeffs(opts.num_ceps, opts.cepstral_lifter)
    if opts.htk_compat:
        lift = np.roll(lift, -1)
    c0 = opts.num_ceps - 1 if opts.htk_compat else 0
    others = [i for i in range(opts.num_ceps) if i != c0]
    assert np.max(np.abs(ours[:, c0] - ref[:, c0])) <= 1e-3
    assert np.max(np.abs(ours[:, others] / lift[others] - ref[:, others] / lift[others])) <= 1e-3


@pytest.mark.slow
@needs_knf
@pytest.mark.parametrize("config", [{}, {"use_power": False}, {"use_log_fbank": False}])
def test_fbank_power_and_linear_options_match_kaldi_native_fbank(config):
    x = signal("speech", 16000)
    ref = knf_features(x, 16000, False, **config).astype(np.float64)
    ours = kaldi_fbank(x, sr=16000, **config)
    if config.get("use_log_fbank") is False:
        np.testing.assert_allclose(ours, ref, rtol=2e-3, atol=FLT_EPSILON)
    else:
        assert np.max(np.abs(ours - ref)) <= 1e-3


@pytest.mark.slow
@needs_knf
def test_digital_silence_is_exactly_on_the_floor():
    x = np.zeros(16000, dtype=np.float32)
    ours = kaldi_fbank(x, sr=16000)
    ref = knf_features(x, 16000, False)
    assert np.all(ours == np.log(FLT_EPSILON))
    np.testing.assert_array_equal(ref, np.float32(np.log(FLT_EPSILON)))
    m = kaldi_mfcc(x, sr=16000)
    assert np.all(np.isfinite(m))
    np.testing.assert_allclose(m[:, 0], np.log(FLT_EPSILON), rtol=1e-12)  # raw energy floored


@pytest.mark.slow
@needs_knf
@pytest.mark.parametrize("n", [0, 1, 50, 399, 400, 401, 559, 560, 561, 1000])
@pytest.mark.parametrize("snip", [True, False])
def test_frame_counts_match_kaldi_native_fbank(n, snip):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32) * 0.1
    if n == 0 and not snip:
        assert kaldi_fbank(x, sr=16000, snip_edges=False).shape == (0, 23)
        return
    ref = knf_features(x, 16000, False, snip_edges=snip)
    ours = kaldi_fbank(x, sr=16000, snip_edges=snip)
    assert ours.shape[0] == ref.shape[0] == num_frames(n, FbankOptions(snip_edges=snip))
    if ours.shape[0]:
        assert np.max(np.abs(ours - ref)) <= 1e-3


# --------------------------------------------------------------------------------------------
# Against the naive loop (exactness of every option, any signal)
# --------------------------------------------------------------------------------------------
NAIVE_CASES = [
    (FbankOptions(), {}),
    (FbankOptions(snip_edges=False, window_type="hamming"), {}),
    (FbankOptions(window_type="blackman", blackman_coeff=0.4, preemph_coeff=0.0), {}),
    (FbankOptions(window_type="sine", remove_dc_offset=False, use_energy=True, htk_compat=True), {}),
    (FbankOptions(round_to_power_of_two=False, frame_length_ms=20, frame_shift_ms=12.5, use_power=False), {}),
    (FbankOptions(use_log_fbank=False, use_energy=True, raw_energy=False, energy_floor=2.0), {}),
    (MfccOptions(), {}),
    (MfccOptions(snip_edges=False, use_energy=False, htk_compat=True, num_ceps=23, cepstral_lifter=0.0), {}),
    (MfccOptions(samp_freq=8000, num_mel_bins=15, low_freq=0, high_freq=3800, window_type="hanning"), {}),
]


@pytest.mark.parametrize("opts,_", NAIVE_CASES)
def test_matches_naive_loop_on_extreme_signal(opts, _):
    sr = int(opts.samp_freq)
    x = synth(sr, chirp_amp=0.5, noise=0.0)[: int(0.8 * sr)]  # silence, DC steps, pure chirp
    ref = naive_kaldi(x, opts)
    ours = (kaldi_mfcc if isinstance(opts, MfccOptions) else kaldi_fbank)(x, options=opts)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("dc", [40.0, 400.0, 4000.0])
@pytest.mark.parametrize(
    "config",
    [{}, {"snip_edges": False}, {"frame_shift_ms": 10.1}, {"remove_dc_offset": False}],
    ids=["chunk-sums", "no-snip-edges", "gcd-1-direct", "no-dc-removal"],
)
def test_raw_energy_of_float_input_with_dc_offset_matches_naive_loop(dc, config):
    """A float signal (not int16-valued) with a DC offset of ``dc`` LSB and 1e-4 LSB of variation: the raw log
    energy (MFCC c0) is ln sum((x - mean)^2) as in Kaldi's loop.  Computed as sum x^2 - (sum x)^2 / W it cancels
    against the offset (float64: off by 3.2e-3 at 400 LSB, 0.36 at 4000 LSB)."""
    x = ((dc + 1e-4 * np.random.default_rng(5).standard_normal(8 * 16000)) / 32768.0).astype(np.float32)  # 800 frames: 3+ blocks
    opts = MfccOptions(**config)
    ref = naive_kaldi(x, opts)
    ours = kaldi_mfcc(x, options=opts)
    if opts.remove_dc_offset:  # about 1e-5 (int16 units squared) about the mean: near the FLT_EPSILON floor
        assert ref[:, 0].max() < -11
    np.testing.assert_allclose(ours[:, 0], ref[:, 0], rtol=0, atol=1e-7)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("n", [3, 120, 250, 399])
def test_no_snip_edges_multiple_reflections_on_short_signals(n):
    opts = FbankOptions(snip_edges=False)
    x = np.random.default_rng(n).standard_normal(n) * 0.1
    ref = naive_kaldi(x, opts)
    ours = kaldi_fbank(x, options=opts)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)


#: The float32 kernel (what mel/mfcc --compat kaldi|lhotse compute) is within float32 rounding of the exact value, per
#: cell: ``|a - exact| <= 2 ulp + K eps sqrt(S/m)`` (:func:`kaldi_reference.rounding_k`; m the cell's band energy, S its
#: frame's sum over the bands), K = 8.  Measured (benchmarks/bench_kaldi_accuracy.py): at most 4.9 on the named signals
#: (the speech example, at -50/-90 dBFS, with a 400 LSB DC offset in int16 and in float32, noise, tones) and on 300
#: corpus utterances at 23 and 80 bands: the FFT's own rounding.  kaldi-native-fbank needs K up to 117 (float32 input
#: with a DC offset) and ~2e6 on DC-only frames; the float32 kernel before the pre-emphasis was formed in float64
#: needed 43-144 with a DC offset.
K_FLOAT32 = 8.0


@pytest.mark.parametrize("nb", [23, 80])
@pytest.mark.parametrize("dc", ["none", "int16", "float32"])
def test_float32_kernel_within_float32_rounding_of_float64(nb, dc):
    """The float32 kernel against the float64 one (= the naive float64 loop to 1e-8) on the speech example, plain and
    with a 400 LSB DC offset (int16, or float32 with sub-LSB noise): the rounding model above, per cell; a DC offset
    costs no precision (frame sums, DC mean and pre-emphasis in float64)."""
    from tests.helpers.kaldi_reference import rounding_k

    x = signal("speech", 16000).astype(np.float64)
    if dc == "int16":
        x = (np.round(x * 32768.0) + 400.0) / 32768.0
    elif dc == "float32":
        x = x + (400.37 + 0.033 * np.random.default_rng(5).standard_normal(x.size)) / 32768.0
    x = x.astype(np.float32)
    a = kaldi_fbank(x, sr=16000, num_mel_bins=nb, dtype=np.float32)
    b = kaldi_fbank(x, sr=16000, num_mel_bins=nb)
    assert a.dtype == np.float32 and b.dtype == np.float64
    assert rounding_k(a, b, b) <= K_FLOAT32
    assert np.median(np.abs(a - b)) <= 1e-5


# --------------------------------------------------------------------------------------------
# The README's accuracy figures, on a small corpus made as benchmarks/bench_kaldi_accuracy.py's
# --------------------------------------------------------------------------------------------
#: The README's figures are measured by benchmarks/bench_kaldi_accuracy.py (500 utterances, 70 min of audio); each
#: bound below is that run's worst utterance with a margin, where the dtype puts it.  "Loud": cells within 60 dB of
#: the utterance's strongest cell (MFCC: frames whose 23 bands all are).
#: kaldi-native-fbank in loud cells: its float32 rounding, worst 1.1e-4 log units (relative power error: about
#: 1000 float32 ulps after a 512-point FFT and a band sum); MFCC c0 1.9e-5 (a float32 energy sum), c1..c12 with the
#: lifter divided out 5.0e-5 (the DCT of that log-mel noise).
LOUD_FBANK_VS_KNF, LOUD_C0_VS_KNF, LOUD_CEPS_VS_KNF = 2e-4, 5e-5, 1e-4
#: audiokit (float64) against the float64 reference (the same formulas through another FFT): loud cells worst 1.5e-13
#: (fbank), 2.0e-14 (c0), 5.7e-14 (c1.. / lifter): float64 rounding; all cells 3.1e-10 / 5.3e-12 / 9.2e-11, the
#: FFTs' rounding, relative to a frame's peak, in cells up to 43 nats (187 dB) below it.
LOUD_VS_REFERENCE, ALL_VS_REFERENCE = 1e-12, 1e-8


@pytest.fixture(scope="module")
def small_corpus():
    """12 utterances of 2-5 s from the recorded speech example, mixed by the benchmark's recipe: 16 / 22.05 kHz,
    int16 / float32, pauses, backgrounds down to -120 dBFS, DC offsets (:func:`kaldi_reference.mix_utterance`)."""
    from tests.helpers.kaldi_reference import mix_utterance, recorded_clip

    rec = speech(16000).astype(np.float64)
    out = []
    for i in range(12):
        rng = np.random.default_rng([2024, i])
        sr = (16000, 22050)[i % 2]
        clips = [recorded_clip(rec, rng, sr)[0] for _ in range(2)]
        x, info = mix_utterance(clips, sr, rng, duration=float(rng.uniform(2.0, 5.0)), pcm16=i % 4 < 2)
        out.append((x, sr, info))
    kinds = {(info["pcm16"], info["dc_lsb"] != 0.0, info["background"]) for _, _, info in out}
    assert (False, True) in {k[:2] for k in kinds} and (True, True) in {k[:2] for k in kinds}  # float and int16 with DC
    assert {k[2] for k in kinds} == {"digital silence", "white noise", "low-passed noise"}
    return out


@pytest.fixture(scope="module")
def corpus_features(small_corpus):
    """Per utterance: (float64 reference, kaldi-native-fbank or None, audiokit float64, audiokit float32) for fbank
    and for MFCC."""
    rows = []
    for x, sr, _ in small_corpus:
        row = []
        for mfcc, func, opts in ((False, kaldi_fbank, FbankOptions), (True, kaldi_mfcc, MfccOptions)):
            theirs = knf_features(x, sr, mfcc) if knf is not None else None
            ref = naive_kaldi(x, opts(samp_freq=sr))
            row.append((ref, theirs, func(x, sr=sr), func(x, sr=sr, dtype=np.float32)))
        rows.append(tuple(row))
    return rows


@pytest.mark.slow
def test_readme_figure_float64_reference(corpus_features):
    """audiokit (float64) against the float64 reference: equal frame counts, the bounds above in loud and in all
    cells and frames; stored as float32 (the .npy of mel --compat kaldi), within half a float32 ulp of |value| < 64.
    With the loud-cell bounds against kaldi-native-fbank (next test) this backs the README: below 60 dB, what
    separates audiokit from kaldi-native-fbank is kaldi-native-fbank's own distance from the reference."""
    from tests.helpers.kaldi_reference import loud_cells, mfcc_split, worst_split

    quiet = 0
    for (ref, _, ours, _), (mref, _, mours, _) in corpus_features:
        assert ours.shape == ref.shape and mours.shape == mref.shape
        fb, mf = worst_split(ours, ref, ref), mfcc_split(mours, mref, ref)
        assert fb["loud"] <= LOUD_VS_REFERENCE and np.max(np.abs(ours - ref)) <= ALL_VS_REFERENCE
        for coef in ("c0", "ceps"):
            if not np.isnan(mf[f"/{coef}/loud"]):
                assert mf[f"/{coef}/loud"] <= LOUD_VS_REFERENCE
            assert np.nanmax([mf[f"/{coef}/loud"], mf[f"/{coef}/quiet"]]) <= ALL_VS_REFERENCE
        assert np.max(np.abs(ours.astype(np.float32) - ref)) <= 2.0**-19 + ALL_VS_REFERENCE
        quiet += int((~loud_cells(ref)).sum())
    assert quiet > 1000  # the corpus has near-silent cells (pauses, noise floors, DC-offset silence)


@pytest.mark.slow
def test_readme_figure_float32_kernel(corpus_features):
    """The float32 kernel against the float64 reference on the corpus: fbank within the rounding model (K_FLOAT32) in
    every cell; MFCC c0 (the float64 raw log energy, rounded) within 1 ulp; c1.. that bound carried through the DCT
    and lifter (``|dc_i| <= L_i sqrt(2/N) sum_j |dx_j|``, plus 4 eps |x_j| per term for the float32 DCT)."""
    from tests.helpers.kaldi_reference import rounding_k

    eps = 2.0**-23
    lift = lifter_coeffs(13, 22.0)
    for (ref, _, _, ours), (mref, _, _, mours) in corpus_features:
        assert ours.dtype == mours.dtype == np.float32 and ours.shape == ref.shape
        assert rounding_k(ours, ref, ref) <= K_FLOAT32
        assert np.all(np.abs(mours[:, 0] - mref[:, 0]) <= np.spacing(np.abs(mref[:, 0]).astype(np.float32)))
        m = np.exp(ref - ref.max(axis=1, keepdims=True))
        cell = 2 * np.spacing(np.abs(ref).astype(np.float32)) + K_FLOAT32 * eps * np.sqrt(m.sum(axis=1, keepdims=True) / m)
        bound = np.sqrt(2 / 23) * (cell + 4 * eps * np.abs(ref)).sum(axis=1, keepdims=True) * lift[1:]
        assert np.all(np.abs(mours[:, 1:] - mref[:, 1:]) <= bound + 2 * np.spacing(np.abs(mref[:, 1:]).astype(np.float32)))


@pytest.mark.slow
@needs_knf
def test_readme_figure_kaldi_native_fbank_loud_cells(corpus_features):
    """Against kaldi-native-fbank, audiokit in float64 and in float32 (the commands'): equal frame counts; loud cells
    (within 60 dB of the utterance's strongest) and the MFCC frames whose bands are all loud within the bounds above."""
    from tests.helpers.kaldi_reference import mfcc_split, worst_split

    for (ref, theirs, ours64, ours32), (_, mtheirs, mours64, mours32) in corpus_features:
        for ours, mours in ((ours64, mours64), (ours32, mours32)):
            assert theirs.shape == ours.shape and mtheirs.shape == mours.shape
            split = worst_split(ours, theirs, ref)
            assert split["loud"] <= LOUD_FBANK_VS_KNF
            m = mfcc_split(mours, mtheirs, ref)
            if not np.isnan(m["/c0/loud"]):
                assert m["/c0/loud"] <= LOUD_C0_VS_KNF and m["/ceps/loud"] <= LOUD_CEPS_VS_KNF


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@needs_knf
def test_window_formulas():
    o = FbankOptions()
    w = window_function(o)
    i = np.arange(400)
    np.testing.assert_allclose(w, (0.5 - 0.5 * np.cos(2 * np.pi * i / 399)) ** 0.85, rtol=1e-6, atol=1e-7)
    for kind in ("povey", "hamming", "hanning", "rectangular", "blackman"):
        for sr in (16000, 8000):
            ref = np.asarray(knf.FeatureWindowFunction(knf.FrameExtractionOptions(samp_freq=sr, window_type=kind)).window)
            ours = window_function(FbankOptions(samp_freq=sr, window_type=kind))
            assert ours.dtype == np.float32 and ours.shape == (sr // 40,)
            np.testing.assert_allclose(ours, ref, rtol=0, atol=2e-7)


def test_mel_bank_shape_and_triangles():
    bank = mel_banks(FbankOptions())
    assert bank.shape == (23, 257) and bank.dtype == np.float32
    assert np.all(bank[:, -1] == 0)  # Nyquist bin unused, as Kaldi
    assert np.all(bank >= 0) and np.all(bank <= 1)
    # adjacent triangles sum to 1 between the first and last centres (linear in mel)
    o = FbankOptions()
    lo, hi = mel_scale(o.low_freq), mel_scale(8000.0)
    d = (hi - lo) / 24
    m = mel_scale(np.arange(257) * 16000 / 512)
    between = (m > lo + d) & (m < lo + 23 * d)
    np.testing.assert_allclose(bank.sum(axis=0)[between], 1.0, atol=1e-5)
    # band j rises from left_j to its centre: weight (m - left)/(centre - left)
    k = np.flatnonzero((m > lo + 5 * d) & (m <= lo + 6 * d))
    np.testing.assert_allclose(bank[5, k], (m[k] - (lo + 5 * d)) / d, rtol=1e-4)


def test_dct_matrix_is_orthonormal_and_lifter_formula():
    d = dct_matrix(23, 23)
    np.testing.assert_allclose(d @ d.T, np.eye(23), atol=1e-12)
    import scipy.fft

    np.testing.assert_allclose(d, scipy.fft.dct(np.eye(23), norm="ortho", axis=0), atol=1e-12)
    lc = lifter_coeffs(13, 22.0)
    assert lc[0] == 1.0
    np.testing.assert_allclose(lc, 1 + 11 * np.sin(np.pi * np.arange(13) / 22))
    np.testing.assert_array_equal(lifter_coeffs(5, 0.0), np.ones(5))


def test_sizes_follow_kaldi_truncation():
    o = FbankOptions()
    assert (o.window_size, o.window_shift, o.padded_window_size) == (400, 160, 512)
    o8 = FbankOptions(samp_freq=8000)
    assert (o8.window_size, o8.window_shift, o8.padded_window_size) == (200, 80, 256)
    assert FbankOptions(samp_freq=44100).window_size == 1102  # 1102.5 truncated
    assert FbankOptions(round_to_power_of_two=False).padded_window_size == 400
    np.testing.assert_array_equal(frame_starts(3, FbankOptions(snip_edges=False)), [-120, 40, 200])


# --------------------------------------------------------------------------------------------
# Streaming, dither, layout, scale
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "opts", [FbankOptions(), FbankOptions(snip_edges=False), MfccOptions(snip_edges=False), MfccOptions(dither=1.0)]
)
@pytest.mark.parametrize("block", [1, 161, 4000, 100000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stream_equals_whole(opts, block, dtype):
    """Bit for bit, whatever the pieces: frames are computed in the same blocks of 256 however the signal is fed (the
    single-file command and a batch reading other block sizes give the same bytes)."""
    x = synth(16000)
    if block == 1:
        x = x[: 3 * 16000 // 4]  # 3 blocks of frames at one sample per call
    func = kaldi_mfcc if isinstance(opts, MfccOptions) else kaldi_fbank
    whole = func(x, options=opts, seed=3, dtype=dtype)
    parts = list(kaldi_features_blocks((x[i : i + block] for i in range(0, x.size, block)), opts, seed=3, dtype=dtype))
    assert all(p.shape[0] % 256 == 0 for p in parts[:-1]) and sum(p.shape[0] for p in parts) == whole.shape[0]
    np.testing.assert_array_equal(np.concatenate(parts), whole)


def test_stream_keeps_memory_bounded():
    s = KaldiFeatureStream(FbankOptions(snip_edges=False))
    x = np.random.default_rng(0).standard_normal(16000 * 5) * 0.1
    for i in range(0, x.size, 1000):
        s.accept_waveform(x[i : i + 1000])
        assert s._buf.size <= 400 + 256 * 160 + 1000  # W, a block of frames held back, the piece
    s.input_finished()
    with pytest.raises(ParameterError, match="after input_finished"):
        s.accept_waveform(x[:10])


def test_dither_is_seeded_and_gaussian():
    x = np.zeros(16000)
    a = kaldi_fbank(x, sr=16000, dither=1.0, seed=7)
    b = kaldi_fbank(x, sr=16000, dither=1.0, seed=7)
    c = kaldi_fbank(x, sr=16000, dither=1.0, seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # unit-variance dither on silence: mel energy ~ sum_k M[j,k] * E|X_k|^2, E|X_k|^2 ~ sum(w_pre^2)
    assert np.all(a > np.log(FLT_EPSILON) + 5)
    m = kaldi_mfcc(x, sr=16000, dither=1.0, seed=7)
    # raw log energy of W unit-variance samples (mean removed): ln(399) on average
    assert abs(np.mean(m[:, 0]) - np.log(399)) < 0.02


def test_sample_scale_shifts_log_mel():
    x = signal("speech", 16000)
    a = kaldi_fbank(x, sr=16000)
    b = kaldi_fbank(x * 32768.0, sr=16000, sample_scale=1.0)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-9)
    c = kaldi_fbank(x, sr=16000, sample_scale=1.0)
    big = a > np.log(FLT_EPSILON) + 2 * np.log(32768.0) + 1
    np.testing.assert_allclose(c[big], a[big] - 2 * np.log(32768.0), atol=1e-9)


def test_layout_multichannel_and_dtype():
    x = np.stack([signal("speech", 16000)[:16000], synth(16000)[:16000]])
    out = kaldi_fbank(x, sr=16000)
    assert out.shape == (2, 98, 23) and out.dtype == np.float64  # (channels, frames, bins)
    np.testing.assert_array_equal(out[1], kaldi_fbank(x[1], sr=16000))
    assert kaldi_mfcc(x[0], sr=16000, dtype=np.float32).dtype == np.float32
    assert kaldi_fbank(np.zeros(100), sr=16000).shape == (0, 23)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(ParameterError, match="unknown window_type 'hann'; allowed: povey"):
        FbankOptions(window_type="hann")
    with pytest.raises(ParameterError, match="num_mel_bins must be a whole number >= 3"):
        FbankOptions(num_mel_bins=2)
    with pytest.raises(ParameterError, match="bad mel band edges"):
        FbankOptions(low_freq=9000)
    with pytest.raises(ParameterError, match="bad mel band edges"):
        FbankOptions(high_freq=9000)
    with pytest.raises(ParameterError, match=r"num_ceps \(30\) cannot be larger than num_mel_bins \(23\)"):
        MfccOptions(num_ceps=30)
    with pytest.raises(ParameterError, match="preemph_coeff must be in"):
        FbankOptions(preemph_coeff=1.5)
    with pytest.raises(ParameterError, match="dither must be >= 0"):
        FbankOptions(dither=-1)
    with pytest.raises(ParameterError, match="snip_edges must be True or False"):
        FbankOptions(snip_edges=1)
    with pytest.raises(ParameterError, match="sr 8000 Hz does not match samp_freq 16000.0"):
        kaldi_fbank(np.zeros(1000), options=FbankOptions(), sr=8000)
    with pytest.raises(ParameterError, match="unknown FbankOptions option"):
        kaldi_fbank(np.zeros(1000), sr=16000, num_ceps=13)
    with pytest.raises(ParameterError, match="contains no FFT bin"):
        mel_banks(FbankOptions(num_mel_bins=200))
    with pytest.raises(ParameterError, match="NaN or infinity"):
        kaldi_fbank(np.array([0.0, np.nan] * 400), sr=16000)
    with pytest.raises(ParameterError, match="sample_scale must be a finite number > 0"):
        kaldi_fbank(np.zeros(1000), sr=16000, sample_scale=0)
    with pytest.raises(ParameterError, match="dtype must be float32 or float64"):
        kaldi_fbank(np.zeros(1000), sr=16000, dtype=np.float16)

"""The one time-frequency job (``audiokit.pipelines.timefreq``): its result, its chain, its sidecar schema, its layers.

References: the whole-array functions of ``audiokit.dsp.features`` and ``audiokit.dsp.scaling`` for the streamed
chain (float64: equal to 1e-12), the sidecar schema of ``audiokit.pipelines.sidecar.LAYOUTS``, the import
statements of ``audiokit/pipelines`` themselves for the layering.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiokit.errors import ParameterError
from audiokit.pipelines.features import Deltas, Log, Reference, SlidingCmvn, build_chain
from audiokit.pipelines.sidecar import LAYOUTS
from audiokit.pipelines.timefreq import run_timefreq
from audiokit.pipelines.timefreq_options import FeatureOptions, MelOptions, StftOptions, TimeFreqOptions

SPEECH = Path(__file__).resolve().parents[2] / "examples" / "data" / "speech.wav"
PIPELINES = Path(__file__).resolve().parents[2] / "audiokit" / "pipelines"


@pytest.fixture
def stereo(tmp_path) -> Path:
    x, sr = sf.read(SPEECH, dtype="float32")
    t = np.arange(x.size) / sr
    path = tmp_path / "stereo.wav"
    sf.write(path, np.stack([x, 0.25 * np.sin(2 * np.pi * 440 * t)], axis=1), sr, subtype="PCM_16")
    return path


@pytest.mark.filterwarnings("ignore::audiokit.dsp.mel.DuplicateBandsWarning")  # 80 bands at n_fft 400, 16 kHz
def test_result_carries_the_input_as_opened_and_the_saved_shape(stereo, tmp_path):
    mel = FeatureOptions(kind="mel", timefreq=TimeFreqOptions(mel=MelOptions(), channel=1))
    result = run_timefreq(str(stereo), mel, npy=str(tmp_path / "m.npy"))
    assert (result.n_samples, result.sr, result.channels) == (101637, 16000, 2)  # the input: both channels
    assert result.shape == (80, 633) == np.load(tmp_path / "m.npy").shape  # the array: channel 1 alone
    spec = run_timefreq(str(stereo), TimeFreqOptions(), npy=str(tmp_path / "s.npy"))
    assert spec.shape == (2, 201, 633) == np.load(tmp_path / "s.npy").shape
    assert spec.channels == 2


def test_options_are_refused_before_the_input_is_opened(tmp_path):
    """Rate-free values are parsed once, by the options' check(), before any input: a typo is exit 2, not a read."""
    missing = str(tmp_path / "missing.wav")
    for options, option in [
        (TimeFreqOptions(stft=StftOptions(win="25xs")), "--win"),
        (FeatureOptions(kind="mel", timefreq=TimeFreqOptions(mel=MelOptions(), ref="loud")), "--ref"),
        (FeatureOptions(kind="mfcc", timefreq=TimeFreqOptions(mel=MelOptions(), scale="power")), "mfcc: --scale"),
        (FeatureOptions(kind="mel", timefreq=TimeFreqOptions(mel=MelOptions(), amin=-1.0), deltas=1), "--amin"),
    ]:
        with pytest.raises(ParameterError, match=option):
            run_timefreq(missing, options, npy=str(tmp_path / "x.npy"))


def test_window_position_start_without_kaldi_is_the_plain_log_mel(tmp_path, cli):
    """With --nfft unset the window fills the frame: --window-position start computes what mel computes, bytes too."""
    outs = {}
    for name, extra in (("plain", []), ("start", ["--window-position", "start"])):
        npy = tmp_path / f"{name}.npy"
        code, _, err = cli("mel", SPEECH, "--npy", npy, *extra)
        assert code == 0, err
        outs[name] = (npy.read_bytes(), json.loads(npy.with_suffix(".json").read_text()))
    assert outs["start"][0] == outs["plain"][0]
    assert outs["start"][1] == outs["plain"][1]


@pytest.mark.parametrize(
    ("command", "args", "layout"),
    [
        ("mel", [], "spectrum"),
        ("spectrogram", ["--fmin", "100"], "spectrum"),
        ("mel", ["--log", "ln", "--ref", "max"], "spectrum"),
        ("mfcc", ["--energy", "--deltas", "1"], "features"),
        ("mel", ["--cmvn", "sliding"], "features"),
        ("mfcc", ["--compat", "kaldi", "--cmvn", "utterance"], "kaldi"),
    ],
)
def test_sidecar_keys_are_a_layout_in_its_order(tmp_path, cli, command, args, layout):
    npy = tmp_path / "out.npy"
    code, _, err = cli(command, SPEECH, "--npy", npy, *args)
    assert code == 0, err
    keys = list(json.loads(npy.with_suffix(".json").read_text()))
    assert keys == [k for k in LAYOUTS[layout] if k in keys]
    assert set(keys) <= set(LAYOUTS[layout])


def _chunks(x: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    cuts = np.cumsum(sizes)[:-1]
    return np.split(x, cuts, axis=-1)


def test_chain_streams_log_reference_cmvn_deltas_as_the_whole_array_functions():
    """The steps' apply/finish over uneven blocks == the whole-array dB, clip, sliding CMVN and Kaldi deltas."""
    from audiokit.dsp.features import add_deltas, cmvn
    from audiokit.dsp.scaling import to_db

    rng = np.random.default_rng(3)
    mel = rng.gamma(0.5, size=(2, 12, 700)) * 10.0 ** rng.uniform(-12, 0, size=(2, 12, 700))  # below amin, too
    options = FeatureOptions(
        kind="mel", timefreq=TimeFreqOptions(mel=MelOptions(n_mels=12), ref="max", top_db=60.0), cmvn="sliding", deltas=2
    )
    chain = build_chain(options.check(), kaldi=False, n_mels=12, channels=2, n_frames=700, dtype="float32", name="x")
    assert [type(s) for s in chain.steps] == [Log, Reference, SlidingCmvn, Deltas]
    ref = chain.reference
    assert ref is not None and ref.needs_peak
    ref.set_peak(float(mel.max()))
    parts = [chain.apply(block) for block in _chunks(mel, [1, 5, 64, 130, 300, 200])]
    tail = chain.finish()
    assert tail is not None
    out = np.concatenate([*parts, tail], axis=-1)
    for c in range(2):
        db = np.maximum(to_db(mel[c], ref=float(mel.max()), top_db=None), -60.0)  # 60 dB below the 2-channel peak
        expected = add_deltas(cmvn(db, mode="sliding", window=600), order=2)
        assert out[c].shape == expected.shape == (36, 700)
        np.testing.assert_allclose(out[c], expected, rtol=0, atol=1e-9)


def test_pipelines_import_each_other_without_a_cycle():
    """features <-> kaldi_frontend imported each other (a type-only import counts): the module graph is acyclic."""
    modules = {p.stem for p in PIPELINES.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in PIPELINES.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):  # every import: top level, in functions, TYPE_CHECKING
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        graph[path.stem] = deps & modules
    done: set[str] = set()

    def visit(name: str, stack: tuple[str, ...]) -> None:
        assert name not in stack, f"import cycle: {' -> '.join((*stack[stack.index(name) :], name))}"
        if name not in done:
            for dep in sorted(graph[name]):
                visit(dep, (*stack, name))
            done.add(name)

    for name in sorted(graph):
        visit(name, ())
    assert "features" not in graph["kaldi_frontend"] and "kaldi_frontend" not in graph["features"]


@pytest.mark.parametrize(("win", "hop", "sr"), [("400", "160", 16000), ("551", "221", 22050), ("25ms", "10ms", 11025)])
def test_kaldi_frame_sizes_in_samples_are_used_as_they_are(win, hop, sr):
    """A bare sample count reaches Kaldi's computation as it is (no samples -> ms -> truncated samples round trip);
    a time is Kaldi's: ms, truncated (25 ms at 11025 Hz is 275 samples, not audiokit's rounded 276)."""
    from audiokit.dsp.kaldi import FbankOptions
    from audiokit.pipelines.compat import resolve
    from audiokit.pipelines.kaldi_frontend import kaldi_options

    params = {"compat": "kaldi", "win": win, "hop": hop, "deltas": 0, "cmvn": "none", "cmvn_window": 600, "mix": False}
    p = resolve("mel", {**params, **{k: None for k in ("nfft", "window", "center", "pad_mode", "window_position")}})
    tf = TimeFreqOptions(
        stft=StftOptions(win=p["win"], hop=p["hop"], window=p["window"], center=p["center"], pad_mode=p["pad_mode"]),
        mel=MelOptions(n_mels=23, mel_scale="kaldi", norm="none", log="ln"),
        ref="1",
        top_db=0.0,
    )
    k = kaldi_options(FeatureOptions(kind="mel", timefreq=tf, compat="kaldi", window_position="start"), sr)
    if win.endswith("ms"):
        assert (k.window_samples, k.shift_samples, k.window_size, k.window_shift) == (None, None, 275, 110)
    else:
        assert (k.window_samples, k.shift_samples) == (k.window_size, k.window_shift) == (int(win), int(hop))
        # the ms recorded are the Kaldi options giving the same frames
        kaldi = FbankOptions(samp_freq=float(sr), frame_length_ms=k.frame_length_ms, frame_shift_ms=k.frame_shift_ms)
        assert (kaldi.window_size, kaldi.window_shift) == (int(win), int(hop))
    assert FbankOptions(samp_freq=44100.0, frame_length_ms=1.0, window_samples=441).window_size == 441

"""The time-frequency PNGs of the commands, read back with Pillow (issue 23): what a person looks for.

The image is exactly ``--size`` for any channel count; the time axis covers the file (the image fills the panel
from its first pixel column to its last, and the layout maps them to 0 and the duration); two figures made with
one ``--vmin/--vmax`` give equal colours to equal dB; the cepstra are drawn per coefficient with integer ticks;
Kaldi's fbank rows carry frequencies; ``--freq-scale log`` puts a tone at its log position; ``--filterbank-scale``
spaces the triangles by mel.  Colours are compared exactly (uint8 from one lookup table); pixel positions within
one pixel (rounding of a position to a pixel).
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from audiokit.plot import axes, raster, timefreq
from audiokit.plot.picture import TimeFreqPicture

PIL = pytest.importorskip("PIL.Image")
pytestmark = pytest.mark.skipif(not raster.available(), reason="Pillow without FreeType or no DejaVu Sans")

SR = 16000


def _write(path, signal, sr=SR):
    sf.write(path, np.asarray(signal, dtype=np.float64).T, sr, subtype="PCM_16")
    return path


def _tone(freq, seconds=1.0, amp=0.5, sr=SR):
    t = np.arange(int(seconds * sr)) / sr
    return amp * np.sin(2 * np.pi * freq * t)


def _pixels(path):
    with PIL.open(path) as image:
        return np.asarray(image.convert("RGB"))


@pytest.fixture
def captured(monkeypatch):
    """The images and the picture's fields (a dict) of every :func:`render_timefreq` call (the PNG is still drawn)."""
    calls = []
    real = timefreq.render_timefreq

    def spy(images, picture):
        calls.append((images, vars(picture)))
        return real(images, picture)

    monkeypatch.setattr(timefreq, "render_timefreq", spy)
    return calls


@pytest.mark.parametrize("command", ["spectrogram", "mel", "mfcc"])
@pytest.mark.parametrize("channels", [1, 2, 6])
def test_png_is_exactly_size_for_any_channel_count(cli, tmp_path, command, channels):
    signal = np.stack([_tone(300 * (c + 1), 0.5) for c in range(channels)])
    src = _write(tmp_path / "in.wav", signal)
    for size in ("800x400", "300x200"):
        png = tmp_path / f"{command}{size}.png"
        code, _, err = cli(command, src, "-o", png, "--size", size)
        assert code == 0, err
        with PIL.open(png) as image:
            assert image.size == tuple(int(v) for v in size.split("x"))


def test_time_axis_runs_from_zero_to_the_duration(cli, tmp_path, captured):
    # 2 s at 16 kHz under a 256 ms window: frame centres 0.128 .. 1.872 s; the picture must span 0 .. 2 s
    t = np.arange(2 * SR) / SR
    src = _write(tmp_path / "chirp.wav", 0.5 * np.sin(2 * np.pi * (100 * t + 1700 * t**2)))
    png = tmp_path / "c.png"
    code, _, err = cli("spectrogram", src, "--win", "256ms", "--hop", "32ms", "-o", png, "--size", "800x400")
    assert code == 0, err
    ((_, kw),) = captured
    assert kw["t_start"] == 0.0 and kw["t_end"] == pytest.approx(2.0, abs=1e-12)
    assert kw["x_edges"][0] == 0.0 and kw["x_edges"][-1] == pytest.approx(2.0, abs=1e-12)
    layout = raster.figure_layout(
        raster._Canvas(800, 400),
        n_panels=1,
        x_axis=axes.Axis(kw["t_start"], kw["t_end"]),
        y_axis=axes.Axis(*kw["y_range"]),
        vmin=-80.0,
        vmax=0.0,
        title=kw["title"],
        colorbar_label=kw["colorbar_label"],
        ylabel="frequency (Hz)",
        size=(800, 400),
    )
    x0, y0, x1, y1 = layout.panels[0]
    assert layout.x_ticks[0] == (0.0, x0) and layout.x_pixel(2.0) == x1 - 1
    pixels = _pixels(png)
    lut = raster.colormap_lut("magma")
    # the chirp's bright ridge reaches both edges of the panel: the frames fill 0 .. 2 s
    bright = np.abs(pixels[y0:y1, x0:x1].astype(int) - lut[255]).sum(axis=2) < 60
    columns = np.flatnonzero(bright.any(axis=0))
    assert columns[0] == 0 and columns[-1] == x1 - x0 - 1


def test_kaldi_frames_cover_the_file_too(cli, tmp_path, captured):
    src = _write(tmp_path / "a.wav", _tone(440, 1.0))
    code, _, err = cli("mel", src, "--compat", "kaldi", "-o", tmp_path / "k.png")
    assert code == 0, err
    ((_, kw),) = captured
    assert kw["x_edges"][0] == 0.0 and kw["t_end"] == pytest.approx(1.0, abs=1e-12)
    # frequency labels on the bands, as the mel PNG has, and the framing in ms and samples
    positions, labels = kw["mel_ticks"]
    assert "1k" in labels and "500" in labels and kw["ylabel"] == "frequency (Hz, mel-spaced)"
    assert "win 400 (25 ms), hop 160 (10 ms)" in kw["title"]


def test_two_figures_with_one_vmin_vmax_map_equal_db_to_equal_colours(cli, tmp_path):
    quiet = _tone(1000, 1.0, amp=0.05)
    both = quiet + _tone(3000, 1.0, amp=0.8)  # a louder tone: the maximum of the second file only
    dirs = [tmp_path / "a", tmp_path / "b"]
    for folder, signal in zip(dirs, (quiet, both), strict=True):
        folder.mkdir()
        _write(folder / "x.wav", signal)  # one name: one title, one layout
    shared = [_pixels(self_png) for self_png in _draw(cli, dirs, "--vmin", "-20", "--vmax", "70")]
    own = [_pixels(png) for png in _draw(cli, dirs)]
    row = _brightest_row(shared[0])  # the 1000 Hz tone's row in the panel
    middle = slice(300, 600)
    assert np.array_equal(shared[0][row, middle], shared[1][row, middle])  # the same dB, the same colour
    assert not np.array_equal(own[0][row, middle], own[1][row, middle])  # each scaled to its own maximum: not


def _draw(cli, dirs, *args):
    pngs = []
    for folder in dirs:
        png = folder / "x.png"
        code, _, err = cli("spectrogram", folder / "x.wav", "-o", png, *args)
        assert code == 0, err
        pngs.append(png)
    return pngs


def _brightest_row(pixels):
    """The pixel row of the panel whose middle reads highest on magma (rows with white -- margins, text -- skipped)."""
    lut = raster.colormap_lut("magma").astype(int)
    middle = pixels[:, 300:600].astype(int)
    codes = np.abs(middle[:, :, None, :] - lut[None, None]).sum(axis=3).argmin(axis=2).mean(axis=1)
    codes[(middle == 255).all(axis=2).any(axis=1)] = -1
    return int(np.argmax(codes))


def test_vmin_vmax_default_the_png_to_absolute_db(cli, tmp_path, captured):
    src = _write(tmp_path / "a.wav", _tone(1000))
    assert cli("spectrogram", src, "-o", tmp_path / "a.png", "--vmin", "0", "--vmax", "60")[0] == 0
    assert cli("spectrogram", src, "-o", tmp_path / "b.png", "--vmin", "-60", "--vmax", "0", "--ref", "max")[0] == 0
    (_, absolute), (_, re_max) = captured
    assert absolute["colorbar_label"] == "dB re 1" and (absolute["vmin"], absolute["vmax"]) == (0.0, 60.0)
    assert re_max["colorbar_label"] == "dB re max"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--vmin", "10", "--vmax", "0"], "--vmin 10 must be below --vmax 0"),
        (["--vmin", "nan"], "--vmin: nan is not a finite number"),
        (["--freq-scale", "mel"], "--freq-scale"),
    ],
)
def test_bad_colour_and_scale_options_are_usage_errors(cli, tmp_path, args, message):
    src = _write(tmp_path / "a.wav", _tone(1000, 0.2))
    code, out, err = cli("spectrogram", src, "-o", tmp_path / "a.png", *args)
    assert code == 2 and out == "" and message in err and "Traceback" not in err
    assert not (tmp_path / "a.png").exists()


def test_mfcc_is_drawn_per_coefficient_with_integer_ticks(cli, tmp_path, captured):
    t = np.arange(SR) / SR
    src = _write(tmp_path / "a.wav", 0.5 * np.sin(2 * np.pi * (200 * t + 1500 * t**2)))
    code, _, err = cli("mfcc", src, "-o", tmp_path / "m.png")
    assert code == 0, err
    ((images, kw),) = captured
    assert kw["y_integer"] and kw["ylabel"] == "coefficient" and kw["cmap"] == "RdBu_r"
    assert (kw["vmin"], kw["vmax"]) == (-1.0, 1.0)
    # every coefficient uses the whole colour range: c0 (hundreds) no longer flattens c1 ...
    np.testing.assert_allclose(np.abs(images[0]).max(axis=1), 1.0, rtol=0, atol=1e-12)
    code, _, err = cli("mfcc", src, "-o", tmp_path / "r.png", "--vmin", "-300", "--vmax", "300", "--cmap", "viridis")
    assert code == 0, err
    raw, kw = captured[1]
    assert (kw["vmin"], kw["vmax"], kw["cmap"]) == (-300.0, 300.0, "viridis") and np.abs(raw).max() > 1.5


def test_log_frequency_axis_puts_a_tone_at_its_log_position(cli, tmp_path):
    src = _write(tmp_path / "a.wav", _tone(1000, 1.0))
    png = tmp_path / "a.png"
    code, _, err = cli(
        "spectrogram",
        src,
        "--nfft",
        "2048",
        "--win",
        "2048",
        "--hop",
        "512",
        "--freq-scale",
        "log",
        "-o",
        png,
        "--size",
        "800x400",
    )
    assert code == 0, err
    pixels = _pixels(png)
    row = _brightest_row(pixels)
    layout = raster.figure_layout(
        raster._Canvas(800, 400),
        n_panels=1,
        x_axis=axes.Axis(0.0, 1.0),
        y_axis=axes.Axis(SR / 2048 / 2, SR / 2, "log"),
        vmin=-80.0,
        vmax=0.0,
        title="a.wav — spectrogram, sr 16000 Hz, win 2048 (128 ms), hop 512 (32 ms), n_fft 2048, hann",
        colorbar_label="dB re max",
        ylabel="frequency (Hz, log)",
        size=(800, 400),
    )
    _, y0, _, y1 = layout.panels[0]
    expected = y1 - float(layout.y_axis.frac(1000.0)) * (y1 - y0)
    assert abs(row - expected) <= 3  # the 1000 Hz bin is 7.8 Hz wide: ~1.5 px on this axis, plus rounding
    ticks = [v for v, _ in layout.y_ticks[0]]
    assert len(ticks) >= 3 and all(f"{v:g}"[0] in "125" and set(f"{v:g}"[1:]) <= {"0"} for v in ticks)


def test_filterbank_scale_mel_spaces_the_triangles(cli, tmp_path):
    src = _write(tmp_path / "a.wav", _tone(440, 0.1))
    pngs = {}
    for scale in ("mel", "linear"):
        pngs[scale] = tmp_path / f"{scale}.png"
        code, _, err = cli("mel", src, "--filterbank", "--nfft", "512", "--filterbank-scale", scale, "-o", pngs[scale])
        assert code == 0, err
        with PIL.open(pngs[scale]) as image:
            assert image.size == (1200, 600)
    assert not np.array_equal(_pixels(pngs["mel"]), _pixels(pngs["linear"]))
    code, _, err = cli("mel", src, "--filterbank", "--filterbank-scale", "bark", "-o", tmp_path / "x.png")
    assert code == 2 and "--filterbank-scale" in err and "bark" in err


def test_filterbank_mel_axis_gives_equal_mel_widths():
    matplotlib = pytest.importorskip("matplotlib")  # noqa: F841 (the filter bank is a matplotlib figure)
    from audiokit.dsp.mel import hz_to_mel, mel_filterbank
    from audiokit.plot.figure import filterbank_figure

    bank = mel_filterbank(sr=16000, n_fft=4096, n_mels=20)
    freqs = np.arange(bank.shape[1]) * 16000 / 4096
    ax = filterbank_figure(bank, freqs, title="t", mel_scale="htk").axes[0]
    x = ax.lines[0].get_xdata()
    np.testing.assert_allclose(x, hz_to_mel(freqs, scale="htk"), rtol=1e-12)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[:3] == ["0", "100", "200"] and "1k" in labels


def test_mel_duplicate_bands_warn_once_with_the_remedy(cli, tmp_path):
    src = _write(tmp_path / "a.wav", _tone(440, 0.5))
    # 79 bands on 40 Hz bins (n_fft 400 at 16 kHz): one warning line per run, with the remedy
    code, _, err = cli("mel", src, "-o", tmp_path / "a.png", "--n-mels", "79")
    assert code == 0 and err.count("\n") == 1 and "built from the same DFT bins" in err and "larger n_fft (--nfft" in err
    code, _, err = cli("mel", src, "-o", tmp_path / "b.png", "--n-mels", "79", "--nfft", "2048")
    assert (code, err) == (0, "")


@pytest.mark.parametrize("n_panels", [1, 6])
def test_the_matplotlib_path_draws_the_same_axes_at_exactly_size(n_panels):
    pytest.importorskip("matplotlib")
    import io

    from audiokit.plot.figure import png_bytes, spectrogram_figure

    images = np.random.default_rng(3).uniform(-80, 0, (n_panels, 40, 30))
    edges = axes.frame_time_edges(np.arange(31), first_centre=0.128, hop=0.032, duration=1.2)
    fig = spectrogram_figure(
        images,
        TimeFreqPicture(
            t_start=0.0,
            t_end=1.2,
            x_edges=edges,
            f_low=-12.5,
            f_high=987.5,
            y_range=(12.5, 987.5),
            y_scale="log",
            title="t",
            size=(800, 400),
            vmin=-60.0,
            vmax=0.0,
        ),
    )
    ax = fig.axes[0]
    assert ax.get_xlim() == (0.0, 1.2) and ax.get_yscale() == "log" and ax.get_ylim() == pytest.approx((12.5, 987.5))
    with PIL.open(io.BytesIO(png_bytes(fig))) as image:
        assert image.size == (800, 400)
    fig = spectrogram_figure(
        images[:1], TimeFreqPicture(t_start=0.0, t_end=1.2, f_low=-0.5, f_high=39.5, title="t", y_integer=True)
    )
    fig.canvas.draw()
    ticks = [t for t in fig.axes[0].get_yticks() if -0.5 <= t <= 39.5]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_mel_and_kaldi_fbank_take_vmin_vmax(cli, tmp_path, captured):
    src = _write(tmp_path / "a.wav", _tone(1000, 0.5))
    code, _, err = cli("mel", src, "--nfft", "1024", "--vmin", "-30", "--vmax", "50", "-o", tmp_path / "m.png")
    assert code == 0, err
    code, _, err = cli("mel", src, "--compat", "kaldi", "--vmin", "0", "--vmax", "25", "-o", tmp_path / "k.png")
    assert code == 0, err
    (_, mel), (_, kaldi) = captured
    assert (mel["vmin"], mel["vmax"], mel["colorbar_label"]) == (-30.0, 50.0, "dB re 1")
    assert (kaldi["vmin"], kaldi["vmax"], kaldi["colorbar_label"]) == (0.0, 25.0, "ln energy")

"""What a data-only run imports: the start-up levers stay pulled (no timing: the modules present at the end).

Each case runs ``python -m audiokit`` in a subprocess (a fresh interpreter: an in-process run would see whatever the
test session imported) through a small driver that runs :func:`audiokit.cli.app.main` and then writes the names
in ``sys.modules`` to a file (a package counts when its ``__init__`` ran: ``scipy.signal._sosfilt`` or
``scipy.fft._pocketfft.pypocketfft`` loaded alone, without their packages, do not); stdout and stderr stay the command's own, so the case also checks that the run
succeeded with its data on stdout and nothing (or only its own lines) on stderr.

Guarded, with what each one costs a 12 s job on this machine (benchmarks/cli_startup.py):

* ``rich`` (~20-30 ms): only to show a help text, print a table on stdout, draw a progress bar on a terminal
  (``audiokit.cli.root.literal_when_shown``, :mod:`audiokit.cli.console`); never for ``--json`` or an error line;
* ``rich.progress``: never with stderr not a terminal;
* ``scipy.fft`` (~0.05 CPU-s on top of scipy.special, ~0.25 alone): pitch's pocketfft autocorrelation loads the
  extension alone (:mod:`audiokit.engine.pocketfft_core`);
* ``scipy`` entirely for info/spectrum/mel/spectrogram, ``scipy.signal`` for loudness (its sosfilt kernel is
  loaded alone);
* ``matplotlib`` (~0.45 CPU-s) for every command here (the spectrogram and waveform PNGs are drawn with Pillow);
  ``PIL`` for commands that draw nothing;
* ``pydantic`` (Typer's value conversion, :func:`audiokit.cli.typer_hooks.fast_coercion`);
* the ``pyfftw`` package (its ``__init__`` imports scipy.fft and dask; the engine loads ``pyfftw.pyfftw`` alone, and
  not at all for a command without a DFT: info, stats, loudness), ``soxr`` (resampling only).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytestmark = pytest.mark.slow

DRIVER = (
    "import sys\n"
    "from audiokit.cli.app import main\n"
    "code = main(sys.argv[2:])\n"
    "sys.stdout.flush()\n"
    "open(sys.argv[1], 'w').write('\\n'.join(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)

NEVER = {"matplotlib", "pydantic", "pyfftw", "soxr"}  # pyfftw: the package (its __init__); soxr: resampling only


def _modules(tmp_path: Path, *args: str) -> tuple[int, bytes, str, set[str]]:
    """Exit code, stdout, stderr of ``audiokit ARGS`` and the modules imported by its end."""
    listing = tmp_path / "modules.txt"
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(listing), *args],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**os.environ, "COLUMNS": "100"},
        timeout=120,
    )
    return proc.returncode, proc.stdout, proc.stderr.decode(), set(listing.read_text().split("\n"))


@pytest.fixture
def speech(tmp_path: Path) -> str:
    """A 2 s 16 kHz mono PCM_16 WAV: a 150 Hz harmonic tone with a gliding pitch, then 0.5 s of silence."""
    sr = 16000
    t = np.arange(int(1.5 * sr)) / sr
    phase = 2 * np.pi * np.cumsum(150 + 30 * t) / sr
    y = np.concatenate([0.3 * np.sin(phase) + 0.1 * np.sin(2 * phase), np.zeros(sr // 2)])
    sf.write(tmp_path / "speech.wav", y, sr, subtype="PCM_16")
    return "speech.wav"


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (["info", "{f}", "--json"], {"rich", "scipy", "PIL", "pyfftw.pyfftw"}),
        (["spectrum", "{f}", "--json"], {"rich", "scipy", "PIL"}),
        (["pitch", "{f}", "--json"], {"rich", "scipy.fft", "scipy.signal", "PIL"}),
        (["pitch", "{f}", "--method", "yin", "--json"], {"rich", "scipy.fft", "scipy.signal", "PIL"}),
        (["mel", "{f}", "--npy", "out.npy", "-q"], {"rich", "scipy", "PIL"}),
        (["spectrogram", "{f}", "-o", "out.png", "-q"], {"rich", "scipy"}),
        (["waveform", "{f}", "-o", "out.png", "--json"], {"rich", "scipy"}),
        (["stats", "{f}"], {"rich.progress", "scipy", "pyfftw.pyfftw"}),
        (["loudness", "{f}"], {"rich.progress", "scipy.signal", "PIL", "pyfftw.pyfftw"}),
        (["info", "{f}", "--no-such-option"], {"rich"}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_a_data_run_imports_only_what_it_uses(tmp_path, speech, args, absent):
    code, out, err, names = _modules(tmp_path, *(a.format(f=speech) for a in args))
    if "--no-such-option" in args:  # a usage error: one plain line, no rich
        assert code == 2 and out == b"" and err.count("\n") == 1 and err.startswith("error: No such option"), err
    else:
        assert code == 0, err
        assert out, "the data is on stdout"
    assert "typer" in names or code == 2  # the CLI ran for real
    imported = sorted((absent | NEVER) & names)
    assert not imported, f"audiokit {' '.join(args)} imported {imported}"


def test_the_guard_sees_imports(tmp_path, speech):
    """The check can fail: a help text imports rich, and the spectrum PNG matplotlib."""
    code, out, _, names = _modules(tmp_path, "info", "--help")
    assert code == 0 and b"--json" in out and "rich" in names
    code, _, err, names = _modules(tmp_path, "spectrum", speech, "-o", "w.png", "-q")
    assert code == 0, err
    assert "matplotlib" in names and (tmp_path / "w.png").stat().st_size > 0

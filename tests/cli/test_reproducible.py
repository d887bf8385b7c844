"""Same input, options and version: the same bytes from every process, whatever its cache (issue 17).

Each command runs in six processes started together (so they load the two cores while they plan), each with
its own fresh ``XDG_CACHE_HOME``, and every output file must be byte-identical.  Before 0.2.0 FFTW_MEASURE chose
plans by timing and cached them as wisdom: six fresh caches gave three different ``.mel.npy`` files.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Six fresh processes per case, each with an empty cache.
pytestmark = pytest.mark.slow

SPEECH = Path(__file__).resolve().parents[2] / "examples" / "data" / "speech.wav"
PROCESSES = 6

COMMANDS = {
    "mel": ["mel", str(SPEECH), "--npy", "{out}/x.npy"],
    "spectrogram": ["spectrogram", str(SPEECH), "--win", "25ms", "--hop", "10ms", "--npy", "{out}/x.npy"],
    "mel-512": ["mel", str(SPEECH), "--nfft", "512", "--center", "--npy", "{out}/x.npy"],
    "spectrogram-2048": ["spectrogram", str(SPEECH), "--nfft", "2048", "--win", "2048", "--hop", "512", "--npy", "{out}/x.npy"],
    "mfcc-kaldi": ["mfcc", str(SPEECH), "--compat", "kaldi", "--npy", "{out}/x.npy"],
    "complex": ["spectrogram", str(SPEECH), "--center", "--complex", "--npy", "{out}/x.npy"],
}


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_six_fresh_processes_write_the_same_bytes(tmp_path, name):
    procs = []
    for i in range(PROCESSES):
        out = tmp_path / f"run{i}"
        out.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIOKIT_")}
        env["XDG_CACHE_HOME"] = str(tmp_path / f"cache{i}")  # fresh, and never written (no wisdom file)
        args = [a.format(out=out) for a in COMMANDS[name]]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "audiokit", *args, "-q"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    digests = [_digests(tmp_path / f"run{i}") for i in range(PROCESSES)]
    assert set(digests[0]) == {"x.npy", "x.json"}
    assert all(d == digests[0] for d in digests), digests
    assert not any((tmp_path / f"cache{i}").exists() for i in range(PROCESSES))

"""An input is never overwritten through standard input (issue 20).

``audiokit dehum - -o in.wav < in.wav`` used to exit 0 and replace ``in.wav``.  Every command that reads ``-`` and
writes a file refuses an output that is the regular file standard input reads (same device and inode, also through a
symbolic or hard link; also a PNG, ``.npy`` or sidecar output), before any work, as it refuses a named input: exit 4,
one line.  A pipe is never the output file, and ``-o -`` writes no file.  Real processes with a real file as stdin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

SR = 16000
REFUSED = "refusing to overwrite an input"

# every command that reads ``-`` and writes a file, with the options that make it write ``TARGET``
WRITERS = {
    "dehum": ["dehum", "-", "--freq", "50", "-o", "{target}.wav"],
    "dehum --residual": ["dehum", "-", "--freq", "50", "-o", "clean.wav", "--residual", "{target}.wav"],
    "resample": ["resample", "-", "--to", "8k", "-o", "{target}.wav"],
    "quantize": ["quantize", "-", "--bits", "8", "-o", "{target}.wav"],
    "spectrogram png": ["spectrogram", "-", "-o", "{target}.png"],
    "spectrogram npy": ["spectrogram", "-", "--npy", "{target}.npy"],
    "spectrogram sidecar": ["spectrogram", "-", "--npy", "{target}.npy", "--sidecar"],
    "mel png": ["mel", "-", "-o", "{target}.png"],
    "mel npy": ["mel", "-", "--npy", "{target}.npy"],
    "mfcc npy": ["mfcc", "-", "--npy", "{target}.npy"],
    "mfcc sidecar": ["mfcc", "-", "--npy", "{target}.npy", "--sidecar"],
    "spectrum png": ["spectrum", "-", "-o", "{target}.png"],
    "spectrum npy": ["spectrum", "-", "--npy", "{target}.npy"],
    "spectrum sidecar": ["spectrum", "-", "--npy", "{target}.npy", "--sidecar"],
}


def command(case: str, target: str) -> tuple[list[str], str]:
    """The argv of ``case`` writing ``target.<ext>``, and the file that must be the input (the sidecar for
    ``--sidecar``: ``target.json`` beside ``target.npy``)."""
    argv = [a.format(target=target) for a in WRITERS[case]]
    if argv[-1] == "--sidecar":
        return argv[:-1], f"{target}.json"
    written = next(a for a in argv if a.startswith(target + "."))
    return argv, written


def audiokit(argv: list[str], cwd: Path, stdin) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "audiokit", *argv],
        stdin=stdin,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )


@pytest.fixture
def wav(tmp_path: Path) -> Path:
    """A 1 s 16 kHz tone with a 50 Hz hum, PCM_16: every command above works on it and changes it."""
    t = np.arange(SR) / SR
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 50 * t)
    path = tmp_path / "in.wav"
    sf.write(path, x, SR, subtype="PCM_16")
    return path


def snapshot(path: Path) -> tuple[int, int, bytes]:
    info = os.stat(path)
    return info.st_ino, info.st_mtime_ns, path.read_bytes()


def assert_refused(proc: subprocess.CompletedProcess, shown: str) -> None:
    err = proc.stderr.decode()
    assert (proc.returncode, proc.stdout) == (4, b""), err
    assert err == f"error: {shown}: output is the file standard input reads; {REFUSED}\n"


def leftovers(folder: Path, *keep: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@pytest.mark.parametrize("case", list(WRITERS))
def test_an_output_hard_linked_to_stdin_is_refused(case: str, wav: Path, tmp_path: Path) -> None:
    argv, written = command(case, "out")
    os.link(wav, tmp_path / written)  # the output name is another name of the file stdin reads
    before = snapshot(wav)
    with open(wav, "rb") as stdin:
        proc = audiokit(argv, tmp_path, stdin)
    assert_refused(proc, written)
    assert snapshot(wav) == before
    assert leftovers(tmp_path, "in.wav", written) == []


@pytest.mark.parametrize("case", ["dehum", "resample", "quantize", "spectrogram npy", "mel png", "spectrum sidecar"])
def test_the_output_named_as_stdin_is_refused(case: str, wav: Path, tmp_path: Path) -> None:
    argv, written = command(case, "in")
    if written != "in.wav":  # a PNG/.npy/sidecar output: the same file under the name the command requires
        os.link(wav, tmp_path / written)
    before = snapshot(wav)
    with open(wav, "rb") as stdin:
        proc = audiokit(argv, tmp_path, stdin)
    assert_refused(proc, written)
    assert snapshot(wav) == before


def test_the_report_case_dehum_into_its_stdin(wav: Path, tmp_path: Path) -> None:
    """The issue's command, verbatim: ``audiokit dehum - -o in.wav < in.wav``."""
    before = snapshot(wav)
    with open(wav, "rb") as stdin:
        proc = audiokit(["dehum", "-", "-o", "in.wav"], tmp_path, stdin)
    assert_refused(proc, "in.wav")
    assert snapshot(wav) == before
    assert leftovers(tmp_path, "in.wav") == []


def test_an_output_symlinked_to_stdin_is_refused(wav: Path, tmp_path: Path) -> None:
    (tmp_path / "link.wav").symlink_to(wav)
    before = snapshot(wav)
    with open(wav, "rb") as stdin:
        proc = audiokit(["resample", "-", "--to", "8k", "-o", "link.wav"], tmp_path, stdin)
    assert_refused(proc, "link.wav")
    assert snapshot(wav) == before and (tmp_path / "link.wav").is_symlink()


def test_stdin_redirected_through_a_symlink_is_its_target(wav: Path, tmp_path: Path) -> None:
    (tmp_path / "link.wav").symlink_to(wav)
    before = snapshot(wav)
    with open(tmp_path / "link.wav", "rb") as stdin:
        proc = audiokit(["quantize", "-", "--bits", "8", "-o", str(wav)], tmp_path, stdin)
    assert_refused(proc, str(wav))
    assert snapshot(wav) == before


def test_an_output_in_another_folder_by_absolute_path_is_refused(wav: Path, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    before = snapshot(wav)
    with open(wav, "rb") as stdin:
        proc = audiokit(["mel", "-", "--npy", "../feat.npy"], tmp_path / "sub", stdin)
    assert proc.returncode == 0, proc.stderr.decode()  # a new file: nothing to refuse
    os.link(wav, tmp_path / "again.npy")
    with open(wav, "rb") as stdin:
        proc = audiokit(["mel", "-", "--npy", str(tmp_path / "again.npy")], tmp_path / "sub", stdin)
    assert_refused(proc, str(tmp_path / "again.npy"))
    assert snapshot(wav) == before


@pytest.mark.parametrize("case", list(WRITERS))
def test_stdin_into_another_file_still_works(case: str, wav: Path, tmp_path: Path) -> None:
    argv, written = command(case, "other")
    before = snapshot(wav)
    with open(wav, "rb") as stdin:
        proc = audiokit(argv, tmp_path, stdin)
    assert proc.returncode == 0, proc.stderr.decode()
    assert (tmp_path / written).stat().st_size > 0
    assert snapshot(wav) == before


def test_a_copy_of_stdin_is_another_file(wav: Path, tmp_path: Path) -> None:
    """Same bytes, another inode: not the input, so it is replaced as any output is."""
    copy = tmp_path / "copy.wav"
    copy.write_bytes(wav.read_bytes())
    with open(wav, "rb") as stdin:
        proc = audiokit(["resample", "-", "--to", "8k", "-o", "copy.wav"], tmp_path, stdin)
    assert proc.returncode == 0, proc.stderr.decode()
    assert sf.info(copy).samplerate == 8000


def test_dash_o_with_a_file_as_stdin_writes_no_file(wav: Path, tmp_path: Path) -> None:
    before = snapshot(wav)
    with open(wav, "rb") as stdin:
        proc = audiokit(["resample", "-", "--to", "8k", "-o", "-"], tmp_path, stdin)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout[:4] == b"RIFF" and snapshot(wav) == before


def test_a_pipe_is_never_the_output_file(wav: Path, tmp_path: Path) -> None:
    """``cat in.wav | audiokit resample - -o in.wav``: stdin is a pipe, spooled whole before any write; the output
    is written as asked (the input the command reads is the pipe, not ``in.wav``)."""
    proc = subprocess.run(
        [sys.executable, "-m", "audiokit", "resample", "-", "--to", "8k", "-o", "in.wav"],
        input=wav.read_bytes(),
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert sf.info(wav).samplerate == 8000


def test_istft_and_griffinlim_of_a_spectrogram_made_from_stdin_are_not_refused(tmp_path):
    """Their sidecar's ``source`` is ``-`` (the spectrogram read stdin): that names no file, so a redirected stdin
    of istft/griffinlim (which read no audio) is never "the input" -- the output is written."""
    import soundfile as sf

    wav = tmp_path / "in.wav"
    sf.write(wav, np.sin(np.arange(8000) * 0.05).astype(np.float32), 8000, subtype="PCM_16")
    spec, mag = tmp_path / "spec.npy", tmp_path / "mag.npy"
    with open(wav, "rb") as stdin:
        run = subprocess.run([sys.executable, "-m", "audiokit", "spectrogram", "-", "--complex", "--npy", spec], stdin=stdin)
    assert run.returncode == 0
    with open(wav, "rb") as stdin:
        run = subprocess.run(
            [sys.executable, "-m", "audiokit", "spectrogram", "-", "--scale", "magnitude", "--npy", mag], stdin=stdin
        )
    assert run.returncode == 0
    for args in (["istft", spec], ["griffinlim", mag, "--iters", "2"]):
        out = tmp_path / f"{args[0]}.wav"
        out.write_bytes(wav.read_bytes())  # an existing file, and stdin is redirected from it
        with open(out, "rb") as stdin:
            run = subprocess.run(
                [sys.executable, "-m", "audiokit", *map(str, args), "-o", str(out)], stdin=stdin, capture_output=True, text=True
            )
        assert run.returncode == 0, run.stderr

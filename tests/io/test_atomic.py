"""audiokit.io.atomic: temp file + rename, stdout spooling, output path checks."""

from __future__ import annotations

import errno
import io
import os
import sys
import tempfile

import pytest

from audiokit.errors import OutputError, ParameterError
from audiokit.io import atomic as atomic_module
from audiokit.io import atomic_output, check_output_path, derived_output, is_stdio, write_bytes_atomic, write_text_atomic
from audiokit.io.atomic import describe_os_error


def test_success_moves_the_temp_file_into_place(tmp_path):
    dest = tmp_path / "out.npy"
    with atomic_output(dest) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.npy.audiokit-tmp-") and tmp.name.endswith(".npy")
        tmp.write_bytes(b"data")
        assert not dest.exists()
    assert dest.read_bytes() == b"data"
    assert list(tmp_path.iterdir()) == [dest]


def test_suffix_override(tmp_path):
    with atomic_output(tmp_path / "noext", suffix=".wav") as tmp:
        assert tmp.name.endswith(".wav")
        tmp.write_bytes(b"x")


def test_exception_leaves_nothing_and_propagates(tmp_path):
    with pytest.raises(ValueError, match="boom"):
        with atomic_output(tmp_path / "out.json") as tmp:
            tmp.write_bytes(b"partial")
            raise ValueError("boom")
    assert list(tmp_path.iterdir()) == []


def test_interrupt_leaves_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(tmp_path / "out.json") as tmp:
            tmp.write_bytes(b"partial")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_exception_keeps_the_previous_file(tmp_path):
    dest = tmp_path / "out.json"
    dest.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_output(dest) as tmp:
            tmp.write_text("new")
            raise RuntimeError
    assert dest.read_text() == "old"
    assert list(tmp_path.iterdir()) == [dest]


def test_rename_failure_disk_full(tmp_path, monkeypatch):
    def replace(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_module.os, "replace", replace)
    with pytest.raises(OutputError, match=r"out\.json: disk full \(no space left on device\); nothing was written$"):
        write_text_atomic(tmp_path / "out.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_writer_oserror_becomes_output_error(tmp_path):
    with pytest.raises(OutputError, match=r"out\.bin: disk quota exceeded; nothing was written$"):
        with atomic_output(tmp_path / "out.bin"):
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
    assert list(tmp_path.iterdir()) == []


def test_temp_file_cannot_be_created(tmp_path):
    with pytest.raises(OutputError, match=r"cannot create a file in '.*nowhere': No such file or directory"):
        with atomic_output(tmp_path / "nowhere" / "out.bin"):
            pytest.fail("the body must not run")


def test_stdout_gets_the_bytes_only_on_success(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer))
    write_bytes_atomic("-", b"\x00\x01binary")
    assert buffer.getvalue() == b"\x00\x01binary"
    with pytest.raises(RuntimeError):
        with atomic_output("-") as tmp:
            tmp.write_bytes(b"never shown")
            raise RuntimeError
    assert buffer.getvalue() == b"\x00\x01binary"
    assert list(tmp_path.iterdir()) == []


def test_broken_pipe_passes_through(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    class ClosedPipe(io.RawIOBase):
        def writable(self):
            return True

        def write(self, data):
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BufferedWriter(ClosedPipe())))
    with pytest.raises(BrokenPipeError):
        write_bytes_atomic("-", b"x" * 10)
    assert list(tmp_path.iterdir()) == []


def test_write_text_is_utf8(tmp_path):
    write_text_atomic(tmp_path / "t.json", '{"unit": "µs"}')
    assert (tmp_path / "t.json").read_bytes() == '{"unit": "µs"}'.encode()


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (errno.ENOSPC, "disk full (no space left on device); nothing was written"),
        (errno.EDQUOT, "disk quota exceeded; nothing was written"),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "permission denied"),
        (errno.EROFS, "read-only file system"),
        (errno.EIO, "Input/output error"),
    ],
)
def test_describe_os_error(code, text):
    assert describe_os_error(OSError(code, os.strerror(code))) == text


# --- check_output_path ----------------------------------------------------------------


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.wav"
    path.write_bytes(b"RIFF original input")
    return path


def test_output_equal_to_input_refused(source):
    with pytest.raises(OutputError, match=r"in\.wav: output is the input file; refusing to overwrite an input$"):
        check_output_path(source, [source])
    assert source.read_bytes() == b"RIFF original input"


def test_output_equal_to_input_by_another_spelling(source, monkeypatch):
    monkeypatch.chdir(source.parent)
    with pytest.raises(OutputError, match="refusing to overwrite an input"):
        check_output_path("./sub/../in.wav", [str(source)])


def test_output_hard_link_to_input_refused(source):
    link = source.parent / "alias.wav"
    os.link(source, link)
    with pytest.raises(OutputError, match="output is the input file"):
        check_output_path(link, ["-", source])


def test_output_symlink_to_input_refused(source):
    link = source.parent / "sym.wav"
    link.symlink_to(source)
    with pytest.raises(OutputError, match="output is the input file"):
        check_output_path(link, [source])


def test_other_outputs_accepted(source, tmp_path, monkeypatch):
    check_output_path(tmp_path / "out.wav", [source])
    check_output_path(source, ["-"])  # stdin is never the output
    check_output_path("-", [source])
    monkeypatch.chdir(tmp_path)
    check_output_path("bare.wav", [source])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.wav"]


def test_output_is_a_directory(tmp_path):
    with pytest.raises(OutputError, match=r": output is a directory$"):
        check_output_path(tmp_path)


def test_output_folder_missing(tmp_path):
    with pytest.raises(OutputError, match=r"out\.wav: output folder '.*missing' does not exist$"):
        check_output_path(tmp_path / "missing" / "out.wav")


def test_output_folder_not_writable(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic_module.os, "access", lambda path, mode: False)  # we run as root
    with pytest.raises(OutputError, match=r"out\.wav: output folder '.*' is not writable \(permission denied\)$"):
        check_output_path(tmp_path / "out.wav")


# --- derived_output, is_stdio --------------------------------------------------------


def test_derived_output(tmp_path):
    assert derived_output(tmp_path / "speech.wav", "spec", ".png") == tmp_path / "speech.spec.png"
    assert derived_output("a/b.c.flac", "mel", ".npy").as_posix() == "a/b.c.mel.npy"


def test_derived_output_from_stdin():
    with pytest.raises(ParameterError, match=r"reading standard input: give an output path with -o"):
        derived_output("-", "spec", ".png")


@pytest.mark.parametrize(("value", "expected"), [("-", True), (None, False), ("x.wav", False), ("--", False)])
def test_is_stdio(value, expected):
    assert is_stdio(value) is expected


# --------------------------------------------------------------------------- several outputs, all or nothing


def test_outputs_together_appear_only_at_the_end(tmp_path):
    from audiokit.io import outputs_together

    a, b = tmp_path / "a.npy", tmp_path / "a.json"
    with outputs_together():
        write_bytes_atomic(a, b"array")
        assert not a.exists()  # staged, not yet renamed
        write_text_atomic(b, "{}")
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == []
    assert a.read_bytes() == b"array" and b.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.npy"]


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_outputs_together_leave_nothing_on_failure(tmp_path, error):
    from audiokit.io import outputs_together

    (tmp_path / "a.npy").write_bytes(b"old")
    with pytest.raises(error):
        with outputs_together():
            write_bytes_atomic(tmp_path / "a.npy", b"new")
            write_bytes_atomic(tmp_path / "a.json", b"{}")
            raise error("while drawing the PNG")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy"]
    assert (tmp_path / "a.npy").read_bytes() == b"old"


def test_temp_names_say_whose_they_are(tmp_path):
    with atomic_output(tmp_path / "x.npy") as tmp:
        assert tmp.name.startswith(f".x.npy.audiokit-tmp-{os.getpid()}-")
        tmp.write_bytes(b"x")


@pytest.mark.slow
def test_stale_temps_of_dead_processes_are_removed_when_the_output_is_written_again(tmp_path):
    import subprocess

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".x.npy.audiokit-tmp-{dead_pid}-abcd1234.npy"
    alive = tmp_path / f".x.npy.audiokit-tmp-{os.getppid()}-abcd1234.npy"  # our parent is alive
    other = tmp_path / f".y.npy.audiokit-tmp-{dead_pid}-abcd1234.npy"  # another output's, same folder
    foreign = tmp_path / ".x.npy.someone-elses.tmp"
    for path in (stale, alive, other, foreign):
        path.write_bytes(b"partial")
    write_bytes_atomic(tmp_path / "x.npy", b"done")
    assert not stale.exists() and not other.exists()  # ours, of a dead process: gone
    assert alive.exists() and foreign.exists()


def test_check_distinct_names_both_options(tmp_path):
    from audiokit.io import check_distinct

    check_distinct({"-o": tmp_path / "x.png", "--npy": tmp_path / "x.npy", "the sidecar of --npy": tmp_path / "x.json"})
    with pytest.raises(ParameterError, match=r"-o and the sidecar of --npy name the same file"):
        check_distinct({"-o": tmp_path / "x.json", "--npy": tmp_path / "x.npy", "the sidecar of --npy": tmp_path / "x.json"})
    check_distinct({"-o": "-", "--npy": None, "--x": "-"})

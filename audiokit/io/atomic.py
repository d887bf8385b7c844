"""Atomic outputs: write to a temp file beside the destination, then rename.

Every file audiokit writes (WAV, PNG, .npy, JSON) goes through
:func:`atomic_output`.  The data is written to a hidden temp file in the
destination folder and moved into place with :func:`os.replace` only when
writing succeeded, so on any error, Ctrl-C or SIGTERM there is neither a partial
output nor a leftover temp file.  The path ``"-"`` means standard output: the
bytes are spooled and copied to stdout only on success.

Several outputs of one job are all-or-nothing: inside :func:`outputs_together`
every :func:`atomic_output` keeps its temp file and the renames happen together
when the block ends without an exception; otherwise every temp file is removed.

Temp files are named ``.<name>.audiokit-tmp-<pid>-<random><suffix>`` so a user
recognises them; one left by a process killed with SIGKILL is removed the next
time ``<name>`` is written, if its pid is no longer alive.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..errors import OutputError, ParameterError
from ..held import signals_held

STDIO = "-"
#: Marks audiokit's temp files: ``.<name>.audiokit-tmp-<pid>-<random><suffix>``.
TEMP_MARKER = ".audiokit-tmp-"
_TEMP_PID = re.compile(re.escape(TEMP_MARKER) + r"(\d+)-")


def is_stdio(path: str | os.PathLike | None) -> bool:
    """True when ``path`` is ``"-"`` (standard input or output)."""
    return path is not None and str(path) == STDIO


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _is_stdin_file(out: Path) -> bool:
    """True when standard input is redirected from the regular file ``out`` (same device and inode, so also
    through a symbolic or hard link); a pipe, terminal or closed stdin is never a file that can be written."""
    try:
        here = os.fstat(0)
        there = os.stat(out)
    except OSError:
        return False
    return stat.S_ISREG(here.st_mode) and (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def check_output_path(output: str | os.PathLike, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Refuse an output that cannot or must not be written, before any work.

    Parameters
    ----------
    output : str or PathLike
        The destination; ``"-"`` (stdout) is always acceptable.
    inputs : sequence of str or PathLike
        Input paths; the output must differ from each of them.  ``"-"`` is standard input: the output must
        not be the regular file it is redirected from (``cmd - -o in.wav < in.wav``).

    Raises
    ------
    OutputError
        When the output is an input file (or the file standard input reads), a directory, or its folder does not
        exist or is not writable.
    """
    if is_stdio(output) or is_stream_target(output):
        return
    out = Path(output)
    with contextlib.suppress(OSError):
        if stat.S_ISBLK(os.stat(out).st_mode):
            raise OutputError("output is a block device; refusing to write to it", out)
    for source in inputs:
        if is_stdio(source):
            if _is_stdin_file(out):
                raise OutputError("output is the file standard input reads; refusing to overwrite an input", out)
            continue
        src = Path(source)
        if _same_file(out, src) or out.resolve() == src.resolve():
            raise OutputError("output is the input file; refusing to overwrite an input", out)
    if out.is_dir():
        raise OutputError("output is a directory", out)
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"output folder {str(folder)!r} does not exist", out)
    if _read_only(folder):
        raise OutputError(f"output folder {str(folder)!r} is on a read-only file system", out)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {str(folder)!r} is not writable (permission denied)", out)


def _read_only(folder: Path) -> bool:
    """True when ``folder`` lies on a file system mounted read-only."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def describe_os_error(exc: OSError) -> str:
    """One-line reason for an OSError met while writing (disk full named as such)."""
    if exc.errno == errno.ENOSPC:
        return "disk full (no space left on device); nothing was written"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded; nothing was written"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


class _Staged:
    """Temp files of one :func:`outputs_together` block, waiting for their renames."""

    def __init__(self) -> None:
        self.files: list[tuple[Path, str | os.PathLike]] = []

    def commit(self) -> None:
        """Move every temp file into place, then copy what goes to standard output (or a FIFO, a device).

        The renames run with Ctrl-C and SIGTERM held (:func:`audiokit.held.signals_held`): a signal among them is
        acted on after the last one, so the files appear together.  The copies do not: a signal must still stop a
        write blocked on a reader that does not read.
        """
        renamed = [item for item in self.files if not (is_stdio(item[1]) or is_stream_target(item[1]))]
        streamed = [item for item in self.files if item not in renamed]
        try:
            with signals_held():
                for tmp, dest in renamed:
                    _finish(tmp, dest)
                    self.files.remove((tmp, dest))
            for tmp, dest in sorted(streamed, key=lambda item: is_stdio(item[1])):
                _finish(tmp, dest)
                self.files.remove((tmp, dest))
        finally:
            self.abort()

    def abort(self) -> None:
        """Remove every temp file still staged."""
        for tmp, _ in self.files:
            _unlink_temp(tmp)
        self.files.clear()


#: Temp files this process created and has neither renamed nor removed yet (see :func:`discard_live_temps`).
_LIVE: set[Path] = set()


class _Committed:
    """What this process moved into place: a count, the first few destinations and the last one (for
    "interrupted after writing X")."""

    #: How many destinations are named one by one.
    NAMED = 3

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []
        self.last: str | None = None

    def clear(self) -> None:
        self.count, self.first, self.last = 0, [], None

    def append(self, destination: str) -> None:
        self.count += 1
        if len(self.first) < self.NAMED:
            self.first.append(destination)
        self.last = destination

    def describe(self) -> str:
        """``a.npy``, ``a.npy, a.json``, or ``1500 outputs (the last: z.npy)``."""
        if self.count <= self.NAMED:
            return ", ".join(self.first)
        return f"{self.count} outputs (the last: {self.last})"


#: The outputs this process committed so far.
COMMITTED = _Committed()


def _unlink_temp(tmp: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    _LIVE.discard(tmp)


def discard_live_temps() -> list[Path]:
    """Remove every temp file of this process still on disk; return them.

    The safety net behind the context managers: a signal that lands inside ``contextlib`` machinery -- after
    :func:`atomic_output` made its temp file, before the caller's ``with`` (or ``ExitStack``) registered its exit
    -- would otherwise leave the file until the next write into that folder.  The CLI calls this when a run ends
    (by any exception or none), a pool worker when SIGTERM ends it.
    """
    removed = sorted(_LIVE)
    for tmp in removed:
        _unlink_temp(tmp)
    return removed


_STAGED: contextvars.ContextVar[_Staged | None] = contextvars.ContextVar("audiokit_staged_outputs", default=None)


@contextlib.contextmanager
def outputs_together() -> Iterator[None]:
    """Make every :func:`atomic_output` of the block appear together at its end, or none at all.

    Nested blocks join the outermost one.  On an exception (including
    KeyboardInterrupt and SIGTERM) every temp file is removed and the previous
    files at the destinations are kept.
    """
    if _STAGED.get() is not None:
        yield
        return
    staged = _Staged()
    token = _STAGED.set(staged)
    try:
        try:
            yield
        finally:
            _STAGED.reset(token)
        staged.commit()
    except BaseException:
        staged.abort()  # also when a signal lands between the block's end and the commit
        raise


def pid_alive(pid: int) -> bool:
    """True when a process ``pid`` exists on this host (or exists and we may not signal it: ``EPERM``).

    ``os.kill(pid, 0)`` sends no signal, only checks; a zombie (dead, not yet reaped) counts as alive.  The one
    check behind every "is the process that left this still running?" of audiokit: temp files, staging folders, the
    lock object of a remote batch.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temps(folder: Path) -> list[Path]:
    """Remove audiokit temp files in ``folder`` whose writing process is dead (once per folder and process).

    A file counts only by its name (``.<name>.audiokit-tmp-<pid>-...``) and a pid that no longer runs here;
    the folder is scanned the first time this process writes into it (a batch writes thousands of files into
    a few folders), so later writes cost nothing.
    """
    removed: list[Path] = []
    key = os.path.abspath(folder)
    if key in _SWEPT_FOLDERS:
        return removed
    _SWEPT_FOLDERS.add(key)
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(".") and TEMP_MARKER in e.name]
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_PID.search(entry.name)
        if match and int(match.group(1)) != os.getpid() and not pid_alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


#: Folders this process has already swept of stale temp files.
_SWEPT_FOLDERS: set[str] = set()


def is_stream_target(path: str | os.PathLike) -> bool:
    """True for outputs that are written straight through, never renamed onto: a FIFO, a character device
    (``/dev/null``) or a ``/dev/fd/N`` path (bash's ``>(cmd)``)."""
    text = str(path)
    if text.startswith(("/dev/fd/", "/proc/self/fd/")):
        return True
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _finish(tmp: Path, path: str | os.PathLike) -> None:
    """Move a finished temp file to ``path`` (or copy it to stdout for ``-``, or into a FIFO/device)."""
    try:
        if is_stdio(path):
            with open(tmp, "rb") as src:
                shutil.copyfileobj(src, sys.stdout.buffer, 2**20)
            sys.stdout.buffer.flush()
            _unlink_temp(tmp)  # spooled in the temp folder: done with it (also when staged)
        elif is_stream_target(path):
            with open(tmp, "rb") as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst, 2**20)
            _unlink_temp(tmp)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, Path(path))
            _LIVE.discard(tmp)
        COMMITTED.append(str(path))
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise OutputError(describe_os_error(exc), path) from exc


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temp path to write; move it to ``path`` when the block succeeds.

    Parameters
    ----------
    path : str or PathLike
        Final destination, or ``"-"`` for standard output.
    suffix : str, optional
        Suffix for the temp file (some writers pick the format from it);
        defaults to the destination's suffix.

    Yields
    ------
    Path
        Where to write.  For ``"-"`` a temp file whose bytes are copied to
        ``sys.stdout.buffer`` on success.

    Raises
    ------
    OutputError
        When the temp file cannot be created or the rename fails (disk full,
        permission denied, ...).  The temp file is removed in every case.

    Notes
    -----
    Inside :func:`outputs_together` the rename waits for the end of that block.
    """
    if is_stdio(path) or is_stream_target(path):
        # spooled in the temp folder: a pipe or device cannot be renamed onto (nor seeked for a WAV header)
        folder = Path(tempfile.gettempdir())
        stem = "audiokit-stdout" if is_stdio(path) else "audiokit-stream"
        suffix = suffix or (Path(str(path)).suffix if not is_stdio(path) else "")
    else:
        dest = Path(path)
        folder = dest.parent if str(dest.parent) else Path(".")
        stem = dest.name
        suffix = suffix if suffix is not None else dest.suffix
        remove_stale_temps(folder)
    staged = _STAGED.get()
    kept = False
    # The name is chosen before the file exists, so the cleanup below knows it whenever a signal lands.
    tmp = folder / f".{stem}{TEMP_MARKER}{os.getpid()}-{os.urandom(4).hex()}{suffix}"
    try:
        _create_exclusive(tmp, path)
        yield tmp
        if staged is not None:
            staged.files.append((tmp, path))
            kept = True
        else:
            _finish(tmp, path)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise OutputError(describe_os_error(exc), path) from exc
    finally:
        if not kept:
            _unlink_temp(tmp)


def _create_exclusive(tmp: Path, path: str | os.PathLike) -> None:
    """Create the empty temp file ``tmp`` (it must not exist yet)."""
    _LIVE.add(tmp)  # before the file exists: a signal during the open still finds it in discard_live_temps()
    try:
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError as exc:
        _LIVE.discard(tmp)
        raise OutputError(f"cannot create a file in {str(tmp.parent)!r}: {describe_os_error(exc)}", path) from exc


def check_distinct(outputs: Mapping[str, str | os.PathLike | None]) -> None:
    """Refuse two outputs of one command that are the same file (before any work).

    Parameters
    ----------
    outputs : mapping
        ``{"-o": path, "--npy": path, "--npy's sidecar": path, ...}``; None and ``-`` entries are ignored.

    Raises
    ------
    ParameterError
        Naming both options and the path.
    """
    seen: dict[Path, str] = {}
    for option, path in outputs.items():
        if path is None or is_stdio(path):
            continue
        key = Path(path).resolve()
        if key in seen:
            raise ParameterError(f"{seen[key]} and {option} name the same file {str(path)!r}; give different paths")
        seen[key] = option


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` (or stdout for ``"-"``) atomically."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` (or stdout for ``"-"``) atomically."""
    write_bytes_atomic(path, text.encode("utf-8"))


def derived_output(input_path: str | os.PathLike, tag: str, suffix: str) -> Path:
    """Output path beside the input: ``speech.wav`` → ``speech.<tag><suffix>``.

    Raises
    ------
    ParameterError
        When the input is standard input or a URL (no local folder to write beside).
    """
    if is_stdio(input_path):
        raise ParameterError("reading standard input: give an output path with -o (or -o - for stdout)")
    from .remote import is_url

    if is_url(input_path):
        raise ParameterError("the input is a URL: give a local output path (-o PATH, or --npy/--png PATH where offered)")
    src = Path(input_path)
    return src.with_name(f"{src.stem}.{tag}{suffix}")

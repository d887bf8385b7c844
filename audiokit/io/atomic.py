"""Atomic outputs: write to a temp file beside the destination, then rename.

Every file audiokit writes (WAV, PNG, .npy, JSON) goes through
:func:`atomic_output`.  The data is written to a hidden temp file in the
destination folder and moved into place with :func:`os.replace` only when
writing succeeded, so on any error, Ctrl-C or SIGTERM there is neither a partial
output nor a leftover temp file.  The path ``"-"`` means standard output: the
bytes are spooled and copied to stdout only on success.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import OutputError, ParameterError

STDIO = "-"


def is_stdio(path: str | os.PathLike | None) -> bool:
    """True when ``path`` is ``"-"`` (standard input or output)."""
    return path is not None and str(path) == STDIO


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output_path(output: str | os.PathLike, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Refuse an output that cannot or must not be written, before any work.

    Parameters
    ----------
    output : str or PathLike
        The destination; ``"-"`` (stdout) is always acceptable.
    inputs : sequence of str or PathLike
        Input paths; the output must differ from each of them.

    Raises
    ------
    OutputError
        When the output is an input file, a directory, or its folder does not
        exist or is not writable.
    """
    if is_stdio(output):
        return
    out = Path(output)
    for source in inputs:
        if is_stdio(source):
            continue
        src = Path(source)
        if _same_file(out, src) or out.resolve() == src.resolve():
            raise OutputError("output is the input file; refusing to overwrite an input", out)
    if out.is_dir():
        raise OutputError("output is a directory", out)
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"output folder {str(folder)!r} does not exist", out)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {str(folder)!r} is not writable (permission denied)", out)


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
    """
    to_stdout = is_stdio(path)
    if to_stdout:
        folder = Path(tempfile.gettempdir())
        stem = "audiokit-stdout"
        suffix = suffix or ""
    else:
        dest = Path(path)
        folder = dest.parent if str(dest.parent) else Path(".")
        stem = dest.name
        suffix = suffix if suffix is not None else dest.suffix
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".tmp{suffix}", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot create a file in {str(folder)!r}: {describe_os_error(exc)}", path) from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        if to_stdout:
            with open(tmp, "rb") as src:
                shutil.copyfileobj(src, sys.stdout.buffer, 2**20)
            sys.stdout.buffer.flush()
        else:
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, dest)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise OutputError(describe_os_error(exc), path) from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


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
        When the input is standard input (no folder to write beside).
    """
    if is_stdio(input_path):
        raise ParameterError("reading standard input: give an output path with -o (or -o - for stdout)")
    src = Path(input_path)
    return src.with_name(f"{src.stem}.{tag}{suffix}")

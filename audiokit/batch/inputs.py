"""Which inputs a batch runs on, and the id that names each one's outputs.

Input forms (``audiokit batch COMMAND INPUTS...``):

* a file: taken as is (a bad file fails on its own, the batch goes on);
* a folder: walked recursively in sorted order; files whose name matches
  ``--glob`` (``fnmatch``, e.g. ``*.flac``), by default every extension
  soundfile reads (:func:`audio_extensions`); hidden files and folders
  (``.name``) and the batch's own output folder are skipped, and the other
  files not taken (``notes.txt``, ``clip.m4a``; a FIFO, socket or device
  named ``x.wav``, which would block the batch) are reported to the caller
  with the reason;
* ``@list.txt``: one path per line (blank lines and ``#`` comments skipped),
  UTF-8, lines split on ``\n`` only: a path keeps its spaces, ``\r``, ``\f``,
  U+2028 (a leading BOM is dropped, and ``\r`` at the end of every line of a
  CRLF list); invalid UTF-8 or a NUL is a usage error naming the line;
* ``-``: the same, read from standard input;
* a URL (``s3://bucket/a.flac``, ``https://host/x.wav``): an object, read
  remotely; a URL naming a prefix (``s3://bucket/corpus/``) is listed
  recursively as a folder is walked (``--glob``, the audio extensions, hidden
  names skipped); a list or manifest line may be a URL too (taken as an
  object: no request is made to expand it);
* ``--manifest in.jsonl``: one JSON object per line,
  ``{"id": ..., "path": ..., "start": seconds, "duration": seconds}``
  (``start``/``duration`` optional): segments of long recordings, named by
  their ``id`` (:func:`id_problem` says which ids are refused).

A batch's own outputs (:class:`OwnOutputs`: what its manifest lists, a corpus
store's files) are never inputs, wherever they are named (a folder walked, a
list, the command line), also when ``--out`` is the input folder: they are
reported as ignored.  A path named in a list, on the command line or in a
manifest that is not a regular file (a FIFO, a device) is not opened: that
input fails with "not a regular file".

A file or folder named on the command line that does not exist is refused
(InputError, exit 3: a typo), before the batch creates anything; a missing
path read from a list, stdin or a segment manifest fails on its own.

Relative paths are relative to the current folder.  The id of a file is its
path relative to the layout root without the extension (``a/b/utt``); the
root is ``--root`` or the common folder of the folders given and of the
files' parents.  URL inputs get theirs the same way, from the key below the
common prefix of the prefixes given and of the objects' "folders"
(``s3://b/corpus/spk1/utt.flac`` listed from ``s3://b/corpus/`` is
``spk1/utt``), or below ``--root`` when it is a URL.  Two inputs with the same id (``utt.wav`` and ``utt.flac``)
would write the same outputs: the second is marked with a problem and fails.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import InputError, ParameterError
from ..io.remote import is_url, list_prefix
from ..validate import is_real

__all__ = [
    "InputItem",
    "OwnOutputs",
    "IGNORED_OWN",
    "IGNORED_SPECIAL",
    "NOT_REGULAR",
    "audio_extensions",
    "collect_inputs",
    "read_path_list",
    "read_list_bytes",
    "id_problem",
    "read_segments",
    "check_id",
]

#: Why a file was not taken: a batch's own output (a previous run's, or its store's).
IGNORED_OWN = "an output of this batch"
#: Why a file of a walked folder was not taken: a FIFO, socket or device (opening it could block the batch).
IGNORED_SPECIAL = "not a regular file"
#: The problem of a listed input that is not a regular file (it is never opened).
NOT_REGULAR = "not a regular file (a FIFO, socket or device; a batch does not open it)"

#: Longest id component, in UTF-8 bytes: a file name holds 255 on common file systems, and an output adds its suffix
#: (``.mel.npy``) and a temp name its own while it is written.
MAX_ID_PART_BYTES = 200

#: Extensions of the soundfile formats beyond the format's own name.
_EXTRA_EXTENSIONS = {
    "AIFF": ("aif", "aifc"),
    "AU": ("snd",),
    "OGG": ("oga", "opus"),
    "NIST": ("sph",),
    "IRCAM": ("sf",),
    "MAT4": ("mat",),
    "MAT5": ("mat",),
    "WAVEX": ("wav",),
    "SVX": ("8svx", "iff"),
}


@dataclass(frozen=True)
class InputItem:
    """One input of a batch.

    Attributes
    ----------
    id : str
        Names the outputs, relative to the output folder (POSIX, no suffix).
    path : str
        Absolute path of the audio file, or its URL.
    start, duration : float, optional
        Segment in seconds (``--manifest``); None for the whole file.
    problem : str, optional
        Why this input cannot run (a duplicate id); it is recorded as failed.
    """

    id: str
    path: str
    start: float | None = None
    duration: float | None = None
    problem: str | None = None

    @property
    def segment(self) -> dict[str, float] | None:
        """``{"start": s, "duration": s}`` for a segment, else None."""
        if self.start is None and self.duration is None:
            return None
        segment = {"start": self.start or 0.0}
        if self.duration is not None:
            segment["duration"] = self.duration
        return segment


@dataclass(frozen=True)
class OwnOutputs:
    """What a batch's output folder holds of its own, never taken as an input.

    Attributes
    ----------
    files : frozenset of str
        Absolute paths: the outputs every manifest line lists, the manifest and results files.
    folders : frozenset of str
        Absolute folders whose every file is the batch's (a corpus store's ``feats/``, ``shar/``).
    """

    files: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()

    def owns(self, path: str) -> bool:
        """True when ``path`` (absolute, normalised) is one of the batch's own files."""
        return path in self.files or any(path.startswith(folder + os.sep) for folder in self.folders)


def _is_audio_name(path: str, extensions: frozenset[str]) -> bool:
    name = os.path.basename(path)
    return "." in name and name.rpartition(".")[2].lower() in extensions


def audio_extensions() -> frozenset[str]:
    """Lower-case extensions (no dot) of every format soundfile reads, except headerless RAW."""
    import soundfile as sf

    names: set[str] = set()
    for fmt in sf.available_formats():
        if fmt == "RAW":
            continue
        names.add(fmt.lower())
        names.update(_EXTRA_EXTENSIONS.get(fmt, ()))
    return frozenset(names)


def read_path_list(lines: Iterable[str], where: str = "the list") -> list[str]:
    """Paths from the lines of an ``@list`` file or of standard input (see the module docstring).

    Each string of ``lines`` is split on ``\n`` only (a trailing one dropped); blank lines and ``#`` comments are
    skipped, and every other line is a path as it is.

    Raises
    ------
    ParameterError
        A line holds a NUL character (no path can), naming ``where`` and the line number.
    """
    texts = [part for line in lines for part in line.removesuffix("\n").split("\n")]
    if texts and texts[0].startswith("\ufeff"):
        texts[0] = texts[0][1:]
    body = [text for text in texts if text.strip()]
    crlf = bool(body) and all(text.endswith("\r") for text in body)
    paths = []
    for number, text in enumerate(texts, 1):
        if crlf:
            text = text.removesuffix("\r")
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if "\0" in text:
            raise ParameterError(f"{where} line {number}: holds a NUL character, which no path can")
        paths.append(text)
    return paths


def _utf8_lines(data: bytes, where: str) -> list[str]:
    """``data`` split on ``\n`` and decoded as UTF-8 (ParameterError naming the first line that is not)."""
    lines = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ParameterError(
                f"{where} line {number}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})"
            ) from None
    return lines


def read_list_bytes(data: bytes, where: str) -> list[str]:
    """Paths from the bytes of an ``@list`` file or of standard input: :func:`read_path_list` of its UTF-8 lines.

    Raises
    ------
    ParameterError
        Invalid UTF-8 or a NUL, naming ``where`` (``@list.txt``, ``-``) and the line.
    """
    return read_path_list(_utf8_lines(data, where), where)


def id_problem(item_id: str, *, text: bool = False) -> str | None:
    """Why ``item_id`` cannot name outputs (None when it can).

    Refused: empty or ``.``, absolute, ``..`` or a hidden part, a NUL, a lone surrogate that is no file-name byte
    (any lone surrogate when the id is ``text``, as a manifest's JSON is: only a file name read from disk may carry
    non-UTF-8 bytes, as ``os.fsdecode`` surrogates), or a part longer than :data:`MAX_ID_PART_BYTES` bytes.
    """
    parts = PurePosixPath(item_id).parts
    if not parts or item_id.startswith("/") or ".." in parts or any(p.startswith(".") for p in parts):
        return f"id {item_id!r} must be a relative name without '.', '..' or hidden parts"
    bad = next((c for c in item_id if c == "\0" or (text and unicodedata.category(c) == "Cs")), None)
    longest = 0
    for part in parts:
        try:
            longest = max(longest, len(os.fsencode(part)))
        except UnicodeEncodeError as exc:
            bad = bad or part[exc.start]
    if bad is not None:
        return f"id {item_id!r} holds {bad!r}: a NUL or lone surrogate (text that is not UTF-8) cannot name outputs"
    if longest > MAX_ID_PART_BYTES:
        return f"id {item_id[:40]!r}... has a part of {longest} bytes; a file name holds {MAX_ID_PART_BYTES} with its suffix"
    return None


def check_id(item_id: str, where: str) -> str:
    """``item_id`` (a manifest's text) normalised, or a ParameterError naming ``where`` when :func:`id_problem`
    refuses it."""
    problem = id_problem(item_id, text=True)
    if problem is not None:
        raise ParameterError(f"{where}: {problem}")
    return str(PurePosixPath(item_id))


def _seconds(value: object, key: str, where: str) -> float | None:
    if value is None:
        return None
    # ``abs(value) < 1e308`` refuses NaN, Inf and a 400-digit integer (which float() cannot convert)
    if not is_real(value) or not abs(value) < 1e308 or value < 0:
        shown = repr(value)
        raise ParameterError(f"{where}: {key!r} must be a number of seconds >= 0, got {shown[:40]}{'...' * (len(shown) > 40)}")
    return float(value)


def _url_parent(url: str) -> str:
    """The "folder" of an object URL: ``s3://b/corpus/a.flac`` -> ``s3://b/corpus``."""
    return url.rstrip("/").rpartition("/")[0]


def _url_ids(urls: Sequence[str], bases: Sequence[str], root: str | None) -> list[str]:
    """The ids of object ``urls`` relative to ``root`` (a URL) or the common prefix of ``bases`` (see the module
    docstring; ParameterError for an object outside ``--root``)."""
    top = root.rstrip("/") if root is not None and is_url(root) else None
    if top is None:
        scheme = bases[0].partition("://")[0]
        parts = [base.partition("://")[2].rstrip("/").split("/") for base in bases]
        common = (
            [names[0] for names in zip(*parts) if len(set(names)) == 1]
            if len({b.partition("://")[0] for b in bases}) == 1
            else []
        )
        top = f"{scheme}://" + "/".join(common) if common else ""
    ids = []
    for url in urls:
        if not top or not url.startswith(top + "/"):
            raise ParameterError(
                f"--root {root}: {url} is not inside it" if root else f"{url}: URLs of different buckets or schemes need --root"
            )
        ids.append(str(PurePosixPath(url[len(top) + 1 :]).with_suffix("")))
    return ids


def _manifest_path(text: str, where: str) -> str:
    """The absolute path a manifest line names (ParameterError: empty, no file name, a NUL, a lone surrogate that is
    no file-name byte)."""
    if "\0" in text:
        raise ParameterError(f'{where}: "path" holds a NUL character, which no path can')
    if is_url(text):
        return text
    if not Path(text).name:
        raise ParameterError(f'{where}: "path" {text!r} names no file')
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        raise ParameterError(f'{where}: "path" holds {text[exc.start]!r}, a lone surrogate that is no file name') from None
    return os.path.abspath(text)


def read_segments(manifest: str) -> list[InputItem]:
    """The items of a ``--manifest`` JSONL file (ParameterError naming the line on any problem)."""
    try:
        data = sys.stdin.buffer.read() if manifest == "-" else Path(manifest).read_bytes()
    except OSError as exc:
        raise ParameterError(f"--manifest {manifest}: cannot read it ({exc.strerror or exc})") from None
    lines = _utf8_lines(data.removeprefix(b"\xef\xbb\xbf"), f"--manifest {manifest}")
    items = []
    for number, line in enumerate(lines, 1):  # on "\n" only: JSON strings may hold a raw U+2028
        if not line.strip():
            continue
        where = f"--manifest {manifest} line {number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParameterError(f"{where}: not JSON ({exc.msg})") from None
        except RecursionError:
            raise ParameterError(f"{where}: JSON nested too deep") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise ParameterError(f'{where}: expected an object with a "path" string')
        path = _manifest_path(entry["path"], where)
        item_id = entry.get("id")
        if item_id is None:
            item_id = str(PurePosixPath(*Path(entry["path"]).with_suffix("").parts[-1:]))
        if not isinstance(item_id, str):
            raise ParameterError(f'{where}: "id" must be a string')
        duration = _seconds(entry.get("duration"), "duration", where)
        if duration == 0:
            raise ParameterError(f"{where}: 'duration' must be > 0")
        items.append(InputItem(check_id(item_id, where), path, _seconds(entry.get("start"), "start", where), duration))
    return items


def _matches(name: str, glob: str | None, extensions: frozenset[str]) -> bool:
    if name.startswith("."):
        return False
    if glob is not None:
        return fnmatch.fnmatch(name, glob)
    return _is_audio_name(name, extensions)


def _is_special(entry: os.DirEntry[str]) -> bool:
    """True for a FIFO, socket or device, or a link to one (not a folder: walked apart); a broken link, or one whose
    target cannot be looked at, is not one (it fails on its own, unopened)."""
    try:
        if entry.is_file():
            return False
        return _is_special_path(entry.path) if entry.is_symlink() else True
    except OSError:
        return False


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """``entry.is_dir()``, False when its target cannot be looked at (a link into ``/proc/1/cwd``: EACCES, which
    ``is_dir`` raises): taken as a file, that input then fails on its own instead of the whole batch."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _walk(
    folder: str,
    glob: str | None,
    extensions: frozenset[str],
    skip: str | None,
    own: OwnOutputs,
    ignored: list[tuple[str, str]],
) -> list[str]:
    """The files of ``folder`` a batch takes, in sorted order; the visible ones it does not are appended to ``ignored``
    as ``(path, reason)``."""
    found: list[str] = []
    not_matching = "not an audio extension" if glob is None else f"not matching --glob {glob}"
    pending = [folder]
    while pending:
        here = pending.pop()
        try:
            entries = sorted((e for e in os.scandir(here) if not e.name.startswith(".")), key=lambda e: e.name)
        except OSError:
            continue  # unreadable or removed meanwhile (os.walk's default: skipped)
        subfolders = []
        for entry in entries:
            if _is_folder(entry):  # a folder is walked after this one's files; a link to one is not followed (os.walk's rule)
                if not entry.is_symlink() and entry.path != skip:
                    subfolders.append(entry.path)
                continue
            path = entry.path
            if own.owns(path):
                ignored.append((path, IGNORED_OWN))
            elif not _matches(entry.name, glob, extensions):
                ignored.append((path, not_matching))
            elif _is_special(entry):
                ignored.append((path, IGNORED_SPECIAL))
            else:
                found.append(path)
        pending.extend(reversed(subfolders))
    return found


def _is_special_path(path: str) -> bool:
    """True for a path that exists and is neither a regular file nor a folder (``stat`` only: never opened)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # missing or unreadable: the input fails on its own
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def collect_inputs(
    args: Sequence[str],
    *,
    glob: str | None = None,
    root: str | None = None,
    manifest: str | None = None,
    exclude: str | None = None,
    stdin_lines: Iterable[str] | None = None,
    own: OwnOutputs | None = None,
    ignored: list[tuple[str, str]] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> list[InputItem]:
    """Expand the INPUTS of a batch into items with their ids (see the module docstring).

    Parameters
    ----------
    args : sequence of str
        Files, folders, ``@list`` files and ``-``.
    glob : str, optional
        Pattern file names in folders must match.
    root : str, optional
        Folder the ids are relative to (default: the common folder).
    manifest : str, optional
        JSONL segment manifest (its items come after those of ``args``).
    exclude : str, optional
        A folder never walked into (the batch's output folder).
    stdin_lines : iterable of str, optional
        Where ``-`` reads its paths (default: standard input).
    own : OwnOutputs, optional
        The batch's own files: never taken, wherever they are named.
    storage_options : mapping, optional
        fsspec storage options for listing URL prefixes (:func:`audiokit.io.remote.list_prefix`).
    ignored : list of (str, str), optional
        Receives ``(path, reason)`` for each file not taken: in the walked
        folders, those whose name does not match (not an audio extension, or
        not matching ``glob``; hidden names aside) or that are not regular
        files (:data:`IGNORED_SPECIAL`), and the batch's own files
        (:data:`IGNORED_OWN`) wherever they are named; a walked file as the
        folder given joined with its path inside it, in walk order.

    Raises
    ------
    InputError
        A file or folder named in ``args`` does not exist (for a URL: no object, prefix or bucket there; access
        denied; server unreachable).
    ParameterError
        An unreadable ``@list``, a file outside ``--root``, a bad manifest line,
        or no input at all.
    """
    if manifest == "-" and "-" in args:
        raise ParameterError("- (paths on stdin) and --manifest - both read standard input; give one of them")
    extensions = audio_extensions()
    skip = os.path.abspath(exclude) if exclude else None
    own = own or OwnOutputs()
    files: list[str] = []
    bases: list[str] = []
    not_taken: list[tuple[str, str]] = []
    special: set[str] = set()  # named files that are not regular (never opened: they fail)
    urls: list[str] = []
    url_bases: list[str] = []

    def add_url(url: str, listed: list[str] | None) -> None:
        if listed is None:  # an object
            urls.append(url)
            url_bases.append(_url_parent(url))
            return
        not_matching = "not an audio extension" if glob is None else f"not matching --glob {glob}"
        prefix = url.rstrip("/")
        for found in listed:
            inside = found[len(prefix) + 1 :] if found.startswith(prefix + "/") else found.rpartition("/")[2]
            if any(part.startswith(".") for part in inside.split("/")):
                continue  # hidden, as in a walked folder
            if _matches(inside.rpartition("/")[2], glob, extensions):
                urls.append(found)
            else:
                not_taken.append((found, not_matching))
        url_bases.append(prefix)

    def add(path: str) -> None:
        if is_url(path):
            add_url(path, None)
            return
        full = os.path.abspath(path)
        if os.path.isdir(full):
            start = len(not_taken)
            files.extend(_walk(full, glob, extensions, skip, own, not_taken))
            not_taken[start:] = [(os.path.join(path, os.path.relpath(name, full)), why) for name, why in not_taken[start:]]
            bases.append(full)
        elif own.owns(full):
            not_taken.append((path, IGNORED_OWN))
        else:
            if _is_special_path(full):
                special.add(full)
            files.append(full)
            bases.append(os.path.dirname(full))

    expanded: dict[str, list[str] | None] = {}
    for arg in args:
        if is_url(arg):
            expanded[arg] = list_prefix(arg, storage_options)  # a prefix's objects, None for an object (checked there)
        elif arg != "-" and not arg.startswith("@") and not os.path.exists(arg):
            raise InputError("no such file or folder", arg)
    for arg in args:
        if arg == "-":
            listed = read_list_bytes(sys.stdin.buffer.read(), "-") if stdin_lines is None else read_path_list(stdin_lines, "-")
            for path in listed:
                add(path)
        elif arg.startswith("@"):
            try:
                data = Path(arg[1:]).read_bytes()
            except OSError as exc:
                raise ParameterError(f"{arg}: cannot read the list ({exc.strerror or exc})") from None
            for path in read_list_bytes(data, arg):
                add(path)
        elif arg in expanded:
            add_url(arg, expanded[arg])
        else:
            add(arg)
    items: list[InputItem] = []
    if files:
        top = os.path.abspath(root) if root is not None else os.path.commonpath(bases)
        for path in files:
            rel = os.path.relpath(path, top)
            if rel == ".." or rel.startswith(".." + os.sep):
                raise ParameterError(f"--root {root}: {path} is not inside it")
            item_id = str(PurePosixPath(*Path(rel).with_suffix("").parts))
            problem = NOT_REGULAR if path in special else id_problem(item_id)
            items.append(InputItem(item_id, path, problem=problem))
    if urls:
        items.extend(
            InputItem(item_id, url, problem=id_problem(item_id)) for item_id, url in zip(_url_ids(urls, url_bases, root), urls)
        )
    if manifest is not None:
        for item in read_segments(manifest):
            if own.owns(item.path):
                not_taken.append((item.path, IGNORED_OWN))
            else:
                items.append(replace(item, problem=NOT_REGULAR) if _is_special_path(item.path) else item)
    if ignored is not None:
        ignored.extend(not_taken)
    if not items:
        raise ParameterError(
            "no input: give files, folders, @list, - (paths on stdin) or --manifest "
            f"(folders are searched for {glob or 'audio files'})"
        )
    return _mark_duplicates(items)


def _mark_duplicates(items: list[InputItem]) -> list[InputItem]:
    """Give every item whose id is already taken a problem (its outputs would overwrite the first's)."""
    first: dict[str, InputItem] = {}
    out = []
    for item in items:
        other = first.setdefault(item.id, item)
        if other is not item:
            if other.path == item.path and other.segment == item.segment:
                continue  # the same input named twice: run it once
            item = replace(item, problem=f"its output name {item.id!r} is already that of {other.path}; rename one of them")
        out.append(item)
    return out

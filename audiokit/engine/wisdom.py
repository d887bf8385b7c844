"""FFTW wisdom file: remembered plans, so a later run plans in about 0 ms.

FFTW_MEASURE planning times candidate algorithms (tens to hundreds of ms per
new transform size).  FFTW can export what it learned ("wisdom") and import
it later; with wisdom for a problem, planning took 0.1 ms instead of 160 ms
(4000 x 512 float32 frames).

The file lives at ``$XDG_CACHE_HOME/audiokit/fftw-wisdom.json`` (``~/.cache``
when ``XDG_CACHE_HOME`` is unset or not absolute).  It holds the three wisdom
strings FFTW exports (double, single, long double) as JSON.  Wisdom is
process-global in FFTW, so this module keeps process-global state:

* the file is read once, before the first plan of the process;
* a process that made new plans writes the file when the interpreter exits
  (:func:`note_new_plans` schedules it; :func:`save_wisdom` saves at once).
  Saving re-reads the file first, to merge what another process saved
  meanwhile, then writes a temporary file and moves it into place with
  :func:`os.replace`, so readers never see a partial file.  Saving after
  every new plan was measured too costly once the file grew: a 2 MB file
  (20 000 entries from test suites planning hundreds of sizes) took about
  60 ms to read and as much to write;
* a file larger than :data:`MAX_FILE_BYTES` is ignored on reading and
  replaced (not merged) on the next save, which bounds its size and the
  start-up cost.

Wisdom is an optimisation only: any failure to read, parse, import or write
the file is ignored.  ``AUDIOKIT_FFTW_WISDOM=0`` (or ``false``/``no``/``off``)
disables both reading and writing.  Wisdom depends on the CPU; the cache
directory is assumed to be per machine.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path

ENV_WISDOM = "AUDIOKIT_FFTW_WISDOM"
#: Files above this size are ignored when loading and replaced when saving.
MAX_FILE_BYTES = 1 << 20
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})
_FORMAT = "audiokit-fftw-wisdom"
_KEYS = ("double", "single", "longdouble")

_lock = threading.RLock()
_loaded = False
_last_saved: tuple[bytes, ...] | None = None
_pending: Path | None = None  # where to save at exit, if new plans were made
_atexit_registered = False


def wisdom_enabled() -> bool:
    """False when the environment variable ``AUDIOKIT_FFTW_WISDOM`` is 0/false/no/off."""
    return os.environ.get(ENV_WISDOM, "1").strip().lower() not in _FALSE_WORDS


def wisdom_path() -> Path:
    """Path of the wisdom file: ``<cache>/audiokit/fftw-wisdom.json``.

    ``<cache>`` is ``$XDG_CACHE_HOME`` if it is set to an absolute path,
    else ``~/.cache`` (XDG base directory specification).
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "audiokit" / "fftw-wisdom.json"


def _read_file(path: Path) -> tuple[bytes, bytes, bytes] | None:
    """The three wisdom strings stored in ``path``; None if absent, too big or invalid."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = json.loads(path.read_text(encoding="ascii"))
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            return None
        parts = tuple(data.get(k, "") for k in _KEYS)
        if not all(isinstance(p, str) for p in parts):
            return None
        return tuple(p.encode("ascii") for p in parts)  # type: ignore[return-value]
    except (OSError, ValueError, UnicodeError):
        return None


def _import(pyfftw, path: Path) -> None:
    parts = _read_file(path)
    if parts is not None:
        with contextlib.suppress(Exception):  # wisdom is optional, never fatal
            pyfftw.import_wisdom(parts)


def load_wisdom(pyfftw) -> None:
    """Import the wisdom file into FFTW, once per process (no-op when disabled).

    Parameters
    ----------
    pyfftw : module
        The imported ``pyfftw`` module.
    """
    global _loaded, _last_saved
    with _lock:
        if _loaded or not wisdom_enabled():
            return
        _loaded = True
        _import(pyfftw, wisdom_path())
        try:
            _last_saved = tuple(pyfftw.export_wisdom())
        except Exception:  # noqa: BLE001
            _last_saved = None


def note_new_plans(pyfftw) -> None:
    """Schedule saving FFTW's wisdom at interpreter exit, to the path current now.

    Called by the FFTW backend after it built new plans.  No-op when wisdom
    is disabled.
    """
    global _pending, _atexit_registered
    with _lock:
        if not wisdom_enabled():
            return
        _pending = wisdom_path()
        if not _atexit_registered:
            atexit.register(_save_pending, pyfftw)
            _atexit_registered = True


def _save_pending(pyfftw) -> None:
    """The exit hook: save if :func:`note_new_plans` asked for it."""
    with _lock:
        path = _pending
    if path is not None:
        save_wisdom(pyfftw, path=path)


def save_wisdom(pyfftw, *, path: Path | None = None) -> bool:
    """Write FFTW's wisdom to the file now, if it changed since the last save or load.

    Parameters
    ----------
    pyfftw : module
        The imported ``pyfftw`` module.
    path : Path, optional
        Destination; default :func:`wisdom_path`.

    Returns
    -------
    bool
        True if the file was written; False if disabled, unchanged, or on any
        error (errors are swallowed: wisdom is optional).
    """
    global _last_saved, _pending
    with _lock:
        if not wisdom_enabled():
            return False
        path = wisdom_path() if path is None else path
        tmp_name = None
        try:
            current = tuple(pyfftw.export_wisdom())
            if current == _last_saved:
                _pending = None
                return False
            _import(pyfftw, path)  # merge another process's wisdom (unless oversized)
            current = tuple(pyfftw.export_wisdom())
            payload = {"format": _FORMAT, "fftw_version": str(pyfftw.fftw_version)}
            payload.update({k: v.decode("ascii") for k, v in zip(_KEYS, current, strict=False)})
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=".fftw-wisdom-", dir=path.parent)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                json.dump(payload, fh)
            os.replace(tmp_name, path)
            tmp_name = None
            _last_saved = current
            _pending = None
            return True
        except Exception:  # noqa: BLE001 - unwritable cache, full disk, ...
            return False
        finally:
            if tmp_name is not None:
                try:
                    os.unlink(tmp_name)
                except OSError:
                    pass


def _reset_for_tests() -> None:
    """Forget that the file was loaded and any pending save."""
    global _loaded, _last_saved, _pending
    with _lock:
        _loaded = False
        _last_saved = None
        _pending = None

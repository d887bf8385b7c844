"""FFTW wisdom file: remembered plans, so a later run plans in about 0 ms.

FFTW_MEASURE planning times candidate algorithms (tens to hundreds of ms per
new transform size).  FFTW can export what it learned ("wisdom") and import
it later; with wisdom for a problem, planning takes well under a millisecond.

The file lives at ``$XDG_CACHE_HOME/audiokit/fftw-wisdom.json`` (``~/.cache``
when ``XDG_CACHE_HOME`` is unset or not absolute).  It holds the three wisdom
strings FFTW exports (double, single, long double) as JSON.  Wisdom is
process-global in FFTW, so this module keeps process-global state: the file is
read once, before the first plan, and rewritten (atomically, merged with what
another process may have saved meanwhile) after plans that taught FFTW
something new.

Wisdom is an optimisation only: any failure to read, parse, import or write
the file is ignored.  ``AUDIOKIT_FFTW_WISDOM=0`` (or ``false``/``no``/``off``)
disables both reading and writing.  Wisdom depends on the CPU; the cache
directory is assumed to be per machine.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

ENV_WISDOM = "AUDIOKIT_FFTW_WISDOM"
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})
_FORMAT = "audiokit-fftw-wisdom"
_KEYS = ("double", "single", "longdouble")

_lock = threading.Lock()
_loaded = False
_last_saved: tuple[bytes, ...] | None = None


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
    """The three wisdom strings stored in ``path``, or None if absent/invalid."""
    try:
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
        try:
            pyfftw.import_wisdom(parts)
        except Exception:  # noqa: BLE001 - wisdom is optional, never fatal
            pass


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


def save_wisdom(pyfftw) -> bool:
    """Write FFTW's current wisdom to the file if it changed since the last save/load.

    The file is first re-imported (to merge wisdom saved by another process),
    then written to a temporary file in the same directory and moved into
    place with :func:`os.replace`, so readers never see a partial file.

    Returns
    -------
    bool
        True if the file was written; False if disabled, unchanged, or on any
        error (errors are swallowed: wisdom is optional).
    """
    global _last_saved
    with _lock:
        if not wisdom_enabled():
            return False
        try:
            current = tuple(pyfftw.export_wisdom())
        except Exception:  # noqa: BLE001
            return False
        if current == _last_saved:
            return False
        path = wisdom_path()
        tmp_name = None
        try:
            _import(pyfftw, path)
            current = tuple(pyfftw.export_wisdom())
            payload = {"format": _FORMAT, "fftw_version": str(pyfftw.fftw_version)}
            payload.update({k: v.decode("ascii") for k, v in zip(_KEYS, current)})
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=".fftw-wisdom-", dir=path.parent)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                json.dump(payload, fh)
            os.replace(tmp_name, path)
            tmp_name = None
            _last_saved = current
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
    """Forget that the file was loaded (the next plan reloads it)."""
    global _loaded, _last_saved
    with _lock:
        _loaded = False
        _last_saved = None

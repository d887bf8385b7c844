"""Where a batch's output folder lives: a local folder, or a prefix in object storage (``--out s3://bucket/feats``).

A local ``--out`` is the folder itself: every file is written in place, atomically, as it always was.  A URL
``--out`` is a :class:`RemoteOut` (an fsspec URL prefix): the store code still writes every file locally -- the
same writers, the same bytes, in a staging folder (:func:`staging_folder`) -- and each finished file is then
published as one object:

* :meth:`RemoteOut.put` uploads a finished local file in one request (fsspec's ``put_file``: one ``PutObject``
  below s3fs's multipart threshold, 2 x 50 MiB; above it a multipart upload completed only once every part is
  sent).  On any failure, Ctrl-C or SIGTERM the upload of that key is aborted (:meth:`RemoteOut.abort_uploads`),
  so an object appears whole or not at all and no incomplete multipart upload is left to be billed;
* :meth:`RemoteOut.create` writes an object only if none exists (S3 ``If-None-Match: *``, fsspec's
  ``mode="create"``): the batch lock (:mod:`audiokit.batch.outlock`);
* :meth:`RemoteOut.names` lists the prefix once (what a resume compares with its manifest), :meth:`RemoteOut.get`
  downloads one object, :meth:`RemoteOut.remove` deletes some.

Every transport failure is an :class:`ObjectStoreError` (an :class:`~audiokit.errors.OutputError`, exit 4) with a
one-line reason naming the object's URL (:func:`audiokit.io.remote.display_url`; credentials redacted,
:func:`audiokit.io.remote.redact`).  fsspec is imported only through :mod:`audiokit.io.remote`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import OutputError
from .atomic import pid_alive
from .remote import display_url, failure_reason, filesystem, filesystem_options, redact

__all__ = ["RemoteOut", "ObjectStoreError", "STAGING_PREFIX", "new_staging_folder", "staging_folder", "sweep_staging_folders"]

#: Prefix of the local folders a remote output is staged in (one per client run, one per worker task), followed by
#: the pid of the process that made it.
STAGING_PREFIX = "audiokit-out-"


class ObjectStoreError(OutputError):
    """An object of a remote ``--out`` could not be written, read or listed (exit 4).

    Raised in a worker, it stops the whole batch (unlike an input's failure, which is that input's record): every
    other object would fail the same way.
    """

    def __reduce__(self) -> tuple[Any, ...]:  # through a process pool or Dask as itself
        return (type(self), (self.reason, self.path))


class RemoteOut:
    """An output prefix in object storage (see the module docstring).

    Parameters
    ----------
    url : str
        ``s3://bucket/prefix`` (a trailing ``/`` is dropped); any protocol fsspec can write.
    options : mapping, optional
        Storage options (:func:`audiokit.io.remote.storage_options`), kept out of every message.
    """

    def __init__(self, url: str, options: Mapping[str, Any] | None = None) -> None:
        self.root = display_url(url.rstrip("/"))
        self.url = url.rstrip("/")
        self.options = filesystem_options(options)
        self._fs: Any = None
        self._base = ""
        self._listed: set[str] | None = None

    # ------------------------------------------------------------------ plumbing
    @property
    def fs(self) -> Any:
        """fsspec's filesystem of the prefix (made on first use; ParameterError when fsspec/s3fs is missing)."""
        if self._fs is None:
            self._fs, self._base = filesystem(self.url, self.options)
            self._base = self._base.rstrip("/")
        return self._fs

    def path_of(self, name: str) -> str:
        """The filesystem path (no protocol) of object ``name``."""
        self.fs  # noqa: B018 (made on first use: it sets the base path)
        return f"{self._base}/{name}" if name else self._base

    def url_of(self, name: str) -> str:
        """The URL of object ``name`` as messages show it."""
        return f"{self.root}/{name}" if name else self.root

    def error(self, exc: BaseException, name: str, doing: str) -> ObjectStoreError:
        """The one-line error of a failed request on object ``name`` (``doing``: "write", "read", "list" ...)."""
        if isinstance(exc, FileNotFoundError) and doing != "read":
            reason = "no such bucket"
        else:
            reason = failure_reason(exc, self.options)
        return ObjectStoreError(redact(f"cannot {doing}: {reason}", self.options), self.url_of(name))

    # ------------------------------------------------------------------ reading
    def names(self, *, refresh: bool = False) -> set[str]:
        """Every object name under the prefix (relative, POSIX), listed once (again with ``refresh``)."""
        if self._listed is None or refresh:
            fs = self.fs
            try:
                fs.invalidate_cache(self._base)
                found = fs.find(self._base) if fs.exists(self._base.split("/")[0]) else None
            except Exception as exc:  # noqa: BLE001 (every transport failure becomes one line)
                raise self.error(exc, "", "list") from None
            if found is None:
                raise ObjectStoreError("cannot write: no such bucket", self.url_of(""))
            start = len(self._base) + 1
            self._listed = {key[start:] for key in found if key.startswith(self._base + "/")}
        return self._listed

    def exists(self, name: str) -> bool:
        """``name`` is in the listing (:meth:`names`) or was put by this object since."""
        return name in self.names()

    def get(self, name: str, local: str) -> bool:
        """Download object ``name`` to the local file ``local`` (replacing it); False when there is no such object."""
        if name not in self.names():
            return False
        tmp = f"{local}.part"
        try:
            self.fs.get_file(self.path_of(name), tmp)
            os.replace(tmp, local)
        except FileNotFoundError:
            return False
        except Exception as exc:  # noqa: BLE001
            raise self.error(exc, name, "read") from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return True

    def read(self, name: str) -> bytes | None:
        """The bytes of object ``name`` asked now (not from the listing); None when there is none."""
        try:
            return bytes(self.fs.cat_file(self.path_of(name)))
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001
            raise self.error(exc, name, "read") from None

    # ------------------------------------------------------------------ writing
    def put(self, local: str, name: str) -> None:
        """Upload the finished local file ``local`` as object ``name`` (whole or not at all; see the module docstring)."""
        try:
            self.fs.put_file(local, self.path_of(name))
        except BaseException as exc:
            with contextlib.suppress(Exception):
                self.abort_uploads(name)
            if isinstance(exc, Exception):
                raise self.error(exc, name, "write") from None
            raise
        if self._listed is not None:
            self._listed.add(name)

    def put_bytes(self, name: str, data: bytes) -> None:
        """Write ``data`` as object ``name`` in one request."""
        try:
            self.fs.pipe_file(self.path_of(name), data)
        except Exception as exc:  # noqa: BLE001
            raise self.error(exc, name, "write") from None
        if self._listed is not None:
            self._listed.add(name)

    def create(self, name: str, data: bytes) -> bool:
        """Write object ``name`` only if it does not exist (one conditional request); False when it exists."""
        try:
            self.fs.pipe_file(self.path_of(name), data, mode="create")
        except FileExistsError:
            return False
        except Exception as exc:  # noqa: BLE001
            if "PreconditionFailed" in f"{type(exc).__name__} {exc}" or "412" in str(exc):
                return False
            raise self.error(exc, name, "write") from None
        if self._listed is not None:
            self._listed.add(name)
        return True

    def remove(self, names: Iterable[str]) -> None:
        """Delete objects ``names`` (missing ones are no error)."""
        names = sorted(set(names))
        if not names:
            return
        try:
            self.fs.rm([self.path_of(n) for n in names])
        except FileNotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001
            raise self.error(exc, names[0], "delete") from None
        if self._listed is not None:
            self._listed.difference_update(names)

    def abort_uploads(self, name: str = "") -> int:
        """Abort the incomplete multipart uploads under object ``name`` (default: the whole prefix); how many.

        A ``kill -9`` during a multipart upload leaves it open (S3 keeps, and bills, its parts); the batch holding
        the lock calls this before it starts, so every upload it finds is a dead run's.  Only S3 (s3fs) has them.
        """
        fs = self.fs
        call = getattr(fs, "call_s3", None)
        if call is None:
            return 0
        bucket, _, key = self.path_of(name).partition("/")
        aborted = 0
        try:
            listed = call("list_multipart_uploads", Bucket=bucket, Prefix=key)
            for upload in listed.get("Uploads", []):
                if name and upload["Key"] != key:
                    continue
                call("abort_multipart_upload", Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
                aborted += 1
        except Exception as exc:  # noqa: BLE001
            raise self.error(exc, name, "abort the unfinished uploads of") from None
        return aborted


def new_staging_folder() -> str:
    """A new local folder ``<tmp>/audiokit-out-<pid>-<random>`` where a remote output's files are made."""
    return tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-")


@contextlib.contextmanager
def staging_folder() -> Iterator[str]:
    """:func:`new_staging_folder`, removed after the block."""
    folder = new_staging_folder()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    """True when process ``pid`` exists and is not a zombie (killed, not yet reaped: it writes nothing more)."""
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def sweep_staging_folders() -> int:
    """Remove the staging folders of processes of this host that are gone (a ``kill -9`` skips their cleanup); how
    many.  A folder counts by its name alone (:func:`new_staging_folder`) and a pid that no longer runs (or is a
    zombie)."""
    removed = 0
    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return 0
    for entry in entries:
        head, _, rest = entry.name.partition(STAGING_PREFIX)
        pid = rest.partition("-")[0]
        if head or not pid.isdigit() or int(pid) == os.getpid() or _running(int(pid)):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    return removed

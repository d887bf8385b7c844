"""Inputs in object storage and on web servers: ``s3://``, ``gs://``, ``http(s)://`` ... through fsspec.

A URL input is opened with :func:`open_url` as a seekable binary file whose reads are ranged requests served
through a block cache (:data:`BLOCK_BYTES` a block), so libsndfile seeking in a WAV or FLAC fetches the blocks
it touches instead of the whole object.  fsspec and its implementations (s3fs, its HTTP filesystem on aiohttp,
gcsfs ...) are imported only here and only when a URL is opened: without them a URL is a ParameterError naming
``pip install 'audiokit[remote]'``.

Storage options (credentials, endpoint, region ...) are fsspec's keyword arguments of the filesystem, as
Hugging Face datasets' ``storage_options=`` are: ``--storage-option key=value`` on the command line
(:func:`parse_storage_options`), over the JSON object in ``AUDIOKIT_STORAGE_OPTIONS``
(:func:`storage_options`), over fsspec's own configuration (``FSSPEC_S3_*`` variables, ``~/.config/fsspec``)
and the implementation's (``AWS_*`` variables, profiles).  Credentials never appear in a name, a message or a
record: :func:`display_url` drops a URL's user info and the values of signing query parameters, and
:func:`redact` removes the values of credential options (``key``, ``secret``, ``token`` ...) from a reason
before it is shown; the options themselves are never written anywhere.

Every failure is an :class:`~audiokit.errors.InputError` with a one-line reason (no such object or bucket,
access denied, no credentials, server unreachable, a read that failed midway); a read failure inside libsndfile
is kept by the :class:`RemoteFile` wrapper (libsndfile calls it from C, where an exception would be printed and
lost) and raised by :meth:`RemoteFile.raise_failure` once the call returns.

Ctrl-C and SIGTERM are held during libsndfile's calls, but the ranged read inside one is the place where they act
(:class:`audiokit.held.signals_released`): a read hung on a stalled connection is abandoned at once, its exception
kept and raised when libsndfile returns, and the command ends with its one line (130/143) instead of waiting for the
transport's timeouts.  Those default to :data:`CONNECT_TIMEOUT` (10 s) to connect and :data:`READ_TIMEOUT` (30 s)
for the next bytes of an answer, for ``s3://`` and ``http(s)://``, unless the storage options set their own.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import InputError, ParameterError
from ..held import held_now, signals_released

__all__ = [
    "BLOCK_BYTES",
    "CONNECT_TIMEOUT",
    "ENV_OPTIONS",
    "EXTRA_HINT",
    "RemoteFile",
    "display_url",
    "failure_reason",
    "filesystem",
    "filesystem_options",
    "info_mtime_ns",
    "is_url",
    "list_prefix",
    "object_state",
    "open_known",
    "open_url",
    "parse_storage_options",
    "READ_TIMEOUT",
    "redact",
    "remote_error",
    "storage_options",
]

#: Bytes per ranged request (and per cached block) when reading a URL; ``--storage-option block_size=N`` changes it.
BLOCK_BYTES = 1 << 18
#: Blocks the cache keeps (LRU): 32 x 256 KiB = 8 MiB per open input.
CACHED_BLOCKS = 32
#: Seconds to wait for a connection to the server, and for the next bytes of an answer, before a request fails
#: (s3fs and botocore then retry it a few times): defaults of every ``s3://`` and ``http(s)://`` input, changed with
#: ``--storage-option config_kwargs.read_timeout=S`` (S3) or ``client_kwargs.timeout=S`` (HTTP).
CONNECT_TIMEOUT, READ_TIMEOUT = 10.0, 30.0
#: The environment variable holding default storage options, a JSON object (``--storage-option`` wins per key).
ENV_OPTIONS = "AUDIOKIT_STORAGE_OPTIONS"
#: What to install for URL inputs.
EXTRA_HINT = "pip install 'audiokit[remote]'"
#: Storage options that are options of the opened file, not of the filesystem.
_OPEN_KEYS = frozenset({"block_size", "cache_type"})
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: Query parameters that carry a signature or a credential (presigned S3/GCS URLs, SAS tokens): values hidden.
_SECRET_QUERY = re.compile(r"sig|signature|credential|token|secret|password|key|auth|sas|^se$|^sp$", re.IGNORECASE)


def is_url(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a URL (``scheme://...``, e.g. ``s3://bucket/a.flac``) rather than a local path or ``-``."""
    return isinstance(path, str) and _URL.match(path) is not None


def display_url(url: str) -> str:
    """``url`` as audiokit shows and records it: without user info, with the values of signing parameters hidden.

    ``https://user:pw@host/a.wav?X-Amz-Signature=ab&v=2`` -> ``https://host/a.wav?X-Amz-Signature=***&v=2``.
    """
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if _SECRET_QUERY.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


#: Storage-option keys whose values are credentials (s3fs ``key``/``secret``/``token``, gcsfs ``token``, adlfs
#: ``account_key``/``sas_token``, HTTP ``client_kwargs.auth`` ...): hidden from every message.
_SECRET_KEY = re.compile(r"key|secret|token|password|passwd|credential|auth|session|sig|sas|cert", re.IGNORECASE)


def _secrets(options: Mapping[str, Any]) -> list[str]:
    """The text of every credential in ``options`` (values under a :data:`_SECRET_KEY` key, nested ones too)."""
    found: list[str] = []
    stack: list[tuple[bool, Any]] = [(False, options)]
    while stack:
        secret, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((secret or bool(_SECRET_KEY.search(str(k))), v) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((secret, v) for v in item)
        elif secret and item is not None and len(str(item)) >= 3:
            found.append(str(item))
    return sorted(set(found), key=len, reverse=True)


def redact(text: str, options: Mapping[str, Any], url: str | None = None) -> str:
    """``text`` with every credential of ``options`` (and ``url``'s user info and signing values) replaced by ``***``."""
    if url is not None and url != display_url(url):
        text = text.replace(url, display_url(url))
    userinfo = urlsplit(url).netloc.rpartition("@")[0] if url else ""
    for secret in [*_secrets(options), *([userinfo] if len(userinfo) >= 3 else [])]:
        text = text.replace(secret, "***")
    return text


def _decode(value: str) -> Any:
    """A storage-option value: JSON when it is a JSON literal, number, object or array, else the text itself."""
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return decoded


def parse_storage_options(items: Iterable[str]) -> dict[str, Any]:
    """``["key=value", ...]`` -> the storage-option mapping fsspec takes.

    A value that is JSON (``true``, ``3``, ``{"region_name": "eu-west-1"}``, ``"0123"``) is decoded, any other text
    kept as written; a dotted key nests (``client_kwargs.region_name=eu-west-1`` is
    ``{"client_kwargs": {"region_name": "eu-west-1"}}``).  A later key wins.

    Raises
    ------
    ParameterError
        An item without ``=`` or with an empty key (the message names the key, never the value).
    """
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            shown = key or "(empty)"
            raise ParameterError(f"--storage-option: expected KEY=VALUE, got key {shown!r} without '=' or a name")
        *parents, leaf = key.split(".")
        target = options
        for part in parents:
            child = target.get(part)
            if not isinstance(child, dict):
                child = target[part] = {}
            target = child
        target[leaf] = _decode(value)
    return options


def storage_options(given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The storage options of a run: ``AUDIOKIT_STORAGE_OPTIONS`` (a JSON object), then ``given`` over it per key.

    Raises
    ------
    ParameterError
        ``AUDIOKIT_STORAGE_OPTIONS`` is not a JSON object (the message does not repeat its text).
    """
    merged: dict[str, Any] = {}
    text = os.environ.get(ENV_OPTIONS, "").strip()
    if text:
        try:
            env = json.loads(text)
        except ValueError:
            env = None
        if not isinstance(env, dict):
            raise ParameterError(f"{ENV_OPTIONS} must hold a JSON object of storage options (as --storage-option gives)")
        merged.update(env)
    merged.update(given or {})
    return merged


class RemoteFile(io.RawIOBase):
    """A read-only, seekable view of an fsspec file that keeps a read failure instead of raising it.

    libsndfile reads a file object through C callbacks; an exception there would be printed and swallowed, the
    read seen as an end of file.  Here :meth:`readinto` and :meth:`seek` record the first failure, report no
    data, and :meth:`raise_failure` (called by the reader after every libsndfile call) raises it as an
    :class:`~audiokit.errors.InputError` naming the URL.

    Parameters
    ----------
    handle : fsspec file object
        Opened for reading (``mode="rb"``) with a block cache.
    name : str
        The URL as shown (:func:`display_url`).
    options : mapping
        The storage options, for :func:`redact`.
    """

    def __init__(self, handle: Any, name: str, options: Mapping[str, Any]):
        super().__init__()
        self._handle = handle
        self.name = name
        self._options = options
        self._failure: InputError | None = None
        self._interrupted: BaseException | None = None
        self.size = int(handle.size)

    def readable(self) -> bool:  # noqa: D102 (io protocol)
        return True

    def seekable(self) -> bool:  # noqa: D102 (io protocol)
        return True

    def readinto(self, buffer: Any) -> int:
        """Read into ``buffer``; on failure record it (see the class) and return 0."""
        if self._failure is not None or self._interrupted is not None:
            return 0
        position = self.tell()
        expected = max(0, min(len(buffer), self.size - position))
        try:
            with signals_released():  # inside libsndfile (signals held): a Ctrl-C/SIGTERM ends a stalled read here
                data = self._handle.read(len(buffer))
        except Exception as exc:  # noqa: BLE001 (any failure of the transport; kept, raised after the C call)
            self._failure = remote_error(exc, self.name, self._options, reading=True)
            return 0
        except BaseException as exc:  # KeyboardInterrupt, Terminated: kept if inside a C call, else on its way
            if not held_now():
                raise
            self._interrupted = exc
            return 0
        n = len(data)
        if n < expected:  # a body cut short (the connection closed early): not an end of file
            self._failure = InputError(
                f"read failed (the server sent {n} of {expected} bytes at offset {position} of {self.size}; connection cut?)",
                self.name,
            )
            return 0
        memoryview(buffer).cast("B")[:n] = data
        return n

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move to ``offset`` (``whence`` as :meth:`io.IOBase.seek`); no request is made until the next read."""
        try:
            return int(self._handle.seek(offset, whence))
        except Exception as exc:  # noqa: BLE001 (kept: see the class)
            self._failure = self._failure or remote_error(exc, self.name, self._options, reading=True)
            return int(self._handle.tell())

    def tell(self) -> int:  # noqa: D102 (io protocol)
        return int(self._handle.tell())

    def raise_failure(self) -> None:
        """Raise what a read or seek inside a C call kept: the signal's exception (``KeyboardInterrupt``,
        ``Terminated``) that ended a read, or the failure (an :class:`~audiokit.errors.InputError`), if any."""
        if self._interrupted is not None:
            raise self._interrupted
        if self._failure is not None:
            raise self._failure

    def close(self) -> None:
        """Close the fsspec file (its cache is dropped)."""
        if not self.closed:
            try:
                self._handle.close()
            finally:
                super().close()


def _missing_extra(exc: ImportError, url: str) -> ParameterError:
    what = f" ({exc.name})" if exc.name else ""
    return ParameterError(f"reading {urlsplit(url).scheme}:// URLs needs fsspec and its filesystems{what}: {EXTRA_HINT}")


def _connection_failure(exc: BaseException) -> BaseException | None:
    """The connection failure (refused, reset, timed out, DNS) in ``exc``'s cause chain, or None.

    fsspec's HTTP filesystem reports an unreachable server as FileNotFoundError (from aiohttp's error), botocore
    as EndpointConnectionError / ConnectTimeoutError: the chain is searched by type and by class name.
    """
    seen: set[int] = set()
    item: BaseException | None = exc
    while item is not None and id(item) not in seen:
        seen.add(id(item))
        name = type(item).__name__
        if isinstance(item, (ConnectionError, TimeoutError)) or "Connect" in name or "Timeout" in name:
            return item
        item = item.__cause__ or item.__context__
    return None


def failure_reason(exc: BaseException, options: Mapping[str, Any], *, reading: bool = False) -> str:
    """The one-line reason of a failed request of the transport, credentials redacted.

    Parameters
    ----------
    exc : BaseException
        What fsspec, s3fs, botocore or aiohttp raised.
    options : mapping
        The storage options of the request: their credentials are hidden from the reason (:func:`redact`).
    reading : bool
        The request was a read of an open object (``read failed (...)``), not the opening of one
        (``cannot open (...)``): the wording of a failure that is none of the known ones (unreachable server,
        no such object, access denied, no credentials ...).

    Returns
    -------
    str
        One line, no URL (the caller names the object), e.g. ``"no such object or bucket"``.
    """
    kind = type(exc).__name__
    unreachable = _connection_failure(exc)
    if unreachable is not None:
        reason = f"cannot reach the server ({' '.join(str(unreachable).split()) or type(unreachable).__name__})"
    elif "support range requests" in str(exc):  # fsspec's HTTP file, from a server that ignores Range
        reason = "the server does not answer range requests (HTTP Range), which reading this file needs; download it first"
    elif kind == "FileExpired":  # fsspec: the ETag the read was conditional on is gone (If-Match failed)
        reason = "the object was rewritten while it was read (its ETag changed); run again to read the new version"
    elif isinstance(exc, FileNotFoundError):
        reason = "no such object or bucket"
    elif isinstance(exc, PermissionError) or kind in ("AccessDenied", "Forbidden", "ClientAuthorizationError"):
        reason = "access denied (check the credentials and the bucket's policy)"
    elif kind in ("NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"):
        reason = (
            "no credentials found: give --storage-option key=... --storage-option secret=..., "
            "or set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile (anonymous access: --storage-option anon=true)"
        )
    else:
        detail = " ".join(str(exc).split()) or kind
        if reading:
            reason = f"read failed ({detail})"
        else:
            reason = f"cannot open ({detail})"
    return redact(reason, options)


def remote_error(exc: BaseException, name: str, options: Mapping[str, Any], *, reading: bool = False) -> InputError:
    """The one-line :class:`~audiokit.errors.InputError` for a failure of the transport on URL ``name``
    (:func:`failure_reason`)."""
    return InputError(failure_reason(exc, options, reading=reading), name)


def _with_timeouts(scheme: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the default :data:`CONNECT_TIMEOUT` and :data:`READ_TIMEOUT` where they do not set their own:
    s3fs's ``config_kwargs`` (botocore's ``connect_timeout``/``read_timeout``), the HTTP filesystem's
    ``client_kwargs.timeout`` (an ``aiohttp.ClientTimeout``; a number given there is the read timeout)."""
    given = dict(options)
    if scheme in ("s3", "s3a"):
        config = dict(given.get("config_kwargs") or {})
        config.setdefault("connect_timeout", CONNECT_TIMEOUT)
        config.setdefault("read_timeout", READ_TIMEOUT)
        given["config_kwargs"] = config
    elif scheme in ("http", "https"):
        client = dict(given.get("client_kwargs") or {})
        timeout = client.get("timeout")
        if timeout is None or (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)):
            import aiohttp

            read = READ_TIMEOUT if timeout is None else float(timeout)
            client["timeout"] = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT, sock_read=read)
        given["client_kwargs"] = client
    return given


def _cancel_abandoned_reads() -> None:
    """At exit: cancel the requests still pending on fsspec's I/O loop and wait for them (at most a second).

    A read abandoned by Ctrl-C/SIGTERM (a stalled connection: :meth:`RemoteFile.readinto`) leaves its request
    running on fsspec's loop thread; destroyed pending at shutdown, asyncio would print "Task was destroyed but it
    is pending!" on stderr after the command's one line.  A run with nothing pending waits for nothing."""
    import asyncio

    asyn = sys.modules.get("fsspec.asyn")
    loop = asyn.loop[0] if asyn is not None and isinstance(getattr(asyn, "loop", None), list) else None
    if loop is None or loop.is_closed() or not loop.is_running():
        return

    async def cancel_others() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)

    with contextlib.suppress(BaseException):  # at exit: nothing here may turn into a traceback
        asyncio.run_coroutine_threadsafe(cancel_others(), loop).result(timeout=2.0)


def _quiet_orphaned_failures(loop: Any, context: dict[str, Any]) -> None:
    """fsspec's I/O loop's exception handler: a connection failure of a task nobody awaits any more is dropped.

    When the server goes away mid-upload, aiohttp's body-writing task fails with a connection error after the request
    itself has failed (and been reported in the command's one line); asyncio's default handler would print "Task
    exception was never retrieved" and a traceback on stderr.  Everything else goes to the default handler."""
    if isinstance(context.get("exception"), OSError) and "never retrieved" in str(context.get("message", "")):
        return
    loop.default_exception_handler(context)


_AT_EXIT = [False]


def _filesystem(url: str, options: Mapping[str, Any]) -> tuple[Any, str]:
    """fsspec's filesystem for ``url`` with ``options`` (its keyword arguments) and the path inside it.

    Raises
    ------
    ParameterError
        fsspec or the protocol's implementation is missing; the filesystem refused an option.
    """
    try:
        import fsspec
    except ImportError as exc:
        raise _missing_extra(exc, url) from None
    if not _AT_EXIT[0]:
        _AT_EXIT[0] = True
        atexit.register(_cancel_abandoned_reads)
        from fsspec.asyn import get_loop

        get_loop().set_exception_handler(_quiet_orphaned_failures)
    scheme = urlsplit(url).scheme
    try:
        fsspec.get_filesystem_class(scheme)
    except ValueError:
        raise ParameterError(f"{display_url(url)}: fsspec knows no {scheme}:// filesystem") from None
    except ImportError as exc:  # a protocol whose package is not installed: fsspec's message names it
        reason = " ".join(str(exc).split()) or f"the {scheme}:// filesystem is not installed"
        raise ParameterError(f"reading {scheme}:// URLs: {reason}") from None
    try:
        return fsspec.core.url_to_fs(url, **_with_timeouts(scheme.lower(), options))
    except ImportError as exc:
        raise _missing_extra(exc, url) from None
    except (TypeError, ValueError) as exc:  # the filesystem refused its keyword arguments
        raise ParameterError(redact(f"--storage-option: {' '.join(str(exc).split())}", options, url)) from None


def filesystem_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The storage ``options`` that are the filesystem's keyword arguments: without ``block_size`` and
    ``cache_type`` (:data:`_OPEN_KEYS`, options of an opened file, see :func:`open_url`)."""
    return {k: v for k, v in (options or {}).items() if k not in _OPEN_KEYS}


def filesystem(url: str, options: Mapping[str, Any] | None = None) -> tuple[Any, str]:
    """fsspec's filesystem of ``url`` with the storage ``options`` (:func:`filesystem_options`) and the path in it.

    Raises
    ------
    ParameterError
        As :func:`open_url`.
    """
    return _filesystem(url, filesystem_options(options))


def list_prefix(url: str, options: Mapping[str, Any] | None = None) -> list[str] | None:
    """The object URLs under ``url`` when it names a prefix (a "folder" of object storage), else None.

    ``s3://bucket/corpus/`` (or ``s3://bucket/corpus``, when objects sit under it) lists every object below it,
    recursively, as full URLs in sorted order; a URL naming an object gives None (it is read as a file).  HTTP(S)
    URLs are always objects (a web server has no listing fsspec can trust).  The listing's size and ETag of the first
    :data:`KNOWN_OBJECTS` objects are kept for an :func:`open_url` within :data:`KNOWN_SECONDS` (as a HEAD's are:
    a batch that reads each input's header right after listing makes no HEAD for it).

    Raises
    ------
    ParameterError
        As :func:`open_url`.
    InputError
        Nothing there (no object, prefix or bucket), access denied, no credentials, server unreachable (one line
        naming the URL).
    """
    if urlsplit(url).scheme.lower() in ("http", "https"):
        return None
    given = filesystem_options(options)
    fs, path = _filesystem(url, given)
    try:
        fs.invalidate_cache(path)  # list what is there now, not what this process saw before
        if not fs.isdir(path):
            if not fs.exists(path):
                raise FileNotFoundError(path)
            return None
        found = fs.find(path, detail=True)
    except Exception as exc:  # noqa: BLE001 (every transport failure becomes one line)
        raise remote_error(exc, display_url(url), given) from None
    urls = [fs.unstrip_protocol(key) for key in sorted(found)]
    for found_url, key in zip(urls[:KNOWN_OBJECTS], sorted(found)[:KNOWN_OBJECTS], strict=True):
        info = found[key]
        if isinstance(info, dict) and info.get("type", "file") == "file":  # the listing's size and ETag
            _remember(found_url, given, info)
    return urls


def _ns(value: Any) -> int | None:
    """A modification time as integer nanoseconds since the epoch: a datetime, seconds or ISO 8601 text (None)."""
    import datetime

    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        delta = value - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(value * 1e9)
    return None


def info_mtime_ns(info: Mapping[str, Any]) -> int | None:
    """The modification time in an fsspec info (S3 ``LastModified``, ``mtime``, GCS ``updated``) as integer
    nanoseconds since the epoch, or None."""
    mtime = next((info[k] for k in ("LastModified", "last_modified", "mtime", "updated") if info.get(k) is not None), None)
    return _ns(mtime)


#: Metadata of objects this process asked about (:func:`object_state`), kept for the :func:`open_url` that follows
#: (the batch asks for an input's size, mtime and ETag, then opens it): ``(url, options) -> (monotonic time, info)``.
_KNOWN: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()
_KNOWN_LOCK = threading.Lock()
#: Entries kept, and seconds an entry stays usable: an open long after the HEAD asks the server again.
KNOWN_OBJECTS, KNOWN_SECONDS = 4096, 30.0


def _known_key(url: str, options: Mapping[str, Any]) -> str:
    return json.dumps([url, options], sort_keys=True, default=repr)


def _remember(url: str, options: Mapping[str, Any], info: dict[str, Any]) -> None:
    with _KNOWN_LOCK:
        _KNOWN[_known_key(url, options)] = (time.monotonic(), info)
        while len(_KNOWN) > KNOWN_OBJECTS:
            _KNOWN.popitem(last=False)


def _recall(url: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The metadata :func:`object_state` just took of ``url`` (used once), or None (none, or older than
    :data:`KNOWN_SECONDS`)."""
    with _KNOWN_LOCK:
        found = _KNOWN.pop(_known_key(url, options), None)
    if found is None or time.monotonic() - found[0] > KNOWN_SECONDS or not isinstance(found[1].get("size"), int):
        return None
    return found[1]


def object_state(url: str, options: Mapping[str, Any] | None = None) -> tuple[int | None, int | None, str | None]:
    """``(size, mtime_ns, etag)`` of the object at ``url`` from one metadata request (HEAD), for a batch's resume.

    ``etag`` is the server's entity tag (S3's ``ETag``, an HTTP ``ETag``, GCS's ``md5Hash``), which changes with
    the content; any part the filesystem does not report is None, and an object that cannot be asked about
    (missing, unreachable, ...) gives ``(None, None, None)``.  The answer is kept for an :func:`open_url` of the
    same URL within :data:`KNOWN_SECONDS`, which then makes no request of its own before its first read (a batch
    input costs a HEAD and its GETs, not two HEADs).
    """
    given = filesystem_options(options)
    try:
        fs, path = _filesystem(url, given)
        fs.invalidate_cache(path)  # a listing cached in this process may predate a rewrite
        info = fs.info(path)
    except Exception:  # noqa: BLE001 (the input's own run reports the reason)
        return None, None, None
    if info.get("type", "file") == "file":
        _remember(url, given, info)
    size = info.get("size")
    etag = next((str(info[k]).strip('"') for k in ("ETag", "etag", "md5Hash") if info.get(k)), None)
    return (int(size) if isinstance(size, int) else None), info_mtime_ns(info), etag


def open_known(fs: Any, path: str, info: Mapping[str, Any], **file_kwargs: Any) -> Any:
    """``fs.open(path, "rb", ...)`` of an object whose metadata ``info`` is known (a HEAD or a listing of a moment
    ago): no request before the first read.  s3fs's reads are made conditional on ``info``'s ETag (``IfMatch``), as
    s3fs does after its own HEAD: an object rewritten since fails its next read ("the object was rewritten while it
    was read") instead of mixing two versions."""
    handle = fs.open(path, mode="rb", size=int(info["size"]), **file_kwargs)
    if hasattr(type(handle), "details"):
        handle.details = dict(info)
    payer = getattr(handle, "_request_payer_kw", None)
    if isinstance(payer, dict) and hasattr(handle, "read_kw") and info.get("ETag"):
        handle.read_kw = {**payer, "IfMatch": info["ETag"]}
    return handle


def open_url(url: str, options: Mapping[str, Any] | None = None) -> RemoteFile:
    """Open URL ``url`` for ranged reads through fsspec (``url_to_fs``, then the filesystem's ``open``).

    Parameters
    ----------
    url : str
        ``s3://bucket/key``, ``gs://...``, ``https://host/path`` ... (any protocol fsspec knows).
    options : mapping, optional
        Storage options (see the module docstring): the filesystem's keyword arguments, plus ``block_size``
        (bytes per ranged request, default :data:`BLOCK_BYTES`) and ``cache_type`` (fsspec's, default
        ``"blockcache"``: :data:`CACHED_BLOCKS` blocks kept).

    Returns
    -------
    RemoteFile
        Seekable, read-only; its ``name`` is :func:`display_url` of ``url`` and ``size`` the object's bytes.

    Raises
    ------
    ParameterError
        fsspec (or the protocol's implementation) is not installed; a storage option the filesystem refuses.
    InputError
        No such object or bucket, access denied, no credentials, server unreachable, a folder.
    """
    name = display_url(url)
    given = dict(options or {})
    file_kwargs = {"block_size": BLOCK_BYTES, "cache_type": "blockcache", "cache_options": {"maxblocks": CACHED_BLOCKS}}
    file_kwargs.update({k: given.pop(k) for k in _OPEN_KEYS & given.keys()})
    if file_kwargs["cache_type"] != "blockcache":
        file_kwargs.pop("cache_options")
    fs, path = _filesystem(url, given)
    known = _recall(url, given)
    try:
        if known is not None:  # object_state's HEAD of a moment ago: no second one (s3fs checks its ETag on reads)
            handle = open_known(fs, path, known, **file_kwargs)
        else:
            fs.invalidate_cache(path)  # the size and version as they are now (a listing cached here may be old)
            handle = fs.open(path, mode="rb", **file_kwargs)
    except (IsADirectoryError, ValueError):  # s3fs: ValueError for a bare bucket ("non key-like path")
        raise InputError("is a bucket or a folder (a prefix), not an audio object", name) from None
    except Exception as exc:  # noqa: BLE001 (every transport failure becomes one line)
        raise remote_error(exc, name, given) from None
    try:
        return RemoteFile(handle, name, given)
    except Exception as exc:  # noqa: BLE001 (the size is asked of the server)
        handle.close()
        raise remote_error(exc, name, given) from None

"""Requests per URL input, counted at the server (issue 22, part 2b): a batch asks an object for its size, mtime and
ETag (one HEAD) and then reads it; the open that follows the HEAD reuses its answer instead of asking again."""

from __future__ import annotations

import pytest

from audiokit.errors import InputError
from audiokit.io import remote


@pytest.fixture(autouse=True)
def _nothing_kept():
    """Each test starts with no kept answer (an earlier test's HEAD in this process must not serve its opens)."""
    remote._KNOWN.clear()
    yield
    remote._KNOWN.clear()


def _by_method(requests, fragment: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in requests:
        if fragment in r.path:
            counts[r.method] = counts.get(r.method, 0) + 1
    return counts


def test_open_after_object_state_makes_no_second_head(s3_env):
    url = s3_env.url("stereo.flac")
    size, _, etag = remote.object_state(url)
    assert size == (s3_env.local / "stereo.flac").stat().st_size and etag
    with remote.open_url(url) as fh:
        assert fh.size == size
        assert _by_method(s3_env.server.log.requests, "stereo.flac") == {"HEAD": 1}  # the open asked nothing
        head = fh.read(4)
    assert head == b"fLaC"
    assert _by_method(s3_env.server.log.requests, "stereo.flac") == {"HEAD": 1, "GET": 1}


def test_the_kept_answer_is_used_once_and_not_when_stale(s3_env, monkeypatch):
    url = s3_env.url("mono.flac")
    remote.object_state(url)
    remote.open_url(url).close()
    remote.open_url(url).close()  # the answer was used by the first open: this one asks again
    assert _by_method(s3_env.server.log.requests, "mono.flac") == {"HEAD": 2}
    s3_env.server.log.clear()
    monkeypatch.setattr(remote, "KNOWN_SECONDS", -1.0)  # every kept answer too old
    remote.object_state(url)
    remote.open_url(url).close()
    assert _by_method(s3_env.server.log.requests, "mono.flac") == {"HEAD": 2}


def test_other_storage_options_do_not_share_an_answer(s3_env):
    url = s3_env.url("mono.flac")
    remote.object_state(url, {"anon": False})
    remote.open_url(url).close()  # other options (another filesystem, maybe other credentials): asks itself
    assert _by_method(s3_env.server.log.requests, "mono.flac") == {"HEAD": 2}


def test_a_rewritten_object_is_read_as_what_the_head_saw_or_fails(s3_env):
    """The kept answer carries the ETag: s3fs's reads are then conditional on it (If-Match), so an object rewritten
    between the HEAD and the read fails with one line instead of mixing two versions."""
    client = s3_env.server.client()
    client.put_object(Bucket=s3_env.bucket, Key="rewritten.bin", Body=b"a" * 1000)
    url = s3_env.url("rewritten.bin")
    remote.object_state(url)
    client.put_object(Bucket=s3_env.bucket, Key="rewritten.bin", Body=b"b" * 1000)
    fh = remote.open_url(url)
    try:
        assert fh.read(10) == b""
        with pytest.raises(InputError) as caught:
            fh.raise_failure()
    finally:
        fh.close()
    assert (
        str(caught.value)
        == f"{url}: the object was rewritten while it was read (its ETag changed); run again to read the new version"
    )


@pytest.mark.slow
def test_batch_input_costs_one_head_and_its_gets(s3_env, cli, tmp_path):
    """``--store files``: per object one HEAD (the record's size, mtime, ETag) and one GET (the 256 KiB block);
    before the kept answer it was HEAD, HEAD, GET."""
    client = s3_env.server.client()
    for name in ("a", "b", "c"):
        client.upload_file(str(s3_env.local / "mono.flac"), s3_env.bucket, f"req/{name}.flac")
    s3_env.server.log.clear()
    code, _, err = cli("batch", "mel", s3_env.url("req/"), "--out", tmp_path / "o", "--store", "files", "-q", "--jobs", "1")
    assert code == 0, err
    for name in ("a", "b", "c"):
        assert _by_method(s3_env.server.log.requests, f"req/{name}.flac") == {"HEAD": 1, "GET": 1}


def test_open_after_a_listing_makes_no_head(s3_env):
    client = s3_env.server.client()
    for name in ("a", "b"):
        client.upload_file(str(s3_env.local / "mono.flac"), s3_env.bucket, f"listed/{name}.flac")
    s3_env.server.log.clear()
    urls = remote.list_prefix(s3_env.url("listed/"))
    assert urls == [s3_env.url("listed/a.flac"), s3_env.url("listed/b.flac")]
    for url in urls:
        with remote.open_url(url) as fh:
            assert fh.size == (s3_env.local / "mono.flac").stat().st_size
            assert fh.read(4) == b"fLaC"
    assert [r.method for r in s3_env.server.log.requests if "listed/" in r.path] == ["GET", "GET"]  # no HEAD


@pytest.mark.slow
def test_store_batch_input_costs_one_head(s3_env, cli, tmp_path):
    """``--store shards``: the client reads each input's header right after listing the prefix (no HEAD: the
    listing's size and ETag), then the task's HEAD (the record) and GET: HEAD 1, GET 2 per object (was HEAD 3, GET 2
    before the listing and the HEAD were reused)."""
    client = s3_env.server.client()
    for name in ("a", "b", "c"):
        client.upload_file(str(s3_env.local / "mono.flac"), s3_env.bucket, f"req-store/{name}.flac")
    s3_env.server.log.clear()
    code, _, err = cli(
        "batch", "mel", s3_env.url("req-store/"), "--out", tmp_path / "o", "--store", "shards", "-q", "--jobs", "1"
    )
    assert code == 0, err
    for name in ("a", "b", "c"):
        assert _by_method(s3_env.server.log.requests, f"req-store/{name}.flac") == {"HEAD": 1, "GET": 2}


def test_an_orphaned_connection_failure_on_fsspecs_loop_prints_nothing(capsys, caplog):
    """The server gone mid-upload: aiohttp's body task fails after its request did; asyncio would print a traceback."""
    import asyncio

    from audiokit.io import remote

    loop = asyncio.new_event_loop()
    try:
        orphan = {"message": "Task exception was never retrieved", "exception": ConnectionResetError("closing transport")}
        remote._quiet_orphaned_failures(loop, orphan)
        assert capsys.readouterr().err == "" and not caplog.records
        other = {"message": "Task exception was never retrieved", "exception": ValueError("a bug")}
        remote._quiet_orphaned_failures(loop, other)  # anything else: asyncio's default handler (the logger)
        assert [r.name for r in caplog.records] == ["asyncio"] and "a bug" in caplog.text
    finally:
        loop.close()

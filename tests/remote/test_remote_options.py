"""``audiokit.io.remote`` on its own: storage-option parsing, the environment fallback, what is shown of a URL,
the missing-extra message, and a network cut in the middle of a read (a real HTTP server that closes early)."""

from __future__ import annotations

import json
import sys

import pytest

from audiokit.errors import InputError, ParameterError
from audiokit.io.remote import display_url, is_url, parse_storage_options, redact, storage_options


def test_parse_storage_options_decodes_json_and_nests_dotted_keys():
    options = parse_storage_options(
        [
            "key=AKIA1",
            "secret=abc=def",
            "anon=false",
            "default_block_size=1048576",
            'token="0123"',
            "client_kwargs.region_name=eu-west-1",
        ]
    )
    assert options == {
        "key": "AKIA1",
        "secret": "abc=def",  # split at the first '='
        "anon": False,
        "default_block_size": 1048576,
        "token": "0123",
        "client_kwargs": {"region_name": "eu-west-1"},
    }


@pytest.mark.parametrize("item", ["novalue", "=x", "a..b=1", ".a=1"])
def test_parse_storage_options_refuses_malformed_items(item):
    with pytest.raises(ParameterError, match="expected KEY=VALUE"):
        parse_storage_options([item])


def test_environment_options_under_the_given_ones(monkeypatch):
    monkeypatch.setenv("AUDIOKIT_STORAGE_OPTIONS", json.dumps({"anon": True, "endpoint_url": "http://a"}))
    assert storage_options({"endpoint_url": "http://b"}) == {"anon": True, "endpoint_url": "http://b"}
    monkeypatch.setenv("AUDIOKIT_STORAGE_OPTIONS", "not json {secret}")
    with pytest.raises(ParameterError) as err:
        storage_options()
    assert "secret" not in str(err.value)
    monkeypatch.delenv("AUDIOKIT_STORAGE_OPTIONS")
    assert storage_options() == {}


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("s3://bucket/a.flac", "s3://bucket/a.flac"),
        ("https://user:pw@host:8443/x.wav", "https://host:8443/x.wav"),
        (
            "https://b.s3.amazonaws.com/a.wav?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc123&v=2",
            "https://b.s3.amazonaws.com/a.wav?X-Amz-Credential=***&X-Amz-Signature=***&v=2",
        ),
        (
            "https://acct.blob.core.windows.net/c/a.wav?sv=2022&sig=SECRET&se=2030",
            "https://acct.blob.core.windows.net/c/a.wav?sv=2022&sig=***&se=***",
        ),
    ],
)
def test_display_url_hides_credentials(url, shown):
    assert display_url(url) == shown


def test_redact_hides_credential_values_only():
    options = {
        "key": "AKIAXYZ",
        "secret": "s3cr3t-value",
        "endpoint_url": "http://127.0.0.1:9",
        "client_kwargs": {"aws_session_token": "tok-123"},
    }
    text = "failed with AKIAXYZ / s3cr3t-value / tok-123 at http://127.0.0.1:9"
    assert redact(text, options) == "failed with *** / *** / *** at http://127.0.0.1:9"


@pytest.mark.parametrize(
    ("path", "url"), [("s3://b/k", True), ("https://h/x", True), ("a.wav", False), ("-", False), ("s3:/b/k", False)]
)
def test_is_url(path, url):
    assert is_url(path) is url


def test_missing_extra_names_the_install_command(monkeypatch, cli):
    monkeypatch.setitem(sys.modules, "fsspec", None)  # import fsspec raises ImportError, as when it is not installed
    code, _, err = cli("info", "s3://bucket/a.flac")
    assert code == 2
    assert err.strip() == "error: reading s3:// URLs needs fsspec and its filesystems (fsspec): pip install 'audiokit[remote]'"


def test_library_read_of_a_url(s3_env):
    import audiokit

    signal = audiokit.read(s3_env.url("stereo.wav"))
    local = audiokit.read(s3_env.local / "stereo.wav")
    assert signal.sr == local.sr and (signal.samples == local.samples).all()


def test_network_cut_mid_read_is_one_line(http_server, cli, tmp_path):
    """The server sends half a body and closes, once 2 MiB were served: exit 3 naming the URL, no output file."""
    url = f"{http_server.url}/long.flac"
    http_server.cut_after(2 << 20)
    try:
        code, out, err = cli("spectrogram", url, "--npy", tmp_path / "g.npy", "--storage-option", "skip_instance_cache=true")
    finally:
        http_server.cut_after(None)
    assert code == 3 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"error: {url}: read failed ("), lines[0]
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError):  # and the library raises the same error
        from audiokit.io.reader import open_audio

        http_server.cut_after(0)
        try:
            with open_audio(url, storage_options={"skip_instance_cache": True}) as source:
                for _ in source.blocks():
                    pass
        finally:
            http_server.cut_after(None)


def test_a_server_without_range_support_is_one_line(s3, cli):
    """Python's own SimpleHTTPRequestHandler sends whole files: beyond the first block the read fails, one line."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(s3.local))

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # the client closing a whole-file answer early (a broken pipe here) is expected

    server = Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/long.flac"
        code, out, err = cli("info", url)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert code == 3 and out == ""
    assert err.strip() == (
        f"error: {url}: the server does not answer range requests (HTTP Range), which reading this file needs; download it first"
    )


def test_unknown_scheme_and_missing_protocol_package(cli):
    code, _, err = cli("info", "foo://host/a.wav")
    assert code == 2
    assert err.strip() == "error: foo://host/a.wav: fsspec knows no foo:// filesystem"
    import importlib.util

    if importlib.util.find_spec("gcsfs") is not None:
        pytest.skip("gcsfs is installed here: gs:// has its filesystem")
    code, _, err = cli("info", "gs://bucket/a.wav")
    assert code == 2
    assert err.strip() == "error: reading gs:// URLs: Please install gcsfs to access Google Storage"

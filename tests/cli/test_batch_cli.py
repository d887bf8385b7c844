"""``audiokit batch`` as a command: options taken from the single-file commands, usage errors, exit codes."""

from __future__ import annotations

import inspect
import json
import os

import numpy as np
import pytest
import soundfile as sf

from audiokit.pipelines import registry

COMMANDS = registry.batch_jobs()


@pytest.fixture
def clip(tmp_path):
    path = tmp_path / "in" / "clip.wav"
    path.parent.mkdir()
    t = np.arange(8000) / 16000
    sf.write(path, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16000, subtype="PCM_16")
    return path


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_of_the_single_file_command_is_a_batch_option(name):
    import typer

    from audiokit.cli import batch
    from audiokit.cli.batch import DROPPED, batch_app

    single = inspect.signature(batch.single_file_command(name)[0]).parameters
    group = typer.main.get_command(batch_app)
    params = {p.name: p for p in group.commands[name].params}
    for pname in single:
        if pname not in DROPPED:
            assert pname in params, f"batch {name} lacks --{pname}"
    for pname in (
        "paths",
        "out",
        "root",
        "glob",
        "segments",
        "force",
        "max_failures",
        "jobs",
        "chunk",
        "scheduler",
        "summary_json",
    ):
        assert pname in params


def test_help_lists_the_commands(cli):
    code, out, _ = cli("batch", "--help")
    assert code == 0
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["batch", "mel", "--store", "files", "--out", "o"], "no input"),
        (["batch", "mel", "--store", "files", "{clip}", "--out", "o", "--win", "abc"], "--win"),
        (["batch", "resample", "{clip}", "--out", "o"], "--to"),
        (["batch", "resample", "{clip}", "--to", "5", "--out", "o"], "--to"),
        (["batch", "quantize", "{clip}", "--bits", "99", "--out", "o"], "--bits"),
        (["batch", "resample", "{clip}", "--to", "8k", "--out", "o", "--png"], "No such option"),
        (["batch", "mel", "--store", "files", "{clip}", "--out", "o", "--jobs", "0"], "--jobs"),
        (["batch", "mel", "--store", "files", "{clip}", "--out", "o", "--scale", "loud"], "--scale"),
        (["batch", "nope", "{clip}", "--out", "o"], "No such command"),
        (["batch", "mel", "--store", "files", "{clip}"], "--out"),
    ],
)
def test_usage_errors_exit_2_before_any_work(cli, clip, tmp_path, args, message):
    os.chdir(tmp_path)
    code, out, err = cli(*[a.format(clip=clip) for a in args])
    assert code == 2, err
    assert message in err and out == ""
    assert not (tmp_path / "o").exists()  # refused before --out is created


def test_an_output_folder_that_cannot_be_written_exits_4(cli, clip, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli("batch", "info", clip, "--out", blocker / "sub")
    assert code == 4 and "error:" in err
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(0o500)
    try:
        if os.access(readonly, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        code, _, err = cli("batch", "info", clip, "--out", readonly)
        assert code == 4 and "not writable" in err
    finally:
        readonly.chmod(0o700)


def test_quiet_prints_nothing_but_json_is_data(cli, clip, tmp_path):
    code, out, err = cli("batch", "info", clip, "--out", tmp_path / "o", "-q", "--json", "-j", "1")
    assert code == 0 and err == ""
    assert json.loads(out)["ok"] == 1


def test_library_call_without_the_cli(clip, tmp_path):
    from audiokit.batch import BatchRequest, Job, run_batch
    from audiokit.pipelines.resample import ResampleOptions

    stats = run_batch(
        BatchRequest(job=Job("resample", ResampleOptions(to="8k")), paths=(str(clip),), out=str(tmp_path / "o"), jobs=1)
    )
    assert (stats.ok, stats.failed, stats.exit_code) == (1, 0, 0)
    assert sf.info(tmp_path / "o" / "clip.8k.wav").samplerate == 8000


def test_scheduler_without_dask_names_the_extra(cli, clip, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask.distributed were not installed
    code, _, err = cli("batch", "info", clip, "--out", tmp_path / "o", "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and "pip install 'audiokit[cluster]'" in err

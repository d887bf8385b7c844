"""Inputs a batch must not take or must not open (issue 20): its own outputs on a re-run, FIFOs and other special
files in folders, lists and manifests; and an output folder deleted while the batch runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from audiokit.batch import BatchRequest, Job, run_batch
from audiokit.errors import ExitStatus, OutputError
from audiokit.pipelines.resample import ResampleOptions
from tests.helpers.batch import OPTIONS, audiokit_cmd, manifest_lines, write_tone_noise

#: Seconds a batch subprocess may take here (a few short files): a batch blocked on a FIFO fails the test instead of
#: hanging it.
TIMEOUT = 60


def _batch(*args, cwd: Path) -> tuple[int, str, str]:
    """``python -m audiokit batch ARGS`` as a subprocess, stdin closed, killed after :data:`TIMEOUT` seconds."""
    proc = subprocess.run(
        audiokit_cmd("batch", *args),
        capture_output=True,
        text=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT,
        env={**os.environ, "COLUMNS": "200"},
    )
    return proc.returncode, proc.stdout, proc.stderr


def _two_files(folder: Path) -> Path:
    write_tone_noise(folder / "a.wav", 0.3, seed=1, hum=0.1)
    write_tone_noise(folder / "sub" / "b.wav", 0.4, seed=2, hum=0.1)
    return folder


@pytest.mark.parametrize("command", ["resample", "dehum", "quantize"])
def test_a_rerun_with_out_the_input_folder_takes_none_of_its_outputs(cli, tmp_path, command):
    data = _two_files(tmp_path / "data")
    before = sorted(p.relative_to(data) for p in data.rglob("*.wav"))
    args = ("batch", command, *OPTIONS[command], data, "--out", data, "-j", "1", "--json")
    code, stdout, _ = cli(*args)
    assert code == 0 and json.loads(stdout)["ok"] == 2
    after_one = sorted(p.relative_to(data) for p in data.rglob("*.wav"))
    assert len(after_one) == 4  # a.<x>.wav and sub/b.<x>.wav beside the inputs
    for _ in range(2):
        code, stdout, err = cli(*args)
        summary = json.loads(stdout)
        assert code == 0 and (summary["total"], summary["ok"], summary["skipped"]) == (2, 0, 2)
        assert sorted(p.relative_to(data) for p in data.rglob("*.wav")) == after_one  # no a.<x>.<x>.wav
        # the two WAVs of the first run and the manifest itself, each named as the batch's own
        assert summary["ignored_reasons"] == {"an output of this batch": 3}
        assert "3 files ignored (an output of this batch): " in err
    assert {r["id"] for r in manifest_lines(data)} == {str(p.with_suffix("")) for p in before}


def test_outputs_named_in_a_list_or_on_the_command_line_are_not_taken(cli, tmp_path):
    data = _two_files(tmp_path / "data")
    code, _, _ = cli("batch", "resample", "--to", "8k", data, "--out", data, "-j", "1", "-q")
    assert code == 0
    outputs = sorted(str(p) for p in data.rglob("*.8k.wav"))
    (tmp_path / "all.txt").write_text("".join(f"{p}\n" for p in sorted(data.rglob("*.wav"))))
    for inputs in ([f"@{tmp_path / 'all.txt'}"], [str(p) for p in sorted(data.rglob("*.wav"))]):
        code, stdout, _ = cli("batch", "resample", "--to", "8k", *inputs, "--root", data, "--out", data, "-j", "1", "--json")
        summary = json.loads(stdout)
        assert code == 0 and (summary["total"], summary["skipped"], summary["ignored"]) == (2, 2, 2)
        assert sorted(summary["ignored_files"]) == outputs
    assert not list(data.rglob("*.8k.8k.wav"))


def test_an_output_of_an_earlier_run_with_other_options_is_not_taken(cli, tmp_path):
    data = _two_files(tmp_path / "data")
    for rate in ("8k", "12k"):
        code, _, _ = cli("batch", "resample", "--to", rate, data, "--out", data, "-j", "1", "-q")
        assert code == 0
    # the 8 kHz outputs are still listed by the manifest's older lines: never inputs of the 12 kHz run
    assert sorted(p.name for p in data.rglob("*.wav")) == ["a.12k.wav", "a.8k.wav", "a.wav", "b.12k.wav", "b.8k.wav", "b.wav"]


def test_a_corpus_store_in_the_input_folder_is_never_an_input(cli, tmp_path):
    data = _two_files(tmp_path / "data")
    (data / "notes.txt").write_text("not audio, not the store's")  # a user's file: still "not matching"
    args = ("batch", "mel", "--n-mels", "20", data, "--out", data, "--store", "npy", "-j", "1", "--json")
    code, stdout, _ = cli(*args)
    assert code == 0 and json.loads(stdout)["ok"] == 2
    assert list((data / "feats").rglob("*.npy"))
    code, stdout, _ = cli(*args[:-1], "--glob", "*", "--json")  # every name matches: only the store's files are kept out
    summary = json.loads(stdout)
    assert code == 3 and (summary["total"], summary["ok"], summary["failed"], summary["skipped"]) == (3, 0, 1, 2)
    failed = [r for r in manifest_lines(data) if r["status"] == "failed"]
    assert [r["path"] for r in failed] == [str(data / "notes.txt")]  # taken by --glob '*', fails as not audio
    visible = [p for p in data.rglob("*") if p.is_file() and not any(n.startswith(".") for n in p.relative_to(data).parts)]
    store_files = len(visible) - 3  # a.wav, sub/b.wav, notes.txt: the rest is the store's (and its manifest)
    assert store_files > 8 and summary["ignored_reasons"] == {"an output of this batch": store_files}
    assert not any("feats" in r["id"] or r["id"].startswith(("manifest", "store", "index")) for r in manifest_lines(data))


def test_a_fifo_in_a_folder_is_skipped_and_counted(tmp_path):
    data = _two_files(tmp_path / "data")
    os.mkfifo(data / "stream.wav")
    os.mkfifo(data / "sub" / "zz.flac")
    code, stdout, err = _batch("info", data, "--out", tmp_path / "o", "-j", "1", "--json", cwd=tmp_path)
    summary = json.loads(stdout)
    assert code == 0 and (summary["total"], summary["ok"], summary["ignored"]) == (2, 2, 2)
    assert summary["ignored_files"] == [str(data / "stream.wav"), str(data / "sub" / "zz.flac")]
    assert summary["ignored_reasons"] == {"not a regular file": 2}
    assert "2 files ignored (not a regular file): " in err


def test_a_fifo_in_a_list_a_manifest_or_the_command_line_fails_alone_unopened(tmp_path):
    data = _two_files(tmp_path / "data")
    fifo = data / "live.wav"
    os.mkfifo(fifo)
    (tmp_path / "list.txt").write_text(f"{fifo}\n{data / 'a.wav'}\n")
    (tmp_path / "segs.jsonl").write_text(json.dumps({"id": "seg", "path": str(fifo), "start": 0.1}) + "\n")
    runs = {
        "list": [f"@{tmp_path / 'list.txt'}"],
        "argument": [str(fifo), str(data / "a.wav")],
        "manifest": [str(data / "a.wav"), "--manifest", str(tmp_path / "segs.jsonl")],
    }
    for name, inputs in runs.items():
        out = tmp_path / f"o-{name}"
        code, stdout, err = _batch("resample", "--to", "8k", *inputs, "--out", out, "-j", "1", "--json", cwd=tmp_path)
        summary = json.loads(stdout)
        assert code == ExitStatus.INPUT and (summary["ok"], summary["failed"]) == (1, 1), name
        line = f"error: {fifo}: not a regular file (a FIFO, socket or device; a batch does not open it)"
        assert line in err.splitlines(), name
        assert [r["status"] for r in manifest_lines(out)].count("failed") == 1
        assert sorted(p.name for p in out.rglob("*.wav")) == ["a.8k.wav"]


def test_an_output_folder_deleted_mid_batch_stops_with_exit_4(tmp_path):
    data = tmp_path / "data"
    for i in range(4):
        write_tone_noise(data / f"u{i}.wav", 0.2, seed=i)
    out = tmp_path / "o"
    seen = []

    def delete_after_the_first(stats) -> None:
        seen.append(stats.done)
        if stats.done == 1 and out.exists():
            shutil.rmtree(out)  # what `rm -rf o` does while the batch runs

    request = BatchRequest(job=Job("resample", ResampleOptions(to="8k")), paths=(str(data),), out=str(out), jobs=1, chunk=1)
    with pytest.raises(OutputError) as caught:
        run_batch(request, on_update=delete_after_the_first)
    assert caught.value.exit_code == ExitStatus.OUTPUT
    assert caught.value.path == str(out / "manifest.jsonl")
    assert "deleted or replaced during the batch" in str(caught.value) and "\n" not in str(caught.value)
    assert seen[-1] == 1  # stopped at the next record: nothing counted as recorded after the folder went
    assert not (out / "manifest.jsonl").exists()  # no manifest in a recreated folder that would miss the first lines


def test_a_manifest_writer_refuses_a_replaced_folder(tmp_path):
    from audiokit.batch.manifest import ManifestWriter

    out = tmp_path / "o"
    out.mkdir()
    with ManifestWriter(out / "manifest.jsonl") as writer:
        writer.append({"id": "a"})
        out.rename(tmp_path / "moved")
        out.mkdir()
        (out / "manifest.jsonl").write_text("")  # another file under the same name
        with pytest.raises(OutputError, match="deleted or replaced"):
            writer.append({"id": "b"})
    assert (tmp_path / "moved" / "manifest.jsonl").read_text().count("\n") == 1
    assert (out / "manifest.jsonl").read_text() == ""


def test_a_link_in_a_folder_that_cannot_be_looked_at_fails_alone(cli, tmp_path):
    """A link whose target ``stat`` refuses with other than ENOENT (a loop: ELOOP; through a file: ENOTDIR; into
    ``/proc/1/cwd`` where that is EACCES): ``DirEntry.is_dir`` raised, and the whole batch ended in "internal
    error: PermissionError", exit 1 (found by the campaign).  Now that input fails on its own, the others run."""
    data = tmp_path / "in"
    write_tone_noise(data / "a.wav", 0.3, seed=1)
    (data / "loop.wav").symlink_to("loop.wav")
    (data / "plain").write_bytes(b"")
    (data / "through.wav").symlink_to("plain/x.wav")
    code, _, err = cli("batch", "mel", data, "--out", tmp_path / "out")
    assert code == ExitStatus.INPUT, err
    assert "internal error" not in err
    records = {Path(r["path"]).name: r["status"] for r in manifest_lines(tmp_path / "out")}
    assert records == {"a.wav": "ok", "loop.wav": "failed", "through.wav": "failed"}

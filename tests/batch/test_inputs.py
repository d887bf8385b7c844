"""Input forms: folders, --glob, @list, stdin, --manifest segments; the output tree and ids."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from audiokit.batch.inputs import collect_inputs
from audiokit.errors import ParameterError
from tests.helpers.batch import manifest_lines, write_tone_noise


def _ids(out) -> list[str]:
    return sorted(r["id"] for r in manifest_lines(out))


def test_folders_are_walked_and_the_tree_mirrored(cli, corpus, tmp_path):
    (corpus / ".hidden.wav").write_bytes(b"")  # hidden files are skipped
    (corpus / "notes.txt").write_text("not audio")
    code, _, err = cli("batch", "info", corpus / "spk1", corpus / "spk2", "--out", tmp_path / "o", "-j", "1")
    assert code == 0, err
    assert _ids(tmp_path / "o") == ["spk1/a", "spk1/b", "spk2/e", "spk2/sess/c", "spk2/sess/d"]


def test_glob_and_root(cli, corpus, tmp_path):
    code, _, err = cli(
        "batch",
        "mel",
        "--store",
        "files",
        corpus,
        "--glob",
        "*.flac",
        "--out",
        tmp_path / "o",
        "-j",
        "1",
        "--root",
        corpus.parent,
    )
    assert code == 0, err
    assert _ids(tmp_path / "o") == ["data/f", "data/spk1/b", "data/spk2/sess/d"]
    assert (tmp_path / "o" / "data" / "spk2" / "sess" / "d.mel.npy").exists()
    code, _, err = cli("batch", "mel", "--store", "files", corpus, "--root", corpus / "spk1", "--out", tmp_path / "o2")
    assert code == 2 and "is not inside it" in err


def test_list_file_and_stdin(cli, run, corpus, tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text(f"# two files\n{corpus / 'spk1' / 'a.wav'}\n\n{corpus / 'spk2' / 'e.wav'}\n")
    code, _, err = cli("batch", "info", f"@{listing}", "--out", tmp_path / "o", "-j", "1")
    assert code == 0, err
    assert _ids(tmp_path / "o") == ["spk1/a", "spk2/e"]
    paths = "\n".join(str(p) for p in sorted(corpus.rglob("*.flac"))) + "\n"
    code, stdout, err = run("batch", "info", "-", "--out", tmp_path / "o2", "-j", "1", "--json", stdin=paths)
    assert code == 0, err
    assert json.loads(stdout)["ok"] == 3
    assert _ids(tmp_path / "o2") == ["f", "spk1/b", "spk2/sess/d"]


def test_manifest_segments_equal_the_single_file_command_on_the_cut_file(cli, tmp_path):
    long = write_tone_noise(tmp_path / "rec" / "long.flac", 3.0, seed=7)
    segments = tmp_path / "segments.jsonl"
    segments.write_text(
        json.dumps({"id": "spkA/seg1", "path": str(long), "start": 0.25, "duration": 1.0})
        + "\n"
        + json.dumps({"id": "seg2", "path": str(long), "start": 2.5})
        + "\n"
    )
    out = tmp_path / "o"
    code, _, err = cli("batch", "mel", "--store", "files", "--manifest", segments, "--out", out, "-j", "1", "--hop", "5ms")
    assert code == 0, err
    x, sr = sf.read(long, dtype="float32")
    for item_id, first, count in (("spkA/seg1", 4000, 16000), ("seg2", 40000, 8000)):
        cut = tmp_path / f"cut-{item_id.replace('/', '-')}.flac"
        sf.write(cut, x[first : first + count], sr, subtype="PCM_16")
        code, _, err = cli("mel", cut, "--npy", tmp_path / "ref.npy", "--hop", "5ms")
        assert code == 0, err
        assert (out / f"{item_id}.mel.npy").read_bytes() == (tmp_path / "ref.npy").read_bytes()
    records = {r["id"]: r for r in manifest_lines(out)}
    assert records["spkA/seg1"]["segment"] == {"start": 0.25, "duration": 1.0}
    assert records["spkA/seg1"]["duration"] == 1.0 and records["seg2"]["duration"] == 0.5
    # A re-run skips both; a segment starting beyond the end fails on its own.
    segments.write_text(segments.read_text() + json.dumps({"id": "late", "path": str(long), "start": 9.0}) + "\n")
    code, _, err = cli("batch", "mel", "--store", "files", "--manifest", segments, "--out", out, "-j", "1", "--hop", "5ms")
    assert code == 3 and "0 ok, 1 failed, 2 already done" in err
    assert "segment start 9 s is at or beyond the end (3 s)" in err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 1: not JSON"),
        ('{"id": "x"}', 'expected an object with a "path" string'),
        ('{"path": "a.wav", "start": -1}', "'start' must be a number of seconds >= 0"),
        ('{"id": "../x", "path": "a.wav"}', "must be a relative name"),
    ],
)
def test_bad_manifest_lines_are_usage_errors(cli, tmp_path, line, message):
    segments = tmp_path / "s.jsonl"
    segments.write_text(line + "\n")
    code, _, err = cli("batch", "info", "--manifest", segments, "--out", tmp_path / "o")
    assert code == 2 and message in err


def test_same_id_twice_fails_the_second(cli, corpus, tmp_path):
    write_tone_noise(corpus / "spk1" / "a.flac", 0.5, seed=9)
    code, _, err = cli("batch", "info", corpus / "spk1", "--out", tmp_path / "o", "-j", "1")
    assert code == 3
    failed = [r for r in manifest_lines(tmp_path / "o") if r["status"] == "failed"]
    assert [r["path"] for r in failed] == [str(corpus / "spk1" / "a.wav")]
    assert "already that of" in failed[0]["error"]


def test_the_output_folder_inside_the_input_tree_is_not_an_input(cli, corpus):
    out = corpus / "resampled"
    assert cli("batch", "resample", "--to", "8k", corpus, "--out", out, "-j", "1")[0] == 0
    code, _, err = cli("batch", "resample", "--to", "8k", corpus, "--out", out, "-j", "1")
    assert code == 0 and "6 already done, 6 inputs" in err


def test_collect_inputs_library_call(corpus):
    items = collect_inputs([str(corpus)], glob="*.wav")
    assert [i.id for i in items] == ["spk1/a", "spk2/e", "spk2/sess/c"]
    with pytest.raises(ParameterError, match="no input"):
        collect_inputs([str(corpus)], glob="*.mp3")


def test_corpus_loader(cli, corpus, tmp_path):
    import audiokit.corpus

    out = tmp_path / "o"
    (corpus / "bad.wav").write_bytes(b"")
    assert cli("batch", "mel", "--store", "files", corpus, "--out", out, "-j", "1")[0] == 3
    feats = audiokit.corpus.open(out)
    assert len(feats) == 6 and "spk1/a" in feats and "bad" not in feats
    assert "empty file" in feats.failed["bad"]["error"]
    entry = feats["spk2/sess/c"]
    array = entry.array
    assert isinstance(array, np.memmap) and array.shape == (2, 80, 108)
    assert np.array_equal(array, np.load(out / "spk2" / "sess" / "c.mel.npy"))
    assert entry.metadata["sr"] == 16000 and entry.duration == pytest.approx(1.1)
    with pytest.raises(KeyError, match="it failed"):
        feats["bad"]

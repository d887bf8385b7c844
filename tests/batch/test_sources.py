"""One output folder, several runs: an id belongs to one source, so one collection's outputs never replace another's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.batch import manifest_lines, write_tone_noise


@pytest.fixture
def collections(tmp_path: Path) -> Path:
    """``coll/A`` (s/001, s/002) and ``coll/B`` (s/001, s/003): one speaker folder each, with a shared name."""
    coll = tmp_path / "coll"
    write_tone_noise(coll / "A" / "s" / "001.wav", 0.5, seed=1)
    write_tone_noise(coll / "A" / "s" / "002.wav", 0.4, seed=2)
    write_tone_noise(coll / "B" / "s" / "001.wav", 0.6, seed=3)
    write_tone_noise(coll / "B" / "s" / "003.wav", 0.3, seed=4)
    return coll


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_second_collection_into_the_same_out_is_refused_before_any_work(cli, collections, tmp_path):
    out = tmp_path / "X"
    a, b = collections / "A", collections / "B"
    assert cli("batch", "mel", "--store", "files", a, "--out", out, "-j", "1")[0] == 0
    before = _files(out)
    expected = (
        f"error: {b / 's' / '001.wav'}: id 's/001' already belongs to {a / 's' / '001.wav'} in {out / 'manifest.jsonl'}; "
        "use another --out or --root\n"
    )
    for force in ([], ["--force"]):  # --force recomputes the same sources; it never hands an id to another
        code, stdout, err = cli("batch", "mel", "--store", "files", b, "--out", out, "-j", "1", "--json", *force)
        assert (code, stdout, err) == (2, "", expected)
        assert _files(out) == before  # A's features, the manifest: not a byte changed; no s/003 either
    # The same source resumes, and --force recomputes it.
    code, _, err = cli("batch", "mel", "--store", "files", a, "--out", out, "-j", "1")
    assert code == 0 and "0 ok, 0 failed, 2 already done" in err
    code, _, err = cli("batch", "mel", "--store", "files", a, "--out", out, "-j", "1", "--force")
    assert code == 0 and "2 ok, 0 failed, 0 already done" in err
    assert {r["path"] for r in manifest_lines(out) if r["id"] == "s/001"} == {str(a / "s" / "001.wav")}
    # With --root, the two collections have their own ids side by side.
    code, _, err = cli("batch", "mel", "--store", "files", b, "--out", out, "-j", "1", "--root", collections)
    assert code == 0 and "2 ok, 0 failed, 0 already done" in err
    assert (out / "B" / "s" / "001.mel.npy").exists() and _files(out)["s/001.mel.npy"] == before["s/001.mel.npy"]


def test_the_refusal_counts_the_other_taken_ids(cli, collections, tmp_path):
    out = tmp_path / "X"
    write_tone_noise(collections / "B" / "s" / "002.wav", 0.2, seed=5)
    assert cli("batch", "info", collections / "A", "--out", out, "-j", "1")[0] == 0
    code, _, err = cli("batch", "info", collections / "B", "--out", out, "-j", "1")
    assert code == 2
    assert err.count("\n") == 1 and "id 's/001' already belongs to" in err and "(and 1 more of these inputs' ids)" in err


def test_an_id_that_never_succeeded_still_belongs_to_its_source(cli, collections, tmp_path):
    out = tmp_path / "X"
    (collections / "A" / "s" / "001.wav").write_bytes(b"not audio")
    assert cli("batch", "info", collections / "A", "--out", out, "-j", "1")[0] == 3
    code, _, err = cli("batch", "info", collections / "B", "--out", out, "-j", "1")
    assert code == 2 and f"already belongs to {collections / 'A' / 's' / '001.wav'}" in err
    code, _, err = cli("batch", "info", collections / "A", "--out", out, "-j", "1")  # its retry is fine
    assert code == 3 and "0 ok, 1 failed, 1 already done" in err


def test_in_run_duplicates_and_new_segments_of_the_same_file_resume(cli, tmp_path):
    data = tmp_path / "data"
    write_tone_noise(data / "utt.wav", 0.5, seed=1)
    write_tone_noise(data / "utt.flac", 0.5, seed=2)  # same id "utt": the second fails, beside the first
    out = tmp_path / "X"
    assert cli("batch", "info", data, "--out", out, "-j", "1")[0] == 3
    code, _, err = cli("batch", "info", data, "--out", out, "-j", "1")
    assert code == 3 and "0 ok, 1 failed, 1 already done" in err
    segments = tmp_path / "segments.jsonl"
    for start in (0.0, 0.25):  # the same id and file with another start: recomputed, not refused
        segments.write_text(json.dumps({"id": "seg", "path": str(data / "utt.wav"), "start": start}) + "\n")
        code, _, err = cli("batch", "info", "--manifest", segments, "--out", tmp_path / "S", "-j", "1")
        assert code == 0 and "1 ok, 0 failed, 0 already done" in err


def test_a_symlinked_folder_is_the_same_source(cli, collections, tmp_path):
    out = tmp_path / "X"
    link = tmp_path / "link"
    link.symlink_to(collections / "A")
    assert cli("batch", "info", collections / "A", "--out", out, "-j", "1")[0] == 0
    code, _, err = cli("batch", "info", link, "--out", out, "-j", "1")
    assert code == 0 and "2 ok, 0 failed, 0 already done" in err  # other paths (not skipped), the same files


def test_id_owners_follow_the_last_ok_line():
    from audiokit.batch.manifest import IdOwners

    owners = IdOwners()
    assert owners.other_owner("u", "/a/u.wav") is None  # a new id is anyone's
    owners.add({"id": "u", "path": "/a/u.wav", "status": "failed"})
    assert owners.other_owner("u", "/a/u.wav") is None
    assert owners.other_owner("u", "/b/u.wav") == "/a/u.wav"
    owners.add({"id": "u", "path": "/b/u.wav", "status": "ok"})  # written by an older audiokit: the last ok counts
    assert owners.other_owner("u", "/b/u.wav") is None
    assert owners.other_owner("u", "/a/u.wav") == "/b/u.wav"
    owners.add({"id": "u", "path": "/a/u.wav", "status": "failed"})  # a failed line takes nothing from the owner
    assert owners.other_owner("u", "/a/u.wav") == "/b/u.wav"

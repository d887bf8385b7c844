"""What a batch tells its user: warnings, files it did not take, inputs that do not exist (summary, --json, stderr)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.helpers.batch import manifest_lines, write_tone_noise


def test_a_warning_of_an_ok_input_is_counted_and_shown(cli, craft_wav, pcm16, tmp_path):
    (tmp_path / "data").mkdir()
    codes = (3000 * np.sin(np.arange(4000) / 7)).astype(int)
    truncated = craft_wav("data/t.wav", pcm16(codes), claimed_bytes=2 * 2 * 4000)  # the header claims twice the data
    write_tone_noise(tmp_path / "data" / "fine.wav", 0.3)
    code, _, single = cli("info", truncated)
    assert code == 0 and single.startswith(f"warning: {truncated}: header claims 8000 frames")
    out = tmp_path / "o"
    code, stdout, err = cli("batch", "info", tmp_path / "data", "--out", out, "-j", "1", "--json")
    assert code == 0
    summary = json.loads(stdout)
    assert (summary["ok"], summary["warnings"], summary["warned_ids"]) == (2, 1, ["t"])
    assert single.splitlines()[0] in err.splitlines()  # the single-file command's warning line, on stderr
    assert "2 ok, 0 failed, 0 already done, 2 inputs; 1 with warnings;" in err.splitlines()[-1]
    assert {r["id"]: len(r["warnings"]) for r in manifest_lines(out)} == {"t": 1, "fine": 0}
    code, _, err = cli("batch", "info", tmp_path / "data", "--out", out, "-j", "1", "-q")
    assert (code, err) == (0, "")  # -q: no warning lines, no summary


def test_a_warning_without_a_path_is_shown_with_the_input_path(cli, tmp_path):
    import soundfile as sf

    silent = tmp_path / "data" / "silent.wav"
    silent.parent.mkdir()
    sf.write(silent, np.zeros(32000, dtype=np.float32), 16000, subtype="PCM_16")
    code, _, single = cli("dehum", silent, "--freq", "50", "-o", tmp_path / "d.wav")
    assert code == 0 and "warning: the signal is silent: no hum to remove\n" in single  # no path in the text
    code, _, err = cli("batch", "dehum", "--freq", "50", tmp_path / "data", "--out", tmp_path / "o", "-j", "1")
    assert code == 0
    assert f"warning: {silent}: the signal is silent: no hum to remove\n" in err and "1 with warnings" in err


def test_files_not_taken_from_folders_are_counted_and_named(cli, corpus, tmp_path):
    (corpus / "notes.txt").write_text("transcript")
    (corpus / "spk1" / "clip.m4a").write_bytes(b"\0\0\0\x20ftypM4A ")
    (corpus / "spk1" / ".DS_Store").write_bytes(b"")  # hidden: skipped without a word
    out = tmp_path / "o"
    code, stdout, err = cli("batch", "info", corpus, "--out", out, "-j", "1", "--json")
    assert code == 0
    summary = json.loads(stdout)
    assert (summary["ok"], summary["ignored"]) == (6, 2)
    assert summary["ignored_files"] == [str(corpus / "notes.txt"), str(corpus / "spk1" / "clip.m4a")]
    assert f"; 2 files ignored (not an audio extension): {corpus / 'notes.txt'}, {corpus / 'spk1' / 'clip.m4a'};" in err
    code, stdout, err = cli("batch", "info", corpus, "--glob", "*.flac", "--out", tmp_path / "o2", "-j", "1", "--json")
    assert code == 0 and json.loads(stdout)["ignored"] == 5  # 3 .wav, notes.txt, clip.m4a
    assert "5 files ignored (not matching --glob *.flac): " in err


def test_many_ignored_files_name_the_first_few(cli, tmp_path):
    data = tmp_path / "data"
    write_tone_noise(data / "a.wav", 0.2)
    for i in range(8):
        (data / f"t{i}.txt").write_text("x")
    code, _, err = cli("batch", "info", data, "--out", tmp_path / "o", "-j", "1")
    assert code == 0
    names = ", ".join(str(data / f"t{i}.txt") for i in range(5))
    assert f"8 files ignored (not an audio extension): {names}, ... (3 more);" in err


def test_a_missing_input_is_refused_before_out_is_created(cli, corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, single_out, single_err = cli("info", "nope.wav")
    assert code == 3 and single_err == "error: nope.wav: no such file\n"
    for args in (["corpus_typo"], [str(corpus), "corpus_typo"], ["data/missing.wav"]):
        code, stdout, err = cli("batch", "mel", "--store", "files", *args, "--out", "feats")
        assert (code, stdout, err) == (3, "", f"error: {args[-1]}: no such file or folder\n")
        assert not Path("feats").exists()
    # A usage error is refused before --out is created, too.
    code, _, err = cli("batch", "mel", "--store", "files", "@nope.txt", "--out", "feats")
    assert code == 2 and "cannot read the list" in err and not Path("feats").exists()


def test_a_missing_path_in_a_list_fails_on_its_own(cli, corpus, tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text(f"{corpus / 'f.flac'}\n{corpus / 'gone.wav'}\n")
    code, _, err = cli("batch", "info", f"@{listing}", "--out", tmp_path / "o", "-j", "1")
    assert code == 3 and "1 ok, 1 failed" in err
    assert f"error: {corpus / 'gone.wav'}: no such file" in err

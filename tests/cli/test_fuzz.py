"""The issue-20 campaign (tests/campaign) with a small N: mutated audio, ``.npy``/sidecar pairs, manifests, lists and
signals, every run checked against the invariants of :mod:`tests.campaign.runner`.

``AUDIOKIT_FUZZ_CASES`` (default 120) sets the audio runs; the other kinds run a fraction of it.  The long campaign
is ``python -m tests.campaign --runs 300`` (tests/campaign/__init__.py).  The checker itself is tested first, on
runs that break each invariant, so that a campaign that reports nothing is a campaign that could have.
"""

from __future__ import annotations

import os
import random
import signal

import numpy as np
import pytest

from tests.campaign import run_campaign
from tests.campaign.audio import mutate, seeds
from tests.campaign.runner import Case, Result, check, snapshot

CASES = int(os.environ.get("AUDIOKIT_FUZZ_CASES", "120"))


def _describe(tally) -> str:
    return "\n".join(
        f"{v.case.folder.name} {v.case.label} {v.case.argv}: {v.problems} | {v.result.stderr[-300:]}" for v in tally.failures
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "runs", "inproc"),
    [("audio", CASES, True), ("sidecar", max(8, CASES // 4), True), ("manifest", max(4, CASES // 15), False)]
    + [("list", max(4, CASES // 15), False), ("signal", max(4, CASES // 20), False)],
)
def test_campaign_breaks_no_invariant(kind, runs, inproc):
    tally = run_campaign(kind, runs, seed=20, inproc=inproc, jobs=2)
    assert tally.counts["runs"] == runs
    assert tally.violations == 0, _describe(tally)
    print(f"campaign {kind}: exit statuses {dict(tally.exits)}")  # shown with pytest -s


def test_an_audio_campaign_tries_overwrites_and_they_are_refused():
    tally = run_campaign("audio", 40, seed=3, commands=["dehum", "resample", "quantize"], inproc=True)
    attempts = tally.counts["overwrite attempts"]
    assert tally.violations == 0, _describe(tally)
    assert attempts >= 1 and tally.counts["overwrites refused"] == attempts, _describe(tally)


def test_mutations_are_reproducible_and_change_the_bytes():
    data = seeds()["pcm16.wav"]
    a = [mutate(data, random.Random(f"m{i}")) for i in range(30)]
    assert a == [mutate(data, random.Random(f"m{i}")) for i in range(30)]
    assert sum(m != data for m, _ in a) >= 25


# ---------------------------------------------------------------- the checker breaks on every broken invariant


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "in.wav").write_bytes(b"RIFF....")
    (tmp_path / "out").mkdir()
    return tmp_path


def _check(folder, result, *, outputs=None, edit=None, **kw):
    case = Case("test", "synthetic", folder, ["mel", "in.wav"], outputs=outputs, **kw)
    before = snapshot(folder)
    if edit:
        edit(folder)
    return check(case, result, before)


def test_check_passes_a_clean_failure(folder):
    v = _check(folder, Result(3, b"", "error: in.wav: not a recognised audio file\n"))
    assert v.problems == [] and v.counts["runs"] == 1


@pytest.mark.parametrize(
    ("result", "edit", "counter"),
    [
        (Result(3, b"", "Traceback (most recent call last):\nerror: x\n"), None, "tracebacks"),
        (Result(1, b"", "error: internal error: boom\n"), None, "exit 1"),
        (Result(-11, b"", ""), None, "other bad exits"),
        (Result(3, b"", "error: a\nerror: b\n"), None, "not one error line"),
        (Result(3, b"", "warning: only\n"), None, "not one error line"),
        (Result(3, b"", "error: x\n"), lambda f: (f / "out" / "m.npy").write_bytes(b"x"), "partial outputs / temp files"),
        (
            Result(0, b"", ""),
            lambda f: (f / "out" / ".m.audiokit-tmp-1-ab.npy").write_bytes(b"x"),
            "partial outputs / temp files",
        ),
        (Result(3, b"", "error: x\n"), lambda f: (f / "in.wav").write_bytes(b"other"), "inputs changed"),
        (Result(0, b'{"peak": NaN}', ""), None, "NaN/Inf at exit 0"),
        (Result(0, b"", "", hung=True), None, "hangs"),
    ],
)
def test_check_catches(folder, result, edit, counter):
    v = _check(folder, result, outputs={"out/m.npy"}, edit=edit)
    assert v.counts[counter] == 1, v.problems


def test_check_catches_nonfinite_arrays_and_stray_files(folder):
    def write(f):
        np.save(f / "out" / "m.npy", np.array([1.0, np.inf], np.float32))
        (f / "out" / "extra.txt").write_text("x")

    v = _check(folder, Result(0, b"", ""), outputs={"out/m.npy"}, edit=write)
    assert v.counts["NaN/Inf at exit 0"] == 1 and v.counts["partial outputs / temp files"] == 1


def test_check_catches_an_accepted_overwrite(folder):
    v = _check(folder, Result(0, b"", ""), outputs=set(), overwrite=True, edit=lambda f: (f / "in.wav").write_bytes(b"new"))
    assert v.counts["overwrites accepted"] == 1 and v.counts["inputs changed"] == 1


def test_check_of_a_signalled_run(folder):
    ref = {"out/m.npy": b"done"}
    ok = _check(folder, Result(130, b"", "error: interrupted\n"), reference=ref, signal_at=(signal.SIGINT, 0.1))
    assert ok.problems == []
    half = _check(
        folder,
        Result(0, b"", ""),
        reference=ref,
        signal_at=(signal.SIGINT, 0.1),
        edit=lambda f: (f / "out" / "m.npy").write_bytes(b"half"),
    )
    assert half.counts["wrong results"] == 1
    late = dict(reference=ref, signal_at=(signal.SIGTERM, 0.1), edit=lambda f: (f / "out" / "m.npy").write_bytes(b"done"))
    (folder / "out" / "m.npy").unlink()
    said = _check(folder, Result(143, b"", "error: terminated after writing m.npy\n"), **late)
    assert said.problems == []
    (folder / "out" / "m.npy").unlink()
    silent = _check(folder, Result(-15, b"", ""), **late)
    assert silent.counts["killed silently by a signal"] == 1


def test_check_of_a_ctrl_c_during_interpreter_start_up(folder):
    """Python's own KeyboardInterrupt before audiokit runs is counted apart, not as a broken invariant."""
    err = 'Traceback (most recent call last):\n  File "<frozen runpy>", line 198\nKeyboardInterrupt\n'
    v = _check(folder, Result(1, b"", err), reference={}, signal_at=(signal.SIGINT, 0.01))
    assert v.problems == [] and v.counts["signals during start-up"] == 1
    inside = err.replace("<frozen runpy>", "/x/audiokit/dsp/mel.py")
    assert _check(folder, Result(1, b"", inside), reference={}, signal_at=(signal.SIGINT, 0.01)).counts["tracebacks"] == 1

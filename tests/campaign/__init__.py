"""The fuzz and fault campaign of issue 20, as a runnable tool and as the code of the CI fuzz tests.

``python -m tests.campaign --runs N --seed S [--kind audio|sidecar|manifest|list|signal ...] [--commands ...]``
runs N cases per kind, each in its own folder, checks every run against the invariants of
:mod:`tests.campaign.runner`, prints the counts (the issue's form) and exits 1 if any invariant broke.
tests/cli/test_fuzz.py runs the same code with a small N.  Case ``i`` of a kind depends only on ``(seed, kind, i)``:
``--seed S --first i --runs 1`` repeats it.

Modules: :mod:`.runner` (one run and its checks), :mod:`.audio` (mutated WAV/FLAC/RF64/OGG),
:mod:`.sidecar` (``.npy`` + sidecar pairs for istft/griffinlim), :mod:`.lists` (``--manifest`` files, ``@list``,
stdin and folder inputs), :mod:`.signals` (SIGINT/SIGTERM at random moments).
"""

from __future__ import annotations

import random
import signal
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import audio, lists, sidecar, signals
from .runner import COUNTERS, VIOLATIONS, Case, Verdict, check, execute, snapshot

__all__ = ["DEFAULT_COMMANDS", "KINDS", "Tally", "run_campaign"]

#: The kinds of case, in the order of the summary.
KINDS = ("audio", "sidecar", "manifest", "list", "signal")
#: The commands (or batch jobs) each kind draws from by default.
DEFAULT_COMMANDS = {
    "audio": list(audio.COMMANDS),
    "sidecar": ["istft", "griffinlim"],
    "manifest": list(lists.JOBS),
    "list": list(lists.JOBS),
    "signal": list(signals.COMMANDS),
}


@dataclass
class Tally:
    """The counts of one kind (:data:`runner.COUNTERS`), exit statuses, and the runs that broke an invariant."""

    kind: str
    counts: Counter = field(default_factory=Counter)
    exits: Counter = field(default_factory=Counter)
    failures: list[Verdict] = field(default_factory=list)

    def add(self, v: Verdict) -> None:
        self.counts.update(v.counts)
        self.exits[v.result.code if not v.result.hung else "hung"] += 1
        if v.problems:
            self.failures.append(v)

    @property
    def violations(self) -> int:
        """Runs that broke at least one invariant."""
        return len(self.failures)


def _cases(kind: str, root: Path, seed: int, first: int, runs: int, commands: list[str], hostile: bool) -> Iterator[Case]:
    """The cases ``first .. first + runs - 1`` of ``kind``, each in ``root/<kind>/<i>``."""
    setup = root / f"{kind}-setup"
    if kind == "audio":
        seeds = audio.seeds()
        make: Callable[[Path, random.Random], Case] = lambda f, rng: audio.case(f, rng, commands, seeds)  # noqa: E731
    elif kind == "sidecar":
        pairs = sidecar.seeds()
        make = lambda f, rng: sidecar.case(f, rng, pairs, commands)  # noqa: E731
    elif kind == "manifest":
        make = lambda f, rng: lists.manifest_case(f, rng, commands, hostile)  # noqa: E731
    elif kind == "list":
        make = lambda f, rng: lists.list_case(f, rng, commands, hostile)  # noqa: E731
    else:
        src = signals.make_source(setup)
        refs = {c: signals.reference(setup / c, c, src) for c in commands}
        make = _signal_maker(commands, src, refs)
    for i in range(first, first + runs):
        yield make(root / kind / str(i), random.Random(f"campaign-{seed}-{kind}-{i}"))


def _signal_maker(commands: list[str], src: Path, refs: dict) -> Callable[[Path, random.Random], Case]:
    def make(folder: Path, rng: random.Random) -> Case:
        command = rng.choice(commands)
        return signals.case(folder, rng, command, src, *refs[command])

    return make


def _one(case: Case, inproc: bool) -> Verdict:
    before = snapshot(case.folder, case.watch)
    result = execute(case, inproc=inproc and case.signal_at is None)
    return check(case, result, before)


def _unignore_sigint() -> None:
    """Let the children see SIGINT: a shell starts a background job (``cmd &``) with SIGINT ignored, children inherit
    that across exec, and Python then installs no handler -- every Ctrl-C of the campaign would be a no-op."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _collect(tally: Tally, verdicts: Iterator[Verdict], progress: Callable[[Verdict], None] | None) -> None:
    for v in verdicts:
        tally.add(v)
        if progress:
            progress(v)


def run_campaign(
    kind: str,
    runs: int,
    *,
    seed: int = 0,
    commands: list[str] | None = None,
    first: int = 0,
    jobs: int = 1,
    inproc: bool = False,
    workdir: Path | None = None,
    hostile: bool = True,
    progress: Callable[[Verdict], None] | None = None,
) -> Tally:
    """Run ``runs`` cases of ``kind`` and return their :class:`Tally`.

    Parameters
    ----------
    kind : {"audio", "sidecar", "manifest", "list", "signal"}
    runs : int
        Number of cases; case ``i`` depends only on ``(seed, kind, i)``.
    seed : int
        Campaign seed.
    commands : list of str, optional
        Commands (or batch jobs) to draw from; default :data:`DEFAULT_COMMANDS`.
    first : int
        Index of the first case (to repeat one).
    jobs : int
        Runs in flight at once (threads, each waiting on its own process).
    inproc : bool
        Run ``audiokit.cli.app.main`` in this process instead of ``python -m audiokit`` (faster; no timeout,
        so not for the kinds that may hang; signal runs are always processes).
    workdir : Path, optional
        Where the case folders go (kept); default a temporary folder, removed afterwards.
    hostile : bool
        Put a link that cannot be followed (``/proc/1/cwd``: stat() fails with EACCES) in the manifest/list
        corpora.
    progress : callable, optional
        Called with every :class:`Verdict` as it is made.
    """
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: not one of {', '.join(KINDS)}")
    chosen = commands or DEFAULT_COMMANDS[kind]
    unknown = sorted(set(chosen) - set(DEFAULT_COMMANDS[kind]))
    if unknown:
        raise ValueError(f"{kind}: unknown commands {unknown}; known: {', '.join(DEFAULT_COMMANDS[kind])}")
    if kind == "signal":
        _unignore_sigint()
    tally = Tally(kind)
    with tempfile.TemporaryDirectory(prefix=f"campaign-{kind}-") as tmp:
        root = workdir or Path(tmp)
        cases = _cases(kind, root, seed, first, runs, chosen, hostile)
        if inproc or jobs == 1:  # main() installs signal handlers: the main thread only
            verdicts: Iterator[Verdict] = (_one(c, inproc) for c in cases)
            _collect(tally, verdicts, progress)
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                _collect(tally, pool.map(lambda c: _one(c, False), cases), progress)
    return tally


def summary_rows(tallies: list[Tally]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the summary table: one row per kind, one column per counter, plus exit statuses."""
    header = ["kind", *COUNTERS, "exit statuses"]
    rows = []
    for t in tallies:
        exits = ", ".join(f"{k}: {n}" for k, n in sorted(t.exits.items(), key=lambda kv: str(kv[0])))
        rows.append([t.kind, *(str(t.counts.get(c, 0)) for c in COUNTERS), exits])
    return header, rows


__all__ += ["VIOLATIONS", "summary_rows"]

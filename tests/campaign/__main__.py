"""``python -m tests.campaign``: run the campaign, print the issue-20 counts, exit 1 on any broken invariant."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from . import DEFAULT_COMMANDS, KINDS, VIOLATIONS, Tally, run_campaign, summary_rows


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, transposed (one line per counter, one column per kind): the counters are many."""
    cols = [header] + rows
    lines = [[col[i] for col in cols] for i in range(len(header))]
    widths = [max(len(line[j]) for line in lines) for j in range(len(cols))]
    fmt = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(lines[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(fmt, lines[1:])])


def _groups(tally: Tally) -> dict[tuple[str, str], list[str]]:
    """The broken runs grouped by what broke and the last stderr line (paths and numbers blanked)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for v in tally.failures:
        last = (v.result.stderr.strip().splitlines()[-1:] or [""])[0]
        last = re.sub(r"\d+", "N", re.sub(r"(/[^\s:']+)+", "PATH", last))[:160]
        problem = ", ".join(sorted(c for c in v.counts if c in VIOLATIONS))
        groups.setdefault((problem, last), []).append(f"{v.case.folder.name} ({v.case.label})")
    return groups


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.campaign", description=__doc__)
    ap.add_argument("--runs", type=int, default=50, help="cases per kind (default 50)")
    ap.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    ap.add_argument("--kind", nargs="+", choices=KINDS, default=list(KINDS), help="kinds to run (default: all)")
    ap.add_argument("--commands", nargs="+", help="commands/batch jobs to draw from (default: every one of the kind)")
    ap.add_argument("--first", type=int, default=0, help="index of the first case (repeat case i: --first i --runs 1)")
    ap.add_argument("--jobs", type=int, default=2, help="runs in flight at once (default 2)")
    ap.add_argument("--inproc", action="store_true", help="audio/sidecar runs in this process (faster, no timeout)")
    ap.add_argument("--no-hostile", action="store_true", help="no unfollowable link in the list/manifest corpora")
    ap.add_argument("--keep", type=Path, help="keep the case folders under this folder")
    ap.add_argument("--show", type=int, default=20, help="kinds of broken run listed per kind (default 20)")
    args = ap.parse_args(argv)

    tallies = []
    for kind in args.kind:
        commands = [c for c in args.commands if c in DEFAULT_COMMANDS[kind]] if args.commands else None
        if args.commands and not commands:
            continue
        t0 = time.monotonic()
        tally = run_campaign(
            kind,
            args.runs,
            seed=args.seed,
            commands=commands,
            first=args.first,
            jobs=args.jobs,
            inproc=args.inproc and kind in ("audio", "sidecar"),
            workdir=args.keep,
            hostile=not args.no_hostile,
        )
        print(
            f"# {kind}: {args.runs} runs in {time.monotonic() - t0:.0f} s, {tally.violations} broke an invariant", file=sys.stderr
        )
        for (problem, last), cases in sorted(_groups(tally).items(), key=lambda kv: -len(kv[1]))[: args.show]:
            print(f"#   {len(cases)} x {problem} | {last} | cases {', '.join(cases[:8])}", file=sys.stderr)
        tallies.append(tally)
    header, rows = summary_rows(tallies)
    print(f"campaign seed {args.seed}, {args.runs} runs per kind (violations: {', '.join(VIOLATIONS)})\n")
    print(_table(header, rows))
    return 1 if any(t.violations for t in tallies) else 0


if __name__ == "__main__":
    raise SystemExit(main())

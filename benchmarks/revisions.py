"""Time the audit of two revisions of the toolkit side by side, on the same cached store.

    .venv/bin/python benchmarks/revisions.py --old HEAD~1            # latest-only, 3 rounds
    .venv/bin/python benchmarks/revisions.py --old 9ee0d43 --mode full --rounds 2

This box's speed moves by up to a third within an hour, so a figure from a run an hour ago
says nothing about a change; only runs side by side do. ``--old`` is checked out in a
temporary git worktree (removed afterwards); ``--new`` defaults to this checkout as it is
on disk, uncommitted edits included. Each round runs each side in a new Python process that
imports the toolkit from its own tree (the side that starts alternates), audits once to warm
up (as the benchmark's earlier runs warm the Parquet footers), then times ``--runs`` audits
and reports their median, with the phases of ``result.timings`` and the row count, so two
revisions that do not judge the same rows show it. The store is the one ``audit.py`` builds
and caches (run it first); the last line is the JSON of every figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STORE = ROOT / "data" / "bench" / "audit-10000x90-s7" / "store"
PHASES = ("connect", "scope", "checks", "lifecycle")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="The revision to compare with (a commit, tag or branch).")
    parser.add_argument("--new", default=None, help="Another revision (default: this tree).")
    parser.add_argument("--store", type=Path, default=STORE)
    parser.add_argument("--mode", choices=("latest", "full"), default="latest")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5, help="Timed audits a side a round.")
    # one side of one round, in a process of its own
    parser.add_argument("--side", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side is not None:
        print(json.dumps(one_side(args.side, args.store, args.mode, args.runs)))
        return
    if not args.old:
        parser.error("--old is required: the revision to compare this tree (or --new) with")
    if not args.store.is_dir():
        parser.error(f"no store at {args.store}: build it with benchmarks/audit.py first")
    with tempfile.TemporaryDirectory(prefix="platform-audit-revisions-") as scratch:
        trees = {"old": _checkout(args.old, Path(scratch) / "old")}
        trees["new"] = _checkout(args.new, Path(scratch) / "new") if args.new else ROOT
        try:
            figures = compare(trees, args)
        finally:
            for side in ("old", "new"):
                if trees[side] != ROOT:
                    _git("worktree", "remove", "--force", str(trees[side]))
    print(json.dumps(figures))


def compare(trees: dict[str, Path], args: argparse.Namespace) -> dict[str, Any]:
    """``args.rounds`` rounds, each side once a round, the starting side alternating."""
    rounds: list[dict[str, Any]] = []
    for n in range(args.rounds):
        order = ("old", "new") if n % 2 == 0 else ("new", "old")
        done = {side: _side_in_process(trees[side], args) for side in order}
        ratio = done["new"]["seconds"] / done["old"]["seconds"]
        print(
            f"round {n + 1}: old {done['old']['seconds']:.3f} s, new {done['new']['seconds']:.3f}"
            f" s, new/old {ratio:.2f}",
            file=sys.stderr,
        )
        rounds.append(done)
    olds = [r["old"]["seconds"] for r in rounds]
    news = [r["new"]["seconds"] for r in rounds]
    return {
        "mode": args.mode,
        "old": args.old,
        "new": args.new or "working tree",
        "old_s": [round(s, 3) for s in olds],
        "new_s": [round(s, 3) for s in news],
        "new_minus_old_s": [round(b - a, 3) for a, b in zip(olds, news, strict=True)],
        "new_over_old": round(statistics.median(news) / statistics.median(olds), 3),
        "rounds": rounds,
    }


def one_side(tree: Path, store_path: Path, mode: str, runs: int) -> dict[str, Any]:
    """Audit ``runs`` times with the toolkit of ``tree`` (after one warm-up run)."""
    sys.path.insert(0, str(tree))
    from toolkit.audit import run_audit
    from toolkit.snapshot import Store

    store = Store.open(store_path, create=False)
    latest = mode == "latest"
    run_audit(store, latest_only=latest)
    seconds: list[float] = []
    phases: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for _ in range(runs):
        started = time.perf_counter()
        result = run_audit(store, latest_only=latest)
        seconds.append(time.perf_counter() - started)
        for phase in PHASES:
            phases[phase].append(result.timings[phase])
    return {
        "seconds": statistics.median(seconds),
        "runs_s": [round(s, 3) for s in seconds],
        "phases_s": {k: round(statistics.median(v), 3) for k, v in phases.items()},
        "rows": result.rows.num_rows,
        "findings": len(result.findings),
    }


def _side_in_process(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--side", str(tree),
               "--store", str(args.store), "--mode", args.mode,
               "--runs", str(args.runs)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"the side of {tree} failed:\n{done.stderr}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _checkout(revision: str, where: Path) -> Path:
    _git("worktree", "add", "--detach", str(where), revision)
    return where


def _git(*args: str) -> None:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.strip()}")


if __name__ == "__main__":
    main()

"""``pvosimr figures``: count every case of Figs. 3–6, write the CSV, the figures and claims.md.

:func:`sweeps` lists the cases (the synthetic sweeps at the sizes of a :class:`Sweep`, then the
robots), :func:`count_all` counts them through the on-disk cache, :func:`run` writes every
output and :func:`main` is the command line.
"""

from __future__ import annotations

import argparse
import csv
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pvosimr import zoo
from pvosimr.study.count import CountCache, add_cache_options
from pvosimr.study.figures.claims import evaluate, report
from pvosimr.study.figures.model import (
    ALL_FOUR,
    BRANCHES,
    FULL,
    QUICK,
    RECURSIVE,
    Case,
    Count,
    Sweep,
)
from pvosimr.study.figures.plots import write_all
from pvosimr.study.options import add_out_option, command_parser, require_extra, usage_error
from pvosimr.zoo import synthetic

__all__ = [
    "PAPER_ROBOTS",
    "build_parser",
    "count_all",
    "main",
    "run",
    "sweeps",
    "write_csv",
]

PAPER_ROBOTS = ("atlas", "shadow_hand")
"""The model sources Figs. 5-6 and the caveat are built from."""


def _robot(name: str, preset: str | None = None) -> Callable[[], zoo.Robot]:
    return lambda: zoo.load(name, preset) if preset else zoo.load(name)


def sweeps(sizes: Sweep) -> list[Case]:
    """Every case of Figs. 3–6 and the caveat, in figure order."""
    cases = [
        Case("fig3", f"b={b}", L, lambda L=L, b=b: synthetic.stem_with_branches(L, b), RECURSIVE)
        for b in BRANCHES
        for L in sizes.stems
    ]
    cases += [
        Case("fig4", "a", k, lambda k=k: synthetic.chain_welded_every_k(k), RECURSIVE)
        for k in sizes.k
    ]
    cases += [
        Case("fig4", "b", n, lambda n=n: synthetic.chain_welded_every_link(n), RECURSIVE)
        for n in sizes.n
    ]
    cases += [
        Case("fig5", "a", 0, _robot("atlas", "feet_6d"), ALL_FOUR),
        Case("fig5", "b", 0, _robot("atlas", "feet_4x3d"), ALL_FOUR),
        Case("fig6", "a", 0, _robot("shadow_hand"), ALL_FOUR),
        Case("fig6", "b", 0, _robot("atlas_shadow_hand"), ALL_FOUR),
        Case("fig6", "c", 0, _robot("atlas_two_shadow_hands", "fingertips_3d"), ALL_FOUR),
        Case("fig6", "d", 0, _robot("atlas_two_shadow_hands", "fingertips_3d_feet_6d"), ALL_FOUR),
        Case("caveat", "", 0, _robot("atlas", "hands_feet_6d"), ALL_FOUR),
    ]
    return cases


def count_all(cases: Sequence[Case], counts: CountCache, progress: bool = True) -> list[Count]:
    """Count every algorithm of every case (a progress bar per count, cached on disk)."""
    from tqdm import tqdm

    rows: list[Count] = []
    total = sum(len(c.algorithms) for c in cases)
    bar = tqdm(total=total, disable=not progress, unit="count", file=sys.stderr, mininterval=1)
    with bar:
        for case in cases:
            robot = case.build()
            mechanism = f"{robot.name}/{robot.preset}" if robot.preset else robot.name
            for algorithm in case.algorithms:
                bar.set_postfix_str(f"{case.figure} {mechanism} {algorithm}")
                ops = counts.count(robot.model, robot.constraints, algorithm)
                rows.append(Count(case.figure, case.panel, mechanism, case.x, algorithm, ops))
                bar.update()
            counts.save()  # a long run that is stopped keeps what it counted
    return rows


def write_csv(rows: Sequence[Count], path: Path) -> None:
    """``opcounts.csv``: one row per (figure, panel, mechanism, x, algorithm, ops)."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["figure", "panel", "mechanism", "x", "algorithm", "ops"])
        for r in rows:
            writer.writerow([r.figure, r.panel, r.mechanism, r.x, r.algorithm, r.ops])


def run(out: Path, quick: bool, cache_path: Path | None, progress: bool = True) -> dict:
    """Count, plot and judge; returns a summary (rows, verdicts, figure paths, timing, cache
    hits and misses)."""
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    counts = CountCache(cache_path)
    rows = count_all(sweeps(QUICK if quick else FULL), counts, progress)
    write_csv(rows, out / "opcounts.csv")
    written = write_all(rows, out)
    verdicts = evaluate(rows, quick=quick)
    meta = {
        "mode": "quick" if quick else "full",
        "seconds": time.perf_counter() - started,
        "cache": f"{counts.hits} cached, {counts.misses} counted",
        "python": platform.python_version(),
    }
    (out / "claims.md").write_text(report(verdicts, meta))
    return {
        "rows": rows,
        "verdicts": verdicts,
        "figures": written,
        "hits": counts.hits,
        "misses": counts.misses,
        **meta,
    }


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr figures``."""
    parser = command_parser(
        "figures",
        "Regenerate the paper's Figs. 3-6 and claims.md from operation counts "
        "(needs CasADi and matplotlib).",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small synthetic sweeps, < 5 min (default: the full sweeps)",
    )
    add_out_option(parser, Path("figures"))
    add_cache_options(parser, no_cache_help="count everything afresh (default: cached)")
    return parser


def _missing_model(prog: str) -> int | None:
    """Exit status 2 and the fix when a model the robot figures need is not installed."""
    for name in PAPER_ROBOTS:
        try:
            zoo.load(name)
        except (FileNotFoundError, ModuleNotFoundError) as exc:
            return usage_error(prog, f"Figs. 5-6 need the {name} model: {exc}")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr figures``: see ``--help``; exit 0 when written, 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    require_extra(parser.prog, "casadi", "matplotlib")
    missing = _missing_model(parser.prog)
    if missing is not None:
        return missing
    summary = run(args.out, args.quick, None if args.no_cache else args.cache)
    for v in summary["verdicts"]:
        print(f"{v.claim}: {v.status:7s} {v.ours}")
    print(
        f"\n{len(summary['rows'])} counts ({summary['cache']}) in {summary['seconds']:.0f} s; "
        f"wrote {args.out}/opcounts.csv, claims.md and {len(summary['figures'])} figure files"
    )
    return 0

"""``pvosimr figures``: the paper's Figs. 3–6 and the Sec. IV-E caveat from operation counts.

Every number is :func:`pvosimr.symbolic.count_operations` of the algorithm's CasADi SX function
q ↦ G on the mechanism (through :class:`pvosimr.study.count.CountCache`).  The run writes, in the
output folder:

- ``fig3.png|pdf`` (panels b–f: op count against stem length, b = 1, 2, 4, 7, 10 branches per
  side), ``fig4.png|pdf`` (log-log, fitted slopes in the legend), ``fig5.png|pdf`` (Atlas),
  ``fig6.png|pdf`` (Shadow hand, alone and on Atlas), ``caveat.png|pdf``;
- ``opcounts.csv``: one row per (figure, panel, mechanism, x, algorithm, ops);
- ``claims.md``: claims C1–C8 of ALGORITHMS.md with the paper's words, our numbers, PASS/FAIL.

``--quick`` runs small sizes of the synthetic sweeps (the robot cases are fixed); its claims
report says which claims the small sizes cannot decide.
"""

from __future__ import annotations

import argparse
import csv
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvosimr import zoo
from pvosimr.study.count import CountCache, add_cache_options
from pvosimr.study.options import add_out_option, command_parser, require_extra, usage_error
from pvosimr.zoo import synthetic

__all__ = ["Count", "Sweep", "build_parser", "main", "run", "sweeps"]

RECURSIVE = ("pv-osimr", "pv-osim", "efpa")
ALL_FOUR = ("pv-osimr", "pv-osim", "efpa", "ltl-osim")
LABELS = {"pv-osimr": "PV-OSIMr", "pv-osim": "PV-OSIM", "efpa": "EFPA", "ltl-osim": "LTL-OSIM"}
COLORS = {"pv-osimr": "#1b9e77", "pv-osim": "#d95f02", "efpa": "#7570b3", "ltl-osim": "#757575"}
MARKERS = {"pv-osimr": "o", "pv-osim": "s", "efpa": "^", "ltl-osim": "v"}
BRANCHES = (1, 2, 4, 7, 10)


@dataclass(frozen=True)
class Case:
    """One mechanism of one figure panel; ``x`` is its abscissa (stem length, k, n) or 0."""

    figure: str
    panel: str
    x: int
    build: Callable[[], zoo.Robot]
    algorithms: tuple[str, ...]


@dataclass(frozen=True)
class Count:
    """One row of ``opcounts.csv``."""

    figure: str
    panel: str
    mechanism: str
    x: int
    algorithm: str
    ops: int


@dataclass(frozen=True)
class Sweep:
    """Sizes of the synthetic sweeps: the full run and ``--quick``."""

    stems: tuple[int, ...]
    k: tuple[int, ...]
    n: tuple[int, ...]


FULL = Sweep(
    stems=(1, *range(5, 101, 5)),
    k=(*range(2, 17), 20, 24, 28, 32),
    n=(4, 6, 8, 12, 16, 24, 32, 48, 64, 96),
)
QUICK = Sweep(stems=(1, 5, 10, 20), k=(2, 3, 4, 5, 6), n=(4, 6, 8, 12, 16))


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
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["figure", "panel", "mechanism", "x", "algorithm", "ops"])
        for r in rows:
            writer.writerow([r.figure, r.panel, r.mechanism, r.x, r.algorithm, r.ops])


def series(rows: Sequence[Count], figure: str, panel: str, algorithm: str) -> tuple:
    """``(x, ops)`` arrays of one curve, sorted by x."""
    pts = sorted(
        (r.x, r.ops) for r in rows if (r.figure, r.panel, r.algorithm) == (figure, panel, algorithm)
    )
    return np.array([p[0] for p in pts], float), np.array([p[1] for p in pts], float)


def bars(rows: Sequence[Count], figure: str, panel: str) -> dict[str, int]:
    return {r.algorithm: r.ops for r in rows if (r.figure, r.panel) == (figure, panel)}


def slope(x: np.ndarray, y: np.ndarray, last: int = 5) -> float:
    """Least-squares slope of log y against log x over the ``last`` largest sizes."""
    x, y = x[-last:], y[-last:]
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def run(out: Path, quick: bool, cache_path: Path | None, progress: bool = True) -> dict:
    """Count, plot and judge; returns a summary (timings, cache hits, claim verdicts)."""
    from pvosimr.study.figures import claims, plots

    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    counts = CountCache(cache_path)
    rows = count_all(sweeps(QUICK if quick else FULL), counts, progress)
    write_csv(rows, out / "opcounts.csv")
    written = plots.write_all(rows, out)
    verdicts = claims.evaluate(rows, quick=quick)
    meta = {
        "mode": "quick" if quick else "full",
        "seconds": time.perf_counter() - started,
        "cache": f"{counts.hits} cached, {counts.misses} counted",
        "python": platform.python_version(),
    }
    (out / "claims.md").write_text(claims.report(verdicts, meta))
    return {"rows": rows, "verdicts": verdicts, "figures": written, **meta}


PAPER_ROBOTS = ("atlas", "shadow_hand")
"""The model sources Figs. 5-6 and the caveat are built from."""


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

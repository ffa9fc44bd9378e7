"""``pvosimr figures``: count every case of Figs. 3–6, write the CSV, the figures and claims.md.

:func:`sweeps` lists the cases (the synthetic sweeps at the sizes of a :class:`Sweep`, then the
robots), :func:`count_all` counts them through the on-disk cache, :func:`scale_counts` counts
Fig. 3's longest stems in each variant of the paper authors' convention, :func:`run` writes every
output and :func:`main` is the command line.  ``--convention paper`` counts every case the
authors' way (:mod:`~pvosimr.study.figures.convention`) into ``figures/paper_convention/`` of the
output folder.  The default output folder is git-ignored (``pvosimr-report/figures/``); the
committed figures are rewritten only with ``--out figures``.
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
from pvosimr.extras import require
from pvosimr.zoo import synthetic

from ..count import CountCache, add_cache_options
from ..options import (
    REPORT_DIR,
    add_out_option,
    command_parser,
    make_out,
    require_extra,
    usage_error,
)
from ..progress import progress_bar
from .claims import (
    PAPER_FIG3_STEM,
    PAPER_FIG3_TOP_TICK,
    PAPER_THREE,
    evaluate,
    report,
)
from .convention import (
    CONVENTIONS,
    VARIANTS,
    autotree_frames,
    synthetic_mechanism,
)
from .model import (
    ALL_FOUR,
    BRANCHES,
    FULL,
    QUICK,
    RECURSIVE,
    Case,
    Count,
    Sweep,
)
from .plots import write_all

__all__ = [
    "DEFAULT_OUT",
    "PAPER_ROBOTS",
    "build_parser",
    "count_all",
    "main",
    "run",
    "scale_counts",
    "sweeps",
    "write_csv",
]

PAPER_ROBOTS = ("atlas", "shadow_hand")
"""The model sources Figs. 5-6 and the caveat are built from."""
COMMITTED = {"pvosimr": Path("figures"), "paper": Path("figures/paper_convention")}
"""The repository's committed output folder of each convention (written only when ``--out``
names it)."""
DEFAULT_OUT = {convention: REPORT_DIR / path for convention, path in COMMITTED.items()}
"""The default output folder of each convention: the committed layout inside the git-ignored
:data:`~pvosimr.study.options.REPORT_DIR`."""


def sweeps(sizes: Sweep, convention: str = "pvosimr") -> list[Case]:
    """Every case of Figs. 3–6 and the caveat, in figure order; the synthetic mechanisms in
    ``convention`` (:func:`~pvosimr.study.figures.convention.synthetic_mechanism`)."""

    def mechanism(figure: str, panel: str, build: Callable[[int], zoo.Robot], x: int) -> Case:
        return Case(figure, panel, x, lambda: synthetic_mechanism(build(x), convention), RECURSIVE)

    def robot(figure: str, panel: str, name: str, preset: str | None = None) -> Case:
        return Case(figure, panel, 0, lambda: zoo.load(name, preset), ALL_FOUR)

    return [
        *(
            mechanism("fig3", f"b={b}", lambda L, b=b: synthetic.stem_with_branches(L, b), L)
            for b in BRANCHES
            for L in sizes.stems
        ),
        *(mechanism("fig4", "a", synthetic.chain_welded_every_k, k) for k in sizes.k),
        *(mechanism("fig4", "b", synthetic.chain_welded_every_link, n) for n in sizes.n),
        robot("fig5", "a", "atlas", "feet_6d"),
        robot("fig5", "b", "atlas", "feet_4x3d"),
        robot("fig6", "a", "shadow_hand"),
        robot("fig6", "b", "atlas_shadow_hand"),
        robot("fig6", "c", "atlas_two_shadow_hands", "fingertips_3d"),
        robot("fig6", "d", "atlas_two_shadow_hands", "fingertips_3d_feet_6d"),
        robot("caveat", "", "atlas", "hands_feet_6d"),
    ]


def _bar(total: int, progress: bool):
    """The progress bar of a counting loop, on stderr."""
    return progress_bar(
        total=total, disable=not progress, unit="count", file=sys.stderr, mininterval=1
    )


def count_all(
    cases: Sequence[Case], counts: CountCache, progress: bool = True, convention: str = "pvosimr"
) -> list[Count]:
    """Count every algorithm of every case in ``convention`` (a progress bar per count, cached
    on disk)."""
    rows: list[Count] = []
    with _bar(sum(len(c.algorithms) for c in cases), progress) as bar:
        for case in cases:
            robot = case.build()
            mechanism = f"{robot.name}/{robot.preset}" if robot.preset else robot.name
            for algorithm in case.algorithms:
                bar.set_postfix_str(f"{case.figure} {mechanism} {algorithm}")
                ops = counts.count(robot.model, robot.constraints, algorithm, convention)
                rows.append(Count(case.figure, case.panel, mechanism, case.x, algorithm, ops))
                bar.update()
            counts.save()  # a long run that is stopped keeps what it counted
    return rows


def scale_counts(
    counts: CountCache,
    stem: int = PAPER_FIG3_STEM,
    branches: Sequence[int] = tuple(PAPER_FIG3_TOP_TICK),
    progress: bool = True,
) -> dict[tuple[int, str, str], int]:
    """``{(b, variant, algorithm): ops}``: Fig. 3's mechanism at ``stem`` for each of
    ``branches``, the paper's three algorithms, in each of :data:`VARIANTS
    <pvosimr.study.figures.convention.VARIANTS>` (through the cache)."""
    out: dict[tuple[int, str, str], int] = {}
    with _bar(len(branches) * len(VARIANTS) * len(PAPER_THREE), progress) as bar:
        for b in branches:
            robot = synthetic.stem_with_branches(stem, b)
            turned = autotree_frames(robot.model)
            for variant, (is_turned, counting) in VARIANTS.items():
                model = turned if is_turned else robot.model
                for algorithm in PAPER_THREE:
                    bar.set_postfix_str(f"b={b} {variant} {algorithm}")
                    ops = counts.count(model, robot.constraints, algorithm, counting)
                    out[b, variant, algorithm] = ops
                    bar.update()
            counts.save()
    return out


def write_csv(rows: Sequence[Count], path: Path) -> None:
    """``opcounts.csv``: one row per (figure, panel, mechanism, x, algorithm, ops)."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["figure", "panel", "mechanism", "x", "algorithm", "ops"])
        for r in rows:
            writer.writerow([r.figure, r.panel, r.mechanism, r.x, r.algorithm, r.ops])


def run(
    out: Path,
    quick: bool,
    cache_path: Path | None,
    progress: bool = True,
    convention: str = "pvosimr",
) -> dict:
    """Count, plot and judge in ``convention``; returns a summary (rows, verdicts, figure
    paths, the :func:`scale_counts` of a full run in our convention, timing, cache hits and
    misses)."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}; valid: {', '.join(CONVENTIONS)}")
    require("pvosimr.study.figures.run", "casadi", "matplotlib")  # before any output
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    counts = CountCache(cache_path)
    rows = count_all(sweeps(QUICK if quick else FULL, convention), counts, progress, convention)
    write_csv(rows, out / "opcounts.csv")
    written = write_all(rows, out)
    verdicts = evaluate(rows, quick=quick)
    scale = {} if quick or convention != "pvosimr" else scale_counts(counts, progress=progress)
    meta = {
        "mode": "quick" if quick else "full",
        "convention": convention,
        "seconds": time.perf_counter() - started,
        "cache": f"{counts.hits} cached, {counts.misses} counted",
        "python": platform.python_version(),
        "csv": str(out / "opcounts.csv"),
    }
    (out / "claims.md").write_text(report(verdicts, meta, scale, tuple(VARIANTS)))
    return {
        "rows": rows,
        "verdicts": verdicts,
        "figures": written,
        "scale": scale,
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
    parser.add_argument(
        "--convention",
        choices=CONVENTIONS,
        default="pvosimr",
        help="how to count: 'pvosimr' (our mechanisms, X_J and X_tree block-wise) or 'paper' "
        "(the authors': Figs. 3-4 with autoTree-turned joint frames, every X_up a 6x6 "
        "matrix); default: %(default)s",
    )
    add_out_option(
        parser,
        help=f"output folder (default: {DEFAULT_OUT['pvosimr']}/, with --convention paper "
        f"{DEFAULT_OUT['paper']}/, both git-ignored; --out {COMMITTED['pvosimr']} and --out "
        f"{COMMITTED['paper']} rewrite the repository's committed ones)",
    )
    add_cache_options(parser, no_cache_help="count everything afresh (default: cached)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr figures``: see ``--help``; exit 0 when written, 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    require_extra(parser.prog, "casadi", "matplotlib")
    for name in PAPER_ROBOTS:  # a model the robot figures need, not installed: the fix
        try:
            zoo.load(name)
        except (FileNotFoundError, ModuleNotFoundError) as exc:
            return usage_error(parser.prog, f"Figs. 5-6 need the {name} model: {exc}")
    out = args.out if args.out is not None else DEFAULT_OUT[args.convention]
    unmade = make_out(parser.prog, out)
    if unmade is not None:
        return unmade
    cache_path = None if args.no_cache else args.cache
    summary = run(out, args.quick, cache_path, convention=args.convention)
    for v in summary["verdicts"]:
        print(f"{v.claim}: {v.status:7s} {v.ours}")
    print(
        f"\n{len(summary['rows']) + len(summary['scale'])} counts ({summary['cache']}) in "
        f"{summary['seconds']:.0f} s; wrote {out}/opcounts.csv, claims.md and "
        f"{len(summary['figures'])} figure files"
    )
    return 0

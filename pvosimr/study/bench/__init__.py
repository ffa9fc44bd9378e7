"""``pvosimr bench``: wall time per call of every pvosimr path against Pinocchio's, same run.

For each robot case (default: Atlas 2×6D and 4×3D feet, Atlas with two Shadow hands with and
without 6D feet, the Shadow hand, Talos), every method is timed on the same random
configurations, in interleaved rounds (round r times every method once) so that load changes on
a shared machine hit all methods alike:

- ``numpy:<algorithm>``: :func:`pvosimr.compute_delassus` for every algorithm;
- ``batch:pv-osimr``: :func:`pvosimr.compute_delassus_batch` on B configurations at once, per
  configuration;
- ``codegen:pv-osimr``: :func:`pvosimr.codegen.compile` (C from CasADi, called as a CPython
  extension, or through ctypes where Python's headers are missing: the timings record which);
  ``codegen-external:pv-osimr`` the same library through ``casadi.external``;
- ``pin-efpa``, ``pin-pv-osimr``: Pinocchio's C++ ``computeDelassusMatrix`` and
  ``computePvDelassusMatrix`` called as bare bindings (constraint datas and the
  ``initPvDelassus`` object prepared once);
- ``ref:pin-efpa``, ``ref:pin-pv-osimr``, ``ref:pin-cholesky``: the same through
  :mod:`pvosimr.reference` (which adds its input check and cache lookup); the Cholesky route
  refuses a singular G.

Reported are the median and quartiles over ``repeats`` samples.  Ratios divide by the faster of
the two bare Pinocchio calls measured in the same run.  Every method's result is checked against
``numpy:pv-osimr`` first.  A second sweep times the Fig. 4 chains (:mod:`pvosimr.zoo.synthetic`)
against problem size.  Outputs (in ``--out``, default ``figures/``): ``timings.md``,
``timings.json``, ``timings.png`` and ``timings.pdf``.

Modules, one job each: :mod:`.methods` (the timed methods and their check), :mod:`.timing`
(the interleaved loop, the cases, the sweep, :func:`run`), :mod:`.environment` (the machine),
:mod:`.results` (the records), :mod:`.verdicts` (the speed targets), :mod:`.report` (markdown,
JSON, :func:`write`), :mod:`.figure` (the plot); this one is the command line.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from pvosimr import zoo
from pvosimr.study.options import (
    add_out_option,
    add_seed_option,
    at_least_one,
    command_parser,
    require_extra,
    usage_error,
)

from .environment import machine
from .figure import plot
from .methods import BATCH_SIZE, CHECK_TOLERANCE, LABELS, labels
from .report import markdown, write
from .results import PIN, CaseResult, ScalingPoint, Timing
from .timing import (
    DEFAULT_CASES,
    QUICK_LINKS,
    SCALING_METHODS,
    SCALING_SIZES,
    quick_sizes,
    run,
    time_case,
    time_scaling,
)
from .verdicts import TARGET_CASE, targets

__all__ = [
    "BATCH_SIZE",
    "CHECK_TOLERANCE",
    "DEFAULT_CASES",
    "LABELS",
    "PIN",
    "SCALING_METHODS",
    "SCALING_SIZES",
    "TARGET_CASE",
    "CaseResult",
    "ScalingPoint",
    "Timing",
    "build_parser",
    "labels",
    "machine",
    "main",
    "markdown",
    "plot",
    "run",
    "targets",
    "time_case",
    "time_scaling",
    "write",
]

SWITCHES = {
    "--no-scaling": "skip the Fig. 4 size sweep (default: run it)",
    "--quick-scaling": f"only the small sizes of the Fig. 4 sweep, up to n = {QUICK_LINKS} "
    "(default: every size)",
    "--no-codegen": "skip the compiled path (default: time it)",
}
"""The on/off options and their help."""


def _flags(text: str) -> tuple[str, ...]:
    """``--codegen-flags``: split as a shell would."""
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} in {text!r}") from None


def _add_count(
    parser: argparse.ArgumentParser, flag: str, metavar: str, default: int, what: str
) -> None:
    """``flag N``: a count of at least 1."""
    help = f"{what}, at least 1 (default: %(default)s)"
    parser.add_argument(flag, type=at_least_one, default=default, metavar=metavar, help=help)


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr bench``."""
    parser = command_parser(
        "bench",
        "Time every pvosimr path against Pinocchio's C++ on the paper's robots "
        "and the Fig. 4 chains; write timings.md/.json/.png/.pdf (needs matplotlib).",
    )
    parser.add_argument(
        "--robots",
        nargs="+",
        metavar="ROBOT[/PRESET]",
        help="cases to time (a bare robot name means its first preset; default: "
        f"{' '.join(DEFAULT_CASES)}, leaving out those whose model is not installed)",
    )
    _add_count(parser, "--repeats", "N", 30, "samples per method")
    add_out_option(parser, Path("figures"))
    for flag, help in SWITCHES.items():
        parser.add_argument(flag, action="store_true", help=help)
    parser.add_argument(
        "--codegen-flags",
        type=_flags,
        default=("-O3",),
        metavar="FLAGS",
        help="compiler flags of the generated C (default: -O3; -O1 builds large models far "
        "faster at about the same speed)",
    )
    _add_count(parser, "--batch-size", "B", BATCH_SIZE, "configurations per call of the batch path")
    add_seed_option(parser)
    return parser


def _check_cases(specs: Sequence[str], prog: str) -> int | None:
    """Exit status 2 and the reason when a requested case is unknown or its model missing."""
    for spec in specs:
        try:
            zoo.load_case(spec)
        except (ValueError, FileNotFoundError, ModuleNotFoundError) as exc:
            return usage_error(prog, f"--robots {spec}: {exc}")
    return None


def _scaling(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """The Fig. 4 sizes the options ask for: none, the small ones, or all."""
    if args.no_scaling:
        return {}
    return quick_sizes() if args.quick_scaling else SCALING_SIZES


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr bench``: see ``--help``; exit 0 when written, 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    require_extra(parser.prog, "matplotlib")  # the plot comes last: fail before timing
    if args.robots is not None:
        bad = _check_cases(args.robots, parser.prog)
        if bad is not None:
            return bad
    result = run(
        args.robots or DEFAULT_CASES,
        repeats=args.repeats,
        scaling=_scaling(args),
        codegen=not args.no_codegen,
        codegen_flags=args.codegen_flags,
        batch_size=args.batch_size,
        seed=args.seed,
        command=shlex.join(["pvosimr", "bench", *(sys.argv[2:] if argv is None else argv)]),
    )
    for path in write(result, args.out):
        print(path)
    for t, m, v in targets(result):
        print(f"{v:8s} {t}: {m}")
    return 0

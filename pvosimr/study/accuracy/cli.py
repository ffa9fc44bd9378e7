"""``python -m pvosimr.study.accuracy [--quick] [--out DIR] [--no-progress]``."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..options import REPORT_DIR, OneLineParser, add_out_option, make_out
from .cases import FULL, QUICK
from .measure import run_study
from .report import write_outputs

__all__ = ["main"]

COMMAND = "python -m pvosimr.study.accuracy"


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the study (:data:`QUICK` with ``--quick``, else :data:`FULL`), write its report."""
    parser = OneLineParser(
        prog=COMMAND,
        description="Accuracy of every Delassus path against chain depth and cond(M).",
    )
    parser.add_argument("--quick", action="store_true", help="a few small cases (under a minute)")
    add_out_option(
        parser,
        REPORT_DIR,
        help="output folder (default: %(default)s/, git-ignored, beside `pvosimr validate`'s "
        "report; --out validation rewrites the repository's committed study)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if make_out(parser.prog, args.out) is not None:  # one line, before the study runs
        raise SystemExit(2)
    start = time.perf_counter()
    results = run_study(QUICK if args.quick else FULL, progress=not args.no_progress)
    seconds = time.perf_counter() - start
    write_outputs(results, args.out, seconds, COMMAND + (" --quick" if args.quick else ""))
    return results

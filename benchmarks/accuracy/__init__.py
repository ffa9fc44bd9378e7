"""How accurate is every pvosimr path, against chain depth and cond(M), next to Pinocchio's C++.

The study builds serial chains (:mod:`.cases`), measures every algorithm on the numpy, batch,
CasADi and compiled paths and Pinocchio's two C++ routines against a double ``dense`` truth and
an extended-precision ``wide`` one (:mod:`.truths`), one :class:`~benchmarks.record.Record`
per number (:mod:`.measure`), reads its acceptance and conditioning limits off them
(:mod:`.tables`) and writes ``accuracy.md``, ``accuracy.json`` and ``accuracy.png``
(:mod:`.report`, :mod:`.plot`): ``pvosimr bench --sections accuracy [--quick] [--out
validation]`` (:func:`run`).
"""

import time

from .cases import (
    ACCEPT_COND,
    ALGORITHMS,
    FULL,
    PINOCCHIO,
    QUICK,
    RECURSIVE,
    TOL,
    ChainCase,
    Limits,
    StudyPlan,
    mass_scales,
    mixed_kinds,
)
from .measure import run_study
from .report import write_outputs
from .tables import case_views
from .truths import dense_truth, wide_truth

__all__ = [
    "ACCEPT_COND",
    "ALGORITHMS",
    "PINOCCHIO",
    "RECURSIVE",
    "TOL",
    "ChainCase",
    "Limits",
    "StudyPlan",
    "case_views",
    "dense_truth",
    "mass_scales",
    "mixed_kinds",
    "run",
    "run_study",
    "wide_truth",
    "write_outputs",
]


def run(out, *, quick: bool = False, progress: bool = True, command: str = "") -> dict:
    """The study (:data:`QUICK` with ``quick``, else :data:`FULL`), its report written to
    ``out``; the results."""
    start = time.perf_counter()
    results = run_study(QUICK if quick else FULL, progress=progress)
    write_outputs(results, out, time.perf_counter() - start, command)
    return results

"""How accurate is every pvosimr path, against chain depth and cond(M), next to Pinocchio's C++.

The study builds serial chains (:mod:`.cases`), measures every algorithm on the numpy, batch,
CasADi and compiled paths and Pinocchio's two C++ routines against a double ``dense`` truth and
an extended-precision ``wide`` one (:mod:`.truths`), one :class:`~benchmarks.record.Record`
per number (:mod:`.measure`), and writes ``accuracy.md``, ``accuracy.json`` and
``accuracy.png`` from them (:mod:`.report`): ``pvosimr bench --sections accuracy [--quick]
[--out validation]`` (:func:`run`).
"""

import time

from .cases import FULL, QUICK
from .measure import run_study
from .report import write_outputs


def run(out, *, quick: bool = False, progress: bool = True, command: str = "") -> dict:
    """The study (:data:`QUICK` with ``quick``, else :data:`FULL`), its report written to
    ``out``; the results."""
    start = time.perf_counter()
    results = run_study(QUICK if quick else FULL, progress=progress)
    write_outputs(results, out, time.perf_counter() - start, command)
    return results

"""How accurate is every pvosimr path, against chain depth and cond(M), next to Pinocchio's C++.

The study builds serial chains (``Spherical``, ``FreeFlyer`` and ``mixed`` chains drawing from
every joint type in :data:`pvosimr.SUPPORTED_JOINTS`), random but seeded, with a 6D weld at the
tip, a 3D point contact in the middle and a 6D weld at the base, and measures the relative error
``rel_err(G, G_truth) = max|G − G_truth| / max(1, max|G_truth|)`` of

* every algorithm on the numpy path (:func:`pvosimr.compute_delassus`), on the batch
  (:func:`pvosimr.compute_delassus_batch`, several configurations at once), on CasADi
  (:func:`pvosimr.symbolic.delassus_function` evaluated numerically: the expression graph the
  generated C computes) and compiled (:func:`pvosimr.codegen.build.compile`) where compile time
  allows;
* Pinocchio's ``pin.computeDelassusMatrix`` and its C++ PV-OSIMr
  (:func:`pvosimr.reference.pinocchio.pinocchio_pv_osimr`).

against a double ``dense`` truth and an extended-precision ``wide`` one (:mod:`.truths`).

Modules: :mod:`.cases` (paths, chains, the cases of a run: :data:`~.cases.QUICK`,
:data:`~.cases.FULL`), :mod:`.truths`, :mod:`.measure`
(every path on a chain, the run), :mod:`.tables` (acceptance and conditioning limits read off
the records), :mod:`.report` and :mod:`.plot` (the written outputs).

Run ``pvosimr bench --sections accuracy [--quick] [--out validation]`` (:func:`run`): writes
``accuracy.md``, ``accuracy.json`` and ``accuracy.png``.
"""

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
    build_chain,
    chain_joint_kinds,
    mass_scales,
    mixed_kinds,
)
from .measure import Record, measure, run_study
from .report import markdown, summary, write_outputs
from .tables import acceptance, accuracy_limits, failures
from .truths import WideBackend, dense_truth, wide_truth

__all__ = [
    "ACCEPT_COND",
    "ALGORITHMS",
    "PINOCCHIO",
    "RECURSIVE",
    "TOL",
    "ChainCase",
    "Limits",
    "Record",
    "StudyPlan",
    "WideBackend",
    "acceptance",
    "accuracy_limits",
    "build_chain",
    "chain_joint_kinds",
    "dense_truth",
    "failures",
    "markdown",
    "mass_scales",
    "measure",
    "mixed_kinds",
    "run",
    "run_study",
    "summary",
    "wide_truth",
    "write_outputs",
]


def run(out, *, quick: bool = False, progress: bool = True, command: str = "") -> dict:
    """The study (:data:`QUICK` with ``quick``, else :data:`FULL`), its report written to
    ``out``; the results."""
    import time

    start = time.perf_counter()
    results = run_study(QUICK if quick else FULL, progress=progress)
    write_outputs(results, out, time.perf_counter() - start, command)
    return results

"""What a bench run measured: timings per method and case, scaling points, and how to print them.

These records are filled by :mod:`.timing`, read by :mod:`.verdicts`, :mod:`.report` and
:mod:`.figure`, and written to ``timings.json`` through their ``to_json`` methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .loop import Timed, Timing
from .text import byte_size, microseconds, slope, timing_cell

__all__ = [
    "PIN",
    "CaseResult",
    "CrossoverPoint",
    "ScalingPoint",
    "Timed",
    "Timing",
    "byte_size",
    "case_cell",
    "log_log_slope",
    "microseconds",
    "slope",
    "timing_cell",
]

PIN = ("pin-efpa", "pin-pv-osimr")
"""The two bare Pinocchio C++ calls; ratios divide by the faster of them."""


@dataclass
class CaseResult(Timed):
    """One robot case of the bench: ``errors`` are against numpy:pv-osimr; the build facts of
    the compiled function and the check of dG/dq beside them."""

    codegen: dict = field(default_factory=dict)  # build facts of the compiled function
    derivatives: dict = field(default_factory=dict)  # their check (errors, step) and build

    def pin_best(self) -> tuple[str, float] | None:
        """The faster bare Pinocchio call (name, median seconds), if any was timed."""
        timed = [(self.timings[k].median, k) for k in PIN if k in self.timings]
        if not timed:
            return None
        best, name = min(timed)
        return name, best

    def refused(self, method: str) -> bool:
        """Whether ``method`` declined this case's G (e.g. the Cholesky route on a singular G)."""
        return self.skipped.get(method, "").startswith("refused")

    def to_json(self) -> dict:
        return {
            **self.json_head(),
            "errors_vs_numpy_pv_osimr": self.errors,
            "codegen": self.codegen,
            "derivatives": self.derivatives,
        }


@dataclass
class ScalingPoint:
    """Median microseconds per call (per configuration for a batched method) of each method on
    one Fig. 4 chain, and what the methods hold in memory where measured."""

    family: str
    size: int  # k (every-k chain) or n (every-link chain)
    n: int
    m: int
    medians_us: dict[str, float]
    memory: dict[str, dict] = field(default_factory=dict)  # per method: bytes, build facts
    skipped: dict[str, str] = field(default_factory=dict)  # methods not timed, and why


@dataclass
class CrossoverPoint:
    """Median microseconds per configuration of each route of the crossover sweep on one
    mechanism size (:mod:`.crossover`), their quartiles, the agreement of every route's G with
    the dense route's, and the build of the generated code."""

    family: str
    size: int  # the mechanism's own size parameter (k, n or the stem's L)
    n: int
    m: int
    medians_us: dict[str, float]
    quartiles_us: dict[str, list[float]] = field(default_factory=dict)  # [p25, p75]
    errors: dict[str, float] = field(default_factory=dict)  # rel_err against the dense route
    skipped: dict[str, str] = field(default_factory=dict)  # routes not timed, and why
    build: dict = field(default_factory=dict)  # the generated code's build facts


def case_cell(case: CaseResult, method: str) -> str:
    """``method``'s :func:`timing_cell` on ``case``, or why it was not timed."""
    if method in case.timings:
        return timing_cell(case.timings[method])
    return case.skipped.get(method, "—")


def log_log_slope(points: list[ScalingPoint], method: str, last: int = 4) -> float | None:
    """:func:`slope` of ``method``'s time per call on the points that timed it."""
    timed = [p for p in points if method in p.medians_us]
    return slope([p.n for p in timed], [p.medians_us[method] for p in timed], last)

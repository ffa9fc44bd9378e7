"""The three speed targets on Atlas with both feet welded (6D), each with its verdict.

1. generated PV-OSIMr ≤ 0.5 × the faster of Pinocchio's C++ EFPA and PV-OSIMr;
2. batched numpy PV-OSIMr per configuration ≤ 3 × Pinocchio's C++ per call at B = 1024;
3. single-call numpy PV-OSIMr ≤ 1 ms.

Each is a row ``(target, measured, verdict)``; a target whose measurement is missing from the
run says so and is "not met".
"""

from __future__ import annotations

from .methods import BATCH_SIZE
from .results import CaseResult, microseconds

__all__ = ["TARGET_CASE", "targets"]

TARGET_CASE = "atlas/feet_6d"

Row = tuple[str, str, str]

CODEGEN = "generated PV-OSIMr ≤ 0.5 × the faster of Pinocchio's C++ EFPA and PV-OSIMr (Atlas 2×6D)"
BATCH = (
    f"batched numpy PV-OSIMr per configuration ≤ 3 × Pinocchio's C++ per call "
    f"(B = {BATCH_SIZE}, Atlas 2×6D)"
)
SINGLE = "single-call numpy PV-OSIMr ≤ 1 ms (Atlas 2×6D)"
MISSING = f"not measured ({TARGET_CASE} not in this run)"


def _via_reference(case: CaseResult) -> list[float]:
    """Median seconds of the Pinocchio calls through :mod:`pvosimr.reference` that were timed."""
    timed = [k for k in ("ref:pin-efpa", "ref:pin-pv-osimr") if k in case.timings]
    return [case.timings[k].median for k in timed]


def _codegen_row(case: CaseResult | None) -> Row:
    if case is None:
        return CODEGEN, MISSING, "not met"
    if case.pin_best() is None or "codegen:pv-osimr" not in case.timings:
        why = case.skipped.get("codegen:pv-osimr", "no Pinocchio timing")
        return CODEGEN, f"not measured ({why})", "not met"
    best_name, best = case.pin_best()
    ours = case.timings["codegen:pv-osimr"].median
    ratio = ours / best
    ref = _via_reference(case)
    via = (
        f"; against the calls through pvosimr.reference ({microseconds(min(ref))} µs): "
        f"{ours / min(ref):.2f}×"
        if ref
        else ""
    )
    measured = (
        f"{microseconds(ours)} µs vs {microseconds(best)} µs ({best_name}, bare binding call): "
        f"{ratio:.2f}×{via}"
    )
    if ratio <= 0.5:
        return CODEGEN, measured, "met"
    if ref and ours <= 0.5 * min(ref):
        verdict = "not met against the bare bindings; met against the calls via pvosimr.reference"
        return CODEGEN, measured, verdict
    return CODEGEN, measured, "not met"


def _batch_row(case: CaseResult | None, batch_size: int) -> Row:
    if case is None:
        return BATCH, MISSING, "not met"
    if "batch:pv-osimr" not in case.timings or case.pin_best() is None:
        why = case.skipped.get("batch:pv-osimr", "no Pinocchio timing")
        return BATCH, f"not measured: {why}", "not met"
    best_name, best = case.pin_best()
    ours = case.timings["batch:pv-osimr"].median
    ratio = ours / best
    size = f" (B = {batch_size})" if batch_size != BATCH_SIZE else ""
    measured = (
        f"{microseconds(ours)} µs per configuration{size} vs {microseconds(best)} µs "
        f"({best_name}): {ratio:.2f}×"
    )
    return BATCH, measured, "met" if ratio <= 3 and batch_size == BATCH_SIZE else "not met"


def _single_row(case: CaseResult | None) -> Row:
    if case is None:
        return SINGLE, MISSING, "not met"
    if "numpy:pv-osimr" not in case.timings:
        return SINGLE, f"not measured: {case.skipped.get('numpy:pv-osimr', 'no timing')}", "not met"
    ours = case.timings["numpy:pv-osimr"].median
    return SINGLE, f"{microseconds(ours)} µs", "met" if ours <= 1e-3 else "not met"


def targets(run_result: dict) -> list[Row]:
    """The three speed targets: ``(target, measured, verdict)`` each."""
    case = next((c for c in run_result["cases"] if c.name == TARGET_CASE), None)
    return [_codegen_row(case), _batch_row(case, run_result["batch_size"]), _single_row(case)]

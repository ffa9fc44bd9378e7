"""The speed targets, each a ratio to the faster bare Pinocchio C++ call of the same run.

1. batched generated PV-OSIMr at B = 1024, 2 threads: ≤ 0.07× per configuration (Atlas 2×6D);
2. the same with 1 thread: ≤ 0.12× (Atlas 2×6D);
3. the same on 2 threads: ≤ 0.1× on every case of the run;
4. generated PV-OSIMr, one call: ≤ 0.35× on every case of the run;
5. numpy PV-OSIMr, one call: ≤ 60× (Atlas 2×6D);
6. generated dG/dq faster than central differences of Pinocchio's C++ ``computeDelassusMatrix``
   (2·nv calls, Atlas 2×6D);
7. the generated gradient of ⟨W, G⟩ (``f.vjp``): at most 4 generated G calls (Atlas 2×6D);
8. the generated code on the Fig. 4a chain up to n = 961 (the large sweep): log-log slopes of
   at most 1.1 for its time per call and its library's size, over the four largest sizes.

:func:`targets` gives one row ``(target, measured, verdict)`` each; a target whose measurement
is missing from the run says why and is "not met".  :func:`case_table` gives the same ratios on
every case.
"""

from __future__ import annotations

from .compiled import batch_name
from .derivatives import REFERENCE, VJP
from .methods import BATCH_SIZE
from .results import CaseResult, ScalingPoint, log_log_slope, microseconds, slope

__all__ = ["CASE_TARGETS", "TARGET_CASE", "case_table", "ratio", "targets"]

TARGET_CASE = "atlas/feet_6d"
ATLAS = "Atlas 2×6D"
PIN_BEST = "Pinocchio's faster C++ call"

Row = tuple[str, str, str]

CASE_TARGETS: dict[str, tuple[str, float]] = {
    batch_name(BATCH_SIZE, 2): (f"batched generated, B = {BATCH_SIZE}, 2 threads", 0.1),
    batch_name(BATCH_SIZE, 1): (f"batched generated, B = {BATCH_SIZE}, 1 thread", 0.12),
    "codegen:pv-osimr": ("generated, one call", 0.35),
    "numpy:pv-osimr": ("numpy, one call", 60.0),
}
"""Method -> (short name, largest ratio to Pinocchio's faster C++ call that meets the target on
every case)."""

ATLAS_BOUNDS = {batch_name(BATCH_SIZE, 2): 0.07}
"""Tighter bounds on :data:`TARGET_CASE` than :data:`CASE_TARGETS`'."""

VJP_BOUND = 4.0
VJP_TARGET = (
    f"generated gradient of ⟨W, G⟩ (f.vjp, one row): ≤ {VJP_BOUND:g} × the generated G call "
    f"({ATLAS})"
)

DERIVATIVES = (
    "generated dG/dq (f.derivatives) faster than central differences of Pinocchio's C++ "
    f"computeDelassusMatrix (2·nv calls) ({ATLAS})"
)


def _bound(method: str, case: str) -> float:
    return (
        ATLAS_BOUNDS.get(method, CASE_TARGETS[method][1])
        if case == TARGET_CASE
        else (CASE_TARGETS[method][1])
    )


def _target(method: str, where: str) -> str:
    name = CASE_TARGETS[method][0]
    bound = _bound(method, TARGET_CASE) if where == ATLAS else CASE_TARGETS[method][1]
    per = " per configuration" if method.startswith("codegen-batch") else ""
    return f"{name}: ≤ {bound:g} × {PIN_BEST}{per} ({where})"


def ratio(case: CaseResult, method: str) -> float | None:
    """``method``'s median ÷ the faster bare Pinocchio call of the case (None if either is
    missing)."""
    best = case.pin_best()
    if best is None or method not in case.timings:
        return None
    return case.timings[method].median / best[1]


def _why_missing(case: CaseResult, method: str) -> str:
    if case.pin_best() is None:
        return "no Pinocchio timing"
    return case.skipped.get(method, f"{method} not in this run")


def _case_row(case: CaseResult | None, method: str) -> Row:
    """One target on :data:`TARGET_CASE`."""
    target = _target(method, ATLAS)
    if case is None:
        return target, f"not measured ({TARGET_CASE} not in this run)", "not met"
    r = ratio(case, method)
    if r is None:
        return target, f"not measured ({_why_missing(case, method)})", "not met"
    best_name, best = case.pin_best()
    ours = microseconds(case.timings[method].median)
    measured = f"{ours} µs vs {microseconds(best)} µs ({best_name}): {r:.2f}×"
    return target, measured, "met" if r <= _bound(method, TARGET_CASE) else "not met"


def _every_case_row(cases: list[CaseResult], method: str) -> Row:
    """``method`` on every case of the run."""
    target = _target(method, "every case")
    if not cases:
        return target, "not measured (no case in this run)", "not met"
    ratios = {c.name: ratio(c, method) for c in cases}
    missing = [name for name, r in ratios.items() if r is None]
    if missing:
        return target, f"not measured on {', '.join(missing)}", "not met"
    worst = max(ratios, key=ratios.get)
    within = sum(r <= CASE_TARGETS[method][1] for r in ratios.values())
    measured = f"worst {ratios[worst]:.2f}× ({worst}); {within} of {len(ratios)} cases within"
    return target, measured, "met" if within == len(ratios) else "not met"


def _derivatives_row(case: CaseResult | None) -> Row:
    if case is None:
        return DERIVATIVES, f"not measured ({TARGET_CASE} not in this run)", "not met"
    timed = [k for k in ("dG:codegen", REFERENCE) if k in case.timings]
    if len(timed) < 2:
        absent = next(k for k in ("dG:codegen", REFERENCE) if k not in case.timings)
        why = case.skipped.get(absent, "derivatives not timed on this case")
        return DERIVATIVES, f"not measured ({why})", "not met"
    ours, fd = (case.timings[k].median for k in timed)
    measured = f"{microseconds(ours)} µs vs {microseconds(fd)} µs: {ours / fd:.2f}×"
    return DERIVATIVES, measured, "met" if ours < fd else "not met"


def _vjp_row(case: CaseResult | None) -> Row:
    if case is None:
        return VJP_TARGET, f"not measured ({TARGET_CASE} not in this run)", "not met"
    timed = [k for k in (VJP, "codegen:pv-osimr") if k in case.timings]
    if len(timed) < 2:
        absent = next(k for k in (VJP, "codegen:pv-osimr") if k not in case.timings)
        why = case.skipped.get(absent, f"{absent} not timed on this case")
        return VJP_TARGET, f"not measured ({why})", "not met"
    ours, g = (case.timings[k].median for k in timed)
    measured = f"{microseconds(ours)} µs vs {microseconds(g)} µs: {ours / g:.2f}×"
    return VJP_TARGET, measured, "met" if ours <= VJP_BOUND * g else "not met"


SLOPE_BOUND = 1.1
SLOPE_TARGET = (
    f"generated code on the Fig. 4a chain (large sweep): log-log slope ≤ {SLOPE_BOUND:g} of its "
    "time per call and of its library's size"
)


def _slope_row(points: list[ScalingPoint]) -> Row:
    """Target 8 from the large sweep's generated single call and library sizes."""
    method = "codegen:pv-osimr"
    built = [p for p in points if "library_bytes" in p.memory.get(method, {})]
    size = slope([p.n for p in built], [p.memory[method]["library_bytes"] for p in built])
    time = log_log_slope(points, method)
    if time is None or size is None:
        return (
            SLOPE_TARGET,
            "not measured (the large sweep with the generated code is not in this run)",
            "not met",
        )
    n = [p.n for p in points if method in p.medians_us][-4:]
    measured = f"time {time:.2f}, library {size:.2f} (n = {', '.join(map(str, n))})"
    return SLOPE_TARGET, measured, "met" if max(time, size) <= SLOPE_BOUND else "not met"


def targets(run_result: dict) -> list[Row]:
    """The eight speed targets: ``(target, measured, verdict)`` each."""
    cases: list[CaseResult] = run_result["cases"]
    atlas = next((c for c in cases if c.name == TARGET_CASE), None)
    return [
        _case_row(atlas, batch_name(BATCH_SIZE, 2)),
        _case_row(atlas, batch_name(BATCH_SIZE, 1)),
        _every_case_row(cases, batch_name(BATCH_SIZE, 2)),
        _every_case_row(cases, "codegen:pv-osimr"),
        _case_row(atlas, "numpy:pv-osimr"),
        _derivatives_row(atlas),
        _vjp_row(atlas),
        _slope_row(run_result.get("large", [])),
    ]


def _cell(case: CaseResult, method: str) -> str:
    r = ratio(case, method)
    if r is None:
        return "—"
    return f"{r:.2f}× ({'met' if r <= CASE_TARGETS[method][1] else 'not met'})"


def case_table(cases: list[CaseResult]) -> list[tuple[str, list[str]]]:
    """The targets' ratios on every case: ``(row name, one cell per case)``, the bound in the
    row name."""
    rows = [
        (f"{name} ≤ {bound:g}×", [_cell(c, method) for c in cases])
        for method, (name, bound) in CASE_TARGETS.items()
    ]
    cells = []
    for c in cases:
        if "dG:codegen" in c.timings and REFERENCE in c.timings:
            r = c.timings["dG:codegen"].median / c.timings[REFERENCE].median
            cells.append(f"{r:.2f}× ({'met' if r < 1 else 'not met'})")
        else:
            cells.append("—")
    rows.append(("generated dG/dq ÷ central differences of Pinocchio < 1×", cells))
    return rows

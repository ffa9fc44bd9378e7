"""Three sections of ``timings.md``: the derivatives dG/dq, the batched and generated paths
against size with their memory (the large sweep of :mod:`.scaling`), MuJoCo's route against
pvosimr's on MJCF robots (:mod:`.mujoco`), and the crossover of the recursive code with the
dense route (:mod:`.crossover`)."""

from __future__ import annotations

import statistics

from pvosimr.codegen.chunks import CHUNK, CHUNKED_FROM
from pvosimr.study.record import row

from . import mujoco as route
from .crossover import (
    AGREEMENT_TOLERANCE,
    CODEGEN_LINKS,
    CROSSOVER_METHODS,
    DENSE,
    FAMILIES,
    RECURSIVE,
    crossover,
)
from .derivatives import DERIVATIVE_LABELS, REFERENCE, STEP, TOLERANCE
from .methods import labels
from .results import (
    CaseResult,
    CrossoverPoint,
    ScalingPoint,
    byte_size,
    case_cell,
    log_log_slope,
    microseconds,
    timing_cell,
)
from .scaling import DATA_LINKS, LARGE_FLAG_STEPS, LARGE_METHODS, SCALING_BATCH
from .text import prose

__all__ = ["CROSSOVER_LABELS", "crossover_sweep", "derivatives", "large_sweep", "mujoco"]

Lines = list[str]


def derivatives(cases: list[CaseResult], names: dict[str, str]) -> Lines:
    """Time per configuration of every derivative method, its ratio to the central
    differences of Pinocchio, and the check (nothing where no case timed derivatives)."""
    cases = [c for c in cases if c.derivatives]
    if not cases:
        return []
    lines = [
        "",
        "## Derivatives dG/dq (µs per configuration): median [p25–p75]",
        "",
        prose("timings", "derivatives", step=f"{STEP:g}", tolerance=f"{TOLERANCE:g}"),
        "",
        row("method", [f"{c.name} (nv {c.nv}, m {c.m})" for c in cases]),
        "|---|" + "---:|" * len(cases),
    ]
    for k in DERIVATIVE_LABELS:
        lines.append(row(names[k], [case_cell(c, k) for c in cases]))
    for k in DERIVATIVE_LABELS:
        if k != REFERENCE:
            ratios = [_ratio(c, k) for c in cases]
            lines.append(row(f"ratio {names[k]} ÷ the central differences of Pinocchio", ratios))
    lines.append(row("largest error of the timed methods", [_worst(c) for c in cases]))
    return lines


def _ratio(case: CaseResult, method: str) -> str:
    if method in case.timings and REFERENCE in case.timings:
        return f"{case.timings[method].median / case.timings[REFERENCE].median:.2f}×"
    return "—"


def _worst(case: CaseResult) -> str:
    errors = [e for k, e in case.derivatives.get("errors", {}).items() if k in case.timings]
    return f"{max(errors):.1e}" if errors else "—"


def _flags_note() -> str:
    steps = []
    for up_to, flags in LARGE_FLAG_STEPS:
        text = "`--codegen-flags`" if flags is None else f"`{' '.join(flags)}`"
        steps.append(f"{text} up to n = {up_to}" if up_to else f"{text} beyond")
    return ", ".join(steps)


def _times(points: list[ScalingPoint], names: dict[str, str]) -> Lines:
    methods = [k for k in LARGE_METHODS if any(k in p.medians_us for p in points)]
    lines = [
        "| n | m | " + " | ".join(names[k] for k in methods) + " |",
        "|---:|---:|" + "---:|" * len(methods),
    ]
    for p in points:
        cells = [
            microseconds(p.medians_us[k] * 1e-6) if k in p.medians_us else p.skipped.get(k, "—")
            for k in methods
        ]
        lines.append(f"| {p.n} | {p.m} | " + " | ".join(cells) + " |")
    slopes = ["—" if s is None else f"{s:.2f}" for s in (log_log_slope(points, k) for k in methods)]
    return [*lines, "| slope | | " + " | ".join(slopes) + " |"]


def _instructions(g: dict) -> str:
    shared = g.get("shared_functions", 0)
    return f"{g['n_instructions']}" + (f" + {shared} shared functions" if shared else "")


def _memory_row(p: ScalingPoint) -> str:
    batch = p.memory.get("batch:pv-osimr", {})
    peak = batch.get("peak_bytes")
    per = None if peak is None else peak / batch["B"]
    single = p.memory.get("numpy:pv-osimr", {}).get("peak_bytes")
    g = p.memory.get("codegen:pv-osimr")
    if g is None:
        built = ["—"] * 5
    else:
        seconds = g["compile_seconds"]
        built = [
            byte_size(g.get("library_bytes")),
            byte_size(g.get("work_bytes")),
            _instructions(g),
            "cached" if seconds is None else f"{seconds:.1f} s",
            f"`{' '.join(g['flags'])}`",
        ]
    cells = [byte_size(peak), byte_size(per), byte_size(single), *built]
    return f"| {p.n} | {p.m} | " + " | ".join(cells) + " |"


def large_sweep(points: list[ScalingPoint]) -> Lines:
    """The large sweep: time per configuration, and the memory and build of each size."""
    if not points:
        return []
    names = labels(SCALING_BATCH)
    return [
        "",
        f"## Batched and generated paths against size: the Fig. 4a chain up to n = "
        f"{max(p.n for p in points)}",
        "",
        prose(
            "timings",
            "large-sweep",
            batch=SCALING_BATCH,
            flags=_flags_note(),
            chunked_from=f"{CHUNKED_FROM:,}",
            chunk=CHUNK,
        ),
        "",
        *_times(points, names),
        "",
        prose("timings", "large-memory", batch=SCALING_BATCH, data_links=DATA_LINKS),
        "",
        "| n | m | numpy batch peak | per configuration | numpy single peak | library | "
        "work arrays | CasADi instructions | compile time | flags |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        *(_memory_row(p) for p in points),
    ]


def _mujoco_configs(results: list[route.MujocoResult]) -> str:
    counts = ", ".join(f"{r.name} {len(r.rows)}" for r in results)
    draws, reference = route.MAX_DRAWS, route.MUJOCO_LABELS[route.REFERENCE]
    return prose(
        "timings",
        "mujoco-configurations",
        draws=draws,
        counts=counts,
        tolerance=f"{route.TOLERANCE:g}",
        reference=reference,
    )


def _rows(r: route.MujocoResult, rows: list[int]) -> str:
    return f"{statistics.median(rows):g} [{min(rows)}–{max(rows)}]"


def _mujoco_ratio(r: route.MujocoResult, method: str) -> str:
    ratio = r.ratio(method)
    return "—" if ratio is None else f"{ratio:.2f}×"


def _left_out(results: list[route.MujocoResult]) -> Lines:
    lines = [
        f"- {r.name}: rows MuJoCo forms and pvosimr does not map: "
        + ", ".join(f"{k} {v}" for k, v in r.left_out.items())
        for r in results
        if r.left_out
    ]
    return ["", *lines] if lines else []


def mujoco(
    results: list[route.MujocoResult], unavailable: dict[str, str], skipped: str | None
) -> Lines:
    """Per MJCF robot: nv, the rows, µs per call of MuJoCo's route and pvosimr's, their ratios
    to MuJoCo's call and the check (one line when MuJoCo is not installed, nothing when the run
    has no MJCF robot)."""
    heading = "## MuJoCo's route against pvosimr's on MJCF robots (µs per call): median [p25–p75]"
    if skipped:
        return ["", heading, "", f"Not run: {skipped}"]
    if not results and not unavailable:
        return []
    lines = ["", heading, "", prose("timings", "mujoco", pieces=", ".join(route.PIECES)), ""]
    if results:
        lines += [
            _mujoco_configs(results),
            "",
            row("method", [f"{r.name} (nv {r.nv}, m {r.m:g})" for r in results]),
            "|---|" + "---:|" * len(results),
            row("rows of G: median [min–max]", [_rows(r, r.rows) for r in results]),
            row("rows, options as in the file", [_rows(r, r.rows_all) for r in results]),
        ]
        for k, label in route.MUJOCO_LABELS.items():
            cells = [timing_cell(r.timings[k]) if k in r.timings else "—" for r in results]
            lines.append(row(label, cells))
        for k, label in route.MUJOCO_LABELS.items():
            if k != route.REFERENCE:
                ratios = [_mujoco_ratio(r, k) for r in results]
                lines.append(row(f"ratio {label} ÷ mj_fwdPosition", ratios))
        worst = [f"{max(r.errors.values()):.1e}" for r in results]
        lines.append(row("largest error against MuJoCo's matrix", worst))
        lines += _left_out(results)
    lines += [f"\n{name}: not available ({why})" for name, why in unavailable.items()]
    return lines


CROSSOVER_LABELS = {
    "dense:pin+cholesky": "dense: Pinocchio's M and J + Cholesky (everything)",
    "dense:cholesky": "dense: Cholesky only (M, J given)",
    "dense:lu": "dense: LU solve only (M, J given)",
    "batch:pv-osimr": "numpy batch PV-OSIMr",
    CROSSOVER_METHODS[4]: "codegen batch PV-OSIMr (1 thread)",
    "pin-efpa": "Pinocchio C++ EFPA (one call per configuration)",
}
"""The routes of the crossover sweep as the report and the figure name them."""


def crossover_note(B: int, threads: str) -> str:
    """What the crossover sweep times."""
    return prose(
        "timings",
        "crossover",
        batch=B,
        codegen_links=CODEGEN_LINKS,
        flags=_flags_note(),
        threads=threads,
        tolerance=f"{AGREEMENT_TOLERANCE:g}",
    )


def _build_cell(build: dict) -> str:
    """``-O1, 18.1 s``: flags and compile time of a generated G (``cached``: built earlier)."""
    if not build:
        return "—"
    seconds = build.get("compile_seconds")
    return f"`{' '.join(build['flags'])}`, " + ("cached" if seconds is None else f"{seconds:.1f} s")


def _crossover_times(points: list[CrossoverPoint]) -> Lines:
    methods = [k for k in CROSSOVER_METHODS if any(k in p.medians_us for p in points)]
    lines = [
        "| n | m | "
        + " | ".join(CROSSOVER_LABELS[k] for k in methods)
        + " | largest error | codegen build |",
        "|---:|---:|" + "---:|" * (len(methods) + 1) + "---|",
    ]
    for p in points:
        cells = [
            microseconds(p.medians_us[k] * 1e-6) if k in p.medians_us else p.skipped.get(k, "—")
            for k in methods
        ]
        worst = max(p.errors.values(), default=0.0)
        cells += [f"{worst:.1e}", _build_cell(p.build)]
        lines.append(f"| {p.n} | {p.m} | " + " | ".join(cells) + " |")
    return lines


def crossover_table(points: list[CrossoverPoint]) -> Lines:
    """Per mechanism and recursive route: where it starts to beat each dense route."""
    lines = [
        "| mechanism | recursive route | "
        + " | ".join(f"vs {CROSSOVER_LABELS[d]}" for d in DENSE)
        + " |",
        "|---|---|" + "---|" * len(DENSE),
    ]
    for family in dict.fromkeys(p.family for p in points):
        mine = [p for p in points if p.family == family]
        for r in RECURSIVE:
            if any(r in p.medians_us for p in mine):
                cells = [crossover(mine, r, d).text() for d in DENSE]
                lines.append(f"| {family} | {CROSSOVER_LABELS[r]} | " + " | ".join(cells) + " |")
    return lines


def crossover_sweep(points: list[CrossoverPoint], B: int, threads: str) -> Lines:
    """The crossover sweep: times per mechanism, then where each recursive route wins."""
    if not points:
        return []
    lines = [
        "",
        "## Crossover: batched recursive code against the dense route J M⁻¹ Jᵀ",
        "",
        crossover_note(B, threads),
    ]
    for family in dict.fromkeys(p.family for p in points):
        lines += ["", f"### {family}: {FAMILIES.get(family, family)}", ""]
        lines += _crossover_times([p for p in points if p.family == family])
    return [
        *lines,
        "",
        prose("timings", "crossover-wins"),
        "",
        *crossover_table(points),
    ]

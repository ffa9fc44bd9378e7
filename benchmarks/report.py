"""``timings.md`` and ``timings.json``: the report of a run, and :func:`write` for all four files.

:func:`markdown` stacks one section per function below, in the order of the report: header,
machine, targets (and their ratios on every case), times, ratios, what was not timed, the
generated C, agreement, the derivatives, unavailable cases, MuJoCo's route on MJCF robots, the
scaling sweeps, the crossover sweep (the sections of the derivatives, MuJoCo's route, the large
sweep and the crossover are in
:mod:`.sections`).
"""

from __future__ import annotations

from pathlib import Path

from pvosimr.extras import require
from pvosimr.study.record import row, target_json, target_lines, write_json

from .figure import plot, plot_crossover
from .frameworks_section import jsonable as frameworks_json
from .frameworks_section import lines as frameworks
from .loop import N_CONFIGS
from .methods import LABELS, labels
from .results import CaseResult, ScalingPoint, byte_size, case_cell, log_log_slope, microseconds
from .scaling import SCALING_METHODS
from .sections import crossover_sweep, derivatives, large_sweep, mujoco
from .targets import case_table, timing_targets
from .text import prose

__all__ = ["jsonable", "markdown", "write"]

Lines = list[str]


def _header(run_result: dict) -> Lines:
    written = (
        f"Written by `{run_result['command'].strip()}` (benchmarks) in "
        f"{run_result['seconds']:.0f} s."
    )
    if run_result.get("only_frameworks"):  # the section says what it times
        return ["# Timings", "", f'{written} The section "JAX and PyTorch" alone.']
    return [
        "# Timings",
        "",
        prose(
            "timings", "header", written=written, repeats=run_result["repeats"], configs=N_CONFIGS
        ),
    ]


def _machine(run_result: dict) -> Lines:
    return ["", "## Machine", "", *(f"- {k}: {v}" for k, v in run_result["machine"].items())]


def _targets(run_result: dict) -> Lines:
    if run_result.get("only_frameworks"):
        return []  # the section "JAX and PyTorch" has its own targets
    return ["", "## Targets", "", *target_lines(timing_targets(run_result))]


def _targets_per_case(cases: list[CaseResult]) -> Lines:
    """The targets' ratios on every case of the run."""
    if not cases:
        return []
    lines = [
        "",
        "Ratios of the targets on every case (÷ the faster bare Pinocchio C++ call):",
        "",
        row("target", [c.name for c in cases]),
        _rule(cases),
    ]
    return lines + [row(name, cells) for name, cells in case_table(cases)]


def _methods(cases: list[CaseResult], names: dict[str, str]) -> list[str]:
    """The methods of G timed or skipped in any case, in the order of ``names`` (the
    derivatives have their own section)."""
    return [
        k
        for k in names
        if not k.startswith("dG:") and any(k in c.timings or k in c.skipped for c in cases)
    ]


def _rule(cases: list[CaseResult]) -> str:
    return "|---|" + "---:|" * len(cases)


def _times(cases: list[CaseResult], names: dict[str, str]) -> Lines:
    header = row("method", [f"{c.name} (nv {c.nv}, m {c.m})" for c in cases])
    lines = ["## Time per call (µs): median [p25–p75]", "", header, _rule(cases)]
    for k in _methods(cases, names):
        lines.append(row(names[k], [case_cell(c, k) for c in cases]))
    return lines


def _ratio_cell(case: CaseResult, method: str) -> str:
    """``time / the faster bare Pinocchio call`` of the same case, or why there is none."""
    best = case.pin_best()
    if method in case.timings and best:
        return f"{case.timings[method].median / best[1]:.2f}×"
    return "refused" if case.refused(method) else "—"


def _divisor(case: CaseResult) -> str:
    best = case.pin_best()
    return f"{case.name} (÷ {best[0]}, {microseconds(best[1])} µs)" if best else case.name


def _ratios(cases: list[CaseResult], names: dict[str, str]) -> Lines:
    lines = [
        "",
        "## Ratio to Pinocchio (time ÷ the faster bare Pinocchio C++ call, same run)",
        "",
        row("ratio", [_divisor(c) for c in cases]),
        _rule(cases),
    ]
    for k in _methods(cases, names):
        lines.append(row(f"ratio {names[k]}", [_ratio_cell(c, k) for c in cases]))
    return lines


def _not_timed(cases: list[CaseResult], names: dict[str, str]) -> Lines:
    reasons = [f"- {c.name}, {names[k]}: {why}" for c in cases for k, why in c.skipped.items()]
    return ["", "Not timed:", "", *reasons] if reasons else []


def _build(facts: dict) -> str:
    if facts["compiled_in_this_run"]:
        return f"{facts['compile_seconds']:.1f} s"
    return "cached (built in an earlier run)"


def _codegen(cases: list[CaseResult], names: dict[str, str]) -> Lines:
    """The build of each compiled case (nothing where no case was compiled)."""
    if not any(c.codegen for c in cases):
        return []
    lines = [
        "",
        "## Generated C (codegen)",
        "",
        "| case | function | CasADi instructions | C source | library | work arrays | "
        "compile time | flags | called as |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for c in (c for c in cases if c.codegen):
        lines.append(_build_row(c.name, "G", c.codegen))
        if "build" in c.derivatives:
            lines.append(_build_row(c.name, "dG/dq", c.derivatives["build"]))
        if "vjp_build" in c.derivatives:
            lines.append(_build_row(c.name, "gradient of ⟨W, G⟩", c.derivatives["vjp_build"]))
    return lines


def _build_row(case: str, function: str, g: dict) -> str:
    return (
        f"| {case} | {function} | {g['n_instructions']} | {byte_size(g['source_bytes'])} | "
        f"{byte_size(g.get('library_bytes'))} | {byte_size(g.get('work_bytes'))} | "
        f"{_build(g)} | `{' '.join(g['flags'])}` | {g.get('binding', '—')} |"
    )


def _agreement(cases: list[CaseResult], names: dict[str, str]) -> Lines:
    worst = max((e for c in cases for e in c.errors.values()), default=0.0)
    return ["", prose("timings", "agreement", worst=f"{worst:.1e}")]


def _cases(cases: list[CaseResult], batch_size: int) -> Lines:
    """Times, ratios, refusals, the generated C and the agreement of the robot cases."""
    if not cases:
        return []
    names = labels(batch_size)
    sections = (_times, _ratios, _not_timed, _codegen, _agreement, derivatives)
    return [line for section in sections for line in section(cases, names)]


def _unavailable(run_result: dict) -> Lines:
    return [f"\n{spec}: not available ({why})" for spec, why in run_result["unavailable"].items()]


def _us_or_dash(us: float | None) -> str:
    return "—" if us is None else microseconds(us * 1e-6)


def _family(family: str, points: list[ScalingPoint]) -> Lines:
    """One Fig. 4 chain: median µs per size and method, and the log-log slope of each method."""
    methods = [k for k in SCALING_METHODS if any(k in p.medians_us for p in points)]
    lines = [
        "",
        f"### {family}",
        "",
        "| n | m | " + " | ".join(LABELS[k] for k in methods) + " |",
        "|---:|---:|" + "---:|" * len(methods),
    ]
    for p in points:
        cells = [_us_or_dash(p.medians_us.get(k)) for k in methods]
        lines.append(f"| {p.n} | {p.m} | " + " | ".join(cells) + " |")
    slopes = [log_log_slope(points, k) for k in methods]
    cells = ["—" if s is None else f"{s:.2f}" for s in slopes]
    lines.append("| slope | | " + " | ".join(cells) + " |")
    return lines


def _scaling(points: list[ScalingPoint]) -> Lines:
    if not points:
        return []
    lines = ["", "## Time against problem size: the Fig. 4 chains (µs, median)", ""]
    lines.append(prose("timings", "scaling"))
    for family in dict.fromkeys(p.family for p in points):
        lines += _family(family, [p for p in points if p.family == family])
    return lines


def markdown(run_result: dict) -> str:
    """``timings.md``."""
    lines = [
        *_header(run_result),
        *_machine(run_result),
        *_targets(run_result),
        *_targets_per_case(run_result["cases"]),
        "",
        prose("timings", "baseline"),
        "",
        *_cases(run_result["cases"], run_result["batch_size"]),
        *_unavailable(run_result),
        *mujoco(
            run_result.get("mujoco", []),
            run_result.get("mujoco_unavailable", {}),
            run_result.get("mujoco_skipped"),
        ),
        *frameworks(run_result.get("frameworks")),
        *_scaling(run_result["scaling"]),
        *large_sweep(run_result.get("large", [])),
        *crossover_sweep(
            run_result.get("crossover", []),
            run_result.get("crossover_batch", 0),
            run_result.get("crossover_blas_threads", "—"),
        ),
        "",
    ]
    return "\n".join(lines)


def jsonable(run_result: dict) -> dict:
    """``timings.json``: the run with its records as plain data and the target verdicts."""
    out = dict(run_result)
    out["cases"] = [c.to_json() for c in run_result["cases"]]
    out["records"] = [r for c in run_result["cases"] for r in c.records()]
    out["scaling"] = [p.__dict__ for p in run_result["scaling"]]
    out["large"] = [p.__dict__ for p in run_result.get("large", [])]
    out["mujoco"] = [r.to_json() for r in run_result.get("mujoco", [])]
    out["crossover"] = [p.__dict__ for p in run_result.get("crossover", [])]
    out["targets"] = target_json(timing_targets(run_result))
    out["frameworks"] = frameworks_json(run_result.get("frameworks"))
    return out


def write(run_result: dict, out: Path) -> list[Path]:
    """Write ``timings.md``, ``timings.json``, ``timings.png`` and ``timings.pdf`` to ``out``
    (the first two alone for the section "JAX and PyTorch" alone), and ``crossover.png`` and
    ``crossover.pdf`` where the crossover sweep ran
    (ModuleNotFoundError naming the extra, before anything is written, without matplotlib)."""
    require("benchmarks.write", "matplotlib")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "timings.md", out / "timings.json"
    md.write_text(markdown(run_result), encoding="utf-8")
    write_json(js, jsonable(run_result))
    if run_result.get("only_frameworks"):  # the plot has nothing of that section
        return [md, js]
    paths = [md, js, *plot(run_result, out / "timings")]
    if run_result.get("crossover"):
        paths += plot_crossover(run_result["crossover"], out / "crossover")
    return paths

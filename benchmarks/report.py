"""The one writer of ``timings.md`` and ``timings.json`` (and :func:`write` for the figures).

:func:`markdown` stacks the sections in the order of the report: header, machine, targets (and
their ratios on every case), times, ratios, what was not timed, the generated C, agreement, the
derivatives, unavailable cases, MuJoCo's route, "JAX and PyTorch", the Fig. 4 sweep, the large
sweep and the crossover.  Each section is a function of the run's result returning lines; its
tables come from :func:`pvosimr.study.record.table`, its paragraphs from ``templates/timings.md``
(:func:`.text.prose`).  :func:`jsonable` is the same run as plain data.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from pvosimr.codegen.chunks import CHUNK, CHUNKED_FROM
from pvosimr.extras import require
from pvosimr.study.record import table

from . import mujoco as route
from .crossover import (
    AGREEMENT_TOLERANCE,
    CODEGEN_LINKS,
    CROSSOVER_LABELS,
    CROSSOVER_METHODS,
    DENSE,
    FAMILIES,
    RECURSIVE,
    crossover,
)
from .derivatives import DERIVATIVE_LABELS, REFERENCE, STEP, TOLERANCE
from .figure import plot, plot_crossover
from .frameworks import jsonable as frameworks_json
from .frameworks import lines as frameworks
from .loop import N_CONFIGS
from .methods import LABELS, Case, labels
from .record import target_json, target_lines, write_json
from .scaling import (
    DATA_LINKS,
    LARGE_FLAG_STEPS,
    LARGE_METHODS,
    SCALING_BATCH,
    SCALING_METHODS,
    Point,
    log_log_slope,
)
from .targets import case_table, timing_targets
from .text import byte_size, microseconds, prose, ratio_cell, slope_cell, timing_cell

Lines = list[str]


def _cell(case: Case, method: str) -> str:
    """``method``'s timing on ``case``, or why it was not timed."""
    if method in case.timings:
        return timing_cell(case.timings[method])
    return case.skipped.get(method, "—")


def _median(timed, method: str) -> float | None:
    return timed.timings[method].median if method in timed.timings else None


def _ratio_rows(timed: Sequence, names: dict, reference: str, under: str) -> list[list[str]]:
    """``ratio <method> ÷ <under>`` per method of ``names`` but ``reference``."""
    rows = []
    for k in (k for k in names if k != reference):
        cells = [ratio_cell(_median(t, k), _median(t, reference)) for t in timed]
        rows.append([f"ratio {names[k]} ÷ {under}", *cells])
    return rows


def _code(flags: Sequence[str]) -> str:
    return f"`{' '.join(flags)}`"


def _heads(cases: Sequence) -> list[str]:
    return [f"{c.name} (nv {c.nv}, m {c.m:g})" for c in cases]


def _us(us: float | None) -> str:
    return "—" if us is None else microseconds(us * 1e-6)


def _sized(points: list[Point], methods: Sequence[str], names: dict, extra=()) -> Lines:
    """Median µs per size and method of a sweep: ``| n | m | ... |``, the methods that timed
    anything; ``extra``: more columns, ``(title, cell of a point)``."""
    methods = [k for k in methods if any(k in p.medians_us for p in points)]
    header = ["n", "m", *(names[k] for k in methods), *(title for title, _ in extra)]

    def cells(p: Point) -> list[str]:
        us = p.medians_us
        times = [_us(us[k]) if k in us else p.skipped.get(k, "—") for k in methods]
        return [str(p.n), str(p.m), *times, *(cell(p) for _, cell in extra)]

    return table(header, map(cells, points), "r" * (2 + len(methods)) + "rl"[: len(extra)])


# ------------------------------------------------------------------------- head and targets


def _header(run: dict) -> Lines:
    written = f"Written by `{run['command'].strip()}` (benchmarks) in {run['seconds']:.0f} s."
    if run.get("only_frameworks"):  # the section says what it times
        return ["# Timings", "", f'{written} The section "JAX and PyTorch" alone.']
    text = prose("timings", "header", written=written, repeats=run["repeats"], configs=N_CONFIGS)
    return ["# Timings", "", text]


def _machine(run: dict) -> Lines:
    return ["", "## Machine", "", *(f"- {k}: {v}" for k, v in run["machine"].items())]


def _targets(run: dict) -> Lines:
    if run.get("only_frameworks"):
        return []  # the section "JAX and PyTorch" has its own targets
    lines = ["", "## Targets", "", *target_lines(timing_targets(run))]
    if run["cases"]:
        header = ["target", *(c.name for c in run["cases"])]
        note = "Ratios of the targets on every case (÷ the faster bare Pinocchio C++ call):"
        rows = [[name, *cells] for name, cells in case_table(run["cases"])]
        lines += ["", note, "", *table(header, rows)]
    return lines


def _baseline(run: dict) -> Lines:
    return ["", prose("timings", "baseline"), ""]


# ------------------------------------------------------------------------------- the cases


def _methods(cases: list[Case], names: dict[str, str]) -> list[str]:
    """The methods of G timed or skipped in any case, in the order of ``names``."""
    return [
        k
        for k in names
        if not k.startswith("dG:") and any(k in c.timings or k in c.skipped for c in cases)
    ]


def _ratio(case: Case, method: str) -> str:
    """``time / the faster bare Pinocchio call`` of the same case, or why there is none."""
    best = case.pin_best()
    if method in case.timings and best:
        return f"{case.timings[method].median / best[1]:.2f}×"
    return "refused" if case.refused(method) else "—"


def _divisor(case: Case) -> str:
    best = case.pin_best()
    return f"{case.name} (÷ {best[0]}, {microseconds(best[1])} µs)" if best else case.name


def _build_row(case: str, function: str, g: dict) -> list[str]:
    cached = "cached (built in an earlier run)"
    built = f"{g['compile_seconds']:.1f} s" if g["compiled_in_this_run"] else cached
    sizes = [byte_size(g[k]) for k in ("source_bytes", "library_bytes", "work_bytes")]
    flags, called = _code(g["flags"]), g.get("binding", "—")
    return [case, function, str(g["n_instructions"]), *sizes, built, flags, called]


def _codegen(cases: list[Case]) -> Lines:
    """The build of each compiled case (nothing where no case was compiled)."""
    rows = []
    for c in (c for c in cases if c.codegen):
        rows.append(_build_row(c.name, "G", c.codegen))
        if "build" in c.derivatives:
            rows.append(_build_row(c.name, "dG/dq", c.derivatives["build"]))
        if "vjp_build" in c.derivatives:
            rows.append(_build_row(c.name, "gradient of ⟨W, G⟩", c.derivatives["vjp_build"]))
    header = ["case", "function", "CasADi instructions", "C source", "library", "work arrays"]
    header += ["compile time", "flags", "called as"]
    return ["", "## Generated C (codegen)", "", *table(header, rows, "llrrrrrll")] if rows else []


def _derivatives(cases: list[Case], names: dict[str, str]) -> Lines:
    """Time per configuration of every derivative method, its ratio to the central
    differences of Pinocchio, and the check (nothing where no case timed derivatives)."""
    cases = [c for c in cases if c.derivatives]
    if not cases:
        return []
    rows = [[names[k], *(_cell(c, k) for c in cases)] for k in DERIVATIVE_LABELS]
    derivatives = {k: names[k] for k in DERIVATIVE_LABELS}
    rows += _ratio_rows(cases, derivatives, REFERENCE, "the central differences of Pinocchio")

    def worst(c: Case) -> str:
        errors = [e for k, e in c.derivatives.get("errors", {}).items() if k in c.timings]
        return f"{max(errors):.1e}" if errors else "—"

    rows.append(["largest error of the timed methods", *(worst(c) for c in cases)])
    text = prose("timings", "derivatives", step=f"{STEP:g}", tolerance=f"{TOLERANCE:g}")
    heading = "## Derivatives dG/dq (µs per configuration): median [p25–p75]"
    return ["", heading, "", text, "", *table(["method", *_heads(cases)], rows)]


def _cases(run: dict) -> Lines:
    """Times, ratios, refusals, the generated C, the agreement and the derivatives."""
    cases: list[Case] = run["cases"]
    if not cases:
        return []
    names = labels(run["batch_size"])
    methods = _methods(cases, names)
    times = [[names[k], *(_cell(c, k) for c in cases)] for k in methods]
    ratios = [[f"ratio {names[k]}", *(_ratio(c, k) for c in cases)] for k in methods]
    reasons = [f"- {c.name}, {names[k]}: {why}" for c in cases for k, why in c.skipped.items()]
    worst = max((e for c in cases for e in c.errors.values()), default=0.0)
    return [
        "## Time per call (µs): median [p25–p75]",
        "",
        *table(["method", *_heads(cases)], times),
        "",
        "## Ratio to Pinocchio (time ÷ the faster bare Pinocchio C++ call, same run)",
        "",
        *table(["ratio", *(_divisor(c) for c in cases)], ratios),
        *(["", "Not timed:", "", *reasons] if reasons else []),
        *_codegen(cases),
        "",
        prose("timings", "agreement", worst=f"{worst:.1e}"),
        *_derivatives(cases, names),
    ]


# ----------------------------------------------------------------------------------- MuJoCo


def _rows_cell(rows: list[int]) -> str:
    return f"{statistics.median(rows):g} [{min(rows)}–{max(rows)}]"


def _mujoco(run: dict) -> Lines:
    """Per MJCF robot: nv, the rows, µs per call of MuJoCo's route and pvosimr's, their ratios
    to MuJoCo's call and the check (one line when MuJoCo is not installed, nothing when the run
    has no MJCF robot)."""
    results, unavailable = run.get("mujoco", []), run.get("mujoco_unavailable", {})
    heading = "## MuJoCo's route against pvosimr's on MJCF robots (µs per call): median [p25–p75]"
    if run.get("mujoco_skipped"):
        return ["", heading, "", f"Not run: {run['mujoco_skipped']}"]
    if not results and not unavailable:
        return []
    lines = ["", heading, "", prose("timings", "mujoco", pieces=", ".join(route.PIECES)), ""]
    if results:
        counts = ", ".join(f"{r.name} {len(r.rows)}" for r in results)
        note = prose(
            "timings",
            "mujoco-configurations",
            draws=route.MAX_DRAWS,
            counts=counts,
            tolerance=f"{route.TOLERANCE:g}",
            reference=route.MUJOCO_LABELS[route.REFERENCE],
        )
        rows = [["rows of G: median [min–max]", *(_rows_cell(r.rows) for r in results)]]
        rows.append(["rows, options as in the file", *(_rows_cell(r.rows_all) for r in results)])
        for k, label in route.MUJOCO_LABELS.items():
            rows.append([label, *(_cell(r, k) if k in r.timings else "—" for r in results)])
        rows += _ratio_rows(results, route.MUJOCO_LABELS, route.REFERENCE, "mj_fwdPosition")
        worst = [f"{max(r.errors.values()):.1e}" for r in results]
        rows.append(["largest error against MuJoCo's matrix", *worst])
        lines += [note, "", *table(["method", *_heads(results)], rows)]
        left = [
            f"- {r.name}: rows MuJoCo forms and pvosimr does not map: "
            + ", ".join(f"{k} {v}" for k, v in r.left_out.items())
            for r in results
            if r.left_out
        ]
        lines += ["", *left] if left else []
    return lines + [f"\n{name}: not available ({why})" for name, why in unavailable.items()]


# ----------------------------------------------------------------------------------- sweeps


def _families(points: list[Point], section: Callable[[str, list[Point]], list]) -> list:
    """``section(family, its points)`` of each family in the order of ``points``, joined."""
    families = dict.fromkeys(p.family for p in points)
    return [line for f in families for line in section(f, [p for p in points if p.family == f])]


def _slopes(points: list[Point], methods: Sequence[str]) -> str:
    """The table row of each method's log-log slope."""
    timed = [k for k in methods if any(k in p.medians_us for p in points)]
    return "| slope | | " + " | ".join(slope_cell(log_log_slope(points, k)) for k in timed) + " |"


def _scaling(run: dict) -> Lines:
    """One table per Fig. 4 chain: median µs per size and method, and each method's slope."""

    def family(name: str, points: list[Point]) -> Lines:
        lines = _sized(points, SCALING_METHODS, LABELS)
        return ["", f"### {name}", "", *lines, _slopes(points, SCALING_METHODS)]

    if not run["scaling"]:
        return []
    heading = "## Time against problem size: the Fig. 4 chains (µs, median)"
    return ["", heading, "", prose("timings", "scaling"), *_families(run["scaling"], family)]


def _flags_note() -> str:
    steps = []
    for up_to, flags in LARGE_FLAG_STEPS:
        text = "`--codegen-flags`" if flags is None else _code(flags)
        steps.append(f"{text} up to n = {up_to}" if up_to else f"{text} beyond")
    return ", ".join(steps)


def _memory_row(p: Point) -> list[str]:
    batch = p.memory.get("batch:pv-osimr", {})
    peak = batch.get("peak_bytes")
    single = p.memory.get("numpy:pv-osimr", {}).get("peak_bytes")
    cells = [str(p.n), str(p.m), byte_size(peak), byte_size(peak and peak / batch["B"])]
    g = p.memory.get("codegen:pv-osimr")
    if g is None:
        return [*cells, byte_size(single), *["—"] * 5]
    shared = g.get("shared_functions", 0)
    seconds = g["compile_seconds"]
    return [
        *cells,
        byte_size(single),
        byte_size(g.get("library_bytes")),
        byte_size(g.get("work_bytes")),
        f"{g['n_instructions']}" + (f" + {shared} shared functions" if shared else ""),
        "cached" if seconds is None else f"{seconds:.1f} s",
        _code(g["flags"]),
    ]


def _large(run: dict) -> Lines:
    """The large sweep: time per configuration, and the memory and build of each size."""
    points = run.get("large", [])
    if not points:
        return []
    memory = ["n", "m", "numpy batch peak", "per configuration", "numpy single peak", "library"]
    memory += ["work arrays", "CasADi instructions", "compile time", "flags"]
    values = {"batch": SCALING_BATCH, "flags": _flags_note(), "chunk": CHUNK}
    return [
        "",
        "## Batched and generated paths against size: the Fig. 4a chain up to n = "
        f"{max(p.n for p in points)}",
        "",
        prose("timings", "large-sweep", chunked_from=f"{CHUNKED_FROM:,}", **values),
        "",
        *_sized(points, LARGE_METHODS, labels(SCALING_BATCH)),
        _slopes(points, LARGE_METHODS),
        "",
        prose("timings", "large-memory", batch=SCALING_BATCH, data_links=DATA_LINKS),
        "",
        *table(memory, [_memory_row(p) for p in points], "r" * 9 + "l"),
    ]


def _build_cell(p: Point) -> str:
    """``-O1, 18.1 s``: flags and compile time of a generated G (``cached``: built earlier)."""
    if not p.build:
        return "—"
    seconds = p.build.get("compile_seconds")
    return f"{_code(p.build['flags'])}, " + ("cached" if seconds is None else f"{seconds:.1f} s")


def _crossover(run: dict) -> Lines:
    """The crossover sweep: times per mechanism, then where each recursive route wins."""
    points = run.get("crossover", [])
    if not points:
        return []
    extra = (
        ("largest error", lambda p: f"{max(p.errors.values(), default=0.0):.1e}"),
        ("codegen build", _build_cell),
    )

    def family(name: str, mine: list[Point]) -> Lines:
        title = f"### {name}: {FAMILIES.get(name, name)}"
        return ["", title, "", *_sized(mine, CROSSOVER_METHODS, CROSSOVER_LABELS, extra)]

    def wins(name: str, mine: list[Point]) -> list[list[str]]:
        return [
            [name, CROSSOVER_LABELS[r], *(crossover(mine, r, d).text() for d in DENSE)]
            for r in RECURSIVE
            if any(r in p.medians_us for p in mine)
        ]

    rows = _families(points, wins)
    header = ["mechanism", "recursive route", *(f"vs {CROSSOVER_LABELS[d]}" for d in DENSE)]
    note = prose(
        "timings",
        "crossover",
        batch=run.get("crossover_batch", 0),
        codegen_links=CODEGEN_LINKS,
        flags=_flags_note(),
        threads=run.get("crossover_blas_threads", "—"),
        tolerance=f"{AGREEMENT_TOLERANCE:g}",
    )
    return [
        "",
        "## Crossover: batched recursive code against the dense route J M⁻¹ Jᵀ",
        "",
        note,
        *_families(points, family),
        "",
        prose("timings", "crossover-wins"),
        "",
        *table(header, rows, "l" * len(header)),
    ]


# ------------------------------------------------------------------------------ the report


SECTIONS = (_header, _machine, _targets, _baseline, _cases)
"""The report's first sections; the rest follow in :func:`markdown`."""


def markdown(run: dict) -> str:
    """``timings.md``."""
    lines = [line for section in SECTIONS for line in section(run)]
    lines += [f"\n{spec}: not available ({why})" for spec, why in run["unavailable"].items()]
    lines += [*_mujoco(run), *frameworks(run.get("frameworks"))]
    lines += [*_scaling(run), *_large(run), *_crossover(run), ""]
    return "\n".join(lines)


def jsonable(run: dict) -> dict:
    """``timings.json``: the run as plain data, every measured time also as a
    :class:`~benchmarks.record.Record`, and the target verdicts."""
    out = dict(run)
    out["cases"] = [c.to_json() for c in run["cases"]]
    measured = [*run["cases"], *run.get("mujoco", [])]
    measured += [p for sweep in ("scaling", "large", "crossover") for p in run.get(sweep, [])]
    out["records"] = [r.to_json() for m in measured for r in m.records()]
    for sweep in ("scaling", "large", "crossover"):
        out[sweep] = [p.__dict__ for p in run.get(sweep, [])]
    out["mujoco"] = [r.to_json() for r in run.get("mujoco", [])]
    out["targets"] = target_json(timing_targets(run))
    out["frameworks"] = frameworks_json(run.get("frameworks"))
    return out


def write(run: dict, out: Path) -> list[Path]:
    """``timings.md``, ``timings.json``, ``timings.png`` and ``timings.pdf`` in ``out`` (the
    first two alone for the section "JAX and PyTorch" alone), and ``crossover.png`` and
    ``crossover.pdf`` where the crossover sweep ran (ModuleNotFoundError naming the extra,
    before anything is written, without matplotlib)."""
    require("benchmarks.write", "matplotlib")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "timings.md", out / "timings.json"
    md.write_text(markdown(run), encoding="utf-8")
    write_json(js, jsonable(run))
    if run.get("only_frameworks"):  # the plot has nothing of that section
        return [md, js]
    paths = [md, js, *plot(run, out / "timings")]
    if run.get("crossover"):
        paths += plot_crossover(run["crossover"], out / "crossover")
    return paths

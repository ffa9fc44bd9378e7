"""The one writer of ``timings.md`` and ``timings.json`` (and, through :mod:`.figure`, its plots).

A table is data: row names with a cell function, over the measured cases (:func:`.text.grid`) or the
sizes of a sweep (:func:`sized`); :func:`pvosimr.study.record.table` draws it.  :data:`SECTIONS`
lists the report's sections in order, each a function of the run returning lines; paragraphs
come from ``templates/timings.md`` (:func:`.text.prose`).  :func:`jsonable` is the same run as
plain data, and :func:`rewrite` writes the report again from it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from pvosimr.codegen.chunks import CHUNK, CHUNKED_FROM
from pvosimr.extras import require
from pvosimr.study.record import table

from . import crossover as cx
from . import mujoco as mj
from . import scaling as sw
from .derivatives import DERIVATIVE_LABELS, REFERENCE, STEP, TOLERANCE
from .figure import load, plot, plot_crossover
from .frameworks import jsonable as frameworks_json
from .frameworks import lines as frameworks
from .loop import N_CONFIGS, Timed
from .methods import LABELS, Case, labels
from .record import target_json, target_lines, write_json
from .targets import case_table, ratio, timing_targets
from .text import Rows, byte_size, grid, microseconds, prose, timing_cell

Lines = list[str]


def _cell(timed: Timed, method: str) -> str:
    """``method``'s timing, ``median [p25–p75]`` in µs, or why it was not timed."""
    t = timed.timings.get(method)
    if t is None:
        return timed.skipped.get(method, "—")
    return timing_cell(t)


def _times(names: dict[str, str], methods: Sequence[str]) -> Rows:
    return [(names[k], lambda c, k=k: _cell(c, k)) for k in methods]


def _ratios(names: dict[str, str], reference: str, under: str) -> Rows:
    """``ratio <method> ÷ <under>`` per method of ``names`` but ``reference`` (``—`` where
    either is missing)."""

    def cell(method: str) -> Callable[[Timed], str]:
        def text(t: Timed) -> str:
            a, b = t.timings.get(method), t.timings.get(reference)
            return "—" if a is None or b is None else f"{a.median / b.median:.2f}×"

        return text

    return [(f"ratio {v} ÷ {under}", cell(k)) for k, v in names.items() if k != reference]


def _parts(*parts: str | Lines) -> Lines:
    """Each part (a paragraph, or a table's lines) after a blank line; empty parts left out."""
    return [line for p in parts if p for line in ("", *([p] if isinstance(p, str) else p))]


def _code(flags: Sequence[str]) -> str:
    return f"`{' '.join(flags)}`"


def _heads(cases: Sequence[Timed]) -> list[str]:
    return [f"{c.name} (nv {c.nv}, m {c.m:g})" for c in cases]


def _families(points: list[sw.Point], section: Callable[[str, list[sw.Point]], list]) -> list:
    """``section(family, its points)`` of each family in the order of ``points``, joined."""
    return [line for f, mine in sw.by_family(points).items() for line in section(f, mine)]


def sized(points: list[sw.Point], methods: Sequence[str], names: dict, extra: Rows = ()) -> Lines:
    """Median µs per size (rows) and method (the columns that timed anything), then each
    method's log-log slope; ``extra``: more columns, ``(title, cell of a point)``, and no
    slopes."""
    methods = [k for k in methods if any(k in p.medians_us for p in points)]
    header = ["n", "m", *(names[k] for k in methods), *(title for title, _ in extra)]

    def cells(p: sw.Point) -> list[str]:
        us = p.medians_us
        times = [microseconds(us[k] * 1e-6) if k in us else p.skipped.get(k, "—") for k in methods]
        return [str(p.n), str(p.m), *times, *(cell(p) for _, cell in extra)]

    lines = table(header, map(cells, points), "r" * (2 + len(methods)) + "rl"[: len(extra)])
    if extra:
        return lines
    slopes = [sw.log_log_slope(points, k) for k in methods]
    slopes = " | ".join("—" if s is None else f"{s:.2f}" for s in slopes)
    return [*lines, f"| slope | | {slopes} |"]


def _flags_note() -> str:
    return f"`--codegen-flags` up to n = {sw.RUN_FLAGS_UP_TO}, {_code(sw.LONG_CODE_FLAGS)} beyond"


def _cached(seconds: float | None) -> str:
    return "cached" if seconds is None else f"{seconds:.1f} s"


# ------------------------------------------------------------------------------- the sections


def _top(run: dict) -> Lines:
    """The title, the machine, the targets (and their ratios on every case) and the baseline."""
    written = f"Written by `{run['command'].strip()}` (benchmarks) in {run['seconds']:.0f} s."
    text = prose("timings", "header", written=written, repeats=run["repeats"], configs=N_CONFIGS)
    machine = [f"- {k}: {v}" for k, v in run["machine"].items()]
    if run.get("only_frameworks"):  # the section says what it times and has its own targets
        text = f'{written} The section "JAX and PyTorch" alone.'
    lines = ["# Timings", "", text, *_parts("## Machine", machine)]
    if not run.get("only_frameworks"):
        lines += _parts("## Targets", target_lines(timing_targets(run)))
    if run["cases"] and not run.get("only_frameworks"):
        note = "Ratios of the targets on every case (÷ the faster bare Pinocchio C++ call):"
        header = ["target", *(c.name for c in run["cases"])]
        lines += _parts(note, table(header, [[n, *c] for n, c in case_table(run["cases"])]))
    return [*lines, "", prose("timings", "baseline"), ""]


def _pin_ratio(case: Case, method: str) -> str:
    """``time / the faster bare Pinocchio call`` of the same case, or why there is none."""
    r = ratio(case, method)
    return f"{r:.2f}×" if r is not None else "refused" if case.refused(method) else "—"


def _divisor(case: Case) -> str:
    best = case.pin_best()
    return f"{case.name} (÷ {best[0]}, {microseconds(best[1])} µs)" if best else case.name


def _build_row(case: str, function: str, g: dict) -> list[str]:
    built = "cached (built in an earlier run)"
    if g["compiled_in_this_run"]:
        built = f"{g['compile_seconds']:.1f} s"
    sizes = [byte_size(g[k]) for k in ("source_bytes", "library_bytes", "work_bytes")]
    binding = g.get("binding", "—")
    return [case, function, str(g["n_instructions"]), *sizes, built, _code(g["flags"]), binding]


BUILDS = (("G", None), ("dG/dq", "build"), ("gradient of ⟨W, G⟩", "vjp_build"))
"""The compiled functions of a case: their name and where ``case.derivatives`` keeps them."""
BUILD_HEADER = "case|function|CasADi instructions|C source|library|work arrays|compile time|"
BUILD_HEADER += "flags|called as"


def _codegen(cases: list[Case]) -> Lines:
    """The build of each compiled case (nothing where no case was compiled)."""
    rows = [
        _build_row(c.name, function, c.derivatives[key] if key else c.codegen)
        for c in cases
        if c.codegen
        for function, key in BUILDS
        if key is None or key in c.derivatives
    ]
    built = table(BUILD_HEADER.split("|"), rows, "llrrrrrll")
    return ["## Generated C (codegen)", "", *built] if rows else []


def _worst_dG(c: Case) -> str:
    errors = [e for k, e in c.derivatives.get("errors", {}).items() if k in c.timings]
    return f"{max(errors):.1e}" if errors else "—"


def _derivatives(cases: list[Case], names: dict[str, str]) -> Lines:
    """Time per configuration of every derivative method, its ratio to the central
    differences of Pinocchio, and the check (nothing where no case timed derivatives)."""
    cases = [c for c in cases if c.derivatives]
    if not cases:
        return []
    under = "the central differences of Pinocchio"
    ratios = _ratios({k: names[k] for k in DERIVATIVE_LABELS}, REFERENCE, under)
    worst = ("largest error of the timed methods", _worst_dG)
    rows = [*_times(names, DERIVATIVE_LABELS), *ratios, worst]
    text = prose("timings", "derivatives", step=f"{STEP:g}", tolerance=f"{TOLERANCE:g}")
    return [text, "", *grid("method", _heads(cases), rows, cases)]


def _cases(run: dict) -> Lines:
    """Times, ratios, refusals, the generated C, the agreement and the derivatives."""
    cases: list[Case] = run["cases"]
    unavailable = [f"\n{spec}: not available ({why})" for spec, why in run["unavailable"].items()]
    if not cases:
        return unavailable
    names = labels(run["batch_size"])
    methods = [
        k
        for k in names
        if not k.startswith("dG:") and any(k in c.timings or k in c.skipped for c in cases)
    ]
    ratios = [(f"ratio {names[k]}", lambda c, k=k: _pin_ratio(c, k)) for k in methods]
    reasons = [f"- {c.name}, {names[k]}: {why}" for c in cases for k, why in c.skipped.items()]
    worst = max((e for c in cases for e in c.errors.values()), default=0.0)
    lines = _parts(
        "## Time per call (µs): median [p25–p75]",
        grid("method", _heads(cases), _times(names, methods), cases),
        "## Ratio to Pinocchio (time ÷ the faster bare Pinocchio C++ call, same run)",
        grid("ratio", [_divisor(c) for c in cases], ratios, cases),
        *(("Not timed:", reasons) if reasons else ()),
        _codegen(cases),
        prose("timings", "agreement", worst=f"{worst:.1e}"),
        _derivatives(cases, names),
    )
    return lines[1:] + unavailable


def _rows_cell(rows: list[int]) -> str:
    return f"{statistics.median(rows):g} [{min(rows)}–{max(rows)}]"


MUJOCO_ROWS: Rows = (
    ("rows of G: median [min–max]", lambda r: _rows_cell(r.rows)),
    ("rows, options as in the file", lambda r: _rows_cell(r.rows_all)),
    *_times(mj.MUJOCO_LABELS, mj.MUJOCO_LABELS),  # a method that disagrees stops the run
    *_ratios(mj.MUJOCO_LABELS, mj.REFERENCE, "mj_fwdPosition"),
    ("largest error against MuJoCo's matrix", lambda r: f"{max(r.errors.values()):.1e}"),
)
"""The table of MuJoCo's route, one column per MJCF robot."""


def _mujoco(run: dict) -> Lines:
    """Per MJCF robot: rows, times, ratios to MuJoCo's call and the check (one line when MuJoCo
    is not installed, nothing when the run has no MJCF robot)."""
    results, unavailable = run.get("mujoco", []), run.get("mujoco_unavailable", {})
    heading = "## MuJoCo's route against pvosimr's on MJCF robots (µs per call): median [p25–p75]"
    if run.get("mujoco_skipped"):
        return ["", heading, "", f"Not run: {run['mujoco_skipped']}"]
    if not results and not unavailable:
        return []
    lines = ["", heading, "", prose("timings", "mujoco", pieces=", ".join(mj.PIECES)), ""]
    if results:
        counts = ", ".join(f"{r.name} {len(r.rows)}" for r in results)
        reference, tolerance = mj.MUJOCO_LABELS[mj.REFERENCE], f"{mj.TOLERANCE:g}"
        values = {"draws": mj.MAX_DRAWS, "counts": counts, "tolerance": tolerance}
        note = prose("timings", "mujoco-configurations", reference=reference, **values)
        lines += [note, "", *grid("method", _heads(results), MUJOCO_ROWS, results)]
        left = [f"- {r.name}: rows MuJoCo forms and pvosimr does not map: "
                + ", ".join(f"{k} {v}" for k, v in r.left_out.items())
                for r in results if r.left_out]  # fmt: skip
        lines += _parts(left)
    return lines + [f"\n{name}: not available ({why})" for name, why in unavailable.items()]


def _scaling(run: dict) -> Lines:
    """One table per Fig. 4 chain: median µs per size and method, and each method's slope."""

    def family(name: str, points: list[sw.Point]) -> Lines:
        return _parts(f"### {name}", sized(points, sw.SCALING_METHODS, LABELS))

    if not run["scaling"]:
        return []
    return ["", prose("timings", "scaling"), *_families(run["scaling"], family)]


def _memory_row(p: sw.Point) -> list[str]:
    batch = p.memory.get("batch:pv-osimr", {})
    peak = batch.get("peak_bytes")
    single = p.memory.get("numpy:pv-osimr", {}).get("peak_bytes")
    cells = [str(p.n), str(p.m), *map(byte_size, (peak, peak and peak / batch["B"], single))]
    g = p.memory.get("codegen:pv-osimr")
    if g is None:
        return [*cells, *["—"] * 5]
    shared = g.get("shared_functions", 0)
    instructions = f"{g['n_instructions']}" + (f" + {shared} shared functions" if shared else "")
    sizes = [byte_size(g.get("library_bytes")), byte_size(g.get("work_bytes"))]
    return [*cells, *sizes, instructions, _cached(g["compile_seconds"]), _code(g["flags"])]


MEMORY_HEADER = "n|m|numpy batch peak|per configuration|numpy single peak|library|work arrays|"
MEMORY_HEADER += "CasADi instructions|compile time|flags"


def _large(run: dict) -> Lines:
    """The large sweep: time per configuration, and the memory and build of each size."""
    points = run.get("large", [])
    if not points:
        return []
    batch, n = sw.SCALING_BATCH, max(p.n for p in points)
    values = {"chunked_from": f"{CHUNKED_FROM:,}", "chunk": CHUNK, "flags": _flags_note()}
    return _parts(
        prose("timings", "large-sweep", n=n, batch=batch, **values),
        sized(points, sw.LARGE_METHODS, labels(batch)),
        prose("timings", "large-memory", batch=batch, data_links=sw.DATA_LINKS),
        table(MEMORY_HEADER.split("|"), [_memory_row(p) for p in points], "r" * 9 + "l"),
    )


def _build_cell(p: sw.Point) -> str:
    """``-O1, 18.1 s``: flags and compile time of a generated G (``cached``: built earlier)."""
    if not p.build:
        return "—"
    return f"{_code(p.build['flags'])}, {_cached(p.build.get('compile_seconds'))}"


CROSSOVER_EXTRA: Rows = (
    ("largest error", lambda p: f"{max(p.errors.values(), default=0.0):.1e}"),
    ("codegen build", _build_cell),
)


def _crossover(run: dict) -> Lines:
    """The crossover sweep: times per mechanism, then where each recursive route wins."""
    points = run.get("crossover", [])
    if not points:
        return []
    names = cx.CROSSOVER_LABELS

    def family(name: str, mine: list[sw.Point]) -> Lines:
        title = f"### {name}: {cx.FAMILIES.get(name, name)}"
        return _parts(title, sized(mine, cx.CROSSOVER_METHODS, names, CROSSOVER_EXTRA))

    def wins(name: str, mine: list[sw.Point]) -> list[list[str]]:
        return [
            [name, names[r], *(cx.crossover(mine, r, d).text() for d in cx.DENSE)]
            for r in cx.RECURSIVE
            if any(r in p.medians_us for p in mine)
        ]

    header = ["mechanism", "recursive route", *(f"vs {names[d]}" for d in cx.DENSE)]
    note = prose(
        "timings",
        "crossover",
        batch=run.get("crossover_batch", 0),
        codegen_links=cx.CODEGEN_LINKS,
        flags=_flags_note(),
        threads=run.get("crossover_blas_threads", "—"),
        tolerance=f"{cx.AGREEMENT_TOLERANCE:g}",
    )
    wins_table = table(header, _families(points, wins), "l" * len(header))
    wins_note = _parts(prose("timings", "crossover-wins"), wins_table)
    return ["", note, *_families(points, family), *wins_note]


SECTIONS = (_top, _cases, _mujoco, lambda run: frameworks(run.get("frameworks")), _scaling,
            _large, _crossover)  # fmt: skip
"""The report's sections, in order."""


def markdown(run: dict) -> str:
    """``timings.md``."""
    return "\n".join([line for section in SECTIONS for line in section(run)] + [""])


def jsonable(run: dict) -> dict:
    """``timings.json``: the run as plain data, every measured time also as a
    :class:`~benchmarks.record.Record`, and the target verdicts."""
    sweeps = ("scaling", "large", "crossover")
    measured = [*run["cases"], *run.get("mujoco", []), *(p for s in sweeps for p in run.get(s, []))]
    return {
        **run,
        "cases": [c.to_json() for c in run["cases"]],
        "records": [r.to_json() for m in measured for r in m.records()],
        **{s: [p.__dict__ for p in run.get(s, [])] for s in sweeps},
        "mujoco": [r.to_json() for r in run.get("mujoco", [])],
        "targets": target_json(timing_targets(run)),
        "frameworks": frameworks_json(run.get("frameworks")),
    }


def write(run: dict, out: Path, json: bool = True) -> list[Path]:
    """``timings.md``, ``timings.json`` (where ``json``), ``timings.png`` and ``timings.pdf`` in
    ``out`` (no figure for the section "JAX and PyTorch" alone), and ``crossover.png`` and
    ``crossover.pdf`` where the crossover sweep ran (ModuleNotFoundError naming the extra,
    before anything is written, without matplotlib)."""
    require("benchmarks.write", "matplotlib")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "timings.md", out / "timings.json"
    md.write_text(markdown(run), encoding="utf-8")
    if json:
        write_json(js, jsonable(run))
    paths = [md, *([js] if json else [])]
    if run.get("only_frameworks"):  # the plot has nothing of that section
        return paths
    paths += plot(run, out / "timings")
    if run.get("crossover"):
        paths += plot_crossover(run["crossover"], out / "crossover")
    return paths


def rewrite(json_path: Path, out: Path) -> list[Path]:
    """``timings.md`` and the figures again in ``out`` from a written ``timings.json``,
    measuring nothing."""
    return write(load(json_path), out, json=False)

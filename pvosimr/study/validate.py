"""The validation harness: every algorithm and every Pinocchio reference across the robot zoo.

For each robot × constraint preset × random configuration, every pvosimr algorithm and every
Pinocchio reference (:mod:`pvosimr.reference.pinocchio`) is compared with the dense truth
``J M⁻¹ Jᵀ`` built from Pinocchio's ``crba`` and joint Jacobians (:mod:`pvosimr.reference.truth`).
The metric is ``max|ΔG| / max(1, max|G|)``.  Results go to a Markdown report a person reads at
a glance and to its JSON twin; the run fails if any pvosimr algorithm exceeds the tolerance or
fails in any other way: every algorithm takes every joint type of Pinocchio 4.1, so a
``NotImplementedError`` fails the run like any other error.

``pvosimr validate`` runs the whole zoo (report in ``pvosimr-report/`` of the current folder;
``--out validation`` rewrites the repository's committed report), named zoo cases
(``--robots ROBOT[/PRESET] …``) or a model file (``pvosimr validate FILE --point/--weld FRAME``;
an MJCF file alone is validated on MuJoCo's own rows, :mod:`.mujoco_section`); the last two
print their table and write a report only where ``--out`` says.
"""

from __future__ import annotations

import argparse
import json
import linecache
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr import ALGORITHMS, __version__, compute_delassus, reference, zoo
from pvosimr.constraints import constraint_dim
from pvosimr.reference import bridge, truth
from pvosimr.reference.truth import dense_delassus, rel_err
from pvosimr.zoo.mujoco_robots import MJCF_ROBOTS, MjcfRobot, mjcf_robot

from .mujoco_section import MUJOCO, agreement_lines, mujoco_section
from .options import (
    REPORT_DIR,
    add_model_file_options,
    add_out_option,
    add_seed_option,
    at_least_one,
    command_parser,
    make_out,
    model_file_options_used,
    require_extra,
    robot_from_file,
    usage_error,
)
from .pinocchio_defects import (
    damped_inverse_section,
    silently_wrong,
    silently_wrong_section,
)
from .progress import progress_bar

__all__ = [
    "TOLERANCE",
    "Row",
    "build_parser",
    "footnotes",
    "main",
    "not_called",
    "summary",
    "table",
    "validate",
    "validate_cases",
    "write_report",
]

TOLERANCE = truth.TOLERANCE
ZOO_REPORT_DIR = str(REPORT_DIR)
"""Where the zoo-wide run writes its report, relative to the current folder (the repository's
committed report, ``validation/``, is rewritten only with ``--out validation``)."""


@dataclass
class Row:
    """One robot × preset: worst error and median time per call of every method."""

    robot: str
    preset: str
    nv: int
    m: int
    configs: int
    errors: dict[str, float] = field(default_factory=dict)
    times_us: dict[str, float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    # for each method in failures: REFUSED (pvosimr's own check refused the input) or RAISED
    raised_by: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # references not called, and why
    seconds: float = 0.0
    pv_cpp_vs_efpa_cpp: float | None = None  # Pinocchio's two C++ routines against each other
    # MJCF robots: pvosimr's G against MuJoCo's, MuJoCo's rows left out (most at one
    # configuration, by kind) and where Pinocchio's own MJCF parser builds another robot
    pvosimr_vs_mujoco: float | None = None
    left_out: dict[str, int] = field(default_factory=dict)
    parser_notes: list[str] = field(default_factory=list)

    def passes(self) -> bool:
        """Every pvosimr algorithm ran and is within the tolerance (references only reported)."""
        return all(self.errors.get(a, np.inf) <= TOLERANCE for a in ALGORITHMS)


def _methods() -> dict[str, Callable]:
    methods: dict[str, Callable] = {
        a: (lambda model, data, q, cms, a=a: compute_delassus(model, data, q, cms, algorithm=a))
        for a in ALGORITHMS
    }
    methods.update(reference.REFERENCES)
    for name in reference.unavailable():  # reported as such (write_report), not as failures
        del methods[name]
    return methods


def not_called(method: str, constraint_models) -> str:
    """Why the Pinocchio reference ``method`` must not be called on these constraints ("" if
    it may): its C++ PV-OSIMr asserts on LOCAL_WORLD_ALIGNED (undefined behaviour in a release
    build) and ignores ``joint2``."""
    if method != "pin-pv-osimr":
        return ""
    constraint_models, _ = reference.unmapped(constraint_models)  # Pinocchio's G is mapped
    if any(
        cm.reference_frame == pin.ReferenceFrame.LOCAL_WORLD_ALIGNED for cm in constraint_models
    ):
        return "not called: Pinocchio's C++ PV-OSIMr asserts on LOCAL_WORLD_ALIGNED constraints"
    if any(cm.joint2_id != 0 for cm in constraint_models):
        return "not called: Pinocchio's C++ PV-OSIMr ignores joint2 (a loop closure's second body)"
    return ""


REFUSED, RAISED = "pvosimr refused the input", "raised"
"""Why a method has no result: pvosimr's own input check said no (a Pinocchio reference on
input it would get silently wrong, a singular G), or the call raised anywhere else (Pinocchio's
C++ refusing, a bug)."""


def refused_by_pvosimr(exc: BaseException) -> bool:
    """Whether ``exc`` is a ValueError raised by a ``raise`` statement of pvosimr's own code
    (its input checks), not one translated from Pinocchio's C++ (whose Python frame is the
    call, not a ``raise``)."""
    if not isinstance(exc, ValueError):
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    path = Path(tb.tb_frame.f_code.co_filename).resolve()
    line = linecache.getline(str(path), tb.tb_lineno).lstrip()
    return path.is_relative_to(_PACKAGE) and line.startswith("raise")


_PACKAGE = Path(__file__).resolve().parents[1]  # pvosimr/


def not_run(name: str, reason: str) -> str:
    """Why the reference ``name`` cannot run here, with the fix the library's own error gives
    (only the bridge, ``pin-pv-osimr``, can be missing: its error says what to install)."""
    if name != "pin-pv-osimr":
        return f"{name}: {reason}"
    return f"{name}: {bridge.BridgeUnavailableError(reason)}"


def _timed(f: Callable, *args) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - start


def validate_robot(robot, configs: int, rng: np.random.Generator, methods: dict) -> Row:
    """Worst error of every method over ``configs`` random configurations of one preset (of an
    MJCF robot: configurations with MuJoCo rows, MuJoCo's own G among the methods)."""
    start = time.perf_counter()
    model = robot.model
    data = model.createData()
    row = Row(robot.name, robot.preset, model.nv, 0, 0)
    times: dict[str, list[float]] = {name: [] for name in [*methods, MUJOCO]}
    for q, cms, engine in _draws(robot, configs, rng):
        row.configs += 1
        row.m = max(row.m, sum(constraint_dim(c) for c in cms))
        truth = _truth(robot, q, cms)
        results = {}
        for name, method in methods.items():
            if not_called(name, cms):
                row.skipped[name] = not_called(name, cms)
                continue
            try:
                method(model, data, q, cms)  # warm caches (topology, initPvDelassus)
                G, seconds = _timed(method, model, data, q, cms)
            except Exception as exc:  # a method that cannot run is reported, not hidden
                row.failures[name] = f"{type(exc).__name__}: {exc}"
                row.raised_by[name] = REFUSED if refused_by_pvosimr(exc) else RAISED
                continue
            row.errors[name] = max(row.errors.get(name, 0.0), rel_err(G, truth))
            times[name].append(seconds)
            results[name] = G
        if "pin-pv-osimr" in results and "pin-efpa" in results:
            err = rel_err(results["pin-pv-osimr"], results["pin-efpa"])
            row.pv_cpp_vs_efpa_cpp = max(row.pv_cpp_vs_efpa_cpp or 0.0, err)
        if engine is not None:
            _compare_mujoco(row, engine, truth, results, times)
    if isinstance(robot, MjcfRobot):
        row.parser_notes = robot.parser_notes()
    row.times_us = {k: float(np.median(v) * 1e6) for k, v in times.items() if v}
    row.seconds = time.perf_counter() - start
    return row


def _draws(robot, configs: int, rng: np.random.Generator):
    """``(q, constraints, MuJoCo's rows or None)`` for ``configs`` configurations; an MJCF
    robot's come from MuJoCo, and a draw without any row is passed over (at most
    ``4 × configs`` draws)."""
    if not isinstance(robot, MjcfRobot):
        for _ in range(configs):
            yield robot.q_random(rng), robot.constraints, None
        return
    kept = 0
    for k in range(4 * configs):
        engine = robot.efc(robot.configuration(k, rng))
        if engine.constraints:
            yield engine.q, engine.constraints, engine
            kept += 1
            if kept == configs:
                return


def _compare_mujoco(row: Row, engine, truth: np.ndarray, results: dict, times: dict) -> None:
    """MuJoCo's G against the truth and against pvosimr's (PV-OSIMr), and its rows left out."""
    row.errors[MUJOCO] = max(row.errors.get(MUJOCO, 0.0), rel_err(engine.G, truth))
    times[MUJOCO].append(engine.seconds)
    if "pv-osimr" in results:
        err = rel_err(results["pv-osimr"], engine.G)
        row.pvosimr_vs_mujoco = max(row.pvosimr_vs_mujoco or 0.0, err)
    for kind, count in engine.left_out.items():
        row.left_out[kind] = max(row.left_out.get(kind, 0), count)


def _truth(robot, q: np.ndarray, constraints) -> np.ndarray:
    """The dense truth, or a ValueError naming the case when M is not positive definite."""
    try:
        return dense_delassus(robot.model, q, constraints)
    except np.linalg.LinAlgError as exc:
        raise ValueError(
            f"{robot.name}/{robot.preset}: the mass matrix is not positive definite at a random "
            f"configuration ({exc}), so J M⁻¹ Jᵀ is undefined: does every joint move some mass, "
            "inertia or armature?"
        ) from exc


def _cases(robots: Sequence[str], strict: bool) -> tuple[list[zoo.Robot], dict[str, str]]:
    """The cases of ``ROBOT`` (each of its presets, one model load per robot) or
    ``ROBOT/PRESET`` (that preset), and the robots whose optional model is not installed.

    A robot the user named must load (its error says how to get it); from the default zoo, a
    missing optional model is reported instead of stopping the run.
    """
    cases, unavailable = [], {}
    for spec in robots:
        name, preset = zoo.parse_case(spec)
        try:
            robot = mjcf_robot(name) if name in MJCF_ROBOTS else zoo.load(name, preset)
        except (FileNotFoundError, ModuleNotFoundError) as exc:
            if strict:
                raise
            unavailable[name] = str(exc)
            continue
        presets = robot.presets if preset is None else (preset,)
        cases.extend(robot.with_preset(p) for p in presets)
    return cases, unavailable


def zoo_names() -> list[str]:
    """The validation's default zoo: :func:`pvosimr.zoo.names` and the MJCF robots checked
    against MuJoCo (:data:`pvosimr.zoo.mujoco_robots.MJCF_ROBOTS`)."""
    return [*zoo.names(), *MJCF_ROBOTS]


def validate(
    robots: Iterable[str] | None = None,
    configs: int = 3,
    seed: int = 0,
    progress: bool = True,
    strict: bool | None = None,
) -> tuple[list[Row], dict[str, str]]:
    """Validate every (robot, preset) of ``robots`` (default: the whole zoo).

    Returns the rows and the robots left out because an optional model is not installed (with
    the reason).  ``strict`` (default: whether ``robots`` were named) raises instead.
    """
    robots = list(robots or [])
    strict = bool(robots) if strict is None else strict
    cases, unavailable = _cases(robots or zoo_names(), strict=strict)
    return validate_cases(cases, configs, seed, progress), unavailable


def validate_cases(
    cases: Sequence[zoo.Robot], configs: int = 3, seed: int = 0, progress: bool = True
) -> list[Row]:
    """One :class:`Row` per robot (with its selected preset), e.g. from :func:`zoo.from_file`.

    Case ``k`` draws its configurations from ``np.random.default_rng([seed, k])``.
    """
    methods = _methods()
    rows = []
    bar = progress_bar(cases, disable=not progress, unit="case", file=sys.stderr, mininterval=0.5)
    for k, robot in enumerate(bar):
        bar.set_postfix_str(f"{robot.name} / {robot.preset}")
        rows.append(validate_robot(robot, configs, np.random.default_rng([seed, k]), methods))
    return rows


def _fmt(err: float | None) -> str:
    if err is None:
        return "—"
    mark = "" if err <= TOLERANCE else " ❌"
    return f"{err:.0e}{mark}"


def _cell(row: Row, method: str, notes: dict[str, int]) -> str:
    if method in row.skipped:
        return "not called"
    if method in row.failures:
        mark = f"[{notes[row.failures[method]]}]"
        if method in ALGORITHMS:  # every algorithm takes every input: a raise fails the run
            return f"failed ❌ {mark}"
        return f"refused {mark}"
    return _fmt(row.errors.get(method))


def _notes(rows: list[Row]) -> dict[str, int]:
    """Each distinct error message of ``rows`` and its footnote number, in table order."""
    notes: dict[str, int] = {}
    for r in rows:
        for method in [*ALGORITHMS, *_references(rows)]:
            if method in r.failures:
                notes.setdefault(r.failures[method], len(notes) + 1)
    return notes


def _references(rows: list[Row]) -> list[str]:
    """The Pinocchio references that appear in ``rows`` (ran or refused)."""
    methods = {m for r in rows for m in (*r.errors, *r.failures, *r.skipped)}
    return sorted(methods - set(ALGORITHMS))


def table(rows: list[Row]) -> list[str]:
    """The Markdown table: one row per robot × preset, one error column per method; a method
    that raised shows "failed ❌ [n]" (a pvosimr algorithm) or "refused [n]" (a Pinocchio
    reference), footnote n of :func:`footnotes` giving the reason."""
    methods = [*ALGORITHMS, *_references(rows)]
    notes = _notes(rows)
    head = ["robot", "preset", "nv", "m", *methods, "pv-osimr µs", "pin-efpa µs", "time s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.robot, r.preset, str(r.nv), str(r.m)]
        cells += [_cell(r, m, notes) for m in methods]
        times = [r.times_us.get(m) for m in ("pv-osimr", "pin-efpa")]
        cells += ["—" if t is None else f"{t:.0f}" for t in times] + [f"{r.seconds:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def footnotes(rows: list[Row]) -> list[str]:
    """``[n] methods (who): reason`` for every footnote mark of :func:`table` (none when
    nothing raised): a pvosimr algorithm that failed, a reference pvosimr refused to call on
    this input, or one whose C++ call raised (Pinocchio's, or the bridge's own check)."""
    who: dict[str, dict[str, set[str]]] = {}
    for r in rows:
        for method, message in r.failures.items():
            kind = _who(method, r.raised_by.get(method, RAISED))
            who.setdefault(message, {}).setdefault(kind, set()).add(method)
    return [
        f"[{n}] "
        + "; ".join(f"{', '.join(sorted(m))} ({kind})" for kind, m in sorted(who[message].items()))
        + f": {message}"
        for message, n in _notes(rows).items()
    ]


def _who(method: str, raised_by: str) -> str:
    if method in ALGORITHMS:
        return "failed"
    return raised_by if raised_by == REFUSED else "raised in the C++ call"


SILENTLY_WRONG_ANCHOR = (
    "#where-pinocchios-routines-are-silently-wrong-world-aligned-frames-loop-closures-the-damped-"
    "inverse"
)
"""The report's section measuring what Pinocchio returns where pvosimr refuses to call it."""


def _disagreements(rows: list[Row], references: list[str], measured: bool) -> list[str]:
    """Where a result Pinocchio returned is off the truth; else why "none" says little where
    pvosimr refused the input (``measured``: the report measures those cases directly)."""
    out = [
        f"- **{r.robot} / {r.preset}**: `{ref}` is off the dense truth by {r.errors[ref]:.1e} "
        f"(pvosimr's worst on this case: {max(r.errors.get(a, 0.0) for a in ALGORITHMS):.1e})."
        for r in rows
        for ref in references
        if r.errors.get(ref, 0.0) > TOLERANCE
    ]
    if out:
        return out
    line = (
        "- None of the results Pinocchio or MuJoCo returned here is off the truth beyond the "
        "tolerance."
    )
    held_back = any(
        r.raised_by.get(ref) == REFUSED or ref in r.skipped for r in rows for ref in references
    )
    if held_back:
        line += (
            " That says nothing of the cases where pvosimr refused the input or did not call "
            "Pinocchio (below): there Pinocchio returns a wrong matrix without an error"
        )
        line += f", [measured below]({SILENTLY_WRONG_ANCHOR})." if measured else "."
    return [line]


def _cpp_agreement(rows: list[Row]) -> str:
    pairs = [(r.pv_cpp_vs_efpa_cpp, r) for r in rows if r.pv_cpp_vs_efpa_cpp is not None]
    if not pairs:
        return "Pinocchio's C++ PV-OSIMr and `pin.computeDelassusMatrix` were not both available."
    worst, r = max(pairs, key=lambda p: p[0])
    verdict = "within" if worst <= TOLERANCE else "**above**"
    return (
        f"Pinocchio's C++ PV-OSIMr (`pin-pv-osimr`) against `pin.computeDelassusMatrix` "
        f"(`pin-efpa`) directly: worst {worst:.1e} over {len(pairs)} cases ({r.robot}/{r.preset}), "
        f"{verdict} the tolerance."
    )


def _raised(rows: list[Row], keep: Callable[[str, str], bool]) -> list[str]:
    """The raised methods ``keep(method, who)`` selects, grouped by method and message."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for method, message in r.failures.items():
            if keep(method, r.raised_by.get(method, RAISED)):
                groups.setdefault((method, message), []).append(f"{r.robot}/{r.preset}")
    if not groups:
        return ["- None."]
    return [
        f"- `{method}` on {len(cases)} case(s) ({', '.join(cases)}): {message}"
        for (method, message), cases in sorted(groups.items())
    ]


def _raised_sections(rows: list[Row]) -> list[str]:
    """Three kinds of "no result", told apart: a pvosimr algorithm that raised (fails the run),
    a Pinocchio reference pvosimr refused to call on this input, one whose C++ call raised."""
    return [
        "## pvosimr algorithms that raised an error (each fails the run)",
        "",
        *_raised(rows, lambda method, who: method in ALGORITHMS),
        "",
        "## pvosimr refused the input (Pinocchio not called)",
        "",
        "pvosimr's wrappers of Pinocchio's routines check the input first and refuse what "
        "Pinocchio would get silently wrong or cannot compute (a loop closure's second body, a "
        "singular G for the Cholesky route, mimic joints for the C++ PV-OSIMr):",
        "",
        *_raised(rows, lambda method, who: method not in ALGORITHMS and who == REFUSED),
        "",
        "## The C++ call raised an error (Pinocchio's, or the bridge's check before it)",
        "",
        *_raised(rows, lambda method, who: method not in ALGORITHMS and who != REFUSED),
    ]


def _not_called(rows: list[Row]) -> list[str]:
    """References deliberately not called, grouped by method and reason."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for method, reason in r.skipped.items():
            groups.setdefault((method, reason), []).append(f"{r.robot}/{r.preset}")
    return [
        f"- `{method}` on {len(cases)} case(s) ({', '.join(cases)}): {reason}"
        for (method, reason), cases in sorted(groups.items())
    ]


def _footnoted(rows: list[Row]) -> list[str]:
    """The table's footnotes as a Markdown list and a blank line (nothing when none)."""
    notes = footnotes(rows)
    return [*(f"- {line}" for line in notes), ""] if notes else []


def summary(rows: list[Row]) -> str:
    """One line: PASS/FAIL and the number of cases."""
    ok = all(r.passes() for r in rows)
    return f"{'PASS' if ok else 'FAIL'}: {len(rows)} robot × preset cases"


def write_report(rows: list[Row], out: Path, meta: dict) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    references = _references(rows)
    ok = all(r.passes() for r in rows)
    md = [
        "# pvosimr validation report",
        "",
        f"Generated by `{meta['command']}` — pvosimr {__version__}, pin {pin.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}, {meta['machine']}.",
        "",
        f"**{'PASS' if ok else 'FAIL'}**: {len(rows)} robot × preset cases, "
        f"{meta['configs']} random configurations each (seed {meta['seed']}), "
        f"run time {meta['seconds']:.0f} s.",
        "",
        "Each cell is the worst relative error `max|G − G_dense| / max(1, max|G_dense|)` over the "
        "configurations, against the dense `J M⁻¹ Jᵀ` built from Pinocchio's `crba` and joint "
        f"Jacobians (Cholesky). Tolerance {TOLERANCE:g}; ❌ marks a value above it, or a pvosimr "
        "algorithm that failed; a Pinocchio reference is 'refused' where pvosimr's input check "
        "or Pinocchio said no (the footnote under the table says which and why). The times are "
        "median wall times per call from Python (one call each, noisy: see `pvosimr bench`).",
        "",
        *table(rows),
        "",
        *_footnoted(rows),
        _cpp_agreement(rows),
        "",
        "## Where Pinocchio or MuJoCo disagrees with the dense truth",
        "",
        *_disagreements(rows, references, bool(meta.get("silently_wrong"))),
        "",
        *_raised_sections(rows),
    ]
    if any(r.skipped for r in rows):
        md += ["", "## Pinocchio references not called on some cases", "", *_not_called(rows)]
    if reference.unavailable():
        md += ["", "## Pinocchio references not run here", ""]
        md += [
            f"- **{name}**{not_run(name, why).removeprefix(name)}"
            for name, why in reference.unavailable().items()
        ]
    if meta.get("unavailable"):
        md += ["", "## Robots not validated (optional model not installed)", ""]
        md += [f"- **{name}**: {reason}" for name, reason in meta["unavailable"].items()]
    extra = meta.get("damped_inverse")
    if extra:
        md += ["", "## `pin.computeDampedDelassusMatrixInverse` from Python", "", extra]
    md += mujoco_section(rows)
    if meta.get("silently_wrong"):
        md += ["", *silently_wrong_section(meta["silently_wrong"])]
    md += accuracy_section(out)
    md_path, json_path = out / "report.md", out / "report.json"
    md_path.write_text("\n".join(md) + "\n")
    json_path.write_text(
        json.dumps({"meta": meta, "pass": ok, "rows": [asdict(r) for r in rows]}, indent=1)
    )
    return md_path, json_path


def accuracy_section(out: Path) -> list[str]:
    """The summary of the accuracy study (``python -m pvosimr.study.accuracy``) written beside the
    report, with its figure: the zoo's robots are shallow and well conditioned, so how accuracy
    ends with depth and mass ratio is measured there, on chains up to 300 links."""
    study = out / "accuracy.md"
    if not study.exists():
        return []
    lines = study.read_text().splitlines()
    start = lines.index("## Summary") + 1 if "## Summary" in lines else len(lines)
    stop = next((k for k in range(start, len(lines)) if lines[k].startswith("## ")), len(lines))
    summary = [line for line in lines[start:stop] if line.startswith("- ")]
    if not summary:
        return []
    figure = ["", "![error against depth and cond(M)](accuracy.png)"]
    return [
        "",
        "## Accuracy against chain depth and conditioning",
        "",
        "From `python -m pvosimr.study.accuracy` (every pvosimr path and Pinocchio's two C++ "
        "routines on Spherical, FreeFlyer and mixed chains up to 300 links; tables in "
        "[accuracy.md](accuracy.md)):",
        "",
        *summary,
        *(figure if (out / "accuracy.png").exists() else []),
    ]


def _failed(rows: list[Row]) -> list[str]:
    """One line per case and reason: the pvosimr algorithms that failed."""
    lines = []
    for r in rows:
        by_reason: dict[str, list[str]] = {}
        for method, reason in r.failures.items():
            if method in ALGORITHMS:
                by_reason.setdefault(reason, []).append(method)
        lines += [
            f"{r.robot}/{r.preset}: FAILED: {', '.join(methods)}: {reason}"
            for reason, methods in by_reason.items()
        ]
    return lines


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr validate``."""
    parser = command_parser(
        "validate",
        "Every pvosimr algorithm and Pinocchio reference against the dense "
        "J M⁻¹ Jᵀ: over the robot zoo (default), named zoo cases (--robots) or a model file.",
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="a URDF (.urdf) or MJCF (.xml, .mjcf) model file, with --point/--weld; an MJCF "
        "file alone is validated on MuJoCo's own constraint rows, MuJoCo's G beside Pinocchio's",
    )
    add_model_file_options(parser)
    parser.add_argument(
        "--robots",
        nargs="+",
        metavar="ROBOT[/PRESET]",
        help="zoo cases (a bare robot name means every preset; default: the whole zoo)",
    )
    parser.add_argument(
        "--configs",
        type=at_least_one,
        default=3,
        metavar="N",
        help="random configurations per case, at least 1 (default: %(default)s)",
    )
    add_seed_option(parser)
    parser.add_argument(
        "--exported",
        type=Path,
        metavar="DIR",
        help="check an export (`pvosimr export`) against the truth on the model it names",
    )
    add_out_option(
        parser,
        help=f"write DIR/report.md and report.json (default: ./{ZOO_REPORT_DIR}/, git-ignored, "
        "for the whole zoo; --out validation rewrites the repository's committed report; a "
        "FILE or --robots run only prints its table unless --out is given)",
    )
    return parser


def _file_case(args: argparse.Namespace, parser: argparse.ArgumentParser) -> zoo.Robot:
    """The model file's robot; a missing file says so (and points a zoo name to --robots)."""
    path = Path(args.file)
    if args.robots:
        parser.error("give a model FILE or --robots, not both")
    if args.file and path.is_dir():  # Path("") is the current folder
        parser.error(f"{args.file} is a directory, not a model file")
    if not path.is_file():
        hint = ""
        if not zoo.looks_like_model_file(args.file):
            name = args.file.partition("/")[0]  # ROBOT/PRESET given as a FILE
            if name in zoo.names():
                hint = f"; {name!r} is a zoo robot: pvosimr validate --robots {args.file}"
        parser.error(f"no such model file: {args.file}{hint}")
    if zoo.MODEL_FILE_TYPES.get(path.suffix.lower()) == "mjcf" and not model_file_options_used(
        args
    ):
        return _mjcf_case(path, parser)
    return robot_from_file(path, args, parser)


def _mjcf_case(path: Path, parser: argparse.ArgumentParser) -> MjcfRobot:
    """An MJCF file without --point/--weld: its constraints are MuJoCo's rows, and MuJoCo's G
    is a reference (a missing MuJoCo is one line naming the extra)."""
    require_extra(parser.prog, "mujoco")
    try:
        return mjcf_robot(path)
    except (FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr validate``: see ``--help``; exit 0 on PASS, 1 on FAIL, 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.exported is not None:
        from .exported import check_exported

        return check_exported(args.exported, args.configs, args.seed, parser.prog)
    started = time.perf_counter()
    zoo_wide = args.file is None and not args.robots
    if args.file is not None:
        cases, unavailable = [_file_case(args, parser)], {}
    else:
        used = model_file_options_used(args)
        if used:
            parser.error(f"{', '.join(used)}: only with a model FILE")
        try:
            cases, unavailable = _cases(args.robots or zoo_names(), strict=not zoo_wide)
        except (FileNotFoundError, ModuleNotFoundError, ValueError) as exc:
            return usage_error(parser.prog, str(exc))
    out = args.out if args.out is not None or not zoo_wide else Path(ZOO_REPORT_DIR)
    unmade = None if out is None else make_out(parser.prog, out)
    if unmade is not None:
        return unmade
    try:
        rows = validate_cases(cases, args.configs, args.seed)
    except ValueError as exc:  # the dense truth is undefined (singular mass matrix)
        return usage_error(parser.prog, str(exc))
    for name, reason in unavailable.items():
        print(f"not validated: {name}: {reason}", file=sys.stderr)
    for name, reason in reference.unavailable().items():
        print(f"not run: {not_run(name, reason)}", file=sys.stderr)
    if not zoo_wide:
        print("\n".join([*table(rows), "", *footnotes(rows)]).rstrip())
        for line in agreement_lines(rows):
            print(line)
        for line in _failed(rows):
            print(line, file=sys.stderr)
    if out is not None:
        meta = {
            "command": " ".join(["pvosimr validate", *(sys.argv[2:] if argv is None else argv)]),
            "configs": args.configs,
            "seed": args.seed,
            "seconds": time.perf_counter() - started,
            "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
            "unavailable": unavailable,
        }
        if zoo_wide:
            meta["damped_inverse"] = damped_inverse_section(args.seed)
            closed_loops, _ = _cases(list(zoo.CLOSED_LOOP_ROBOTS), strict=False)
            meta["silently_wrong"] = silently_wrong(args.seed, closed_loops)
        md, _ = write_report(rows, out, meta)
        print(f"report: {md}")
    print(summary(rows))
    bad = [f"{r.robot}/{r.preset}" for r in rows if not r.passes()]
    if bad:
        print(f"FAIL: pvosimr above {TOLERANCE:g} or failed on {', '.join(bad)}", file=sys.stderr)
        return 1
    print(f"every pvosimr algorithm is within {TOLERANCE:g} on every case")
    return 0

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
import linecache
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr import ALGORITHMS, compute_delassus, reference, zoo
from pvosimr.constraints import constraint_dim
from pvosimr.reference.truth import dense_delassus, rel_err
from pvosimr.zoo.mujoco_robots import MJCF_ROBOTS, MjcfRobot, mjcf_robot

from .machine import describe
from .mujoco_section import MUJOCO, agreement_lines
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
)
from .progress import progress_bar
from .validate_report import (
    RAISED,
    REFUSED,
    TOLERANCE,
    MethodResult,
    Row,
    footnotes,
    not_run,
    summary,
    table,
    write_report,
)

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

ZOO_REPORT_DIR = str(REPORT_DIR)
"""Where the zoo-wide run writes its report, relative to the current folder (the repository's
committed report, ``validation/``, is rewritten only with ``--out validation``)."""


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


def refused_by_pvosimr(exc: BaseException) -> bool:
    """Whether ``exc`` is a ValueError raised by a ``raise`` statement of pvosimr's own code
    (its input checks), not one translated from Pinocchio's C++ (whose Python frame is the
    call, not a ``raise``)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if not isinstance(exc, ValueError) or tb is None:
        return False
    path = Path(tb.tb_frame.f_code.co_filename).resolve()
    line = linecache.getline(str(path), tb.tb_lineno).lstrip()
    return path.is_relative_to(_PACKAGE) and line.startswith("raise")


_PACKAGE = Path(__file__).resolve().parents[1]  # pvosimr/


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
        try:
            truth = dense_delassus(model, q, cms)
        except np.linalg.LinAlgError as exc:
            raise ValueError(
                f"{robot.name}/{robot.preset}: the mass matrix is not positive definite at a "
                f"random configuration ({exc}), so J M⁻¹ Jᵀ is undefined: does every joint move "
                "some mass, inertia or armature?"
            ) from exc
        results = {}
        for name, method in methods.items():
            if not_called(name, cms):
                row.methods.setdefault(name, MethodResult()).not_called = not_called(name, cms)
                continue
            try:
                method(model, data, q, cms)  # warm caches (topology, initPvDelassus)
                start = time.perf_counter()
                G = method(model, data, q, cms)
                seconds = time.perf_counter() - start
            except Exception as exc:  # a method that cannot run is reported, not hidden
                result = row.methods.setdefault(name, MethodResult())
                result.failure = f"{type(exc).__name__}: {exc}"
                result.raised_by = REFUSED if refused_by_pvosimr(exc) else RAISED
                continue
            _worst_error(row, name, rel_err(G, truth))
            times[name].append(seconds)
            results[name] = G
        if "pin-pv-osimr" in results and "pin-efpa" in results:
            err = rel_err(results["pin-pv-osimr"], results["pin-efpa"])
            row.pv_cpp_vs_efpa_cpp = max(row.pv_cpp_vs_efpa_cpp or 0.0, err)
        if engine is not None:
            _compare_mujoco(row, engine, truth, results, times)
    if isinstance(robot, MjcfRobot):
        row.parser_notes = robot.parser_notes()
    for name, seconds in times.items():
        if seconds:  # it ran, so it has a result
            row.methods[name].time_us = float(np.median(seconds) * 1e6)
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
    _worst_error(row, MUJOCO, rel_err(engine.G, truth))
    times[MUJOCO].append(engine.seconds)
    if "pv-osimr" in results:
        err = rel_err(results["pv-osimr"], engine.G)
        row.pvosimr_vs_mujoco = max(row.pvosimr_vs_mujoco or 0.0, err)
    for kind, count in engine.left_out.items():
        row.left_out[kind] = max(row.left_out.get(kind, 0), count)


def _worst_error(row: Row, method: str, error: float) -> None:
    """Keep ``method``'s worst error over the configurations."""
    result = row.methods.setdefault(method, MethodResult())
    result.error = max(result.error or 0.0, error)


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


def _failed(rows: list[Row]) -> list[str]:
    """One line per case and reason: the pvosimr algorithms that failed."""
    lines = []
    for r in rows:
        by_reason: dict[str, list[str]] = {}
        for method, result in r.raised().items():
            if method in ALGORITHMS:
                by_reason.setdefault(result.failure, []).append(method)
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
        help="check every entry point of an export (`pvosimr export`) against the truth, on "
        "the model and constraints it carries (at least 16 configurations)",
    )
    add_out_option(
        parser,
        help=f"write DIR/report.md and report.json (default: ./{ZOO_REPORT_DIR}/, git-ignored, "
        "for the whole zoo; --out validation rewrites the repository's committed report; a "
        "FILE or --robots run only prints its table unless --out is given)",
    )
    return parser


def _file_case(args: argparse.Namespace, parser: argparse.ArgumentParser) -> zoo.Robot | MjcfRobot:
    """The model file's robot; a missing file says so (and points a zoo name to --robots)."""
    path = Path(args.file)
    if args.robots:
        parser.error("give a model FILE or --robots, not both")
    if args.file and path.is_dir():  # Path("") is the current folder
        parser.error(f"{args.file} is a directory, not a model file")
    if not path.is_file():
        hint = ""
        close = [] if zoo.looks_like_model_file(args.file) else zoo.close_cases(args.file)
        if close:  # ROBOT/PRESET given as a FILE
            name = args.file.partition("/")[0]
            known = f"{name!r} is a zoo robot" if name in zoo.names() else "did you mean"
            hint = f"; {known}: pvosimr validate --robots {close[0]}"
        parser.error(f"no such model file: {args.file}{hint}")
    mjcf = zoo.MODEL_FILE_TYPES.get(path.suffix.lower()) == "mjcf"
    if not mjcf or model_file_options_used(args):
        return robot_from_file(path, args, parser)
    # an MJCF file alone: its constraints are MuJoCo's rows, and MuJoCo's G is a reference
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
        from .export import check_exported

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
            "machine": describe(),
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

"""``pvosimr export`` and ``pvosimr validate --exported``: standalone C for a C or C++ program,
and its check against the truth.

``pvosimr export ROBOT[/PRESET] --out DIR`` (or a model FILE with ``--point``/``--weld``) writes
:func:`pvosimr.codegen.export`'s files; ``--time`` instead times the exported call against
Pinocchio's C++ in one C++ program (:mod:`pvosimr.study.export_timing`) and writes
``DIR/export_timing.md``.

``pvosimr validate --exported DIR`` reads ``DIR/export.json``, loads the zoo robot it names,
checks that the model's hash is the export's, builds the export's ``NAME.c`` with its own flags
(into a temporary folder: nothing is written in ``DIR``), and compares the exported call, loaded
through :mod:`ctypes` (no Python in the call), with the dense truth ``J M⁻¹ Jᵀ``
(:func:`pvosimr.reference.truth.dense_delassus`) on random configurations, then checks that it
refuses a non-finite and a non-normalized ``q``.  A user's mistake is one line and exit 2; a
failed check exit 1.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pvosimr import zoo
from pvosimr.study.options import (
    REPORT_DIR,
    add_model_file_options,
    add_out_option,
    at_least_one,
    command_parser,
    model_file_options_used,
    require_extra,
    robot_from_file,
    usage_error,
    with_frames,
)

__all__ = ["TOLERANCE", "build_parser", "check_exported", "main"]

#: The exported G against the dense truth: the validation's tolerance.
TOLERANCE = 1e-8


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr export``."""
    parser = command_parser(
        "export",
        "Write G = J M⁻¹ Jᵀ of one robot as standalone C (NAME.c, NAME.h, CMakeLists.txt, "
        "README.md) for a C or C++ program: no Python at run time. Or, with --time, time the "
        "exported call against Pinocchio's C++ computeDelassusMatrix in one C++ program.",
    )
    parser.add_argument(
        "robot",
        nargs="*",
        metavar="ROBOT[/PRESET] | FILE",
        help="a zoo case (as `pvosimr validate --robots` names it) or a URDF/MJCF file with "
        "--point/--weld; with --time, the cases to time (default: shadow_hand/fingertips_3d "
        "atlas/feet_6d)",
    )
    add_model_file_options(parser)
    add_out_option(
        parser,
        help="the export's folder (new or empty); with --time the report's folder "
        f"(default {REPORT_DIR}/figures)",
    )
    parser.add_argument("--name", default=None, help="the C prefix (default: from the robot)")
    parser.add_argument("--algorithm", default="pv-osimr", help="(default: %(default)s)")
    parser.add_argument(
        "--placements",
        choices=("fixed", "input"),
        default="fixed",
        help="the constraint placements built in, or an input of every call (default: %(default)s)",
    )
    for switch, what in (
        ("--vjp", "also the gradient of <W, G>"),
        ("--derivatives", "also dG, the derivatives"),
        ("--time", "time the export against Pinocchio's C++ instead"),
    ):
        parser.add_argument(switch, action="store_true", help=f"{what} (default: off)")
    parser.add_argument(
        "--rounds",
        type=at_least_one,
        default=15,
        metavar="N",
        help="--time: interleaved rounds (default: %(default)s)",
    )
    return parser


def _robot(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[zoo.Robot, str]:
    """The robot to export and its zoo case ("" for a model file); mistakes end the run."""
    if len(args.robot) != 1:
        parser.error("name one robot: ROBOT[/PRESET] or a model FILE")
    spec = args.robot[0]
    name = spec.partition("/")[0]
    if Path(spec).is_file() or (zoo.looks_like_model_file(spec) and name not in zoo.names()):
        return robot_from_file(Path(spec), args, parser), ""
    try:
        robot = zoo.load_case(spec)
    except (FileNotFoundError, ModuleNotFoundError, ValueError) as exc:
        raise SystemExit(usage_error(parser.prog, str(exc).splitlines()[0])) from None
    if args.constraints:
        return with_frames(robot, args, parser), ""
    used = model_file_options_used(args)
    if used:
        parser.error(f"{', '.join(used)}: only with a model FILE or --point/--weld")
    return robot, f"{robot.name}/{robot.preset}"


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr export``: see ``--help``; exit 0, or 2 on a user's mistake."""
    parser = build_parser()
    args = parser.parse_args(argv)
    require_extra(parser.prog, "casadi")
    if args.time:
        return _time(args, parser)
    if args.out is None:
        parser.error("--out DIR is required: the export's folder (new or empty)")
    robot, case = _robot(args, parser)
    from pvosimr.codegen import CodegenError, ExportError, export

    name = args.name or "".join(c if c.isalnum() else "_" for c in (case or robot.name))
    try:
        done = export(
            robot.model, robot.constraints, args.out, name=name, algorithm=args.algorithm,
            placements=args.placements, vjp=args.vjp, derivatives=args.derivatives,
            robot=case or None,
        )  # fmt: skip
    except (ExportError, CodegenError, OSError, ValueError, NotImplementedError) as exc:
        return usage_error(parser.prog, str(exc).splitlines()[0])
    spec = done.spec
    print(
        f"exported {case or robot.name}: nq={spec['nq']} nv={spec['nv']} m={spec['m']}, "
        f"{len(done.files)} files in {done.folder} ({name}.h documents the ABI; "
        f"`pvosimr validate --exported {done.folder}` checks it)"
    )
    return 0


def _time(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``--time``: the C++ timing report."""
    from pvosimr.reference.bridge import BridgeUnavailableError

    from . import export_timing

    cases = args.robot or list(export_timing.CASES)
    out = args.out if args.out is not None else REPORT_DIR / "figures"
    load = os.getloadavg()[0]
    try:
        rows = export_timing.time_cases(cases, rounds=args.rounds)
    except (FileNotFoundError, ModuleNotFoundError, ValueError, BridgeUnavailableError) as exc:
        return usage_error(parser.prog, str(exc).splitlines()[0])
    command = " ".join(["pvosimr export --time", *args.robot, f"--rounds {args.rounds}"])
    lines = export_timing.report(rows, command, load, os.getloadavg()[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / "export_timing.md").write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"report: {out / 'export_timing.md'}")
    return 0


# --------------------------------------------------------------------------- validate --exported


def check_exported(folder: Path, configs: int, seed: int, prog: str) -> int:
    """``pvosimr validate --exported DIR`` (see the module docstring): 0 PASS, 1 FAIL, 2 on a
    user's mistake (no export there, no zoo robot named, no C compiler)."""
    from pvosimr.codegen import CodegenError
    from pvosimr.codegen.build import find_compiler
    from pvosimr.codegen.standalone import MANIFEST, model_hash
    from pvosimr.reference.truth import dense_delassus, rel_err
    from pvosimr.zoo.robot import random_configuration

    manifest = Path(folder) / MANIFEST
    if not manifest.is_file():
        return usage_error(prog, f"--exported {folder}: no {MANIFEST} (not a pvosimr export)")
    spec = json.loads(manifest.read_text())
    if not spec.get("robot"):
        return usage_error(prog, f"--exported {folder}: the export names no zoo robot to check")
    try:
        robot = zoo.load_case(spec["robot"])
        compiler = find_compiler()
    except (FileNotFoundError, ModuleNotFoundError, ValueError, CodegenError) as exc:
        return usage_error(prog, str(exc).splitlines()[0])
    model, cms = robot.model, robot.constraints
    failures = []
    if model_hash(model) != spec["provenance"]["model hash"]:
        failures.append(f"the model {spec['robot']} here is not the exported one (hash differs)")
    with tempfile.TemporaryDirectory(prefix="pvosimr-exported-") as tmp:
        library = _build(compiler, Path(folder), spec, Path(tmp))
        call = _binding(library, spec, _placements(model, cms) if spec["n_p"] else None)
        rng = np.random.default_rng(seed)
        worst = 0.0
        for _ in range(configs):
            q = random_configuration(model, rng)
            rc, G = call(q)
            if rc != 0:
                failures.append(f"code {rc} at a valid q")
                continue
            worst = max(worst, rel_err(G, dense_delassus(model, q, cms)))
        for what, bad in _bad_configurations(model, rng):
            rc, _ = call(bad)
            if rc != 1:
                failures.append(f"a q {what} gives code {rc}, not BAD_Q (1)")
    if worst > TOLERANCE:
        failures.append(f"G is off the dense truth by {worst:.1e} (tolerance {TOLERANCE:g})")
    print(
        f"{spec['name']} ({spec['robot']}, m={spec['m']}): worst relative error against the "
        f"dense J M⁻¹ Jᵀ over {configs} configurations: {worst:.1e}"
    )
    for line in failures:
        print(f"FAIL: {line}", file=sys.stderr)
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


def _build(compiler: list[str], folder: Path, spec: dict, tmp: Path) -> Path:
    """``NAME.c`` as a shared library with the export's own flags (a copy in ``tmp``)."""
    name = spec["name"]
    for path in folder.glob(f"{name}*.[ch]"):
        shutil.copy(path, tmp / path.name)
    library = tmp / f"lib{name}.so"
    command = [*compiler, *spec["part_flags"]["G"], "-shared", str(tmp / f"{name}.c")]
    subprocess.run([*command, "-o", str(library), "-lm"], check=True, capture_output=True)
    return library


def _placements(model, cms) -> np.ndarray:
    """``p`` of the constraint models' own placements (an export with placements as inputs)."""
    from pvosimr.kinematics.placements import placement_vector

    own = [
        (c.joint1_placement, c.joint2_placement) if c.joint2_id else c.joint1_placement for c in cms
    ]
    return np.ascontiguousarray(placement_vector(model, cms, own), dtype=np.float64)


def _binding(library: Path, spec: dict, p: np.ndarray | None):
    """``q -> (code, G)`` through the exported ``NAME_eval`` (``p``: the placements, if any)."""
    lib = ctypes.CDLL(str(library))
    entry = getattr(lib, f"{spec['name']}_eval")
    entry.restype = ctypes.c_int
    entry.argtypes = [ctypes.c_void_p] * 5
    m = spec["m"]
    w, iw = np.zeros(spec["sz_w"]), np.zeros(spec["sz_iw"], dtype=np.int64)
    p = np.zeros(1) if p is None else p

    def call(q: np.ndarray) -> tuple[int, np.ndarray]:
        q = np.ascontiguousarray(q, dtype=np.float64)
        G = np.zeros(m * m)
        rc = entry(q.ctypes.data, p.ctypes.data, G.ctypes.data, w.ctypes.data, iw.ctypes.data)
        return rc, G.reshape(m, m, order="F")

    return call


def _bad_configurations(model, rng: np.random.Generator):
    """A non-finite q and, where the model has a unit part, one not normalized."""
    from pvosimr.kinematics.joints import unit_parts
    from pvosimr.zoo.robot import random_configuration

    q = random_configuration(model, rng)
    nan = q.copy()
    nan[-1] = np.nan
    yield "with a NaN", nan
    for joint in model.joints[1:]:
        for first, _ in unit_parts(joint):
            off = q.copy()
            off[joint.idx_q + first] += 0.1
            yield "with a unit part not normalized", off
            return

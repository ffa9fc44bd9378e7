"""``pvosimr export`` and ``pvosimr validate --exported``: standalone C for a C or C++ program,
and its check against the truth.

``pvosimr export ROBOT[/PRESET] --out DIR`` (or a model FILE with ``--point``/``--weld``) writes
:func:`pvosimr.codegen.export`'s files; ``--time`` instead times the exported call against
Pinocchio's C++ in one C++ program (:mod:`pvosimr.study.export_timing`) and writes
``DIR/export_timing.md``.

``pvosimr validate --exported DIR`` checks any export, whatever model it came from (a zoo
case, a user's URDF or MJCF file, a model built in Python): it reads the model from
``DIR/model.txt`` (Pinocchio's own serialization) and the constraint models from
``DIR/export.json`` (:func:`pvosimr.codegen.standalone.load_export`), checks the model's
SHA-256 against the export's, builds every C file of the export with its own flags into one
shared library (in a temporary folder: nothing is written in ``DIR``), and calls every entry
point the export holds through :mod:`ctypes` (no Python in the call) on at least
:data:`MIN_CONFIGS` random configurations: G, single and batched (on two threads and on every
CPU), against the dense truth ``J M⁻¹ Jᵀ`` (:func:`pvosimr.reference.truth.dense_delassus`);
the gradient of ⟨W, G⟩ and dG, single and batched, against fourth-order central differences of
that truth along ``pin.integrate``; unit parts at norm 1 + 5e-7 against the normalised q (the
one unit-part rule of every route).  Then the codes the header documents on bad input: a NaN,
an infinity, a q beyond the model's range, a unit part not normalized (BAD_Q), a W with a NaN
(BAD_W), a placement scaled by 2 where ``p`` is an input (BAD_P), a NULL q, ``B < 0``,
``threads < 0`` (BAD_ARGUMENT); a batch's first bad row.  One
line per entry point with its worst error, then PASS or FAIL: exit 0 or 1; a folder that is
not an export, or no C compiler, is one line and exit 2.
"""

from __future__ import annotations

import argparse
import ctypes
import os
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
    parser.add_argument(
        "--name",
        default=None,
        help="the C prefix and file stem (default: the --out folder's name, as a C identifier)",
    )
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

    name = args.name or _default_name(Path(args.out), case or robot.name)
    try:
        done = export(
            robot.model,
            robot.constraints,
            args.out,
            name=name,
            algorithm=args.algorithm,
            placements=args.placements,
            vjp=args.vjp,
            derivatives=args.derivatives,
            robot=case or None,
        )
    except (ExportError, CodegenError, OSError, ValueError, NotImplementedError) as exc:
        return usage_error(parser.prog, str(exc).splitlines()[0])
    spec = done.spec
    print(
        f"exported {case or robot.name}: nq={spec['nq']} nv={spec['nv']} m={spec['m']}, "
        f"{len(done.files)} files in {done.folder} ({name}.h documents the ABI; "
        f"`pvosimr validate --exported {done.folder}` checks it)"
    )
    if spec.get("constraints") is None:
        print(f"note: {spec['constraints_missing']}")
    return 0


def _default_name(out: Path, robot: str) -> str:
    """The C prefix and file stem: the output folder's name (``--out atlas_feet``: files
    ``atlas_feet.h``..., ``find_package(atlas_feet)``), made a C identifier; the robot's where
    the folder's name cannot be one."""
    for stem in (out.resolve().name, robot):
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in stem)
        if name and not name[0].isdigit() and name.isascii():
            return name
    return "delassus"


def _time(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``--time``: the C++ timing report."""
    from pvosimr.reference.bridge import BridgeUnavailableError

    from . import export_timing

    cases = args.robot or list(export_timing.CASES)
    out = args.out if args.out is not None else REPORT_DIR / "figures"
    info = export_timing.machine()  # the load before the timing
    try:
        rows = export_timing.time_cases(cases, rounds=args.rounds)
    except (FileNotFoundError, ModuleNotFoundError, ValueError, BridgeUnavailableError) as exc:
        return usage_error(parser.prog, str(exc).splitlines()[0])
    command = " ".join(["pvosimr export --time", *args.robot, f"--rounds {args.rounds}"])
    lines = export_timing.report(rows, command, info, os.getloadavg()[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / "export_timing.md").write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"report: {out / 'export_timing.md'}")
    return 0


# --------------------------------------------------------------------------- validate --exported

#: Configurations an export is checked on, whatever ``--configs`` asks below it.
MIN_CONFIGS = 16
#: The derivatives (the gradient, dG) against central differences of the truth: a
#: fourth-order stencil of step :data:`STEP`, the step below which rounding, not the stencil's
#: own error, dominates.
DERIVATIVE_TOLERANCE = 1e-7
#: A unit part within the accepted norm gives G at the normalised q: as exact as rounding allows.
UNIT_RULE_TOLERANCE = 1e-13
STEP = 5e-4


def check_exported(folder: Path, configs: int, seed: int, prog: str) -> int:
    """``pvosimr validate --exported DIR`` (see the module docstring): 0 PASS, 1 FAIL, 2 on a
    user's mistake (no export there, one without its model, no C compiler)."""
    from pvosimr.codegen import CodegenError
    from pvosimr.codegen.build import find_compiler
    from pvosimr.codegen.standalone import ExportError, load_export, model_hash

    try:
        spec, model, cms = load_export(folder)
        compiler = find_compiler()
    except (ExportError, CodegenError) as exc:
        return usage_error(prog, f"--exported {str(exc).splitlines()[0]}")
    configs = max(configs, MIN_CONFIGS)
    failures = []
    if model_hash(model) != spec["provenance"]["model sha256"]:
        failures.append("model.txt is not the exported model (its SHA-256 differs)")
    with tempfile.TemporaryDirectory(prefix="pvosimr-exported-") as tmp:
        try:
            library = _build(compiler, Path(folder), spec, Path(tmp))
        except subprocess.CalledProcessError as exc:
            print(f"FAIL: the export does not build: {exc.stderr.strip()[-2000:]}", file=sys.stderr)
            print("FAIL")
            return 1
        p = _placements(model, cms) if spec["n_p"] else None
        check = _ExportCheck(ctypes.CDLL(str(library)), spec, model, cms, p, seed)
        lines = check.run(configs)
        failures += check.problems
    print(
        f"{spec['name']} ({spec['provenance']['model']}, nq={spec['nq']} nv={spec['nv']} "
        f"m={spec['m']}): every entry point on {configs} configurations against the dense "
        "J M⁻¹ Jᵀ (derivatives: its central differences along pin.integrate)"
    )
    for label, worst, tolerance in lines:
        if label.startswith("return codes"):
            print(f"  {label}: {worst}")
            continue
        print(f"  {label:<44} max error {worst:.1e}  (tolerance {tolerance:g})")
        if not worst <= tolerance:
            failures.append(f"{label}: off by {worst:.1e} (tolerance {tolerance:g})")
    for line in failures:
        print(f"FAIL: {line}", file=sys.stderr)
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


def _build(compiler: list[str], folder: Path, spec: dict, tmp: Path) -> Path:
    """Every C file of the export, each with its own flags, as one shared library in ``tmp``
    (the files compiled at once; nothing written in ``folder``)."""
    from pvosimr.codegen.standalone_text import PARTS

    name, objects, running = spec["name"], [], []
    for part in spec["parts"]:
        source = folder / f"{name}{PARTS[part][0]}.c"
        obj = tmp / f"{source.stem}.o"
        command = [*compiler, *spec["part_flags"][part], f"-I{folder}", "-c", str(source)]
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
        running.append((command, subprocess.Popen([*command, "-o", str(obj)], **pipes)))
        objects.append(str(obj))
    for command, process in running:
        _, err = process.communicate()
        if process.returncode:
            raise subprocess.CalledProcessError(process.returncode, command, stderr=err)
    library = tmp / f"lib{name}.so"
    link = [*compiler, "-shared", "-pthread", *objects, "-o", str(library), "-lm"]
    subprocess.run(link, check=True, capture_output=True, text=True)
    return library


def _placements(model, cms) -> np.ndarray:
    """``p`` of the constraint models' own placements (an export with placements as inputs)."""
    from pvosimr.kinematics.placements import placement_vector

    own = [
        (c.joint1_placement, c.joint2_placement) if c.joint2_id else c.joint1_placement for c in cms
    ]
    return np.ascontiguousarray(placement_vector(model, cms, own), dtype=np.float64)


def _pointer(a: np.ndarray | None) -> int | None:
    return None if a is None else a.ctypes.data


class _ExportCheck:
    """The export's entry points through :mod:`ctypes`, each checked against the truth on the
    same configurations, then on bad inputs against the codes its header documents."""

    def __init__(self, lib: ctypes.CDLL, spec: dict, model, cms, p, seed: int) -> None:
        from pvosimr.codegen.standalone_text import entry_name

        self.lib, self.spec, self.model, self.cms = lib, spec, model, cms
        self.p = np.zeros(1) if p is None else p
        self.rng = np.random.default_rng(seed)
        self.m, self.nv, self.nq = spec["m"], spec["nv"], spec["nq"]
        self.w = np.zeros(spec["sz_w"])
        self.iw = np.zeros(spec["sz_iw"], dtype=np.int64)
        self.stems = {part: entry_name(spec["name"], part) for part in spec["parts"]}
        self.outs = {"G": self.m * self.m, "vjp": self.nv, "derivatives": self.nv * self.m**2}

    def _entry(self, part: str, batch: bool):
        f = getattr(self.lib, self.stems[part] + ("_batch" if batch else ""))
        f.restype = ctypes.c_int
        ptr, ll, i32 = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int
        if batch:
            w = [ptr, ll] if part == "vjp" else []
            f.argtypes = [ptr, ll, ptr, *w, ptr, i32, ptr]
        else:
            f.argtypes = [ptr] * (6 if part == "vjp" else 5)
        return f

    def single(self, part: str, q, W=None) -> tuple[int, np.ndarray]:
        out = np.zeros(self.outs[part])
        args = [_pointer(q), self.p.ctypes.data]
        args += [_pointer(W)] if part == "vjp" else []
        rc = self._entry(part, False)(
            *args, out.ctypes.data, self.w.ctypes.data, self.iw.ctypes.data
        )
        return rc, out

    def batch(self, part: str, qs, Ws=None, threads: int = 2, B: int | None = None):
        B = len(qs) if B is None else B
        out = np.zeros(max(1, len(qs)) * self.outs[part])
        bad = ctypes.c_longlong(-7)
        args = [_pointer(qs), B, self.p.ctypes.data]
        args += [_pointer(Ws), self.m * self.m] if part == "vjp" else []
        rc = self._entry(part, True)(*args, out.ctypes.data, threads, ctypes.byref(bad))
        return rc, bad.value, out.reshape(max(1, len(qs)), -1)

    def as_output(self, part: str, flat: np.ndarray) -> np.ndarray:
        """A C output as numpy holds the truth: G (m, m); dG (nv, m, m); g as is."""
        if part == "G":
            return flat.reshape(self.m, self.m).T
        if part == "derivatives":
            return flat.reshape(self.nv, self.m, self.m).swapaxes(1, 2)
        return flat

    def run(self, configs: int) -> list[tuple[str, float, float]]:
        from pvosimr.reference.truth import dense_delassus
        from pvosimr.zoo.robot import random_configuration

        qs = np.array([random_configuration(self.model, self.rng) for _ in range(configs)])
        Ws = self.rng.standard_normal((configs, self.m, self.m))
        truth = {"G": [dense_delassus(self.model, q, self.cms) for q in qs]}
        if {"vjp", "derivatives"} & set(self.spec["parts"]):
            truth["derivatives"] = [self._central_differences(q) for q in qs]
            truth["vjp"] = [
                np.einsum("kij,ij->k", d, W) for d, W in zip(truth["derivatives"], Ws, strict=True)
            ]
        lines = []
        for part in self.spec["parts"]:
            tol = TOLERANCE if part == "G" else DERIVATIVE_TOLERANCE
            W = Ws if part == "vjp" else [None] * configs
            single = [self.single(part, q, w_) for q, w_ in zip(qs, W, strict=True)]
            worst = max(
                self._error(part, rc, out, t)
                for (rc, out), t in zip(single, truth[part], strict=True)
            )
            lines.append((f"{self.stems[part]}", worst, tol))
            for threads in (2, 0):
                rc, bad, outs = self.batch(part, qs, Ws if part == "vjp" else None, threads)
                worst = max(
                    self._error(part, rc, o, t) for o, t in zip(outs, truth[part], strict=True)
                )
                label = f"{self.stems[part]}_batch ({threads or 'all CPUs'} threads)"
                lines.append((label, worst if bad == -1 else np.inf, tol))
        if "G" in self.spec["parts"]:
            lines.append(self._unit_rule(qs[0]))
        calls, self.problems = self._codes(qs[0], Ws[0])
        if self.spec["n_p"]:
            calls += self._bad_placement(qs[0])
        lines.append((f"return codes: {calls} calls on bad input, wrong", len(self.problems), 0))
        return lines

    def _unit_rule(self, q: np.ndarray) -> tuple[str, float, float]:
        """The unit-part rule of every route: a unit part at norm 1 + 5e-7 (within the accepted
        1e-6) gives G at the normalised q, to rounding."""
        from pvosimr.coordinates import unit_part_spans

        off = q.copy()
        for start, length in unit_part_spans(self.model):
            off[start : start + length] *= 1 + 5e-7
        (rc, G_off), (_, G) = self.single("G", off), self.single("G", q)
        worst = self._error("G", rc, G_off, self.as_output("G", G))
        return (f"{self.stems['G']}, unit parts at norm 1 + 5e-7", worst, UNIT_RULE_TOLERANCE)

    def _bad_placement(self, q: np.ndarray) -> int:
        """Calls made: a placement whose rotation is scaled by 2 gives BAD_P on every entry point
        (single and batch), never a G."""
        from pvosimr.codegen.c_source import BAD_P

        good, self.p = self.p, self.p.copy()
        self.p[0:9] *= 2.0
        try:
            for part in self.spec["parts"]:
                Ws = np.zeros((2, self.m * self.m)) if part == "vjp" else None
                rc, _ = self.single(part, q, None if Ws is None else Ws[0])
                brc, _, _ = self.batch(part, np.array([q, q]), Ws)
                if rc != BAD_P or brc != BAD_P:
                    self.problems.append(
                        f"{self.stems[part]}: a placement scaled by 2 gives codes {rc} and {brc} "
                        f"(single, batch), not BAD_P {BAD_P}"
                    )
        finally:
            self.p = good
        return 2 * len(self.spec["parts"])

    def _error(self, part: str, rc: int, out: np.ndarray, truth: np.ndarray) -> float:
        from pvosimr.reference.truth import rel_err

        return rel_err(self.as_output(part, out), truth) if rc == 0 else np.inf

    def _central_differences(self, q: np.ndarray) -> np.ndarray:
        """dG/dv_k (nv, m, m) of the truth along ``pin.integrate``, fourth order."""
        import pinocchio as pin

        from pvosimr.reference.truth import dense_delassus

        out = np.zeros((self.nv, self.m, self.m))
        for k in range(self.nv):
            e = np.zeros(self.nv)
            e[k] = STEP
            G = {
                s: dense_delassus(self.model, pin.integrate(self.model, q, s * e), self.cms)
                for s in (-2, -1, 1, 2)
            }
            out[k] = (G[-2] - 8 * G[-1] + 8 * G[1] - G[2]) / (12 * STEP)
        return out

    def _codes(self, q: np.ndarray, W: np.ndarray) -> tuple[int, list[str]]:
        """``(calls, problems)``: every entry point on bad inputs, against the codes the header
        documents (a batch with one bad row: that code, and that row as the first bad one)."""
        from pvosimr.codegen.c_source import BAD_Q, BAD_W
        from pvosimr.codegen.standalone_text import BAD_ARGUMENT

        cases = [
            (what, bad, None, BAD_Q)
            for what, bad in _bad_configurations(self.model, q, self.spec["q_bound"])
        ]
        calls, problems = 0, []
        for part in self.spec["parts"]:
            good_W = W.ravel() if part == "vjp" else None
            mine = list(cases)
            if part == "vjp":
                nan_W = good_W.copy()
                nan_W[0] = np.nan
                mine.append(("W with a NaN", q, nan_W, BAD_W))
            for what, bad_q, bad_W, code in mine:
                W_in = good_W if bad_W is None else bad_W
                rc, _ = self.single(part, bad_q, W_in)
                Ws = None if good_W is None else np.array([good_W, good_W, W_in, good_W])
                brc, first, _ = self.batch(part, np.array([q, q, bad_q, q]), Ws)
                calls += 2
                if rc != code:
                    problems.append(f"{self.stems[part]}: q {what} gives code {rc}, not {code}")
                if brc != code or first != 2:
                    problems.append(
                        f"{self.stems[part]}_batch: row 2 {what} gives code {brc} and first bad "
                        f"row {first}, not {code} and 2"
                    )
            one, W1 = np.array([q]), None if good_W is None else good_W[None]
            for what, rc in (
                ("a NULL q", self.single(part, None, good_W)[0]),
                ("B < 0", self.batch(part, one, W1, B=-1)[0]),
                ("threads < 0", self.batch(part, one, W1, threads=-1)[0]),
            ):
                calls += 1
                if rc != BAD_ARGUMENT:
                    problems.append(
                        f"{self.stems[part]}: {what} gives code {rc}, not BAD_ARGUMENT "
                        f"({BAD_ARGUMENT})"
                    )
        return calls, problems


def _bad_configurations(model, q: np.ndarray, bound: float):
    """Bad copies of ``q``: a NaN, an infinity, an entry beyond the model's range and, where
    the model has a unit part, one not normalized."""
    from pvosimr.coordinates import unit_part_spans

    spans = unit_part_spans(model)
    units = {k for start, length in spans for k in range(start, start + length)}
    free = next((i for i in range(model.nq) if i not in units), None)
    for what, value in (("with a NaN", np.nan), ("with an infinity", np.inf)):
        bad = q.copy()
        bad[-1] = value
        yield what, bad
    if free is not None:
        far = q.copy()
        far[free] = 2 * bound
        yield "beyond the model's range", far
    if spans:
        off = q.copy()
        off[spans[0][0]] += 0.1
        yield "with a unit part not normalized", off

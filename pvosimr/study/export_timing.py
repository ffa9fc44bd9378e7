"""``pvosimr export --time``: the exported single call against Pinocchio's C++
``computeDelassusMatrix`` (EFPA), in one C++ program with no Python in the loop.

For each robot case the export (:func:`pvosimr.codegen.export`) is compiled with its own flags
and linked, statically, into a C++ program built against the headers and ``libpinocchio_default``
that the ``pin`` wheel installs (found by :func:`pvosimr.reference.bridge.build_recipe`, as the
bridge is).  The program loads the model from Pinocchio's own text serialization
(``pin.Model.saveToText``), builds the same constraint models, and on the same random
configurations:

- checks the exported G against Pinocchio's (worst ``max|ΔG| / max(1, max|G|)``; Pinocchio's
  routine fills the upper triangle, mirrored here as pin's Python binding does);
- times, in interleaved rounds, the exported call, ``computeDelassusMatrix`` and the
  Python-loaded library's own ``pvosimr_eval`` (the cached library of
  :func:`pvosimr.codegen.compile`, same compiler and flags, opened with ``dlopen``; the
  CPython it is also an extension for is loaded, never initialised, only so that it links);
- checks that the exported G is the Python-loaded library's bit for bit.

The report (Markdown) gives the median time per call of each and the ratios; the machine, the
load and the compilers are named in it.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr import zoo
from pvosimr.codegen import compile as compile_delassus
from pvosimr.codegen import export
from pvosimr.codegen.build import find_compiler
from pvosimr.notices import announce
from pvosimr.zoo.robot import random_configuration

from .machine import describe, one_line
from .progress import progress_bar
from .record import TEMPLATES, prose

__all__ = ["CASES", "PROGRAM", "time_cases"]

#: The cases timed by default: Atlas with welds at both feet, the Shadow hand's fingertips.
CASES = ("shadow_hand/fingertips_3d", "atlas/feet_6d")

PROGRAM = TEMPLATES / "export_timing.cpp"
"""The C++ program: ``@NAME@`` and ``@UP@`` stand for the export's name, ``@CONSTRAINTS@`` for
the C++ that builds the constraint models; its ``argv`` are named at its ``main``."""


def _se3(P: pin.SE3) -> str:
    R = ", ".join(repr(float(x)) for x in P.rotation.flatten())
    t = ", ".join(repr(float(x)) for x in P.translation)
    return f"[] {{ Eigen::Matrix3d R; R << {R}; return SE3(R, Eigen::Vector3d({t})); }}()"


def _constraints(cms: list) -> str:
    """C++ building the same ``RigidConstraintModel`` list."""
    lines = []
    for cm in cms:
        kind = "CONTACT_6D" if cm.type == pin.ContactType.CONTACT_6D else "CONTACT_3D"
        frame = str(cm.reference_frame).rsplit(".", 1)[-1]
        lines.append(
            f"  cms.push_back(RigidConstraintModel({kind}, model, {cm.joint1_id}, "
            f"{_se3(cm.joint1_placement)}, {cm.joint2_id}, {_se3(cm.joint2_placement)}, {frame}));"
        )
    return "\n".join(lines)


def time_case(case: str, folder: Path, configs: int, rounds: int, seconds: float) -> dict:
    """Export ``case``, build the C++ program, run it: its numbers, with the case's sizes."""
    from pvosimr.reference import bridge

    robot = zoo.load_case(case)
    model, cms = robot.model, list(robot.constraints)
    name = "g_" + case.replace("/", "_")
    exported = export(model, cms, folder / name, name=name, robot=case)
    f = compile_delassus(model, cms)
    recipe = bridge.build_recipe()
    cc = find_compiler()
    obj = folder / f"{name}.o"
    flags = exported.spec["part_flags"]["G"]
    subprocess.run(
        [*cc, *flags, "-c", str(exported.folder / f"{name}.c"), "-o", str(obj)], check=True
    )
    source = folder / f"{name}_timing.cpp"
    up = name.upper()
    program = PROGRAM.read_text(encoding="utf-8").replace("@NAME@", name).replace("@UP@", up)
    source.write_text(program.replace("@CONSTRAINTS@", _constraints(cms)))
    exe = folder / f"{name}_timing"
    command = [
        *recipe.compiler, "-std=c++17", "-O2", "-DNDEBUG", "-Wno-deprecated-declarations",
        *(f"-D{d}" for d in recipe.defines), *(f"-I{d}" for d in recipe.include_dirs[:2]),
        f"-I{exported.folder}", str(source), str(obj), "-o", str(exe),
        f"-L{recipe.library_dir}", "-lpinocchio_default", "-lboost_serialization",
        f"-Wl,-rpath,{recipe.library_dir}", "-ldl", "-lpthread", "-lm",
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    build_seconds = time.perf_counter() - started
    model.saveToText(str(folder / f"{name}.txt"))
    rng = np.random.default_rng(0)
    qs = np.array([random_configuration(model, rng) for _ in range(configs)])
    (folder / f"{name}.bin").write_bytes(np.ascontiguousarray(qs).tobytes())
    run = [str(exe), str(folder / f"{name}.txt"), str(folder / f"{name}.bin"), str(configs)]
    # the shared CPython the Python-loaded library was built against (it is also a CPython
    # extension: its symbols must resolve for dlopen)
    libdir, libpython = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")
    run += [str(Path(libdir or "") / (libpython or "libpython3.so")), str(f.library)]
    run += [str(rounds), str(seconds)]
    done = subprocess.run(run, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(run)} failed ({done.returncode}): {done.stdout}")
    numbers = {}
    for line in done.stdout.splitlines():
        key, *values = line.split()
        numbers[key] = [float(v) for v in values]
    return {
        "case": case, "nv": int(model.nv), "m": int(f.m), "numbers": numbers,
        "flags": " ".join(flags), "cxx": " ".join(command[:4]), "build_seconds": build_seconds,
        "stack": exported.spec["stack_bytes"],
    }  # fmt: skip


def time_cases(cases: list[str], configs: int = 64, rounds: int = 15, seconds: float = 0.2):
    """:func:`time_case` for every case, in a temporary folder; the rows.  Each case, a few
    minutes for Atlas from empty caches, says on stderr what it does as it starts, and a
    progress bar counts the cases."""
    for case in cases:  # a mistyped case ends the run before the first is timed
        zoo.load_case(case)
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="pvosimr-export-time-") as tmp,
        progress_bar(cases, desc="export --time", unit="case", file=sys.stderr) as bar,
    ):
        for k, case in enumerate(bar, 1):
            bar.set_postfix_str(case)
            announce(
                f"export --time: {case} ({k} of {len(cases)}): exporting it, compiling it and "
                f"the C++ program against Pinocchio, then {rounds} timing rounds …"
            )
            rows.append(time_case(case, Path(tmp), configs, rounds, seconds))
    return rows


def machine() -> dict[str, str]:
    """The machine description of the report (:func:`.machine.describe`), with the compiler."""
    version = subprocess.run([*find_compiler(), "--version"], capture_output=True, text=True)
    return describe(**{"C compiler": version.stdout.splitlines()[0]})


def report(rows: list[dict], command: str, info: dict[str, str], load_after: float) -> list[str]:
    """The Markdown report of :func:`time_cases`' rows."""
    head = prose(
        "export_timing",
        "head",
        command=command,
        machine=one_line(info),
        load_after=f"{load_after:.2f}",
    )
    lines = [
        head,
        "",
        "| case | nv | m | exported ns | Python library ns | Pinocchio ns | exported / Pinocchio "
        "| exported / Python library | bitwise | max rel. diff. to Pinocchio | stack B |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        n = r["numbers"]
        e, p, c = n["exported"], n["python_library"], n["pinocchio"]
        same, total = (int(x) for x in n["bitwise"])
        lines.append(
            f"| {r['case']} | {r['nv']} | {r['m']} | {e[0]:.0f} [{e[1]:.0f}–{e[2]:.0f}] "
            f"| {p[0]:.0f} [{p[1]:.0f}–{p[2]:.0f}] | {c[0]:.0f} [{c[1]:.0f}–{c[2]:.0f}] "
            f"| {e[0] / c[0]:.2f} | {e[0] / p[0]:.3f} | {same}/{total} "
            f"| {n['agreement'][0]:.1e} | {r['stack']} |"
        )
    flags = rows[0]["flags"] if rows else ""
    lines += ["", prose("export_timing", "foot", flags=flags), ""]
    return lines

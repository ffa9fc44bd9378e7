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
from .names import ATLAS_6D, SHADOW_3D
from .progress import progress_bar
from .record import prose

__all__ = ["CASES", "PROGRAM", "time_cases"]

#: The cases timed by default: Atlas with welds at both feet, the Shadow hand's fingertips.
CASES = (SHADOW_3D, ATLAS_6D)

PROGRAM = r"""
#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/delassus.hpp>
#include <pinocchio/serialization.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <dlfcn.h>
#include "@NAME@.h"

using namespace pinocchio;
typedef int (*eval_t)(const double*, const double*, double*, double*, long long*, int);
static double w[@UP@_SZ_W], w2[@UP@_SZ_W];
static long long iw[@UP@_SZ_IW], iw2[@UP@_SZ_IW];

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* argv: model.txt qs.bin B libpython python_library rounds seconds_per_round */
int main(int argc, char** argv) {
  if (argc < 8) return 9;
  Model model;
  model.loadFromText(argv[1]);
  Data data(model);
  std::vector<RigidConstraintModel> cms;
@CONSTRAINTS@
  std::vector<RigidConstraintData> cds;
  for (const auto& c : cms) cds.push_back(RigidConstraintData(c));
  const long B = std::atol(argv[3]);
  std::vector<double> qs(B * @UP@_NQ);
  FILE* f = std::fopen(argv[2], "rb");
  if (!f || std::fread(qs.data(), sizeof(double), qs.size(), f) != qs.size()) return 8;
  std::fclose(f);
  if (!dlopen(argv[4], RTLD_NOW | RTLD_GLOBAL)) { std::printf("error %s\n", dlerror()); return 7; }
  void* lib = dlopen(argv[5], RTLD_NOW | RTLD_LOCAL);
  eval_t py = lib ? (eval_t)dlsym(lib, "pvosimr_eval") : nullptr;
  if (!py) { std::printf("error %s\n", dlerror()); return 6; }
  const int rounds = std::atoi(argv[6]);
  const double budget = std::atof(argv[7]);
  Eigen::MatrixXd D(@UP@_M, @UP@_M), G(@UP@_M, @UP@_M), P(@UP@_M, @UP@_M);
  double worst = 0;
  long same = 0;
  for (long b = 0; b < B; ++b) {
    Eigen::Map<const Eigen::VectorXd> q(qs.data() + b * @UP@_NQ, @UP@_NQ);
    D.setZero();
    computeDelassusMatrix(model, data, q, cms, cds, D, 0.0);
    /* it fills the upper triangle: the lower is its mirror (what pin's Python binding does) */
    D.triangularView<Eigen::StrictlyLower>() = D.transpose();
    if (@NAME@_eval(q.data(), nullptr, G.data(), w, iw) != 0) return 5;
    if (py(q.data(), nullptr, P.data(), w2, iw2, 1) != 0) return 4;
    worst = std::max(worst, (G - D).cwiseAbs().maxCoeff() / std::max(1.0, D.cwiseAbs().maxCoeff()));
    same += std::equal(G.data(), G.data() + G.size(), P.data());
  }
  std::printf("agreement %.3e\nbitwise %ld %ld\n", worst, same, B);
  std::vector<double> t[3];
  volatile double sink = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 3; ++k) {
      const int method = (k + r) % 3;  /* the order rotates: no method always runs first */
      long calls = 0;
      const double start = now();
      double stop;
      do {
        for (long b = 0; b < B; ++b) {
          const double* q = qs.data() + b * @UP@_NQ;
          if (method == 0) @NAME@_eval(q, nullptr, G.data(), w, iw);
          else if (method == 1) py(q, nullptr, G.data(), w2, iw2, 1);
          else computeDelassusMatrix(model, data, Eigen::Map<const Eigen::VectorXd>(q, @UP@_NQ),
                                     cms, cds, D, 0.0);
          sink += method == 2 ? D(0, 0) : G(0, 0);
        }
        calls += B;
        stop = now();
      } while (stop - start < budget);
      t[method].push_back((stop - start) / calls * 1e9);
    }
  }
  const char* names[3] = {"exported", "python_library", "pinocchio"};
  for (int k = 0; k < 3; ++k) {
    std::sort(t[k].begin(), t[k].end());
    std::printf("%s %.1f %.1f %.1f\n", names[k], t[k][t[k].size() / 2], t[k].front(),
                t[k].back());
  }
  return 0;
}
"""


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


def _libpython() -> str:
    """The shared CPython the Python-loaded library was built against (it is also a CPython
    extension: its symbols must resolve for ``dlopen``)."""
    folder, name = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")
    return str(Path(folder or "") / (name or "libpython3.so"))


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
    program = PROGRAM.replace("@NAME@", name).replace("@UP@", up)
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
    run += [_libpython(), str(f.library), str(rounds), str(seconds)]
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

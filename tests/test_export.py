"""pvosimr.codegen.export: standalone C built without Python, bit for bit the Python-loaded library.

A small C program (below) reads q's (and W's) on stdin, evaluates them with the export's entry
points, and writes the codes, the outputs and the number of heap allocations made while the
entry points ran (a counting malloc linked into the program interposes libc's) on stdout.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from _codegen import codegen_or_skip

from pvosimr.reference.truth import dense_delassus, rel_err
from pvosimr.zoo.robot import random_configuration

codegen = codegen_or_skip()
from pvosimr.codegen import standalone as exporting  # noqa: E402  (after the skip)

# each test builds an export three times (its stack check, the Python library, the test program)
pytestmark = pytest.mark.slow

COUNTING_MALLOC = r"""
#include <stddef.h>
/* Heap allocations while counting: libc's malloc interposed by the program's own. */
extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
static volatile int counting = 0;
static volatile long allocations = 0;
void* malloc(size_t n) { if (counting) ++allocations; return __libc_malloc(n); }
void* calloc(size_t k, size_t n) { if (counting) ++allocations; return __libc_calloc(k, n); }
void* realloc(void* p, size_t n) { if (counting) ++allocations; return __libc_realloc(p, n); }
void counting_start(void) { allocations = 0; counting = 1; }
long counting_stop(void) { counting = 0; return allocations; }
"""

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "@NAME@.h"

#ifdef __cplusplus
extern "C" {
#endif
void counting_start(void);
long counting_stop(void);
#ifdef __cplusplus
}
#endif

static double w[@UP@_SZ_W];
static long long iw[@UP@_SZ_IW];

/* argv[1]: eval | batch | vjp | derivatives; argv[2]: rows; argv[3]: threads (batch) */
int main(int argc, char** argv) {
  const char* mode = argv[1];
  long long B = atoll(argv[2]), r, bad = -1;
  int threads = argc > 3 ? atoi(argv[3]) : 1;
  int vjp = !strcmp(mode, "vjp");
  long long in = @UP@_NQ + (vjp ? @UP@_M * @UP@_M : 0);
  long long out = vjp ? @UP@_NV : !strcmp(mode, "derivatives") ? @UP@_NV * @UP@_M * @UP@_M
                                                             : @UP@_M * @UP@_M;
  double* x = (double*)malloc(sizeof(double) * (size_t)(B * in + 1));
  double* y = (double*)calloc((size_t)(B * out + 1), sizeof(double));
  int* rc = (int*)calloc((size_t)B + 1, sizeof(int));
  long made;
  double p[@UP@_NP + 1];
  const double* placements = @UP@_NP ? p : NULL;  /* placements as inputs: first on stdin */
  if (@UP@_NP && fread(p, sizeof(double), @UP@_NP, stdin) != (size_t)@UP@_NP) return 8;
  if (fread(x, sizeof(double), (size_t)(B * in), stdin) != (size_t)(B * in)) return 9;
  counting_start();
  if (!strcmp(mode, "batch")) {
    rc[0] = @NAME@_eval_batch(x, B, placements, y, threads, &bad);
  } else {
    for (r = 0; r < B; ++r) {
      const double* q = x + r * in;
      double* o = y + r * out;
#ifdef WITH_VJP
      if (vjp) { rc[r] = @NAME@_vjp(q, placements, q + @UP@_NQ, o, w, iw); continue; }
#endif
#ifdef WITH_DERIVATIVES
      if (!strcmp(mode, "derivatives")) {
        rc[r] = @NAME@_derivatives(q, placements, o, w, iw);
        continue;
      }
#endif
      rc[r] = @NAME@_eval(q, placements, o, w, iw);
    }
  }
  made = counting_stop();
  fwrite(&made, sizeof(long), 1, stdout);
  fwrite(&bad, sizeof(long long), 1, stdout);
  fwrite(rc, sizeof(int), (size_t)B, stdout);
  fwrite(y, sizeof(double), (size_t)(B * out), stdout);
  return 0;
}
"""


def program_source(name: str, parts=()) -> str:
    defines = "".join(f"#define WITH_{part.upper()}\n" for part in parts)
    return defines + PROGRAM.replace("@NAME@", name).replace("@UP@", name.upper())


def run_program(exe: Path, mode: str, rows: np.ndarray, out_size: int, threads: int = 1, p=None):
    """``(allocations, bad row, codes, outputs)`` of the program on ``rows`` (B, in) (and the
    placements ``p`` of an export that takes them)."""
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    B = len(rows)
    head = b"" if p is None else np.ascontiguousarray(p, dtype=np.float64).tobytes()
    done = subprocess.run(
        [str(exe), mode, str(B), str(threads)], input=head + rows.tobytes(),
        capture_output=True, check=True,
    )  # fmt: skip
    data = done.stdout
    allocations = int(np.frombuffer(data[:8], np.int64)[0])
    bad = int(np.frombuffer(data[8:16], np.int64)[0])
    codes = np.frombuffer(data[16 : 16 + 4 * B], np.int32)
    outputs = np.frombuffer(data[16 + 4 * B :], np.float64).reshape(B, out_size)
    return allocations, bad, codes, outputs


#: The right sole: a frame 5 cm and 0.3 rad off its joint.
SOLE = pin.SE3(pin.utils.rotate("x", 0.3), np.array([0.05, 0.0, 0.0]))


def humanoid(n_constraints: int = 2, second=pin.ContactType.CONTACT_3D):
    """The sample humanoid, a 6D weld at the left foot (and a 3D contact, or ``second``, at
    the right sole, a frame 5 cm and 0.3 rad off its joint)."""
    model = pin.buildSampleModelHumanoid()
    right = model.getJointId("rleg_wrist2_joint")
    model.addFrame(pin.Frame("rsole", right, SOLE, pin.FrameType.OP_FRAME))
    ends = [(model.getJointId("lleg_wrist2_joint"), pin.SE3.Identity(), pin.ContactType.CONTACT_6D)]
    ends += [(right, SOLE, second)]
    cms = [
        pin.RigidConstraintModel(kind, model, joint, placement, pin.ReferenceFrame.LOCAL)
        for joint, placement, kind in ends[:n_constraints]
    ]
    for cm, name in zip(cms, ("lfoot", "rsole"), strict=False):
        cm.name = name
    return model, cms


def draws(model, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([random_configuration(model, rng) for _ in range(k)])


def column_major(G: np.ndarray) -> np.ndarray:
    """A Python output (…, m, m) as the C buffer lays it out (each matrix column-major)."""
    return np.ascontiguousarray(np.swapaxes(G, -1, -2)).reshape(len(G), -1)


@pytest.fixture(scope="module")
def small_export(tmp_path_factory):
    """The humanoid with one 6D weld and one 3D contact, exported and built with plain
    ``cc -std=c99`` and the program; with the Python-loaded library of the same flags."""
    folder = tmp_path_factory.mktemp("export")
    model, cms = humanoid()
    flags = ("-O1",)  # quickest for this small model; the Python library gets the same
    exported = exporting.export(model, cms, folder / "humanoid", name="humanoid", flags=flags)
    f = codegen.compile(model, cms, flags=flags, cache_dir=folder / "cache")
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    (folder / "main.c").write_text(program_source("humanoid"))
    (folder / "counting.c").write_text(COUNTING_MALLOC)
    exe = folder / "main"
    # ISO C99 turns GCC's FMA contraction off: -ffp-contract=fast keeps the library's bits.
    command = [
        compiler, "-std=c99", "-ffp-contract=fast", *exporting.export_flags(flags),
        f"-I{exported.folder}", str(exported.folder / "humanoid.c"), str(folder / "main.c"),
        str(folder / "counting.c"),
        "-o", str(exe), "-lm",
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    return model, cms, f, exported, exe


def test_the_export_writes_its_files_and_documents_the_abi(small_export):
    model, _cms, _f, exported, _ = small_export
    names = sorted(p.name for p in exported.folder.iterdir())
    assert names == sorted(
        ["humanoid.c", "humanoid.h", "CMakeLists.txt", "humanoidConfig.cmake", "README.md",
         "export.json", "model.txt"]
    )  # fmt: skip
    header = (exported.folder / "humanoid.h").read_text()
    digest = exporting.model_hash(model)
    assert len(digest) == 64  # the whole SHA-256, named as such
    for line in (
        f"#define HUMANOID_NQ {model.nq}", f"#define HUMANOID_NV {model.nv}",
        "#define HUMANOID_M 9", 'extern "C"', "HUMANOID_BAD_Q = 1", "lleg_wrist2_joint",
        f"SHA-256 of pin.Model.saveToString() (model.txt): {digest}",
        f'#define HUMANOID_MODEL_SHA256 "{digest}"', f"pin: {pin.__version__}",
        "algorithm: pv-osimr", "lfoot: rows 0..5, 6D rigid", "rsole: rows 6..8, 3D rigid",
        "rows 0..2: linear velocity of c1's origin, in c1's axes (LOCAL)",
        "rows 3..5: angular velocity of c1, in c1's axes (LOCAL)",
        "c1: frame rsole on joint rleg_wrist2_joint, t = [0.05 0 0], "
        "R = [1 0 0; 0 0.955336 -0.29552; 0 0.29552 0.955336]",
        "v: linear then angular velocity of the base, in",
    ):  # fmt: skip
        assert line in header, line
    assert exported.spec["stack_bytes"] > 0
    assert f"#define HUMANOID_STACK_BYTES {exported.spec['stack_bytes']}" in header
    joint = model.joints[model.getJointId("lleg_wrist2_joint")]
    assert re.search(rf"lleg_wrist2_joint +q\[{joint.idx_q}\] +v\[{joint.idx_v}\]", header)


TABLES = r"""
#include <stdio.h>
#include "humanoid.h"
int main(void) {
  int j, k, i;
  for (j = 0; j < HUMANOID_NJOINTS; ++j)
    printf("%s %s %d %d %d %d\n", humanoid_joint_names[j], humanoid_joint_kinds[j],
           humanoid_joint_idx_q[j], humanoid_joint_nq[j], humanoid_joint_idx_v[j],
           humanoid_joint_nv[j]);
  for (k = 0; k < HUMANOID_NCONSTRAINTS; ++k) {
    printf("%s %s %s %s %d %d", humanoid_constraint_names[k], humanoid_constraint_frames[k],
           humanoid_constraint_joint1[k], humanoid_constraint_joint2[k],
           humanoid_constraint_first_row[k], humanoid_constraint_rows[k]);
    for (i = 0; i < 24; ++i) printf(" %.17g", humanoid_constraint_placements[k][i / 12][i % 12]);
    printf("\n");
  }
  return 0;
}
"""


def test_the_header_tables_give_joint_offsets_and_constraint_frames(small_export, tmp_path):
    """What a controller wires without Python: every joint's q and v offsets, every
    constraint's frame, joints, rows and placements (p's format), read from the C tables."""
    model, cms, _f, exported, _ = small_export
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    (tmp_path / "tables.c").write_text(TABLES)
    exe = tmp_path / "tables"
    command = [
        compiler, "-O0", f"-I{exported.folder}", str(tmp_path / "tables.c"),
        str(exported.folder / "humanoid.c"), "-o", str(exe), "-lm", "-pthread",
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    lines = lines.splitlines()
    joints = [
        f"{model.names[j]} {joint.shortname()} {joint.idx_q} {joint.nq} {joint.idx_v} {joint.nv}"
        for j, joint in enumerate(model.joints)
        if j > 0
    ]
    assert lines[: len(joints)] == joints
    from pvosimr.kinematics.placements import placement_vector

    expected = (("lleg_wrist2_body", 0, 6), ("rsole", 6, 3))  # the weld: the link's frame
    for line, cm, (frame, first, size) in zip(lines[len(joints) :], cms, expected, strict=True):
        name, *fields = line.split(" ")
        assert name == cm.name
        assert fields[:5] == [frame, model.names[cm.joint1_id], "universe", str(first), str(size)]
        placements = np.array(fields[5:], dtype=float)
        own = placement_vector(model, [cm], [cm.joint1_placement])
        assert np.array_equal(placements[:12], own)


def test_the_c99_build_is_the_python_library_bit_for_bit_and_does_not_allocate(small_export):
    model, cms, f, _, exe = small_export
    qs = draws(model, 6)
    allocations, _, codes, G = run_program(exe, "eval", qs, f.m * f.m)
    assert allocations == 0
    assert (codes == 0).all()
    expected = column_major(np.array([f(q) for q in qs]))
    assert np.array_equal(G.view(np.int64), expected.view(np.int64))  # bit for bit
    truth = dense_delassus(model, qs[0], cms)
    assert rel_err(G[0].reshape(f.m, f.m, order="F"), truth) < 1e-10
    # the batch on two threads: the Python batch's bits (its rows on vector lanes too)
    allocations, bad, codes, Gs = run_program(exe, "batch", qs, f.m * f.m, threads=2)
    assert allocations > 0  # the batch's work arrays: the counting malloc sees them
    assert bad == -1 and codes[0] == 0
    assert np.array_equal(Gs.view(np.int64), column_major(f(qs, threads=2)).view(np.int64))
    assert np.abs(Gs - expected).max() <= 1e-13 * np.abs(expected).max()


def test_the_exported_call_refuses_what_python_refuses(small_export):
    model, _cms, f, _, exe = small_export
    q = draws(model, 1, seed=3)[0]
    bad = np.array([q, q, q, q])
    bad[0, 0] = np.nan
    bad[1, 3:7] *= 1.01  # the free-flyer's quaternion, not normalized
    bad[2, 10] = np.inf
    for row in bad[:3]:
        with pytest.raises(ValueError):
            f(row)
    _, _, codes, _ = run_program(exe, "eval", bad, f.m * f.m)
    assert list(codes) == [1, 1, 1, 0]
    _, first_bad, codes, _ = run_program(exe, "batch", bad[::-1], f.m * f.m, threads=2)
    assert codes[0] == 1 and first_bad == 1


def every_recorded_kind(model: pin.Model) -> list:
    """One constraint model of each kind the export records, on the sample humanoid."""
    from pvosimr.constraints import rows

    hand, foot = model.getJointId("larm_wrist2_joint"), model.getJointId("rleg_wrist2_joint")
    placed = pin.SE3(pin.utils.rotate("z", 0.4), np.array([0.02, -0.03, 0.05]))
    two_body = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_6D, model, hand, placed, foot, SOLE,
        pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    )  # fmt: skip
    two_body.name = "hand_to_foot"
    cms = [two_body, rows(two_body, [0, 1, 5]), rows(two_body, np.ones((1, 6)))]
    if hasattr(pin, "FrameAnchorConstraintModel"):
        anchor = pin.FrameAnchorConstraintModel(model, hand, placed, foot, SOLE)
        point = pin.PointAnchorConstraintModel(model, foot, SOLE, 0, placed)
        contact = pin.PointContactConstraintModel(model, hand, placed)
        friction = pin.JointFrictionConstraintModel(model, pin.StdVec_Index([2, 5]))
        cms += [anchor, point, pin.ConstraintModel(contact), friction]
    return cms


def test_the_constraint_records_rebuild_the_same_rows():
    """What travels in export.json rebuilds constraint models with the same G at any q."""
    model = pin.buildSampleModelHumanoid()
    cms = every_recorded_kind(model)
    records = exporting.constraint_records(model, cms)
    rebuilt = exporting.constraints_from_records(model, json.loads(json.dumps(records)))
    assert [r["type"] for r in records][:3] == ["RigidConstraintModel", "rows", "rows"]
    for q in draws(model, 3):  # the generic wrapper is rebuilt as the model it holds, whose
        # rows the truth forms from frame Jacobians rather than pin.getConstraintJacobian
        assert rel_err(dense_delassus(model, q, rebuilt), dense_delassus(model, q, cms)) < 1e-14
    if hasattr(pin, "JointLimitConstraintModel"):
        limits = pin.JointLimitConstraintModel(model, pin.StdVec_Index([2]))
        with pytest.raises(ValueError, match=r"constraint 1 \(JointLimitConstraintModel\)"):
            exporting.constraint_records(model, [cms[0], limits])


def test_export_refuses_a_folder_in_use_and_a_bad_name(tmp_path):
    model, cms = humanoid(1)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(exporting.ExportError, match="not empty"):
        exporting.export(model, cms, tmp_path / "used", name="x")
    with pytest.raises(exporting.ExportError, match="C identifier"):
        exporting.export(model, cms, tmp_path / "new", name="2-bad")
    assert not (tmp_path / "new").exists()
    assert (tmp_path / "used" / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_cmake_build_find_package_and_cxx17_match_python_on_every_entry_point(tmp_path):
    cmake, cxx = shutil.which("cmake"), shutil.which("c++")
    if cmake is None or cxx is None:
        pytest.skip("needs cmake and a C++ compiler")
    model, cms = humanoid()
    exported = exporting.export(
        model, cms, tmp_path / "src", name="biped", vjp=True, derivatives=True
    )
    f = codegen.compile(model, cms, vjp=True, derivatives=True, cache_dir=tmp_path / "cache")
    prefix, build = tmp_path / "prefix", tmp_path / "build"
    built = {}
    for command in (
        [cmake, "-S", str(exported.folder), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
        [cmake, "--build", str(build), "-j", "2"],
        [cmake, "--install", str(build), "--prefix", str(prefix)],
    ):
        built[command[1]] = subprocess.run(command, check=True, capture_output=True, text=True)
    # each source compiled once, for the shared and the static library both
    compiled = re.findall(r"Building C object \S+", built["--build"].stdout)
    assert len(compiled) == 3, compiled
    assert (prefix / "lib" / "libbiped.a").is_file() or (prefix / "lib64" / "libbiped.a").is_file()
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "main.cpp").write_text(program_source("biped", ("vjp", "derivatives")))
    (consumer / "counting.c").write_text(COUNTING_MALLOC)
    (consumer / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(consumer LANGUAGES C CXX)\n"
        "set(CMAKE_CXX_STANDARD 17)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\n"
        "find_package(biped REQUIRED)\nadd_executable(main main.cpp counting.c)\n"
        "target_link_libraries(main PRIVATE biped::biped_static)\n"
    )
    for command in (
        [cmake, "-S", str(consumer), "-B", str(consumer / "build"),
         f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_CXX_COMPILER={cxx}"],
        [cmake, "--build", str(consumer / "build")],
    ):  # fmt: skip
        subprocess.run(command, check=True, capture_output=True)
    exe = consumer / "build" / "main"
    qs = draws(model, 4, seed=5)
    m, nv = f.m, f.nv
    allocations, _, codes, G = run_program(exe, "eval", qs, m * m)
    assert allocations == 0 and (codes == 0).all()
    assert np.array_equal(G, column_major(np.array([f(q) for q in qs])))
    Ws = np.random.default_rng(1).standard_normal((len(qs), m, m))
    rows = np.hstack([qs, Ws.reshape(len(qs), -1)])  # W row-major, as numpy holds it
    allocations, _, codes, g = run_program(exe, "vjp", rows, nv)
    assert allocations == 0 and (codes == 0).all()
    assert np.array_equal(g, np.array([f.vjp(q, W) for q, W in zip(qs, Ws, strict=True)]))
    allocations, _, codes, dG = run_program(exe, "derivatives", qs, nv * m * m)
    assert allocations == 0 and (codes == 0).all()
    expected = np.array([f.derivatives(q) for q in qs]).swapaxes(-1, -2)
    assert np.array_equal(dG, expected.reshape(len(qs), -1))


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_every_file_builds_without_a_warning(tmp_path, compiler):
    """-Wall -Wextra -Werror at the export's own flags, on every file: G (m = 12, so that the
    vector lanes divide m²: no loop over the rows left), the gradient and dG."""
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler}")
    model, cms = humanoid(second=pin.ContactType.CONTACT_6D)
    exported = exporting.export(
        model, cms, tmp_path / "src", name="quiet", vjp=True, derivatives=True
    )
    assert exported.spec["m"] == 12
    for part, flags in exported.spec["part_flags"].items():
        source = exported.folder / f"quiet{'' if part == 'G' else '_' + part}.c"
        command = [compiler, *flags, "-Wall", "-Wextra", "-Werror", "-c", str(source)]
        if compiler == "clang":  # its -Wall -Wextra are the front end's: no code needed (-O1
            command.append("-fsyntax-only")  # of dG takes clang a minute)
        run = subprocess.run(
            [*command, "-o", str(tmp_path / f"{part}.o")], capture_output=True, text=True
        )
        assert run.returncode == 0 and not run.stderr, run.stderr[-3000:]


@pytest.mark.slow
def test_placements_as_inputs_are_the_python_library_bit_for_bit(tmp_path):
    model, cms = humanoid()
    exported = exporting.export(model, cms, tmp_path / "src", name="placed", placements="input")
    assert exported.spec["n_p"] == 24
    f = codegen.compile(model, cms, placements="input", cache_dir=tmp_path / "cache")
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    (tmp_path / "main.c").write_text(program_source("placed"))
    (tmp_path / "counting.c").write_text(COUNTING_MALLOC)
    exe = tmp_path / "main"
    command = [
        compiler, *exporting.export_flags(("-O3",)), f"-I{exported.folder}",
        str(exported.folder / "placed.c"), str(tmp_path / "main.c"), str(tmp_path / "counting.c"),
        "-o", str(exe), "-lm",
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True)
    rng = np.random.default_rng(2)
    placements = [pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3)) for _ in cms]
    from pvosimr.kinematics.placements import placement_vector

    p = placement_vector(model, cms, placements)
    qs = draws(model, 5, seed=9)
    allocations, _, codes, G = run_program(exe, "eval", qs, f.m * f.m, p=p)
    assert allocations == 0 and (codes == 0).all()
    expected = column_major(np.array([f(q, placements=placements) for q in qs]))
    assert np.array_equal(G, expected)
    moved = [pin.RigidConstraintModel(c) for c in cms]
    for c, P in zip(moved, placements, strict=True):
        c.joint1_placement = P
    truth = dense_delassus(model, qs[0], moved)
    assert rel_err(G[0].reshape(f.m, f.m, order="F"), truth) < 1e-10
    _, bad, codes, Gs = run_program(exe, "batch", qs, f.m * f.m, threads=2, p=p)
    assert bad == -1 and codes[0] == 0
    assert np.array_equal(Gs, column_major(f(qs, placements=placements, threads=2)))


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))

"""pvosimr.codegen.build: the compiled q ↦ G equals the numpy path, is cached, and fails clearly."""

import ctypes
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from _codegen import FAST, codegen_or_skip
from _trees import DEFAULT_JOINT_TYPES, TreeSpec, build_tree, random_q

import pvosimr
from pvosimr.codegen import cache as entries
from pvosimr.codegen import compiler as toolchain
from pvosimr.codegen.c_source import FINITE_C
from pvosimr.kinematics.joints import unit_parts
from pvosimr.notices import QUIET_VARIABLE
from pvosimr.reference.truth import rel_err
from pvosimr.zoo import presets
from pvosimr.zoo.robot import random_configuration

codegen = codegen_or_skip()


@pytest.fixture(scope="session")
def cache(codegen_cache):
    return codegen_cache


@pytest.fixture(scope="session")
def atlas_feet(atlas, tmp_path_factory):
    cms = presets.ATLAS_PRESETS["feet_6d"](atlas)
    cache = tmp_path_factory.mktemp("atlas")  # its own folder: compiled here, whatever ran before
    return atlas, cms, codegen.compile(atlas, cms, cache_dir=cache)  # default flags (-O3)


@pytest.fixture(scope="session")
def every_joint_tree(cache):
    """One tree with every supported joint type (free-flyer root), 3D and 6D constraints."""
    kinds = list(DEFAULT_JOINT_TYPES)
    kinds.remove("FreeFlyer")
    kinds.insert(0, "FreeFlyer")
    parents = [0] + [i for i in range(1, len(kinds))]  # a chain ...
    parents[9] = 4  # ... with a branch at joint 4, so constraints meet at a branching link
    spec = TreeSpec(
        parents,
        kinds,
        [
            (8, pin.ContactType.CONTACT_6D),
            (len(kinds), pin.ContactType.CONTACT_3D),
            (12, pin.ContactType.CONTACT_6D),
        ],
        armature=True,
        seed=7,
    )
    model, cms = build_tree(spec)
    return model, cms, codegen.compile(model, cms, cache_dir=cache, flags=FAST)


@pytest.mark.slow  # compiles Atlas's generated code at -O3
def test_matches_numpy_on_atlas_feet_6d(atlas_feet):
    model, cms, f = atlas_feet
    data = model.createData()
    rng = np.random.default_rng(0)
    assert f.m == 12 and f.compiled
    for _ in range(5):
        q = random_configuration(model, rng) if rng.random() < 0.5 else random_q(model, rng)
        expected = pvosimr.compute_delassus(model, data, q, cms)
        assert rel_err(f(q), expected) <= 1e-10


@pytest.mark.slow  # builds C libraries of its own
def test_matches_numpy_on_every_joint_type(every_joint_tree):
    model, cms, f = every_joint_tree
    data = model.createData()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = random_q(model, rng)
        G = f(q)
        assert G.shape == (f.m, f.m) == (15, 15)
        assert rel_err(G, pvosimr.compute_delassus(model, data, q, cms)) <= 1e-10
        assert rel_err(f(list(q)), G) == 0.0  # any sequence, same numbers
        with pytest.raises(ValueError, match=r"shape \(\d+, 1\).*single configuration is 1-D"):
            f(q.reshape(-1, 1))  # one rule for q: a column is neither one q nor a batch


@pytest.mark.slow  # builds C libraries of its own
def test_the_callers_subnormal_numbers_come_back(every_joint_tree):
    """The generated code flushes subnormal numbers to zero while it runs (x86), and gives the
    caller's floating-point mode back: after a single call and a batch, numpy's arithmetic
    still makes subnormal numbers."""
    model, _, f = every_joint_tree
    qs = np.array([random_q(model, np.random.default_rng(k)) for k in range(20)])
    tiny = np.float64(np.finfo(float).tiny)
    assert tiny / 4 > 0
    f(qs[0])
    assert tiny / 4 > 0
    f(qs, threads=2)
    assert tiny / 4 > 0
    assert "_mm_setcsr(pvosimr_csr)" in f.source.read_text()


# a second C build of the every-joint tree (~6 s): in the slow suite
@pytest.mark.slow
def test_other_algorithms_compile_too(every_joint_tree, cache):
    model, cms, _ = every_joint_tree
    f = codegen.compile(model, cms, "efpa", cache_dir=cache, flags=FAST)
    q = random_q(model, np.random.default_rng(2))
    assert rel_err(f(q), pvosimr.compute_delassus(model, model.createData(), q, cms)) <= 1e-10


@pytest.mark.slow  # builds C libraries of its own
def test_cache_is_reused_without_running_the_compiler(every_joint_tree, cache, monkeypatch):
    model, cms, first = every_joint_tree
    calls = []
    monkeypatch.setattr(codegen, "_run_compiler", lambda command: calls.append(command))
    again = codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    assert calls == [] and not again.compiled and again.compile_seconds == 0.0
    assert again.library == first.library and again.library.exists() and again.source.exists()
    # Another flag set is another library: the compiler is asked again.
    with pytest.raises(FileNotFoundError):  # the stub compiler produced no library
        codegen.compile(model, cms, cache_dir=cache, flags=("-O0",))
    assert len(calls) == 1 and "-O0" in calls[0]


@pytest.mark.slow  # builds C libraries of its own
def test_a_moved_constraint_is_new_source(every_joint_tree):
    model, cms, _ = every_joint_tree
    moved = list(cms)
    moved[0] = pin.RigidConstraintModel(
        cms[0].type, model, cms[0].joint1_id, pin.SE3(np.eye(3), np.r_[0, 0, 0.125]), pin.LOCAL
    )
    source, _ = codegen.generate_source(model, moved)
    assert source != codegen.generate_source(model, cms)[0]


def test_missing_compiler_is_a_clear_error(monkeypatch, tmp_path):
    model, cms = build_tree(
        TreeSpec([0, 1], ["RZ", "RY"], [(2, pin.ContactType.CONTACT_3D)], armature=False, seed=0)
    )
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no cc, gcc or clang on it
    with pytest.raises(codegen.CompilerNotFoundError, match="CC") as err:
        codegen.compile(model, cms, cache_dir=tmp_path)
    assert isinstance(err.value, OSError) and isinstance(err.value, RuntimeError)
    assert "apt-get install gcc" in str(err.value)
    monkeypatch.undo()
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    with pytest.raises(codegen.CompilerNotFoundError, match="CC="):
        codegen.compile(model, cms, cache_dir=tmp_path)


def test_failed_compilation_is_a_clear_error(tmp_path):
    model, cms = build_tree(
        TreeSpec([0], ["RZ"], [(1, pin.ContactType.CONTACT_3D)], armature=False, seed=0)
    )
    with pytest.raises(codegen.CompilationError, match="flags="):
        codegen.compile(model, cms, cache_dir=tmp_path, flags=("-fno-such-flag-pvosimr",))
    assert not list((tmp_path / "codegen").glob("*.so"))  # nothing half-built left behind


def _bad_configurations(model):
    q = pin.neutral(model)
    yield q[:-1], "shape"
    yield np.r_[q, 0.0], "shape"
    yield 0.5, "shape"
    nan = q.copy()
    nan[-1] = np.nan
    yield nan, "not finite"
    inf = q.copy()
    inf[0] = np.inf
    yield inf, "not finite"
    huge = q.copy()
    huge[0] = 1e200  # finite, but beyond what float64 kinematics can carry
    yield huge, "out of range"
    for joint in model.joints[1:]:
        for first, _ in unit_parts(joint):  # quaternions and (cos, sin), composites included
            bad = q.copy()
            bad[joint.idx_q + first] += 1e-2  # norm 1 + 5e-5 > pin's 1e-6
            yield bad, "not normalized"


@pytest.mark.slow  # builds C libraries of its own
def test_bad_q_raises(every_joint_tree):
    model, _, f = every_joint_tree
    seen = 0
    for q, message in _bad_configurations(model):
        with pytest.raises(ValueError, match=message):
            f(q)
        seen += 1
    assert seen >= 6 + 6  # shapes, non-finite and huge values, six unit-norm parts


@pytest.mark.slow  # compiles Atlas's generated code at -O3
def test_bad_q_raises_on_atlas(atlas_feet):
    model, _, f = atlas_feet
    for q, message in _bad_configurations(model):
        with pytest.raises(ValueError, match=message):
            f(q)


def test_singular_mass_matrix_raises(cache):
    model, cms = build_tree(
        TreeSpec([0, 1], ["RZ", "RZ"], [(2, pin.ContactType.CONTACT_6D)], armature=False, seed=3)
    )
    model.inertias[2] = pin.Inertia.Zero()
    f = codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    with pytest.raises(ValueError, match="singular"):
        f(pin.neutral(model))


def test_no_constraints_needs_no_compiler(monkeypatch, tmp_path):
    model, _ = build_tree(TreeSpec([0], ["RZ"], [], armature=False, seed=0))
    # $CC names no compiler: any lookup of one, by whatever function, raises.
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(toolchain.CompilerNotFoundError):
        toolchain.find_compiler("c")
    f = codegen.compile(model, [], cache_dir=tmp_path)
    assert f(pin.neutral(model)).shape == (0, 0)
    with pytest.raises(ValueError):
        f([0.0, 1.0])


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("PVOSIMR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert codegen.default_cache_dir() == tmp_path / "pvosimr"
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(tmp_path / "x"))
    assert codegen.default_cache_dir() == tmp_path / "x"


@pytest.mark.slow  # builds C libraries of its own
def test_binding_is_the_extension_where_headers_exist(every_joint_tree):
    model, _, f = every_joint_tree
    expected = "extension" if codegen.python_headers() else "ctypes"
    assert f.binding == expected
    q = random_q(model, np.random.default_rng(8))
    strided = np.repeat(q, 2)[::2]  # not contiguous: the general path, same numbers
    assert rel_err(f(strided), f(q)) == 0.0


# a second C build of the every-joint tree (~5 s): in the slow suite
@pytest.mark.slow
def test_ctypes_binding_without_headers(every_joint_tree, cache, monkeypatch):
    model, cms, extension = every_joint_tree
    monkeypatch.setattr(codegen, "python_headers", lambda: None)
    f = codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    assert f.binding == "ctypes" and f.library != extension.library
    q = random_q(model, np.random.default_rng(9))
    assert rel_err(f(q), pvosimr.compute_delassus(model, model.createData(), q, cms)) <= 1e-10
    for bad, message in _bad_configurations(model):
        with pytest.raises(ValueError, match=message):
            f(bad)


@pytest.mark.slow  # compiles Atlas's generated code at -O3
def test_threads_get_their_own_work_arrays(atlas_feet):
    from concurrent.futures import ThreadPoolExecutor

    model, _, f = atlas_feet
    rng = np.random.default_rng(10)
    qs = [random_configuration(model, rng) for _ in range(64)]
    expected = [f(q) for q in qs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(f, qs * 20))
    assert all(np.array_equal(G, expected[k % 64]) for k, G in enumerate(got))


@pytest.mark.slow  # builds C libraries of its own
def test_mimic_gripper_compiles_to_the_numpy_matrix(cache):
    """A mimic coupling (Schur complement on the relaxed tree) in generated code."""
    from pvosimr import zoo

    robot = zoo.load("panda_mimic", "fingers_3d")
    f = codegen.compile(robot.model, robot.constraints, cache_dir=cache)
    q = robot.q_random(np.random.default_rng(0))
    G = pvosimr.compute_delassus(robot.model, robot.model.createData(), q, robot.constraints)
    assert rel_err(f(q), G) <= 1e-12


# --------------------------------------------------------------------------- what it says, caches

REPO = Path(__file__).resolve().parents[1]

#: Compiles the smallest model with a constraint (6 rows) in ``sys.argv[1]`` and checks G;
#: prints whether it compiled and the library.
COMPILE_SMALL = """
import sys
import numpy as np, pinocchio as pin
import pvosimr
from pvosimr import codegen
from pvosimr.constraints import weld
model = pin.buildSampleModelManipulator()
cms = [weld(model, model.frames[-1].name)]
f = codegen.compile(model, cms, cache_dir=sys.argv[1], flags=("-O0",))
q = pin.neutral(model)
np.testing.assert_allclose(f(q), pvosimr.compute_delassus(model, model.createData(), q, cms))
print(f.compiled, f.library)
"""


def python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (a crash there fails the test, not the test run)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, **env}, timeout=300,
    )  # fmt: skip


@pytest.mark.slow  # a fresh interpreter that compiles
def test_a_truncated_library_is_set_aside_and_rebuilt(tmp_path):
    first = python(COMPILE_SMALL, str(tmp_path), PVOSIMR_QUIET="1")
    assert first.returncode == 0 and first.stderr == "", first.stderr
    compiled, path = first.stdout.split()
    library = Path(path)
    assert compiled == "True" and (library.parent / (library.name + ".sha256")).is_file()
    size = library.stat().st_size
    os.truncate(library, size // 2)  # a copy cut short: loaded as is, it was SIGBUS (exit -7)
    second = python(COMPILE_SMALL, str(tmp_path), PVOSIMR_QUIET="")
    assert second.returncode == 0, f"exit {second.returncode}: {second.stderr}"
    assert second.stdout.split() == ["True", path]
    (aside,) = library.parent.glob(library.name + ".damaged-*")
    assert aside.stat().st_size == size // 2 and library.stat().st_size == size
    said = second.stderr.splitlines()
    assert said[0].startswith(f"pvosimr: the cached {library.name} is damaged ({size // 2} bytes")
    assert "compiling" in said[1] and len(said) == 2
    third = python(COMPILE_SMALL, str(tmp_path), PVOSIMR_QUIET="")
    assert third.stdout.split() == ["False", path] and third.stderr == ""  # a hit: silent


def test_without_casadi_one_line_names_the_extra():
    code = "import sys; sys.modules['casadi'] = None\n" + COMPILE_SMALL
    done = python(code, "unused")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "ModuleNotFoundError: operation counts and code generation: needs CasADi: "
        'pip install "pvosimr[symbolic]"'
    )
    assert "During handling" not in done.stderr and "direct cause" not in done.stderr


@pytest.mark.slow  # seconds (measured)
def test_compiling_says_what_where_and_with_which_flags(tmp_path, capfd, monkeypatch):
    model = pin.buildSampleModelManipulator()  # small: this test compiles into a new folder
    cms = [pvosimr.constraints.weld(model, model.frames[-1].name)]
    monkeypatch.delenv(QUIET_VARIABLE, raising=False)
    capfd.readouterr()
    f = codegen.compile(model, cms, cache_dir=tmp_path, flags=FAST)
    (line,) = capfd.readouterr().err.splitlines()
    assert line.startswith("pvosimr: code generation: compiling ")
    compiler = Path(codegen.find_compiler()[0]).name
    lanes = f", batches on {f.simd_lanes} lanes (" if f.simd_lanes else " into "
    assert f"with {compiler} {shlex.join(FAST)}{lanes}" in line
    assert f" into {tmp_path / 'codegen'} " in line
    codegen.compile(model, cms, cache_dir=tmp_path, flags=FAST)
    assert capfd.readouterr().err == ""  # a cache hit says nothing


@pytest.mark.slow  # builds C libraries of its own
def test_a_slow_step_says_what_it_is_doing(every_joint_tree, cache, capfd, monkeypatch):
    model, cms, _ = every_joint_tree
    monkeypatch.delenv(QUIET_VARIABLE, raising=False)
    monkeypatch.setattr(codegen, "SLOW_SECONDS", 0.05)
    generate = codegen.generate_source

    def slow_generate(*args, **kwargs):
        time.sleep(0.5)  # as a large model's graph: the step outlasts SLOW_SECONDS
        return generate(*args, **kwargs)

    monkeypatch.setattr(codegen, "generate_source", slow_generate)
    capfd.readouterr()
    codegen.compile(model, cms, cache_dir=cache, flags=FAST)  # cached: only the graph is built
    (line,) = capfd.readouterr().err.splitlines()
    assert "building the expression graph of G (pv-osimr" in line and "writing its C" in line
    monkeypatch.setenv(QUIET_VARIABLE, "1")
    codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    assert capfd.readouterr().err == ""


@pytest.mark.slow  # builds C libraries of its own
def test_an_uncreatable_cache_folder_is_named_with_its_variable(
    every_joint_tree, tmp_path, monkeypatch
):
    model, cms, _ = every_joint_tree
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(blocker / "deep" / "path"))
    with pytest.raises(entries.CacheFolderError) as err:
        codegen.compile(model, cms, flags=FAST)
    message = str(err.value)
    assert f"{blocker / 'deep' / 'path' / 'codegen'} cannot be created" in message
    assert f"set by $PVOSIMR_CACHE_DIR={blocker / 'deep' / 'path'}" in message
    assert "\n" not in message
    with pytest.raises(entries.CacheFolderError, match="the cache_dir argument"):
        codegen.compile(model, cms, cache_dir=blocker, flags=FAST)


def test_an_entry_is_used_only_if_it_matches_its_record(tmp_path, capfd):
    entry = tmp_path / "lib.so"
    assert not entries.usable(entry)  # not built yet: nothing to say
    entry.write_bytes(b"built by an older pvosimr")  # no record
    assert not entries.usable(entry) and not entry.exists()
    assert "no size and hash recorded" in capfd.readouterr().err
    built = tmp_path / ".build.so"
    built.write_bytes(b"\x7fELF library")
    entries.record(built, entry)
    built.replace(entry)
    assert entries.usable(entry) and capfd.readouterr().err == ""
    entry.write_bytes(b"\x7fELF librarx")  # same size, one byte off: garbage in its place
    assert not entries.usable(entry)
    assert len(list(tmp_path.glob("lib.so.damaged-*"))) == 2
    assert "another hash than the 12 bytes recorded" in capfd.readouterr().err


def test_the_finite_check_finds_every_nan_and_infinity(tmp_path):
    """``pvosimr_finite``, the C check of every output, on 0 to 11 numbers (its groups of
    four and the rest): one NaN or infinity at any place is found; the largest, the smallest
    subnormal and zero of either sign are finite."""
    source = tmp_path / "finite.c"
    source.write_text(
        "typedef double casadi_real;\ntypedef long long casadi_int;\n"
        + FINITE_C
        + "int check(const double* x, long long n) { return pvosimr_finite(x, n); }\n"
    )
    library = tmp_path / "finite.so"
    command = [*toolchain.find_compiler(), "-O2", "-shared", "-fPIC", str(source)]
    subprocess.run([*command, "-o", str(library)], check=True)
    check = ctypes.CDLL(str(library)).check
    finite = [np.finfo(float).max, -np.finfo(float).max, 5e-324, -5e-324, 0.0, -0.0, 1.0]
    for n in range(12):
        x = np.array([finite[k % len(finite)] for k in range(n)])
        assert check(x.ctypes.data_as(ctypes.c_void_p), ctypes.c_longlong(n)) == 1
        for k in range(n):
            for bad in (np.nan, -np.nan, np.inf, -np.inf):
                y = x.copy()
                y[k] = bad
                assert check(y.ctypes.data_as(ctypes.c_void_p), ctypes.c_longlong(n)) == 0

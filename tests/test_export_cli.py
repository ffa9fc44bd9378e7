"""``pvosimr export`` and ``pvosimr validate --exported``: a user's mistakes are one line and
exit 2 (nothing compiled), a good export passes, a tampered one fails."""

import json
import os
import re
import shutil
import subprocess

import pytest
from _urdf import joint, link, robot

from pvosimr.study import cli

pytest.importorskip("casadi")


def run(capsys, *argv: str) -> tuple[int, str]:
    """Exit status and stderr of ``pvosimr ARGV``."""
    try:
        status = cli.main(list(argv))
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def test_an_unknown_robot_is_one_line_and_exit_2(capsys, tmp_path):
    status, err = run(capsys, "export", "no_such_robot", "--out", str(tmp_path / "x"))
    assert status == 2
    assert err.count("\n") == 1 and "unknown robot 'no_such_robot'" in err
    assert not (tmp_path / "x").exists()


def test_an_output_folder_in_use_is_one_line_and_exit_2(capsys, tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    status, err = run(capsys, "export", "solo12/feet_3d", "--out", str(tmp_path))
    assert status == 2
    assert err.count("\n") == 1 and "not empty" in err
    assert (tmp_path / "mine.txt").read_text() == "keep"


def test_no_c_compiler_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    status, err = run(capsys, "export", "solo12/feet_3d", "--out", str(tmp_path / "x"))
    assert status == 2
    assert err.count("\n") == 1 and "CC=" in err
    assert not (tmp_path / "x").exists()


def test_an_unsupported_constraint_is_refused_with_exit_2(capsys, tmp_path):
    argv = ["export", "solo12", "--weld-between", "FL_FOOT", "FL_FOOT"]
    status, err = run(capsys, *argv, "--out", str(tmp_path / "x"))
    assert status == 2
    assert err.count("\n") == 1 and "zero rows" in err


def test_validate_exported_without_an_export_is_exit_2(capsys, tmp_path):
    status, err = run(capsys, "validate", "--exported", str(tmp_path))
    assert status == 2 and "export.json" in err


def test_validate_exported_on_a_folder_without_its_model_is_exit_2(capsys, tmp_path):
    (tmp_path / "export.json").write_text(json.dumps({"name": "x", "parts": ["G"]}))
    status, err = run(capsys, "validate", "--exported", str(tmp_path))
    assert status == 2 and err.count("\n") == 1 and "model.txt" in err


def needs_a_compiler():
    if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
        pytest.skip("no C compiler")


@pytest.mark.slow
def test_export_then_validate_passes_and_a_tampered_export_fails(capsys, tmp_path):
    needs_a_compiler()
    folder = tmp_path / "solo"
    status, _ = run(capsys, "export", "solo12/feet_3d", "--out", str(folder))
    assert status == 0
    assert (folder / "solo.h").is_file()  # named after the folder
    status, _ = run(capsys, "validate", "--exported", str(folder))
    assert status == 0
    # a G that is not the truth: its first entry moved in the exported call
    source = folder / "solo.c"
    text = source.read_text()
    marker = "  PVOSIMR_FLUSH_END\n  if (i) return 3;"
    assert text.count(marker) == 1
    source.write_text(
        text.replace(marker, "  PVOSIMR_FLUSH_END\n  out[0] += 1e-3;\n  if (i) return 3;")
    )
    status, _ = run(capsys, "validate", "--exported", str(folder))
    assert status == 1
    source.write_text(text)
    # another model than the exported one
    spec = json.loads((folder / "export.json").read_text())
    spec["provenance"]["model sha256"] = "0" * 64
    (folder / "export.json").write_text(json.dumps(spec))
    status, _ = run(capsys, "validate", "--exported", str(folder))
    assert status == 1


@pytest.mark.slow
def test_validate_checks_the_unit_part_rule_and_bad_placements(capsys, tmp_path):
    """Spherical and ellipsoid joints: G reads their unit parts, so an export that used a q at
    norm 1 + 5e-7 as given (not normalised, as every other route does) fails; so does one that
    took a placement scaled by 2 (placements as inputs) without BAD_P."""
    needs_a_compiler()
    folder = tmp_path / "shoulders"
    status, _ = run(capsys, "export", "ellipsoid_shoulders", "--placements", "input", "--out",
                    str(folder))  # fmt: skip
    assert status == 0
    status = cli.main(["validate", "--exported", str(folder)])
    said = capsys.readouterr().out
    assert status == 0, said
    assert re.search(r"unit parts at norm 1 \+ 5e-7 +max error 0\.0e\+00", said), said
    source = folder / "shoulders.c"
    text = source.read_text()
    normalised, checked = "  arg[0] = pvosimr_unit_q(q, unit);", "if (check && pvosimr_check_p(p, "
    assert text.count(normalised) == 1 and text.count(checked) == 2
    source.write_text(text.replace(normalised, "  arg[0] = q; (void)unit;"))
    status, err = run(capsys, "validate", "--exported", str(folder))
    assert status == 1 and "unit parts at norm 1 + 5e-7: off by" in err, err
    source.write_text(text.replace(checked, "if (0 && pvosimr_check_p(p, ", 1))
    status, err = run(capsys, "validate", "--exported", str(folder))
    assert status == 1 and "a placement scaled by 2 gives codes 0 and 7" in err, err


def humanoid_export(folder, **options):
    """The sample humanoid (a Python-made model, no zoo case), a 6D weld and a 3D contact at
    a frame 5 cm and 0.3 rad off its joint, exported with ``options``."""
    from test_export import humanoid

    from pvosimr import codegen

    model, cms = humanoid()
    return codegen.export(model, cms, folder, name="biped", **options)


@pytest.mark.slow
def test_validate_checks_every_entry_point_of_a_python_made_export(capsys, tmp_path):
    """No zoo case: the model and constraints travel in the export; every entry point is
    checked, and one wrong gradient or dG fails the run."""
    needs_a_compiler()
    folder = humanoid_export(tmp_path / "biped", vjp=True, derivatives=True).folder
    status = cli.main(["validate", "--exported", str(folder)])
    out = capsys.readouterr().out
    assert status == 0, out
    for entry in ("biped_eval", "biped_vjp", "biped_derivatives"):
        assert re.search(rf"^  {entry} +max error", out, re.M), out
        assert re.search(rf"^  {entry}_batch \(2 threads\) +max error", out, re.M), out
    assert "on 16 configurations" in out and "wrong: 0" in out
    for part in ("vjp", "derivatives"):  # the gradient's first entry moved
        source = folder / f"biped_{part}.c"
        text = source.read_text()
        marker = "  PVOSIMR_FLUSH_END\n  if (i) return 3;"
        assert text.count(marker) == 1
        source.write_text(
            text.replace(marker, "  PVOSIMR_FLUSH_END\n  out[0] += 1e-4;\n  if (i) return 3;")
        )
        status = cli.main(["validate", "--exported", str(folder)])
        out, err = capsys.readouterr()
        assert status == 1 and f"biped_{part}: off by" in err, out + err
        source.write_text(text)


#: A robot of the user's own: a free-flyer root (--free-flyer), a revolute hip, a prismatic
#: leg, a revolute arm on another branch, and a tool frame 5 cm and 0.3 rad off its joint.
ROBOT_URDF = robot(
    "hopper",
    link("torso", "5", "0 0 0.1", "0.1 0.12 0.08"),
    link("thigh", "1", "0 0 -0.15", "0.01 0.01 0.002"),
    link("shin", "0.6", "0 0 -0.1", "0.006 0.006 0.001"),
    link("arm", "0.8", "0.1 0 0", "0.002 0.008 0.008"),
    link("foot"),
    link("tool"),
    joint("hip", "revolute", "torso", "thigh", 'xyz="0 0 -0.05"', "0 1 0", "-2 2 50 10"),
    joint("knee", "prismatic", "thigh", "shin", 'xyz="0 0 -0.3"', "0 0 1", "-0.1 0.1 50 1"),
    joint("ankle", "fixed", "shin", "foot", 'xyz="0 0 -0.25"'),
    joint("shoulder", "revolute", "torso", "arm", 'xyz="0 0.15 0.2"', "1 0 0", "-3 3 20 10"),
    joint("grip", "fixed", "arm", "tool", 'xyz="0.05 0 0" rpy="0.3 0 0"'),
)


@pytest.mark.slow
def test_a_users_urdf_exports_builds_with_find_package_and_validates(capsys, tmp_path):
    """A user's first hour: their URDF exported with the gradient and dG, built as a CMake
    package in a project of their own, then checked by `pvosimr validate --exported`."""
    cmake = shutil.which("cmake")
    if cmake is None or shutil.which("c++") is None:
        pytest.skip("needs cmake and a C++ compiler")
    needs_a_compiler()
    urdf = tmp_path / "hopper.urdf"
    urdf.write_text(ROBOT_URDF)
    folder = tmp_path / "hopper"
    argv = ["export", str(urdf), "--free-flyer", "--point", "foot", "--weld", "tool"]
    status, err = run(capsys, *argv, "--out", str(folder), "--vjp", "--derivatives")
    assert status == 0, err
    header = (folder / "hopper.h").read_text()
    assert "c1: frame tool on joint shoulder, t = [0.05 0 0], R = [1 0 0; 0 0.955336 " in header
    assert "root_joint  q[0..6]     v[0..5]     FreeFlyer" in header
    build, prefix, consumer = tmp_path / "build", tmp_path / "prefix", tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(consumer LANGUAGES CXX)\n"
        "find_package(hopper REQUIRED)\nadd_executable(main main.cpp)\n"
        "target_link_libraries(main PRIVATE hopper::hopper)\n"
    )
    (consumer / "main.cpp").write_text(
        '#include <cstdio>\n#include "hopper.h"\nstatic double w[HOPPER_SZ_W];\n'
        "static long long iw[HOPPER_SZ_IW];\nint main() {\n  double q[HOPPER_NQ] = {0};\n"
        "  q[6] = 1.0;\n  double G[HOPPER_M * HOPPER_M], g[HOPPER_NV];\n"
        "  double W[HOPPER_M * HOPPER_M] = {1};\n"
        "  int rc = hopper_eval(q, nullptr, G, w, iw) + hopper_vjp(q, nullptr, W, g, w, iw);\n"
        '  std::printf("%d %s %d\\n", rc, hopper_constraint_frames[1], HOPPER_NCONSTRAINTS);\n'
        "  return rc;\n}\n"
    )
    for command in (
        [cmake, "-S", str(folder), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
        [cmake, "--build", str(build), "-j", "2"],
        [cmake, "--install", str(build), "--prefix", str(prefix)],
        [
            cmake,
            "-S",
            str(consumer),
            "-B",
            str(consumer / "build"),
            f"-DCMAKE_PREFIX_PATH={prefix}",
        ],
        [cmake, "--build", str(consumer / "build")],
    ):
        subprocess.run(command, check=True, capture_output=True)
    env = {**os.environ, "LD_LIBRARY_PATH": str(prefix / "lib")}
    ran = subprocess.run(
        [str(consumer / "build" / "main")], capture_output=True, text=True, env=env
    )
    assert ran.returncode == 0 and ran.stdout.split() == ["0", "tool", "2"], ran.stdout
    status = cli.main(["validate", "--exported", str(folder)])
    out = capsys.readouterr().out
    assert status == 0 and out.rstrip().endswith("PASS"), out
    for entry in ("eval", "vjp", "derivatives"):
        assert re.search(rf"^  hopper_{entry}_batch \(2 threads\) +max error", out, re.M), out

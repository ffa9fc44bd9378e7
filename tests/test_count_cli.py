"""``pvosimr count``: the shell's counts equal the Python API's; bad input ends with a message."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("casadi")

import numpy as np
import pinocchio as pin

import pvosimr
from pvosimr import zoo
from pvosimr.codegen.cache import CacheFolderError
from pvosimr.constraints import point, weld
from pvosimr.study import cli
from pvosimr.study import count as opcounts
from pvosimr.zoo import presets

DEFAULT = ("pv-osimr", "pv-osim", "pv-osimh", "efpa", "ltl-osim")  # the default: all but naive

# Two one-link arms on a base: small enough to count in milliseconds.
TWO_ARMS_MJCF = """<mujoco model="two_arms">
  <worldbody>
    <body name="base" pos="0 0 1">
      <inertial pos="0 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>
      <body name="left" pos="0 0.2 0">
        <joint name="left_hinge" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.1" mass="1" diaginertia="0.01 0.02 0.03"/>
        <site name="left_tip" pos="0 0 -0.2"/>
      </body>
      <body name="right" pos="0 -0.2 0">
        <joint name="right_hinge" type="hinge" axis="1 0 0"/>
        <inertial pos="0 0 -0.1" mass="1" diaginertia="0.01 0.02 0.03"/>
        <site name="right_tip" pos="0 0 -0.2"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def run(capsys, *argv: str) -> tuple[str, dict[str, int], str]:
    """``pvosimr count ARGV``: its header line, its table as {algorithm: ops}, its stderr."""
    assert cli.main(["count", *argv]) == 0
    captured = capsys.readouterr()
    header, columns, *rows = captured.out.splitlines()
    assert columns.split() == ["algorithm", "operations", "ratio"]
    counts = {row.split()[0]: int(row.split()[1].replace(",", "")) for row in rows}
    assert list(counts.values()) == sorted(counts.values())  # cheapest first
    assert rows[0].split()[2] == "1.000"
    return header, counts, captured.err


def api_counts(model: pin.Model, cms: list) -> dict[str, int]:
    return {a: pvosimr.count_operations(model, cms, a) for a in DEFAULT}


def check_free_flyer_file(
    capsys, path: Path, load: Callable, constraints: list[tuple[str, str]], header: str
) -> None:
    """``pvosimr count PATH --free-flyer`` with ``constraints`` (``(kind, frame)``, in order)
    counts what the API counts on ``load(PATH, free flyer)``; its header contains ``header``."""
    argv = [word for kind, frame in constraints for word in (f"--{kind}", frame)]
    said, counts, _ = run(capsys, str(path), "--free-flyer", *argv, "--no-cache")
    model = load(str(path), pin.JointModelFreeFlyer())
    cms = [{"weld": weld, "point": point}[kind](model, frame) for kind, frame in constraints]
    assert counts == api_counts(model, cms)
    assert header in said


@pytest.fixture
def two_arms(tmp_path: Path) -> Path:
    path = tmp_path / "two_arms.xml"
    path.write_text(TWO_ARMS_MJCF)
    return path


@pytest.fixture(scope="module")
def solo12_urdf() -> Path:
    robots_loader = pytest.importorskip("example_robot_data.robots_loader")
    relative = "solo_description/robots/solo12.urdf"
    return Path(robots_loader.getModelPath(relative)) / relative


@pytest.mark.slow  # seconds (measured)
def test_zoo_robot_with_preset_matches_the_api(capsys):
    robot = zoo.load("solo12", "feet_3d")
    header, counts, _ = run(capsys, "solo12", "--preset", "feet_3d", "--no-cache")
    assert counts == api_counts(robot.model, robot.constraints)
    assert header.startswith("solo12 (preset feet_3d): nq 19, nv 18, m 12, 4 constraints")
    assert header.endswith("1 branching link")  # the base, where the four legs meet


def test_counts_are_cached(capsys, tmp_path):
    cache = tmp_path / "counts.json"
    _, first, err = run(capsys, "solo12", "--cache", str(cache), "--algorithms", "efpa,naive")
    assert cache.is_file() and set(first) == {"efpa", "naive"}
    assert "0 cached, 2 counted" in err
    _, again, err = run(capsys, "solo12", "--cache", str(cache), "--algorithms", "efpa,naive")
    assert again == first
    assert "2 cached, 0 counted" in err


@pytest.mark.parametrize(
    ("variables", "folder"),
    [
        ({"PVOSIMR_CACHE_DIR": "mine", "XDG_CACHE_HOME": "xdg"}, "mine"),
        ({"XDG_CACHE_HOME": "xdg"}, "xdg/pvosimr"),
        ({}, "home/.cache/pvosimr"),
    ],
)
def test_default_cache_follows_the_library_cache_folder(monkeypatch, tmp_path, variables, folder):
    """pvosimr.codegen.compiler.cache_dir: $PVOSIMR_CACHE_DIR, $XDG_CACHE_HOME, ~/.cache."""
    for name in ("PVOSIMR_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, str(tmp_path / value))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / folder / "opcounts.json"
    assert opcounts.default_cache_path() == expected
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps help at the terminal width
    assert f"(default: {expected})" in opcounts.build_parser().format_help()


def test_a_count_without_cache_option_lands_in_pvosimr_cache_dir(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(tmp_path / "cache"))
    _, counts, err = run(capsys, "solo12", "--algorithms", "efpa")
    cache = tmp_path / "cache" / "opcounts.json"
    assert f"(cache: {cache})" in err
    assert list(json.loads(cache.read_text()).values()) == [counts["efpa"]]


def test_a_damaged_count_cache_is_set_aside_and_counted_again(capsys, tmp_path):
    cache = tmp_path / "opcounts.json"
    _, first, _ = run(capsys, "solo12", "--cache", str(cache), "--algorithms", "efpa")
    text = cache.read_text()
    cache.write_text(text[: len(text) // 2])  # cut short by a full disk
    _, again, err = run(capsys, "solo12", "--cache", str(cache), "--algorithms", "efpa")
    assert again == first and "0 cached, 1 counted" in err
    (aside,) = tmp_path.glob("opcounts.json.damaged-*")
    assert aside.read_text() == text[: len(text) // 2]
    assert "pvosimr: the cached opcounts.json is damaged (not JSON" in err
    assert json.loads(cache.read_text()) == json.loads(text)


def test_an_uncreatable_count_cache_folder_is_named(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(blocker / "deep"))
    with pytest.raises(CacheFolderError, match=r"set by \$PVOSIMR_CACHE_DIR=.*a-file/deep\. "):
        opcounts.CountCache(opcounts.default_cache_path())  # before any count is made


def test_the_command_names_an_uncreatable_cache_folder_before_counting(
    monkeypatch, tmp_path, capsys
):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(blocker / "deep"))
    counted = []
    monkeypatch.setattr(opcounts, "_counter", lambda convention: counted.append(1))
    assert cli.main(["count", "stem_b1_L3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pvosimr count: error: pvosimr's cache folder")
    assert "$PVOSIMR_CACHE_DIR" in err[0] and not counted


@pytest.mark.slow  # seconds (measured)
def test_urdf_file_with_free_flyer_matches_the_api(capsys, solo12_urdf):
    feet = [("point", "FL_FOOT"), ("point", "HR_FOOT")]
    header = "nq 19, nv 18, m 6, 2 constraints (2 point)"
    check_free_flyer_file(capsys, solo12_urdf, pin.buildModelFromUrdf, feet, header)


def test_mjcf_file_keeps_constraint_order(capsys, two_arms):
    tips = [("weld", "right_tip"), ("point", "left_tip")]
    header = "nq 9, nv 8, m 9, 2 constraints (1 weld, 1 point), 1 branching link"
    check_free_flyer_file(capsys, two_arms, pin.buildModelFromMJCFAndRootJoint, tips, header)
    args = opcounts.build_parser().parse_args(["x", "--weld", "a", "--point", "b", "--weld", "c"])
    assert args.constraints == [("weld", "a"), ("point", "b"), ("weld", "c")]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sol12"], "unknown robot 'sol12': not a zoo name and not an existing file; did you mean"),
        (["sol12"], "solo12"),
        (["no/such/robot.urdf", "--point", "x"], "no such model file: no/such/robot.urdf"),
        (["solo12", "--preset", "feet_6d"], "unknown preset 'feet_6d' for robot 'solo12'"),
        (["solo12", "--point", "FL_FOT"], "unknown frame 'FL_FOT'"),
        (["MJCF"], "no constraints given; the leaf links of model 'two_arms' are left, right"),
        (["MJCF"], "; pass --point FRAME and/or --weld FRAME"),
        (["MJCF", "--mimic"], "mimic joints come from URDF <mimic> tags; this is mjcf"),
        (["solo12", "--mimic"], "--mimic is for model files"),
        (["MJCF", "--weld", "left_tipp"], "unknown frame 'left_tipp' in model 'two_arms'"),
        (["solo12", "--algorithms", "pv-osimr,fast"], "unknown algorithm(s) 'fast'; valid:"),
        (["solo12", "--free-flyer"], "--free-flyer is for model files"),
        (["solo12", "--preset", "feet_3d", "--weld", "FL_FOOT"], "either --preset or --point"),
    ],
)
def test_errors_name_the_problem(capsys, two_arms, argv, message):
    argv = [str(two_arms) if a == "MJCF" else a for a in argv]
    with pytest.raises(SystemExit) as exc:
        cli.main(["count", *argv])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err and not captured.out


def test_a_loop_closure_is_its_own_cache_entry():
    """Closing a constraint onto a second body changes the count, so it changes the key."""
    robot = zoo.load("four_bar", "coupler_rocker_3d")
    (closed,) = robot.constraints
    assert closed.joint2_id != 0
    to_world = pin.RigidConstraintModel(
        closed.type, robot.model, closed.joint1_id, closed.joint1_placement, closed.reference_frame
    )
    moved = pin.RigidConstraintModel(
        closed.type,
        robot.model,
        closed.joint1_id,
        closed.joint1_placement,
        closed.joint2_id,
        closed.joint2_placement * pin.SE3(np.eye(3), np.r_[0.0, 0.0, 0.1]),
        closed.reference_frame,
    )
    digests = {opcounts.model_digest(robot.model, [cm]) for cm in (closed, to_world, moved)}
    assert len(digests) == 3


def test_the_source_digest_reads_the_constraint_combination():
    assert {"combination.py", "constraints.py", "mimic.py"} <= set(opcounts.COUNTED_SOURCES)
    assert {"algorithms", "backends", "kinematics"} <= set(opcounts.COUNTED_PACKAGES)


def test_count_of_a_loop_closure_matches_the_api(capsys):
    code = cli.main(["count", "four_bar", "--preset", "coupler_rocker_3d_lwa", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0
    robot = zoo.load("four_bar", "coupler_rocker_3d_lwa")
    ops = pvosimr.count_operations(robot.model, robot.constraints, "pv-osimr")
    assert f"{ops:,}" in out or str(ops) in out


@pytest.mark.skipif(not hasattr(pin, "FrameAnchorConstraintModel"), reason="pin 4's models")
def test_pin4_models_are_counted_and_keyed_apart():
    model = pin.buildSampleModelHumanoid()
    jid = model.getJointId("rarm_wrist2_joint") if model.existJointName("rarm_wrist2_joint") else 5
    placement = pin.SE3(np.eye(3), np.r_[0.0, 0.0, 0.1])
    world_point = pin.SE3(np.eye(3), np.r_[0.3, 0.0, 0.1])
    rigid = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, jid, placement, pin.LOCAL)
    anchor = pin.PointAnchorConstraintModel(model, jid, placement, 0, world_point)
    moved = pin.PointAnchorConstraintModel(model, jid, placement, 0, world_point * placement)
    digests = {opcounts.model_digest(model, [cm]) for cm in (rigid, anchor, moved)}
    assert len(digests) == 3
    assert pvosimr.count_operations(model, [anchor], "pv-osimr") > 0


@pytest.mark.slow  # seconds (measured)
def test_a_loop_closure_from_the_command_line(capsys, two_arms):
    argv = ["--free-flyer", "--weld-between", "right_tip", "left_tip", "--world-aligned"]
    header, counts, _ = run(capsys, str(two_arms), *argv, "--point", "left_tip", "--no-cache")
    model = pin.buildModelFromMJCFAndRootJoint(str(two_arms), pin.JointModelFreeFlyer())
    closed = presets.world_aligned(
        presets.combine(
            presets.between("weld", "right_tip", "left_tip"), presets.points("left_tip")
        )
    )(model)
    assert [cm.joint2_id != 0 for cm in closed] == [True, False]
    assert counts == api_counts(model, closed)
    assert "m 9, 2 constraints" in header
    args = opcounts.build_parser().parse_args(["x", "--point-between", "a", "b", "--weld", "c"])
    assert args.constraints == [("point", ("a", "b")), ("weld", "c")]


def test_world_aligned_needs_constraints_from_the_command_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["count", "solo12", "--world-aligned"])
    assert exit_.value.code == 2
    assert "--world-aligned goes with --point/--weld" in capsys.readouterr().err

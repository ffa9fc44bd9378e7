"""The zoo's loop closures and world-aligned contacts: what they are, where Pinocchio's Delassus
routines are silently wrong on them, and pvosimr against Pinocchio's own definition of them
(``J`` from ``pin.getConstraintJacobian``, ``M`` from ``pin.crba``)."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones

import pvosimr
from pvosimr import zoo
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err
from pvosimr.study import pinocchio_defects as defects
from pvosimr.study import validate as validation

LOCAL, LWA = pin.ReferenceFrame.LOCAL, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
P3, P6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D

#: (robot, preset) -> (nv, [(joint1, joint2, type, frame) of each constraint]), as the
#: docstrings of pvosimr.zoo.closed_loops say; joints by name, "" for the world.
_ROD = ("achilles_rod_joint", "heel_spring_joint", P3)
_PLANTAR = ("plantar_rod_joint", "toe_joint", P3)
_FOOT = [("toe_joint", "", P3), ("toe_joint", "", P3)]
_SOLES = [(foot, "", P3) for foot in ("l_leg_akx", "r_leg_akx") for _ in range(4)]
_BOX = ("l_arm_wry2", "r_arm_wry2", P6)
EXPECTED = {
    ("four_bar", "coupler_rocker_3d"): (3, [("coupler_joint", "rocker_joint", P3, LOCAL)]),
    ("four_bar", "coupler_rocker_3d_lwa"): (3, [("coupler_joint", "rocker_joint", P3, LWA)]),
    ("cassie_leg", "rods_3d"): (19, [(*_ROD, LOCAL), (*_PLANTAR, LOCAL)]),
    ("cassie_leg", "rods_3d_toe_2x3d_lwa"): (
        19,
        [(*_ROD, LWA), (*_PLANTAR, LWA), *((*c, LWA) for c in _FOOT)],
    ),
    ("atlas_holding_box", "hands_6d_feet_4x3d_lwa"): (
        36,
        [(*_BOX, LOCAL), *((*c, LWA) for c in _SOLES)],
    ),
    ("atlas_holding_box", "hands_6d_lwa_feet_4x3d_lwa"): (
        36,
        [(*_BOX, LWA), *((*c, LWA) for c in _SOLES)],
    ),
}
CASES = list(EXPECTED)
#: The cases that take seconds: Atlas with a box in its hands, Cassie's leg with its toe.
ATLAS_CASES = {case for case in CASES if case[0] == "atlas_holding_box"}
CASSIE_TOE = ("cassie_leg", "rods_3d_toe_2x3d_lwa")

# The two refusals of a pvosimr without these constraint kinds (pvosimr.topology); any other
# exception is a failure.
_REFUSAL = re.compile(
    r"only constraints between a link and the world \(joint2_id = 0\) are supported"
    r"|only pin\.LOCAL is supported"
)


def _load(name: str, preset: str) -> zoo.Robot:
    try:
        return zoo.load(name, preset)
    except FileNotFoundError as exc:  # the Atlas URDF (PVOSIMR_MODEL_PATH)
        pytest.skip(str(exc))


def _q(robot: zoo.Robot) -> np.ndarray:
    return robot.q_random(np.random.default_rng(zlib.crc32(robot.preset.encode())))


def _pvosimr(robot: zoo.Robot, q: np.ndarray, algorithm: str) -> np.ndarray:
    """pvosimr's G, or a skip when pvosimr refuses these constraint kinds (only then)."""
    try:
        return pvosimr.compute_delassus(
            robot.model, robot.model.createData(), q, robot.constraints, algorithm=algorithm
        )
    except (NotImplementedError, ValueError) as exc:
        if _REFUSAL.search(str(exc)):
            pytest.skip(f"pvosimr does not take these constraints yet: {exc}")
        raise


# ----------------------------------------------------------------------------- the cases


def test_the_cases_are_registered() -> None:
    names = zoo.names()
    for name, preset in CASES:
        assert name in names
        assert preset in zoo.CLOSED_LOOP_ROBOTS[name][1]
    assert {n for n, _ in CASES} == set(zoo.CLOSED_LOOP_ROBOTS)


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_constraints_are_what_the_docstring_says(name: str, preset: str) -> None:
    robot = _load(name, preset)
    nv, expected = EXPECTED[name, preset]
    model = robot.model
    assert robot.nv == nv and len(robot.constraints) == len(expected)
    assert robot.m == sum(3 if c[2] == P3 else 6 for c in expected)
    for cm, (joint1, joint2, kind, frame) in zip(robot.constraints, expected, strict=True):
        assert model.names[cm.joint1_id] == joint1
        assert cm.joint2_id == (model.getJointId(joint2) if joint2 else 0)
        assert (cm.type, cm.reference_frame) == (kind, frame)


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_every_loop_closes_at_the_neutral_configuration(name: str, preset: str) -> None:
    robot = _load(name, preset)
    model, data = robot.model, robot.model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    loops = [cm for cm in robot.constraints if cm.joint2_id]
    assert loops
    for cm in loops:
        frame1 = data.oMi[cm.joint1_id] * cm.joint1_placement
        frame2 = data.oMi[cm.joint2_id] * cm.joint2_placement
        assert np.allclose(frame1.translation, frame2.translation, atol=1e-12)
        if cm.type == P6:
            assert np.allclose(frame1.rotation, frame2.rotation, atol=1e-12)
        # and the loop opens away from it: the configurations are not on the loop
        q = _q(robot)
        pin.forwardKinematics(model, data, q)
        moved = (data.oMi[cm.joint1_id] * cm.joint1_placement).translation
        assert np.linalg.norm(moved - (data.oMi[cm.joint2_id] * cm.joint2_placement).translation)
        pin.forwardKinematics(model, data, pin.neutral(model))


def test_the_four_bar_moves_in_its_plane() -> None:
    """The z row of the planar four-bar's J, hence of G, is zero; the x, y block is not."""
    robot = zoo.load("four_bar")
    G = defects.pinocchio_truth(robot.model, _q(robot), robot.constraints)
    assert np.abs(G[2]).max() < 1e-15 and np.abs(G[:, 2]).max() < 1e-15
    assert np.linalg.eigvalsh(G[:2, :2]).min() > 1e-3


# ----------------------------------------------------------------------------- Pinocchio side


def test_the_getconstraintjacobian_truth_is_the_dense_truth_on_one_body_local() -> None:
    """On LOCAL one-body constraints the report's truth equals pvosimr.reference.truth's."""
    for name, preset in (("cassie_leg", "rods_3d"), ("four_bar", "coupler_rocker_3d")):
        robot = zoo.load(name, preset)
        q = _q(robot)
        cms = defects.one_body_local(robot.model, robot.constraints)
        G = defects.pinocchio_truth(robot.model, q, cms)
        assert rel_err(G, dense_delassus(robot.model, q, cms)) < 1e-12
        assert np.abs(G).max() > 1e-2


@pytest.mark.parametrize(("name", "preset"), slow_ones(CASES, ATLAS_CASES | {CASSIE_TOE}))
def test_pinocchio_is_silently_wrong_on_each_case(name: str, preset: str) -> None:
    """``computeDelassusMatrix`` is far from the truth and equals the one-body LOCAL matrix."""
    robot = _load(name, preset)
    case = defects.silently_wrong_case(robot, _q(robot))
    assert case["pin_efpa"] > 0.1
    assert case["pin_efpa_is"] < TOLERANCE
    assert case["m"] == robot.m and case["nv"] == robot.nv


@pytest.mark.parametrize(("name", "preset"), [c for c in CASES if "lwa" not in c[1]])
def test_the_damped_inverse_from_python_is_identity_over_mu(name: str, preset: str) -> None:
    robot = _load(name, preset)
    if "atlas" in name:  # four contacts on each foot: not called (UB)
        pytest.skip("two constraints on one joint")
    case = defects.silently_wrong_case(robot, _q(robot), mu=1e-3)
    assert case["pin_damped_is_identity"] == 0.0
    assert case["pin_damped"] > 0.5


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_pinocchios_pv_osimr_is_not_called(name: str, preset: str) -> None:
    robot = _load(name, preset)
    reason = validation.not_called("pin-pv-osimr", robot.constraints)
    assert reason.startswith("not called:")
    assert validation.not_called("pin-efpa", robot.constraints) == ""
    local = defects.one_body_local(robot.model, robot.constraints)
    assert validation.not_called("pin-pv-osimr", local) == ""


@pytest.mark.slow  # seconds (measured)
def test_the_section_shows_every_case() -> None:
    robots = [zoo.load(name, preset) for name, preset in CASES if name != "atlas_holding_box"]
    cases = defects.silently_wrong(0, robots)
    assert [c["case"] for c in cases] == [f"{n}/{p}" for n, p in CASES if n != "atlas_holding_box"]
    lines = defects.silently_wrong_section(cases)
    assert lines[0].startswith("## Where Pinocchio's routines are silently wrong")
    rows = [line for line in lines if line.startswith("| four_bar/") or line.startswith("| cassie")]
    assert len(rows) == len(cases)
    assert all(line.count("|") == lines[4].count("|") for line in rows)
    assert "getConstraintJacobian" in "\n".join(lines)


# ----------------------------------------------------------------------------- pvosimr side


@pytest.mark.parametrize(
    ("algorithm", "name", "preset"),
    slow_ones(
        [(a, *case) for case in CASES for a in pvosimr.ALGORITHMS],
        {("pv-osimh", *case) for case in ATLAS_CASES | {CASSIE_TOE}},
    ),
)
def test_pvosimr_agrees_with_getconstraintjacobian(name: str, preset: str, algorithm: str) -> None:
    robot = _load(name, preset)
    q = _q(robot)
    truth = defects.pinocchio_truth(robot.model, q, robot.constraints)
    assert rel_err(_pvosimr(robot, q, algorithm), truth) <= TOLERANCE


@pytest.mark.slow  # `pvosimr validate` with the C++ bridge, or Atlas
@pytest.mark.parametrize(("name", "preset"), CASES)
def test_the_report_section_and_the_validate_row_pass(name: str, preset: str) -> None:
    robot = _load(name, preset)
    _pvosimr(robot, _q(robot), "pv-osimr")  # skips while pvosimr refuses these kinds
    case = defects.silently_wrong_case(robot, _q(robot))
    assert case["pvosimr"] <= TOLERANCE and case["pvosimr_damped"] <= 1e-9
    (row,) = validation.validate_cases([robot], configs=1, progress=False)
    assert row.passes(), row.raised()
    assert row.result("pin-pv-osimr").not_called.startswith("not called:")
    # pvosimr.reference.pinocchio refuses these kinds or pin-efpa shows as wrong: never as agreeing
    efpa = row.result("pin-efpa")
    assert efpa.failure is not None or efpa.error is None or efpa.error > 0.1

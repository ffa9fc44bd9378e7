"""pvosimr's G in Pinocchio 4.1's ADMM and PGS solvers (``pvosimr.solvers``): the impulses equal
those of Pinocchio's own route (its KKT Cholesky operator) on Atlas standing on its sole corners,
solo12 on four feet, and a closed loop (cassie_leg's rods), where the one of the two Delassus
matrices that matches the dense truth decides which answer is right."""

import numpy as np
import pinocchio as pin
import pytest

import pvosimr
from pvosimr import DelassusOperator, solvers, zoo
from pvosimr.reference.truth import dense_delassus, pinocchio_constraint_jacobian, rel_err

IMPULSE_TOLERANCE = 1e-8
SOLO12_STANDING = [0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6]
DT = 1e-3
PGS_TOLERANCE = 1e-10
"""PGS stalls short of 1e-12 on Atlas' redundant corners (200,000 sweeps); at 1e-10 both
routes stop after the same number of sweeps, so the comparison still measures G."""


def load(name: str, preset: str | None = None):
    try:
        return zoo.load(name, preset)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def standing(model: pin.Model, q: np.ndarray, points) -> tuple[np.ndarray, list]:
    """``q`` lowered until its lowest contact point touches z = 0, and the ground contacts."""
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    q = q.copy()
    q[2] -= min(data.oMi[j].act(p)[2] for j, p in points)
    pin.forwardKinematics(model, data, q)
    cms, heights = solvers.ground_contacts(model, data, points, friction=0.8)
    assert np.abs(heights).max() < 1e-12
    return q, cms


def points_of(constraints) -> list[tuple[int, np.ndarray]]:
    return [(cm.joint1_id, cm.joint1_placement.translation.copy()) for cm in constraints]


@pytest.fixture(scope="module")
def atlas_standing():
    robot = load("atlas", "feet_4x3d")  # four 3D corners per sole
    q, cms = standing(robot.model, pin.neutral(robot.model), points_of(robot.constraints))
    return robot.model, q, cms


@pytest.fixture(scope="module")
def solo12_standing():
    robot = load("solo12")
    q = pin.neutral(robot.model)
    q[7:] = SOLO12_STANDING
    q, cms = standing(robot.model, q, points_of(robot.constraints))
    return robot.model, q, cms


@pytest.fixture(scope="module")
def cassie_rods():
    """cassie_leg's two rods as Pinocchio 4 point anchors (two-body, bilateral)."""
    robot = load("cassie_leg", "rods_3d")
    model = robot.model
    cms = [
        pin.PointAnchorConstraintModel(
            model, cm.joint1_id, cm.joint1_placement, cm.joint2_id, cm.joint2_placement
        )
        for cm in robot.constraints
    ]
    return model, robot.q_random(np.random.default_rng(0)), cms, robot.constraints


def free_velocity(model: pin.Model, q: np.ndarray, cms, v: np.ndarray) -> np.ndarray:
    """``g = J (v + dt·M⁻¹(−nle))``: one step of gravity, no torque."""
    a = pin.aba(model, model.createData(), q, v, np.zeros(model.nv))
    return pinocchio_constraint_jacobian(model, q, cms) @ (v + DT * a)


def both_routes(model, q, cms, g, solver, mu=0.0):
    """Impulses through pvosimr's G and through Pinocchio's KKT Cholesky, same solver and the
    same damping ``mu`` (ADMM replaces it by its own)."""
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    cmodels, cdatas = solvers.pinocchio_constraints(model, data, cms)
    op = DelassusOperator(model, model.createData(), q, cms)
    settings = solvers.settings(solver, PGS_TOLERANCE if solver == "pgs" else 1e-12)
    ours, _ = solvers.solve(op.to_pinocchio(mu), g, cmodels, cdatas, solver, settings)
    theirs_op, _chol = solvers.pinocchio_operator(model, data, q, cmodels, cdatas, mu)
    theirs, _ = solvers.solve(theirs_op, g, cmodels, cdatas, solver, settings)
    return ours, theirs, op


@pytest.mark.parametrize("solver", ["admm", "pgs"])
@pytest.mark.parametrize("scene", ["atlas_standing", "solo12_standing"])
def test_contact_impulses_equal_pinocchios_route(scene, solver, request):
    """Four corners per sole make G singular (rank 12 of 24 on Atlas): PGS runs on G + μI."""
    model, q, cms = request.getfixturevalue(scene)
    g = free_velocity(model, q, cms, np.zeros(model.nv))
    ours, theirs, op = both_routes(model, q, cms, g, solver, mu=1e-9 if solver == "pgs" else 0)
    assert rel_err(op.G, dense_delassus(model, q, cms)) <= 1e-12
    normal = ours[2::3]
    assert normal.min() > 0.01 * normal.max() > 0  # every corner carries weight: a real test
    assert np.abs(ours - theirs).max() <= IMPULSE_TOLERANCE * max(1.0, np.abs(theirs).max())


def test_closed_loop_impulses_and_which_is_right(cassie_rods):
    """Rods as point anchors: pvosimr's and Pinocchio's Cholesky operators agree with the dense
    truth, and so do the impulses; the G of ``pin.computeDelassusMatrix`` on the same rods as
    ``RigidConstraintModel`` (which ignores joint2) gives impulses far off."""
    model, q, cms, rigid = cassie_rods
    g = free_velocity(model, q, cms, np.random.default_rng(1).standard_normal(model.nv))
    ours, theirs, op = both_routes(model, q, cms, g, "admm")
    truth = dense_delassus(model, q, cms)
    assert rel_err(op.G, truth) <= 1e-12
    assert np.abs(ours - theirs).max() <= IMPULSE_TOLERANCE * max(1.0, np.abs(theirs).max())
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    cmodels, cdatas = solvers.pinocchio_constraints(model, data, cms)
    settings = solvers.settings("admm")
    right, _ = solvers.solve(
        DelassusOperator.from_matrix(truth).to_pinocchio(), g, cmodels, cdatas, "admm", settings
    )
    assert np.abs(ours - right).max() <= IMPULSE_TOLERANCE * max(1.0, np.abs(right).max())
    wrong_G = pin.computeDelassusMatrix(
        model, model.createData(), q, rigid, [cm.createData() for cm in rigid], 0.0
    )
    wrong, _ = solvers.solve(
        DelassusOperator.from_matrix(wrong_G).to_pinocchio(), g, cmodels, cdatas, "admm", settings
    )
    assert np.abs(wrong - right).max() > 0.1 * np.abs(right).max()


# --------------------------------------------------------------------------- the helpers


def test_to_pinocchio_carries_the_damping(atlas_standing):
    model, q, cms = atlas_standing
    op = DelassusOperator(model, model.createData(), q, cms)
    b = np.random.default_rng(0).standard_normal(op.m)
    for mu in (1e-4, np.linspace(1e-4, 1e-2, op.m)):
        pin_op = op.to_pinocchio(mu)
        damped = op.G + np.diag(np.broadcast_to(mu, (op.m,)))
        assert np.array_equal(pin_op.matrix(), damped)
        assert rel_err(np.linalg.solve(damped, b), op.solve(b, mu)) <= 1e-9
    soft = op.to_pinocchio(compliance=1e-3)
    assert np.array_equal(soft.getCompliance(), np.full(op.m, 1e-3))
    assert np.array_equal(soft.matrix(), op.G + 1e-3 * np.eye(op.m))
    with pytest.raises(ValueError, match="mu must be ≥ 0"):
        op.to_pinocchio(-1.0)


def test_rigid_constraint_models_are_refused_with_the_anchor_to_use(atlas_standing):
    model, q, _ = atlas_standing
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    weld = pvosimr.constraints.weld(model, "l_foot")
    with pytest.raises(TypeError, match=r"constraint 0 .*FrameAnchorConstraintModel"):
        solvers.pinocchio_constraints(model, data, [weld])
    with pytest.raises(TypeError, match="constraint 1 is a str"):
        solvers.pinocchio_constraints(model, data, [pin.PointContactConstraintModel(model, 1), "x"])


def test_solve_refuses_a_wrong_g_and_says_when_it_does_not_converge(solo12_standing):
    model, q, cms = solo12_standing
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    cmodels, cdatas = solvers.pinocchio_constraints(model, data, cms)
    op = DelassusOperator(model, model.createData(), q, cms).to_pinocchio()
    with pytest.raises(ValueError, match=r"g has shape \(5,\), the constraints have 12 rows"):
        solvers.solve(op, np.zeros(5), cmodels, cdatas)
    g = free_velocity(model, q, cms, np.zeros(model.nv))
    with pytest.raises(RuntimeError, match="pgs did not converge within max_iterations = 2"):
        solvers.solve(op, g, cmodels, cdatas, "pgs", solvers.settings("pgs", max_iterations=2))
    with pytest.raises(ValueError, match="solver must be one of"):
        solvers.settings("lemke")


def test_an_undamped_singular_operator_is_refused_not_returned_as_nan(atlas_standing):
    model, q, cms = atlas_standing
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    cmodels, cdatas = solvers.pinocchio_constraints(model, data, cms)
    theirs, _chol = solvers.pinocchio_operator(model, data, q, cmodels, cdatas)
    g = free_velocity(model, q, cms, np.zeros(model.nv))
    with pytest.raises(FloatingPointError, match="pgs returned non-finite impulses"):
        solvers.solve(theirs, g, cmodels, cdatas, "pgs", solvers.settings("pgs"))

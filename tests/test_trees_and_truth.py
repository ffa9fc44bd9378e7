"""Sanity tests of the random-tree generator and of the Pinocchio-only reference Delassus."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _trees import (
    DEFAULT_JOINT_TYPES,
    FIG1_PARENTS,
    TreeSpec,
    build_tree,
    fig1_tree,
    pin_constraint_size,
    random_placement,
    random_q,
    random_trees,
    tree_specs,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pvosimr.constraints import contact_cholesky, place_constraints
from pvosimr.reference.truth import (
    TOLERANCE,
    constraint_jacobian,
    dense_delassus,
    mass_matrix,
    pinocchio_delassus,
    rel_err,
)

TOL = TOLERANCE
EXAMPLES = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

seeds = st.integers(0, 2**32 - 1)


def _total_size(cms: list[pin.RigidConstraintModel]) -> int:
    return sum(pin_constraint_size(cm) for cm in cms)


def _assert_depth_first(model: pin.Model) -> None:
    for i in range(1, model.njoints):
        assert model.parents[i] < i
        sub = list(model.subtrees[i])
        assert sub == list(range(i, i + len(sub))), f"subtree of {i} not contiguous: {sub}"


def _mass_from_jacobians(model: pin.Model, q: np.ndarray) -> np.ndarray:
    """M = Σ_i J_iᵀ I_i J_i + diag(armature), J_i the LOCAL joint Jacobian of body i."""
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    m = np.diag(np.asarray(model.armature, dtype=float))
    for i in range(1, model.njoints):
        jac = np.reshape(pin.getJointJacobian(model, data, i, pin.LOCAL), (6, model.nv))
        m += jac.T @ model.inertias[i].matrix() @ jac
    return m


# --------------------------------------------------------------------------- generator


@pytest.mark.slow  # seconds of numpy or CasADi work
@EXAMPLES
@given(tree=random_trees(), seed=seeds)
def test_generated_mass_matrices_are_spd(tree, seed: int) -> None:
    model, cms = tree
    _assert_depth_first(model)
    q = random_q(model, np.random.default_rng(seed))
    assert q.shape == (model.nq,)
    assert pin.isNormalized(model, q, 1e-12)
    m = mass_matrix(model, q)
    assert m.shape == (model.nv, model.nv)
    np.testing.assert_array_equal(m, m.T)
    # crba agrees with an independent assembly (a non-depth-first model would not).
    assert rel_err(m, _mass_from_jacobians(model, q)) <= 1e-10
    eig = np.linalg.eigvalsh(m)
    assert eig[0] > 1e-8 * max(1.0, eig[-1]), eig
    for cm in cms:
        assert 1 <= cm.joint1_id < model.njoints
        assert cm.joint2_id == 0
        assert cm.reference_frame == pin.LOCAL
        assert not cm.joint1_placement.isIdentity()


@settings(max_examples=60, deadline=None)
@given(spec=tree_specs())
def test_tree_spec_structure(spec: TreeSpec) -> None:
    model, cms = build_tree(spec)
    assert model.njoints == len(spec.parents) + 1
    assert list(model.parents)[1:] == list(spec.parents)
    assert [(cm.joint1_id, cm.type) for cm in cms] == list(spec.constraints)
    for i in range(1, model.njoints):
        assert not model.jointPlacements[i].isIdentity()
        assert model.inertias[i].mass >= 0.1
    assert np.all(np.isfinite(model.lowerPositionLimit))
    assert np.all(np.asarray(model.armature) >= 0.0)
    pin.randomConfiguration(model)  # finite limits: must not raise


@pytest.mark.parametrize("kind", DEFAULT_JOINT_TYPES)
def test_every_joint_kind_builds(kind: str) -> None:
    spec = TreeSpec([0, 1], ["RZ", kind], [(2, pin.ContactType.CONTACT_6D)], True, 7)
    model, cms = build_tree(spec)
    name = model.joints[2].shortname()
    aliases = {"RX": "RX", "RY": "RY", "RZ": "RZ", "PX": "PX", "PY": "PY", "PZ": "PZ"}
    assert name == "JointModel" + aliases.get(kind, kind)
    q = random_q(model, np.random.default_rng(0))
    assert rel_err(dense_delassus(model, q, cms), pinocchio_delassus(model, q, cms)) <= TOL


def test_unit_circle_and_quaternions() -> None:
    spec = TreeSpec(
        [0, 1, 2, 3, 4],
        ["FreeFlyer", "RUBX", "Spherical", "Planar", "RevoluteUnboundedUnaligned"],
        [],
        False,
        3,
    )
    model, _ = build_tree(spec)
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = random_q(model, rng)
        for joint in model.joints[1:]:
            seg = q[joint.idx_q : joint.idx_q + joint.nq]
            name = joint.shortname()
            if name in ("JointModelFreeFlyer",):
                assert abs(np.linalg.norm(seg[3:]) - 1.0) < 1e-12
            elif name == "JointModelSpherical":
                assert abs(np.linalg.norm(seg) - 1.0) < 1e-12
            elif name == "JointModelPlanar":
                assert abs(np.linalg.norm(seg[2:]) - 1.0) < 1e-12
            else:
                assert abs(np.linalg.norm(seg) - 1.0) < 1e-12


# --------------------------------------------------------------------------- truth


@pytest.mark.slow  # seconds (measured)
@settings(max_examples=60, deadline=None)
@given(tree=random_trees(max_joints=8), seed=seeds)
def test_constraint_jacobian_matches_frame_jacobian(tree, seed: int) -> None:
    """The LOCAL constraint rows equal Pinocchio's LOCAL frame Jacobian of the contact frame."""
    model, cms = tree
    q = random_q(model, np.random.default_rng(seed))
    jac = constraint_jacobian(model, q, cms)
    framed = pin.Model(model)
    frame_ids = [
        framed.addFrame(
            pin.Frame(f"c{k}", cm.joint1_id, cm.joint1_placement, pin.FrameType.OP_FRAME)
        )
        for k, cm in enumerate(cms)
    ]
    data = framed.createData()
    pin.computeJointJacobians(framed, data, q)
    pin.updateFramePlacements(framed, data)
    rows = []
    for fid, cm in zip(frame_ids, cms, strict=True):
        fj = np.reshape(pin.getFrameJacobian(framed, data, fid, pin.LOCAL), (6, model.nv))
        rows.append(fj[: pin_constraint_size(cm)])
    expected = np.vstack(rows) if rows else np.zeros((0, model.nv))
    assert jac.shape == (_total_size(cms), model.nv)
    assert rel_err(jac, expected) <= 1e-12


@pytest.mark.slow  # seconds of numpy or CasADi work
@EXAMPLES
@given(tree=random_trees(), seed=seeds)
def test_dense_matches_pinocchio_on_random_trees(tree, seed: int) -> None:
    model, cms = tree
    q = random_q(model, np.random.default_rng(seed))
    dense = dense_delassus(model, q, cms)
    ref = pinocchio_delassus(model, q, cms)
    m = _total_size(cms)
    assert dense.shape == ref.shape == (m, m)
    np.testing.assert_array_equal(ref, ref.T)
    np.testing.assert_array_equal(dense, dense.T)
    assert rel_err(ref, dense) <= TOL


def _humanoid_case(seed: int) -> tuple[pin.Model, list[pin.RigidConstraintModel], np.ndarray]:
    pin.seed(seed)
    model = pin.buildSampleModelHumanoidRandom()
    rng = np.random.default_rng(seed)
    c3, c6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D
    # Joints: 1 free-flyer root, 7/13 feet, 18 right elbow, 21/27 hands. The first six
    # constraints keep G nonsingular; the last one duplicates the left foot (G singular).
    picks = [(7, c6), (1, c6), (21, c3), (13, c6), (18, c3), (27, c3), (7, c3)]
    cms = [
        pin.RigidConstraintModel(t, model, j, random_placement(rng), pin.LOCAL) for j, t in picks
    ]
    return model, cms, random_q(model, rng)


@pytest.mark.parametrize("seed", range(5))
def test_dense_matches_pinocchio_on_humanoid(seed: int) -> None:
    model, cms, q = _humanoid_case(seed)
    dense = dense_delassus(model, q, cms)
    ref = pinocchio_delassus(model, q, cms)
    assert dense.shape == (_total_size(cms), _total_size(cms))
    assert rel_err(ref, dense) <= TOL
    # A third implementation: Pinocchio's sparse KKT Cholesky. With mu = 0 it needs a
    # nonsingular G (it returns NaN otherwise), so drop the redundant last constraint.
    sub = cms[:-1]
    size = _total_size(sub)
    assert np.linalg.cond(dense[:size, :size]) < 1e8
    # It needs crba in the WORLD convention (the default LOCAL one leaves NaN) and each
    # constraint's calc (placements; without it the result is silently wrong).
    data = model.createData()
    cds = [cm.createData() for cm in sub]
    pin.crba(model, data, q, pin.Convention.WORLD)
    place_constraints(model, data, sub, cds)
    chol = contact_cholesky(model, data, sub, cds)
    chol.compute(model, data, sub, cds, 0.0)
    kkt = chol.getInverseOperationalSpaceInertiaMatrix()
    assert rel_err(kkt, dense[:size, :size]) <= TOL


def test_rel_err() -> None:
    b = np.array([[4.0, -2.0], [1.0, 0.0]])
    assert rel_err(b, b) == 0.0
    assert rel_err(b + 0.4, b) == pytest.approx(0.1)
    assert rel_err(np.array([[0.5]]), np.array([[0.25]])) == pytest.approx(0.25)
    assert rel_err(np.zeros((0, 0)), np.zeros((0, 0))) == 0.0


def test_empty_constraint_list() -> None:
    model, _ = build_tree(TreeSpec([0, 1], ["RZ", "RX"], [], False, 0))
    q = random_q(model, np.random.default_rng(0))
    assert dense_delassus(model, q, []).shape == (0, 0)
    assert pinocchio_delassus(model, q, []).shape == (0, 0)


# --------------------------------------------------------------------------- Fig. 1


def test_fig1_tree() -> None:
    model, cms = fig1_tree()
    assert model.njoints == 7 and model.nq == model.nv == 6
    assert tuple(model.parents)[1:] == FIG1_PARENTS == (0, 1, 2, 3, 4, 2)
    _assert_depth_first(model)
    assert all(j.shortname().startswith("JointModelR") and j.nv == 1 for j in model.joints[1:])
    assert [cm.joint1_id for cm in cms] == [6, 3, 5]
    assert all(cm.type == pin.ContactType.CONTACT_6D for cm in cms)
    assert all(cm.reference_frame == pin.LOCAL for cm in cms)
    assert all(not cm.joint1_placement.isIdentity() for cm in cms)
    q = random_q(model, np.random.default_rng(0))
    dense = dense_delassus(model, q, cms)
    assert dense.shape == (18, 18)
    assert rel_err(pinocchio_delassus(model, q, cms), dense) <= TOL
    # Deterministic for a given seed.
    _, cms2 = fig1_tree()
    assert [cm.joint1_placement for cm in cms2] == [cm.joint1_placement for cm in cms]

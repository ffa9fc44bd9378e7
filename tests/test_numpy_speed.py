"""The numeric single call's shortcuts give the G of the plain computation.

The model constants kept between calls (:mod:`pvosimr.kinematics.constants`) are read again after
any edit to an inertia, an armature entry, a joint placement or a constraint placement; the motion
subspaces kept as constant are those Pinocchio computes at any configuration; PV-OSIMr's
stacked eq. 13 gives the blocks of the block-by-block one; numpy's own steps of the seam's hooks
(one-DoF and free-flyer joints, stacked eq. 19 rows) give what the generic ones give.
"""

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones
from _trees import random_q, random_trees
from hypothesis import HealthCheck, given, settings

import pvosimr
from pvosimr.algorithms import SWEEPS, sweeps_for
from pvosimr.algorithms.pv_osimr import (
    assemble,
    backward_sweep,
    block_plan,
    cemps,
    forward_sweep,
    omega_cover,
)
from pvosimr.backends import NUMPY, NumpyBackend
from pvosimr.backends import protocol as seam
from pvosimr.backends.numpy import IdentityStep, OneDofStep
from pvosimr.backends.protocol import JointStep
from pvosimr.checks import topology_for
from pvosimr.constraints import weld
from pvosimr.kinematics.constants import CONSTANT_SUBSPACE_JOINTS, numeric_constants
from pvosimr.kinematics.frames import numeric_kinematics
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err
from pvosimr.spatial import DenseTransform
from pvosimr.zoo.synthetic import chain_welded_every_link


def _two_body_welds(model: pin.Model) -> list:
    """Atlas's feet welded to the world, and a point of each hand held together (joint2 ≠ 0:
    its rows depend on where ``c2`` is on the right hand, unlike a 6D weld's)."""
    feet = [weld(model, name) for name in ("l_foot", "r_foot")]
    left, right = model.getJointId("l_arm_wry2"), model.getJointId("r_arm_wry2")
    between = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D,
        model,
        left,
        pin.SE3(np.eye(3), np.array([0.0, 0.1, 0.0])),
        right,
        pin.SE3(np.eye(3), np.array([0.0, -0.1, 0.0])),
        pin.LOCAL,
    )
    return [*feet, between]


@pytest.fixture
def robot(atlas):
    model = atlas.copy()  # edited below: the session's Atlas stays as it is
    q = random_q(model, np.random.default_rng(7))
    return model, model.createData(), _two_body_welds(model), q


def _rotated(P: pin.SE3, angle: float) -> pin.SE3:
    return pin.SE3(P.rotation @ pin.rpy.rpyToMatrix(angle, 0.0, 0.0), P.translation + 0.01)


def _edit_inertia(model, cms):
    body = model.inertias[5]
    model.inertias[5] = pin.Inertia(2.0 * body.mass + 1.0, body.lever, body.inertia)


def _edit_armature(model, cms):
    armature = np.array(model.armature)
    armature[model.joints[3].idx_v] += 0.5
    model.armature = armature


def _edit_joint_placement(model, cms):
    model.jointPlacements[4] = _rotated(model.jointPlacements[4], 0.3)


def _edit_joint1_placement(model, cms):
    cms[0].joint1_placement = _rotated(cms[0].joint1_placement, 0.4)


def _edit_joint2_placement(model, cms):
    cms[2].joint2_placement = _rotated(cms[2].joint2_placement, -0.2)


@pytest.mark.parametrize(
    "edit",
    [
        _edit_inertia,
        _edit_armature,
        _edit_joint_placement,
        _edit_joint1_placement,
        _edit_joint2_placement,
    ],
)
@pytest.mark.parametrize("algorithm", ["pv-osimr", "naive"])
def test_an_edit_takes_effect_at_once(robot, edit, algorithm):
    model, data, cms, q = robot
    before = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
    assert rel_err(before, dense_delassus(model, q, cms)) <= TOLERANCE
    edit(model, cms)
    truth = dense_delassus(model, q, cms)
    assert rel_err(truth, before) > 1e-6, "the edit must change G for this test to mean anything"
    after = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
    assert rel_err(after, truth) <= TOLERANCE


def test_the_constants_are_kept_and_read_only(robot):
    model, _, cms, _ = robot
    topo = topology_for(model, cms)
    constants = numeric_constants(model, topo, cms)
    assert numeric_constants(model, topo, cms) is constants  # no edit: kept
    with pytest.raises(ValueError, match="read-only"):
        constants.H[3][0, 0] = 1.0
    _edit_armature(model, cms)
    assert numeric_constants(model, topo, cms) is not constants


def test_the_cached_kinematics_are_the_plain_ones(robot):
    model, data, cms, q = robot
    topo = topology_for(model, cms)
    plain = numeric_kinematics(model, data, q, topo, cms)
    cached = numeric_kinematics(model, data, q, topo, cms, numeric_constants(model, topo, cms))
    for field in ("S", "H", "armature"):
        for a, b in zip(getattr(plain, field), getattr(cached, field), strict=True):
            assert (a is None and b is None) or np.array_equal(a, b)
    for field in ("K", "world"):
        a, b = getattr(plain, field), getattr(cached, field)
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    for Xa, Xb in zip(plain.X, cached.X, strict=True):
        assert np.array_equal(Xa.X, Xb.X)


@pytest.mark.slow  # seconds (measured)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_constraints=2))
def test_constant_subspaces_do_not_depend_on_q(tree):
    """Every joint type kept as constant has the same ``S`` at random configurations."""
    model, cms = tree
    topo = topology_for(model, cms)
    kept = numeric_constants(model, topo, cms).S
    data = model.createData()
    for seed in range(3):
        pin.forwardKinematics(model, data, random_q(model, np.random.default_rng(seed)))
        for i in topo.links:
            if model.joints[i].shortname() in CONSTANT_SUBSPACE_JOINTS:
                assert np.array_equal(kept[i], np.reshape(data.joints[i].S, (6, -1)))
            else:
                assert kept[i] is None


def _assemble_block_by_block(topo, Omega, Omega0, K):
    """Eq. 13 one block at a time, each from the bracket of :func:`omega_cover`."""
    Y = {(c, e): Omega0[c] @ K[e][c].T for c, e in omega_cover(topo)}
    G = np.zeros((topo.m_relaxed, topo.m_relaxed))
    rows = {e: slice(o, o + topo.dim_of[e]) for e, o in zip(topo.ees, topo.offsets, strict=True)}
    for a, ei in enumerate(topo.ees):
        A = topo.A[ei]
        G[rows[ei], rows[ei]] = Omega[ei] if A == 0 else Omega[ei] + K[ei][A] @ Y[A, ei]
        for ej in topo.ees[a + 1 :]:
            c = topo.cca(ei, ej)
            if c == 0:
                continue
            block = K[ei][c] @ Y[c, ej] if (c, ej) in Y else (K[ej][c] @ Y[c, ei]).T
            G[rows[ei], rows[ej]] = block
    return np.triu(G) + np.triu(G, 1).T


def _check_assembly(model, cms, q):
    topo = topology_for(model, cms)
    kin = numeric_kinematics(model, model.createData(), q, topo, cms)
    props, Omega = backward_sweep(NUMPY, topo, kin)
    Omega0, K = forward_sweep(topo, props, Omega), cemps(topo, props)
    G = assemble(NUMPY, topo, Omega, Omega0, K)
    expected = _assemble_block_by_block(topo, Omega, Omega0, K)
    assert G.shape == expected.shape
    assert np.allclose(
        G, expected, rtol=0.0, atol=1e-13 * max(1.0, np.abs(expected).max(initial=0.0))
    )


@pytest.mark.parametrize("n", [1, 2, 7])
def test_the_stacked_assembly_is_the_block_by_block_one_on_chains(n):
    robot = chain_welded_every_link(n)
    model = robot.model
    _check_assembly(model, list(robot.constraints), random_q(model, np.random.default_rng(n)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_constraints=8))
def test_the_stacked_assembly_is_the_block_by_block_one(tree):
    model, cms = tree
    _check_assembly(model, cms, random_q(model, np.random.default_rng(3)))


def test_block_plan_forms_every_block_once():
    """A chain welded at every link: one product per link, covering every pair once."""
    topo = topology_for(*_chain(12))
    plan = block_plan(topo)
    pairs = [frozenset((e, p)) for (_, e), runs in plan.items() for _, run, _ in runs for p in run]
    assert len(pairs) == len(set(pairs)) == 12 * 11 // 2
    assert sum(len(runs) for runs in plan.values()) == 11


def _chain(n):
    robot = chain_welded_every_link(n)
    return robot.model, list(robot.constraints)


class GenericNumpy(NumpyBackend):
    """numpy's arithmetic with the seam's generic hooks: numpy's own serve its class alone."""


def test_numpy_has_its_own_hooks_and_a_subclass_the_generic_ones():
    S, H = np.eye(6)[:, 2:3], np.diag([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    X = DenseTransform(NUMPY, np.eye(6))
    own = seam.joint_step(NUMPY, S, H, None, X, 2, False)
    generic = seam.joint_step(GenericNumpy(), S, H, None, X, 2, False)
    assert type(own) is OneDofStep and type(generic) is JointStep
    free = seam.joint_step(NUMPY, np.eye(6), H, None, X, None, True)
    assert type(free) is IdentityStep and np.array_equal(free.omega(), NUMPY.inv(H))


def test_numpy_stacks_the_rows_through_one_product():
    calls = []

    def product(K):
        calls.append(K.shape)
        return 2.0 * K

    blocks = [np.ones((3, 6)), np.full((6, 6), 2.0), np.zeros((1, 6))]
    for backend, expected in ((NUMPY, [(10, 6)]), (GenericNumpy(), [(3, 6), (6, 6), (1, 6)])):
        calls.clear()
        out = seam.rows_through(backend, product, blocks)
        assert calls == expected
        for got, K in zip(out, blocks, strict=True):
            np.testing.assert_array_equal(got, 2.0 * K)


def _generic_and_one_dof(model, cms, q, algorithm):
    """G on :data:`NUMPY` (its own steps: one-DoF and free-flyer joints, stacked eq. 19 rows)
    and on :class:`GenericNumpy`, which runs the generic step's products."""
    topo = topology_for(model, cms)
    kin = numeric_kinematics(
        model, model.createData(), q, topo, cms, numeric_constants(model, topo, cms)
    )
    sweeps = sweeps_for(algorithm)
    return sweeps(NUMPY, topo, kin), sweeps(GenericNumpy(), topo, kin)


@pytest.mark.parametrize("algorithm", slow_ones(SWEEPS, {"pv-osimh"}))
def test_the_one_dof_step_is_the_generic_one_on_atlas(robot, algorithm):
    model, _, cms, q = robot
    assert numeric_constants(model, topology_for(model, cms), cms).axis  # RX, RY, RZ joints
    fast, generic = _generic_and_one_dof(model, cms, q, algorithm)
    assert np.array_equal(fast, fast.T)
    assert rel_err(fast, generic) <= 1e-12


@pytest.mark.slow  # seconds of numpy or CasADi work
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_constraints=4))
def test_the_one_dof_step_is_the_generic_one(tree):
    model, cms = tree
    q = random_q(model, np.random.default_rng(5))
    for algorithm in SWEEPS:
        fast, generic = _generic_and_one_dof(model, cms, q, algorithm)
        assert rel_err(fast, generic) <= 1e-10, algorithm


def test_the_free_flyer_is_known_to_have_the_identity_subspace(robot):
    """Atlas's root joint takes :class:`IdentityStep` on numpy (compared with the generic step
    by ``test_the_one_dof_step_is_the_generic_one_on_atlas``), no other joint does."""
    model, _, cms, _ = robot
    assert numeric_constants(model, topology_for(model, cms), cms).identity == {1}


def test_the_link_inertias_are_exactly_symmetric(robot):
    """The one-DoF step reads column ``k`` of ``H^A_i`` as row ``k``: equal only if exact."""
    model, _, cms, _ = robot
    for H in numeric_constants(model, topology_for(model, cms), cms).H:
        assert np.array_equal(H, H.T)


def _edit_joint1_id(model, cms):
    cms[0].joint1_id = model.getJointId("l_leg_kny")


def _edit_contact_type(model, cms):
    cms[0].type = pin.ContactType.CONTACT_3D


def _edit_reference_frame(model, cms):
    cms[2].reference_frame = pin.LOCAL_WORLD_ALIGNED


@pytest.mark.parametrize("edit", [_edit_joint1_id, _edit_contact_type, _edit_reference_frame])
def test_an_edit_to_the_constraint_structure_takes_effect_at_once(robot, edit):
    """The topology is cached by what the constraints' structure is read from: an edited list
    gets the topology of its new structure."""
    model, data, cms, q = robot
    before = pvosimr.compute_delassus(model, data, q, cms)
    edit(model, cms)
    truth = dense_delassus(model, q, cms)
    assert before.shape != truth.shape or rel_err(truth, before) > 1e-6
    after = pvosimr.compute_delassus(model, data, q, cms)
    assert rel_err(after, truth) <= TOLERANCE


def test_the_numpy_mirror_keeps_the_upper_triangle_by_gather_and_by_blocks(monkeypatch):
    """Both ways of mirroring (a kept gather index, block copies past the memory budget) give
    the upper triangle in both triangles, on sizes that split unevenly into blocks."""
    from pvosimr.backends import numpy as backend

    rng = np.random.default_rng(0)
    for n in (1, 7, 129, 300):
        a = rng.standard_normal((n, n))
        expected = np.triu(a) + np.triu(a, 1).T
        np.testing.assert_array_equal(backend.mirror_upper(a), expected)
        with monkeypatch.context() as patch:
            patch.setattr(backend, "_MIRRORS", {})
            patch.setattr(backend, "_GATHER_BUDGET", 0)  # nothing fits: block copies
            np.testing.assert_array_equal(backend.mirror_upper(a), expected)
            np.testing.assert_array_equal(backend.mirror_upper(np.asfortranarray(a)), expected)


def _cemps_both_ways(model: pin.Model, cms: list, q: np.ndarray) -> None:
    """Eq. 19 on numpy (each link's passing EEs stacked) and on :class:`GenericNumpy` (one
    product per EE, the generic step): the same CEMPs to rounding."""
    topo = topology_for(model, cms)
    kin = numeric_kinematics(model, model.createData(), q, topo, cms)
    stacked = cemps(topo, backward_sweep(NUMPY, topo, kin)[0])
    walked = cemps(topo, backward_sweep(GenericNumpy(), topo, kin)[0])
    assert stacked.keys() == walked.keys()
    for e, by_node in walked.items():
        assert stacked[e].keys() == by_node.keys()
        for j, K in by_node.items():
            scale = max(1.0, np.abs(K).max(initial=0.0))
            assert np.allclose(stacked[e][j], K, rtol=0.0, atol=1e-13 * scale), (e, j)


@pytest.mark.parametrize("n", [2, 7, 16])
def test_the_stacked_cemps_are_the_walked_ones_on_chains(n):
    robot = chain_welded_every_link(n)
    _cemps_both_ways(
        robot.model, list(robot.constraints), random_q(robot.model, np.random.default_rng(n))
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_constraints=8))
def test_the_stacked_cemps_are_the_walked_ones(tree):
    model, cms = tree
    _cemps_both_ways(model, cms, random_q(model, np.random.default_rng(4)))

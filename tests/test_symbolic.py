"""The CasADi SX backend runs the very same algorithm code: same numbers, and a sane op count."""

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones
from _trees import random_q, random_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pvosimr
from pvosimr.kinematics.frames import numeric_kinematics
from pvosimr.zoo import presets

symbolic = pytest.importorskip("pvosimr.symbolic")
ca = pytest.importorskip("casadi")


@pytest.mark.slow  # seconds of numpy or CasADi work
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_constraints=2), seed=st.integers(0, 2**31))
def test_symbolic_kinematics_match_pinocchio_for_every_joint_type(tree, seed):
    model, cms = tree
    topo = pvosimr.Topology(model, cms)
    q_sym = ca.SX.sym("q", model.nq)
    kin = symbolic.symbolic_kinematics(model, q_sym, topo, cms)
    X_sym = [X.motion(ca.SX.eye(6)) for X in kin.X[1:]]  # each transform's 6×6 matrix
    f = ca.Function("kin", [q_sym], [*X_sym, *kin.S[1:]])
    q = random_q(model, np.random.default_rng(seed))
    expected = numeric_kinematics(model, model.createData(), q, topo, cms)
    values = f(q)
    n = len(topo.links)
    for i, (X, S) in enumerate(zip(values[:n], values[n:], strict=True), start=1):
        np.testing.assert_allclose(np.array(X), expected.X[i].motion(np.eye(6)), atol=1e-12)
        np.testing.assert_allclose(np.array(S), expected.S[i], atol=1e-12)


@pytest.mark.parametrize("preset", sorted(presets.ATLAS_PRESETS))
@pytest.mark.parametrize("algorithm", slow_ones(pvosimr.ALGORITHMS, {"pv-osimh", "naive"}))
def test_sx_function_equals_numpy_on_atlas(atlas, preset, algorithm):
    cms = presets.ATLAS_PRESETS[preset](atlas)
    f = symbolic.delassus_function(atlas, cms, algorithm)
    q = random_q(atlas, np.random.default_rng(3))
    G_sx = np.array(f(q))
    G_np = pvosimr.compute_delassus(atlas, atlas.createData(), q, cms, algorithm=algorithm)
    assert np.abs(G_sx - G_np).max() / max(1.0, np.abs(G_np).max()) <= 1e-10


def test_function_cost_counts_each_operation_once():
    """The paper's metric on expressions counted by hand: inputs and outputs are free."""
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    assert symbolic.function_cost(ca.Function("f", [x, y], [x * y + ca.sin(x)])) == 3
    A, B = ca.SX.sym("A", 2, 2), ca.SX.sym("B", 2, 2)
    # each of the 4 entries of AB: 2 products and 1 sum
    assert symbolic.function_cost(ca.Function("AB", [A, B], [ca.mtimes(A, B)])) == 12
    assert symbolic.function_cost(ca.Function("copy", [x], [x])) == 0


def _pendulum() -> tuple[pin.Model, list]:
    """One revolute link about z (mass 2, CoM 0.5 m along x, I_zz = 0.3 at the CoM) with a
    point contact 1 m along x: about the joint I = 0.3 + 2 · 0.5² = 0.8, so G is the constant
    diag(0, 1/0.8, 0) whatever q."""
    from pvosimr.constraints import point

    model = pin.Model()
    joint = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "hinge")
    inertia = pin.Inertia(2.0, np.array([0.5, 0.0, 0.0]), np.diag([0.1, 0.2, 0.3]))
    model.appendBodyToJoint(joint, inertia, pin.SE3.Identity())
    tip = pin.SE3(np.eye(3), np.array([1.0, 0.0, 0.0]))
    model.addFrame(pin.Frame("tip", joint, 0, tip, pin.FrameType.OP_FRAME))
    return model, [point(model, "tip")]


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_a_delassus_matrix_that_does_not_depend_on_q_is_only_constants(algorithm):
    # Every arithmetic step folds away: the function only loads the two constants 0 and
    # 1.25 into the 9 outputs, so n_instructions = 2 + 9; nnz_in = 1 (q), nnz_out = 9: cost 1.
    model, constraints = _pendulum()
    f = symbolic.delassus_function(model, constraints, algorithm)
    np.testing.assert_allclose(np.array(f(0.7)), np.diag([0.0, 1.25, 0.0]), atol=1e-15)
    assert symbolic.count_operations(model, constraints, algorithm) == 1


@pytest.mark.slow  # CasADi graphs of Atlas
def test_operation_counts_on_atlas_are_of_q_to_g(atlas):
    cms = presets.ATLAS_PRESETS["feet_6d"](atlas)
    f = symbolic.delassus_function(atlas, cms, "pv-osimr")
    assert f.nnz_in() == atlas.nq and f.nnz_out() == 12 * 12
    n = symbolic.count_operations(atlas, cms, "pv-osimr")
    # the dense O(n³) baseline must cost more than the recursive algorithm
    assert symbolic.count_operations(atlas, cms, "naive") > 2 * n


def test_sx_backend_on_a_tree_without_constraints():
    model = pin.buildSampleModelManipulator()
    f = symbolic.delassus_function(model, [], "pv-osimr")
    assert f.size_out(0) == (0, 0)


def test_pv_osimr_count_does_not_depend_on_constraint_order(atlas):
    # Eq. 13's products are chosen per topology (pvosimr.algorithms.pv_osimr.omega_cover), not by
    # list order: forming them for the later EE of each pair cost 660 more operations on this list
    # reversed.
    cms = presets.ATLAS_PRESETS["hands_feet_6d"](atlas)
    given = symbolic.count_operations(atlas, cms, "pv-osimr")
    assert symbolic.count_operations(atlas, cms[::-1], "pv-osimr") == given


def _tilted(model: pin.Model, joint: int, angle: float) -> pin.Model:
    """A copy of ``model`` whose joint placement is turned by ``angle`` about (1, 1, 1)."""
    tilted = pin.Model(model)
    turn = pin.SE3(pin.exp3(angle * np.ones(3) / np.sqrt(3)), np.zeros(3))
    tilted.jointPlacements[joint] = tilted.jointPlacements[joint] * turn
    return tilted


def test_rounding_residue_in_constants_costs_nothing():
    # A model file's rounding (π written to 12 digits, MJCF quaternions) leaves entries of
    # 1e-13 .. 1e-17 where the model means zero; they fold away, a real tilt does not.
    from pvosimr.zoo import synthetic

    robot = synthetic.chain_welded_every_k(2)
    exact = symbolic.count_operations(robot.model, robot.constraints, "pv-osimr")
    residue = _tilted(robot.model, 2, 2e-13)
    assert symbolic.count_operations(residue, robot.constraints, "pv-osimr") == exact
    tilt = _tilted(robot.model, 2, 1e-3)
    assert symbolic.count_operations(tilt, robot.constraints, "pv-osimr") > exact
    # and the folded function still agrees with numpy on the model with the residue
    q = random_q(residue, np.random.default_rng(5))
    G_sx = np.array(symbolic.delassus_function(residue, robot.constraints, "pv-osimr")(q))
    G_np = pvosimr.compute_delassus(residue, residue.createData(), q, robot.constraints)
    assert np.abs(G_sx - G_np).max() / np.abs(G_np).max() <= 1e-10


@pytest.mark.parametrize("algorithm", ["pv-osimr", "efpa"])
def test_sx_function_equals_numpy_on_the_shadow_hand(algorithm):
    from pvosimr import zoo

    hand = zoo.load("shadow_hand")  # MJCF: its rotations carry 1e-17 residue, folded in SX
    f = symbolic.delassus_function(hand.model, hand.constraints, algorithm)
    q = random_q(hand.model, np.random.default_rng(4))
    G_np = pvosimr.compute_delassus(hand.model, hand.model.createData(), q, hand.constraints)
    assert np.abs(np.array(f(q)) - G_np).max() / np.abs(G_np).max() <= 1e-10


def _block(rng: np.random.Generator, x, shape: tuple[int, int]):
    """A block of one of the kinds the sweeps place: SX with structural zeros, an empty SX, a
    constant (DM, with explicit zeros or sparsified)."""
    kind = int(rng.integers(4))
    if kind == 0:
        block = ca.SX(*shape)
        for i, j in zip(*np.nonzero(rng.random(shape) < 0.6), strict=True):
            block[int(i), int(j)] = x[int(rng.integers(x.numel()))] * float(rng.normal())
        return block
    if kind == 1:
        return ca.SX(*shape)
    values = np.where(rng.random(shape) < 0.5, 0.0, rng.normal(size=shape))
    return ca.DM(values) if kind == 2 else ca.sparsify(ca.DM(values))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_blocks_placed_at_once_are_the_assigned_ones(seed):
    """CasADi's own ``place_blocks`` (one concatenation) gives the very matrix of slice
    assignment: blocks across several cells, later ones over earlier ones (their structural
    zeros clearing what was there), constants with explicit zeros, an empty block."""
    from pvosimr.backends.casadi import CASADI
    from pvosimr.backends.protocol import place_blocks

    rng = np.random.default_rng(seed)
    x = ca.SX.sym("x", 5)
    rows, cols = (int(n) for n in rng.integers(1, 10, size=2))
    blocks = []
    for _ in range(int(rng.integers(0, 9))):
        r0, c0 = int(rng.integers(rows)), int(rng.integers(cols))
        r1, c1 = int(rng.integers(r0 + 1, rows + 1)), int(rng.integers(c0 + 1, cols + 1))
        blocks.append((slice(r0, r1), slice(c0, c1), _block(rng, x, (r1 - r0, c1 - c0))))
    assigned = ca.SX(rows, cols)
    for r, c, block in blocks:
        assigned[r, c] = block
    placed = place_blocks(CASADI, rows, cols, blocks)
    assert placed.sparsity() == assigned.sparsity()
    assert str(placed) == str(assigned)

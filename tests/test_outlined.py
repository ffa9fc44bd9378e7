"""The outlined CasADi backend (pvosimr.backends.outlined): the same G as the inline graph, with
one shared function per kind of link."""

import numpy as np
import pinocchio as pin
import pytest
from _trees import mixed_kinds, random_q, random_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pvosimr
from pvosimr import zoo

symbolic = pytest.importorskip("pvosimr.symbolic")
ca = pytest.importorskip("casadi")


def _both(model, cms, algorithm="pv-osimr"):
    inline = symbolic.delassus_function(model, cms, algorithm)
    outlined = symbolic.delassus_function(model, cms, algorithm, outlined=True)
    return inline, outlined


def _agree(inline, outlined, q) -> float:
    G, G_out = np.array(inline(q)), np.array(outlined(q))
    return np.abs(G_out - G).max(initial=0.0) / max(1.0, np.abs(G).max(initial=0.0))


@pytest.mark.slow  # seconds of numpy or CasADi work
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=random_trees(max_joints=10, max_constraints=3),
    algorithm=st.sampled_from(pvosimr.ALGORITHMS),
    mixed=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_outlined_g_equals_the_inline_graph(tree, algorithm, mixed, seed):
    """Every joint type, constraint kind (two-body and world-aligned ones too) and algorithm."""
    model, cms = tree
    rng = np.random.default_rng(seed)
    if mixed:
        cms = mixed_kinds(model, cms, rng)
    inline, outlined = _both(model, cms, algorithm)
    for _ in range(2):
        assert _agree(inline, outlined, random_q(model, rng)) <= 1e-13


def test_a_chain_of_like_links_shares_one_fold():
    """The Fig. 4a chain: every link folds through the same few functions, so the outlined
    function grows by calls: far fewer instructions than the inline one."""
    robot = zoo.chain_welded_every_k(6)  # 36 links, 6 welds
    inline, outlined = _both(robot.model, robot.constraints)
    shared = outlined.get_function()
    assert 0 < len(shared) <= 8 and all(
        name.startswith(("pvosimr_fold_", "pvosimr_extend_")) for name in shared
    )
    assert outlined.n_instructions() < 0.6 * inline.n_instructions()
    q = robot.q_random(np.random.default_rng(0))
    assert _agree(inline, outlined, q) <= 1e-13


def test_names_do_not_depend_on_what_was_traced_before():
    """A kernel's name comes from its kind, so the generated C (and the library cache key) is
    the same in every process."""
    robot = zoo.chain_welded_every_k(3)
    first = sorted(symbolic.delassus_function(robot.model, robot.constraints, outlined=True)
                   .get_function())  # fmt: skip
    other = zoo.chain_welded_every_link(3)
    symbolic.delassus_function(other.model, other.constraints, outlined=True)
    again = symbolic.delassus_function(robot.model, robot.constraints, outlined=True)
    assert sorted(again.get_function()) == first


def test_a_joint_whose_subspace_moves_with_q_folds_inline():
    """SphericalZYX's S depends on q: no shared function can hold it as a constant."""
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "hinge")
    model.appendBodyToJoint(j, pin.Inertia.Random(), pin.SE3.Identity())
    k = model.addJoint(j, pin.JointModelSphericalZYX(), pin.SE3.Random(), "ball")
    model.appendBodyToJoint(k, pin.Inertia.Random(), pin.SE3.Identity())
    cms = [pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, k, pin.SE3.Random())]
    inline, outlined = _both(model, cms)
    (shared,) = outlined.get_function()  # the hinge's extension; the ball's fold stays inline
    assert shared.startswith("pvosimr_extend_")
    assert _agree(inline, outlined, random_q(model, np.random.default_rng(1))) <= 1e-13


def test_outlined_is_for_g_only():
    robot = zoo.chain_welded_every_k(2)
    with pytest.raises(ValueError, match="outlined=True is for G"):
        symbolic.delassus_function(robot.model, robot.constraints, output="vjp", outlined=True)


@pytest.mark.slow  # seconds of CasADi work per chain
@pytest.mark.parametrize(("kind", "n"), [("Spherical", 80), ("FreeFlyer", 40), ("RZ", 120)])
def test_outlined_deep_chains_match_the_dense_truth(kind, n):
    """The deep chains of tests/test_deep_chains.py (where an asymmetric rounding error in
    D⁻¹ would grow link by link): the outlined function at the dense truth's accuracy."""
    from benchmarks.accuracy.truths import dense_truth
    from pvosimr.reference.truth import TOLERANCE, rel_err
    from pvosimr.zoo.seeded import random_chain
    from pvosimr.zoo.seeded import random_q as seeded_q

    model, cms = random_chain([kind] * n, seed=0)
    q = seeded_q(model, np.random.default_rng(1))
    truth, _, _ = dense_truth(model, model.createData(), q, cms)
    outlined = symbolic.delassus_function(model, cms, outlined=True)
    assert outlined.get_function()  # folded through shared functions
    assert rel_err(np.array(outlined(q)), truth) <= TOLERANCE

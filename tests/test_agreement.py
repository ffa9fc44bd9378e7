"""Every algorithm agrees with dense J M⁻¹ Jᵀ and with pin.computeDelassusMatrix.

Metric: max|ΔG| / max(1, max|G|) ≤ 1e-9, on real robots and on hypothesis
random trees covering every supported joint type anywhere in the tree.
"""

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones
from _trees import pin_constraint_size, random_q, random_trees, robot_sweep
from hypothesis import HealthCheck, given, settings

import pvosimr
from pvosimr.constraints import point, weld
from pvosimr.reference.truth import TOLERANCE, dense_delassus, pinocchio_delassus, rel_err
from pvosimr.zoo import presets, sources

TOL = TOLERANCE
C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D


def check_all_algorithms(model, cms, q):
    """Assert every algorithm matches both references at q; return the worst error seen."""
    truth = dense_delassus(model, q, cms)
    reference = pinocchio_delassus(model, q, cms)
    assert rel_err(reference, truth) <= TOL, "Pinocchio itself disagrees with the dense truth"
    data = model.createData()
    worst = 0.0
    for algorithm in pvosimr.ALGORITHMS:
        G = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
        assert G.shape == truth.shape
        assert np.array_equal(G, G.T), f"{algorithm} is not exactly symmetric"
        err = max(rel_err(G, truth), rel_err(G, reference))
        assert err <= TOL, f"{algorithm}: relative error {err:.2e}"
        worst = max(worst, err)
    return worst


def check_configurations(model, cms, n=3, seed=0):
    rng = np.random.default_rng(seed)
    return max(check_all_algorithms(model, cms, random_q(model, rng)) for _ in range(n))


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_sample_humanoid_with_mixed_constraints_at_random_placements():
    model = pin.buildSampleModelHumanoidRandom()
    rng = np.random.default_rng(1)
    joints = rng.choice(np.arange(1, model.njoints), size=8)
    cms = [
        pin.RigidConstraintModel(C6 if k % 2 else C3, model, int(j), pin.SE3.Random(), pin.LOCAL)
        for k, j in enumerate(joints)
    ]
    check_configurations(model, cms, n=5)
    as_pinocchio_vector = pin.StdVec_RigidConstraintModel()
    for cm in cms:
        as_pinocchio_vector.append(cm)
    q = random_q(model, rng)
    data = model.createData()
    for algorithm in pvosimr.ALGORITHMS:
        G_vec = pvosimr.compute_delassus(model, data, q, as_pinocchio_vector, algorithm=algorithm)
        G_list = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
        assert np.array_equal(G_vec, G_list)


@pytest.mark.parametrize(
    "preset", slow_ones(sorted(presets.ATLAS_PRESETS), {"feet_4x3d", "hands_feet_6d"})
)
def test_atlas(atlas, preset):
    assert atlas.nv == 36
    cms = presets.ATLAS_PRESETS[preset](atlas)
    assert (
        sum(6 if c.type == C6 else 3 for c in cms)
        == {"feet_6d": 12, "feet_4x3d": 24, "hands_feet_6d": 24}[preset]
    )
    check_configurations(atlas, cms)


@pytest.mark.slow  # seconds (measured)
def test_shadow_hand_fingertips():
    try:
        model = sources.shadow_hand_model()
    except ModuleNotFoundError as exc:
        pytest.skip(str(exc))
    assert model.nv == 24
    cms = [point(model, tip) for tip in sources.SHADOW_FINGERTIPS]
    assert sum(pin_constraint_size(c) for c in cms) == 15
    check_configurations(model, cms)


ERD_CASES = {
    "talos": (weld, ["left_sole_link", "right_sole_link", "gripper_left_base_link"]),
    "solo12": (point, ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
    "ur5": (weld, ["tool0"]),
    "panda": (weld, ["panda_hand_tcp"]),
}


@pytest.mark.parametrize("name", sorted(ERD_CASES))
def test_example_robot_data(name):
    try:
        model = sources.erd_model(name)
    except ModuleNotFoundError as exc:
        pytest.skip(str(exc))
    make, frames = ERD_CASES[name]
    check_configurations(model, [make(model, f) for f in frames])


@pytest.mark.slow  # 300 new topologies: PV-OSIMh prices its plans on each (the fast subset of
# tests/test_property_trees.py covers random trees in the default run)
@pytest.mark.long  # the oldest pin's run leaves it out (.ci/run)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(), seed=__import__("hypothesis").strategies.integers(0, 2**31))
def test_random_trees(tree, seed):
    model, cms = tree
    check_all_algorithms(model, cms, random_q(model, np.random.default_rng(seed)))


#: The sample's robots that take seconds here: the slow suite's.
SLOWEST_ERD = {"anymal_kinova", "bravo7_gripper", "panda", "romeo", "talos", "tiago", "ur5"}


def _erd_names():
    try:
        return [n for n in sources.erd_names() if n != "cassie"]  # cassie: SDF closed loops
    except ModuleNotFoundError:
        return []


@pytest.mark.parametrize("name", robot_sweep(_erd_names(), slow=SLOWEST_ERD))
def test_every_example_robot_data_robot(name):
    """Six mixed constraints on random joints of each robot, against the dense truth.

    Robots with massless links (romeo's fingers, bravo7's jaws) have a singular M at every q:
    there G is undefined, and every algorithm must say so instead of returning NaN.
    """
    model = sources.erd_model(name)
    rng = np.random.default_rng(0)
    joints = rng.choice(np.arange(1, model.njoints), size=min(6, model.njoints - 1), replace=False)
    cms = [
        pin.RigidConstraintModel(C6 if k % 2 else C3, model, int(j), pin.SE3.Random(), pin.LOCAL)
        for k, j in enumerate(joints)
    ]
    q = random_q(model, rng)
    data = model.createData()
    try:
        truth = dense_delassus(model, q, cms)
    except np.linalg.LinAlgError:
        for algorithm in pvosimr.ALGORITHMS:
            with pytest.raises(ValueError, match="mass matrix is singular"):
                pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
        return
    for algorithm in pvosimr.ALGORITHMS:
        G = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
        assert rel_err(G, truth) <= TOL, algorithm

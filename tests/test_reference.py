"""Pinocchio's own Delassus routines (pvosimr.reference.pinocchio) against the dense truth J M⁻¹ Jᵀ.

Same metric and tolerance as the algorithms: max|ΔG| / max(1, max|G|) ≤ 1e-9.
"""

import numpy as np
import pinocchio as pin
import pytest
from _trees import TreeSpec, build_tree, pin_constraint_size, random_q, random_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pvosimr import reference
from pvosimr.codegen import compiler as toolchain
from pvosimr.constraints import point, weld
from pvosimr.reference import bridge
from pvosimr.reference.pinocchio import REFERENCES
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err
from pvosimr.zoo import sources

TOL = TOLERANCE
C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D

# The KKT Cholesky route factorises without damping: on linearly dependent constraint rows it
# can hit an exact zero pivot, and pvosimr.reference.pinocchio then raises ValueError instead of
# returning NaN.  That refusal is accepted only where G is singular; a finite result must
# always be within the tolerance.
SINGULAR_COND = 1e8


def bridge_missing_for_want_of_a_compiler() -> bool:
    """True only where the bridge is unavailable because no C++ compiler is installed; where a
    compiler exists, an unavailable bridge fails the test that needs it."""
    why = bridge.status()
    if why is None:
        return False
    try:
        toolchain.find_compiler("c++")
    except toolchain.CompilerNotFoundError:
        return True
    pytest.fail(f"a C++ compiler is installed, yet the bridge is unavailable: {why}")


@pytest.fixture
def needs_bridge():
    if bridge_missing_for_want_of_a_compiler():
        pytest.skip("Pinocchio's C++ PV-OSIMr needs the bridge, and there is no C++ compiler")


def check_cholesky(model, cms, q, truth):
    try:
        G = reference.pinocchio_cholesky(model, model.createData(), q, cms)
    except ValueError:
        assert truth.size and np.linalg.cond(truth) > SINGULAR_COND, "refused a nonsingular G"
        return
    err = rel_err(G, truth)
    assert err <= TOL, f"pin-cholesky: relative error {err:.2e}"


def check_references(model, cms, q, names=tuple(REFERENCES)):
    truth = dense_delassus(model, q, cms)
    worst = 0.0
    if "pin-pv-osimr" in names and bridge_missing_for_want_of_a_compiler():
        names = tuple(n for n in names if n != "pin-pv-osimr")
    for name in names:
        G = REFERENCES[name](model, model.createData(), q, cms)
        assert isinstance(G, np.ndarray)
        assert G.shape == truth.shape, name
        err = rel_err(G, truth)
        assert err <= TOL, f"{name}: relative error {err:.2e}"
        worst = max(worst, err)
    return worst


def check_configurations(model, cms, n=3, seed=0, names=tuple(REFERENCES)):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        check_references(model, cms, random_q(model, rng), names)


def humanoid_constraints(model, rng, joint_names, kinds):
    return [
        pin.RigidConstraintModel(kind, model, model.getJointId(name), pin.SE3.Random(), pin.LOCAL)
        for name, kind in zip(joint_names, kinds, strict=True)
    ]


def clone(model, cm, placement=None):
    """A new RigidConstraintModel equal to ``cm`` (the binding has no copy)."""
    placement = cm.joint1_placement if placement is None else placement
    return pin.RigidConstraintModel(cm.type, model, cm.joint1_id, placement, cm.reference_frame)


@pytest.fixture(scope="module")
def humanoid():
    np.random.seed(3)  # pin.SE3.Random / buildSampleModelHumanoidRandom draw from numpy's RNG
    return pin.buildSampleModelHumanoidRandom()


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_registry(needs_bridge):
    assert set(REFERENCES) == {"pin-efpa", "pin-pv-osimr", "pin-cholesky"}
    assert reference.extension_available() and reference.unavailable() == {}


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_sample_humanoid_mixed_contacts(humanoid):
    rng = np.random.default_rng(1)
    cms = humanoid_constraints(
        humanoid,
        rng,
        ["rleg6_joint", "lleg6_joint", "rarm6_joint", "larm6_joint", "chest_joint"],
        [C6, C6, C3, C3, C3],
    )
    check_configurations(humanoid, cms, n=5)
    # q from integrate(neutral, v): the free-flyer quaternion is unit
    v = rng.uniform(-1, 1, humanoid.nv)
    check_references(humanoid, cms, pin.integrate(humanoid, pin.neutral(humanoid), v))


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_sample_humanoid_redundant_contacts(humanoid):
    """Several constraints per joint, one on the root, m > nv: EFPA and PV-OSIMr still agree."""
    rng = np.random.default_rng(2)
    joints = [1, 1, 7, 7, 7, 13, 20, 20, 27, 4]
    cms = [
        pin.RigidConstraintModel(C6 if k % 2 else C3, humanoid, j, pin.SE3.Random(), pin.LOCAL)
        for k, j in enumerate(joints)
    ]
    assert sum(pin_constraint_size(cm) for cm in cms) > humanoid.nv
    check_configurations(humanoid, cms, names=("pin-efpa", "pin-pv-osimr"))
    q = random_q(humanoid, rng)
    check_cholesky(humanoid, cms, q, dense_delassus(humanoid, q, cms))


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_cholesky_refuses_a_zero_pivot():
    """A 3D contact on a revolute joint's axis: J = 0, G = 0; the KKT Cholesky divides 0 by 0."""
    model = pin.Model()
    jid = model.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "j")
    inertia = pin.Inertia(1.0, np.array([0.1, 0.2, 0.3]), np.diag([0.1, 0.2, 0.3]))
    model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
    cms = [pin.RigidConstraintModel(C3, model, jid, pin.SE3.Identity(), pin.LOCAL)]
    q = pin.neutral(model)
    check_references(model, cms, q, names=("pin-efpa", "pin-pv-osimr"))
    with pytest.raises(ValueError, match="zero pivot"):
        reference.pinocchio_cholesky(model, model.createData(), q, cms)


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_pinocchio_vector_and_tuple_accepted(humanoid):
    rng = np.random.default_rng(4)
    cms = humanoid_constraints(humanoid, rng, ["rleg6_joint", "larm6_joint"], [C6, C3])
    q = random_q(humanoid, rng)
    vec = pin.StdVec_RigidConstraintModel()
    for cm in cms:
        vec.append(cm)
    for name, f in REFERENCES.items():
        if name in reference.unavailable() and bridge_missing_for_want_of_a_compiler():
            continue
        G = f(humanoid, humanoid.createData(), q, cms)
        np.testing.assert_array_equal(f(humanoid, humanoid.createData(), q, vec), G, name)
        np.testing.assert_array_equal(f(humanoid, humanoid.createData(), q, tuple(cms)), G, name)


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_atlas_feet_6d(atlas):
    assert atlas.nv == 36
    cms = [weld(atlas, "l_foot"), weld(atlas, "r_foot")]
    check_configurations(atlas, cms)


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_atlas_hands_and_feet_6d(atlas):
    cms = [weld(atlas, name) for name in ("l_foot", "r_foot", "l_hand", "r_hand")]
    check_configurations(atlas, cms)


@pytest.fixture(scope="module")
def shadow_hand():
    try:
        return sources.shadow_hand_model()
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        pytest.skip(str(exc))


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_shadow_hand_fingertips(shadow_hand):
    cms = [point(shadow_hand, tip) for tip in sources.SHADOW_FINGERTIPS]
    check_configurations(shadow_hand, cms)


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_structures_pv_osimr_bookkeeping_must_handle():
    """Several roots, constraints on roots, stacked on one joint, on ancestors and descendants.

    initPvDelassus derives accumulation joints/ancestors from this structure; each case below
    exercises one of its branches (the hypothesis test draws them at random too).
    """
    cases = [
        # two roots (joints 1 and 5), constraints in both subtrees and on both roots
        ((0, 1, 2, 2, 0, 5, 6), [(1, C6), (3, C3), (4, C3), (5, C3), (7, C6)]),
        # a chain with constraints on an ancestor and its descendant, and two on one joint
        ((0, 1, 2, 3, 4), [(2, C3), (5, C6), (5, C3), (2, C6)]),
        # branching below a constrained joint, 3D only
        ((0, 1, 2, 2, 4, 1), [(2, C3), (3, C3), (5, C3), (6, C3)]),
    ]
    kinds = ("Spherical", "RX", "RevoluteUnaligned", "Planar", "RY", "PZ", "FreeFlyer")
    for parents, constraints in cases:
        spec = TreeSpec(parents, kinds[: len(parents)], constraints, armature=True, seed=11)
        model, cms = build_tree(spec)
        check_configurations(model, cms, names=("pin-efpa", "pin-pv-osimr"))


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tree=random_trees(), seed=st.integers(0, 2**32 - 1))
def test_random_trees(tree, seed):
    """Every joint type anywhere, several roots, several constraints per joint, on the root."""
    model, cms = tree
    q = random_q(model, np.random.default_rng(seed))
    truth = dense_delassus(model, q, cms)
    check_references(model, cms, q, names=("pin-efpa", "pin-pv-osimr"))
    check_cholesky(model, cms, q, truth)


# --------------------------------------------------------------------------- PV-OSIMr specifics


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_init_pv_delassus_runs_once_per_constraint_list(humanoid, needs_bridge):
    rng = np.random.default_rng(5)
    cms = humanoid_constraints(humanoid, rng, ["rleg6_joint", "lleg6_joint"], [C6, C3])
    reference.clear_cache()
    before = reference.cache_info()
    for _ in range(5):
        reference.pinocchio_pv_osimr(humanoid, humanoid.createData(), random_q(humanoid, rng), cms)
    # equal content in a new container: same structure, no new initPvDelassus
    reference.pinocchio_pv_osimr(
        humanoid,
        humanoid.createData(),
        random_q(humanoid, rng),
        [clone(humanoid, cm) for cm in cms],
    )
    after = reference.cache_info()
    assert after["pv_inits"] - before["pv_inits"] == 1
    assert after["misses"] - before["misses"] == 1
    assert after["hits"] - before["hits"] == 5

    # a moved contact frame is a new constraint list for the C++ object (it holds copies)
    moved = [clone(humanoid, cm) for cm in cms]
    moved[1].joint1_placement = pin.SE3.Random()
    q = random_q(humanoid, rng)
    G = reference.pinocchio_pv_osimr(humanoid, humanoid.createData(), q, moved)
    assert reference.cache_info()["pv_inits"] - after["pv_inits"] == 1
    assert rel_err(G, dense_delassus(humanoid, q, moved)) <= TOL


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_pv_has_no_state_across_calls(humanoid, needs_bridge):
    rng = np.random.default_rng(6)
    cms = humanoid_constraints(
        humanoid, rng, ["rleg6_joint", "lleg6_joint", "rarm6_joint"], [C6, C3, C3]
    )
    q1, q2 = random_q(humanoid, rng), random_q(humanoid, rng)
    G1 = reference.pinocchio_pv_osimr(humanoid, humanoid.createData(), q1, cms)
    G2 = reference.pinocchio_pv_osimr(humanoid, humanoid.createData(), q2, cms)
    again = reference.pinocchio_pv_osimr(humanoid, humanoid.createData(), q1, cms)
    np.testing.assert_array_equal(again, G1)
    assert not np.array_equal(G1, G2)
    np.testing.assert_array_equal(G1, G1.T)
    G1[0, 0] = 1e9  # a fresh array each call, not a view on the C++ buffer
    assert reference.pinocchio_pv_osimr(humanoid, humanoid.createData(), q1, cms)[0, 0] != 1e9


def test_bad_input(humanoid):
    q = pin.neutral(humanoid)
    world = pin.RigidConstraintModel(C6, humanoid, 0, pin.SE3.Identity(), pin.LOCAL)
    aligned = pin.RigidConstraintModel(C6, humanoid, 3, pin.SE3.Identity(), pin.LOCAL_WORLD_ALIGNED)
    for f in REFERENCES.values():
        with pytest.raises(ValueError, match="universe"):
            f(humanoid, humanoid.createData(), q, [world])
        with pytest.raises(ValueError, match="LOCAL"):
            f(humanoid, humanoid.createData(), q, [aligned])
        with pytest.raises(TypeError):
            f(humanoid, humanoid.createData(), q, [1])
        ok = [pin.RigidConstraintModel(C3, humanoid, 3, pin.SE3.Identity(), pin.LOCAL)]
        with pytest.raises(ValueError, match="q has shape"):
            f(humanoid, humanoid.createData(), q[:-1], ok)
        assert f(humanoid, humanoid.createData(), q, []).shape == (0, 0)


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_compiled_object_checks_its_input(humanoid, needs_bridge):
    ext = bridge.load()
    assert pin.__version__ == ext.PINOCCHIO_VERSION

    def on(joint, frame=pin.LOCAL, kind=C6):
        return [pin.RigidConstraintModel(kind, humanoid, joint, pin.SE3.Identity(), frame)]

    with pytest.raises(ValueError, match="not a moving joint"):
        ext.PvDelassus(humanoid, on(0))
    with pytest.raises(ValueError, match="LOCAL"):
        ext.PvDelassus(humanoid, on(2, pin.LOCAL_WORLD_ALIGNED))
    with pytest.raises(ValueError, match="RigidConstraintModel"):
        ext.PvDelassus(humanoid, ["not a constraint"])
    pv = ext.PvDelassus(humanoid, on(2, kind=C3))
    assert pv.size == 3
    other = pin.buildSampleModelManipulator()
    with pytest.raises(ValueError, match="model does not match"):
        pv.compute(other, pin.neutral(other))


# --------------------------------------------------------------------------- damped inverse


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_damped_inverse_defect_is_visible(humanoid, needs_bridge):
    """pin.computeDampedDelassusMatrixInverse from Python misses initPvDelassus: wrong result."""
    rng = np.random.default_rng(7)
    cms = humanoid_constraints(
        humanoid,
        rng,
        ["rleg6_joint", "lleg6_joint", "rarm6_joint", "larm6_joint"],
        [C6, C6, C3, C3],
    )
    defect = reference.damped_delassus_inverse_defect(humanoid, random_q(humanoid, rng), cms, 1e-3)
    assert defect["m"] == 18
    assert defect["pin_python"] > 1e-1, defect
    assert defect["pv_cpp"] <= TOL, defect
    assert defect["pv_numpy"] <= TOL, defect


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_damped_inverse_defect_skips_the_out_of_bounds_case(humanoid, needs_bridge):
    rng = np.random.default_rng(8)
    cms = humanoid_constraints(humanoid, rng, ["rleg6_joint", "rleg6_joint"], [C6, C3])
    defect = reference.damped_delassus_inverse_defect(humanoid, random_q(humanoid, rng), cms)
    assert np.isnan(defect["pin_python"]) and "one joint" in defect["pin_python_skipped"]
    assert defect["pv_cpp"] <= TOL

"""compute_delassus_batch: one vectorised run equals the single call on every row."""

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones
from _trees import mass_on_the_first_axis, random_q, random_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pvosimr
from pvosimr import zoo
from pvosimr.backends.batched import BatchedNumpyBackend, MatrixStack, inv_spd, stack_matmul
from pvosimr.checks import NORMALIZED_TOLERANCE
from pvosimr.delassus import topology_for
from pvosimr.kinematics.frames import numeric_kinematics
from pvosimr.kinematics.stacked import batched_kinematics
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err
from pvosimr.zoo import presets

TOL = 1e-10
C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D


def configurations(model, n, seed=0):
    rng = np.random.default_rng(seed)
    return np.array([random_q(model, rng) for _ in range(n)]).reshape(n, model.nq)


def check_batch(model, cms, qs, algorithms=pvosimr.ALGORITHMS):
    """Assert the batch equals the single call row by row (≤ TOL) and is exactly symmetric."""
    data = model.createData()
    for algorithm in algorithms:
        G = pvosimr.compute_delassus_batch(model, qs, cms, algorithm=algorithm)
        m = sum(3 if cm.type == C3 else 6 for cm in cms)
        assert G.shape == (len(qs), m, m)
        assert np.array_equal(G, G.swapaxes(1, 2)), f"{algorithm}: not exactly symmetric"
        for b, q in enumerate(qs):
            single = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
            err = rel_err(G[b], single)
            assert err <= TOL, f"{algorithm}, row {b}: relative error {err:.2e}"


@pytest.mark.parametrize(
    "preset", slow_ones(sorted(presets.ATLAS_PRESETS), {"feet_4x3d", "hands_feet_6d"})
)
def test_atlas_every_preset_and_algorithm(atlas, preset):
    cms = presets.ATLAS_PRESETS[preset](atlas)
    check_batch(atlas, cms, configurations(atlas, 6, seed=1))


@pytest.mark.slow  # seconds (measured)
def test_shadow_hand_every_algorithm():
    try:
        robot = zoo.load("shadow_hand")
    except ModuleNotFoundError as exc:  # gymnasium-robotics, an optional model source
        pytest.skip(str(exc))
    check_batch(robot.model, robot.constraints, configurations(robot.model, 6, seed=2))


@pytest.mark.slow  # seconds of numpy or CasADi work
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_constraints=4), seed=st.integers(0, 2**31))
def test_random_trees_with_every_joint_type(tree, seed):
    model, cms = tree
    check_batch(model, cms, configurations(model, 3, seed))


@pytest.mark.slow  # seconds (measured)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_constraints=1), seed=st.integers(0, 2**31))
def test_batched_kinematics_match_pinocchio_for_every_joint_type(tree, seed):
    model, cms = tree
    topo = pvosimr.Topology(model, cms)
    qs = configurations(model, 2, seed)
    kin = batched_kinematics(BatchedNumpyBackend(2), model, qs, topo, cms)
    for b, q in enumerate(qs):
        expected = numeric_kinematics(model, model.createData(), q, topo, cms)
        for i in topo.links:
            X = np.broadcast_to(getattr(kin.X[i].X, "a", kin.X[i].X), (2, 6, 6))[b]
            S = np.broadcast_to(getattr(kin.S[i], "a", kin.S[i]), (2, *expected.S[i].shape))[b]
            np.testing.assert_allclose(X, expected.X[i].X, atol=1e-12)
            np.testing.assert_allclose(S, expected.S[i], atol=1e-12)


def test_batch_of_one_and_of_none(atlas):
    cms = presets.ATLAS_PRESETS["feet_6d"](atlas)
    qs = configurations(atlas, 1, seed=4)
    check_batch(atlas, cms, qs, algorithms=["pv-osimr", "naive"])
    empty = pvosimr.compute_delassus_batch(atlas, np.zeros((0, atlas.nq)), cms)
    assert empty.shape == (0, 12, 12)


def test_blocks_of_a_large_batch(atlas):
    cms = presets.ATLAS_PRESETS["feet_4x3d"](atlas)
    qs = configurations(atlas, 7, seed=5)
    whole = pvosimr.compute_delassus_batch(atlas, qs, cms)
    np.testing.assert_array_equal(
        pvosimr.compute_delassus_batch(atlas, qs, cms, block_size=7), whole
    )
    in_blocks = pvosimr.compute_delassus_batch(atlas, qs, cms, block_size=3)
    assert rel_err(in_blocks, whole) <= TOL
    check_batch(atlas, cms, qs, algorithms=["efpa"])
    with pytest.raises(ValueError, match="block_size must be positive"):
        pvosimr.compute_delassus_batch(atlas, qs, cms, block_size=0)


def test_no_constraints_gives_empty_matrices():
    model = pin.buildSampleModelHumanoidRandom()
    qs = configurations(model, 3)
    assert pvosimr.compute_delassus_batch(model, qs, []).shape == (3, 0, 0)


def test_no_loop_over_configurations(atlas, monkeypatch):
    """Kinematics come from the joint models, not one forwardKinematics per configuration."""
    calls = []
    original = pin.forwardKinematics
    monkeypatch.setattr(pin, "forwardKinematics", lambda *a: calls.append(1) or original(*a))
    cms = presets.ATLAS_PRESETS["feet_6d"](atlas)
    for n in (2, 40):
        calls.clear()
        pvosimr.compute_delassus_batch(atlas, configurations(atlas, n), cms)
        assert len(calls) <= 1  # the neutral configuration's motion subspaces only


# --------------------------------------------------------------------------- bad input


@pytest.fixture
def humanoid():
    model = pin.buildSampleModelHumanoidRandom()
    cms = [pin.RigidConstraintModel(C6, model, 6, pin.SE3.Random(), pin.LOCAL)]
    return model, cms, configurations(model, 4)


@pytest.mark.parametrize("shape", [(-1,), (4, 1, -1), (4, 3)], ids=["1-D", "3-D", "columns"])
def test_wrong_shape(humanoid, shape):
    model, cms, qs = humanoid
    bad = qs[:, :3] if shape == (4, 3) else qs.reshape(shape)
    with pytest.raises(ValueError, match=rf"expected \(batch, {model.nq}\)"):
        pvosimr.compute_delassus_batch(model, bad, cms)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_not_finite_names_row_and_joint(humanoid, value):
    model, cms, qs = humanoid
    qs = qs.copy()
    qs[2, 9] = value
    with pytest.raises(ValueError, match=r"not finite at row 2, index 9 \(joint \d+ '"):
        pvosimr.compute_delassus_batch(model, qs, cms)


def test_unnormalized_quaternion_names_row_and_joint(humanoid):
    model, cms, qs = humanoid
    qs = qs.copy()
    qs[3, 3:7] *= 1.01
    with pytest.raises(ValueError, match=r"row 3 is not normalized: joint 1 'root_joint'"):
        pvosimr.compute_delassus_batch(model, qs, cms)


def test_unnormalized_unit_complex_names_row_and_joint():
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelRUBZ(), pin.SE3.Random(), "wheel")
    model.appendBodyToJoint(j, pin.Inertia.Random(), pin.SE3.Identity())
    cms = [pin.RigidConstraintModel(C3, model, j, pin.SE3.Random(), pin.LOCAL)]
    qs = np.array([[1.0, 0.0], [0.6, 0.8], [0.6, 0.9]])
    with pytest.raises(ValueError, match=r"row 2 is not normalized: joint 1 'wheel'.*unit complex"):
        pvosimr.compute_delassus_batch(model, qs, cms)


def test_normalization_tolerance_is_pinocchios(humanoid):
    model, cms, qs = humanoid
    tol = NORMALIZED_TOLERANCE
    for eps in (0.9 * tol, -0.9 * tol, 1.1 * tol, -1.1 * tol):
        q = qs[0].copy()
        q[3:7] *= 1 + eps / np.linalg.norm(q[3:7])
        accepted = True
        try:
            pvosimr.compute_delassus_batch(model, q[None], cms)
        except ValueError:
            accepted = False
        assert accepted == pin.isNormalized(model, q, tol), eps


def test_unknown_algorithm(humanoid):
    model, cms, qs = humanoid
    with pytest.raises(ValueError, match="unknown algorithm 'osim'"):
        pvosimr.compute_delassus_batch(model, qs, cms, algorithm="osim")


def massless_leaf(name: str) -> tuple[pin.Model, int]:
    """A shoulder with a body and a leaf joint ``name`` with none and no armature (M is singular
    at every q), and the leaf's id."""
    model = pin.Model()
    j1 = model.addJoint(0, pin.JointModelRX(), pin.SE3.Random(), "shoulder")
    model.appendBodyToJoint(j1, pin.Inertia.Random(), pin.SE3.Identity())
    return model, model.addJoint(j1, pin.JointModelRY(), pin.SE3.Random(), name)


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_singular_mass_matrix_names_a_row(algorithm):
    model, j2 = massless_leaf("odd_joint")
    cms = [pin.RigidConstraintModel(C6, model, j2, pin.SE3.Random(), pin.LOCAL)]
    qs = configurations(model, 5)
    with pytest.raises(ValueError, match=r"singular at row 0 of qs \(5 of 5 rows\).*'odd_joint'"):
        pvosimr.compute_delassus_batch(model, qs, cms, algorithm=algorithm, block_size=2)


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_singular_row_is_named_and_the_others_compute(algorithm):
    model, cms, qs = mass_on_the_first_axis()  # M singular in row 2 only
    with pytest.raises(ValueError, match=r"singular at row 2 of qs \(1 of 3 rows\)"):
        pvosimr.compute_delassus_batch(model, qs, cms, algorithm=algorithm, block_size=2)
    check_batch(model, cms, qs[:2], algorithms=[algorithm])


def test_unsupported_joint_is_named(monkeypatch):
    from pvosimr import topology

    monkeypatch.setattr(topology, "SUPPORTED_JOINTS", topology.SUPPORTED_JOINTS - {"JointModelHX"})
    model = pin.Model()
    j1 = model.addJoint(0, pin.JointModelRX(), pin.SE3.Random(), "shoulder")
    model.appendBodyToJoint(j1, pin.Inertia.Random(), pin.SE3.Identity())
    j2 = model.addJoint(j1, pin.JointModelHX(0.1), pin.SE3.Random(), "screw")
    model.appendBodyToJoint(j2, pin.Inertia.Random(), pin.SE3.Identity())
    cms = [pin.RigidConstraintModel(C3, model, j2, pin.SE3.Identity(), pin.LOCAL)]
    with pytest.raises(NotImplementedError, match=r"joint 2 \('screw'\) is of type .*HX"):
        pvosimr.compute_delassus_batch(model, np.zeros((2, model.nq)), cms)


def test_topology_of_another_model(humanoid, atlas):
    model, cms, qs = humanoid
    other = topology_for(atlas, presets.ATLAS_PRESETS["feet_6d"](atlas))
    with pytest.raises(ValueError, match="topology was built for another model"):
        pvosimr.compute_delassus_batch(model, qs, cms, topology=other)


# --------------------------------------------------------------------------- the backend


def test_matrix_stack_acts_as_one_matrix():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 4, 3))
    m = MatrixStack(a.copy())
    assert m.shape == (4, 3) and m.T.shape == (3, 4)
    np.testing.assert_array_equal(m.T.a, a.swapaxes(1, 2))
    assert m[1, 2].a.shape == (5, 1, 1) and m[-1, -1].a[0, 0, 0] == a[0, -1, -1]
    assert m[1:3].a.shape == (5, 2, 3) and m[:, 1].a.shape == (5, 4, 1)
    m[0:2, 1] = 7.0
    assert np.all(m.a[:, 0:2, 1] == 7.0) and np.all(m.a[:, 2:, 1] == a[:, 2:, 1])
    c = rng.standard_normal((3, 2))
    product = np.eye(4)[:, :4] @ m @ c  # ndarray operators defer to the stack
    assert isinstance(product, MatrixStack)
    np.testing.assert_allclose(product.a, m.a @ c)
    np.testing.assert_allclose((1 - m * 2.0 / m[0, 0]).a, 1 - m.a * 2.0 / m.a[:, :1, :1])


@pytest.mark.parametrize(
    ("xs", "ys"),
    [
        ((5, 6, 6), (6, 6)),
        ((6, 6), (5, 6, 6)),
        ((5, 6, 6), (5, 6, 6)),
        ((5, 6, 1), (5, 1, 6)),
        ((5, 1, 1), (5, 1, 6)),
        ((5, 6, 6), (5, 6, 1)),
        ((1, 6), (5, 6, 6)),
        ((5, 6, 6), (6, 1)),
        ((5, 6, 1), (1, 6)),
        ((6, 1), (5, 1, 6)),
    ],
)
@pytest.mark.parametrize("unit", [False, True])
def test_matmul_forms_equal_numpy(xs, ys, unit):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(xs), rng.standard_normal(ys)
    if unit:  # constant unit vectors take the pick/place forms
        for v in (x, y):
            if v.ndim == 2 and 1 in v.shape:
                v[...] = 0.0
                v.flat[2] = 1.0
    got = stack_matmul(x, y)
    np.testing.assert_allclose(got, np.matmul(x, y), rtol=1e-14, atol=1e-14)
    assert not np.shares_memory(got, x) and not np.shares_memory(got, y)


@pytest.mark.parametrize("d", [1, 2, 3, 6])
def test_stacked_spd_inverse(d):
    rng = np.random.default_rng(d)
    a = rng.standard_normal((7, d, d))
    a = a @ a.swapaxes(1, 2) + 0.1 * np.eye(d)
    inv = inv_spd(a)
    np.testing.assert_allclose(inv, np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    assert np.array_equal(inv, inv.swapaxes(1, 2))
    a[3] = 0.0  # a singular slice spoils only itself
    with np.errstate(all="ignore"):
        inv = inv_spd(a)
    assert not np.isfinite(inv[3]).all() and np.isfinite(np.delete(inv, 3, axis=0)).all()


# --------------------------------------------------------------------------- when G is undefined


def _rotation(rng) -> np.ndarray:
    x = rng.standard_normal(4)
    return pin.Quaternion(*(x / np.linalg.norm(x))).matrix()


def mixed_mass_tree(seed: int, n: int = 25) -> tuple[pin.Model, list]:
    """A random tree whose masses span 1e-6 .. 1e4 kg: inner links anywhere in that range, the
    tips 1e-6 .. 1e-5 kg, each body of radius 1e-5 .. 0.3 m (cond(M) up to ~1e19)."""
    rng = np.random.default_rng(seed)
    kinds = ("RX", "RY", "RZ", "PX", "PY", "PZ", "Spherical")
    parents, path = [], [0]
    for i in range(1, n + 1):
        parent = path[len(path) - 1 - int(rng.integers(0, len(path)))]
        del path[path.index(parent) + 1 :]
        path.append(i)
        parents.append(parent)
    tips = [i for i in range(1, n + 1) if i not in parents]
    model = pin.Model()
    for i, parent in enumerate(parents, 1):
        joint = getattr(pin, "JointModel" + kinds[int(rng.integers(len(kinds)))])()
        placement = pin.SE3(_rotation(rng), rng.uniform(-0.5, 0.5, 3))
        j = model.addJoint(parent, joint, placement, f"j{i}")
        mass = 10.0 ** (rng.uniform(-6, -5) if i in tips else rng.uniform(-6, 4))
        radius = 10.0 ** rng.uniform(-5, -0.5)
        s = mass * (radius * rng.uniform(0.3, 1, 3)) ** 2
        R = _rotation(rng)
        inertia = R @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ R.T
        body = pin.Inertia(mass, rng.uniform(-radius, radius, 3), 0.5 * (inertia + inertia.T))
        model.appendBodyToJoint(j, body, pin.SE3.Identity())
    cms = [
        pin.RigidConstraintModel(
            C6 if rng.random() < 0.5 else C3,
            model,
            int(rng.choice(tips)),
            pin.SE3(_rotation(rng), rng.uniform(-0.1, 0.1, 3)),
            pin.LOCAL,
        )
        for _ in range(int(rng.integers(1, 4)))
    ]
    return model, cms


def test_mixed_mass_tree_computes_on_both_paths():
    """M is positive definite (cond ≈ 7e18, graded): at the first configuration one pivot of
    the numpy recursion is not positive definite in float64 while the batched one is; both
    paths must compute G there, equal to each other and to the dense truth."""
    model, cms = mixed_mass_tree(0)
    rng = np.random.default_rng(0)
    qs = np.array(
        [
            pin.integrate(model, pin.neutral(model), rng.uniform(-np.pi, np.pi, model.nv))
            for _ in range(4)
        ]
    )
    data = model.createData()
    for algorithm in pvosimr.ALGORITHMS:
        G = pvosimr.compute_delassus_batch(model, qs, cms, algorithm=algorithm)
        for b, q in enumerate(qs):
            single = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
            assert rel_err(G[b], single) <= TOL, (algorithm, b)
            assert rel_err(single, dense_delassus(model, q, cms)) <= TOLERANCE, (algorithm, b)


def _verdict(call) -> str:
    try:
        call()
    except ValueError as error:
        return str(error).split(" at ")[0]
    return "computed"


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_singular_verdict_is_the_same_on_both_paths(algorithm):
    """A massless leaf without armature: M is singular at every q, on both paths."""
    model, j2 = massless_leaf("massless")
    cms = [pin.RigidConstraintModel(C3, model, j2, pin.SE3.Random(), pin.LOCAL)]
    for q in configurations(model, 3):
        single = _verdict(
            lambda q=q: pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm)
        )
        batch = _verdict(lambda q=q: pvosimr.compute_delassus_batch(model, q[None], cms, algorithm))
        assert single == batch == "the mass matrix is singular"


def test_failed_recursion_on_a_definite_mass_matrix_is_not_called_singular(monkeypatch):
    """Should both arithmetic paths meet a pivot that is not positive definite where pin.crba's
    M is (a loss of precision), the error says so, with cond(M), on both paths alike."""
    from pvosimr import evaluate

    model, cms = mixed_mass_tree(0)
    q = configurations(model, 1)[0]
    nan_stack = lambda sweeps, model, qs, topology, cms: np.full((len(qs), 6, 6), np.nan)  # noqa: E731
    monkeypatch.setattr(evaluate, "attempt", lambda *args: None)
    monkeypatch.setattr(evaluate, "sweep_stack", nan_stack)
    match = (
        r"the pv-osimr sweeps lost their precision .*positive definite .*cond\(M\) ≈ .*not singular"
    )
    with pytest.raises(ValueError, match=match) as single:
        pvosimr.compute_delassus(model, model.createData(), q, cms)
    assert "at this q" in str(single.value)
    with pytest.raises(ValueError, match=match) as batch:
        pvosimr.compute_delassus_batch(model, np.array([q, q]), cms)
    assert "at row 0 of qs (2 of 2 rows)" in str(batch.value)
    assert str(batch.value).split(":", 1)[1] == str(single.value).split(":", 1)[1]

"""Mimic joints: every algorithm on every backend, through the Schur complement on the relaxed
tree (pvosimr.mimic), against a dense truth that never meets a mimic joint: Pinocchio's crba and
Jacobians of the tree *without* mimic joints, reduced by the map Φ from the model's velocities
to the relaxed tree's (``J = J_r Φ``, ``M = Φᵀ M_r Φ``).  Pinocchio's own crba and Jacobians of
the mimic model are right for revolute and prismatic mimics but miss a helical mimic's pitch
(pin 4.1), so they serve as a second truth only there."""

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones
from _trees import (
    DEFAULT_JOINT_TYPES,
    MIMICABLE,
    TreeSpec,
    add_mimics,
    build_tree,
    drawn_plan,
    random_q,
    reduced_truth,
    requires_pin_feature,
)

import pvosimr
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err

pytestmark = requires_pin_feature("JointModelMimic", "transformJointIntoMimic")

TOL = TOLERANCE
C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D
OTHERS = tuple(k for k in DEFAULT_JOINT_TYPES if k not in MIMICABLE and k != "FreeFlyer")


def mimic_tree(seed: int, n: int = 9):
    """A random tree (under a free-flyer or fixed) with 1–3 mimic couplings between its 1-DoF
    joints (:func:`_trees.add_mimics`); a quarter of the joints are of the other types
    (spherical, universal, composite, ...)."""
    rng = np.random.default_rng(seed)
    parents, path = [], [0]
    for i in range(1, n + 1):
        parent = path[-1 - int(rng.integers(0, len(path)))]
        del path[path.index(parent) + 1 :]
        path.append(i)
        parents.append(parent)
    kinds = [str(rng.choice(MIMICABLE if rng.random() < 0.75 else OTHERS)) for _ in range(n)]
    if rng.random() < 0.5:
        kinds[0] = "FreeFlyer"
    links = rng.choice(np.arange(1, n + 1), size=3)
    cons = [(int(j), C6 if k % 2 else C3) for k, j in enumerate(links)]
    relaxed, cms = build_tree(TreeSpec(parents, kinds, cons, bool(rng.random() < 0.5), seed))
    model, cms, pairs = add_mimics(relaxed, cms, rng, int(rng.integers(1, 4)))
    if not pairs:
        return mimic_tree(seed + 1000, n)
    return model, cms, relaxed, pairs


def test_generator_makes_mimic_trees():
    assert all(mimic_tree(seed)[3] for seed in range(20))


def truths(model, cms, relaxed, pairs, q):
    """The reduced truth, and Pinocchio's own when no mimic is helical (then both must agree)."""
    truth = reduced_truth(model, cms, relaxed, pairs, q)
    if not any(relaxed.joints[m].shortname().startswith("JointModelH") for m, *_ in pairs):
        assert rel_err(dense_delassus(model, q, cms), truth) <= TOL
    return truth


@pytest.mark.parametrize("seed", slow_ones(range(12), {0, 2, 8, 9}))
def test_mimic_trees_every_algorithm_numpy_and_batch(seed):
    model, cms, relaxed, pairs = mimic_tree(seed)
    rng = np.random.default_rng(seed)
    qs = np.stack([random_q(model, rng) for _ in range(3)])
    data = model.createData()
    for algorithm in pvosimr.ALGORITHMS:
        batch = pvosimr.compute_delassus_batch(model, qs, cms, algorithm)
        for q, Gb in zip(qs, batch, strict=True):
            truth = truths(model, cms, relaxed, pairs, q)
            G = pvosimr.compute_delassus(model, data, q, cms, algorithm)
            assert np.array_equal(G, G.T)
            assert rel_err(G, truth) <= TOL, (algorithm, rel_err(G, truth))
            assert rel_err(Gb, truth) <= TOL, (algorithm, "batch", rel_err(Gb, truth))


@pytest.mark.slow  # CasADi graphs: seconds each
@pytest.mark.parametrize("seed", [0, 5])
def test_mimic_trees_casadi(seed):
    delassus_function = pytest.importorskip("pvosimr.symbolic").delassus_function
    model, cms, relaxed, pairs = mimic_tree(seed)
    q = random_q(model, np.random.default_rng(seed))
    truth = truths(model, cms, relaxed, pairs, q)
    for algorithm in pvosimr.ALGORITHMS:
        G = np.array(delassus_function(model, cms, algorithm)(q))
        assert rel_err(G, truth) <= TOL, (algorithm, rel_err(G, truth))


def test_coupling_rows_give_the_mimic_rate():
    """Σ rows · v_link = θ̇_mimic − s q̇_primary for any velocity of the relaxed tree."""
    from pvosimr.kinematics.frames import numeric_kinematics

    for seed in range(6):
        model, cms, *_ = mimic_tree(seed)
        topo = pvosimr.Topology(model, cms)
        rng = np.random.default_rng(seed)
        q = random_q(model, rng)
        kin = numeric_kinematics(model, model.createData(), q, topo, cms)
        u = rng.standard_normal(topo.nv_relaxed)
        v = [np.zeros((6, 1))]
        for i in topo.links:
            dofs = slice(topo.tree.idx_v[i], topo.tree.idx_v[i] + topo.tree.nv[i])
            v.append(kin.X[i].motion(v[topo.parent[i]]) + kin.S[i] @ u[dofs, None])
        for c in topo.couplings:
            rate = sum(float((row @ v[link])[0, 0]) for link, row in c.rows)
            expected = u[topo.tree.idx_v[c.joint]] - c.scaling * u[topo.tree.idx_v[c.primary]]
            assert abs(rate - expected) <= 1e-12 * max(1.0, np.abs(u).max())


def test_zero_scaling_is_refused_by_name():
    base, _ = build_tree(TreeSpec([0, 1, 1], ["RZ", "RX", "RY"], [], False, 0))
    frozen = pin.transformJointIntoMimic(base, 2, 3, 0.0, 0.1)
    with pytest.raises(NotImplementedError, match=r"joint 3 .* scaling 0"):
        pvosimr.Topology(frozen, [])


@pytest.mark.slow
@pytest.mark.long  # the oldest pin's run leaves it out (.ci/run)
def test_many_mimic_trees():
    """400 random trees of 5–20 joints with mimic couplings, every algorithm, numpy and batch
    (PV-OSIMh on a drawn plan, the rule's on every tenth tree)."""
    worst = 0.0
    for seed in range(100, 500):
        model, cms, relaxed, pairs = mimic_tree(seed, n=5 + seed % 16)
        drawn_plan(model, cms, seed)
        rng = np.random.default_rng(seed)
        qs = np.stack([random_q(model, rng) for _ in range(2)])
        for algorithm in pvosimr.ALGORITHMS:
            batch = pvosimr.compute_delassus_batch(model, qs, cms, algorithm)
            for q, Gb in zip(qs, batch, strict=True):
                truth = reduced_truth(model, cms, relaxed, pairs, q)
                G = pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm)
                worst = max(worst, rel_err(G, truth), rel_err(Gb, truth))
                assert worst <= TOL, (seed, algorithm, worst)
    print(f"worst relative error over 400 mimic trees: {worst:.2e}")

"""Deep serial chains: the recursive algorithms stay at the dense truth's accuracy.

On chains of spherical joints an antisymmetric rounding error in ``D_i⁻¹`` is amplified joint by
joint through the articulated-body recursion (60 links: 0.4 relative error, 80 links: 1e5)
while the condition number of M stays near 1e6.  The backends' ``inv`` is exactly symmetric;
these chains check it on every numeric path.
"""

import numpy as np
import pytest

import pvosimr
from benchmarks.accuracy.truths import dense_truth
from pvosimr.backends import NUMPY
from pvosimr.backends.batched import BatchedNumpyBackend, MatrixStack
from pvosimr.reference.truth import TOLERANCE, rel_err
from pvosimr.zoo.seeded import random_chain, random_q

TOL = TOLERANCE


@pytest.mark.slow  # seconds of numpy work per chain
@pytest.mark.parametrize(("kind", "n"), [("Spherical", 80), ("FreeFlyer", 40)])
def test_deep_chain_every_algorithm_matches_dense_truth(kind, n):
    """A chain of ``n`` joints of one kind, welded at the tip and the base, touched in the
    middle; one ``pin.Data`` (O(nv³) bytes) serves the truth and every algorithm."""
    model, cms = random_chain([kind] * n, seed=0)
    q = random_q(model, np.random.default_rng(1))
    data = model.createData()
    truth, _, M = dense_truth(
        model, data, q, cms
    )  # pvosimr.reference.truth.dense_delassus on this Data
    assert np.linalg.cond(M) < 1e8  # well inside the accuracy promise
    for algorithm in pvosimr.ALGORITHMS:
        G = pvosimr.compute_delassus(model, data, q, cms, algorithm)
        assert rel_err(G, truth) <= TOL, (algorithm, rel_err(G, truth))
        Gb = pvosimr.compute_delassus_batch(model, q[None], cms, algorithm)[0]
        assert rel_err(Gb, truth) <= TOL, (algorithm, "batch", rel_err(Gb, truth))


@pytest.mark.parametrize("d", [2, 3, 6])
def test_inverses_are_exactly_symmetric(d):
    rng = np.random.default_rng(d)
    A = rng.standard_normal((d, d))
    a = A @ A.T + d * np.eye(d)
    a[0, -1] += 1e-9  # a rounding-sized asymmetry, as Sᵀ H^A S has: only the lower part is read
    x = NUMPY.inv(a)
    assert np.array_equal(x, x.T)
    assert np.allclose(x @ np.tril(a) + x @ np.tril(a, -1).T, np.eye(d), atol=1e-12)
    stack = BatchedNumpyBackend(2).inv(MatrixStack(np.stack([a, a])))
    assert np.array_equal(stack.a, stack.a.swapaxes(1, 2))


def test_ltl_ancestor_runs_cover_exactly_the_ancestors():
    from pvosimr.algorithms.ltl_osim import ancestor_runs

    lam = (-1, 0, 1, 1, 3, 0, 5, -1, 7)  # two roots, branches at dofs 0, 1 and 7
    runs = ancestor_runs(lam)
    for k, rk in enumerate(runs):
        expected, i = [], lam[k]
        while i != -1:
            expected.append(i)
            i = lam[i]
        assert [j for r in rk for j in range(r.start, r.stop)] == sorted(expected)
    assert runs[4] == (slice(0, 2), slice(3, 4))


@pytest.mark.slow
@pytest.mark.long  # the oldest pin's run leaves it out (.ci/run)
@pytest.mark.parametrize(("kind", "n"), [("Spherical", 80), ("FreeFlyer", 40)])
def test_deep_chain_with_loop_closures_matches_dense_truth(kind, n):
    """The same chains closed into loops: a world-aligned 6D weld from the tip to the first
    link, a world-aligned point in the middle, a LOCAL 3D point from the tip to the middle."""
    import pinocchio as pin

    from pvosimr.reference.truth import dense_delassus

    model, (tip, mid, base) = random_chain([kind] * n, seed=0)
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    cms = [
        pin.RigidConstraintModel(
            tip.type, model, tip.joint1_id, tip.joint1_placement,
            base.joint1_id, base.joint1_placement, lwa,
        ),
        pin.RigidConstraintModel(mid.type, model, mid.joint1_id, mid.joint1_placement, lwa),
        pin.RigidConstraintModel(
            pin.ContactType.CONTACT_3D, model, tip.joint1_id, tip.joint1_placement,
            mid.joint1_id, mid.joint1_placement, pin.ReferenceFrame.LOCAL,
        ),
    ]  # fmt: skip
    q = random_q(model, np.random.default_rng(1))
    truth = dense_delassus(model, q, cms)
    data = model.createData()
    for algorithm in pvosimr.ALGORITHMS:
        G = pvosimr.compute_delassus(model, data, q, cms, algorithm)
        assert rel_err(G, truth) <= TOL, (algorithm, rel_err(G, truth))
        Gb = pvosimr.compute_delassus_batch(model, q[None], cms, algorithm)[0]
        assert rel_err(Gb, truth) <= TOL, (algorithm, "batch", rel_err(Gb, truth))

"""The CUDA kernels' own C (:meth:`pvosimr.codegen.cuda.CudaDelassus.host`) against the dense
truth (:mod:`pvosimr.reference.truth`), not the CPU library, on inputs built to break them:
every kind of joint and of unit part (off the unit sphere too), loop closures and every kind of
constraint, deep chains, nearly aligned axes, extreme and alternating masses, a mass matrix
that is singular, and random trees (hypothesis).

G in float64 meets the project's tolerance (``rel_err ≤ TOLERANCE``); the gradient of
``⟨W, G(N(q))⟩`` in q's coordinates (float64) meets it against central differences of the
truth's G in q's own coordinates, ``N`` dividing each unit part by its norm; G in float32 meets
:func:`float32_bound`, float32's epsilon times the conditioning of M, which the measured
errors (docs/cuda.md, "float32") stay far below.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _codegen import codegen_or_skip
from _trees import (
    ANCHOR_MODELS,
    TreeSpec,
    branching_tree,
    build_tree,
    chain_of,
    every_kind_of_joint,
    mass_on_the_first_axis,
    mixed_kinds,
    tree_specs,
    with_anchors,
)
from hypothesis import HealthCheck, given, settings

from pvosimr.codegen.c_source import NON_FINITE, OK
from pvosimr.constraints import rows
from pvosimr.coordinates import unit_part_spans
from pvosimr.reference.truth import TOLERANCE, dense_delassus, mass_matrix, rel_err
from pvosimr.zoo.seeded import random_chain, random_q

build = codegen_or_skip()
cuda = pytest.importorskip("pvosimr.codegen.cuda")

C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D
LOCAL, LWA = pin.LOCAL, pin.LOCAL_WORLD_ALIGNED
EPS32 = float(np.finfo(np.float32).eps)
#: Norms of the unit parts in the rows of :func:`off_the_sphere` (the kernel computes G(N(q))).
NORMS = (1.0, 0.3, 4.0)
#: Steps of the central differences (a five-point stencil, error O(h⁴)); the two steps'
#: results must agree to a tenth of the tolerance, or the reference is not good enough.
STEPS = (2e-4, 1e-4)


# --------------------------------------------------------------------------- the references


def unit(model: pin.Model, q: np.ndarray) -> np.ndarray:
    """``N(q)``: each unit quaternion and unit complex number of ``q`` divided by its norm."""
    q = np.array(q, dtype=np.float64)
    for start, length in unit_part_spans(model):
        q[start : start + length] /= np.linalg.norm(q[start : start + length])
    return q


def truth(model: pin.Model, cms: list, q: np.ndarray) -> np.ndarray:
    """The dense ``J M⁻¹ Jᵀ`` at ``N(q)``."""
    return dense_delassus(model, unit(model, q), cms)


def off_the_sphere(model: pin.Model, qs: np.ndarray) -> np.ndarray:
    """``qs`` with row ``r``'s unit parts scaled by ``NORMS[r % 3]``: the same ``N(q)``."""
    qs = qs.copy()
    for r in range(len(qs)):
        for start, length in unit_part_spans(model):
            qs[r, start : start + length] *= NORMS[r % len(NORMS)]
    return qs


def configurations(model: pin.Model, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return off_the_sphere(model, np.array([random_q(model, rng) for _ in range(count)]))


def float32_bound(model: pin.Model, q: np.ndarray) -> float:
    """What G in float32 may lose against the truth, ``rel_err``: ``eps₃₂ (nv + cond₂(M))``.
    A backward-stable solve with M loses ``cond(M) eps`` relative to ``|G|`` to first order;
    ``nv eps`` covers the rounding of the length-nv sums and of ``N(q)`` to float32 where M is
    well conditioned.  The measured errors stay 12 to 250 times below it (docs/cuda.md)."""
    return EPS32 * (model.nv + np.linalg.cond(mass_matrix(model, unit(model, q))))


def differences(model: pin.Model, cms: list, q: np.ndarray, W: np.ndarray, h: float):
    """``d/dq_k Σ W ∘ G(N(q))`` for every entry ``k`` of ``q`` (nq numbers): five-point central
    differences of the truth in q's own coordinates, unit parts moved off their sphere."""

    def f(x: np.ndarray) -> float:
        return float(np.sum(W * truth(model, cms, x)))

    out = np.zeros(model.nq)
    for k in range(model.nq):
        e = np.zeros(model.nq)
        e[k] = h
        out[k] = (f(q - 2 * e) - 8 * f(q - e) + 8 * f(q + e) - f(q + 2 * e)) / (12 * h)
    return out


# --------------------------------------------------------------------------- the checks


def g_errors(kernel, model: pin.Model, cms: list, qs: np.ndarray) -> list[float]:
    """``rel_err`` of the kernel's G against the truth at each row of ``qs`` (in float32 at q
    rounded to float32, as the kernel reads it); every status OK."""
    if kernel.dtype == "float32":
        qs = qs.astype(np.float32).astype(np.float64)
    G, status = kernel.host(qs)
    assert status.tolist() == [OK] * len(qs)
    m = kernel.m
    # column-major m × m: G is symmetric, but the transpose is what the kernel writes
    return [rel_err(g.reshape(m, m).T, truth(model, cms, q)) for g, q in zip(G, qs, strict=True)]


def check_float64(kernel, model: pin.Model, cms: list, qs: np.ndarray) -> float:
    errors = g_errors(kernel, model, cms, qs)
    assert max(errors) <= TOLERANCE, errors
    return max(errors)


def check_float32(kernel, model: pin.Model, cms: list, qs: np.ndarray) -> list[float]:
    """Each row's error within :func:`float32_bound`; the errors and bounds' ratios."""
    errors = g_errors(kernel, model, cms, qs)
    qs32 = qs.astype(np.float32).astype(np.float64)
    bounds = [float32_bound(model, q) for q in qs32]
    assert all(e <= b for e, b in zip(errors, bounds, strict=True)), (errors, bounds)
    return [e / b for e, b in zip(errors, bounds, strict=True)]


def check_gradient(kernel, model: pin.Model, cms: list, qs: np.ndarray, seed: int = 1) -> float:
    """The gradient kernel against :func:`differences` of the truth, to ``TOLERANCE`` of
    ``max(1, max|g|)`` (``rel_err``), with weights that are not symmetric."""
    W = np.random.default_rng(seed).standard_normal((len(qs), kernel.m, kernel.m))
    gradient, status = kernel.host(qs, W=W)
    assert status.tolist() == [OK] * len(qs)
    worst = 0.0
    for g, q, w in zip(gradient, qs, W, strict=True):
        coarse, fine = (differences(model, cms, q, w, h) for h in STEPS)
        assert rel_err(coarse, fine) <= TOLERANCE / 10  # the reference is good enough
        worst = max(worst, rel_err(g, fine))
    assert worst <= TOLERANCE, worst
    return worst


# --------------------------------------------------------------------------- the inputs


def loop_tree() -> tuple[pin.Model, list]:
    """A ball joint (a unit quaternion), an unbounded revolute (a unit complex number) and a
    prismatic in a chain, masses 1e3 apart; a LOCAL point contact on the middle link and a
    world-aligned loop closure from the tip to it (m = 6)."""
    model, cms = build_tree(TreeSpec([0, 1, 2], ["Spherical", "RUBY", "PZ"], [(2, C3), (3, C3)],
                                     False, 7))  # fmt: skip
    heavy = model.inertias[2]
    model.inertias[2] = pin.Inertia(1e3 * heavy.mass, heavy.lever, 1e3 * heavy.inertia)
    tip, middle = cms[1].joint1_placement, cms[0].joint1_placement
    closure = pin.RigidConstraintModel(C3, model, 3, tip, 2, middle, LWA)
    return model, [cms[0], closure]


def unit_parts_chain() -> tuple[pin.Model, list]:
    """Every kind of joint (:func:`_trees.every_kind_of_joint`: free flyer, ball, planar,
    unbounded revolutes, a composite, …) with a 6D weld at the tip, a point contact in the
    middle and a world-aligned 3D loop closure from the tip to the ball's link."""
    model = every_kind_of_joint()
    X = pin.SE3(pin.exp3(np.array([0.3, -0.2, 0.5])), np.array([0.1, 0.2, 0.05]))
    tip = model.njoints - 1
    return model, [
        pin.RigidConstraintModel(C6, model, tip, X, LOCAL),
        pin.RigidConstraintModel(C3, model, 4, X.inverse(), LOCAL),
        pin.RigidConstraintModel(C3, model, tip, X, 2, X.inverse(), LWA),
    ]


def nearly_aligned(delta: float) -> tuple[pin.Model, list]:
    """Two revolute joints at one point whose axes are ``delta`` rad apart, the first one's
    link massless, then a ball joint and a heavy link: M's condition grows like 1/delta²,
    while G stays bounded; a 6D weld at the tip, a point contact on the second link."""
    axis = np.array([0.0, 0.6, 0.8])
    tilted = pin.exp3(delta * np.array([1.0, 0.0, 0.0])) @ axis
    model = chain_of([pin.JointModelRevoluteUnaligned(axis),
                      pin.JointModelRevoluteUnaligned(tilted), pin.JointModelSpherical()])  # fmt: skip
    model.jointPlacements[2] = pin.SE3.Identity()
    model.inertias[1] = pin.Inertia.Zero()
    X = pin.SE3(pin.exp3(np.array([0.2, 0.1, -0.3])), np.array([0.1, 0.0, 0.3]))
    return model, [
        pin.RigidConstraintModel(C6, model, 3, X, LOCAL),
        pin.RigidConstraintModel(C3, model, 2, X, LOCAL),
    ]


def masses(ratio: float, alternating: bool) -> tuple[pin.Model, list]:
    """A chain of 8 ball joints, welded at tip and base and touched in the middle, whose links'
    masses and inertias alternate between 1 and ``ratio`` or fall smoothly from 1 to it."""
    n = 8
    scales = [ratio if i % 2 else 1.0 for i in range(n)] if alternating else [
        ratio ** (i / (n - 1)) for i in range(n)]  # fmt: skip
    return random_chain(["Spherical"] * n, seed=0, inertia_scales=scales)


def rigid_kinds(model: pin.Model) -> list:
    """Every ``RigidConstraintModel``: 3D and 6D, LOCAL and world-aligned, on one body and
    between two (loop closures across branches of :func:`_trees.branching_tree`)."""
    rng = np.random.default_rng(3)
    X = [pin.SE3(pin.exp3(rng.normal(size=3)), 0.3 * rng.normal(size=3)) for _ in range(8)]
    return [
        pin.RigidConstraintModel(C6, model, 4, X[0], 7, X[1], LWA),
        pin.RigidConstraintModel(C3, model, 6, X[2], 2, X[3], LOCAL),
        pin.RigidConstraintModel(C3, model, 8, X[4], LWA),
        pin.RigidConstraintModel(C6, model, 5, X[5], LOCAL),
        pin.RigidConstraintModel(C6, model, 3, X[6], 8, X[7], LOCAL),
        pin.RigidConstraintModel(C3, model, 7, X[1], 5, X[2], LWA),
    ]


def other_kinds(model: pin.Model) -> list:
    """Pin 4's frame anchors, point anchors and point contacts (on one body and two), a generic
    wrapper, row maps (a selection, a matrix) and the joint-space models."""
    rng = np.random.default_rng(4)
    X = [pin.SE3(pin.exp3(rng.normal(size=3)), 0.3 * rng.normal(size=3)) for _ in range(6)]
    frame, point, contact = ANCHOR_MODELS
    hinge = pin.RigidConstraintModel(C6, model, 4, X[0], 7, X[1], LOCAL)
    rod = pin.RigidConstraintModel(C3, model, 5, X[2], 8, X[3], LOCAL)
    return [
        frame(model, 3, X[0], 8, X[1]),
        contact(model, 7, X[2], 0, X[3]),
        point(model, 5, X[4], 4, X[5]),
        pin.ConstraintModel(frame(model, 6, X[1])),
        rows(hinge, [0, 1, 2, 3, 4]),
        rows(rod, np.array([[0.6, 0.0, 0.8]])),
        pin.JointLimitConstraintModel(model, [2, 4]),
        pin.ConstraintModel(pin.JointFrictionConstraintModel(model, [5, 6])),
    ]


#: :func:`_trees.branching_tree`'s kinds: a free flyer, a ball and a planar joint among them.
BRANCHING_KINDS = ["FreeFlyer", "RX", "Spherical", "RY", "PZ", "RZ", "Planar", "HX"]


# --------------------------------------------------------------------------- the default run


@pytest.fixture(scope="module")
def loop():
    model, cms = loop_tree()
    return model, cms, configurations(model, 3)


@pytest.fixture(scope="module")
def loop64(loop):
    model, cms, _ = loop
    return cuda.compile_cuda(model, cms, vjp=True)


def test_g_in_float64_is_the_truth_on_a_loop_closure_off_the_sphere(loop, loop64):
    check_float64(loop64, *loop)


def test_the_gradient_is_differences_of_the_truth_in_qs_coordinates(loop, loop64):
    """The gradient of ``⟨W, G(N(q))⟩`` in q's nq coordinates, unit parts at norms 1, 0.3, 4."""
    check_gradient(loop64, *loop)


def test_g_in_float32_is_the_truth_within_its_bound(loop):
    model, cms, qs = loop
    check_float32(cuda.compile_cuda(model, cms, dtype="float32"), model, cms, qs)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_singular_mass_matrix_is_a_status_never_a_matrix(dtype):
    """A point mass on the first joint's axis: G is the truth where M is regular, and where M
    is singular (the last row) the status says G is not finite, in float32 too."""
    model, cms, qs = mass_on_the_first_axis()
    kernel = cuda.compile_cuda(model, cms, dtype=dtype)
    G, status = kernel.host(qs)
    assert status.tolist() == [OK, OK, NON_FINITE]
    assert not np.isfinite(G[2]).all()
    if dtype == "float64":
        check_float64(kernel, model, cms, qs[:2])
    else:
        check_float32(kernel, model, cms, qs[:2])


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tree_specs(max_joints=3, max_constraints=2).filter(lambda s: s.constraints))
def test_random_trees_float64(spec):
    """Random trees of up to 3 joints of every kind with constraints of every kind (LOCAL or
    world-aligned, on one body or two, pin 4's anchors)."""
    model, cms = build_tree(spec)
    rng = np.random.default_rng(spec.seed)
    cms = with_anchors(model, mixed_kinds(model, cms, rng), rng)
    check_float64(cuda.compile_cuda(model, cms), model, cms, configurations(model, 2, spec.seed))

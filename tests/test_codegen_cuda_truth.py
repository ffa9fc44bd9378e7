"""The CUDA kernels' own C (:meth:`pvosimr.codegen.cuda.CudaDelassus.host`) against the dense
truth (:mod:`pvosimr.reference.truth`), not the CPU library, on inputs built to break them:
every kind of joint and of unit part (off the unit sphere too), loop closures and every kind of
constraint, deep chains, nearly aligned axes, extreme and alternating masses, a mass matrix
that is singular, and random trees (hypothesis).

G in float64 meets the project's tolerance (``rel_err ≤ TOLERANCE``); the gradient of
``⟨W, G(N(q))⟩`` in q's coordinates (float64) meets it against central differences of the
truth's G in q's own coordinates, ``N`` dividing each unit part by its norm; G in float32 meets
:func:`float32_bound`, float32's epsilon times the conditioning of M and the depth of J, which
the measured errors (docs/cuda.md, "Against the truth, and where float32 ends") stay below.
"""

from __future__ import annotations

import re

import numpy as np
import pinocchio as pin
import pytest
from _codegen import codegen_or_skip
from _trees import (
    ANCHOR_MODELS,
    TreeSpec,
    add_mimics,
    branching_tree,
    build_tree,
    chain_of,
    every_kind_of_joint,
    mass_on_the_first_axis,
    mixed_kinds,
    tree_specs,
    with_anchors,
)
from hypothesis import HealthCheck, example, given, settings

from pvosimr.codegen.c_source import NON_FINITE, OK
from pvosimr.constraints import rows
from pvosimr.coordinates import unit_part_spans
from pvosimr.kinematics.placements import placement_vector
from pvosimr.reference.truth import TOLERANCE, dense_delassus, mass_matrix, rel_err
from pvosimr.topology import SUPPORTED_JOINTS
from pvosimr.zoo.seeded import JOINT_KINDS, random_chain, random_q

build = codegen_or_skip()
cuda = pytest.importorskip("pvosimr.codegen.cuda")

C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D
LOCAL, LWA = pin.LOCAL, pin.LOCAL_WORLD_ALIGNED
EPS32, EPS64 = float(np.finfo(np.float32).eps), float(np.finfo(np.float64).eps)
#: Norms of the unit parts in the rows of :func:`off_the_sphere` (the kernel computes G(N(q))).
NORMS = (1.0, 0.3, 4.0)
#: Steps of the central differences (a five-point stencil, error O(h⁴)); the two steps'
#: results differ by the reference's own uncertainty.
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


def float32_bound(nv: int, M: np.ndarray) -> float:
    """What G in float32 may lose against the truth, ``rel_err``: ``eps₃₂ (6 (nv + 1) +
    cond₂(M))`` with ``M`` the mass matrix the algorithm factors.  To first order, a
    backward-stable solve with M loses ``cond(M) eps`` relative to ``|G|``, and J's rounding
    enters G twice: each joint on a row's path (at most nv) and the constraint's frame round
    J's entries through 3-term sums, 3 eps each (docs/cuda.md gives the measured errors)."""
    return EPS32 * (6 * (nv + 1) + np.linalg.cond(M))


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


def g_errors(kernel, model: pin.Model, cms: list, qs: np.ndarray, p=None) -> list[float]:
    """``rel_err`` of the kernel's G against the truth at each row of ``qs`` (in float32 at q
    rounded to float32, as the kernel reads it); every status OK.  ``p``: the placements
    where they are inputs (``cms`` then holds the same ones)."""
    if kernel.dtype == "float32":
        qs = qs.astype(np.float32).astype(np.float64)
    G, status = kernel.host(qs, placements=p)
    assert status.tolist() == [OK] * len(qs)
    m = kernel.m
    # column-major m × m: G is symmetric, but the transpose is what the kernel writes
    return [rel_err(g.reshape(m, m).T, truth(model, cms, q)) for g, q in zip(G, qs, strict=True)]


def check_float64(kernel, model: pin.Model, cms: list, qs: np.ndarray, p=None) -> float:
    errors = g_errors(kernel, model, cms, qs, p)
    assert max(errors) <= TOLERANCE, errors
    return max(errors)


def check_float32(kernel, model: pin.Model, cms: list, qs: np.ndarray, mass=None) -> list[float]:
    """Each row's error within :func:`float32_bound` of ``mass(q)`` (by default M at
    ``N(q)``); the errors' ratios to their bounds."""
    errors = g_errors(kernel, model, cms, qs)
    qs32 = qs.astype(np.float32).astype(np.float64)
    mass = mass or (lambda q: mass_matrix(model, unit(model, q)))
    bounds = [float32_bound(model.nv, mass(q)) for q in qs32]
    assert all(e <= b for e, b in zip(errors, bounds, strict=True)), (errors, bounds)
    return [e / b for e, b in zip(errors, bounds, strict=True)]


def differences_rounding(model: pin.Model, qs: np.ndarray) -> float:
    """What rounding alone leaves :func:`differences` uncertain, to first order: the truth's
    relative rounding, ``eps₆₄ cond(M)``, over the fine step (2e-9 where cond(M) = 1e3)."""
    conds = [np.linalg.cond(mass_matrix(model, unit(model, q))) for q in qs]
    return EPS64 * max(conds) / STEPS[1]


def check_gradient(kernel, model: pin.Model, cms: list, qs: np.ndarray, p=None) -> float:
    """The gradient kernel against :func:`differences` of the truth at the two :data:`STEPS`,
    with weights that are not symmetric: ``rel_err`` within ``TOLERANCE`` beyond the
    differences' own uncertainty (the two steps' ``rel_err``: the truth's rounding divided by
    the step, where M is ill-conditioned).  Returns the largest uncertainty."""
    W = np.random.default_rng(1).standard_normal((len(qs), kernel.m, kernel.m))
    gradient, status = kernel.host(qs, placements=p, W=W)
    assert status.tolist() == [OK] * len(qs)
    worst = 0.0
    for g, q, w in zip(gradient, qs, W, strict=True):
        coarse, fine = (differences(model, cms, q, w, h) for h in STEPS)
        uncertainty = rel_err(coarse, fine)
        assert rel_err(g, fine) <= TOLERANCE + 2 * uncertainty, (rel_err(g, fine), uncertainty)
        worst = max(worst, uncertainty)
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
    revolutes = [pin.JointModelRevoluteUnaligned(a) for a in (axis, tilted)]
    model = chain_of([*revolutes, pin.JointModelSpherical()])
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


def anchor_kinds(model: pin.Model) -> list:
    """Pin 4's frame anchors, point anchors and point contacts, on one body and two, one in a
    generic ``pin.ConstraintModel`` wrapper."""
    rng = np.random.default_rng(4)
    X = [pin.SE3(pin.exp3(rng.normal(size=3)), 0.3 * rng.normal(size=3)) for _ in range(6)]
    frame, point, contact = ANCHOR_MODELS
    return [
        frame(model, 3, X[0], 8, X[1]),
        contact(model, 7, X[2], 0, X[3]),
        point(model, 5, X[4], 4, X[5]),
        pin.ConstraintModel(frame(model, 6, X[1])),
    ]


def lowered_kinds(model: pin.Model) -> list:
    """Row maps (a revolute loop closure picked from a 6D one, a distance along a direction
    from a 3D one) and pin 4.1's joint-space models (limits; friction in a generic wrapper)."""
    rng = np.random.default_rng(5)
    X = [pin.SE3(pin.exp3(rng.normal(size=3)), 0.3 * rng.normal(size=3)) for _ in range(4)]
    hinge = pin.RigidConstraintModel(C6, model, 4, X[0], 7, X[1], LOCAL)
    rod = pin.RigidConstraintModel(C3, model, 5, X[2], 8, X[3], LOCAL)
    return [
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
    """The gradient of ``⟨W, G(N(q))⟩`` in q's nq coordinates, unit parts at norms 1, 0.3, 4:
    within the tolerance, the differences good to a quarter of it."""
    assert check_gradient(loop64, *loop) <= TOLERANCE / 4


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


@pytest.fixture(scope="module")
def aligned():
    model, cms = nearly_aligned(1e-3)
    return model, cms, configurations(model, 3)


def test_nearly_aligned_axes(aligned):
    """cond(M) = 1e7: float64 within the tolerance, float32 within its bound."""
    model, cms, qs = aligned
    for dtype, check in (("float64", check_float64), ("float32", check_float32)):
        check(cuda.compile_cuda(model, cms, dtype=dtype), model, cms, qs)


def random_tree(spec: TreeSpec) -> tuple[pin.Model, list]:
    """``spec``'s tree with its constraints of every kind (LOCAL or world-aligned, on one body
    or two, pin 4's anchors), drawn from its seed."""
    model, cms = build_tree(spec)
    rng = np.random.default_rng(spec.seed)
    return model, with_anchors(model, mixed_kinds(model, cms, rng), rng)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tree_specs(max_joints=3, max_constraints=2).filter(lambda s: s.constraints))
def test_random_trees_float64(spec):
    model, cms = random_tree(spec)
    check_float64(cuda.compile_cuda(model, cms), model, cms, configurations(model, 2, spec.seed))


def broken(kernel, old: str, new: str, count: int = 1):
    """``kernel`` with the first ``count`` matches of the pattern ``old`` in its source
    replaced by ``new`` (a string or a function of the match, as ``re.sub`` takes them)."""
    source, found = re.subn(old, new, kernel.source, count=count)
    assert found
    sizes = {"nq": kernel.nq, "nv": kernel.nv, "m": kernel.m, "n_p": kernel.n_p,
             "n_out": kernel.n_out, "vjp": len(kernel.kernels) == 2}  # fmt: skip
    return cuda.CudaDelassus(source, sizes, kernel.algorithm, kernel.dtype)


#: A constant in the kernel's body.
CONSTANT = r"PV_C\(([0-9.e+-]+)\)"
#: Where the kernel takes a unit part as given, else divides it by its norm.
DIVIDED = re.escape(" ? 1.0 : sqrt(s);")


def test_the_checks_catch_a_broken_kernel(aligned, loop):
    """Each check above fails on a kernel broken in one place: a constant of the body 1e-7
    off (float64), every constant rounded to 4 digits (float32), unit parts read as given
    rather than divided by their norm, a status check that passes a G that is not finite."""
    model, cms, qs = aligned
    kernel = cuda.compile_cuda(model, cms)
    off = broken(kernel, CONSTANT, lambda c: f"PV_C({float(c[1]) * (1 + 1e-7)!r})")
    with pytest.raises(AssertionError):
        check_float64(off, model, cms, qs)
    model, cms, qs = loop
    kernel = cuda.compile_cuda(model, cms, dtype="float32")
    rounded = broken(kernel, CONSTANT, lambda c: f"PV_C({float(c[1]):.4g})", count=0)
    with pytest.raises(AssertionError):
        check_float32(rounded, model, cms, qs)
    as_given = broken(cuda.compile_cuda(model, cms), DIVIDED, " ? 1.0 : 1.0;")
    with pytest.raises(AssertionError):
        check_float64(as_given, model, cms, qs)
    model, cms, qs = mass_on_the_first_axis()
    blind = broken(cuda.compile_cuda(model, cms), re.escape("if (!(x - x == 0)) return 0;"), "")
    _, status = blind.host(qs)
    assert status[2] == OK  # what test_a_singular_mass_matrix_is_a_status_never_a_matrix sees


@pytest.mark.slow  # a gradient kernel of its own
def test_placements_as_inputs(loop):
    """``placements="input"``: G and the gradient at placements other than the model's, the
    loop closure's two among them, against the truth of constraints placed there."""
    model, cms, qs = loop
    kernel = cuda.compile_cuda(model, cms, vjp=True, placements="input")
    rng = np.random.default_rng(6)
    X = [pin.SE3(pin.exp3(rng.normal(size=3)), 0.3 * rng.normal(size=3)) for _ in range(3)]
    p = placement_vector(model, cms, [X[0], (X[1], X[2])])
    assert kernel.n_p == len(p) == 3 * 12
    moved = [
        pin.RigidConstraintModel(C3, model, cms[0].joint1_id, X[0], LOCAL),
        pin.RigidConstraintModel(C3, model, cms[1].joint1_id, X[1], cms[1].joint2_id, X[2], LWA),
    ]
    check_float64(kernel, model, moved, qs, p)
    assert check_gradient(kernel, model, moved, qs, p) <= TOLERANCE / 4


@pytest.mark.slow  # a gradient kernel of its own
def test_the_gradient_check_catches_unit_parts_read_as_given(loop, loop64):
    as_given = broken(loop64, DIVIDED, " ? 1.0 : 1.0;")
    with pytest.raises(AssertionError):
        check_gradient(as_given, *loop)


# --------------------------------------------------------------------------- the slow run


def deep_chain() -> tuple[pin.Model, list]:
    """24 ball joints (nv = 72), welded at tip and base, touched in the middle: 43,796 CasADi
    instructions, the deepest such chain below ``CHUNKED_FROM`` (the kernels take no chunks)."""
    return random_chain(["Spherical"] * 24, seed=0)


def constraint_kinds(kinds) -> tuple[pin.Model, list]:
    """:func:`_trees.branching_tree` with the constraints ``kinds`` of it."""
    if kinds is not rigid_kinds and not hasattr(pin, "JointLimitConstraintModel"):
        pytest.skip("pin 4's constraint models")
    model = branching_tree(BRANCHING_KINDS)
    return model, kinds(model)


#: The inputs of the slow run, each with a few configurations off the sphere.
HARD = {
    "every kind of joint": unit_parts_chain,
    "every joint type": lambda: random_chain(list(JOINT_KINDS), seed=0),
    "deep chain": deep_chain,
    "nearly aligned axes 1e-2": lambda: nearly_aligned(1e-2),
    "alternating masses 1e4": lambda: masses(1e4, True),
    "masses falling to 1e-8": lambda: masses(1e-8, False),
    "every rigid constraint": lambda: constraint_kinds(rigid_kinds),
    "pin 4 anchors": lambda: constraint_kinds(anchor_kinds),
    "row maps and joint-space models": lambda: constraint_kinds(lowered_kinds),
}


@pytest.mark.slow  # a C build of seconds to a minute per input and dtype
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(HARD))
def test_hard_inputs(name, dtype):
    model, cms = HARD[name]()
    qs = configurations(model, 3)
    kernel = cuda.compile_cuda(model, cms, dtype=dtype)
    (check_float64 if dtype == "float64" else check_float32)(kernel, model, cms, qs)


@pytest.mark.slow  # gradient kernels: seconds to a minute each
@pytest.mark.parametrize("name", ["every kind of joint", "nearly aligned axes 1e-2"])
def test_hard_gradients(name):
    """Where cond(M) is 1e4 and 1e5 the truth's rounding divided by the step leaves the
    differences 1e-9 and 1e-7 uncertain (measured): the check is that much looser there."""
    model, cms = HARD[name]()
    qs = configurations(model, 3)
    assert check_gradient(cuda.compile_cuda(model, cms, vjp=True), model, cms, qs) <= 1e-6


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tree_specs(max_joints=4, max_constraints=3).filter(lambda s: s.constraints))
# One revolute joint with a point contact: 2.3 eps in float32, beyond eps (nv + cond(M)).
@example(spec=TreeSpec([0], ["RZ"], [(1, C3)], False, 2353))
# cond(M) 2e3: the differences 1.1e-9 uncertain, the truth's rounding over the step.
@example(spec=TreeSpec([0, 1, 1], ["RZ", "Universal", "Composite"], [(3, C6), (2, C6)], False,
                       273265))  # fmt: skip
def test_random_trees_every_kernel(spec):
    """G in float64 and float32, and the gradient, on random trees of up to 4 joints; a
    gradient beyond ``CHUNKED_FROM`` (three ellipsoid or free joints under three contacts) is
    refused in one line, as the kernels refuse chunks."""
    model, cms = random_tree(spec)
    qs = configurations(model, 2, spec.seed)
    try:
        kernel = cuda.compile_cuda(model, cms, vjp=True)
    except cuda.CudaError as exc:
        assert "delassus_vjp_pv_osimr has more than" in str(exc) and "CHUNKED_FROM" in str(exc)
        kernel = cuda.compile_cuda(model, cms)
    else:
        # the differences as certain as the truth's rounding lets them be
        uncertainty = check_gradient(kernel, model, cms, qs)
        assert uncertainty <= max(TOLERANCE, differences_rounding(model, qs))
    check_float64(kernel, model, cms, qs)
    check_float32(cuda.compile_cuda(model, cms, dtype="float32"), model, cms, qs)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_mimic_joint(dtype):
    """A revolute joint that mimics a helical one (``pin.transformJointIntoMimic``) beside a
    prismatic, a weld and a point contact.  The library computes G as a Schur complement on
    the relaxed tree (:mod:`pvosimr.mimic`): in float32 its error is bounded by the relaxed
    tree's M (cond 100 to 600 here, the reduced one's 2 to 14), whose Delassus matrix is 40
    times the reduced one (measured: 23 to 67 eps₃₂)."""
    if "JointModelMimic" not in SUPPORTED_JOINTS:
        pytest.skip(f"pvosimr takes no mimic joints from pin {pin.__version__}")
    spec = TreeSpec([0, 1, 2, 1], ["RX", "HY", "RevoluteUnaligned", "PZ"], [(3, C6), (4, C3)],
                    True, 5)  # fmt: skip
    relaxed, cms = build_tree(spec)
    model, cms, pairs = add_mimics(relaxed, cms, np.random.default_rng(2), 2)
    [(mimic, primary, scaling, offset)] = pairs
    assert (mimic, primary) == (3, 2)
    qs = configurations(model, 3)
    kernel = cuda.compile_cuda(model, cms, dtype=dtype)
    if dtype == "float64":
        check_float64(kernel, model, cms, qs)
        return

    def relaxed_mass(q: np.ndarray) -> np.ndarray:  # the mimic's angle between q's entries
        angle = scaling * q[model.joints[primary].idx_q] + offset
        return mass_matrix(relaxed, np.insert(q, relaxed.joints[mimic].idx_q, angle))

    check_float32(kernel, model, cms, qs, relaxed_mass)

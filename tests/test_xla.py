"""The XLA route (:mod:`pvosimr.jax.xla`): the algorithm bodies on the JAX backend.

Against independent truths: G against the numpy path ``pvosimr.compute_delassus``
(≤ 1e-12 of ``max(1, max|G|)``, float64) on the sample humanoid with weld, point,
world-aligned and two-body constraints, on random trees with every joint type and every
constraint kind (pin 4's models included), for every algorithm of :data:`pvosimr.ALGORITHMS`,
at configurations whose unit parts are off the unit sphere; JAX's gradient of ⟨W, G⟩ against
central differences.  What both XLA builders promise (shapes, placements as inputs, float32, the
gradient and jvp against the CasADi functions, bad input) is checked on each in
tests/test_xla_builders.py.  The functions run eagerly except where ``jit`` is the
subject; every check against the numpy path and every compile is ``-m slow``.  JAX's x64 mode is
switched on per test and restored.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _trees import (
    random_q,
)

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from _jax import (  # noqa: E402
    TOLERANCE,
    check_against_numpy,
    fresh_python,
    mixed_tree,
    rel,
    tree_with_unit_parts,
)

import pvosimr  # noqa: E402
from pvosimr.backends.numpy import NUMPY  # noqa: E402
from pvosimr.kinematics.joints import configuration_tangent  # noqa: E402

xla = pytest.importorskip("pvosimr.jax.xla")

TREE_SEEDS = range(2)


def humanoid() -> tuple[pin.Model, list]:
    """The sample humanoid (free-flyer) with a weld, a world-aligned point, a LOCAL point and a
    weld between two bodies."""
    model = pin.buildSampleModelHumanoid()
    rng = np.random.default_rng(3)

    def placement() -> pin.SE3:
        return pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.1)

    def cm(joint: str, kind, frame=pin.LOCAL, joint2: str | None = None):
        j2 = model.getJointId(joint2) if joint2 else 0
        return pin.RigidConstraintModel(
            kind, model, model.getJointId(joint), placement(), j2, placement(), frame
        )

    six, three = pin.ContactType.CONTACT_6D, pin.ContactType.CONTACT_3D
    cms = [
        cm("lleg_wrist2_joint", six),
        cm("rleg_wrist2_joint", three, pin.LOCAL_WORLD_ALIGNED),
        cm("rarm_wrist2_joint", three),
        cm("larm_wrist2_joint", six, pin.LOCAL, "chest2_joint"),
    ]
    return model, cms


# --------------------------------------------------------------------------- G


def test_trees_draw_many_joint_kinds_and_every_constraint_kind():
    trees = [mixed_tree(s) for s in TREE_SEEDS]
    kinds = {str(j.shortname()).removeprefix("JointModel") for m, _ in trees for j in m.joints[1:]}
    assert len(kinds) >= 5, kinds  # every kind: the slow suite's 40 trees
    cms = [cm for _, c in trees for cm in c]
    assert any(getattr(cm, "joint2_id", 0) for cm in cms)
    assert any(getattr(cm, "reference_frame", None) == pin.LOCAL_WORLD_ALIGNED for cm in cms)


@pytest.mark.slow  # JAX tracing eagerly: seconds per tree
@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_random_trees_against_numpy(seed, x64):
    check_against_numpy(xla.compile_xla, *mixed_tree(seed), seed)


@pytest.mark.slow  # JAX tracing eagerly: seconds per algorithm
@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_every_algorithm_on_a_random_tree(algorithm, x64):
    check_against_numpy(xla.compile_xla, *mixed_tree(4), 4, algorithm, n_q=1)


@pytest.mark.slow  # JAX tracing eagerly: seconds per algorithm
@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_humanoid_constraint_kinds(algorithm, x64):
    check_against_numpy(xla.compile_xla, *humanoid(), 0, algorithm, n_q=1)


@pytest.mark.slow
def test_the_slow_trees_draw_every_joint_kind():
    from pvosimr.zoo.seeded import JOINT_KINDS

    trees = [mixed_tree(s) for s in range(40)]
    kinds = {str(j.shortname()).removeprefix("JointModel") for m, _ in trees for j in m.joints[1:]}
    assert {k.removeprefix("JointModel") for k in JOINT_KINDS} <= kinds


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 40))
def test_many_random_trees(seed, x64):
    model, cms = mixed_tree(seed)
    check_against_numpy(
        xla.compile_xla, model, cms, seed, ("pv-osimr", "efpa", "ltl-osim")[seed % 3]
    )


def check_jit_vmap(model: pin.Model, cms: list) -> None:
    G = xla.compile_xla(model, cms)
    rng = np.random.default_rng(1)
    qs = np.stack([random_q(model, rng) for _ in range(3)])
    out = np.asarray(jax.jit(jax.vmap(G))(qs))
    data = model.createData()
    for q, Gx in zip(qs, out, strict=True):
        assert rel(Gx, pvosimr.compute_delassus(model, data, q, cms)) <= TOLERANCE
    assert rel(G(qs.reshape(3, 1, -1))[:, 0], out) <= 1e-14  # any leading batch shape


@pytest.mark.slow  # an XLA compile
def test_jit_vmap(x64):
    """One small XLA compile: jit(vmap(G)) against the numpy path."""
    check_jit_vmap(*mixed_tree(3))


@pytest.mark.slow
def test_jit_vmap_humanoid(x64):
    check_jit_vmap(*humanoid())


def _dot_precisions(jaxpr) -> list:
    """The precision of every ``dot_general`` in ``jaxpr`` and the jaxprs inside it."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            found.append(eqn.params["precision"])
        for param in eqn.params.values():
            for value in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(value, "jaxpr", None)  # a closed jaxpr (cond's branches: many)
                if inner is not None:
                    found += _dot_precisions(getattr(inner, "jaxpr", inner))
    return found


def test_float32_products_ask_for_full_precision(x64):
    """Every product asks XLA for ``Precision.HIGHEST``: at the default, a GPU multiplies
    float32 in TF32, and the float32 G leaves its tolerance (a CPU cannot show it)."""
    model, cms = tree_with_unit_parts()
    G = xla.compile_xla(model, cms)
    q = random_q(model, np.random.default_rng(0)).astype(np.float32)
    highest = (jax.lax.Precision.HIGHEST,) * 2
    loss = jax.grad(lambda x: jnp.sum(G(x)))
    for traced, x in ((G, q), (jax.vmap(G), np.stack([q, q])), (loss, q)):
        precisions = _dot_precisions(jax.make_jaxpr(traced)(x).jaxpr)
        assert precisions
        assert all(p == highest for p in precisions), set(map(str, precisions))


# --------------------------------------------------------------------------- derivatives


@pytest.mark.slow
def test_gradient_against_central_differences(x64):
    """Along each velocity coordinate, ``pin.integrate`` moved both ways, against the numpy
    path: no CasADi involved."""
    model, cms = mixed_tree(2)
    G = xla.compile_xla(model, cms)
    rng = np.random.default_rng(6)
    q = random_q(model, rng)
    W = rng.normal(size=(G.m, G.m))
    g = np.asarray(jax.grad(lambda x: jnp.sum(jnp.asarray(W) * G(x)))(q))
    tangent = g @ configuration_tangent(NUMPY, model, q)
    data, h = model.createData(), 1e-6
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = h
        up = pvosimr.compute_delassus(model, data, pin.integrate(model, q, e), cms)
        down = pvosimr.compute_delassus(model, data, pin.integrate(model, q, -e), cms)
        fd = float(np.sum(W * (up - down)) / (2 * h))
        assert abs(tangent[k] - fd) <= 1e-6 * max(1.0, abs(fd))


# --------------------------------------------------------------------------- bad input


def test_bad_arguments_are_named():
    model, cms = mixed_tree(1)
    with pytest.raises(ValueError, match="placements must be"):
        xla.compile_xla(model, cms, placements="both")
    with pytest.raises(ValueError):
        xla.compile_xla(model, cms, "no-such-algorithm")


def test_importing_the_backends_does_not_import_jax():
    code = (
        "import sys, pvosimr, pvosimr.backends, pvosimr.kinematics.joints; "
        "print(sorted({'jax', 'jaxlib'} & set(sys.modules)))"
    )
    done = fresh_python(code)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


# --------------------------------------------------------------------------- Atlas


@pytest.mark.slow
def test_atlas_two_welds_jit_vmap(x64):
    from pvosimr import zoo

    robot = zoo.load_case("atlas/feet_6d")
    G = xla.compile_xla(robot.model, robot.constraints)
    rng = np.random.default_rng(8)
    qs = np.stack([random_q(robot.model, rng) for _ in range(4)])
    out = np.asarray(jax.jit(jax.vmap(G))(qs))
    data = robot.model.createData()
    for q, Gx in zip(qs, out, strict=True):
        expected = pvosimr.compute_delassus(robot.model, data, q, robot.constraints)
        assert rel(Gx, expected) <= TOLERANCE

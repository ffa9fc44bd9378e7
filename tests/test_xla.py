"""The XLA route (:mod:`pvosimr.jax.xla`): CasADi's instruction graph of ``q ↦ G`` as JAX.

Against independent truths: every emitted operation against CasADi's own evaluation; G against
the numpy path ``pvosimr.compute_delassus`` (≤ 1e-12 of ``max(1, max|G|)``, float64) on a
sample of the zoo and on random trees with every joint type and every constraint kind, at
configurations whose quaternions and unit complex numbers are off the unit sphere.  What both
XLA builders promise (shapes, placements as inputs, float32, the gradient and jvp against the
CasADi functions ``f.vjp`` and ``f.derivatives`` are compiled from, bad input) is checked on
each in tests/test_xla_builders.py.  The functions run eagerly (one JAX operation at a time):
XLA compiles one small function here (``jit``/``vmap``/``jacfwd``), the big ones are timed by
``pvosimr bench`` and checked in ``tests/test_xla_slow.py``.  JAX's x64 mode is switched on
per test and restored.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _trees import (
    random_q,
)

jax = pytest.importorskip("jax")
from _jax import (  # noqa: E402
    check_against_numpy,
    mixed_tree,
    rel,
)

ca = pytest.importorskip("casadi")

import jax.numpy as jnp  # noqa: E402

from pvosimr.zoo import load  # noqa: E402

xla = pytest.importorskip("pvosimr.jax.xla")

TREE_SEEDS = range(10)
ZOO_FAST = ("double_pendulum", "four_bar", "ur5")


# --------------------------------------------------------------------------- the operations


def _domain(op: int) -> tuple[np.ndarray, np.ndarray]:
    """Operands where CasADi's and JAX's operation are both defined (and 0 where it matters)."""
    x = np.array([-0.7, -0.3, 0.0, 0.2, 0.9, 1.0, 2.5])
    y = np.array([0.4, -1.2, 0.5, 0.2, -0.9, 1.0, 0.0])
    if op in (ca.OP_SQRT, ca.OP_LOG, ca.OP_POW, ca.OP_CONSTPOW):
        x = np.abs(x) + 0.1
    if op in (ca.OP_DIV, ca.OP_INV):
        x, y = x + 3.0, y + 3.0
    if op in (ca.OP_ASIN, ca.OP_ACOS):
        x = np.clip(x, -0.95, 0.95)
    return x, y


def _casadi_op(op: int, x, y):
    """The SX expression of one operation, written with CasADi's own functions."""
    unary = {
        ca.OP_ASSIGN: lambda: x * 1,
        ca.OP_NEG: lambda: -x,
        ca.OP_TWICE: lambda: 2 * x,
        ca.OP_SQ: lambda: x * x,
        ca.OP_INV: lambda: 1 / x,
        ca.OP_SQRT: lambda: ca.sqrt(x),
        ca.OP_EXP: lambda: ca.exp(x),
        ca.OP_LOG: lambda: ca.log(x),
        ca.OP_SIN: lambda: ca.sin(x),
        ca.OP_COS: lambda: ca.cos(x),
        ca.OP_TAN: lambda: ca.tan(x),
        ca.OP_ASIN: lambda: ca.asin(x),
        ca.OP_ACOS: lambda: ca.acos(x),
        ca.OP_ATAN: lambda: ca.atan(x),
        ca.OP_SINH: lambda: ca.sinh(x),
        ca.OP_COSH: lambda: ca.cosh(x),
        ca.OP_TANH: lambda: ca.tanh(x),
        ca.OP_FABS: lambda: ca.fabs(x),
        ca.OP_SIGN: lambda: ca.sign(x),
        ca.OP_FLOOR: lambda: ca.floor(x),
        ca.OP_CEIL: lambda: ca.ceil(x),
        ca.OP_ERF: lambda: ca.erf(x),
        ca.OP_LOG1P: lambda: ca.log1p(x),
        ca.OP_EXPM1: lambda: ca.expm1(x),
        ca.OP_NOT: lambda: ca.logic_not(x),
        ca.OP_CONSTPOW: lambda: x**2.5,
    }
    binary = {
        ca.OP_ADD: lambda: x + y,
        ca.OP_SUB: lambda: x - y,
        ca.OP_MUL: lambda: x * y,
        ca.OP_DIV: lambda: x / y,
        ca.OP_POW: lambda: x**y,
        ca.OP_ATAN2: lambda: ca.atan2(x, y),
        ca.OP_COPYSIGN: lambda: ca.copysign(x, y),
        ca.OP_FMIN: lambda: ca.fmin(x, y),
        ca.OP_FMAX: lambda: ca.fmax(x, y),
        ca.OP_HYPOT: lambda: ca.hypot(x, y),
        ca.OP_LT: lambda: x < y,
        ca.OP_LE: lambda: x <= y,
        ca.OP_EQ: lambda: x == y,
        ca.OP_NE: lambda: x != y,
        ca.OP_AND: lambda: ca.logic_and(x, y),
        ca.OP_OR: lambda: ca.logic_or(x, y),
        ca.OP_IF_ELSE_ZERO: lambda: ca.if_else(x, y, 0),
    }
    return {**unary, **binary}[op]()


@pytest.mark.parametrize("op", sorted(xla.OPERATIONS), ids=lambda op: xla._NAMES[op])
def test_every_operation_is_casadis(op, x64):
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    f = ca.Function("f", [x, y], [_casadi_op(op, x, y)])
    program = xla.read_program(f)
    if op not in (ca.OP_ASSIGN,):  # CasADi folds x * 1 to x: then nothing to see
        assert op in program.code, "the SX expression must be the operation under test"
    a, b = _domain(op)
    out = xla.emit(program, [[jnp.asarray(a)], [jnp.asarray(b)]])
    expected = np.array([float(f(u, v)) for u, v in zip(a, b, strict=True)])
    assert np.asarray(out).shape == (7, 1, 1)
    np.testing.assert_allclose(np.asarray(out)[:, 0, 0], expected, rtol=1e-14, atol=1e-15)


def test_an_unknown_operation_is_named():
    X = ca.SX.sym("X", 2, 2)
    f = ca.Function("f", [X], [ca.det(X) + ca.remainder(X[0, 0], 0.3)])
    with pytest.raises(NotImplementedError, match="OP_REMAINDER"):
        xla.read_program(f)


# --------------------------------------------------------------------------- G


def test_trees_draw_every_joint_kind_and_constraint_kind():
    trees = [mixed_tree(s) for s in TREE_SEEDS]
    kinds = {str(j.shortname()).removeprefix("JointModel") for m, _ in trees for j in m.joints[1:]}
    assert len(kinds) >= 20, kinds  # every kind: the slow suite's 60 trees
    cms = [cm for _, c in trees for cm in c]
    assert any(getattr(cm, "joint2_id", 0) for cm in cms)
    assert any(getattr(cm, "reference_frame", None) == pin.LOCAL_WORLD_ALIGNED for cm in cms)
    assert any(not isinstance(cm, pin.RigidConstraintModel) for cm in cms)


@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_random_trees_against_numpy(seed, x64):
    check_against_numpy(xla.compile_xla, *mixed_tree(seed), seed)


@pytest.mark.parametrize("name", ZOO_FAST)
def test_zoo_against_numpy(name, x64):
    robot = load(name)
    check_against_numpy(xla.compile_xla, robot.model, robot.constraints, 0)


# --------------------------------------------------------------------------- derivatives


def test_jit_vmap_jacfwd(x64):
    """One small XLA compile: jit(vmap(G)) equals the eager batch; jacfwd equals the jvps."""
    robot = load("double_pendulum")
    G = xla.compile_xla(robot.model, robot.constraints)
    rng = np.random.default_rng(0)
    qs = np.stack([random_q(robot.model, rng) for _ in range(5)])
    batched = jax.jit(jax.vmap(G))(qs)
    assert rel(batched, G(qs)) <= 1e-15
    J = jax.jacfwd(G)(qs[0])
    _, column = jax.jvp(G, (jnp.asarray(qs[0]),), (jnp.eye(robot.model.nq)[1],))
    assert rel(J[..., 1], column) <= 1e-15


# --------------------------------------------------------------------------- the cache folder


def test_persistent_cache_is_in_pvosimrs_folder(tmp_path, monkeypatch):
    before = jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(tmp_path))
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        assert xla.use_persistent_cache() == tmp_path / "xla"
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "xla")
        jax.config.update("jax_compilation_cache_dir", str(tmp_path / "mine"))
        assert xla.use_persistent_cache() == tmp_path / "mine"  # the caller's choice stays
    finally:
        jax.config.update("jax_compilation_cache_dir", before)

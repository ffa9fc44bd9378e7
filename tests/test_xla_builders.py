"""What the XLA route's builder promises (:func:`pvosimr.jax.xla.compile_xla`, the algorithm
bodies on JAX arrays).

``G(q)`` and ``G(q, p)`` of any batch shape; an empty G where there are no constraint rows;
float32 within 1e-4 of float64; a gradient of ⟨W, G⟩ that, mapped to the velocity coordinates
by ``T(q)``, is the CasADi function ``f.vjp`` is compiled from, a jvp along ``T(q) e_k`` that is
the one ``f.derivatives`` is compiled from, and no radial part off the unit sphere; bad input
named.  Its checks against the numpy path on many trees and robots are in
tests/test_xla.py and tests/test_xla_slow.py.  JAX's x64 mode is switched on per test and
restored (the fixture ``x64``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin
import pytest
from _trees import random_q

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from _jax import TOLERANCE, mixed_tree, off_sphere, rel, tree_with_unit_parts  # noqa: E402

import pvosimr  # noqa: E402
from pvosimr.backends.numpy import NUMPY  # noqa: E402
from pvosimr.coordinates import unit_part_spans  # noqa: E402
from pvosimr.kinematics.joints import configuration_tangent  # noqa: E402
from pvosimr.kinematics.placements import placement_size, placement_vector  # noqa: E402

TREES: dict[str, Callable[[], tuple[pin.Model, list]]] = {
    "unit-parts": tree_with_unit_parts,
    "mixed-0": lambda: mixed_tree(0),
    "mixed-1": lambda: mixed_tree(1),
}


@pytest.fixture
def compile_route() -> Callable:
    """The route's builder: ``compile_xla(model, cms, algorithm, *, placements)``."""
    return pytest.importorskip("pvosimr.jax.xla").compile_xla


def compiled_at_a_q(
    compile_route: Callable, tree: str, **options: object
) -> tuple[pin.Model, Callable, np.ndarray]:
    """A tree of ``TREES``, the route's G of it (built with ``options``) and a random
    configuration (seed 0)."""
    model, cms = TREES[tree]()
    return model, compile_route(model, cms, **options), random_q(model, np.random.default_rng(0))


def test_no_constraint_rows(compile_route, x64):
    model, _ = tree_with_unit_parts()
    G = compile_route(model, [])
    q = random_q(model, np.random.default_rng(0))
    assert G(q).shape == (0, 0) and G(np.stack([q, q, q])).shape == (3, 0, 0)


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_placements_as_inputs(compile_route, x64):
    model, cms = tree_with_unit_parts()
    G = compile_route(model, cms, placements="input")
    rng = np.random.default_rng(1)
    q = random_q(model, rng)
    moved = [
        pin.RigidConstraintModel(cm.type, model, cm.joint1_id, pin.SE3.Random(), pin.LOCAL)
        for cm in cms
    ]
    p = placement_vector(model, cms, [cm.joint1_placement for cm in moved])
    expected = pvosimr.compute_delassus(model, model.createData(), q, moved)
    assert rel(G(q, p), expected) <= TOLERANCE
    assert rel(G(np.stack([q, q]), p)[1], expected) <= TOLERANCE  # p broadcast to the batch


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
@pytest.mark.parametrize("tree", ["unit-parts", "mixed-0"])
def test_float32_is_close_to_float64(compile_route, tree, x64):
    _, G, q = compiled_at_a_q(compile_route, tree)
    single = G(q.astype(np.float32))
    assert single.dtype == jnp.float32
    assert rel(single, G(q)) <= 1e-4


# --------------------------------------------------------------------------- derivatives


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_gradient_and_jvp_are_the_compiled_ones(compile_route, x64):
    """JAX's gradient and jvp against the CasADi functions ``f.vjp`` and ``f.derivatives`` are
    compiled from."""
    symbolic = pytest.importorskip("pvosimr.symbolic")
    model, cms = tree_with_unit_parts()
    G = compile_route(model, cms)
    vjp = symbolic.delassus_function(model, cms, output="vjp")
    dG = symbolic.delassus_function(model, cms, output="dG")
    rng = np.random.default_rng(5)
    q = random_q(model, rng)
    W = rng.normal(size=(G.m, G.m))
    T = configuration_tangent(NUMPY, model, q)
    grad_q = jax.grad(lambda x: jnp.sum(jnp.asarray(W) * G(x)))(q)
    assert rel(np.asarray(grad_q) @ T, np.asarray(vjp(q, W)).ravel()) <= 1e-11
    derivatives = np.asarray(dG(q)).reshape(G.m, G.m, model.nv, order="F")
    along = jax.vmap(lambda t: jax.jvp(G, (jnp.asarray(q),), (t,))[1])(jnp.asarray(T.T))
    assert rel(np.moveaxis(np.asarray(along), 0, -1), derivatives) <= 1e-11


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_gradient_has_no_radial_part(compile_route, x64):
    model, cms = tree_with_unit_parts()
    G = compile_route(model, cms)
    rng = np.random.default_rng(2)
    q = off_sphere(model, random_q(model, rng), rng)
    W = rng.normal(size=(G.m, G.m))
    g = np.asarray(jax.grad(lambda x: jnp.sum(jnp.asarray(W) * G(x)))(q))
    for start, length in unit_part_spans(model):
        part = slice(start, start + length)
        assert abs(g[part] @ q[part]) <= 1e-12 * max(1.0, np.abs(g).max())


# --------------------------------------------------------------------------- bad input


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
@pytest.mark.parametrize("tree", ["unit-parts", "mixed-1"])
def test_bad_input_is_named(compile_route, tree, x64):
    model, G, q = compiled_at_a_q(compile_route, tree)
    with pytest.raises(ValueError, match=rf"\(\.\.\., {model.nq}\)"):
        G(q[:-1])
    with pytest.raises(TypeError, match="float32 or float64"):
        G(np.zeros(model.nq, dtype=int))
    with pytest.raises(TypeError, match="fixed placements"):
        G(q, np.zeros(3))
    jax.config.update("jax_enable_x64", False)
    with pytest.raises(TypeError, match="x64 mode is off"):
        G(q)
    assert G(q.astype(np.float32)).dtype == jnp.float32


def test_placements_input_needs_p(compile_route, x64):
    model, cms = mixed_tree(1)
    G = compile_route(model, cms, placements="input")
    q = random_q(model, np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"G\(q, p\)"):
        G(q)
    p = np.zeros(placement_size(model, cms), np.float32)
    with pytest.raises(TypeError, match="use one dtype"):
        G(q, p)

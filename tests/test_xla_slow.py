"""The XLA route's long checks (``pytest -m slow``): the whole zoo sample against the numpy path,
the gradient and jvp against the compiled ``f.vjp`` and ``f.derivatives``, and the persistent
cache across two processes (the bench section's worker).  Random trees: tests/test_xla.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from _jax import TOLERANCE, check_against_numpy, off_sphere, rel, tree_with_unit_parts
from _trees import ROBOT_SAMPLE, random_q

jax = pytest.importorskip("jax")
xla = pytest.importorskip("pvosimr.jax.xla")

import jax.numpy as jnp  # noqa: E402

from pvosimr import zoo  # noqa: E402
from pvosimr.backends.numpy import NUMPY  # noqa: E402
from pvosimr.kinematics.joints import configuration_tangent  # noqa: E402

pytestmark = pytest.mark.slow

UNSUPPORTED = {"romeo", "bravo7_gripper"}  # M singular at every q: pvosimr refuses them


@pytest.mark.parametrize("name", sorted(ROBOT_SAMPLE - UNSUPPORTED))
def test_zoo_sample_against_numpy(name, x64):
    try:
        robot = zoo.load(name)
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        pytest.skip(str(exc).splitlines()[0])
    check_against_numpy(xla.compile_xla, robot.model, robot.constraints, 1)


def test_gradient_and_jvp_against_the_compiled_library(x64, tmp_path):
    from pvosimr import codegen

    model, cms = tree_with_unit_parts()
    f = codegen.compile(model, cms, vjp=True, derivatives=True, cache_dir=tmp_path)
    G = xla.compile_xla(model, cms)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = random_q(model, rng)
        W = rng.normal(size=(G.m, G.m))
        T = configuration_tangent(NUMPY, model, q)
        scaled = off_sphere(model, q, rng)
        assert rel(G(scaled), f(q)) <= TOLERANCE
        grad_q = jax.grad(lambda x, W=W: jnp.sum(jnp.asarray(W) * G(x)))(q)
        assert rel(np.asarray(grad_q) @ T, f.vjp(q, W)) <= 1e-11
        along = jax.vmap(lambda t, q=q: jax.jvp(G, (jnp.asarray(q),), (t,))[1])(jnp.asarray(T.T))
        assert rel(along, f.derivatives(q)) <= 1e-11


def test_the_bench_worker_compiles_once_across_processes(tmp_path):
    """Two fresh processes sharing one cache folder: the second loads XLA's executable."""
    from benchmarks.gpu import _fresh_process

    args = ("ur5", 256, 3, False, str(tmp_path))
    cold, warm = _fresh_process(*args), _fresh_process(*args)
    assert cold["xla_f64_error"] <= TOLERANCE and warm["xla_f64_error"] <= TOLERANCE
    assert any(tmp_path.iterdir()), "XLA wrote nothing to the persistent cache"
    assert warm["compile_s"] < cold["compile_s"] / 3, (cold["compile_s"], warm["compile_s"])

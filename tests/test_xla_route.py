"""``pvosimr.jax.delassus(..., route="xla")`` and the default route (FFI on a CPU, XLA on a GPU).

No library is compiled here: the FFI route's choice is seen by its first step, the compile.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _jax import TOLERANCE, off_sphere, rel, tree_with_unit_parts
from _trees import random_q

from pvosimr.coordinates import normalized, unit_part_spans

jax = pytest.importorskip("jax")
pj = pytest.importorskip("pvosimr.jax")

import pvosimr  # noqa: E402
from pvosimr.jax import cuda, function  # noqa: E402


class ChosenError(Exception):
    """Raised by the stand-in compile: the FFI route was taken."""


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_route_xla_is_the_xla_function(x64):
    model, cms = tree_with_unit_parts()
    G = pj.delassus(model, cms, route="xla")
    rng = np.random.default_rng(4)
    q = random_q(model, rng)
    expected = pvosimr.compute_delassus(model, model.createData(), q, cms)
    assert rel(G(off_sphere(model, q, rng)), expected) <= TOLERANCE


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_route_xla_with_placements_as_entries(x64):
    model, cms = tree_with_unit_parts()
    G = pj.delassus(model, cms, placements="input", route="xla")
    q = random_q(model, np.random.default_rng(5))
    moved = [pin.SE3.Random() for _ in cms]
    cms_moved = [
        pin.RigidConstraintModel(cm.type, model, cm.joint1_id, M, pin.LOCAL)
        for cm, M in zip(cms, moved, strict=True)
    ]
    expected = pvosimr.compute_delassus(model, model.createData(), q, cms_moved)
    assert rel(G(q, moved), expected) <= TOLERANCE


def test_default_route_is_ffi_on_cpu_and_xla_on_gpu(monkeypatch, x64):
    """A GPU that is not NVIDIA's (JAX's devices here are the CPU): XLA; NVIDIA's, with the
    ``cuda`` extra, is the CUDA route's (tests/test_jax_cuda.py)."""
    model, cms = tree_with_unit_parts()

    def compile_stand_in(*args, **kwargs):
        raise ChosenError

    monkeypatch.setattr(function, "library_with_gradient", compile_stand_in)
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    with pytest.raises(ChosenError):
        pj.delassus(model, cms)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(cuda, "nvidia_gpu", lambda: False)
    assert hasattr(pj.delassus(model, cms), "xla")  # no library compiled
    with pytest.raises(ChosenError):
        pj.delassus(model, cms, route="ffi")  # route= overrides
    with pytest.raises(ValueError, match="'ffi', 'xla', 'cuda'"):
        pj.delassus(model, cms, route="gpu")


def test_persistent_cache_is_in_pvosimrs_folder(tmp_path, monkeypatch):
    """The XLA route points XLA's persistent cache at pvosimr's cache folder, unless the caller
    chose a folder of their own."""
    from pvosimr.jax.cache import use_persistent_cache

    before = jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(tmp_path))
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        assert use_persistent_cache() == tmp_path / "xla"
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "xla")
        jax.config.update("jax_compilation_cache_dir", str(tmp_path / "mine"))
        assert use_persistent_cache() == tmp_path / "mine"  # the caller's choice stays
    finally:
        jax.config.update("jax_compilation_cache_dir", before)


@pytest.mark.parametrize("bad", ["nan", "inf", "zero"])
def test_a_non_finite_q_never_gives_a_finite_G(x64, bad):
    """The tree's contacts are LOCAL, so G does not read the free-flyer root: a NaN, inf or zero
    quaternion there gave a finite G under jit, where the FFI route and the torch op raise."""
    model, cms = tree_with_unit_parts()
    G = pj.delassus(model, cms, route="xla")
    q = random_q(model, np.random.default_rng(6))
    moved = q.copy()
    moved[0] += 1.0  # the root is not read: G is the same
    assert np.array_equal(np.asarray(jax.jit(G)(moved)), np.asarray(jax.jit(G)(q)))
    broken = q.copy()
    if bad == "zero":
        broken[3:7] = 0.0
        said = r"^q has a unit part of norm 0 at index 3 \(joint 1"
    else:
        broken[0] = float(bad)
        said = r"^q is not finite at index 0 \(joint 1"
    out = np.asarray(jax.jit(G)(np.stack([q, broken])))
    assert np.isfinite(out[0]).all() and np.isnan(out[1]).all()
    with pytest.raises(ValueError, match=said):  # eager: the inputs known, checked
        G(broken)
    with pytest.raises(ValueError, match=r"^row 1 of qs: q is not finite"):
        G(np.stack([q, np.where(np.arange(model.nq) == 0, np.nan, q)]))


def test_the_unit_rule_has_no_radial_gradient_on_the_sphere(x64):
    """A unit part within AS_GIVEN_TOLERANCE is used as given, its derivative still that of
    u/|u|: the gradient has no radial part, as on the library's routes."""
    model, cms = tree_with_unit_parts()
    G = jax.jit(pj.delassus(model, cms, route="xla"))
    q = random_q(model, np.random.default_rng(7))  # unit parts normalised to rounding
    g = np.asarray(jax.grad(lambda x: G(x).sum())(q))
    for start, length in unit_part_spans(model):
        u = q[start : start + length]
        assert abs(g[start : start + length] @ u) <= 1e-12 * max(1.0, np.abs(g).max())


def test_float32_then_float64_in_one_process():
    """G in float32 (x64 off) and then in float64 (x64 on) of one function: the second trace
    gets JAX arrays of its own mode (an index kept in numpy came back int32 from JAX's
    conversion cache and the float64 trace failed), and its G is the library's."""
    model, cms = tree_with_unit_parts()
    q = random_q(model, np.random.default_rng(6))
    G = pj.delassus(model, cms, route="xla")
    with jax.enable_x64(False):
        low = np.asarray(jax.jit(G)(np.asarray(q, np.float32)))
    with jax.enable_x64(True):
        high = np.asarray(jax.jit(G)(q))
    truth = pvosimr.compute_delassus(model, model.createData(), normalized(model, q)[0], cms)
    assert low.dtype == np.float32 and high.dtype == np.float64
    assert np.abs(high - truth).max() <= 1e-12 * np.abs(truth).max()
    assert np.abs(low - truth).max() <= 1e-4 * np.abs(truth).max()

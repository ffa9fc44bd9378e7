"""``pvosimr.jax.delassus(..., route="xla")`` and the default route (FFI on a CPU, XLA on a GPU).

No library is compiled here: the FFI route's choice is seen by its first step, the compile.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _jax import TOLERANCE, off_sphere, rel, tree_with_unit_parts
from _trees import random_q

jax = pytest.importorskip("jax")
pj = pytest.importorskip("pvosimr.jax")

import pvosimr  # noqa: E402
from pvosimr.jax import function  # noqa: E402


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
    model, cms = tree_with_unit_parts()

    def compile_stand_in(*args, **kwargs):
        raise ChosenError

    monkeypatch.setattr(function, "library_with_gradient", compile_stand_in)
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    with pytest.raises(ChosenError):
        pj.delassus(model, cms)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert hasattr(pj.delassus(model, cms), "xla")  # no library compiled
    with pytest.raises(ChosenError):
        pj.delassus(model, cms, route="ffi")  # route= overrides
    with pytest.raises(ValueError, match="'ffi', 'xla'"):
        pj.delassus(model, cms, route="cuda")


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

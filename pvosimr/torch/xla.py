"""``pvosimr.torch.delassus(..., route="xla")``: the XLA route of :mod:`pvosimr.jax.xla` on
torch tensors, for CUDA tensors (and float32) where the generated library cannot go.

The tensors cross to JAX and back through DLPack, without a copy where JAX and PyTorch share
the device (the CPU, or the same CUDA device with ``jax[cuda12]`` installed).  Forward is
``jax.jit`` of the XLA route's G; backward, a ``torch.autograd.Function`` whose pullback is
``jax.jit`` of JAX's own reverse mode of the same G (the unit parts of q are normalised inside
it, so the gradient has no radial part, as on the library's route).  A float64 tensor needs
JAX's 64-bit mode, which pvosimr never changes (turning it on and off between calls would mix
the index types of JAX's traces): the error says how to turn it on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import pinocchio as pin
import torch

from ..extras import require
from ..notices import said_if_slow

__all__ = ["xla_delassus"]


def xla_delassus(model: pin.Model, cms: Sequence, algorithm: str, given: bool) -> Callable:
    """``(q, p) ↦ G`` on tensors (``p`` None unless ``given``), differentiable in q."""
    require("pvosimr.torch's XLA route", "jax")
    import jax

    from ..jax.cache import use_persistent_cache
    from ..jax.xla import compile_xla

    use_persistent_cache()
    jax_G = compile_xla(model, cms, algorithm, placements="input" if given else "fixed")
    what = f"model {model.name!r} (nq={jax_G.nq}, m={jax_G.m})"
    forward = _said_first(jax.jit(jax_G), f"G of {what}")

    @functools.partial(_said_first, what=f"the gradient of G of {what}")
    @jax.jit
    def pullback(W, q, *p):
        _, vjp = jax.vjp(lambda x: jax_G(x, *p), q)
        return vjp(W)[0]

    class Delassus(torch.autograd.Function):
        @staticmethod
        def forward(q: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
            return torch.from_dlpack(forward(*_arrays(q, p)))

        @staticmethod
        def setup_context(ctx, inputs, output) -> None:
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, W: torch.Tensor):
            q, p = ctx.saved_tensors
            return torch.from_dlpack(pullback(*_arrays(W, q, p))), None

    def G(q: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
        if q.dtype == torch.float64 and not jax.config.jax_enable_x64:
            raise TypeError(
                "pvosimr.torch's XLA route computes a float64 tensor in JAX's 64-bit mode: turn "
                "it on first, jax.config.update('jax_enable_x64', True) (pvosimr never changes "
                "it), or pass float32"
            )
        return Delassus.apply(q, p)

    G.jax_G = jax_G
    return G


def _said_first(jitted: Callable, what: str) -> Callable:
    """``jitted``, whose first call for each shape and dtype (it traces and compiles then)
    says so in one line once it has run :data:`pvosimr.notices.SLOW_SECONDS`."""
    seen: set[tuple] = set()

    def call(*arrays):
        key = tuple((a.shape, str(a.dtype)) for a in arrays)
        if key in seen:
            return jitted(*arrays)
        seen.add(key)
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays)
        with said_if_slow(
            f"PyTorch's XLA route: tracing and compiling {what} for {shapes} (once per shape "
            "and dtype; later calls reuse it) …"
        ):
            return jitted(*arrays)

    return call


def _arrays(*tensors: torch.Tensor | None) -> list:
    """The tensors (None left out) as JAX arrays on their device, through DLPack."""
    import jax

    return [jax.dlpack.from_dlpack(t.detach().contiguous()) for t in tensors if t is not None]

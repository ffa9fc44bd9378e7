"""frax's dense route against pvosimr's G on frax's G1, timed in the same rounds.

Methods per B (``<method>:B<B>``, time per call of a whole batch), all on the same
configurations (frax's layout for frax, :meth:`.frax_route.FraxCase.pinocchio_q` of them for
pvosimr):

- ``frax:G``: ``jit(dense_g)`` at B = 1, ``jit(vmap(dense_g))`` beyond (:mod:`.frax_route`);
- ``frax:grad``: ``jit(grad(loss))`` / ``jit(vmap(grad(loss)))``, loss = ⟨W, G⟩;
- pvosimr's: the direct calls and the JAX front end of :class:`.frameworks.Front`.

Nothing is timed before :func:`.frax_route.agreement` passed on :data:`AGREEMENT_CONFIGS`
configurations (the error is recorded as ``errors["frax-vs-pinocchio"]``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from . import frax_route
from .derivatives import weights
from .frameworks import FrameworkResult, Front, blocking, repeats_at
from .loop import time_methods
from .results import Timing

__all__ = ["AGREEMENT_CONFIGS", "AGREEMENT_KEY", "ONE_CALL_FROM", "one_call_rounds", "time_frax"]

AGREEMENT_CONFIGS = 8
AGREEMENT_KEY = "frax-vs-pinocchio"
ONE_CALL_FROM = 512
"""From this B on, a sample is one call (frax's batched gradient lasts seconds; the shared
loop's calibration would spend six calls on it before the first sample)."""


def one_call_rounds(methods: dict, repeats: int) -> dict[str, Timing]:
    """``repeats`` interleaved rounds of one call per method (each already called once)."""
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeats):
        for name, (fn, inputs, per) in methods.items():
            start = time.perf_counter()
            fn(inputs[0])
            samples[name].append((time.perf_counter() - start) / per)
    return {name: Timing(s, 1) for name, s in samples.items()}


def frax_methods(case: frax_route.FraxCase, qs: np.ndarray) -> dict:
    """``frax:G`` and ``frax:grad`` at B = len(qs), jitted and run once (compiled) here."""
    import jax
    import jax.numpy as jnp

    W = jnp.asarray(weights(case.m))

    def loss(q):
        return jnp.sum(W * case.dense_g(q))

    g, grad = jax.jit(case.dense_g), jax.jit(jax.grad(loss))
    if len(qs) > 1:
        g, grad = jax.jit(jax.vmap(case.dense_g)), jax.jit(jax.vmap(jax.grad(loss)))
    x = jax.device_put(jnp.asarray(qs[0] if len(qs) == 1 else qs))
    g(x).block_until_ready()
    grad(x).block_until_ready()
    B = len(qs)
    return {f"frax:G:B{B}": (blocking(g), [x], 1), f"frax:grad:B{B}": (blocking(grad), [x], 1)}


def time_frax(batches: Sequence[int], repeats: int, seed: int, cache_dir=None) -> FrameworkResult:
    """The frax comparison on the G1 (AssertionError-free: a failed agreement is recorded and
    nothing is timed)."""
    from pvosimr import codegen

    case = frax_route.load()
    result = FrameworkResult(frax_route.ROBOT, case.model.nv, case.m)
    rng = np.random.default_rng(seed)
    error = frax_route.agreement(case, case.random_q(rng, AGREEMENT_CONFIGS))
    result.errors[AGREEMENT_KEY] = error
    if not error <= frax_route.AGREEMENT_TOLERANCE:
        result.skipped["frax"] = (
            f"frax's G and pvosimr's disagree (error {error:.1e} > "
            f"{frax_route.AGREEMENT_TOLERANCE:g}): nothing timed"
        )
        return result
    f = codegen.compile(case.model, case.cms, vjp=True, cache_dir=cache_dir)
    front = Front(case.model, case.cms, f, result, torch=False)
    for B in batches:
        qs = case.random_q(rng, B)
        methods = {**frax_methods(case, qs), **front.methods(case.pinocchio_q(qs))}
        timer = one_call_rounds if B >= ONE_CALL_FROM else time_methods
        result.timings.update(timer(methods, repeats_at(B, repeats)))
    return result

"""frax's dense route against pvosimr's G on frax's G1, timed in the same rounds.

Methods per B (``<method>:B<B>``, time per call of a whole batch), all on the same
configurations (frax's layout for frax, :meth:`.frax_route.FraxCase.pinocchio_q` of them for
pvosimr):

- ``frax:G``: ``jit(dense_g)`` at B = 1, ``jit(vmap(dense_g))`` beyond (:mod:`.frax_route`);
- ``frax:grad``: ``jit(grad(loss))`` / ``jit(vmap(grad(loss)))``, loss = ⟨W, G⟩;
- pvosimr's: the direct calls and the JAX front end of :class:`.frameworks.Front`.

Nothing is timed before :func:`.frax_route.agreement` passed on :data:`AGREEMENT_CONFIGS`
configurations (the error is recorded as ``errors["frax-vs-pinocchio"]``).

:func:`device_rows` is the same comparison for the section GPU (:mod:`.gpu`): on one device,
per configuration, float64 and float32, frax's ``jit(vmap(dense_g))`` and its gradient beside
pvosimr's XLA route (:func:`pvosimr.jax.xla.compile_xla`) on the same configurations.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pvosimr.study.record import relative_error

from . import frax_route
from .derivatives import weights
from .frameworks import FrameworkResult, Front, blocking
from .loop import median_seconds, time_methods

__all__ = [
    "AGREEMENT_CONFIGS",
    "AGREEMENT_KEY",
    "ONE_CALL_FROM",
    "device_rows",
    "time_frax",
]

AGREEMENT_CONFIGS = 8
AGREEMENT_KEY = "frax-vs-pinocchio"
ONE_CALL_FROM = 512
"""From this B on, a sample is one call (frax's batched gradient lasts seconds; the shared
loop's calibration would spend six calls on it before the first sample)."""


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
        number = 1 if B >= ONE_CALL_FROM else None  # frax's methods were called once already
        result.timings.update(time_methods(methods, repeats, number))
    return result


def device_rows(
    batches: Sequence[int], repeats: int, device, seed: int = 0
) -> tuple[float, list[dict]]:
    """The agreement of frax's G with pvosimr's on the G1, and, where it passed, per B and
    dtype (float64, float32): seconds per configuration on ``device`` of frax's dense
    ``jit(vmap(G))`` and ``jit(vmap(grad ⟨W, G⟩))`` (``frax_G_s``, ``frax_grad_s``) and of
    pvosimr's XLA route on the same configurations (``G_s``, ``grad_s``).  In float64, both
    routes' G on the device at the first configurations are checked first (frax's against
    pvosimr's numpy path, :func:`.frax_route.agreement`; pvosimr's against frax's, turned to
    the foot frames)."""
    import jax

    from pvosimr.jax.xla import compile_xla

    case = frax_route.load()
    rng = np.random.default_rng(seed)
    error = frax_route.agreement(case, case.random_q(rng, AGREEMENT_CONFIGS))
    if not error <= frax_route.AGREEMENT_TOLERANCE:
        return error, []
    routes = {"frax_": case.dense_g, "": compile_xla(case.model, case.cms)}
    rows = []
    for B in batches:
        q_frax = np.resize(case.random_q(rng, min(B, 64)), (B, case.model.nq))
        inputs = {"frax_": q_frax, "": case.pinocchio_q(q_frax)}
        for dtype in (np.float64, np.float32):
            row: dict = {"batch": B, "dtype": np.dtype(dtype).name}
            W = jax.device_put(weights(case.m).astype(dtype), device)
            outputs = {}
            for prefix, G in routes.items():
                x = jax.device_put(inputs[prefix].astype(dtype), device)
                timed, outputs[prefix] = _per_configuration(G, x, W, repeats)
                row.update({prefix + k: v for k, v in timed.items()})
            if dtype == np.float64:
                error = max(error, _device_agreement(case, q_frax, outputs))
            rows.append(row)
    if not error <= frax_route.AGREEMENT_TOLERANCE:
        return error, []
    return error, rows


def _per_configuration(G, x, W, repeats: int) -> tuple[dict, np.ndarray]:
    """``G_s`` and ``grad_s``, seconds per configuration of ``jit(vmap(G))`` and of
    ``jit(vmap(grad ⟨W, G⟩))`` on ``x``'s device, ``G_dtype`` (what G is computed in: a
    route's own float64 constants may promote a float32 q), and the first rows of G."""
    import jax
    import jax.numpy as jnp

    def loss(q):
        return jnp.sum(W * G(q))

    g, grad = jax.jit(jax.vmap(G)), jax.jit(jax.vmap(jax.grad(loss)))
    B, out = len(x), g(x)
    timed = {
        "G_s": median_seconds(lambda: g(x).block_until_ready(), repeats) / B,
        "grad_s": median_seconds(lambda: grad(x).block_until_ready(), repeats) / B,
        "G_dtype": np.dtype(out.dtype).name,
    }
    return timed, np.asarray(out[:AGREEMENT_CONFIGS], dtype=float)


def _device_agreement(case: frax_route.FraxCase, q_frax: np.ndarray, G: dict) -> float:
    """frax's device G against pvosimr's numpy path, and pvosimr's device G against frax's,
    at the first configurations (the larger relative error)."""
    qs = q_frax[: len(G[""])]
    worst = frax_route.agreement(case, qs, G["frax_"])
    for q, frax_G, ours in zip(qs, G["frax_"], G[""], strict=True):
        local = case.local(frax_G, q)
        worst = max(worst, relative_error(ours, local))
    return worst

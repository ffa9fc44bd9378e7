"""frax's dense route against pvosimr's G on frax's G1 (:mod:`.frax_route`), timed in the same
rounds: ``frax:G`` and ``frax:grad`` (:func:`.frameworks.jitted` of its dense G) beside
pvosimr's direct calls and JAX front end (:class:`.frameworks.Front`), per B, on the same
configurations, after :func:`.frax_route.agreement` passed (``errors["frax-vs-pinocchio"]``).

:func:`device_rows` is the same comparison for the section GPU (:mod:`.gpu`): on one device,
float64 and float32, against pvosimr's XLA route (:func:`pvosimr.jax.xla.compile_xla`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pvosimr.study.record import relative_error

from . import frax_route
from .derivatives import weights
from .frameworks import FrameworkResult, Front, blocking, jitted
from .loop import median_seconds, time_methods

__all__ = ["AGREEMENT_CONFIGS", "AGREEMENT_KEY", "ONE_CALL_FROM", "device_rows", "time_frax"]

AGREEMENT_CONFIGS = 8
AGREEMENT_KEY = "frax-vs-pinocchio"
ONE_CALL_FROM = 512
"""From this B on, a sample is one call (frax's batched gradient lasts seconds; the shared
loop's calibration would spend six calls on it before the first sample)."""


def _agreement(case: frax_route.FraxCase, rng: np.random.Generator) -> float:
    return frax_route.agreement(case, case.random_q(rng, AGREEMENT_CONFIGS))


def time_frax(batches: Sequence[int], repeats: int, seed: int, cache_dir=None) -> FrameworkResult:
    """The frax comparison on the G1 (a failed agreement is recorded and nothing is timed)."""
    import jax
    import jax.numpy as jnp

    from pvosimr import codegen

    case = frax_route.load()
    result = FrameworkResult(frax_route.ROBOT, case.model.nv, case.m)
    rng = np.random.default_rng(seed)
    result.errors[AGREEMENT_KEY] = error = _agreement(case, rng)
    if not error <= frax_route.AGREEMENT_TOLERANCE:
        bound = frax_route.AGREEMENT_TOLERANCE
        why = f"frax's G and pvosimr's disagree (error {error:.1e} > {bound:g}): nothing timed"
        result.skipped["frax"] = why
        return result
    f = codegen.compile(case.model, case.cms, vjp=True, cache_dir=cache_dir)
    front = Front(case.model, case.cms, f, result, torch=False)
    for B in batches:
        qs = case.random_q(rng, B)
        g, grad = jitted(case.dense_g, jnp.asarray(weights(case.m)), B > 1)
        x = jax.device_put(jnp.asarray(qs[0] if B == 1 else qs))
        methods = {
            f"frax:G:B{B}": (blocking(g), [x], 1),
            f"frax:grad:B{B}": (blocking(grad), [x], 1),
        }
        for fn, inputs, _ in methods.values():
            fn(*inputs)  # compiled here, before the rounds
        methods |= front.methods(case.pinocchio_q(qs))
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
    pvosimr's numpy path, pvosimr's against frax's turned to the foot frames)."""
    import jax

    from pvosimr.jax.xla import compile_xla

    case = frax_route.load()
    rng = np.random.default_rng(seed)
    error = _agreement(case, rng)
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
    return (error, rows) if error <= frax_route.AGREEMENT_TOLERANCE else (error, [])


def _per_configuration(G, x, W, repeats: int) -> tuple[dict, np.ndarray]:
    """``G_s`` and ``grad_s``, seconds per configuration of ``jit(vmap(G))`` and of its
    gradient on ``x``'s device, ``G_dtype`` (what G is computed in: a route's own float64
    constants may promote a float32 q), and the first rows of G."""
    g, grad = jitted(G, W, True)
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
        worst = max(worst, relative_error(ours, case.local(frax_G, q)))
    return worst
